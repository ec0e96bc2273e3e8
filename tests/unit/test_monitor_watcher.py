"""The monitor's evaluation of events, without an API server: events fed straight in, time on a fake clock."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from harness.contract.record import Record, ReleaseReason
from harness.monitor import invariants as rules
from harness.monitor.release_truth import ReleaseTruth
from harness.monitor.watcher import ContractBroken, ContractMonitor, MonitorBehind, Violation, _Event
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit

RECORD: dict[str, Any] = {
    "apiVersion": "rescon.dev/v1alpha1",
    "kind": "ReservationRecord",
    "metadata": {
        "name": "run", "namespace": "ns", "labels": {},
        "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "run", "uid": "u", "controller": True}],
    },
    "spec": {"pipelineRun": {"name": "run", "uid": "u"},
             "groups": [{"name": "source", "tasks": ["build"], "workspaces": ["source"], "peak": {"cpu": "1", "memory": "0"}}]},
}


def _reserved(node: str = "n1", generation: int = 1, *, label: bool) -> dict[str, Any]:
    obj = copy.deepcopy(RECORD)
    obj["status"] = {"groups": [{"name": "source", "state": "Reserved", "node": node, "holders": ["p"], "claimGeneration": generation,
                                 "reservedAt": "2026-12-01T10:00:00Z"}]}
    if label:
        obj["metadata"]["labels"] = {"rescon.dev/active": "true"}
    return obj


def _monitor(clock: list[float]) -> ContractMonitor:
    timeouts = dataclasses.replace(DEFAULT_TIMEOUTS, label_converges=2.0)
    return ContractMonitor(None, "ns", {"pool": "p"}, timeouts=timeouts, checks_records=True, clock=lambda: clock[0])  # type: ignore[arg-type]


def test_a_label_that_lags_less_than_label_converges_is_fine() -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    monitor._apply(_Event("records", "ADDED", obj=RECORD))
    monitor._apply(_Event("records", "MODIFIED", obj=_reserved(label=False)))
    clock[0] = 1.5
    monitor._apply(_Event("records", "MODIFIED", obj=_reserved(label=True)))
    clock[0] = 10.0
    monitor._check_label_timers()
    assert monitor.violations == []


def test_a_label_that_never_comes_is_reported_once_past_label_converges() -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    monitor._apply(_Event("records", "ADDED", obj=RECORD))
    monitor._apply(_Event("records", "MODIFIED", obj=_reserved(label=False)))
    clock[0] = 2.5
    monitor._check_label_timers()
    assert [v.rule for v in monitor.violations] == [rules.ACTIVE_LABEL_DIVERGED]
    assert monitor.violations[0].at == 2.5


def test_record_events_feed_the_state_machine_rules() -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    monitor._apply(_Event("records", "ADDED", obj=_reserved("n1", label=True)))
    monitor._apply(_Event("records", "MODIFIED", obj=_reserved("n2", label=True)))
    assert [v.rule for v in monitor.violations] == [rules.CLAIM_CHANGED_NODE]


def test_a_relist_after_a_gap_is_not_compared_with_what_came_before() -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    monitor._apply(_Event("records", "ADDED", obj=_reserved("n1", 1, label=True)))
    monitor._apply(_Event("records", "SYNC", items=[_reserved("n1", 3, label=True)]))
    monitor._apply(_Event("records", "MODIFIED", obj=_reserved("n1", 3, label=True)))
    assert monitor.violations == []


def test_a_record_the_contract_refuses_is_reported() -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    broken = copy.deepcopy(RECORD)
    broken["metadata"]["ownerReferences"] = []
    monitor._apply(_Event("records", "ADDED", obj=broken))
    assert [v.rule for v in monitor.violations] == [rules.RECORD_INVALID]
    assert "ownerReference" in monitor.violations[0].message


def _node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "4800m", "memory": "8Gi"}}}


def _pod(uid: str, cpu: str, *, scheduler: str, node: str) -> dict[str, Any]:
    return {"metadata": {"uid": uid, "name": uid, "namespace": "ns"},
            "spec": {"schedulerName": scheduler, "nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Running"}}


def test_room_is_judged_where_the_scheduler_under_test_decides_not_where_the_suite_pins_a_filler(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    timeouts = dataclasses.replace(DEFAULT_TIMEOUTS, label_converges=2.0)
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=timeouts, checks_records=False, scheduler_name="tkn", clock=lambda: clock[0])  # type: ignore[arg-type]
    monkeypatch.setattr(monitor, "_fresh_world", lambda: monitor.world)  # the confirming read sees what the events said
    monitor._apply(_Event("nodes", "SYNC", items=[_node("n1")]))
    monitor._apply(_Event("pods", "SYNC", items=[]))
    monitor._apply(_Event("pods", "ADDED", obj=_pod("filler", "4000m", scheduler="default-scheduler", node="n1")))
    monitor._apply(_Event("pods", "ADDED", obj=_pod("filler-2", "1000m", scheduler="default-scheduler", node="n1")))
    assert monitor.violations == []
    monitor._apply(_Event("pods", "ADDED", obj=_pod("ours", "100m", scheduler="tkn", node="n1")))
    assert [v.rule for v in monitor.violations] == [rules.NODE_OVERCOMMITTED]
    assert "5100m CPU" in monitor.violations[0].message


def _two_violations(monitor: ContractMonitor) -> None:
    monitor.violations += [
        Violation(rules.CLAIM_CHANGED_NODE, 1.0, "g's claim moved from n0 to n1"),
        Violation(rules.ACTIVE_LABEL_DIVERGED, 2.5, "record a has no active label"),
    ]


def test_by_default_the_first_violation_fails_at_once_and_counts_the_rest() -> None:
    monitor = _monitor([0.0])
    _two_violations(monitor)
    with pytest.raises(ContractBroken, match=r"claim-changed-node at 1\.0s: g's claim moved from n0 to n1 \(and 1 more rule\(s\) broken\)$"):
        monitor.raise_if_violated()


def test_keep_going_waits_for_the_end_and_then_names_every_broken_rule() -> None:
    monitor = _monitor([0.0])
    monitor.keep_going = True
    _two_violations(monitor)
    monitor.raise_if_violated()  # a check's poll: the scenario goes on
    with pytest.raises(ContractBroken) as failure:
        monitor.raise_if_violated(final=True)
    assert str(failure.value) == (
        "contract monitor: 2 rule(s) broken: claim-changed-node at 1.0s: g's claim moved from n0 to n1; "
        "active-label-diverged at 2.5s: record a has no active label"
    )


def test_an_unmarked_record_of_a_run_the_scheduler_under_test_serves_is_reported_when_both_are_seen() -> None:
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=True, scheduler_name="tkn-gw1")  # type: ignore[arg-type]
    run = {"metadata": {"name": "run", "namespace": "ns", "uid": "u"}, "spec": {"taskRunTemplate": {"podTemplate": {"schedulerName": "tkn-gw1"}}}}
    monitor._apply(_Event("records", "ADDED", obj=RECORD))
    assert monitor.violations == []  # the PipelineRun has not been seen yet
    monitor._apply(_Event("pipelineruns", "ADDED", obj=run))
    assert [v.rule for v in monitor.violations] == [rules.SCHEDULER_NAME_MISSING]


def test_a_record_marked_with_the_scheduler_under_test_passes() -> None:
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=True, scheduler_name="tkn-gw1")  # type: ignore[arg-type]
    run = {"metadata": {"name": "run", "namespace": "ns", "uid": "u"}, "spec": {"taskRunTemplate": {"podTemplate": {"schedulerName": "tkn-gw1"}}}}
    marked = copy.deepcopy(RECORD)
    marked["metadata"]["annotations"] = {"rescon.dev/scheduler-name": "tkn-gw1"}
    monitor._apply(_Event("pipelineruns", "ADDED", obj=run))
    monitor._apply(_Event("records", "ADDED", obj=marked))
    assert monitor.violations == []


def _unbound_pod(uid: str, namespace: str) -> dict[str, Any]:
    return {"metadata": {"uid": uid, "name": uid, "namespace": namespace}, "spec": {"schedulerName": "tkn"}, "status": {"phase": "Pending"}}


class _FakeCustom:
    """A custom-objects API that lists one record in each of three namespaces, and remembers how it was asked."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def list_cluster_custom_object(self, group: str, version: str, plural: str) -> dict[str, Any]:
        self.calls.append(f"cluster {plural}")
        items = [{**copy.deepcopy(RECORD), "metadata": {**RECORD["metadata"], "namespace": ns}} for ns in ("ns", "ns-other", "elsewhere")]
        return {"metadata": {"resourceVersion": "7"}, "items": items}

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str) -> dict[str, Any]:
        self.calls.append(f"{namespace} {plural}")
        return {"metadata": {"resourceVersion": "7"}, "items": [copy.deepcopy(RECORD)]}


