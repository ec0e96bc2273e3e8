"""rescon audit's live state, fed events by hand: which binds it judges, which record changes it reports, how a relist resets it."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes
import pytest

from harness.audit.live_state import LiveState
from harness.audit.watches import WatchEvent, _transient, backoff_seconds
from harness.contract import record as contract
from harness.monitor import invariants as rules

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
ME = "tkn-scheduler"

RUN: Obj = {
    "metadata": {"name": "run", "namespace": "ns", "uid": "u", "creationTimestamp": "2026-12-03T11:00:00Z"},
    "spec": {"workspaces": [{"name": "source", "persistentVolumeClaim": {}}], "taskRunTemplate": {"podTemplate": {"schedulerName": ME}}},
    "status": {"pipelineSpec": {"tasks": [{"name": "build", "workspaces": [{"name": "w", "workspace": "source"}]},
                                          {"name": "test", "workspaces": [{"name": "w", "workspace": "source"}]}]}},
}
RECORD: Obj = {
    "apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord",
    "metadata": {"name": "run", "namespace": "ns", "resourceVersion": "100", "creationTimestamp": "2026-12-03T11:00:01Z",
                 "labels": {}, "annotations": {contract.SCHEDULER_ANNOTATION: ME},
                 "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "run", "uid": "u", "controller": True}]},
    "spec": {"pipelineRun": {"name": "run", "uid": "u"},
             "groups": [{"name": "source", "tasks": ["build", "test"], "workspaces": ["source"], "peak": {"cpu": "1", "memory": "0"}}]},
}


def node(name: str, cpu: str = "4") -> Obj:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi"}}}


def pod(name: str, *, node_name: str | None = None, cpu: str = "1", scheduler: str = ME, task: str | None = None, rv: str = "50") -> Obj:
    labels = {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": task} if task else {}
    spec: Obj = {"schedulerName": scheduler, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv, "labels": labels}, "spec": spec, "status": {"phase": "Running"}}


def reserved(node_name: str, generation: int = 1, *, label: bool = True, holders: tuple[str, ...] = ()) -> Obj:
    obj = copy.deepcopy(RECORD)
    obj["status"] = {"groups": [{"name": "source", "state": "Reserved", "node": node_name, "holders": list(holders),
                                 "claimGeneration": generation, "reservedAt": "2026-12-03T11:00:02Z"}]}
    if label:
        obj["metadata"]["labels"] = {contract.ACTIVE_LABEL: contract.ACTIVE_VALUE}
    return obj


def no_reasons(record: contract.Record, tasks: tuple[str, ...]) -> set[contract.ReleaseReason]:
    return set()


def synced(*, pods: list[Obj] = (), nodes: list[Obj] = (), runs: list[Obj] = (), records: list[Obj] = ()) -> LiveState:  # type: ignore[assignment]
    state = LiveState(ME, label_converges=5.0)
    for kind, items in (("pods", pods), ("nodes", nodes), ("pipelineruns", runs), ("records", records)):
        state.apply(WatchEvent(kind, "SYNC", items=list(items)), now=0.0, true_reasons_of=no_reasons)
    assert state.ready()
    return state


def apply(state: LiveState, kind: str, change: str, obj: Obj, now: float = 1.0) -> list[rules.Finding]:
    return state.apply(WatchEvent(kind, change, obj=obj), now=now, true_reasons_of=no_reasons)


def test_only_binds_of_the_judged_scheduler_seen_live_mark_a_node_for_judging() -> None:
    state = synced(pods=[pod("old", node_name="n1")], nodes=[node("n1"), node("n2")])
    assert state.decided_on == set(), "binds listed at the start are not decisions seen"
    apply(state, "pods", "ADDED", pod("filler", node_name="n2", scheduler="default-scheduler"))
    apply(state, "pods", "ADDED", pod("mine"))
    assert state.decided_on == set()
    apply(state, "pods", "MODIFIED", pod("mine", node_name="n1"))
    assert state.decided_on == {"n1"}
    apply(state, "pods", "MODIFIED", pod("mine", node_name="n1"))
    assert state.decided_on == {"n1"}


def test_room_counts_every_pod_on_a_judged_node() -> None:
    state = synced(nodes=[node("n1", cpu="2")], pods=[pod("theirs", node_name="n1", scheduler="default-scheduler", cpu="1500m")])
    apply(state, "pods", "ADDED", pod("mine", node_name="n1"))
    found = state.state_findings(now=1.0, nodes=state.decided_on)
    assert [f.rule for f in found] == [rules.NODE_OVERCOMMITTED]
    assert set(found[0].objects) == {"node n1", "pod ns/theirs", "pod ns/mine"}
    assert state.state_findings(now=1.0, nodes=set()) == [], "a node nobody decided on is not judged"


def test_a_claim_that_moves_is_reported_once_as_a_transition() -> None:
    state = synced(nodes=[node("n1"), node("n2")], runs=[RUN])
    assert apply(state, "records", "ADDED", reserved("n1")) == []
    found = apply(state, "records", "MODIFIED", reserved("n2"))
    assert rules.CLAIM_CHANGED_NODE in {f.rule for f in found}
    assert state.decided_on >= {"n1"}


def test_a_relist_does_not_compare_across_the_gap() -> None:
    state = synced(nodes=[node("n1"), node("n2")], runs=[RUN], records=[reserved("n1")])
    assert state.apply(WatchEvent("records", "SYNC", items=[reserved("n2")]), now=2.0, true_reasons_of=no_reasons) == []


def test_records_of_other_schedulers_are_not_judged() -> None:
    theirs = reserved("n1")
    theirs["metadata"]["annotations"] = {contract.SCHEDULER_ANNOTATION: "someone-else"}
    other_run = copy.deepcopy(RUN)
    other_run["spec"]["taskRunTemplate"]["podTemplate"]["schedulerName"] = "someone-else"
    state = synced(nodes=[node("n1"), node("n2")], runs=[other_run], records=[theirs])
    moved = copy.deepcopy(theirs)
    moved["status"]["groups"][0]["node"] = "n2"
    assert apply(state, "records", "MODIFIED", moved) == []


def test_an_unlabelled_active_record_is_reported_after_label_converges_and_clears_when_labelled() -> None:
    state = synced(nodes=[node("n1")], runs=[RUN])
    apply(state, "records", "ADDED", reserved("n1", label=False), now=10.0)
    assert state.state_findings(now=14.0, nodes=set()) == []
    assert [f.rule for f in state.state_findings(now=15.5, nodes=set())] == [rules.ACTIVE_LABEL_DIVERGED]
    apply(state, "records", "MODIFIED", reserved("n1", label=True), now=16.0)
    assert state.state_findings(now=30.0, nodes=set()) == []


def test_an_invalid_record_is_in_force_until_it_is_deleted() -> None:
    state = synced(nodes=[node("n1")], runs=[RUN])
    broken = copy.deepcopy(RECORD)
    broken["spec"]["groups"] = "not a list"
    apply(state, "records", "ADDED", broken)
    assert [f.rule for f in state.state_findings(now=1.0, nodes=set())] == [rules.RECORD_INVALID]
    apply(state, "records", "DELETED", broken)
    assert state.state_findings(now=1.0, nodes=set()) == []


def test_a_group_pod_bound_before_its_record_was_created_is_record_after_bind() -> None:
    state = synced(nodes=[node("n1")], runs=[RUN], records=[])
    assert state.records_served, "an empty list of records is records served"
    assert apply(state, "pods", "ADDED", pod("b", task="build", node_name="n1", rv="90")) == []
    found = apply(state, "records", "ADDED", reserved("n1", holders=("uid-b",)))
    assert [f.rule for f in found] == [rules.RECORD_AFTER_BIND]
    assert state.first_binds == {}
    assert apply(state, "pods", "ADDED", pod("t", task="test", node_name="n1", rv="120")) == [], "bound after the record: fine"


def test_the_watch_backoff_doubles_to_a_bound() -> None:
    assert [backoff_seconds(n) for n in (0, 1, 2, 3, 7, 100)] == [0.5, 0.5, 1.0, 2.0, 30.0, 30.0]


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (ConnectionRefusedError(), True),
        (kubernetes.client.ApiException(status=503), True),
        (kubernetes.client.ApiException(status=429), True),
        (kubernetes.client.ApiException(status=403), True),
        (kubernetes.client.ApiException(status=400), False),
    ],
    ids=["connection-refused", "unavailable", "throttled", "forbidden-while-rbac-warms-up", "bad-request"],
)
def test_only_what_a_retry_can_cure_is_retried(error: BaseException, retried: bool) -> None:
    assert _transient(error) is retried


def test_an_api_refusal_is_described_in_one_line_with_its_message() -> None:
    from harness.audit.watches import describe_error

    refused = kubernetes.client.ApiException(status=403, reason="Forbidden")
    refused.body = '{"kind": "Status", "message": "pods is forbidden: User \\"x\\" cannot watch resource \\"pods\\""}'
    assert describe_error(refused) == '403 Forbidden: pods is forbidden: User "x" cannot watch resource "pods"'
    assert describe_error(ConnectionRefusedError("Connection refused")) == "ConnectionRefusedError: Connection refused"


def test_records_not_served_turn_the_reservation_rules_off() -> None:
    state = synced(nodes=[node("n1")], runs=[RUN])
    state.apply(WatchEvent("records", "SYNC", items=[], served=False), now=1.0, true_reasons_of=no_reasons)
    assert not state.records_served
    assert apply(state, "pods", "ADDED", pod("b", task="build", node_name="n1")) == [] and state.first_binds == {}


def test_release_late_reads_a_judged_run_whose_tasks_all_started_and_counts_from_the_read_that_saw_it_due() -> None:
    started = copy.deepcopy(RUN)
    started["status"]["childReferences"] = [{"name": "run-build", "pipelineTaskName": "build"}]
    state = synced(nodes=[node("n1")], runs=[RUN], records=[reserved("n1")])
    assert state.release_read(now=1.0) is None  # test has no TaskRun yet: nothing can be due
    apply(state, "pipelineruns", "MODIFIED", started)
    assert state.release_read(now=1.0) is None  # ... still
    started["status"]["childReferences"].append({"name": "run-test", "pipelineTaskName": "test"})
    apply(state, "pipelineruns", "MODIFIED", started)
    wanted = state.release_read(now=1.0)
    assert wanted is not None and wanted[1] == ("source",)
    state.release_clock.observe(wanted[0], {"source": frozenset({contract.ReleaseReason.TASKS_DONE})}, now=2.0)
    assert state.late_releases(now=17.0) == []
    assert [late.group for late in state.late_releases(now=17.5)] == ["source"]
    released = reserved("n1")
    released["status"]["groups"][0].update(state="Released", releasedAt="2026-12-03T11:01:00Z", releaseReason="TasksDone")
    apply(state, "records", "MODIFIED", released, now=18.0)
    assert state.late_releases(now=30.0) == [] and not state.release_clock.running()
