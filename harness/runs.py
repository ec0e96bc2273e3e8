"""Tekton runs as the harness reads them: conditions, the TaskRuns of a PipelineRun, their pods.

`succeeded()` and friends are pure functions over the JSON the API returns; the
`wait_for_*` functions poll with harness.waits.wait_for and say, at each poll,
what the run or pod is still doing.
"""

from __future__ import annotations

from typing import Any, Mapping

import kubernetes

from harness.kube import Kube, json_object, present
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]

GROUP, VERSION = "tekton.dev", "v1"
#: Tekton labels each TaskRun (and its pod) with its PipelineRun and its pipeline task.
PIPELINERUN_LABEL = "tekton.dev/pipelineRun"
PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"


def succeeded(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """succeeded(run) is the run's `Succeeded` condition, or None before Tekton sets one."""
    condition: Mapping[str, Any]
    for condition in (run.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Succeeded":
            return condition
    return None


def is_done(run: Mapping[str, Any]) -> bool:
    """is_done(run) says whether the run is terminal: its Succeeded condition is True or False."""
    condition = succeeded(run)
    return condition is not None and condition.get("status") in ("True", "False")


def describe(run: Mapping[str, Any]) -> str:
    """describe(run) == "Unknown/Running: Tasks Completed: 1 (Failed: 0) ..." for NotYet reasons and failures."""
    condition = succeeded(run)
    if condition is None:
        return "no Succeeded condition yet"
    return f"{condition.get('status')}/{condition.get('reason')}: {str(condition.get('message', ''))[:200]}"


def create(kube: Kube, namespace: str, manifest: Mapping[str, Any]) -> str:
    """create() creates a PipelineRun or TaskRun and returns its name (generateName is fine)."""
    plural = _plural(manifest["kind"])
    created = json_object(kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, plural, dict(manifest)))
    return str(created["metadata"]["name"])


def get(kube: Kube, namespace: str, kind: str, name: str) -> Obj:
    obj: Obj = json_object(kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, _plural(kind), name))
    return obj


def wait_for_done(kube: Kube, namespace: str, kind: str, name: str, *, timeouts: TimeoutConfig) -> Obj:
    """wait_for_done(kube, ns, 'PipelineRun', 'build-x') returns the run once it is terminal, whatever the outcome."""

    def done() -> Obj:
        run = get(kube, namespace, kind, name)
        if not is_done(run):
            raise NotYet(f"{kind} {namespace}/{name} is {describe(run)}")
        return run

    timeout = "pipelinerun_done" if kind == "PipelineRun" else "taskrun_done"
    return wait_for(done, what=f"{kind} {namespace}/{name} to finish", timeout=timeout, timeouts=timeouts)


def taskruns_of(kube: Kube, namespace: str, pipelinerun: str) -> dict[str, Obj]:
    """taskruns_of() maps each pipeline task's name to its TaskRun."""
    items = json_object(kube.custom.list_namespaced_custom_object(
        GROUP, VERSION, namespace, "taskruns", label_selector=f"{PIPELINERUN_LABEL}={pipelinerun}"
    ))["items"]
    return {item["metadata"]["labels"][PIPELINE_TASK_LABEL]: item for item in items}


def wait_for_taskrun(kube: Kube, namespace: str, pipelinerun: str, task: str, *, timeouts: TimeoutConfig) -> Obj:
    """wait_for_taskrun() returns the TaskRun of `task` once Tekton has created it and named its pod."""

    def created() -> Obj:
        run = taskruns_of(kube, namespace, pipelinerun).get(task)
        if run is None:
            raise NotYet(f"PipelineRun {namespace}/{pipelinerun} has no TaskRun for task {task!r} yet")
        if not (run.get("status") or {}).get("podName"):
            raise NotYet(f"TaskRun {run['metadata']['name']} has no pod yet ({describe(run)})")
        return run

    return wait_for(created, what=f"the TaskRun of task {task!r} in {namespace}/{pipelinerun}", timeout="pod_created", timeouts=timeouts)


def wait_for_pod_phase(
    kube: Kube, namespace: str, name: str, phases: tuple[str, ...], *, timeout: str, timeouts: TimeoutConfig
) -> kubernetes.client.V1Pod:
    """wait_for_pod_phase(kube, ns, 'x-pod', ('Running',), timeout='pod_running', timeouts=cfg) returns the pod."""

    def in_phase() -> kubernetes.client.V1Pod:
        try:
            pod = kube.core.read_namespaced_pod(name, namespace)
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                raise NotYet(f"pod {namespace}/{name} does not exist yet") from err
            raise
        status = present(pod.status)
        if status.phase not in phases:
            spec = present(pod.spec)
            where = f"on {spec.node_name}" if spec.node_name else "on no node"
            raise NotYet(f"pod {namespace}/{name} is {status.phase} {where}")
        return pod

    return wait_for(in_phase, what=f"pod {namespace}/{name} to be {' or '.join(phases)}", timeout=timeout, timeouts=timeouts)


def _plural(kind: str) -> str:
    plurals = {"PipelineRun": "pipelineruns", "TaskRun": "taskruns"}
    if kind not in plurals:
        raise ValueError(f"not a Tekton run kind: {kind!r}")
    return plurals[kind]