def test_a_monitor_of_two_namespaces_keeps_their_pods_and_records_and_no_others() -> None:
    custom = _FakeCustom()
    kube: Any = type("FakeKube", (), {"custom": custom, "core": None})()
    monitor = ContractMonitor(kube, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=True, extra_namespaces=("ns-other",))
    items, version = monitor._list("records")
    assert sorted(i["metadata"]["namespace"] for i in items) == ["ns", "ns-other"] and version == "7"
    assert custom.calls == ["cluster reservationrecords"]
    monitor._apply(_Event("pods", "SYNC", items=[_unbound_pod(uid, ns) for uid, ns in (("a", "ns"), ("b", "ns-other"), ("c", "elsewhere"))]))
    assert sorted(monitor.world.pods) == ["a", "b"]

    alone = ContractMonitor(kube, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=True)
    alone._list("records")
    assert custom.calls[-1] == "ns reservationrecords"


# --- release-late: the monitor's reads of a run whose release may be due, on a fake clock ---

MARKED = {**RECORD, "metadata": {**RECORD["metadata"], "annotations": {"rescon.dev/scheduler-name": "tkn"}}}


def _held(*, marked: bool = True) -> dict[str, Any]:
    obj = _reserved(label=True)
    if marked:
        obj["metadata"]["annotations"] = {"rescon.dev/scheduler-name": "tkn"}
    return obj


