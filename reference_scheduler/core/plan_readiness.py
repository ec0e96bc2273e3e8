"""Plan readiness: can a PipelineRun's groups be computed now, later, or never?

Tekton can create a run's first pod before it writes the run's
``status.pipelineSpec``: both come from one reconcile, and the pod informer
and the PipelineRun informer deliver them in either order (docs/contract.md
section 2, "The first pod before the plan"). A pod that arrives in that
window must be kept Pending, not bound as a plain pod, and tried again when
the plan appears. The reference plans only from ``status.pipelineSpec``,
which Tekton writes after parameter substitution (section 6); it does not
substitute parameters in ``spec.pipelineSpec`` itself, so it never plans
from that.

Three answers:

* ``READY``: ``status.pipelineSpec`` is there; plan it (planning may still
  fail for good: a missing Task, an invalid quantity).
* ``NOT_YET``: the run is not in the cache yet, or Tekton has not written
  ``status.pipelineSpec`` yet (it is new, or ``spec.status`` is
  ``PipelineRunPending``): park the pod until the run changes.
* ``NEVER``: the run finished (its Succeeded condition is True or False)
  without ``status.pipelineSpec`` (Tekton failed it before resolving, or it
  was cancelled while pending): no plan will come, the pod is scheduled as a
  plain pod.

Example: ``plan_readiness(None) is PlanReadiness.NOT_YET``; a run whose
``status`` holds only ``conditions: [{type: Succeeded, status: Unknown,
reason: PipelineRunPending}]`` is ``NOT_YET``; the same run with
``status.pipelineSpec: {tasks: [...]}`` is ``READY``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Mapping, TypeAlias

from reference_scheduler.core.release import succeeded_condition

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw PipelineRun as the informer holds it."""

#: The PodScheduled=False message of a pod parked for its PipelineRun's plan; format it with ``why``.
WAITING_FOR_PLAN_MESSAGE = "waiting for the PipelineRun's plan: {why}"
#: ``why`` when the PipelineRun is not in the scheduler's cache (the pod arrived first).
RUN_NOT_SEEN_YET = "PipelineRun {namespace}/{name} is not in the scheduler's cache yet"
#: ``why`` when Tekton has not resolved the run yet (new, or spec.status PipelineRunPending).
SPEC_NOT_RESOLVED_YET = "PipelineRun {namespace}/{name} has no status.pipelineSpec yet (Tekton has not resolved it)"
#: ``why`` when a task's Task comes through a resolver whose answer is not in the scheduler's cache yet.
RESOLVED_TASK_NOT_ANSWERED = (
    "PipelineRun {namespace}/{name}: task {task!r} waits for the {resolver} resolver's answer "
    "(its ResolutionRequest is not answered, or not in the scheduler's cache, yet)"
)


class PlanReadiness(StrEnum):
    """PlanReadiness is whether a run's groups can be computed: now, after a later event, or never.

    Example: ``PlanReadiness.NOT_YET == "NotYet"``.
    """

    READY = "Ready"
    NOT_YET = "NotYet"
    NEVER = "Never"


def resolved_pipeline_spec(pipeline_run: Json) -> Mapping[str, Any] | None:
    """resolved_pipeline_spec() is the run's ``status.pipelineSpec``, or None while Tekton has not written it.

    ``spec.pipelineSpec`` is never a stand-in: it is not parameter-substituted.
    """
    status = pipeline_run.get("status")
    found = status.get("pipelineSpec") if isinstance(status, Mapping) else None
    return found if isinstance(found, Mapping) and found else None


def plan_readiness(pipeline_run: Json | None) -> PlanReadiness:
    """plan_readiness() says whether the run's groups can be computed now (see the module docstring)."""
    if pipeline_run is None:
        return PlanReadiness.NOT_YET
    if resolved_pipeline_spec(pipeline_run) is not None:
        return PlanReadiness.READY
    condition = succeeded_condition(pipeline_run)
    finished = condition is not None and condition.get("status") in ("True", "False")
    return PlanReadiness.NEVER if finished else PlanReadiness.NOT_YET


def waiting_for_plan_message(namespace: str, name: str, pipeline_run: Json | None) -> str:
    """waiting_for_plan_message() is the pod's PodScheduled=False message while its run is NOT_YET.

    Example: ``waiting_for_plan_message("ci", "build-x", None) ==
    "waiting for the PipelineRun's plan: PipelineRun ci/build-x is not in the scheduler's cache yet"``.
    """
    why = RUN_NOT_SEEN_YET if pipeline_run is None else SPEC_NOT_RESOLVED_YET
    return WAITING_FOR_PLAN_MESSAGE.format(why=why.format(namespace=namespace, name=name))
