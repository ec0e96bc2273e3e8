"""tasks_timeout_keeps_finally: a run whose `timeouts.tasks` elapses keeps its group while a finally task of it can still run.

docs/contract.md section 8, "The PipelineRun is over for the group": an
elapsed `timeouts.tasks` is a graceful stop. Tekton cancels the DAG tasks
still running and then runs the finally tasks (within what is left of
`timeouts.pipeline`), so a group holding a finally task must keep its peak
until that task is done; `PipelineRunTimedOut` is true only then.

The fault it exists to catch: the tasks timeout read as the pipeline's
(mutant `tasks_timeout_read_as_pipeline_timeout`): the group is released when
`timeouts.tasks` elapses, and B, pending beside A's peak, takes the room meant
for the finally task `report` (the monitor also finds the reason
PipelineRunTimedOut untrue while `report` can still run). The fixtures are
the graceful-stop set (harness/suite/graceful_stops.py), with
`timeouts: {pipeline: 1h, tasks: 20s}` on A (45s on real kubelets): the same group, the same quota
holding report's pod back after the stop; only the stop differs.

What Tekton v1.15 does (pkg/reconciler/pipelinerun: HaveTasksTimedOut,
timeoutPipelineTasksForTaskNames; checked by this scenario in every run):
once `status.startTime` + the tasks timeout has passed it patches small's TaskRun to
`spec.status: TaskRunCancelled`, creates report's TaskRun (which waits as
ExceededResourceQuota under the quota), and once report is done the
PipelineRun ends Succeeded False, reason PipelineRunTimeout. Until then its
condition stays Unknown, so only `timeouts.tasks` itself says the DAG tasks
are over.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.errors import HarnessError
from harness.suite import graceful_stops
from harness.suite.checks import group_must_be, task_pod_must_not_exist, task_pod_must_stay_pending, taskrun_must_be_done
from harness.suite.features import Feature
from harness.suite.graceful_stops import group_ready_to_stop, report_must_land_then_b
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="tasks_timeout_keeps_finally",
    description="A run whose finally task (3800m) shares its workspace reaches its timeouts.tasks (20s on KWOK, 45s on real kubelets) while its 200m DAG task runs: the group stays Reserved while a quota holds the finally pod back, B (2000m) waits, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=graceful_stops.FIXTURES,
    pool=graceful_stops.POOL,
    volumes=graceful_stops.VOLUMES,
)

# Long enough for the setup before the stop (A's first pod bound and Reserved, B's pod made, the quota in
# force), and checked: a setup that outlasts it is a harness error, not a verdict. On KWOK's nodes the setup
# takes 2-4 s. On real kubelets A's first pod waits for its claim's provisioning (the local-path helper pod)
# before it is bound: up to ~10 s on kind, and on 2026-12-07, with six scenarios at a time on a slower
# machine, more than 20 s once (a setup error in one of three runs of the suite).
TASKS_TIMEOUT_ON_KWOK = "20s"
TASKS_TIMEOUT_ON_KUBELETS = "45s"


def test_tasks_timeout_keeps_finally(run: ScenarioRun) -> None:
    tasks_timeout = TASKS_TIMEOUT_ON_KWOK if run.cluster is not None and run.cluster.kind == "local" else TASKS_TIMEOUT_ON_KUBELETS
    group = group_ready_to_stop(run, tasks_timeout=tasks_timeout)
    if run.task_pods("tasks-timeout-keeps-finally-a", "report") or _task_run_ended(run, "tasks-timeout-keeps-finally-a", "small"):
        raise HarnessError(
            f"A's timeouts.tasks ({tasks_timeout}) elapsed before the quota holding report's pod back was in force: "
            "this cluster is too slow for the scenario's setup; raise TASKS_TIMEOUT_ON_KWOK or TASKS_TIMEOUT_ON_KUBELETS"
        )

    # The stop: the tasks timeout cancels small; report is still to run but has no pod while the quota lasts.
    small = taskrun_must_be_done(run, "tasks-timeout-keeps-finally-a", "small")
    if (small.get("spec") or {}).get("status") != "TaskRunCancelled":
        raise HarnessError(f"TaskRun {small['metadata']['name']} ended without Tekton cancelling it at timeouts.tasks: the scenario's stop did not happen")
    task_pod_must_stay_pending(run, "tasks-timeout-keeps-finally-b", "only")
    group_must_be(run, "tasks-timeout-keeps-finally-a", "small", state=State.RESERVED, node=group.node, claim_generation=group.generation)
    task_pod_must_not_exist(run, "tasks-timeout-keeps-finally-a", "report", attempt=0)

    report_must_land_then_b(run, group, a_ends_with="PipelineRunTimeout")


def _task_run_ended(run: ScenarioRun, pipeline_run: str, task: str) -> bool:
    """_task_run_ended() is whether the task's TaskRun has a terminal Succeeded condition now."""
    return any(
        c.get("type") == "Succeeded" and c.get("status") != "Unknown"
        for task_run in run.task_runs(pipeline_run, task)
        for c in (task_run.get("status") or {}).get("conditions") or []
    )
