"""Release: when a group's reservation can go, read from Tekton v1 PipelineRun and TaskRun JSON.

A reservation exists so that the group's next pod finds room on its node. It
must outlive every pod of the group that may still come, and no longer. The
pods alone cannot tell: between a failed attempt and its retry every pod of
the task is terminal (the retry gap), yet Tekton will create another one. So
the decision reads Tekton's own records, with Tekton's rules
(``pkg/apis/pipeline/v1`` and ``pkg/reconciler/taskrun`` at v1.15.0):

* A TaskRun is done when its Succeeded condition is True, or False with no
  retry to come. Tekton retries a TaskRun whose Succeeded turned False while
  ``len(status.retriesStatus) < spec.retries`` and it is not cancelled
  (``spec.status: TaskRunCancelled``): it archives the attempt into
  ``retriesStatus`` and sets Succeeded back to Unknown, reason ToBeRetried.
* A pipeline task is done when every TaskRun of it (several for a matrix) is
  done, or when the PipelineRun lists it in ``status.skippedTasks``.
* Tasks map to TaskRuns through ``status.childReferences[]``
  (pipelineTaskName -> name).
* A custom task's child is a CustomRun (``kind: CustomRun`` in
  ``childReferences``), read like a TaskRun, except that its own controller
  retries it (Succeeded stays Unknown meanwhile): Succeeded True or False is
  its end, as Tekton's PipelineRun reconciler takes it (``isFailure``: every
  CustomRun done, one failed).
* A task that runs a Pipeline (pipelines in pipelines, alpha) has a child
  PipelineRun (``kind: PipelineRun`` in ``childReferences``), done the same
  way: Succeeded True or False (``isFailure``: every child PipelineRun done,
  one failed). Its own tasks are that PipelineRun's, with a record of its own.

The whole PipelineRun ends the reservation too: gone or being deleted; done
(Succeeded not Unknown); ``spec.status: Cancelled`` (every TaskRun is
cancelled and finally tasks do not run); past ``spec.timeouts.pipeline``
(finally tasks are skipped too).

Graceful stops keep finally tasks alive, and a finally task may share the
group's workspace, so they release no more than they must:

* ``CancelledRunFinally`` (and ``timeouts.tasks`` elapsed): Tekton cancels the
  DAG tasks, which are not retried once cancelled, and runs finally; the group
  is released once each of its tasks is done, skipped, or a DAG task.
* ``StoppedRunFinally``: running DAG tasks run to the end, retries included,
  and no new ones start; the group is released once each task is done,
  skipped, or a DAG task that never started.

A task counts as a DAG task only when ``status.pipelineSpec.tasks`` names it;
without the resolved spec every unfinished task might be a finally task, and
the group waits for Tekton's own status.

Worked example: group {build, test}; build Succeeded=True; test's TaskRun has
``spec.retries: 2``, one entry in ``retriesStatus`` and Succeeded False (its
pods all terminal). One retry is left, so test is not done:
``ReleaseDecision(False, "TaskRetryPending", ...)``. After the second retry fails
(two entries, Succeeded False) it is: ``ReleaseDecision(True, "TasksDone", ...)``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from typing import Any, Mapping, TypeAlias

from reference_scheduler.core.json_path import value_at

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw object as the API returns it (a PipelineRun or a TaskRun)."""

SUCCEEDED = "Succeeded"
"""SUCCEEDED is the condition type Tekton reports a run's outcome in."""

