"""The reference scheduler on the local cluster: bad input never stops it from scheduling the others.

Each case asserts on object state (pods' nodeName and PodScheduled condition,
ReservationRecords), never on events or logs.
"""

from __future__ import annotations

from typing import Any, Iterator

import kubernetes
import pytest

from harness.cluster.local import LocalCluster
from harness.cluster.node_pools import NodePool
from harness.cluster.volumes import make_bound_pvc
from harness.contract import record as contract
from harness.contract.install import install_crd
from harness.kube import Kube
from harness.suite.scheduler_under_test import SchedulerUnderTest
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for
from it_pipelines import pipeline_run, task
from it_pods import plain_pod, raw_pod, task_pod_name, wait_bound

pytestmark = pytest.mark.integration

SCHEDULER = "tkn-scheduler-it"
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def reference(it_cluster: LocalCluster, it_kube: Kube, it_timeouts: TimeoutConfig) -> Iterator[SchedulerUnderTest]:
    install_crd(it_kube, timeouts=it_timeouts)
    scheduler = SchedulerUnderTest(mode="reference", scheduler_name=SCHEDULER, kubeconfig=it_cluster.kubeconfig, workdir=it_cluster.workdir)
    scheduler.start()
    try:
        yield scheduler
    finally:
        scheduler.stop()


def _pod(name: str, pool: NodePool, cpu: str, **labels: str) -> Obj:
    return plain_pod(name, pool, cpu, scheduler_name=SCHEDULER, **labels)


def _bound(kube: Kube, namespace: str, name: str, timeouts: TimeoutConfig, scheduler: SchedulerUnderTest) -> str:
    return wait_bound(kube, namespace, name, timeouts, check_alive=scheduler.check_alive)


def _run(name: str, pool: NodePool, tasks: list[Obj], claim: str) -> Obj:
    return pipeline_run(name, tasks, pool=pool, claims={"source": claim}, scheduler_name=SCHEDULER, fixed_name=True)