def _released() -> dict[str, Any]:
    obj = _held()
    obj["status"]["groups"][0].update(state="Released", releasedAt="2026-12-01T10:01:00Z", releaseReason="TasksDone")
    obj["metadata"]["labels"] = {}
    return obj


RUN_STARTED = {"metadata": {"name": "run", "namespace": "ns", "uid": "u"},
               "spec": {"taskRunTemplate": {"podTemplate": {"schedulerName": "tkn"}}},
               "status": {"conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}],
                          "childReferences": [{"name": "run-build", "pipelineTaskName": "build"}]}}


class _ReleaseReads:
    """The monitor's two reads for release-late, answered by hand: what is due (from `due_at` on), and the record as it is."""

    def __init__(self, monitor: ContractMonitor, clock: list[float], *, due_at: float, record: dict[str, Any]) -> None:
        self.clock, self.due_at, self.record = clock, due_at, record
        self.truth_reads: list[float] = []
        self.record_reads: list[float] = []
        monitor._read_truths = self.truths  # type: ignore[method-assign]
        monitor._read_record = self.fresh  # type: ignore[method-assign]
        monitor._true_reasons = lambda record, tasks: {ReleaseReason.TASKS_DONE}  # type: ignore[method-assign]

    def truths(self, record: Any, groups: dict[str, tuple[str, ...]]) -> dict[str, ReleaseTruth]:
        self.truth_reads.append(self.clock[0])
        due = frozenset({ReleaseReason.TASKS_DONE}) if self.clock[0] >= self.due_at else frozenset()
        return {g: ReleaseTruth(due, due) for g in groups}

    def fresh(self, record: Any) -> Record:
        self.record_reads.append(self.clock[0])
        return Record.from_json(self.record)


def _late_monitor(clock: list[float]) -> ContractMonitor:
    timeouts = dataclasses.replace(DEFAULT_TIMEOUTS, release_late=15.0)
    return ContractMonitor(None, "ns", {"pool": "p"}, timeouts=timeouts, checks_records=True, scheduler_name="tkn", clock=lambda: clock[0])  # type: ignore[arg-type]


def _tick_until(monitor: ContractMonitor, clock: list[float], end: float, step: float = 0.25) -> None:
    while clock[0] < end:
        clock[0] = round(clock[0] + step, 2)
        monitor._check_release_timers()


def _held_run_watched(*, due_at: float, record: dict[str, Any]) -> tuple[list[float], ContractMonitor, _ReleaseReads]:
    """A monitor on a fake clock that has seen RUN_STARTED and its record holding the group; its reads answer `record`."""
    clock = [0.0]
    monitor = _late_monitor(clock)
    reads = _ReleaseReads(monitor, clock, due_at=due_at, record=record)
    monitor._apply(_Event("pipelineruns", "ADDED", obj=RUN_STARTED))
    monitor._apply(_Event("records", "ADDED", obj=_held()))
    return clock, monitor, reads