PIPELINE_RUN_SPEC_STATUS_CANCELLED = "Cancelled"
PIPELINE_RUN_SPEC_STATUS_CANCELLED_RUN_FINALLY = "CancelledRunFinally"
PIPELINE_RUN_SPEC_STATUS_STOPPED_RUN_FINALLY = "StoppedRunFinally"
PIPELINE_RUN_REASON_CANCELLED = "Cancelled"
PIPELINE_RUN_REASON_TIMED_OUT = "PipelineRunTimeout"
TASK_RUN_SPEC_STATUS_CANCELLED = "TaskRunCancelled"
#: The kind of a custom task's child run (tekton.dev/v1beta1), and its cancel request.
CUSTOM_RUN_KIND = "CustomRun"
#: The kind of a child-pipeline task's child run (pipelines in pipelines, tekton.dev/v1).
CHILD_PIPELINE_RUN_KIND = "PipelineRun"
#: Children that Tekton never retries itself: Succeeded False is their end.
CHILD_KINDS_DONE_AT_FALSE = frozenset({CUSTOM_RUN_KIND, CHILD_PIPELINE_RUN_KIND})
CUSTOM_RUN_SPEC_STATUS_CANCELLED = "RunCancelled"
TASK_RUN_REASON_CANCELLED = "TaskRunCancelled"
TASK_RUN_REASON_TO_BE_RETRIED = "ToBeRetried"


class ReleaseReason(StrEnum):
    """ReleaseReason says why a group was released, or why it is still held.

    The first six release; the others hold and name what is awaited.

    Example: ``ReleaseReason.TASKS_DONE == "TasksDone"``.
    """

    TASKS_DONE = "TasksDone"
    PIPELINE_RUN_DONE = "PipelineRunDone"
    PIPELINE_RUN_CANCELLED = "PipelineRunCancelled"
    PIPELINE_RUN_STOPPED = "PipelineRunStopped"
    PIPELINE_RUN_TIMED_OUT = "PipelineRunTimedOut"
    PIPELINE_RUN_DELETED = "PipelineRunDeleted"

    TASK_NOT_STARTED = "TaskNotStarted"
    TASK_RUN_NOT_FOUND = "TaskRunNotFound"
    TASK_RUNNING = "TaskRunning"
    TASK_RETRY_PENDING = "TaskRetryPending"


@dataclass(frozen=True)
class ReleaseDecision:
    """ReleaseDecision is the verdict for one group: release or hold, a reason, and a line for humans.

    ``reason`` is a ``ReleaseReason`` value, for ``status.groups[].releaseReason``
    and metric labels; ``message`` names the task or condition that decided.

    Example: ``ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_CANCELLED,
    "PipelineRun spec.status is Cancelled")``.
    """

    release: bool
    reason: str
    message: str = ""


class TaskRunProgress(StrEnum):
    """TaskRunProgress is where one TaskRun stands, as far as its pods-to-come are concerned.

    Example: a TaskRun with Succeeded Unknown and reason ToBeRetried is
    ``RETRY_PENDING``: it has no pod right now but will have one.
    """

    RUNNING = "Running"
    RETRY_PENDING = "RetryPending"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"

    @property
    def done(self) -> bool:
        return self in (TaskRunProgress.SUCCEEDED, TaskRunProgress.FAILED)




def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def succeeded_condition(obj: Json) -> Mapping[str, Any] | None:
    """succeeded_condition is the object's ``status.conditions`` entry of type Succeeded, if any.

    Example: ``succeeded_condition({"status": {"conditions": [{"type": "Succeeded",
    "status": "True"}]}})["status"] == "True"``.
    """
    for condition in _list(value_at(obj, "status", "conditions")):
        if isinstance(condition, Mapping) and condition.get("type") == SUCCEEDED:
            return condition
    return None


def _condition_status(obj: Json) -> str:
    """True, False or Unknown; a missing condition is Unknown, as Tekton reads it."""
    condition = succeeded_condition(obj)
    status = condition.get("status") if condition is not None else None
    return status if status in ("True", "False") else "Unknown"


def retries_left(task_run: Json) -> int:
    """retries_left is how many more attempts Tekton will make: ``spec.retries - len(status.retriesStatus)``.

    Never negative.

    Example: ``spec.retries: 2`` with one ``retriesStatus`` entry leaves 1.
    """
    retries = value_at(task_run, "spec", "retries")
    allowed = retries if isinstance(retries, int) and not isinstance(retries, bool) else 0
    return max(0, allowed - len(_list(value_at(task_run, "status", "retriesStatus"))))


