"""slim: objects cut down to what the contract's rules read, so the auditor's memory grows with objects, not with their size.

A busy cluster's pods carry env, volumes, managed fields and long statuses;
the rules (harness.monitor.invariants) read a pod's name, uid, Tekton labels,
whether it is being deleted (a room arithmetic says so), node, schedulerName, phase, resource requests and the claims it mounts, a
node's name, labels (volume node affinity) and allocatable, and a
PipelineRun's workspaces (with their claim names), pod templates and the
tasks' workspace use, plus what tells whether a group's release may be due
(release_truth.release_may_be_due): `spec.status`, the `Succeeded`
condition's status and reason, the names in `skippedTasks` and the tasks
`childReferences` names. An embedded taskSpec is kept as the workspaces its
steps name (one synthetic step), which is all expected_groups reads of it.

    slim_pod(pod) keeps metadata.{name,namespace,uid,resourceVersion,deletionTimestamp,labels: tekton's two},
    spec.{nodeName,schedulerName,containers,initContainers: name, restartPolicy, requests/limits of counted resources, resources, overhead,
          volumes: name and persistentVolumeClaim.claimName or ephemeral, of those that are claims},
    status.{phase, allocatedResources, resources.requests, conditions: PodResizePending's type and reason,
            containerStatuses, initContainerStatuses: name, allocatedResources, resources.requests}
    (what harness.quantities.pod_request reads of a bound pod's weight)
"""

from __future__ import annotations

from typing import Any, Mapping

from harness.monitor.expected_groups import CO_LOCATING_BINDINGS, pipeline_spec_of, referenced_workspaces
from harness.monitor.invariants import PIPELINE_RUN_LABEL, PIPELINE_TASK_LABEL
from harness.resource_names import is_counted

Obj = dict[str, Any]


def _pick(source: Mapping[str, Any] | None, *keys: str) -> Obj:
    """_pick() is the keys of source that are present and not None."""
    source = source or {}
    return {k: source[k] for k in keys if source.get(k) is not None}


def _counted(resources: Mapping[str, Any] | None) -> Obj:
    """_counted() keeps every resource the rules count (cpu, memory, ephemeral-storage, hugepages, extended), drops `pods` and the like."""
    return {k: v for k, v in (resources or {}).items() if v is not None and is_counted(k)}


def _resources(resources: Mapping[str, Any] | None) -> Obj:
    resources = resources or {}
    kept = {part: _counted(resources.get(part)) for part in ("requests", "limits")}
    return {part: values for part, values in kept.items() if values}


def _container(container: Mapping[str, Any]) -> Obj:
    slim = _pick(container, "name", "restartPolicy")
    resources = _resources(container.get("resources"))
    if resources:
        slim["resources"] = resources
    return slim


