"""metrics: the auditor's Prometheus metrics, in a registry of its own (no process or GC collectors mixed in by import).

    rescon_audit_violations_total{rule}          violations started (state rules) or happened (transition rules)
    rescon_audit_violations_active{rule}         violations in force now
    rescon_audit_objects_watched{kind}           objects held per kind (pods, nodes, pipelineruns, records)
    rescon_audit_watch_restarts_total{kind,reason}  relists after 410 Gone (expired) and reconnections after an error (error)
    rescon_audit_events_total{kind}              watch events applied
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

#: Why a watch started over: its resourceVersion expired (410 Gone: list again), or the connection failed.
RESTART_EXPIRED = "expired"
RESTART_ERROR = "error"


@dataclass
class AuditMetrics:
    """AuditMetrics holds the auditor's metrics; serve() exposes them on a port."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.violations = Counter("rescon_audit_violations", "Contract violations reported, by rule", ["rule"], registry=self.registry)
        self.active = Gauge("rescon_audit_violations_active", "Contract violations in force now, by rule", ["rule"], registry=self.registry)
        self.watched = Gauge("rescon_audit_objects_watched", "Objects the auditor holds, by kind", ["kind"], registry=self.registry)
        self.restarts = Counter("rescon_audit_watch_restarts", "Watches started over, by kind and reason", ["kind", "reason"], registry=self.registry)
        self.events = Counter("rescon_audit_events", "Watch events applied, by kind", ["kind"], registry=self.registry)

    def declare(self, kinds: tuple[str, ...]) -> None:
        """declare() makes every kind's restart and event series exist at 0, so a dashboard sees them before the first."""
        for kind in kinds:
            self.events.labels(kind=kind)
            for reason in (RESTART_EXPIRED, RESTART_ERROR):
                self.restarts.labels(kind=kind, reason=reason)

    def serve(self, port: int) -> None:
        """serve() starts the /metrics endpoint on all addresses (a daemon thread)."""
        start_http_server(port, registry=self.registry)

    def set_active(self, by_rule: Mapping[str, int], rules: tuple[str, ...]) -> None:
        """set_active() sets every rule's gauge, 0 for rules with nothing in force, so a cleared violation shows."""
        for rule in rules:
            self.active.labels(rule=rule).set(by_rule.get(rule, 0))

    def value(self, name: str, labels: Mapping[str, str]) -> float:
        """value('rescon_audit_watch_restarts_total', {'kind': 'pods', 'reason': 'error'}) is the sample's value, 0 if none."""
        found = self.registry.get_sample_value(name, dict(labels))
        return float(found or 0.0)