def task_run_cancelled(task_run: Json) -> bool:
    """task_run_cancelled: the TaskRun was cancelled, so Tekton will not retry it.

    Example: ``spec.status: TaskRunCancelled`` (set by a user, or by the
    PipelineRun on cancel or timeout) makes it True.
    """
    if value_at(task_run, "spec", "status") in (TASK_RUN_SPEC_STATUS_CANCELLED, CUSTOM_RUN_SPEC_STATUS_CANCELLED):
        return True
    condition = succeeded_condition(task_run)
    return condition is not None and condition.get("reason") == TASK_RUN_REASON_CANCELLED


def task_run_progress(task_run: Json) -> TaskRunProgress:
    """task_run_progress classifies a TaskRun with Tekton's retry rule.

    * Succeeded True: SUCCEEDED.
    * Succeeded False: FAILED if cancelled or no retry is left, else
      RETRY_PENDING (Tekton is about to archive the attempt and retry; every
      pod may be terminal right now, the retry's pod is still to come).
    * Unknown with reason ToBeRetried: RETRY_PENDING; otherwise RUNNING.
    * A CustomRun (``kind: CustomRun``): Succeeded False is FAILED; its
      controller, not Tekton, retries it, keeping Succeeded Unknown meanwhile.
      So is a child PipelineRun (``kind: PipelineRun``), which Tekton never retries.

    Example: ``spec.retries: 1``, no ``retriesStatus``, Succeeded False, reason
    Failed: RETRY_PENDING; with one ``retriesStatus`` entry: FAILED.
    """
    status = _condition_status(task_run)
    if status == "True":
        return TaskRunProgress.SUCCEEDED
    if status == "False":
        if task_run.get("kind") in CHILD_KINDS_DONE_AT_FALSE or task_run_cancelled(task_run) or retries_left(task_run) == 0:
            return TaskRunProgress.FAILED
        return TaskRunProgress.RETRY_PENDING
    condition = succeeded_condition(task_run)
    if condition is not None and condition.get("reason") == TASK_RUN_REASON_TO_BE_RETRIED:
        return TaskRunProgress.RETRY_PENDING
    return TaskRunProgress.RUNNING


def task_run_names(pipeline_run: Json) -> dict[str, list[str]]:
    """task_run_names maps each pipeline task to its child run names, from ``status.childReferences``.

    A matrixed task has several.

    Example: ``{"status": {"childReferences": [{"pipelineTaskName": "build",
    "name": "run-1-build"}]}}`` gives ``{"build": ["run-1-build"]}``.
    """
    names: dict[str, list[str]] = {}
    for ref in _list(value_at(pipeline_run, "status", "childReferences")):
        if not isinstance(ref, Mapping):
            continue
        task, name = ref.get("pipelineTaskName"), ref.get("name")
        if isinstance(task, str) and isinstance(name, str) and name:
            names.setdefault(task, []).append(name)
    return names


def child_run_kinds(pipeline_run: Json) -> dict[str, str]:
    """child_run_kinds maps each child run ``status.childReferences`` lists as other than a TaskRun to its kind.

    A custom task's child is a CustomRun; a task that runs a Pipeline has a child PipelineRun.

    Example: ``{"status": {"childReferences": [{"kind": "CustomRun", "pipelineTaskName": "approve",
    "name": "run-1-approve"}, {"kind": "TaskRun", "pipelineTaskName": "build", "name": "run-1-build"}]}}``
    gives ``{"run-1-approve": "CustomRun"}``.
    """
    return {
        str(ref["name"]): str(ref["kind"])
        for ref in _list(value_at(pipeline_run, "status", "childReferences"))
        if isinstance(ref, Mapping) and ref.get("kind") in CHILD_KINDS_DONE_AT_FALSE and isinstance(ref.get("name"), str) and ref["name"]
    }


_GO_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_GO_DURATION_UNITS = {
    "ns": timedelta(microseconds=0.001),
    "us": timedelta(microseconds=1),
    "µs": timedelta(microseconds=1),
    "μs": timedelta(microseconds=1),
    "ms": timedelta(milliseconds=1),
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "h": timedelta(hours=1),
}