def test_a_pod_without_tekton_labels_is_scheduled_as_a_plain_pod(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    it_kube.core.create_namespaced_pod(namespace, _pod("plain", node_pool, "500m"))
    assert _bound(it_kube, namespace, "plain", it_timeouts, reference) in node_pool.nodes


def test_a_request_larger_than_any_node_waits_with_a_reason_and_others_still_schedule(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    it_kube.core.create_namespaced_pod(namespace, _pod("huge", node_pool, "64"))

    condition = _unschedulable(it_kube, namespace, "huge", it_timeouts)
    assert condition["reason"] == "Unschedulable"
    assert "Insufficient cpu" in condition["message"], condition["message"]

    it_kube.core.create_namespaced_pod(namespace, _pod("small", node_pool, "100m"))
    assert _bound(it_kube, namespace, "small", it_timeouts, reference) in node_pool.nodes
    assert not (raw_pod(it_kube, namespace, "huge").get("spec") or {}).get("nodeName")


def _unschedulable(kube: Kube, namespace: str, name: str, timeouts: TimeoutConfig) -> Obj:
    """_unschedulable() waits for the pod's PodScheduled=False condition and returns it."""

    def poll() -> Obj:
        conditions = (raw_pod(kube, namespace, name).get("status") or {}).get("conditions") or []
        scheduled = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if scheduled is None or scheduled.get("status") != "False":
            raise NotYet(f"PodScheduled is {scheduled}")
        return dict(scheduled)

    return wait_for(poll, what=f"{name} to be marked unschedulable", timeout="pod_scheduled", timeouts=timeouts)


def _run_with_a_hand_made_first_pod(case: str, second: Obj, kube: Kube, namespace: str, pool: NodePool) -> None:
    claim = make_bound_pvc(kube, namespace, "source")
    run = _run(case, pool, [task("first", workspace="source", hold=True), second], claim)
    kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", run)
    # The pod as Tekton would label it, made by hand since Tekton refuses to run this pipeline.
    pod = _pod("first-pod", pool, "100m", **{"tekton.dev/pipelineRun": case, "tekton.dev/pipelineTask": "first"})
    kube.core.create_namespaced_pod(namespace, pod)


def test_a_pod_whose_pipelinerun_cannot_be_planned_is_scheduled_without_a_reservation(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    # Tekton resolves the pipeline, then fails the run on the missing Task: a permanent failure, so a
    # pod that claims to belong to it is scheduled as a plain pod (with a Warning), never left waiting.
    missing = {"name": "second", "taskRef": {"name": "no-such-task"}, "runAfter": ["first"]}
    _run_with_a_hand_made_first_pod("missing-task", missing, it_kube, namespace, node_pool)
    assert _bound(it_kube, namespace, "first-pod", it_timeouts, reference) in node_pool.nodes
    assert _record(it_kube, namespace, "missing-task") is None


def test_a_pod_of_a_pipelinerun_tekton_never_resolves_waits_for_its_plan_and_others_still_schedule(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    # An invalid quantity in the embedded spec: Tekton never writes status.pipelineSpec for it, so the
    # groups cannot be computed and the pod MUST NOT be bound (docs/contract.md section 2); the
    # reference does not plan from the unsubstituted spec.pipelineSpec. It says why, and a plain pod
    # beside it still binds.
    invalid = task("second", cpu="lots", workspace="source", run_after=("first",))
    _run_with_a_hand_made_first_pod("invalid-quantity", invalid, it_kube, namespace, node_pool)
    condition = _unschedulable(it_kube, namespace, "first-pod", it_timeouts)
    assert "waiting for the PipelineRun's plan" in condition["message"], condition["message"]
    resolved = (it_kube.custom.get_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", "invalid-quantity").get("status") or {}).get("pipelineSpec")
    assert not resolved, "Tekton resolved a run with an invalid quantity: this test's premise no longer holds"
    it_kube.core.create_namespaced_pod(namespace, _pod("beside", node_pool, "100m"))
    assert _bound(it_kube, namespace, "beside", it_timeouts, reference) in node_pool.nodes
    assert not (raw_pod(it_kube, namespace, "first-pod").get("spec") or {}).get("nodeName")
    assert _record(it_kube, namespace, "invalid-quantity") is None


def _record(kube: Kube, namespace: str, name: str) -> contract.Record | None:
    try:
        obj = kube.custom.get_namespaced_custom_object(contract.GROUP, contract.VERSION, namespace, contract.PLURAL, name)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return None
        raise
    return contract.Record.from_json(obj)


def _reserved(kube: Kube, namespace: str, name: str, timeouts: TimeoutConfig) -> contract.Record:
    def poll() -> contract.Record:
        record = _record(kube, namespace, name)
        if record is None or not record.reserved:
            raise NotYet(f"record {name} is {'missing' if record is None else 'not Reserved'}")
        return record

    return wait_for(poll, what=f"record {name} to hold a reservation", timeout="record_state", timeouts=timeouts)


def test_a_record_deleted_by_hand_is_recreated_for_the_next_pod(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    claim = make_bound_pvc(it_kube, namespace, "source")
    run = _run(
        "handdeleted",
        node_pool,
        [task("first", workspace="source", hold=True), task("second", cpu="1", workspace="source", hold=True, run_after=("first",))],
        claim,
    )
    it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", run)
    first = task_pod_name(it_kube, namespace, "handdeleted", "first", it_timeouts)
    node = _bound(it_kube, namespace, first, it_timeouts, reference)
    _reserved(it_kube, namespace, "handdeleted", it_timeouts)

    it_kube.custom.delete_namespaced_custom_object(contract.GROUP, contract.VERSION, namespace, contract.PLURAL, "handdeleted")
    it_kube.core.patch_namespaced_pod(first, namespace, {"metadata": {"annotations": {"sim.rescon.dev/release": "true"}}})
    second = task_pod_name(it_kube, namespace, "handdeleted", "second", it_timeouts)
    assert _bound(it_kube, namespace, second, it_timeouts, reference) in node_pool.nodes
    record = _reserved(it_kube, namespace, "handdeleted", it_timeouts)
    assert record.status_of(record.groups[0].name).node == raw_pod(it_kube, namespace, second)["spec"]["nodeName"]
    assert node in node_pool.nodes


def test_a_pipelinerun_deleted_mid_run_leaves_no_reservation_behind(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    """A run reserving 3.5 of a 4-CPU node is deleted; afterwards a 3-CPU group fits on that node again."""
    claim = make_bound_pvc(it_kube, namespace, "source")
    big = _run(
        "doomed",
        node_pool,
        [task("small", workspace="source", hold=True), task("big", cpu="3500m", workspace="source", hold=True, run_after=("small",))],
        claim,
    )
    it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", big)
    node = _bound(it_kube, namespace, task_pod_name(it_kube, namespace, "doomed", "small", it_timeouts), it_timeouts, reference)
    _reserved(it_kube, namespace, "doomed", it_timeouts)
    # Fill the other node, so the only room for the next group is what the deleted run held.
    other = next(n for n in node_pool.nodes if n != node)
    filler = _pod("filler", node_pool, "3500m")
    filler["spec"]["nodeName"] = other
    it_kube.core.create_namespaced_pod(namespace, filler)

    it_kube.custom.delete_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", "doomed")
    it_kube.core.create_namespaced_pod(namespace, _pod("after", node_pool, "3"))
    assert _bound(it_kube, namespace, "after", it_timeouts, reference) == node


def test_quantities_in_any_spelling_are_read_as_kubernetes_reads_them(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    """"0.5" CPU is 500m; "0.25" CPU and "1e3" memory make a group's peak 250m and 1000 bytes."""
    it_kube.core.create_namespaced_pod(namespace, _pod("half", node_pool, "0.5"))
    assert _bound(it_kube, namespace, "half", it_timeouts, reference) in node_pool.nodes
    claim = make_bound_pvc(it_kube, namespace, "source")
    run = _run("spelled", node_pool, [task("only", cpu="0.25", memory="1e3", workspace="source", hold=True)], claim)
    it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", run)
    assert _bound(it_kube, namespace, task_pod_name(it_kube, namespace, "spelled", "only", it_timeouts), it_timeouts, reference) in node_pool.nodes
    group = _reserved(it_kube, namespace, "spelled", it_timeouts).groups[0]
    assert (group.peak_cpu_millis, group.peak_memory_bytes) == (250, 1000)


def test_a_record_edited_by_hand_into_a_refused_state_stays_as_it_was_and_the_run_goes_on(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    claim = make_bound_pvc(it_kube, namespace, "source")
    tasks = [task("first", workspace="source", hold=True), task("second", cpu="1", workspace="source", hold=True, run_after=("first",))]
    it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "pipelineruns", _run("edited", node_pool, tasks, claim))
    first = task_pod_name(it_kube, namespace, "edited", "first", it_timeouts)
    node = _bound(it_kube, namespace, first, it_timeouts, reference)
    before = _reserved(it_kube, namespace, "edited", it_timeouts)
    group = before.groups[0].name
    for edit in (
        {"spec": {"groups": [{"name": group, "tasks": ["first", "second"], "workspaces": ["source"], "peak": {"cpu": "9", "memory": "0"}}]}},
        {"status": {"groups": [{"name": group, "state": "Hoarded"}]}},
    ):
        with pytest.raises(kubernetes.client.ApiException) as refused:
            subresource = "status" in edit
            patch = it_kube.custom.patch_namespaced_custom_object_status if subresource else it_kube.custom.patch_namespaced_custom_object
            patch(contract.GROUP, contract.VERSION, namespace, contract.PLURAL, "edited", edit)
        assert refused.value.status == 422, refused.value.body
    after = _record(it_kube, namespace, "edited")
    assert after is not None and after.groups == before.groups and after.status_of(group).node == node
    it_kube.core.patch_namespaced_pod(first, namespace, {"metadata": {"annotations": {"sim.rescon.dev/release": "true"}}})
    second = task_pod_name(it_kube, namespace, "edited", "second", it_timeouts)
    assert _bound(it_kube, namespace, second, it_timeouts, reference) == node


def test_a_task_changed_mid_run_gets_its_new_size_under_the_claim_the_run_already_holds(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig
) -> None:
    """Tekton resolves a taskRef when it creates the TaskRun, so a Task edited mid-run sizes the later pod.

    The record's peak stays what it was at creation (500m: first 100m, then grow 500m); the grown pod
    (1500m) binds on the claim's node, where a 4-CPU node has room for it.
    """
    from harness.cluster.simulation import sim_task_spec

    def grow(cpu: str) -> Obj:
        return {"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": "grow"}, "spec": sim_task_spec(cpu=cpu, workspaces=("w",))}

    it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "tasks", grow("500m"))
    claim = make_bound_pvc(it_kube, namespace, "source")
    second = {"name": "second", "taskRef": {"name": "grow"}, "runAfter": ["first"], "workspaces": [{"name": "w", "workspace": "source"}]}
    it_kube.custom.create_namespaced_custom_object(
        "tekton.dev", "v1", namespace, "pipelineruns", _run("changed", node_pool, [task("first", workspace="source", hold=True), second], claim)
    )
    first = task_pod_name(it_kube, namespace, "changed", "first", it_timeouts)
    node = _bound(it_kube, namespace, first, it_timeouts, reference)
    assert _reserved(it_kube, namespace, "changed", it_timeouts).groups[0].peak_cpu_millis == 500
    current = it_kube.custom.get_namespaced_custom_object("tekton.dev", "v1", namespace, "tasks", "grow")
    it_kube.custom.replace_namespaced_custom_object("tekton.dev", "v1", namespace, "tasks", "grow", {**grow("1500m"), "metadata": current["metadata"]})
    it_kube.core.patch_namespaced_pod(first, namespace, {"metadata": {"annotations": {"sim.rescon.dev/release": "true"}}})
    grown = task_pod_name(it_kube, namespace, "changed", "second", it_timeouts)
    assert _bound(it_kube, namespace, grown, it_timeouts, reference) == node
    requests = raw_pod(it_kube, namespace, grown)["spec"]["containers"][0]["resources"]["requests"]
    assert requests["cpu"] == "1500m", f"Tekton built the second pod from the Task as it was: {requests}"
    record = _record(it_kube, namespace, "changed")
    assert record is not None and record.groups[0].peak_cpu_millis == 500
