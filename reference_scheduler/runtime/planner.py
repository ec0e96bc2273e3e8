"""Planner: from a PipelineRun in the cache to its workspace groups and their peaks.

Records are created lazily, on the first pod of a PipelineRun that reaches
the scheduler (see docs/reference-scheduler.md for why): by then Tekton has
resolved the pipeline into `status.pipelineSpec`, so the plan reads what
Tekton will run rather than re-resolving remote references itself. Only
`status.pipelineSpec` is read: `spec.pipelineSpec` is not parameter-substituted,
and the reference does not substitute parameters itself (docs/contract.md
section 6), so a run without it is not planned yet (core/plan_readiness.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from reference_scheduler.core.partition import WorkspaceGroup, partition_into_groups
from reference_scheduler.core.pipeline_graph import build_pipeline_graph
from reference_scheduler.core.plan_readiness import RESOLVED_TASK_NOT_ANSWERED, resolved_pipeline_spec
from reference_scheduler.core.resolved_tasks import ResolutionFailed, requests_owned_by, resolved_task_spec
from reference_scheduler.core.tekton_config import TektonFeatureFlags, overhead_of, runtime_class_name
from reference_scheduler.core.workspace_bindings import co_locating_workspaces

Obj = dict[str, Any]


class PlanUnavailable(Exception):
    """The PipelineRun cannot be planned (yet, or at all); the message says why and what to fix."""


class PlanNotReady(PlanUnavailable):
    """The PipelineRun can be planned once something Tekton has made reaches the cache (a resolved Task's answer): wait, do not schedule plainly."""


@dataclass(frozen=True)
class PodShaping:
    """PodShaping is what outside the PipelineRun changes its pods: Tekton's feature flags and the RuntimeClasses.

    `runtime_class(name)` reads a RuntimeClass from the cache (None if unknown).
    """

    flags: TektonFeatureFlags = TektonFeatureFlags()
    runtime_class: Callable[[str], Obj | None] = lambda name: None
    #: config-defaults' default-container-resource-requirements, by entry (core.container_defaults).
    container_defaults: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    groups: tuple[WorkspaceGroup, ...]

    def group_of_task(self, task: str) -> WorkspaceGroup | None:
        for group in self.groups:
            if task in group.tasks:
                return group
        return None


def plan_pipeline_run(
    pipeline_run: Obj,
    *,
    get_task: Callable[[str, str], Obj | None],
    limit_range: Obj | None,
    shaping: PodShaping = PodShaping(),
    resolution_requests: Callable[[str, str], list[Obj]] = lambda namespace, run_uid: [],
) -> Plan:
    """plan_pipeline_run() partitions the run's tasks into groups with exact peaks.

    `get_task(namespace, name)` reads a namespaced Task from the cache. Raises
    PlanUnavailable when Tekton has not resolved the pipeline yet (no
    `status.pipelineSpec`: the caller asks core.plan_readiness first), or when
    a referenced Task is missing. `shaping` carries Tekton's feature flags and the
    RuntimeClasses (section 6.1, steps 7 and 8): a task whose pod template names a
    RuntimeClass with `overhead.podFixed` predicts that overhead once per pod; a
    RuntimeClass not in the cache adds none (the API server refuses a pod that
    names a missing one, so no such pod will need room).

    `resolution_requests(namespace, run uid)` lists the run's ResolutionRequests:
    a task whose `taskRef` names a resolver is planned from its answer
    (core.resolved_tasks). Raises PlanNotReady while an answer is not in the
    cache yet, PlanUnavailable when the resolution failed.
    """
    meta = pipeline_run.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    spec = pipeline_run.get("spec") or {}
    pipeline_spec = resolved_pipeline_spec(pipeline_run)
    if pipeline_spec is None:
        raise PlanUnavailable(f"PipelineRun {namespace}/{meta.get('name')} has no resolved pipelineSpec yet")
    task_specs: dict[str, Obj] = {}
    overheads: dict[str, dict[str, Any]] = {}
    for task in [*(pipeline_spec.get("tasks") or []), *(pipeline_spec.get("finally") or [])]:
        runtime_class = runtime_class_name(spec, str(task.get("name")))
        overhead = overhead_of(shaping.runtime_class(runtime_class)) if runtime_class else None
        if overhead:
            overheads[str(task.get("name"))] = overhead
        ref = task.get("taskRef") or {}
        if not task.get("taskSpec") and ref.get("resolver") and not ref.get("apiVersion"):
            task_specs[str(task.get("name"))] = _resolved_spec(pipeline_run, str(task.get("name")), ref, resolution_requests)
            continue
        if task.get("taskSpec") or not ref.get("name") or ref.get("apiVersion"):
            continue
        found = get_task(namespace, ref["name"])
        if found is None:
            raise PlanUnavailable(
                f"PipelineRun {namespace}/{meta.get('name')}: task {task.get('name')!r} refers to Task {ref['name']!r}, "
                f"which does not exist in namespace {namespace}: create it or fix the taskRef"
            )
        task_specs[str(task.get("name"))] = found.get("spec") or {}
    try:
        graph = build_pipeline_graph(
            pipeline_spec,
            task_specs=task_specs,
            task_run_specs=spec.get("taskRunSpecs") or (),
            limit_range=limit_range,
            params=spec.get("params") or (),
            sidecar_logs_results=shaping.flags.sidecar_logs_results,
            native_sidecars=shaping.flags.native_sidecars,
            overheads=overheads,
            container_defaults=shaping.container_defaults,
        )
    except ValueError as err:  # PipelineGraphError and InvalidQuantity are ValueErrors
        raise PlanUnavailable(f"PipelineRun {namespace}/{meta.get('name')}: {err}") from err
    # Only workspaces on a volume attached to one node tie their tasks together (docs/contract.md section 4):
    # tasks sharing an emptyDir, ConfigMap, Secret, projected or CSI workspace are plain pods.
    return Plan(partition_into_groups(graph, co_locating=co_locating_workspaces(spec)))


def _resolved_spec(pipeline_run: Obj, task: str, ref: Obj, resolution_requests: Callable[[str, str], list[Obj]]) -> Obj:
    """_resolved_spec() is a resolver-fetched task's spec from the run's ResolutionRequests (core.resolved_tasks)."""
    meta = pipeline_run.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), meta.get("name")
    requests = requests_owned_by(resolution_requests(namespace, str(meta.get("uid") or "")), str(meta.get("uid") or ""))
    try:
        spec = resolved_task_spec(ref, requests)
    except ResolutionFailed as err:
        raise PlanUnavailable(f"PipelineRun {namespace}/{name}: task {task!r}: {err}") from err
    if spec is None:
        raise PlanNotReady(RESOLVED_TASK_NOT_ANSWERED.format(namespace=namespace, name=name, task=task, resolver=ref.get("resolver")))
    return spec