def parse_go_duration(text: str) -> timedelta | None:
    """parse_go_duration reads a Go duration as metav1.Duration serialises it; None if it is not one.

    Example: ``parse_go_duration("1h30m0s") == timedelta(minutes=90)``,
    ``parse_go_duration("0s") == timedelta(0)``, ``parse_go_duration("soon") is None``.
    """
    if not isinstance(text, str) or not text:
        return None
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body == "0":
        return timedelta(0)
    position, result = 0, timedelta(0)
    for match in _GO_DURATION_PART.finditer(body):
        if match.start() != position:
            return None
        result += float(match.group(1)) * _GO_DURATION_UNITS[match.group(2)]
        position = match.end()
    if position != len(body) or position == 0:
        return None
    return sign * result


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _timeout(pipeline_run: Json, field: str) -> timedelta | None:
    """A positive timeout from spec.timeouts; None when unset, zero (no timeout) or invalid."""
    raw = value_at(pipeline_run, "spec", "timeouts", field)
    duration = parse_go_duration(raw) if isinstance(raw, str) else None
    return duration if duration is not None and duration > timedelta(0) else None


def _tasks_timeout(pipeline_run: Json) -> timedelta | None:
    """spec.timeouts.tasks, else pipeline - finally when both are set, as Tekton derives it."""
    tasks = value_at(pipeline_run, "spec", "timeouts", "tasks")
    if tasks is not None:
        return _timeout(pipeline_run, "tasks")
    pipeline, final = _timeout(pipeline_run, "pipeline"), _timeout(pipeline_run, "finally")
    if pipeline is None or final is None:
        return None
    return pipeline - final


