"""The contract monitor's rules, as pure functions over a World: each fires on its fault and stays quiet otherwise."""

from __future__ import annotations

from typing import Any

import pytest

from harness.contract.record import Record
from harness.monitor import invariants as rules
from harness.monitor.invariants import World

pytestmark = pytest.mark.unit

NS, RUN, RUN_UID = "ns", "a", "run-uid"


def _record(state: str = "Reserved", *, node: str | None = "n1", holders: tuple[str, ...] = ("p1",), generation: int = 1,
            peak_cpu: str = "3800m", active: bool | None = None, workspaces: tuple[str, ...] = ("source",),
            reserved_at: str = "2026-12-01T10:00:00Z") -> Record:
    status: dict[str, Any] = {"name": "source", "state": state, "claimGeneration": generation}
    if state != "Pending":
        status.update(node=node, holders=list(holders), reservedAt=reserved_at)
    if state == "Released":
        status.update(releasedAt="2026-12-01T10:01:00Z", releaseReason="TasksDone")
    is_active = state == "Reserved" if active is None else active
    obj = {
        "apiVersion": "rescon.dev/v1alpha1",
        "kind": "ReservationRecord",
        "metadata": {
            "name": RUN, "namespace": NS, "labels": {"rescon.dev/active": "true"} if is_active else {},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": RUN, "uid": RUN_UID, "controller": True}],
        },
        "spec": {"pipelineRun": {"name": RUN, "uid": RUN_UID},
                 "groups": [{"name": "source", "tasks": ["small", "big"], "workspaces": list(workspaces), "peak": {"cpu": peak_cpu, "memory": "0"}}]},
        "status": {"groups": [status]},
    }
    return Record.from_json(obj)


def _pod(uid: str, task: str | None, *, node: str | None, cpu: str, phase: str = "Running", run: str = RUN) -> dict[str, Any]:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if task else {}
    return {
        "metadata": {"uid": uid, "name": f"pod-{uid}", "namespace": NS, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase},
    }


