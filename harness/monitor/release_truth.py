"""release_truth: which release reasons are true of a PipelineRun and its TaskRuns (docs/contract.md section 8).

The monitor reads the PipelineRun and its TaskRuns right after it sees a group
Released and asks which reasons hold. Every reason is monotone (a done task
stays done, a deleted run stays deleted), so a reason true at the release is
still true at that read; one that is false then was false at the release.

    true_reasons(pipeline_run, task_runs, group_tasks={'build'}, now=...) == {ReleaseReason.TASKS_DONE, ...}
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from harness.contract.record import ReleaseReason

Obj = Mapping[str, Any]

PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"
#: Tekton's PipelineRun condition reasons that the contract gives their own release reason.
CANCELLED_REASON = "Cancelled"
TIMEOUT_REASON = "PipelineRunTimeout"


def _succeeded(obj: Obj) -> Obj | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)


def task_run_done(task_run: Obj) -> bool:
    """task_run_done() is section 8's rule: Succeeded True, or False with no retry to come."""
    condition = _succeeded(task_run)
    if condition is None or condition.get("status") == "Unknown":
        return False
    if condition.get("status") == "True":
        return True
    spec = task_run.get("spec") or {}
    if spec.get("status") == "TaskRunCancelled" or condition.get("reason") == "TaskRunCancelled":
        return True
    return len((task_run.get("status") or {}).get("retriesStatus") or []) >= int(spec.get("retries") or 0)


def tasks_done(pipeline_run: Obj, task_runs: Iterable[Obj], group_tasks: Iterable[str]) -> bool:
    """tasks_done() holds when every group task is skipped, or has TaskRuns and all of them are done."""
    skipped = {s.get("name") for s in (pipeline_run.get("status") or {}).get("skippedTasks") or []}
    by_task: dict[str, list[Obj]] = {}
    for task_run in task_runs:
        task = ((task_run.get("metadata") or {}).get("labels") or {}).get(PIPELINE_TASK_LABEL)
        if task:
            by_task.setdefault(str(task), []).append(task_run)
    return all(task in skipped or (by_task.get(task) and all(task_run_done(t) for t in by_task[task])) for task in group_tasks)


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _duration(text: str | None) -> timedelta | None:
    """_duration('1h0m0s') == timedelta(hours=1); Go's duration strings, as Tekton writes them."""
    if not text:
        return None
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if text[i : i + 2] == "ms" else ch
        total += float(number or 0) * units.get(unit, 0.0)
        number = ""
        i += len(unit)
    return timedelta(seconds=total)


def true_reasons(
    pipeline_run: Obj | None, task_runs: Iterable[Obj], *, group_tasks: Iterable[str], record_uid: str, now: datetime
) -> set[ReleaseReason]:
    """true_reasons() is every release reason that holds now for a group of the record's PipelineRun.

    `pipeline_run` None means it is gone; a PipelineRun whose uid is not the
    record's is a new one of the same name, so the record's run is gone too.
    """
    if pipeline_run is None or (pipeline_run.get("metadata") or {}).get("uid") != record_uid:
        return {ReleaseReason.PIPELINE_RUN_DELETED}
    found: set[ReleaseReason] = set()
    metadata, spec, status = pipeline_run.get("metadata") or {}, pipeline_run.get("spec") or {}, pipeline_run.get("status") or {}
    if metadata.get("deletionTimestamp"):
        found.add(ReleaseReason.PIPELINE_RUN_DELETED)
    if tasks_done(pipeline_run, task_runs, group_tasks):
        found.add(ReleaseReason.TASKS_DONE)
    condition = _succeeded(pipeline_run)
    reason = (condition or {}).get("reason")
    if condition is not None and condition.get("status") in ("True", "False"):
        if condition.get("status") == "True" or reason not in (CANCELLED_REASON, TIMEOUT_REASON):
            found.add(ReleaseReason.PIPELINE_RUN_DONE)
    wanted = spec.get("status")
    if wanted == "Cancelled" or (condition or {}).get("status") == "False" and reason == CANCELLED_REASON:
        found.add(ReleaseReason.PIPELINE_RUN_CANCELLED)
    if wanted == "CancelledRunFinally" and no_group_task_can_run(pipeline_run, task_runs, group_tasks, running_dag_tasks_finish=False):
        found.add(ReleaseReason.PIPELINE_RUN_CANCELLED)
    if wanted == "StoppedRunFinally" and no_group_task_can_run(pipeline_run, task_runs, group_tasks, running_dag_tasks_finish=True):
        found.add(ReleaseReason.PIPELINE_RUN_STOPPED)
    timeouts = spec.get("timeouts") or {}
    started = _parse_time(status.get("startTime"))
    if (condition or {}).get("status") == "False" and reason == TIMEOUT_REASON:
        found.add(ReleaseReason.PIPELINE_RUN_TIMED_OUT)
    pipeline_limit, tasks_limit = _duration(timeouts.get("pipeline")), _duration(timeouts.get("tasks"))
    if started is not None and pipeline_limit and now - started > pipeline_limit:
        found.add(ReleaseReason.PIPELINE_RUN_TIMED_OUT)
    if started is not None and tasks_limit and now - started > tasks_limit and no_group_task_can_run(
        pipeline_run, task_runs, group_tasks, running_dag_tasks_finish=False,
    ):
        found.add(ReleaseReason.PIPELINE_RUN_TIMED_OUT)
    return found


def no_group_task_can_run(pipeline_run: Obj, task_runs: Iterable[Obj], group_tasks: Iterable[str], *, running_dag_tasks_finish: bool) -> bool:
    """no_group_task_can_run() is section 8's test for a graceful stop: none of the group's tasks can run any more.

    CancelledRunFinally and an elapsed `timeouts.tasks` cancel the DAG tasks and
    run finally tasks: the group's finally tasks must be done (or skipped).
    StoppedRunFinally lets running DAG tasks finish, retries included, and
    starts no new one (`running_dag_tasks_finish`): a DAG task that has a
    TaskRun must be done too. A task counts as a DAG task only when the
    resolved `status.pipelineSpec.tasks` names it.

    Example: group {build, report}, report a finally task not started yet:
    False under CancelledRunFinally until report's TaskRun is done.
    """
    resolved = (pipeline_run.get("status") or {}).get("pipelineSpec") or {}
    dag_tasks = {t.get("name") for t in resolved.get("tasks") or []}
    started = {((t.get("metadata") or {}).get("labels") or {}).get(PIPELINE_TASK_LABEL) for t in task_runs}
    must_be_done = [
        task for task in group_tasks
        if task not in dag_tasks or (running_dag_tasks_finish and task in started)
    ]
    return tasks_done(pipeline_run, task_runs, must_be_done)
