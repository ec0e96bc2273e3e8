"""Which release reasons are true (docs/contract.md section 8), as the monitor judges a release."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract.record import ReleaseReason as R
from harness.monitor.release_truth import ReleaseTruth, release_may_be_due, release_truth, task_run_done, tasks_done, true_reasons

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


# --- the truth of realistic Tekton v1 objects, as the API serves them ---------------------------------------------
#
# The shapes below are those Tekton v1.15.0 writes (pkg/apis/pipeline/v1 PipelineRunStatus, TaskRunStatus): a
# Succeeded condition with reason and message, childReferences naming each TaskRun, skippedTasks with the skipping
# reason and the when expressions, retriesStatus holding each failed attempt, TaskRuns labelled with their run and
# pipeline task and controlled by their PipelineRun. Times are fixed; only `now` moves.

RUN = "build-7x2"
RUN_UID = "5d0c8a1e-run"
STARTED = "2026-12-01T11:59:00Z"


def _real_condition(status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": "Succeeded", "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-12-01T11:59:30Z"}


def _attempt(reason: str = "Failed") -> dict[str, Any]:
    """One archived attempt of status.retriesStatus: a TaskRunStatus of its own."""
    return {"conditions": [_real_condition("False", reason, '"step-work" exited with code 1')], "podName": f"{RUN}-flaky-pod",
            "startTime": STARTED, "completionTime": "2026-12-01T11:59:20Z"}


def real_task_run(
    task: str, condition: dict[str, Any], *, name: str | None = None, retries: int = 0, attempts: int = 0,
    cancelled: bool = False, finally_task: bool = False, owner_uid: str = RUN_UID,
) -> dict[str, Any]:
    name = name or f"{RUN}-{task}"
    spec: dict[str, Any] = {"serviceAccountName": "default", "timeout": "1h0m0s", "taskSpec": {"steps": [{"name": "work", "image": "busybox"}]}}
    if retries:
        spec["retries"] = retries
    if cancelled:
        spec["status"] = "TaskRunCancelled"
        spec["statusMessage"] = "TaskRun cancelled as the PipelineRun it belongs to has been cancelled."
    status: dict[str, Any] = {"conditions": [condition], "podName": f"{name}-pod", "startTime": STARTED, "steps": [{"name": "work", "container": "step-work"}]}
    if condition["status"] != "Unknown":
        status["completionTime"] = "2026-12-01T11:59:40Z"
    if attempts:
        status["retriesStatus"] = [_attempt() for _ in range(attempts)]
    return {
        "apiVersion": "tekton.dev/v1", "kind": "TaskRun",
        "metadata": {
            "name": name, "namespace": "ci", "uid": f"uid-{name}",
            "labels": {"tekton.dev/pipeline": RUN, "tekton.dev/pipelineRun": RUN, "tekton.dev/pipelineTask": task,
                       "tekton.dev/memberOf": "finally" if finally_task else "tasks", "app.kubernetes.io/managed-by": "tekton-pipelines"},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": RUN, "uid": owner_uid,
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": spec,
        "status": status,
    }


SUCCEEDED = _real_condition("True", "Succeeded", "All Steps have completed executing")
RUNNING = _real_condition("Unknown", "Running", "Not all Steps in the Task have finished executing")
FAILED = _real_condition("False", "Failed", '"step-work" exited with code 1')
TO_BE_RETRIED = _real_condition("Unknown", "ToBeRetried", '"step-work" exited with code 1')
TASK_RUN_CANCELLED = _real_condition("False", "TaskRunCancelled", "TaskRun \"x\" was cancelled. TaskRun cancelled as the PipelineRun it belongs to has been cancelled.")
WHEN_FALSE = {"input": "no", "operator": "in", "values": ["yes"]}


def real_pipeline_run(
    condition: dict[str, Any], *, children: dict[str, list[str]] | None = None, skipped: dict[str, str] | None = None,
    plan: dict[str, Any] | None = None, spec_status: str | None = None, timeouts: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A PipelineRun as Tekton serves it; `children` maps a pipeline task to its TaskRuns' names, `skipped` a task to its skipping reason."""
    plan = plan or {"tasks": [{"name": "fetch"}, {"name": "deploy", "runAfter": ["fetch"]}, {"name": "notify"}]}
    spec: dict[str, Any] = {"pipelineSpec": plan, "timeouts": timeouts or {"pipeline": "1h0m0s"},
                            "taskRunTemplate": {"serviceAccountName": "default", "podTemplate": {"schedulerName": "tkn-scheduler"}}}
    if spec_status:
        spec["status"] = spec_status
    status: dict[str, Any] = {
        "conditions": [condition], "startTime": STARTED, "pipelineSpec": plan,
        "childReferences": [
            {"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "name": name, "pipelineTaskName": task}
            for task, names in (children or {}).items() for name in names
        ],
    }
    if skipped:
        status["skippedTasks"] = [
            {"name": task, "reason": reason, **({"whenExpressions": [WHEN_FALSE]} if reason == "When Expressions evaluated to false" else {})}
            for task, reason in skipped.items()
        ]
    return {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun",
            "metadata": {"name": RUN, "namespace": "ci", "uid": RUN_UID, "labels": {"tekton.dev/pipeline": RUN}},
            "spec": spec, "status": status}


def truth(pipeline_run: dict[str, Any] | None, task_runs: list[dict[str, Any]], group: tuple[str, ...], *, now: datetime = NOW) -> ReleaseTruth:
    return release_truth(pipeline_run, task_runs, group_tasks=group, record_uid=RUN_UID, now=now)


RUNS_ON = _real_condition("Unknown", "Running", "Tasks Completed: 1 (Failed: 0, Cancelled 0), Skipped: 1, Incomplete: 1")


def test_a_group_whose_task_when_skipped_is_due_while_the_run_goes_on() -> None:
    """The release_late scenario's state: fetch done, deploy skipped by its when expression, notify (no group) running."""
    run = real_pipeline_run(RUNS_ON, children={"fetch": [f"{RUN}-fetch"], "notify": [f"{RUN}-notify"]},
                            skipped={"deploy": "When Expressions evaluated to false"})
    task_runs = [real_task_run("fetch", SUCCEEDED), real_task_run("notify", RUNNING)]
    assert truth(run, task_runs, ("fetch", "deploy")) == ReleaseTruth(frozenset({R.TASKS_DONE}), frozenset({R.TASKS_DONE}))
    # Before Tekton skipped deploy (fetch still running), nothing holds.
    before = real_pipeline_run(_real_condition("Unknown", "Running", "Tasks Completed: 0 (Failed: 0, Cancelled 0), Skipped: 0, Incomplete: 3"),
                               children={"fetch": [f"{RUN}-fetch"], "notify": [f"{RUN}-notify"]})
    assert truth(before, [real_task_run("fetch", RUNNING), real_task_run("notify", RUNNING)], ("fetch", "deploy")) == ReleaseTruth()


def test_the_retry_gap_is_not_done_and_the_last_attempt_is() -> None:
    run = real_pipeline_run(RUNS_ON, children={"fetch": [f"{RUN}-fetch"]})
    gap = real_task_run("fetch", TO_BE_RETRIED, retries=2, attempts=1)
    assert truth(run, [gap], ("fetch",)) == ReleaseTruth()
    failed_with_retry_left = real_task_run("fetch", FAILED, retries=2, attempts=1)
    assert truth(run, [failed_with_retry_left], ("fetch",)) == ReleaseTruth()
    last = real_task_run("fetch", FAILED, retries=2, attempts=2)
    assert truth(run, [last], ("fetch",)).due == {R.TASKS_DONE}


def test_a_cancelled_task_run_is_done_with_retries_left() -> None:
    run = real_pipeline_run(RUNS_ON, children={"fetch": [f"{RUN}-fetch"]})
    assert truth(run, [real_task_run("fetch", TASK_RUN_CANCELLED, retries=3, cancelled=True)], ("fetch",)).due == {R.TASKS_DONE}


def test_a_matrixed_task_is_done_only_when_every_task_run_of_it_is() -> None:
    names = [f"{RUN}-fetch-0", f"{RUN}-fetch-1"]
    run = real_pipeline_run(RUNS_ON, children={"fetch": names})
    one_left = [real_task_run("fetch", SUCCEEDED, name=names[0]), real_task_run("fetch", RUNNING, name=names[1])]
    assert truth(run, one_left, ("fetch",)) == ReleaseTruth()
    both = [real_task_run("fetch", SUCCEEDED, name=names[0]), real_task_run("fetch", FAILED, name=names[1])]
    assert truth(run, both, ("fetch",)).due == {R.TASKS_DONE}


def test_a_task_run_of_an_earlier_run_of_the_same_name_counts_for_nothing() -> None:
    run = real_pipeline_run(RUNS_ON, children={"fetch": [f"{RUN}-fetch"]})
    stale = real_task_run("fetch", SUCCEEDED, owner_uid="uid-of-the-run-before")
    assert truth(run, [stale], ("fetch",)) == ReleaseTruth()


def test_a_cancel_request_is_true_but_only_tektons_verdict_makes_it_due() -> None:
    asked = real_pipeline_run(RUNS_ON, children={"fetch": [f"{RUN}-fetch"]}, spec_status="Cancelled")
    assert truth(asked, [real_task_run("fetch", RUNNING)], ("fetch",)) == ReleaseTruth(frozenset({R.PIPELINE_RUN_CANCELLED}), frozenset())
    verdict = real_pipeline_run(_real_condition("False", "Cancelled", "PipelineRun \"build-7x2\" was cancelled"),
                                children={"fetch": [f"{RUN}-fetch"]}, spec_status="Cancelled")
    found = truth(verdict, [real_task_run("fetch", TASK_RUN_CANCELLED, cancelled=True)], ("fetch",))
    assert found == ReleaseTruth(frozenset({R.PIPELINE_RUN_CANCELLED, R.TASKS_DONE}), frozenset({R.PIPELINE_RUN_CANCELLED, R.TASKS_DONE}))


def test_a_timeout_on_the_clock_is_true_but_only_tektons_verdict_makes_it_due() -> None:
    run = real_pipeline_run(RUNS_ON, children={"fetch": [f"{RUN}-fetch"]}, timeouts={"pipeline": "30s"})
    assert truth(run, [real_task_run("fetch", RUNNING)], ("fetch",)) == ReleaseTruth(frozenset({R.PIPELINE_RUN_TIMED_OUT}), frozenset())
    assert truth(run, [real_task_run("fetch", RUNNING)], ("fetch",), now=datetime(2026, 12, 1, 11, 59, 30, tzinfo=UTC)) == ReleaseTruth()
    timed_out = real_pipeline_run(_real_condition("False", "PipelineRunTimeout", 'PipelineRun "build-7x2" failed to finish within "30s"'),
                                  children={"fetch": [f"{RUN}-fetch"]}, timeouts={"pipeline": "30s"})
    cancelled = real_task_run("fetch", TASK_RUN_CANCELLED, cancelled=True)
    assert truth(timed_out, [cancelled], ("fetch",)).due == {R.PIPELINE_RUN_TIMED_OUT, R.TASKS_DONE}


# Group {build, report}: build a DAG task, report a finally task on the same workspace; lint a DAG task of no group.
GRACEFUL = {"tasks": [{"name": "build"}, {"name": "lint"}], "finally": [{"name": "report"}]}


def test_cancelled_run_finally_is_due_once_the_groups_finally_task_is_done() -> None:
    stopping = _real_condition("Unknown", "CancelledRunFinally", "Tasks Completed: 1 (Failed: 0, Cancelled 1), Skipped: 1, Incomplete: 1")
    run = real_pipeline_run(stopping, plan=GRACEFUL, spec_status="CancelledRunFinally",
                            children={"build": [f"{RUN}-build"], "report": [f"{RUN}-report"]}, skipped={"lint": "PipelineRun was gracefully cancelled"})
    build = real_task_run("build", TASK_RUN_CANCELLED, cancelled=True)
    assert truth(run, [build, real_task_run("report", RUNNING, finally_task=True)], ("build", "report")) == ReleaseTruth()
    done = truth(run, [build, real_task_run("report", SUCCEEDED, finally_task=True)], ("build", "report"))
    assert done.due == {R.PIPELINE_RUN_CANCELLED, R.TASKS_DONE}


def test_stopped_run_finally_waits_for_the_running_dag_task_then_the_finally_task() -> None:
    stopping = _real_condition("Unknown", "StoppedRunFinally", "Tasks Completed: 0 (Failed: 0, Cancelled 0), Skipped: 1, Incomplete: 2")
    run = real_pipeline_run(stopping, plan=GRACEFUL, spec_status="StoppedRunFinally",
                            children={"build": [f"{RUN}-build"]}, skipped={"lint": "PipelineRun was gracefully stopped"})
    assert truth(run, [real_task_run("build", RUNNING)], ("build", "report")) == ReleaseTruth()
    # build ran to its end; report not started yet: it still can run.
    assert truth(run, [real_task_run("build", SUCCEEDED)], ("build", "report")) == ReleaseTruth()
    # Tekton ends a stopped run False, reason Cancelled, even when every task succeeded.
    over = real_pipeline_run(_real_condition("False", "Cancelled", 'PipelineRun "build-7x2" was cancelled'), plan=GRACEFUL,
                             spec_status="StoppedRunFinally", children={"build": [f"{RUN}-build"], "report": [f"{RUN}-report"]},
                             skipped={"lint": "PipelineRun was gracefully stopped"})
    found = truth(over, [real_task_run("build", SUCCEEDED), real_task_run("report", SUCCEEDED, finally_task=True)], ("build", "report"))
    assert found.due == {R.TASKS_DONE, R.PIPELINE_RUN_STOPPED, R.PIPELINE_RUN_CANCELLED}


def test_a_run_gone_being_deleted_or_replaced_is_due_as_deleted() -> None:
    deleted = ReleaseTruth(frozenset({R.PIPELINE_RUN_DELETED}), frozenset({R.PIPELINE_RUN_DELETED}))
    assert truth(None, [], ("fetch",)) == deleted
    replaced = real_pipeline_run(RUNS_ON)
    replaced["metadata"]["uid"] = "uid-of-a-new-run"
    assert truth(replaced, [], ("fetch",)) == deleted
    deleting = real_pipeline_run(RUNS_ON)
    deleting["metadata"]["deletionTimestamp"] = "2026-12-01T11:59:50Z"
    assert truth(deleting, [real_task_run("fetch", RUNNING)], ("fetch",)).due == {R.PIPELINE_RUN_DELETED}


def test_a_failed_run_is_done_for_its_groups() -> None:
    failed = real_pipeline_run(_real_condition("False", "Failed", "Tasks Completed: 2 (Failed: 1, Cancelled 0), Skipped: 1, Incomplete: 0"),
                               children={"fetch": [f"{RUN}-fetch"]})
    assert truth(failed, [real_task_run("fetch", FAILED)], ("fetch",)).due == {R.PIPELINE_RUN_DONE, R.TASKS_DONE}


_TASK_STATES = st.sampled_from([SUCCEEDED, RUNNING, FAILED, TO_BE_RETRIED, TASK_RUN_CANCELLED])
_RUN_STATES = st.sampled_from([
    RUNS_ON, _real_condition("True", "Succeeded"), _real_condition("True", "Completed"), _real_condition("False", "Failed"),
    _real_condition("False", "Cancelled"), _real_condition("False", "PipelineRunTimeout"),
    _real_condition("Unknown", "CancelledRunFinally"), _real_condition("Unknown", "StoppedRunFinally"),
])


@given(
    condition=_RUN_STATES,
    spec_status=st.sampled_from([None, "Cancelled", "CancelledRunFinally", "StoppedRunFinally"]),
    states=st.dictionaries(st.sampled_from(["build", "lint", "report"]), st.tuples(_TASK_STATES, st.integers(0, 2), st.integers(0, 2))),
    skipped=st.sets(st.sampled_from(["build", "lint", "report"])),
    seconds=st.integers(0, 120),
)
def test_what_is_due_is_always_true_and_true_reasons_is_the_same_truth(
    condition: dict[str, Any], spec_status: str | None, states: dict[str, tuple[dict[str, Any], int, int]], skipped: set[str], seconds: int,
) -> None:
    runs = [real_task_run(task, state, retries=retries, attempts=attempts, cancelled=state is TASK_RUN_CANCELLED, finally_task=task == "report")
            for task, (state, retries, attempts) in states.items() if task not in skipped]
    run = real_pipeline_run(condition, plan=GRACEFUL, spec_status=spec_status, timeouts={"pipeline": "1m0s", "tasks": "30s"},
                            children={t: [f"{RUN}-{t}"] for t in states if t not in skipped}, skipped={t: "When Expressions evaluated to false" for t in skipped})
    now = datetime(2026, 12, 1, 11, 59, tzinfo=UTC) + timedelta(seconds=seconds)
    found = truth(run, runs, ("build", "report"), now=now)
    assert found.due <= found.reasons
    assert true_reasons(run, runs, group_tasks=("build", "report"), record_uid=RUN_UID, now=now) == set(found.reasons)
    # Only the clock and the cancel request make a reason true without making it due.
    assert found.reasons - found.due <= {R.PIPELINE_RUN_TIMED_OUT, R.PIPELINE_RUN_CANCELLED}
    if condition["status"] != "Unknown":
        assert found.due & {R.PIPELINE_RUN_DONE, R.PIPELINE_RUN_CANCELLED, R.PIPELINE_RUN_TIMED_OUT}
    # The monitor reads a run only when the watched PipelineRun says a release may be due: it never misses one that is.
    if found.due:
        assert release_may_be_due(run, ("build", "report"), record_uid=RUN_UID)


def test_a_release_may_be_due_only_once_every_group_task_started_or_was_skipped_or_the_run_is_over() -> None:
    children = {"fetch": [f"{RUN}-fetch"], "notify": [f"{RUN}-notify"]}
    assert not release_may_be_due(real_pipeline_run(RUNS_ON, children=children), ("fetch", "deploy"), record_uid=RUN_UID)
    skipped = real_pipeline_run(RUNS_ON, children=children, skipped={"deploy": "When Expressions evaluated to false"})
    assert release_may_be_due(skipped, ("fetch", "deploy"), record_uid=RUN_UID)
    assert release_may_be_due(real_pipeline_run(_real_condition("True", "Succeeded")), ("fetch", "deploy"), record_uid=RUN_UID)
    assert release_may_be_due(real_pipeline_run(RUNS_ON, spec_status="StoppedRunFinally"), ("fetch", "deploy"), record_uid=RUN_UID)
    assert release_may_be_due(None, ("fetch",), record_uid=RUN_UID)
    assert release_may_be_due(real_pipeline_run(RUNS_ON), ("fetch",), record_uid="the record's run was another")


def _custom_run(task: str, status: str, reason: str = "", *, retries: int = 0) -> dict[str, Any]:
    return {**_task_run(task, status, reason, retries=retries), "kind": "CustomRun"}


def test_a_custom_run_is_done_at_true_or_false_whatever_its_retries() -> None:
    # Its controller retries it with Succeeded Unknown; Tekton takes False as its end (isFailure).
    assert task_run_done(_custom_run("approve", "True", "Succeeded"))
    assert task_run_done(_custom_run("approve", "False", "Failed", retries=2))
    assert not task_run_done(_custom_run("approve", "Unknown", "Running"))
    assert not task_run_done({**_custom_run("approve", "Unknown"), "status": {}})


def test_a_group_with_a_custom_task_is_due_once_its_custom_run_and_the_rest_are_done() -> None:
    run = _pipeline_run(_condition("Unknown", "Running"))
    fetch = _task_run("fetch", "True", "Succeeded")
    assert not tasks_done(run, [fetch, _custom_run("approve", "Unknown", "Running")], ["fetch", "approve"])
    assert not tasks_done(run, [fetch], ["fetch", "approve"]), "no child run of approve yet: not done"
    assert tasks_done(run, [fetch, _custom_run("approve", "True", "Succeeded")], ["fetch", "approve"])
    assert R.TASKS_DONE in true_reasons(run, [fetch, _custom_run("approve", "True")], group_tasks=["fetch", "approve"], record_uid=UID, now=datetime.now(UTC))


def test_a_child_pipeline_run_is_done_at_true_or_false_and_holds_its_parent_s_group_till_then() -> None:
    # Pipelines in pipelines: the task's child is a PipelineRun, labelled with the parent's run and task.
    child = {**_task_run("build-and-test", "Unknown", "Running"), "kind": "PipelineRun"}
    assert not task_run_done(child)
    assert task_run_done({**_task_run("build-and-test", "False", "Failed", retries=1), "kind": "PipelineRun"})
    run = _pipeline_run(_condition("Unknown", "Running"))
    fetch = _task_run("fetch", "True", "Succeeded")
    assert not tasks_done(run, [fetch, child], ["fetch", "build-and-test"])
    assert tasks_done(run, [fetch, {**_task_run("build-and-test", "True", "Succeeded"), "kind": "PipelineRun"}], ["fetch", "build-and-test"])