def _node(name: str, cpu: str = "4800m") -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pipeline_run(uid: str = RUN_UID) -> dict[str, Any]:
    tasks = [{"name": t, "workspaces": [{"name": "w", "workspace": "source"}]} for t in ("small", "big")]
    return {"metadata": {"name": RUN, "namespace": NS, "uid": uid},
            "spec": {"workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "pvc"}}], "pipelineSpec": {"tasks": tasks}}}


def _world(*pods: dict[str, Any], record: Record | None = None, nodes: tuple[str, ...] = ("n1", "n2")) -> World:
    world = World(pods={p["metadata"]["uid"]: p for p in pods}, nodes={n: _node(n) for n in nodes})
    world.pipeline_runs[(NS, RUN)] = _pipeline_run()
    if record is not None:
        world.records[(NS, RUN)] = record
    return world


# --- node-overcommitted: the contract's worked example (section 7) ---


def test_the_worked_example_900m_beside_a_3800m_reservation_running_200m_fits() -> None:
    world = _world(_pod("p1", "small", node="n1", cpu="200m"), _pod("b", None, node="n1", cpu="1000m"), record=_record())
    assert rules.overcommitted(world, with_reservations=True) == []


def test_one_millicore_more_than_the_headroom_overcommits_the_node() -> None:
    world = _world(_pod("p1", "small", node="n1", cpu="200m"), _pod("b", None, node="n1", cpu="1001m"), record=_record())
    [finding] = rules.overcommitted(world, with_reservations=True)
    assert finding.rule == rules.NODE_OVERCOMMITTED
    assert "4801m CPU" in finding.message and "residuals 3600m CPU" in finding.message and "node n1" in finding.objects


def test_placement_only_counts_pods_alone() -> None:
    world = _world(_pod("p1", "small", node="n1", cpu="200m"), _pod("b", None, node="n1", cpu="2000m"), record=_record())
    assert rules.overcommitted(world, with_reservations=False) == []


def test_finished_pods_and_released_groups_hold_nothing() -> None:
    world = _world(_pod("old", None, node="n1", cpu="4800m", phase="Succeeded"), _pod("b", None, node="n1", cpu="4800m"),
                   record=_record("Released"))
    assert rules.overcommitted(world, with_reservations=True) == []


def test_a_group_pod_bigger_than_its_peak_counts_in_full() -> None:
    world = _world(_pod("p1", "big", node="n1", cpu="4000m"), _pod("b", None, node="n1", cpu="900m"), record=_record(peak_cpu="3800m"))
    assert [f.rule for f in rules.overcommitted(world, with_reservations=True)] == [rules.NODE_OVERCOMMITTED]


# --- group-split, pod-off-claim-node, bound-pod-not-holder ---


def test_a_group_on_two_nodes_is_split_but_not_after_its_node_is_gone() -> None:
    pods = (_pod("p1", "small", node="n1", cpu="100m", phase="Succeeded"), _pod("p2", "big", node="n2", cpu="100m"))
    assert [f.rule for f in rules.split_groups(_world(*pods))] == [rules.GROUP_SPLIT]
    assert rules.split_groups(_world(*pods, nodes=("n2",))) == []


def test_a_group_pod_off_its_claim_node_and_one_missing_from_holders() -> None:
    off = _world(_pod("p1", "small", node="n1", cpu="100m"), _pod("p2", "big", node="n2", cpu="100m"), record=_record(holders=("p1", "p2")))
    assert [f.rule for f in rules.claim_placement(off)] == [rules.POD_OFF_CLAIM_NODE]
    missing = _world(_pod("p1", "small", node="n1", cpu="100m"), _pod("p2", "big", node="n1", cpu="100m"), record=_record(holders=("p1",)))
    [finding] = rules.claim_placement(missing)
    assert finding.rule == rules.BOUND_POD_NOT_HOLDER and "pod-p2" in finding.message


def test_holders_and_node_are_judged_only_while_reserved() -> None:
    world = _world(_pod("p1", "small", node="n2", cpu="100m"), record=_record("Released", holders=()))
    assert rules.claim_placement(world) == []


def test_a_bound_group_pod_needs_its_record_first() -> None:
    pod = _pod("p1", "small", node="n1", cpu="100m")
    [finding] = [f for f in [rules.record_for_bound_pod(_world(pod), pod)] if f is not None]
    assert finding.rule == rules.RECORD_AFTER_BIND
    assert rules.record_for_bound_pod(_world(pod, record=_record()), pod) is None
    plain = _pod("x", "other", node="n1", cpu="100m")
    assert rules.record_for_bound_pod(_world(plain), plain) is None


# --- the state machine (section 5) ---


@pytest.mark.parametrize("before, after, rule", [
    (_record("Released"), _record("Reserved"), rules.RELEASED_NOT_FINAL),
    (_record("Pending", generation=1), _record("Reserved", generation=3), rules.CLAIM_GENERATION_STEP),
    (_record("Reserved", generation=1), _record("Reserved", generation=2), rules.CLAIM_GENERATION_STEP),
    (_record("Reserved", node="n1"), _record("Reserved", node="n2"), rules.CLAIM_CHANGED_NODE),
    # A join changes only holders; a release keeps node, holders and reservedAt (section 5).
    (_record("Reserved", holders=("p1",)), _record("Reserved", holders=("p1", "p2"), reserved_at="2026-12-01T10:00:05Z"), rules.CLAIM_REWRITTEN),
    (_record("Reserved", holders=("p1", "p2")), _record("Released", holders=()), rules.CLAIM_REWRITTEN),
    (_record("Reserved", holders=("p1", "p2")), _record("Released", holders=("p1",)), rules.CLAIM_REWRITTEN),
    (_record("Reserved"), _record("Released", reserved_at="2026-12-01T10:00:30Z"), rules.CLAIM_REWRITTEN),
])
def test_state_machine_breaks(before: Record, after: Record, rule: str) -> None:
    assert rule in [f.rule for f in rules.record_transition(before, after)]


@pytest.mark.parametrize("before, after", [
    (_record("Pending", generation=0), _record("Reserved", generation=1)),
    (_record("Reserved", generation=1), _record("Pending", generation=1)),
    (_record("Reserved", holders=("p1",)), _record("Reserved", holders=("p1", "p2"))),
    (_record("Reserved"), _record("Released")),
    (_record("Reserved", holders=("p1", "p2")), _record("Reserved", holders=("p2",))),
    (_record("Pending", generation=2), _record("Released", generation=2)),
    (_record("Reserved", generation=1), _record("Pending", generation=1)),
])
def test_state_machine_allowed_steps(before: Record, after: Record) -> None:
    assert rules.record_transition(before, after) == []


# --- groups-differ (section 4) ---


def test_a_workspace_no_task_uses_makes_the_groups_differ() -> None:
    finding = rules.groups_differ(_record(workspaces=("source", "unused")), _pipeline_run())
    assert finding is not None and finding.rule == rules.GROUPS_DIFFER
    assert rules.groups_differ(_record(), _pipeline_run()) is None
    assert rules.groups_differ(_record(workspaces=("source", "unused")), _pipeline_run(uid="newer-run")) is None


def test_a_changed_spec_is_reported() -> None:
    assert rules.SPEC_CHANGED in [f.rule for f in rules.record_transition(_record(peak_cpu="3800m"), _record(peak_cpu="4000m"))]


def test_a_record_with_another_runs_uid_is_wrong_unless_it_is_older_than_the_run() -> None:
    run = {**_pipeline_run(uid="new-uid"), "metadata": {**_pipeline_run()["metadata"], "uid": "new-uid", "creationTimestamp": "2026-12-01T10:00:05Z"}}
    finding = rules.record_names_wrong_run(_record(), "2026-12-01T10:00:06Z", run)
    assert finding is not None and finding.rule == rules.RECORD_WRONG_RUN
    assert rules.record_names_wrong_run(_record(), "2026-12-01T10:00:01Z", run) is None
    assert rules.record_names_wrong_run(_record(), "2026-12-01T10:00:06Z", _pipeline_run()) is None


def test_new_claims_are_the_nodes_of_groups_that_just_went_reserved() -> None:
    assert rules.new_claims(_record("Pending", generation=0), _record("Reserved", node="n2")) == {"n2"}
    assert rules.new_claims(None, _record("Reserved", node="n1")) == {"n1"}
    assert rules.new_claims(_record("Reserved", node="n1"), _record("Reserved", node="n1", holders=("p1", "p2"))) == set()


def test_a_bind_older_than_the_record_is_a_record_after_bind_in_etcds_order() -> None:
    pod = _pod("p1", "small", node="n1", cpu="100m")
    pod["metadata"]["resourceVersion"] = "1200"
    finding = rules.bound_before_record(pod, _record(), "1234")
    assert finding is not None and finding.rule == rules.RECORD_AFTER_BIND and "resourceVersion 1200" in finding.message
    assert rules.bound_before_record(pod, _record(), "1100") is None
    assert rules.bound_before_record(pod, _record(), "not-etcd") is None
    plain = _pod("x", "other", node="n1", cpu="100m")
    plain["metadata"]["resourceVersion"] = "5"
    assert rules.bound_before_record(plain, _record(), "1234") is None


# --- scheduler-name-missing: every record names the scheduler that created it (section 2) ---


def _marked(annotation: str | None) -> Record:
    obj = {
        "apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord",
        "metadata": {"name": RUN, "namespace": NS, "annotations": {} if annotation is None else {"rescon.dev/scheduler-name": annotation},
                     "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": RUN, "uid": RUN_UID, "controller": True}]},
        "spec": {"pipelineRun": {"name": RUN, "uid": RUN_UID}, "groups": []},
    }
    return Record.from_json(obj)