def test_a_group_held_past_release_late_after_its_release_was_seen_due_is_release_late() -> None:
    clock, monitor, reads = _held_run_watched(due_at=4.0, record=_held())
    _tick_until(monitor, clock, 19.0)
    assert monitor.violations == []  # first seen due at the read of 4.0 s (every 2 s from 0.25 s: 0.25, 2.25, 4.25)
    _tick_until(monitor, clock, 20.0)
    assert [v.rule for v in monitor.violations] == [rules.RELEASE_LATE]
    assert monitor.violations[0].at == 19.5
    assert "still Reserved on n1 15.2s after the monitor first saw its release due (TasksDone; release_late 15s)" in monitor.violations[0].message
    assert reads.truth_reads == [0.25, 2.25, 4.25]  # not read again once due
    assert reads.record_reads == [19.5]


def test_a_release_the_record_watch_has_not_shown_yet_is_not_late() -> None:
    clock, monitor, reads = _held_run_watched(due_at=0.0, record=_released())
    _tick_until(monitor, clock, 16.0)
    assert monitor.violations == [] and reads.record_reads == [15.5, 15.75, 16.0]  # the fresh read says Released
    monitor._apply(_Event("records", "MODIFIED", obj=_released()))
    _tick_until(monitor, clock, 40.0)
    assert monitor.violations == [] and reads.record_reads == [15.5, 15.75, 16.0]


def test_a_run_with_a_group_task_not_started_is_not_read() -> None:
    clock = [0.0]
    monitor = _late_monitor(clock)
    reads = _ReleaseReads(monitor, clock, due_at=0.0, record=_held())
    not_started = copy.deepcopy(RUN_STARTED)
    not_started["status"]["childReferences"] = []
    monitor._apply(_Event("pipelineruns", "ADDED", obj=not_started))
    monitor._apply(_Event("records", "ADDED", obj=_held()))
    _tick_until(monitor, clock, 30.0)
    assert reads.truth_reads == [] and monitor.violations == []


def test_another_schedulers_record_is_not_judged() -> None:
    clock = [0.0]
    monitor = _late_monitor(clock)
    reads = _ReleaseReads(monitor, clock, due_at=0.0, record=_held())
    foreign, theirs = _held(), copy.deepcopy(RUN_STARTED)
    foreign["metadata"]["annotations"] = {"rescon.dev/scheduler-name": "another-scheduler"}
    theirs["spec"]["taskRunTemplate"]["podTemplate"]["schedulerName"] = "another-scheduler"
    monitor._apply(_Event("pipelineruns", "ADDED", obj=theirs))
    monitor._apply(_Event("records", "ADDED", obj=foreign))
    _tick_until(monitor, clock, 30.0)
    assert reads.truth_reads == [] and monitor.violations == []


