"""Plan readiness: a PipelineRun's groups can be computed now, after a later event, or never (core/plan_readiness.py)."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.plan_readiness import (
    RUN_NOT_SEEN_YET,
    SPEC_NOT_RESOLVED_YET,
    WAITING_FOR_PLAN_MESSAGE,
    PlanReadiness,
    plan_readiness,
    waiting_for_plan_message,
)

pytestmark = pytest.mark.unit

TASKS = {"tasks": [{"name": "clone", "taskSpec": {"steps": [{"name": "s", "image": "busybox"}]}}]}


def run(*, resolved: bool = False, embedded: bool = True, succeeded: str | None = None, reason: str = "Running") -> dict[str, Any]:
    status: dict[str, Any] = {}
    if resolved:
        status["pipelineSpec"] = TASKS
    if succeeded is not None:
        status["conditions"] = [{"type": "Succeeded", "status": succeeded, "reason": reason}]
    return {"metadata": {"namespace": "ci", "name": "build-x"}, "spec": {"pipelineSpec": TASKS} if embedded else {}, "status": status}


@pytest.mark.parametrize(
    ("pipeline_run", "readiness"),
    [
        pytest.param(None, PlanReadiness.NOT_YET, id="run-not-in-the-cache"),
        pytest.param(run(), PlanReadiness.NOT_YET, id="new-run-embedded-spec-only"),
        pytest.param(run(succeeded="Unknown", reason="PipelineRunPending"), PlanReadiness.NOT_YET, id="pending-run"),
        pytest.param(run(succeeded="Unknown", resolved=True), PlanReadiness.READY, id="resolved"),
        pytest.param(run(embedded=False, resolved=True), PlanReadiness.READY, id="resolved-from-a-pipelineref"),
        pytest.param(run(succeeded="True", resolved=True), PlanReadiness.READY, id="finished-with-a-plan"),
        pytest.param(run(succeeded="False", reason="CouldntGetPipeline"), PlanReadiness.NEVER, id="failed-before-resolving"),
        pytest.param(run(succeeded="False", reason="Cancelled"), PlanReadiness.NEVER, id="cancelled-while-pending"),
        pytest.param({**run(), "status": {"pipelineSpec": {}}}, PlanReadiness.NOT_YET, id="empty-resolved-spec"),
    ],
)
def test_plan_readiness(pipeline_run: dict[str, Any] | None, readiness: PlanReadiness) -> None:
    assert plan_readiness(pipeline_run) is readiness


def test_the_waiting_message_says_why() -> None:
    assert waiting_for_plan_message("ci", "build-x", None) == WAITING_FOR_PLAN_MESSAGE.format(
        why=RUN_NOT_SEEN_YET.format(namespace="ci", name="build-x")
    )
    assert waiting_for_plan_message("ci", "build-x", run()) == (
        "waiting for the PipelineRun's plan: PipelineRun ci/build-x has no status.pipelineSpec yet (Tekton has not resolved it)"
    )
    assert SPEC_NOT_RESOLVED_YET.format(namespace="ci", name="build-x") in waiting_for_plan_message("ci", "build-x", run())
