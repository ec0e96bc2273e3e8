"""rescon audit's evaluation, with the API replaced by fixed lists: a new finding is printed only if a fresh read shows it too."""

from __future__ import annotations

from typing import Any, Callable

import kubernetes
import pytest

from harness.audit.auditor import Auditor
from harness.audit.dedup import AuditLine, Change
from harness.audit.metrics import AuditMetrics
from harness.audit.watches import WatchEvent
from harness.monitor import invariants as rules
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
ME = "tkn-scheduler"


def node(name: str) -> Obj:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "2", "memory": "8Gi"}}}


def pod(name: str, cpu: str, *, bound: bool = True) -> Obj:
    spec: Obj = {"schedulerName": ME, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if bound:
        spec["nodeName"] = "n1"
    return {"metadata": {"name": name, "namespace": "ns", "uid": name}, "spec": spec, "status": {"phase": "Running"}}


def not_served() -> tuple[list[Obj], str]:
    raise kubernetes.client.ApiException(status=404, reason="Not Found")


def auditor(fresh: dict[str, Callable[[], tuple[list[Obj], str]]]) -> tuple[Auditor, list[AuditLine]]:
    """An Auditor whose watches never start, fed by hand; its fresh reads answer from `fresh`."""
    lines: list[AuditLine] = []
    audit = Auditor(None, ME, None, DEFAULT_TIMEOUTS, AuditMetrics(), lines.append)  # type: ignore[arg-type]
    for kind, answer in fresh.items():
        audit.sources[kind].list_items = answer  # type: ignore[method-assign]
    for kind, items in (("pods", [pod("first", "1500m")]), ("nodes", [node("n1")]), ("pipelineruns", []), ("records", [])):
        audit._apply(WatchEvent(kind, "SYNC", items=items, served=kind != "records"))
    audit._apply(WatchEvent("pods", "ADDED", obj=pod("second", "1", bound=False)))
    audit._apply(WatchEvent("pods", "MODIFIED", obj=pod("second", "1")))
    return audit, lines


def test_an_overcommit_the_fresh_read_shows_is_printed_once_even_without_records() -> None:
    fresh = {"pods": lambda: ([pod("first", "1500m"), pod("second", "1")], "9"), "nodes": lambda: ([node("n1")], "9"),
             "pipelineruns": lambda: ([], "9"), "records": not_served}
    audit, lines = auditor(fresh)
    audit._evaluate()
    assert [(line.rule, line.change) for line in lines] == [(rules.NODE_OVERCOMMITTED, Change.STARTED)]
    assert audit.confirmations == 1
    audit._apply(WatchEvent("pods", "MODIFIED", obj={**pod("second", "1"), "status": {"phase": "Running", "podIP": "x"}}))
    audit._evaluate()
    assert len(lines) == 1 and audit.confirmations == 1, "a violation in force is neither printed nor confirmed again"
    audit._apply(WatchEvent("pods", "DELETED", obj=pod("second", "1")))
    audit._evaluate()
    assert [line.change for line in lines] == [Change.STARTED, Change.CLEARED]


def test_an_overcommit_the_fresh_read_does_not_show_is_dropped() -> None:
    fresh = {"pods": lambda: ([pod("first", "1500m")], "9"), "nodes": lambda: ([node("n1")], "9"),
             "pipelineruns": lambda: ([], "9"), "records": lambda: ([], "9")}
    audit, lines = auditor(fresh)
    audit._evaluate()
    assert lines == [] and audit.confirmations == 1


def test_a_failed_fresh_read_judges_the_node_again_next_time() -> None:
    def refused() -> tuple[list[Obj], str]:
        raise ConnectionRefusedError("refused")

    audit, lines = auditor({"pods": refused})
    audit._evaluate()
    assert lines == [] and audit.state.decided_on == {"n1"}


RUN: Obj = {"metadata": {"name": "run", "namespace": "ns", "uid": "u"},
            "spec": {"taskRunTemplate": {"podTemplate": {"schedulerName": ME}}},
            "status": {"conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}],
                       "childReferences": [{"name": "run-build", "pipelineTaskName": "build"}]}}


def record(state: str) -> Obj:
    group: Obj = {"name": "source", "state": state, "node": "n1", "holders": ["first"], "claimGeneration": 1, "reservedAt": "2026-12-03T11:00:02Z"}
    if state == "Released":
        group.update(releasedAt="2026-12-03T11:01:00Z", releaseReason="TasksDone")
    return {
        "apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord",
        "metadata": {"name": "run", "namespace": "ns", "labels": {"rescon.dev/active": "true"} if state == "Reserved" else {},
                     "annotations": {"rescon.dev/scheduler-name": ME},
                     "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "run", "uid": "u", "controller": True}]},
        "spec": {"pipelineRun": {"name": "run", "uid": "u"},
                 "groups": [{"name": "source", "tasks": ["build"], "workspaces": ["source"], "peak": {"cpu": "1", "memory": "0"}}]},
        "status": {"groups": [group]},
    }


def test_a_group_held_past_release_late_is_printed_once_a_fresh_read_shows_it_and_cleared_once_released(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.audit import auditor as auditor_module
    from harness.contract.record import Record, ReleaseReason
    from harness.monitor.release_truth import ReleaseTruth

    now = [0.0]
    fresh = {"record": record("Reserved")}
    reads: list[float] = []

    def truths(kube: Any, rec: Any, groups: dict[str, tuple[str, ...]]) -> dict[str, ReleaseTruth]:
        reads.append(now[0])
        due = frozenset({ReleaseReason.TASKS_DONE})
        return {g: ReleaseTruth(due, due) for g in groups}

    monkeypatch.setattr(auditor_module, "read_release_truths", truths)
    monkeypatch.setattr(auditor_module.volume_reads, "read_record", lambda kube, ns, name: Record.from_json(fresh["record"]))
    lines: list[AuditLine] = []
    audit = Auditor(None, ME, None, DEFAULT_TIMEOUTS, AuditMetrics(), lines.append, clock=lambda: now[0])  # type: ignore[arg-type]
    for kind, items in (("pods", [pod("first", "1")]), ("nodes", [node("n1")]), ("pipelineruns", [RUN]), ("records", [record("Reserved")])):
        audit._apply(WatchEvent(kind, "SYNC", items=items))
    audit._read_releases()
    assert reads == [0.0]
    now[0] = 15.0
    audit._read_releases()
    audit._evaluate()
    assert reads == [0.0] and lines == []  # seen due at 0.0: not past release_late yet, and not read again
    now[0] = 15.5
    fresh["record"] = record("Released")  # the watch has not shown the release yet: no line
    audit._evaluate()
    assert lines == []
    fresh["record"] = record("Reserved")
    audit._evaluate()
    assert [(line.rule, line.change) for line in lines] == [(rules.RELEASE_LATE, Change.STARTED)]
    assert "15.5s after the monitor first saw its release due (TasksDone; release_late 15s)" in lines[0].message
    now[0] = 16.0
    audit._apply(WatchEvent("records", "MODIFIED", obj=record("Released")))
    audit._evaluate()
    assert [(line.rule, line.change) for line in lines] == [(rules.RELEASE_LATE, Change.STARTED), (rules.RELEASE_LATE, Change.CLEARED)]