def test_a_bound_pod_of_another_scenario_counts_on_its_node_but_is_not_judged_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record-after-bind is judged for the scenario's own runs: another namespace's pod never costs a fresh read of the cluster."""
    clock = [0.0]
    monitor = _monitor(clock)
    reads: list[str] = []
    monkeypatch.setattr(monitor, "_fresh_world", lambda: reads.append("fresh") or monitor.world)
    labels = {"tekton.dev/pipelineRun": "other-run", "tekton.dev/pipelineTask": "build"}
    elsewhere = _pod("theirs", "100m", scheduler="tkn", node="n1")
    elsewhere["metadata"].update(namespace="other-scenario", labels=labels)
    monitor._apply(_Event("pods", "ADDED", obj=elsewhere))
    assert reads == [] and monitor.violations == []
    assert "theirs" in monitor.world.pods, "it still counts on its node"
    ours = _pod("ours", "100m", scheduler="tkn", node="n1")
    ours["metadata"]["labels"] = {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "build"}
    monitor._apply(_Event("pods", "ADDED", obj=ours))
    assert reads == ["fresh"], "a pod of the scenario's run with no record seen yet is confirmed by a fresh read"


def test_a_task_its_resolved_run_puts_in_no_group_needs_no_fresh_read(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    reads: list[str] = []
    monkeypatch.setattr(monitor, "_fresh_world", lambda: reads.append("fresh") or monitor.world)
    run = {"metadata": {"name": "run", "namespace": "ns", "uid": "u"}, "spec": {"workspaces": [{"name": "source", "emptyDir": {}}]},
           "status": {"pipelineSpec": {"workspaces": [{"name": "source"}], "tasks": [{"name": "lint", "taskSpec": {"steps": []}}]}}}
    monitor._apply(_Event("pipelineruns", "ADDED", obj=run))
    pod = _pod("lint-pod", "100m", scheduler="tkn", node="n1")
    pod["metadata"]["labels"] = {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "lint"}
    monitor._apply(_Event("pods", "ADDED", obj=pod))
    assert reads == [] and monitor.violations == []


# --- the journal behind the report's timings, fed by the monitor's own events on a fake clock ---


def _waiting_pod(uid: str, *, node: str | None = None, phase: str = "Pending", marked: bool = False) -> dict[str, Any]:
    """A pod of the run's `build` task for the scheduler under test: unbound, or bound to `node`."""
    pod = _pod(uid, "100m", scheduler="tkn", node=node or "")
    if node is None:
        del pod["spec"]["nodeName"]
    pod["metadata"]["labels"] = {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "build", "tekton.dev/pipelineRunUID": "u"}
    pod["status"] = {"phase": phase, "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}] if marked else []}
    return pod


def test_the_monitor_times_a_claim_from_its_first_pod_and_a_release_from_the_read_that_showed_it_due() -> None:
    clock = [1.0]
    monitor = _late_monitor(clock)
    reads = _ReleaseReads(monitor, clock, due_at=4.0, record=_held())
    monitor._apply(_Event("pipelineruns", "ADDED", obj=RUN_STARTED))
    monitor._apply(_Event("pods", "ADDED", obj=_waiting_pod("build-pod")))
    clock[0] = 1.25
    monitor._apply(_Event("records", "ADDED", obj=_held()))
    _tick_until(monitor, clock, 5.75)
    assert reads.truth_reads == [1.5, 3.5, 5.5]  # every 2 s; due from 4.0, so first seen due at 5.5
    monitor._apply(_Event("records", "MODIFIED", obj=_released()))
    latencies = monitor.latencies()
    assert latencies.claim == (0.25,)
    assert latencies.release == (0.25,)  # Released at 5.75, first seen due by the read answered at 5.5
    assert monitor.violations == []


def test_the_monitor_times_a_requeue_from_room_freed_on_the_node_the_waiting_pod_binds_to(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monitor = _monitor(clock)
    monitor.scheduler_name = "tkn"
    monkeypatch.setattr(monitor, "_fresh_world", lambda: monitor.world)
    monkeypatch.setattr(monitor, "_check_bind_volumes", lambda pod: None)
    filler = _pod("filler", "4000m", scheduler="default-scheduler", node="n1")
    monitor._apply(_Event("pods", "ADDED", obj=filler))
    monitor._apply(_Event("pods", "ADDED", obj=_waiting_pod("b")))
    clock[0] = 2.0
    monitor._apply(_Event("pods", "MODIFIED", obj=_waiting_pod("b", marked=True)))
    clock[0] = 5.0
    monitor._apply(_Event("pods", "DELETED", obj=filler))
    clock[0] = 5.5
    monitor._apply(_Event("pods", "MODIFIED", obj=_waiting_pod("b", node="n1", phase="Running", marked=True)))
    assert monitor.latencies().requeue == (0.5,)


def _evaluator_only(monitor: ContractMonitor) -> None:
    """Starts the evaluator thread alone: events are put on its queue by hand, no watch runs."""
    monitor._evaluator.start()


def test_stop_evaluates_every_queued_event_before_the_verdict() -> None:
    monitor = _monitor([0.0])
    monitor._apply = lambda event: setattr(monitor, "events_seen", monitor.events_seen + 1)  # type: ignore[method-assign]
    for _ in range(50):
        monitor._queue.put(_Event("records", "MODIFIED", obj=RECORD))
    _evaluator_only(monitor)
    monitor.stop()
    assert (monitor.events_seen, monitor.unjudged) == (50, 0)
    monitor.raise_if_violated(final=True)


def test_a_monitor_that_cannot_catch_up_within_monitor_drained_refuses_a_verdict() -> None:
    import threading

    release = threading.Event()
    timeouts = dataclasses.replace(DEFAULT_TIMEOUTS, monitor_drained=0.2)
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=timeouts, checks_records=True)  # type: ignore[arg-type]
    monitor._apply = lambda event: release.wait(5)  # type: ignore[method-assign]
    for _ in range(3):
        monitor._queue.put(_Event("records", "MODIFIED", obj=RECORD))
    _evaluator_only(monitor)
    monitor.stop()
    release.set()
    assert monitor.unjudged >= 2
    with pytest.raises(MonitorBehind, match=r"event\(s\) left unevaluated after 0.2s \(monitor_drained\).*monitor_drained=SECONDS"):
        monitor.raise_if_violated(final=True)
    monitor.stop()  # a second stop (the with block's exit) changes nothing
    assert monitor.unjudged >= 2
