"""Tekton's affinity assistant on the local cluster: a StatefulSet pod that runs until Tekton deletes it.

With coschedule=workspaces Tekton creates one affinity-assistant StatefulSet per
PVC workspace and gives every task pod that uses the workspace a required pod
affinity to it. KWOK once finished the assistant like a 1 s task; the
StatefulSet controller then replaced it, possibly on another node, and the
workspace's later tasks followed the replacement (the coschedule baselines
split groups by accident). The policy from simulation.affinity_assistant_policy()
keeps it Running. This test fails if the assistant ends, is replaced or moves
while a held task runs, or if the next task does not follow it.
"""

from __future__ import annotations

from typing import Iterator

import kubernetes
import pytest

from harness import runs
from harness.cluster import simulation, tekton
from harness.cluster.node_pools import NodePool
from harness.cluster.volumes import make_bound_pvc
from harness.kube import Kube
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, hold_for, wait_for
from it_pipelines import pipeline_run, task

pytestmark = pytest.mark.integration

#: The label whose value is the assistant's name (the TaskRun's pipeline.tekton.dev/affinity-assistant).
INSTANCE_LABEL = "app.kubernetes.io/instance"


def _set_coschedule(kube: Kube, mode: str) -> None:
    kube.core.patch_namespaced_config_map("feature-flags", tekton.NAMESPACE, {"data": {"coschedule": mode}})


@pytest.fixture
def coschedule_workspaces(it_kube: Kube, it_timeouts: TimeoutConfig) -> Iterator[None]:
    """coschedule_workspaces sets Tekton's coschedule flag to `workspaces` for one test, then puts back what it found.

    Each switch is awaited with a probe PipelineRun (tekton.wait_coschedule): Tekton
    decides a run's assistants at its first reconcile, from the flags it has seen.
    The integration session holds the cluster lock, so no other suite sees the switch.
    """
    found = (it_kube.core.read_namespaced_config_map("feature-flags", tekton.NAMESPACE).data or {}).get("coschedule", "disabled")
    _set_coschedule(it_kube, "workspaces")
    try:
        tekton.wait_coschedule(it_kube, "workspaces", timeouts=it_timeouts)
        yield
    finally:
        _set_coschedule(it_kube, found)
        tekton.wait_coschedule(it_kube, found, timeouts=it_timeouts)


def _assistant_pod(kube: Kube, namespace: str, instance: str) -> kubernetes.client.V1Pod | None:
    pods = kube.core.list_namespaced_pod(namespace, label_selector=f"{simulation.AFFINITY_ASSISTANT_LABEL}={simulation.AFFINITY_ASSISTANT_COMPONENT},{INSTANCE_LABEL}={instance}").items
    if len(pods) > 1:
        raise AssertionError(f"{len(pods)} pods of affinity assistant {instance}: {[p.metadata.name for p in pods]}")
    return pods[0] if pods else None


def test_the_affinity_assistant_runs_on_one_node_through_a_held_task(
    it_kube: Kube, namespace: str, node_pool: NodePool, coschedule_workspaces: None, it_timeouts: TimeoutConfig
) -> None:
    claim = make_bound_pvc(it_kube, namespace, "source", timeouts=it_timeouts)
    manifest = pipeline_run(
        "assisted",
        [task("hold", workspace="source", hold=True), task("after", workspace="source", run_after=["hold"])],
        pool=node_pool,
        claims={"source": claim},
    )
    name = runs.create(it_kube, namespace, manifest)
    held_taskrun = runs.wait_for_taskrun(it_kube, namespace, name, "hold", timeouts=it_timeouts)
    instance = (held_taskrun["metadata"].get("annotations") or {}).get(tekton.AFFINITY_ASSISTANT_ANNOTATION)
    assert instance, f"TaskRun {held_taskrun['metadata']['name']} has no {tekton.AFFINITY_ASSISTANT_ANNOTATION}: Tekton gave it no assistant"
    held_pod = held_taskrun["status"]["podName"]
    runs.wait_for_pod_phase(it_kube, namespace, held_pod, ("Running",), timeout="pod_running", timeouts=it_timeouts)

    def assistant_running() -> kubernetes.client.V1Pod:
        pod = _assistant_pod(it_kube, namespace, instance)
        if pod is None or pod.status.phase != "Running":
            raise NotYet(f"affinity assistant {instance} is {'absent' if pod is None else pod.status.phase}")
        return pod

    assistant = wait_for(assistant_running, what=f"affinity assistant {instance} to run", timeout="pod_running", timeouts=it_timeouts)
    uid, node = assistant.metadata.uid, assistant.spec.node_name
    assert (assistant.metadata.annotations or {}).get(simulation.HOLD) == "true", "the policy did not mark the assistant"
    assert it_kube.core.read_namespaced_pod(held_pod, namespace).spec.node_name == node

    def assistant_and_task_run_on() -> None:
        pod = _assistant_pod(it_kube, namespace, instance)
        if pod is None or pod.metadata.uid != uid:
            raise NotYet(f"affinity assistant {instance} was replaced (now {pod and pod.metadata.name} {pod and pod.metadata.uid}, was {uid})")
        if pod.status.phase != "Running" or pod.metadata.deletion_timestamp is not None:
            raise NotYet(f"affinity assistant {pod.metadata.name} is {pod.status.phase}, deleting: {pod.metadata.deletion_timestamp is not None}")
        current = runs.get(it_kube, namespace, "TaskRun", held_taskrun["metadata"]["name"])
        if runs.is_done(current):
            raise NotYet(f"the held TaskRun ended: {runs.describe(current)}")

    # task_stays_running (3 s) is over twice what the assistant used to live on KWOK (0.2 s start + 1 s).
    hold_for(assistant_and_task_run_on, what=f"affinity assistant {instance} beside held task {held_pod}", duration="task_stays_running", timeouts=it_timeouts)
    it_kube.core.patch_namespaced_pod(held_pod, namespace, {"metadata": {"annotations": {simulation.RELEASE: "true"}}})

    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)
    assert (runs.succeeded(done) or {}).get("status") == "True", runs.describe(done)
    for task_name, taskrun in runs.taskruns_of(it_kube, namespace, name).items():
        pod = it_kube.core.read_namespaced_pod(taskrun["status"]["podName"], namespace)
        assert pod.spec.node_name == node, f"{task_name} ran on {pod.spec.node_name}, its affinity assistant on {node}"
    # The same assistant was there for the whole run: never replaced before Tekton cleaned it up.
    last = _assistant_pod(it_kube, namespace, instance)
    assert last is None or last.metadata.uid == uid, f"affinity assistant {instance} was replaced after the held task"

    def assistant_gone() -> None:
        pod = _assistant_pod(it_kube, namespace, instance)
        if pod is not None:
            raise NotYet(f"affinity assistant {pod.metadata.name} is still {pod.status.phase}")

    # Tekton deletes the StatefulSet when the run is done; KWOK removes the pod (rescon-pod-delete).
    wait_for(assistant_gone, what=f"affinity assistant {instance} to be deleted with its run", timeout="pod_gone", timeouts=it_timeouts)
