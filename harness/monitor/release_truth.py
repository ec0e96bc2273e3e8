"""release_truth: which release reasons are true of a PipelineRun and its TaskRuns, and which of them make a release due (docs/contract.md section 8).

One computation serves two rules. `release-reason-untrue` reads the
PipelineRun and its TaskRuns right after it sees a group Released and asks
which reasons hold (`ReleaseTruth.reasons`): every reason is monotone (a done
task stays done, a deleted run stays deleted), so a reason true at the release
is still true at that read; one that is false then was false at the release.
`release-late` asks which of them oblige the scheduler to release
(`ReleaseTruth.due`): those Tekton's status (or the API) states. Two reasons
are true without being due, because the contract lets a scheduler wait for
Tekton's verdict on them: `spec.status: Cancelled` alone (a scheduler MAY
release on the request and MUST once Tekton's `Cancelled` verdict is there),
and a timeout read from the clock (a scheduler SHOULD wait for Tekton's
`PipelineRunTimeout` rather than release on its own clock).

    release_truth(pipeline_run, task_runs, group_tasks={'build'}, record_uid=..., now=...)
        == ReleaseTruth(reasons={TASKS_DONE, PIPELINE_RUN_TIMED_OUT}, due={TASKS_DONE})
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from harness.contract.record import ReleaseReason
from harness.timestamps import optional_kube_time

#: The kind of a custom task's child run (tekton.dev/v1beta1): done as Tekton takes it (task_run_done).
CUSTOM_RUN_KIND = "CustomRun"
#: The kind of a child-pipeline task's child run (pipelines in pipelines): done the same way.
CHILD_PIPELINE_RUN_KIND = "PipelineRun"

Obj = Mapping[str, Any]

PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"
#: Tekton's PipelineRun condition reasons that the contract gives their own release reason.
CANCELLED_REASON = "Cancelled"
TIMEOUT_REASON = "PipelineRunTimeout"
#: The graceful stops (`spec.status`): a group's release is due once none of its tasks can run, whether or not each has a TaskRun.
GRACEFUL_STOPS = ("CancelledRunFinally", "StoppedRunFinally")


def _succeeded(obj: Obj) -> Obj | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)


def task_run_done(task_run: Obj) -> bool:
    """task_run_done() is section 8's rule: Succeeded True, or False with no retry to come.

    A CustomRun (a custom task's child, `kind: CustomRun`) is done at Succeeded True or False: its own
    controller retries it, keeping Succeeded Unknown meanwhile, and Tekton takes False as its end.
    So is a child PipelineRun (`kind: PipelineRun`, a task that runs a Pipeline), which Tekton never retries.
    """
    condition = _succeeded(task_run)
    if condition is None or condition.get("status") == "Unknown":
        return False
    if condition.get("status") == "True" or task_run.get("kind") in (CUSTOM_RUN_KIND, CHILD_PIPELINE_RUN_KIND):
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


@dataclass(frozen=True)
class ReleaseTruth:
    """ReleaseTruth is what holds for one group now: every release reason that is true, and those of them that make a release due.

    `due` is a subset of `reasons`. Example: a run asked to cancel
    (`spec.status: Cancelled`) whose TaskRuns Tekton has not cancelled yet has
    reasons {PipelineRunCancelled} and nothing due; once Tekton's verdict
    (`Succeeded` `False`, reason `Cancelled`) is written, it is due too.
    """

    reasons: frozenset[ReleaseReason] = frozenset()
    due: frozenset[ReleaseReason] = frozenset()


def owned_by(task_run: Obj, record_uid: str) -> bool:
    """owned_by() is False for a TaskRun whose controller is another PipelineRun than the record's (an earlier run of the same name).

    Tekton makes each TaskRun with a controller ownerReference to its
    PipelineRun; a TaskRun that names no controller (a hand-built one) is taken
    as the run's, since its label says so.
    """
    owners = [o for o in (task_run.get("metadata") or {}).get("ownerReferences") or [] if o.get("controller")]
    return not owners or any(o.get("uid") == record_uid for o in owners)


def release_truth(
    pipeline_run: Obj | None, task_runs: Iterable[Obj], *, group_tasks: Iterable[str], record_uid: str, now: datetime
) -> ReleaseTruth:
    """release_truth() is every release reason that holds now for a group of the record's PipelineRun, and those that are due.

    `pipeline_run` None means it is gone; a PipelineRun whose uid is not the
    record's is a new one of the same name, so the record's run is gone too.
    `task_runs` are the run's (by its label); those another PipelineRun
    controls are left out. `now` judges the timeouts, which are never due.
    """
    if pipeline_run is None or (pipeline_run.get("metadata") or {}).get("uid") != record_uid:
        gone = frozenset({ReleaseReason.PIPELINE_RUN_DELETED})
        return ReleaseTruth(gone, gone)
    task_runs = [t for t in task_runs if owned_by(t, record_uid)]
    group_tasks = list(group_tasks)
    due: set[ReleaseReason] = set()
    requested: set[ReleaseReason] = set()  # true, but Tekton's verdict on them may be waited for
    metadata, spec, status = pipeline_run.get("metadata") or {}, pipeline_run.get("spec") or {}, pipeline_run.get("status") or {}
    if metadata.get("deletionTimestamp"):
        due.add(ReleaseReason.PIPELINE_RUN_DELETED)
    if tasks_done(pipeline_run, task_runs, group_tasks):
        due.add(ReleaseReason.TASKS_DONE)
    condition = _succeeded(pipeline_run) or {}
    verdict, reason = condition.get("status"), condition.get("reason")
    if verdict == "True" or verdict == "False" and reason not in (CANCELLED_REASON, TIMEOUT_REASON):
        due.add(ReleaseReason.PIPELINE_RUN_DONE)
    if verdict == "False" and reason == CANCELLED_REASON:
        due.add(ReleaseReason.PIPELINE_RUN_CANCELLED)
    if verdict == "False" and reason == TIMEOUT_REASON:
        due.add(ReleaseReason.PIPELINE_RUN_TIMED_OUT)
    wanted = spec.get("status")
    if wanted == "Cancelled":
        requested.add(ReleaseReason.PIPELINE_RUN_CANCELLED)
    if wanted == "CancelledRunFinally" and no_group_task_can_run(pipeline_run, task_runs, group_tasks, running_dag_tasks_finish=False):
        due.add(ReleaseReason.PIPELINE_RUN_CANCELLED)
    if wanted == "StoppedRunFinally" and no_group_task_can_run(pipeline_run, task_runs, group_tasks, running_dag_tasks_finish=True):
        due.add(ReleaseReason.PIPELINE_RUN_STOPPED)
    timeouts = spec.get("timeouts") or {}
    started = optional_kube_time(status.get("startTime"))
    pipeline_limit, tasks_limit = _duration(timeouts.get("pipeline")), _duration(timeouts.get("tasks"))
    if started is not None and pipeline_limit and now - started > pipeline_limit:
        requested.add(ReleaseReason.PIPELINE_RUN_TIMED_OUT)
    if started is not None and tasks_limit and now - started > tasks_limit and no_group_task_can_run(
        pipeline_run, task_runs, group_tasks, running_dag_tasks_finish=False,
    ):
        requested.add(ReleaseReason.PIPELINE_RUN_TIMED_OUT)
    return ReleaseTruth(frozenset(due | requested), frozenset(due))


def true_reasons(
    pipeline_run: Obj | None, task_runs: Iterable[Obj], *, group_tasks: Iterable[str], record_uid: str, now: datetime
) -> set[ReleaseReason]:
    """true_reasons() is every release reason that holds now for a group of the record's PipelineRun (release_truth's `reasons`)."""
    return set(release_truth(pipeline_run, task_runs, group_tasks=group_tasks, record_uid=record_uid, now=now).reasons)


def release_may_be_due(pipeline_run: Obj | None, group_tasks: Iterable[str], *, record_uid: str) -> bool:
    """release_may_be_due() is False when the watched PipelineRun alone shows that no release of the group can be due yet.

    The monitor asks it before reading a run's TaskRuns, to read only runs
    where a read can find something: a release is due only when the run is
    gone, replaced or being deleted, has Tekton's verdict (`Succeeded` `True`
    or `False`), is stopping gracefully, or when every group task is skipped
    or has a TaskRun (Tekton names each in `status.childReferences` as it
    creates it). True, too, when in doubt (no PipelineRun watched).
    Example: group {fetch, deploy} of a running run that lists only fetch's
    TaskRun and skips nothing: False, deploy has not started.
    """
    if pipeline_run is None or (pipeline_run.get("metadata") or {}).get("uid") != record_uid:
        return True
    spec, status = pipeline_run.get("spec") or {}, pipeline_run.get("status") or {}
    if (pipeline_run.get("metadata") or {}).get("deletionTimestamp") or spec.get("status") in GRACEFUL_STOPS:
        return True
    if (_succeeded(pipeline_run) or {}).get("status") in ("True", "False"):
        return True
    started = {s.get("name") for s in status.get("skippedTasks") or []} | {c.get("pipelineTaskName") for c in status.get("childReferences") or []}
    return all(task in started for task in group_tasks)


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
