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

from dataclasses import dataclass
from typing import Any, Callable

from reference_scheduler.core.partition import WorkspaceGroup, partition_into_groups
from reference_scheduler.core.pipeline_graph import build_pipeline_graph
from reference_scheduler.core.plan_readiness import resolved_pipeline_spec

Obj = dict[str, Any]


class PlanUnavailable(Exception):
    """The PipelineRun cannot be planned (yet, or at all); the message says why and what to fix."""


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
) -> Plan:
    """plan_pipeline_run() partitions the run's tasks into groups with exact peaks.

    `get_task(namespace, name)` reads a namespaced Task from the cache. Raises
    PlanUnavailable when Tekton has not resolved the pipeline yet (no
    `status.pipelineSpec`: the caller asks core.plan_readiness first), or when
    a referenced Task is missing.
    """
    meta = pipeline_run.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    spec = pipeline_run.get("spec") or {}
    pipeline_spec = resolved_pipeline_spec(pipeline_run)
    if pipeline_spec is None:
        raise PlanUnavailable(f"PipelineRun {namespace}/{meta.get('name')} has no resolved pipelineSpec yet")
    task_specs: dict[str, Obj] = {}
    for task in [*(pipeline_spec.get("tasks") or []), *(pipeline_spec.get("finally") or [])]:
        ref = task.get("taskRef") or {}
        if task.get("taskSpec") or not ref.get("name") or ref.get("apiVersion") or ref.get("resolver"):
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
        )
    except ValueError as err:  # PipelineGraphError and InvalidQuantity are ValueErrors
        raise PlanUnavailable(f"PipelineRun {namespace}/{meta.get('name')}: {err}") from err
    # Every PipelineRun workspace ties its tasks together (see docs/contract.md, "Groups").
    return Plan(partition_into_groups(graph))