def slim_pod(pod: Mapping[str, Any]) -> Obj:
    """slim_pod() is the pod as the rules read it (see the module's docstring)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    labels = _pick(meta.get("labels"), PIPELINE_RUN_LABEL, PIPELINE_TASK_LABEL)
    slim_meta = _pick(meta, "name", "namespace", "uid", "resourceVersion", "deletionTimestamp")
    if labels:
        slim_meta["labels"] = labels
    slim_spec = _pick(spec, "nodeName", "schedulerName")
    for part in ("containers", "initContainers"):
        if spec.get(part):
            slim_spec[part] = [_container(c) for c in spec[part]]
    pod_level = _resources(spec.get("resources"))
    if pod_level:
        slim_spec["resources"] = pod_level
    overhead = _counted(spec.get("overhead"))
    if overhead:
        slim_spec["overhead"] = overhead
    claims = [_claim_volume(v) for v in spec.get("volumes") or [] if isinstance(v, Mapping)]
    if any(claims):
        slim_spec["volumes"] = [v for v in claims if v]
    return {"metadata": slim_meta, "spec": slim_spec, "status": _slim_status(pod.get("status") or {})}


def _slim_status(status: Mapping[str, Any]) -> Obj:
    """_slim_status() keeps the phase and what the kubelet says a bound pod holds (pod_request reads it)."""
    slim = _pick(status, "phase")
    allocated = _counted(status.get("allocatedResources"))
    if allocated:
        slim["allocatedResources"] = allocated
    if status.get("resources") is not None:
        slim["resources"] = _resources({"requests": (status.get("resources") or {}).get("requests")})
    resize = [_pick(c, "type", "reason") for c in status.get("conditions") or [] if c.get("type") == "PodResizePending"]
    if resize:
        slim["conditions"] = resize
    for part in ("containerStatuses", "initContainerStatuses"):
        if status.get(part):
            slim[part] = [_container_status(s) for s in status[part]]
    return slim


def _container_status(status: Mapping[str, Any]) -> Obj:
    slim = _pick(status, "name")
    allocated = _counted(status.get("allocatedResources"))
    if allocated:
        slim["allocatedResources"] = allocated
    resources = _resources({"requests": (status.get("resources") or {}).get("requests")})
    if resources:
        slim["resources"] = resources
    return slim


def _claim_volume(volume: Mapping[str, Any]) -> Obj:
    """_claim_volume() keeps a volume that is a claim: its name and claimName, or its name and an empty `ephemeral`; {} otherwise."""
    claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
    if claim:
        return {"name": volume.get("name"), "persistentVolumeClaim": {"claimName": claim}}
    if volume.get("ephemeral") is not None:
        return {"name": volume.get("name"), "ephemeral": {}}
    return {}


def slim_node(node: Mapping[str, Any]) -> Obj:
    """slim_node() is a node's name, its labels (a volume's node affinity reads them) and its allocatable of every counted resource."""
    metadata = _pick(node.get("metadata"), "name", "resourceVersion", "labels")
    return {
        "metadata": metadata,
        "status": {"allocatable": _counted((node.get("status") or {}).get("allocatable"))},
    }


def _pipeline_task(task: Mapping[str, Any]) -> Obj:
    """_pipeline_task() keeps a task's name and bindings; its embedded taskSpec becomes one step naming the workspaces it refers to."""
    slim = _pick(task, "name", "workspaces")
    task_spec = task.get("taskSpec")
    if task_spec:
        named = sorted(referenced_workspaces(task_spec))
        slim["taskSpec"] = {"steps": [{"name": "refs", "script": " ".join(f"$(workspaces.{w}.path)" for w in named)}]} if named else {}
    return slim


def _pipeline_spec(spec: Mapping[str, Any]) -> Obj:
    return {part: [_pipeline_task(t) for t in spec.get(part) or []] for part in ("tasks", "finally") if spec.get(part)}


def _pod_template(template: Mapping[str, Any] | None) -> Obj:
    return _pick(template, "schedulerName")


def slim_pipeline_run(pipeline_run: Mapping[str, Any]) -> Obj:
    """slim_pipeline_run() keeps what expected_groups, asks_for, the record rules, group_claims and release_may_be_due read of a PipelineRun."""
    meta, spec, status = pipeline_run.get("metadata") or {}, pipeline_run.get("spec") or {}, pipeline_run.get("status") or {}
    slim_spec: Obj = {
        "workspaces": [
            {"name": b.get("name"), **{kind: _pick(b.get(kind), "claimName") for kind in CO_LOCATING_BINDINGS if b.get(kind) is not None}}
            for b in spec.get("workspaces") or []
        ],
        "taskRunTemplate": {"podTemplate": _pod_template((spec.get("taskRunTemplate") or {}).get("podTemplate"))},
        "taskRunSpecs": [{"podTemplate": _pod_template(entry.get("podTemplate"))} for entry in spec.get("taskRunSpecs") or [] if isinstance(entry, Mapping)],
    }
    if spec.get("status"):
        slim_spec["status"] = spec["status"]
    slim_status: Obj = {
        "conditions": [_pick(c, "type", "status", "reason") for c in status.get("conditions") or [] if c.get("type") == "Succeeded"],
        "skippedTasks": [_pick(s, "name") for s in status.get("skippedTasks") or [] if s.get("name")],
        "childReferences": [_pick(c, "pipelineTaskName") for c in status.get("childReferences") or [] if c.get("pipelineTaskName")],
    }
    slim_status = {part: items for part, items in slim_status.items() if items}
    resolved = (status.get("pipelineSpec") or None)
    if resolved:
        slim_status["pipelineSpec"] = _pipeline_spec(resolved)
    elif pipeline_spec_of(pipeline_run) is not None:
        slim_spec["pipelineSpec"] = _pipeline_spec(spec["pipelineSpec"])
    return {
        "metadata": _pick(meta, "name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "resourceVersion"),
        "spec": slim_spec,
        "status": slim_status,
    }
