"""Which release reasons are true (docs/contract.md section 8), as the monitor judges a release."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from harness.contract.record import ReleaseReason as R
from harness.monitor.release_truth import task_run_done, tasks_done, true_reasons

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
UID = "uid-1"


def _condition(status: str, reason: str = "") -> dict[str, Any]:
    return {"type": "Succeeded", "status": status, "reason": reason}


def _task_run(task: str, status: str, reason: str = "", *, retries: int = 0, retried: int = 0, cancelled: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"tekton.dev/pipelineTask": task}},
        "spec": {"retries": retries, **({"status": "TaskRunCancelled"} if cancelled else {})},
        "status": {"conditions": [_condition(status, reason)], "retriesStatus": [{}] * retried},
    }


def _pipeline_run(*conditions: dict[str, Any], spec: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    return {"metadata": {"uid": UID}, "spec": spec or {}, "status": {"conditions": list(conditions), **status}}


def test_a_failed_attempt_with_a_retry_to_come_is_not_done_the_retry_gap() -> None:
    assert not task_run_done(_task_run("t", "False", "Failed", retries=1, retried=0))
    assert not task_run_done(_task_run("t", "Unknown", "ToBeRetried", retries=1))
    assert task_run_done(_task_run("t", "False", "Failed", retries=1, retried=1))
    assert task_run_done(_task_run("t", "False", "TaskRunCancelled", retries=3, cancelled=True))
    assert task_run_done(_task_run("t", "True", "Succeeded"))


def test_tasks_done_needs_every_group_task_done_or_skipped() -> None:
    run = _pipeline_run(_condition("Unknown", "Running"), skippedTasks=[{"name": "skipped"}])
    runs = [_task_run("a", "True"), _task_run("b", "Unknown", "Running")]
    assert tasks_done(run, runs, ["a", "skipped"])
    assert not tasks_done(run, runs, ["a", "b"])
    assert not tasks_done(run, runs, ["a", "not-started"])


def test_a_run_that_succeeded_makes_done_reasons_true_and_not_the_timeout() -> None:
    found = true_reasons(_pipeline_run(_condition("True", "Succeeded")), [_task_run("a", "True")], group_tasks=["a"], record_uid=UID, now=NOW)
    assert found == {R.TASKS_DONE, R.PIPELINE_RUN_DONE}


def test_cancelled_counts_from_spec_or_reason_but_is_not_done() -> None:
    asked = _pipeline_run(_condition("Unknown", "Running"), spec={"status": "Cancelled"})
    assert true_reasons(asked, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_CANCELLED}
    over = _pipeline_run(_condition("False", "Cancelled"))
    assert true_reasons(over, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_CANCELLED}


def test_gone_being_deleted_or_replaced_runs_are_deleted() -> None:
    assert true_reasons(None, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_DELETED}
    replaced = {"metadata": {"uid": "another"}, "status": {}}
    assert true_reasons(replaced, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_DELETED}
    deleting = _pipeline_run(_condition("Unknown", "Running"))
    deleting["metadata"]["deletionTimestamp"] = "2026-12-01T11:59:00Z"
    assert R.PIPELINE_RUN_DELETED in true_reasons(deleting, [], group_tasks=["a"], record_uid=UID, now=NOW)


def test_timed_out_from_the_reason_or_the_clock() -> None:
    by_reason = _pipeline_run(_condition("False", "PipelineRunTimeout"))
    assert true_reasons(by_reason, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_TIMED_OUT}
    started = (NOW - timedelta(minutes=2)).isoformat().replace("+00:00", "Z")
    by_clock = _pipeline_run(_condition("Unknown", "Running"), spec={"timeouts": {"pipeline": "1m0s"}}, startTime=started)
    assert true_reasons(by_clock, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_TIMED_OUT}
    in_time = _pipeline_run(_condition("Unknown", "Running"), spec={"timeouts": {"pipeline": "1h0m0s"}}, startTime=started)
    assert true_reasons(in_time, [], group_tasks=["a"], record_uid=UID, now=NOW) == set()


def test_a_running_run_makes_no_reason_true() -> None:
    running = _pipeline_run(_condition("Unknown", "Running"))
    assert true_reasons(running, [_task_run("a", "Unknown", "Running")], group_tasks=["a"], record_uid=UID, now=NOW) == set()


def test_stopped_run_finally_is_stopped_once_no_group_task_can_run() -> None:
    stopped = _pipeline_run(_condition("Unknown", "Running"), spec={"status": "StoppedRunFinally"}, pipelineSpec={"tasks": [{"name": "a"}]})
    assert true_reasons(stopped, [], group_tasks=["a"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_STOPPED}  # a never started
    running = [_task_run("a", "Unknown", "Running")]
    assert true_reasons(stopped, running, group_tasks=["a"], record_uid=UID, now=NOW) == set()  # a runs to its end
    retrying = [_task_run("a", "False", "Failed", retries=1)]
    assert true_reasons(stopped, retrying, group_tasks=["a"], record_uid=UID, now=NOW) == set()  # ... retries included
    unresolved = _pipeline_run(_condition("Unknown", "Running"), spec={"status": "StoppedRunFinally"})
    assert true_reasons(unresolved, [], group_tasks=["a"], record_uid=UID, now=NOW) == set()  # a may be a finally task


# Group {build, report}: build a DAG task, report a finally task sharing its workspace.
GRACEFUL_PLAN = {"tasks": [{"name": "build"}], "finally": [{"name": "report"}]}


def test_cancelled_run_finally_is_cancelled_once_the_groups_finally_tasks_are_done() -> None:
    cancelled = _pipeline_run(_condition("Unknown", "Running"), spec={"status": "CancelledRunFinally"}, pipelineSpec=GRACEFUL_PLAN)
    build_running = _task_run("build", "Unknown", "Running")
    assert true_reasons(cancelled, [build_running], group_tasks=["build"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_CANCELLED}
    assert true_reasons(cancelled, [build_running], group_tasks=["build", "report"], record_uid=UID, now=NOW) == set()
    report_running = _task_run("report", "Unknown", "Running")
    assert true_reasons(cancelled, [build_running, report_running], group_tasks=["build", "report"], record_uid=UID, now=NOW) == set()
    report_done = _task_run("report", "True", "Succeeded")
    assert true_reasons(cancelled, [build_running, report_done], group_tasks=["build", "report"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_CANCELLED}


def test_an_elapsed_tasks_timeout_is_a_timeout_once_the_groups_finally_tasks_are_done() -> None:
    started = (NOW - timedelta(minutes=2)).isoformat().replace("+00:00", "Z")
    run = _pipeline_run(_condition("Unknown", "Running"), spec={"timeouts": {"tasks": "1m0s"}}, startTime=started, pipelineSpec=GRACEFUL_PLAN)
    assert true_reasons(run, [], group_tasks=["build"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_TIMED_OUT}
    assert true_reasons(run, [], group_tasks=["build", "report"], record_uid=UID, now=NOW) == set()
    done = [_task_run("report", "True", "Succeeded")]
    assert true_reasons(run, done, group_tasks=["build", "report"], record_uid=UID, now=NOW) == {R.PIPELINE_RUN_TIMED_OUT}