def _aware(moment: datetime) -> datetime:
    """A naive datetime is taken as UTC, the zone the API server writes."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _elapsed_beyond(pipeline_run: Json, timeout: timedelta | None, now: datetime | None) -> bool:
    start = _parse_time(value_at(pipeline_run, "status", "startTime"))
    if timeout is None or now is None or start is None:
        return False
    return _aware(now) - _aware(start) > timeout


def _dag_task_names(pipeline_run: Json) -> frozenset[str]:
    """Names in status.pipelineSpec.tasks: tasks known not to be finally tasks."""
    return frozenset(
        str(task.get("name"))
        for task in _list(value_at(pipeline_run, "status", "pipelineSpec", "tasks"))
        if isinstance(task, Mapping) and task.get("name")
    )


def _task_state(
    task: str, refs: Mapping[str, list[str]], task_runs: Mapping[str, Json]
) -> tuple[bool, ReleaseReason, str]:
    """(done, hold reason if not, message) for one pipeline task from its TaskRuns."""
    names = refs.get(task)
    if not names:
        return False, ReleaseReason.TASK_NOT_STARTED, f"task {task} has no TaskRun yet"
    for name in sorted(names):
        task_run = task_runs.get(name)
        if task_run is None:
            return False, ReleaseReason.TASK_RUN_NOT_FOUND, f"task {task}: TaskRun {name} not found"
        progress = task_run_progress(task_run)
        if progress is TaskRunProgress.RETRY_PENDING:
            return (
                False,
                ReleaseReason.TASK_RETRY_PENDING,
                f"task {task}: TaskRun {name} failed with {retries_left(task_run)} retries left"
                if _condition_status(task_run) == "False"
                else f"task {task}: TaskRun {name} is waiting for its retry",
            )
        if progress is TaskRunProgress.RUNNING:
            return False, ReleaseReason.TASK_RUNNING, f"task {task}: TaskRun {name} is running"
    return True, ReleaseReason.TASKS_DONE, f"task {task} is done"


def release_decision(
    group_tasks: Collection[str],
    pipeline_run: Json | None,
    task_runs: Mapping[str, Json],
    *,
    now: datetime | None = None,
) -> ReleaseDecision:
    """release_decision says whether a group's reservation can be released, and why.

    ``group_tasks`` are the group's pipeline task names; ``pipeline_run`` is
    the PipelineRun (None when it no longer exists); ``task_runs`` maps TaskRun
    names to TaskRuns (at least the group's). ``now`` (naive means UTC) enables
    the timeout checks; without it timeouts count only once Tekton reports them.

    Checked in order: PipelineRun deleted; PipelineRun done; cancelled;
    pipeline timeout elapsed; then every group task (see the module docstring).
    A group with no tasks is vacuously done.

    Example: ``release_decision({"build"}, None, {})`` is
    ``ReleaseDecision(True, "PipelineRunDeleted", "PipelineRun is gone")``.
    """
    if pipeline_run is None:
        return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_DELETED, "PipelineRun is gone")
    if value_at(pipeline_run, "metadata", "deletionTimestamp"):
        return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_DELETED, "PipelineRun is being deleted")

    status = _condition_status(pipeline_run)
    if status != "Unknown":
        condition = succeeded_condition(pipeline_run) or {}
        reason = condition.get("reason") or ""
        message = f"PipelineRun Succeeded={status} ({reason})" if reason else f"PipelineRun Succeeded={status}"
        if status == "False" and reason == PIPELINE_RUN_REASON_CANCELLED:
            return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_CANCELLED, message)
        if status == "False" and reason == PIPELINE_RUN_REASON_TIMED_OUT:
            return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_TIMED_OUT, message)
        return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_DONE, message)

    spec_status = value_at(pipeline_run, "spec", "status")
    if spec_status == PIPELINE_RUN_SPEC_STATUS_CANCELLED:
        return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_CANCELLED, "PipelineRun spec.status is Cancelled")
    pipeline_timeout = _timeout(pipeline_run, "pipeline")
    if _elapsed_beyond(pipeline_run, pipeline_timeout, now):
        return ReleaseDecision(
            True, ReleaseReason.PIPELINE_RUN_TIMED_OUT, f"PipelineRun ran past timeouts.pipeline {pipeline_timeout}"
        )

    # Which graceful stop, if any, lets DAG tasks count as finished.
    graceful: tuple[ReleaseReason, str, bool] | None = None  # (reason, message, running DAG tasks too)
    if spec_status == PIPELINE_RUN_SPEC_STATUS_CANCELLED_RUN_FINALLY:
        graceful = (ReleaseReason.PIPELINE_RUN_CANCELLED, "PipelineRun spec.status is CancelledRunFinally", True)
    elif _elapsed_beyond(pipeline_run, _tasks_timeout(pipeline_run), now):
        graceful = (ReleaseReason.PIPELINE_RUN_TIMED_OUT, "PipelineRun ran past its tasks timeout", True)
    elif spec_status == PIPELINE_RUN_SPEC_STATUS_STOPPED_RUN_FINALLY:
        graceful = (ReleaseReason.PIPELINE_RUN_STOPPED, "PipelineRun spec.status is StoppedRunFinally", False)

    refs = task_run_names(pipeline_run)
    skipped = frozenset(
        str(s.get("name")) for s in _list(value_at(pipeline_run, "status", "skippedTasks")) if isinstance(s, Mapping)
    )
    dag_tasks = _dag_task_names(pipeline_run)
    released_by_graceful_stop = False
    for task in sorted(group_tasks):
        if task in skipped:
            continue
        done, hold_reason, message = _task_state(task, refs, task_runs)
        if done:
            continue
        if graceful is not None and task in dag_tasks:
            _, _, cancels_running = graceful
            if cancels_running or hold_reason is ReleaseReason.TASK_NOT_STARTED:
                released_by_graceful_stop = True
                continue
        return ReleaseDecision(False, hold_reason, message)

    if graceful is not None and released_by_graceful_stop:
        reason, message, _ = graceful
        return ReleaseDecision(True, reason, message)
    return ReleaseDecision(True, ReleaseReason.TASKS_DONE, "every task of the group is done or skipped")