def _served_by(scheduler: str, *, per_task: bool = False, uid: str = RUN_UID) -> dict[str, Any]:
    run = _pipeline_run(uid)
    template = {"podTemplate": {"schedulerName": scheduler}}
    run["spec"]["taskRunSpecs" if per_task else "taskRunTemplate"] = [{"pipelineTaskName": "big", **template}] if per_task else template
    return run


@pytest.mark.parametrize(
    "annotation, run, found",
    [
        pytest.param("tkn-gw0", _served_by("tkn-gw0"), False, id="marked-with-its-name"),
        pytest.param(None, _served_by("tkn-gw0"), True, id="unmarked"),
        pytest.param("tkn", _served_by("tkn-gw0"), True, id="the-base-name-under-xdist"),
        pytest.param(None, _served_by("tkn-gw0", per_task=True), True, id="a-task-pod-template-names-it"),
        pytest.param("rescon-another-scheduler", _served_by("rescon-another-scheduler"), False, id="another-schedulers-run"),
        pytest.param(None, _served_by("tkn-gw0", uid="older"), False, id="a-stale-record"),
        pytest.param(None, _pipeline_run(), False, id="a-run-that-names-no-scheduler"),
    ],
)
def test_a_record_of_a_run_served_by_the_scheduler_under_test_names_it(annotation: str | None, run: dict[str, Any], found: bool) -> None:
    finding = rules.scheduler_name_missing(_marked(annotation), run, "tkn-gw0")
    assert (finding is not None) == found
    if finding is not None:
        assert finding.rule == rules.SCHEDULER_NAME_MISSING
        assert "rescon.dev/scheduler-name" in finding.message and "tkn-gw0" in finding.message


def _task_pod(scheduler: str, *, run: str = RUN, namespace: str = NS) -> dict[str, Any]:
    return {"metadata": {"name": f"{run}-big-pod", "namespace": namespace, "labels": {"tekton.dev/pipelineRun": run}}, "spec": {"schedulerName": scheduler}}


@pytest.mark.parametrize(
    "pods, found",
    [
        pytest.param([_task_pod("tkn-gw0")], True, id="its-pods-use-the-scheduler"),
        pytest.param([_task_pod("default-scheduler")], False, id="its-pods-use-another"),
        pytest.param([_task_pod("tkn-gw0", run="other-run")], False, id="another-runs-pod"),
        pytest.param([_task_pod("tkn-gw0", namespace="elsewhere")], False, id="a-pod-of-another-namespace"),
        pytest.param([], False, id="no-pod-seen-yet"),
    ],
)
def test_a_run_routed_by_config_defaults_is_judged_by_its_pods(pods: list[dict[str, Any]], found: bool) -> None:
    """No webhook wrote default-pod-template into the stored run (the local cluster): its pods say which scheduler Tekton gave them."""
    run = _pipeline_run()
    assert rules.asks_for(run, "tkn-gw0", pods) == found
    assert (rules.scheduler_name_missing(_marked(None), run, "tkn-gw0", pods) is not None) == found
