"""Tekton on the local cluster, scheduled by the stock kube-scheduler: the simulation plays each task's life."""

from __future__ import annotations

import pytest

from harness import runs
from harness.cluster import simulation
from harness.cluster.node_pools import NodePool
from harness.cluster.volumes import make_bound_pvc
from harness.kube import Kube
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, hold_for
from it_pipelines import pipeline_run, task

pytestmark = pytest.mark.integration


def _status(run: dict[str, object]) -> str | None:
    condition = runs.succeeded(run)  # type: ignore[arg-type]
    return None if condition is None else str(condition.get("status"))


def test_two_sequential_tasks_share_a_pvc_workspace(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    claim = make_bound_pvc(it_kube, namespace, "source", timeouts=it_timeouts)
    manifest = pipeline_run(
        "share",
        [task("write", workspace="source"), task("read", workspace="source", run_after=["write"])],
        pool=node_pool,
        claims={"source": claim},
    )
    name = runs.create(it_kube, namespace, manifest)

    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)

    assert _status(done) == "True", runs.describe(done)
    taskruns = runs.taskruns_of(it_kube, namespace, name)
    assert set(taskruns) == {"write", "read"}
    for task_name, taskrun in taskruns.items():
        pod = it_kube.core.read_namespaced_pod(taskrun["status"]["podName"], namespace)
        assert pod.spec.scheduler_name == "default-scheduler", task_name
        assert pod.spec.node_name in node_pool.nodes, f"{task_name} ran on {pod.spec.node_name}, outside pool {node_pool.nodes}"
        claims = {v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim}
        assert claims == {claim}, task_name
    # Sequential: `read` started only once `write` had completed (RFC 3339 UTC strings order as times).
    assert taskruns["read"]["status"]["startTime"] >= taskruns["write"]["status"]["completionTime"]


def test_a_retried_task_fails_then_succeeds(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    flaky = task("flaky", exit_codes="1,0", retries=1)
    name = runs.create(it_kube, namespace, pipeline_run("retry", [flaky], pool=node_pool))

    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)

    assert _status(done) == "True", runs.describe(done)
    taskrun = runs.taskruns_of(it_kube, namespace, name)["flaky"]
    assert _status(taskrun) == "True", runs.describe(taskrun)
    taskrun_name = taskrun["metadata"]["name"]
    first = it_kube.core.read_namespaced_pod(f"{taskrun_name}-pod", namespace)
    retry = it_kube.core.read_namespaced_pod(f"{taskrun_name}-pod-retry1", namespace)
    assert first.status.phase == "Failed"
    # Eventually, not at once: a real kubelet reports the pod's phase a moment after the step ends (kind).
    runs.wait_for_pod_phase(it_kube, namespace, retry.metadata.name, ("Succeeded",), timeout="taskrun_done", timeouts=it_timeouts)
    assert taskrun["status"]["podName"] == f"{taskrun_name}-pod-retry1"
    assert len(taskrun["status"].get("retriesStatus") or []) == 1


def test_a_lingering_task_succeeds_while_its_pod_still_runs(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    lingering = task("serve", linger=True)
    name = runs.create(it_kube, namespace, pipeline_run("linger", [lingering], pool=node_pool))
    taskrun = runs.wait_for_taskrun(it_kube, namespace, name, "serve", timeouts=it_timeouts)

    done = runs.wait_for_done(it_kube, namespace, "TaskRun", taskrun["metadata"]["name"], timeouts=it_timeouts)

    assert _status(done) == "True", runs.describe(done)
    pod = it_kube.core.read_namespaced_pod(done["status"]["podName"], namespace)
    assert pod.status.phase == "Running"
    states = {c.name: c.state for c in pod.status.container_statuses}
    assert states["step-work"].terminated is not None and states["step-work"].terminated.exit_code == 0
    assert states["sidecar-linger"].running is not None


def test_a_held_task_runs_until_released(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    held = task("held", hold=True)
    name = runs.create(it_kube, namespace, pipeline_run("hold", [held], pool=node_pool))
    taskrun = runs.wait_for_taskrun(it_kube, namespace, name, "held", timeouts=it_timeouts)
    taskrun_name, pod_name = taskrun["metadata"]["name"], taskrun["status"]["podName"]
    runs.wait_for_pod_phase(it_kube, namespace, pod_name, ("Running",), timeout="pod_running", timeouts=it_timeouts)

    def still_running() -> None:
        phase = it_kube.core.read_namespaced_pod(pod_name, namespace).status.phase
        current = runs.get(it_kube, namespace, "TaskRun", taskrun_name)
        if phase != "Running" or runs.is_done(current):
            raise NotYet(f"pod {pod_name} is {phase}, TaskRun is {runs.describe(current)}")

    hold_for(still_running, what=f"held task {taskrun_name}", duration="task_stays_running", timeouts=it_timeouts)
    it_kube.core.patch_namespaced_pod(pod_name, namespace, {"metadata": {"annotations": {simulation.RELEASE: "true"}}})

    done = runs.wait_for_done(it_kube, namespace, "TaskRun", taskrun_name, timeouts=it_timeouts)
    assert _status(done) == "True", runs.describe(done)
    runs.wait_for_pod_phase(it_kube, namespace, pod_name, ("Succeeded",), timeout="taskrun_done", timeouts=it_timeouts)


def test_a_matrix_fans_out_over_an_array_result(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    # What docs/contract.md section 6 says of a results-driven fan-out, measured: the list task's steps write
    # the array result, Tekton substitutes it into the matrix and starts one TaskRun per element.
    listing = task("list", writes={"shards": ["a", "b", "c"]})
    shard = {
        **task("shard", params=["shard"], run_after=["list"]),
        "matrix": {"params": [{"name": "shard", "value": "$(tasks.list.results.shards[*])"}]},
    }
    name = runs.create(it_kube, namespace, pipeline_run("fan", [listing, shard], pool=node_pool))

    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)

    assert _status(done) == "True", runs.describe(done)
    shard_runs = [
        c for c in done["status"].get("childReferences") or [] if c.get("pipelineTaskName") == "shard"
    ]
    assert len(shard_runs) == 3, f"{len(shard_runs)} TaskRuns of shard, not one per element of the result: {shard_runs}"
    params = sorted(
        p["value"]
        for c in shard_runs
        for p in runs.get(it_kube, namespace, "TaskRun", c["name"])["spec"].get("params") or []
        if p["name"] == "shard"
    )
    assert params == ["a", "b", "c"]
