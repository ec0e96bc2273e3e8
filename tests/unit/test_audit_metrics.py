"""rescon audit's metrics: every series a dashboard needs exists from the start, and active violations drop to 0 when they clear."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from harness.audit.metrics import AuditMetrics

pytestmark = pytest.mark.unit


def test_restart_and_event_series_exist_at_zero_once_declared() -> None:
    metrics = AuditMetrics()
    metrics.declare(("pods", "nodes"))
    text = generate_latest(metrics.registry).decode()
    assert 'rescon_audit_watch_restarts_total{kind="pods",reason="expired"} 0.0' in text
    assert 'rescon_audit_watch_restarts_total{kind="nodes",reason="error"} 0.0' in text
    assert 'rescon_audit_events_total{kind="nodes"} 0.0' in text


def test_active_violations_are_set_for_every_rule_and_cleared_to_zero() -> None:
    metrics = AuditMetrics()
    metrics.set_active({"node-overcommitted": 2}, ("node-overcommitted", "group-split"))
    assert metrics.value("rescon_audit_violations_active", {"rule": "node-overcommitted"}) == 2
    assert metrics.value("rescon_audit_violations_active", {"rule": "group-split"}) == 0
    metrics.set_active({}, ("node-overcommitted", "group-split"))
    assert metrics.value("rescon_audit_violations_active", {"rule": "node-overcommitted"}) == 0


def test_two_auditors_in_one_process_do_not_share_a_registry() -> None:
    first, second = AuditMetrics(), AuditMetrics()
    first.violations.labels(rule="group-split").inc()
    assert second.value("rescon_audit_violations_total", {"rule": "group-split"}) == 0
