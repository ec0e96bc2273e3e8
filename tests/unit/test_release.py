"""Release decisions from Tekton v1 PipelineRun and TaskRun JSON."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from reference_scheduler.core.release import (
    ReleaseDecision,
    ReleaseReason,
    TaskRunProgress,
    child_run_kinds,
    parse_go_duration,
    release_decision,
    retries_left,
    task_run_names,
    task_run_progress,
)

pytestmark = pytest.mark.unit

START = "2026-01-01T10:00:00Z"
START_TIME = datetime(2026, 1, 1, 10, 0, tzinfo=timezone.utc)


def condition(status: str, reason: str = "") -> list[dict[str, str]]:
    return [{"type": "Succeeded", "status": status, "reason": reason}]


def task_run(
    status: str | None = None,
    reason: str = "",
    *,
    retries: int = 0,
    attempts: int = 0,
    cancelled: bool = False,
) -> dict[str, Any]:
    """A TaskRun; ``attempts`` archived failures in status.retriesStatus."""
    tr_status: dict[str, Any] = {}
    if status is not None:
        tr_status["conditions"] = condition(status, reason)
    if attempts:
        tr_status["retriesStatus"] = [{"conditions": condition("False", "Failed")} for _ in range(attempts)]
    spec: dict[str, Any] = {"taskRef": {"name": "t"}}
    if retries:
        spec["retries"] = retries
    if cancelled:
        spec["status"] = "TaskRunCancelled"
    return {"metadata": {"name": "tr"}, "spec": spec, "status": tr_status}


SUCCEEDED = task_run("True", "Succeeded")
RUNNING = task_run("Unknown", "Running")
FAILED_FINAL = task_run("False", "Failed")


def pipeline_run(
    children: dict[str, str | list[str]] | None = None,
    *,
    status: str | None = None,
    reason: str = "",
    spec_status: str | None = None,
    skipped: tuple[str, ...] = (),
    dag: tuple[str, ...] | None = None,
    finally_tasks: tuple[str, ...] = (),
    timeouts: dict[str, str] | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    """A PipelineRun; ``children`` maps pipeline task -> TaskRun name(s)."""
    refs = []
    for task, names in (children or {}).items():
        for name in [names] if isinstance(names, str) else names:
            refs.append({"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "name": name, "pipelineTaskName": task})
    pr_status: dict[str, Any] = {"startTime": START, "childReferences": refs}
    if status is not None:
        pr_status["conditions"] = condition(status, reason)
    if skipped:
        pr_status["skippedTasks"] = [{"name": name, "reason": "When Expressions evaluated to false"} for name in skipped]
    if dag is not None:
        pr_status["pipelineSpec"] = {
            "tasks": [{"name": name} for name in dag],
            "finally": [{"name": name} for name in finally_tasks],
        }
    spec: dict[str, Any] = {"pipelineRef": {"name": "p"}}
    if spec_status:
        spec["status"] = spec_status
    if timeouts:
        spec["timeouts"] = timeouts
    metadata: dict[str, Any] = {"name": "run-1", "namespace": "ci"}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T11:00:00Z"
    return {"metadata": metadata, "spec": spec, "status": pr_status}


RUNNING_PR = {"status": "Unknown", "reason": "Running"}
GROUP = ("build", "test")
BOTH = {"build": "run-1-build", "test": "run-1-test"}


# --- TaskRun progress ------------------------------------------------------


@pytest.mark.parametrize(
    ("tr", "progress"),
    [
        pytest.param(task_run(), TaskRunProgress.RUNNING, id="no-condition-yet"),
        pytest.param(RUNNING, TaskRunProgress.RUNNING, id="running"),
        pytest.param(SUCCEEDED, TaskRunProgress.SUCCEEDED, id="succeeded"),
        pytest.param(FAILED_FINAL, TaskRunProgress.FAILED, id="failed-no-retries"),
        pytest.param(task_run("False", "Failed", retries=2), TaskRunProgress.RETRY_PENDING, id="failed-two-retries-left"),
        pytest.param(
            task_run("False", "Failed", retries=2, attempts=1), TaskRunProgress.RETRY_PENDING, id="failed-one-retry-left"
        ),
        pytest.param(
            task_run("False", "Failed", retries=2, attempts=2), TaskRunProgress.FAILED, id="failed-retries-exhausted"
        ),
        pytest.param(
            task_run("Unknown", "ToBeRetried", retries=2, attempts=1),
            TaskRunProgress.RETRY_PENDING,
            id="to-be-retried",
        ),
        pytest.param(
            task_run("Unknown", "Running", retries=2, attempts=1), TaskRunProgress.RUNNING, id="retry-attempt-running"
        ),
        pytest.param(
            task_run("True", "Succeeded", retries=2, attempts=1), TaskRunProgress.SUCCEEDED, id="retry-succeeded"
        ),
        pytest.param(
            task_run("False", "TaskRunCancelled", retries=2, cancelled=True),
            TaskRunProgress.FAILED,
            id="cancelled-never-retried",
        ),
        pytest.param(
            task_run("False", "TaskRunCancelled", retries=2), TaskRunProgress.FAILED, id="cancelled-reason-only"
        ),
        pytest.param(
            task_run("False", "TaskRunTimeout", retries=1), TaskRunProgress.RETRY_PENDING, id="timeout-is-retried"
        ),
    ],
)
def test_task_run_progress(tr: dict[str, Any], progress: TaskRunProgress) -> None:
    assert task_run_progress(tr) is progress


def test_retries_left() -> None:
    assert retries_left(task_run(retries=3, attempts=1)) == 2
    assert retries_left(task_run(retries=1, attempts=3)) == 0
    assert retries_left(task_run()) == 0


def test_task_run_names_handles_matrix() -> None:
    pr = pipeline_run({"build": ["b-0", "b-1"], "test": "t"})
    assert task_run_names(pr) == {"build": ["b-0", "b-1"], "test": ["t"]}


@pytest.mark.parametrize(
    ("text", "duration"),
    [
        pytest.param("1h0m0s", timedelta(hours=1), id="metav1-duration"),
        pytest.param("1h30m", timedelta(minutes=90), id="hours-minutes"),
        pytest.param("1.5h", timedelta(minutes=90), id="fraction"),
        pytest.param("500ms", timedelta(milliseconds=500), id="millis"),
        pytest.param("0s", timedelta(0), id="zero-seconds"),
        pytest.param("0", timedelta(0), id="bare-zero"),
        pytest.param("-5m", timedelta(minutes=-5), id="negative"),
        pytest.param("", None, id="empty"),
        pytest.param("5", None, id="no-unit"),
        pytest.param("1h 5m", None, id="space"),
        pytest.param("soon", None, id="words"),
    ],
)
def test_parse_go_duration(text: str, duration: timedelta | None) -> None:
    assert parse_go_duration(text) == duration


# --- decisions -----------------------------------------------------------------


def decide(pr: dict[str, Any] | None, task_runs: dict[str, dict[str, Any]], **kwargs: Any) -> ReleaseDecision:
    return release_decision(GROUP, pr, task_runs, **kwargs)


@pytest.mark.parametrize(
    ("pr", "task_runs", "release", "reason"),
    [
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": SUCCEEDED, "run-1-test": SUCCEEDED},
            True,
            ReleaseReason.TASKS_DONE,
            id="all-tasks-succeeded",
        ),
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": SUCCEEDED, "run-1-test": RUNNING},
            False,
            ReleaseReason.TASK_RUNNING,
            id="one-task-running",
        ),
        pytest.param(
            pipeline_run({"build": "run-1-build"}, **RUNNING_PR),
            {"run-1-build": SUCCEEDED},
            False,
            ReleaseReason.TASK_NOT_STARTED,
            id="one-task-not-started",
        ),
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": SUCCEEDED},
            False,
            ReleaseReason.TASK_RUN_NOT_FOUND,
            id="taskrun-not-in-cache",
        ),
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": SUCCEEDED, "run-1-test": task_run("False", "Failed", retries=2, attempts=1)},
            False,
            ReleaseReason.TASK_RETRY_PENDING,
            id="retry-gap-failed-with-retries-left",
        ),
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": SUCCEEDED, "run-1-test": task_run("Unknown", "ToBeRetried", retries=2, attempts=1)},
            False,
            ReleaseReason.TASK_RETRY_PENDING,
            id="retry-gap-to-be-retried",
        ),
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": SUCCEEDED, "run-1-test": task_run("False", "Failed", retries=2, attempts=2)},
            True,
            ReleaseReason.TASKS_DONE,
            id="retries-exhausted",
        ),
        pytest.param(
            pipeline_run(BOTH, **RUNNING_PR),
            {"run-1-build": FAILED_FINAL, "run-1-test": FAILED_FINAL},
            True,
            ReleaseReason.TASKS_DONE,
            id="all-tasks-failed",
        ),
        pytest.param(
            pipeline_run({"build": "run-1-build"}, skipped=("test",), **RUNNING_PR),
            {"run-1-build": SUCCEEDED},
            True,
            ReleaseReason.TASKS_DONE,
            id="skipped-task-is-done",
        ),
        pytest.param(
            pipeline_run({"build": ["b-0", "b-1"], "test": "t"}, **RUNNING_PR),
            {"b-0": SUCCEEDED, "b-1": RUNNING, "t": SUCCEEDED},
            False,
            ReleaseReason.TASK_RUNNING,
            id="matrix-waits-for-every-taskrun",
        ),
        pytest.param(
            pipeline_run({"build": ["b-0", "b-1"], "test": "t"}, **RUNNING_PR),
            {"b-0": SUCCEEDED, "b-1": FAILED_FINAL, "t": SUCCEEDED},
            True,
            ReleaseReason.TASKS_DONE,
            id="matrix-all-done",
        ),
        pytest.param(None, {}, True, ReleaseReason.PIPELINE_RUN_DELETED, id="pipelinerun-gone"),
        pytest.param(
            pipeline_run(BOTH, deleting=True, **RUNNING_PR),
            {"run-1-test": RUNNING},
            True,
            ReleaseReason.PIPELINE_RUN_DELETED,
            id="pipelinerun-being-deleted",
        ),
        pytest.param(
            pipeline_run(BOTH, status="True", reason="Succeeded"),
            {},
            True,
            ReleaseReason.PIPELINE_RUN_DONE,
            id="pipelinerun-succeeded",
        ),
        pytest.param(
            pipeline_run(BOTH, status="False", reason="Failed"),
            {"run-1-test": task_run("False", "Failed", retries=2)},
            True,
            ReleaseReason.PIPELINE_RUN_DONE,
            id="pipelinerun-failed-overrides-retries",
        ),
        pytest.param(
            pipeline_run(BOTH, status="False", reason="Cancelled"),
            {},
            True,
            ReleaseReason.PIPELINE_RUN_CANCELLED,
            id="pipelinerun-cancelled-condition",
        ),
        pytest.param(
            pipeline_run(BOTH, status="False", reason="PipelineRunTimeout"),
            {},
            True,
            ReleaseReason.PIPELINE_RUN_TIMED_OUT,
            id="pipelinerun-timed-out-condition",
        ),
        pytest.param(
            pipeline_run(BOTH, spec_status="Cancelled", **RUNNING_PR),
            {"run-1-test": RUNNING},
            True,
            ReleaseReason.PIPELINE_RUN_CANCELLED,
            id="spec-status-cancelled",
        ),
        pytest.param(
            pipeline_run({}, spec_status="PipelineRunPending", status="Unknown", reason="PipelineRunPending"),
            {},
            False,
            ReleaseReason.TASK_NOT_STARTED,
            id="pending-pipelinerun-holds",
        ),
    ],
)
def test_release_decision(
    pr: dict[str, Any] | None, task_runs: dict[str, dict[str, Any]], release: bool, reason: ReleaseReason
) -> None:
    decision = decide(pr, task_runs)
    assert (decision.release, decision.reason) == (release, reason)
    assert decision.message


def test_retry_gap_message_names_the_task_and_retries() -> None:
    pr = pipeline_run(BOTH, **RUNNING_PR)
    runs = {"run-1-build": SUCCEEDED, "run-1-test": task_run("False", "Failed", retries=2, attempts=1)}
    assert decide(pr, runs) == ReleaseDecision(
        False, ReleaseReason.TASK_RETRY_PENDING, "task test: TaskRun run-1-test failed with 1 retries left"
    )


def test_tasks_outside_the_group_do_not_matter() -> None:
    pr = pipeline_run({**BOTH, "lint": "run-1-lint"}, **RUNNING_PR)
    runs = {"run-1-build": SUCCEEDED, "run-1-test": SUCCEEDED, "run-1-lint": RUNNING}
    assert decide(pr, runs).release


def test_empty_group_is_vacuously_done() -> None:
    assert release_decision((), pipeline_run(**RUNNING_PR), {}).release


def test_reasons_are_plain_strings() -> None:
    decision = decide(None, {})
    assert decision.reason == "PipelineRunDeleted"


# --- graceful stops ------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec_status", "children", "task_runs", "dag", "finally_tasks", "release", "reason"),
    [
        pytest.param(
            "CancelledRunFinally",
            {"build": "run-1-build"},
            {"run-1-build": RUNNING},
            GROUP,
            (),
            True,
            ReleaseReason.PIPELINE_RUN_CANCELLED,
            id="cancelled-run-finally-dag-only-group",
        ),
        pytest.param(
            "CancelledRunFinally",
            {"build": "run-1-build"},
            {"run-1-build": RUNNING},
            ("build",),
            ("test",),
            False,
            ReleaseReason.TASK_NOT_STARTED,
            id="cancelled-run-finally-waits-for-a-finally-task",
        ),
        pytest.param(
            "CancelledRunFinally",
            {"build": "run-1-build"},
            {"run-1-build": RUNNING},
            None,
            (),
            False,
            ReleaseReason.TASK_RUNNING,
            id="cancelled-run-finally-without-resolved-spec-waits",
        ),
        pytest.param(
            "StoppedRunFinally",
            {"build": "run-1-build"},
            {"run-1-build": SUCCEEDED},
            GROUP,
            (),
            True,
            ReleaseReason.PIPELINE_RUN_STOPPED,
            id="stopped-run-finally-unstarted-dag-task-never-starts",
        ),
        pytest.param(
            "StoppedRunFinally",
            {"build": "run-1-build"},
            {"run-1-build": task_run("False", "Failed", retries=1)},
            GROUP,
            (),
            False,
            ReleaseReason.TASK_RETRY_PENDING,
            id="stopped-run-finally-lets-running-tasks-retry",
        ),
        pytest.param(
            "StoppedRunFinally",
            BOTH,
            {"run-1-build": SUCCEEDED, "run-1-test": SUCCEEDED},
            GROUP,
            (),
            True,
            ReleaseReason.TASKS_DONE,
            id="stopped-run-finally-tasks-done-anyway",
        ),
    ],
)
def test_graceful_stops(
    spec_status: str,
    children: dict[str, str],
    task_runs: dict[str, dict[str, Any]],
    dag: tuple[str, ...] | None,
    finally_tasks: tuple[str, ...],
    release: bool,
    reason: ReleaseReason,
) -> None:
    pr = pipeline_run(children, spec_status=spec_status, dag=dag, finally_tasks=finally_tasks, **RUNNING_PR)
    decision = decide(pr, task_runs)
    assert (decision.release, decision.reason) == (release, reason)


# --- timeouts --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timeouts", "elapsed", "release", "reason"),
    [
        pytest.param(
            {"pipeline": "1h0m0s"},
            timedelta(minutes=61),
            True,
            ReleaseReason.PIPELINE_RUN_TIMED_OUT,
            id="pipeline-timeout-passed",
        ),
        pytest.param(
            {"pipeline": "1h0m0s"},
            timedelta(minutes=59),
            False,
            ReleaseReason.TASK_RUNNING,
            id="pipeline-timeout-not-yet",
        ),
        pytest.param(
            {"pipeline": "0s"},
            timedelta(days=9),
            False,
            ReleaseReason.TASK_RUNNING,
            id="zero-means-no-timeout",
        ),
        pytest.param(
            {"pipeline": "2h", "tasks": "1h"},
            timedelta(minutes=61),
            True,
            ReleaseReason.PIPELINE_RUN_TIMED_OUT,
            id="tasks-timeout-passed",
        ),
        pytest.param(
            {"pipeline": "2h", "finally": "30m"},
            timedelta(minutes=91),
            True,
            ReleaseReason.PIPELINE_RUN_TIMED_OUT,
            id="tasks-timeout-derived-from-pipeline-minus-finally",
        ),
        pytest.param(
            {"pipeline": "2h", "finally": "30m"},
            timedelta(minutes=89),
            False,
            ReleaseReason.TASK_RUNNING,
            id="derived-tasks-timeout-not-yet",
        ),
    ],
)
def test_timeouts(timeouts: dict[str, str], elapsed: timedelta, release: bool, reason: ReleaseReason) -> None:
    pr = pipeline_run(BOTH, timeouts=timeouts, dag=GROUP, **RUNNING_PR)
    runs = {"run-1-build": SUCCEEDED, "run-1-test": RUNNING}
    decision = decide(pr, runs, now=START_TIME + elapsed)
    assert (decision.release, decision.reason) == (release, reason)


def test_timeouts_need_now() -> None:
    pr = pipeline_run(BOTH, timeouts={"pipeline": "1m"}, **RUNNING_PR)
    assert not decide(pr, {"run-1-build": SUCCEEDED, "run-1-test": RUNNING}).release


def test_naive_now_is_utc() -> None:
    pr = pipeline_run(BOTH, timeouts={"pipeline": "1m"}, **RUNNING_PR)
    naive = datetime(2026, 1, 1, 10, 2)
    assert decide(pr, {"run-1-build": SUCCEEDED, "run-1-test": RUNNING}, now=naive).release


def test_tasks_timeout_keeps_a_finally_task_of_the_group() -> None:
    pr = pipeline_run(
        {"build": "run-1-build"},
        timeouts={"pipeline": "2h", "tasks": "1h"},
        dag=("build",),
        finally_tasks=("test",),
        **RUNNING_PR,
    )
    decision = decide(pr, {"run-1-build": RUNNING}, now=START_TIME + timedelta(minutes=61))
    assert (decision.release, decision.reason) == (False, ReleaseReason.TASK_NOT_STARTED)


def test_a_custom_run_ends_at_true_or_false_its_controller_retrying_it() -> None:
    custom = {"kind": "CustomRun", "spec": {"retries": 2}, "status": {"conditions": condition("False", "Failed")}}
    assert task_run_progress(custom) is TaskRunProgress.FAILED
    assert task_run_progress({**custom, "status": {"conditions": condition("True", "Succeeded")}}) is TaskRunProgress.SUCCEEDED
    assert task_run_progress({**custom, "status": {"conditions": condition("Unknown", "Running")}}) is TaskRunProgress.RUNNING
    # The same failure of a TaskRun with retries left is the retry gap.
    assert task_run_progress({**custom, "kind": "TaskRun"}) is TaskRunProgress.RETRY_PENDING
    assert task_run_progress({**custom, "spec": {"status": "RunCancelled"}, "status": {"conditions": condition("False", "RunCancelled")}}).done


def test_child_run_kinds_are_the_children_listed_as_custom_runs_or_pipeline_runs() -> None:
    pr = {"status": {"childReferences": [
        {"kind": "TaskRun", "pipelineTaskName": "fetch", "name": "a-fetch"},
        {"kind": "CustomRun", "pipelineTaskName": "approve", "name": "a-approve"},
        {"kind": "PipelineRun", "pipelineTaskName": "build-and-test", "name": "a-build-and-test"},
        {"kind": "CustomRun", "pipelineTaskName": "broken"},
        "not a reference",
    ]}}
    assert child_run_kinds(pr) == {"a-approve": "CustomRun", "a-build-and-test": "PipelineRun"}
    assert task_run_names(pr) == {"fetch": ["a-fetch"], "approve": ["a-approve"], "build-and-test": ["a-build-and-test"]}
    assert child_run_kinds({}) == {}


def test_a_child_pipeline_run_ends_at_true_or_false() -> None:
    # Tekton never retries a child PipelineRun: Succeeded False is its end, whatever the task's retries say.
    child = {"kind": "PipelineRun", "spec": {"retries": 1}, "status": {"conditions": condition("False", "Failed")}}
    assert task_run_progress(child) is TaskRunProgress.FAILED
    assert task_run_progress({**child, "status": {"conditions": condition("Unknown", "Running")}}) is TaskRunProgress.RUNNING
    assert task_run_progress({**child, "status": {"conditions": condition("True", "Succeeded")}}) is TaskRunProgress.SUCCEEDED


def test_a_group_holding_a_custom_task_is_released_once_its_custom_run_is_done() -> None:
    pr = {"status": {"conditions": condition("Unknown", "Running"), "childReferences": [
        {"kind": "TaskRun", "pipelineTaskName": "fetch", "name": "a-fetch"},
        {"kind": "CustomRun", "pipelineTaskName": "approve", "name": "a-approve"},
    ]}}
    fetch = {"status": {"conditions": condition("True", "Succeeded")}}
    running = {"kind": "CustomRun", "status": {"conditions": condition("Unknown")}}
    assert not release_decision(["fetch", "approve"], pr, {"a-fetch": fetch, "a-approve": running}).release
    assert not release_decision(["fetch", "approve"], pr, {"a-fetch": fetch}).release, "a child run not found is not done"
    done = {**running, "status": {"conditions": condition("True", "Succeeded")}}
    decision = release_decision(["fetch", "approve"], pr, {"a-fetch": fetch, "a-approve": done})
    assert (decision.release, decision.reason) == (True, ReleaseReason.TASKS_DONE)


def test_without_kind_is_the_mutants_one_wrong_rule() -> None:
    from tests.mutants.faults import without_kind

    children = {"a-fetch": {"status": {}}, "a-approve": {"kind": "CustomRun"}, "a-build-and-test": {"kind": "PipelineRun"}}
    assert without_kind(children, "CustomRun") == {"a-fetch": {"status": {}}, "a-build-and-test": {"kind": "PipelineRun"}}
    assert without_kind(children, "PipelineRun") == {"a-fetch": {"status": {}}, "a-approve": {"kind": "CustomRun"}}
    assert without_kind({"a-fetch": {"kind": "TaskRun"}}, "CustomRun") == {"a-fetch": {"kind": "TaskRun"}}


def test_refusing_child_pipelines_refuses_only_a_pipeline_with_a_child() -> None:
    from tests.mutants.faults import refusing_child_pipelines

    refusing_child_pipelines({"tasks": [{"name": "build", "taskSpec": {}}]})
    with pytest.raises(ValueError, match="'sub' runs a Pipeline"):
        refusing_child_pipelines({"tasks": [{"name": "build", "taskSpec": {}}], "finally": [{"name": "sub", "pipelineRef": {"name": "p"}}]})
