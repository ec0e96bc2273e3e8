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
graceful_cancel_keeps_finally's, with `timeouts: {pipeline: 1h, tasks: 20s}`
on A: the same group, the same quota holding report's pod back after the
stop, only the stop differs.

What Tekton v1.15 does (pkg/reconciler/pipelinerun: HaveTasksTimedOut,
timeoutPipelineTasksForTaskNames; checked by this scenario in every run):
once `status.startTime` + 20 s has passed it patches small's TaskRun to
`spec.status: TaskRunCancelled`, creates report's TaskRun (which waits as
ExceededResourceQuota under the quota), and once report is done the
PipelineRun ends Succeeded False, reason PipelineRunTimeout. Until then its
condition stays Unknown, so only `timeouts.tasks` itself says the DAG tasks
are over.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.errors import HarnessError
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    group_must_have,
    group_must_stay,
    pipelinerun_must_end_with,
    pipelinerun_must_list_task,
    pipelinerun_must_succeed,
    pod_creation_must_be_allowed,
    pod_creation_must_be_denied,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_exist,
    task_pod_must_not_exist,
    task_pod_must_stay_pending,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="tasks_timeout_keeps_finally",
    description="A run whose finally task (3800m) shares its workspace reaches its timeouts.tasks (20s) while its 200m DAG task runs: the group stays Reserved while a quota holds the finally pod back, B (2000m) waits, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=("graceful_cancel_keeps_finally", "graceful_cancel_keeps_finally-b", "graceful_cancel_keeps_finally-quota"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)

# Long enough for the setup before the stop (A's first pod bound and Reserved,
# B's pod made, the quota in force: 2-4 s on local, up to ~10 s on kind), and
# checked: a setup that outlasts it is a harness error, not a verdict.
TASKS_TIMEOUT = "20s"

# By hand, on the single 4800m node: A's group is {small, report}; its peak is
# max(200, 3800) = 3800m (a finally task never overlaps a DAG task), memory 0.
# Until report is done the node holds 3800m of A, so 4800 - 3800 = 1000m is
# left, less than B's 2000m. Once the group is Released and report is done,
# 4800m is free and B fits.
PEAK_CPU = 3800


def test_tasks_timeout_keeps_finally(run: ScenarioRun) -> None:
    run.apply("graceful_cancel_keeps_finally", tasks_timeout=TASKS_TIMEOUT)
    _, node, record = task_must_hold_its_group(run, "a", "small")
    generation = claim_generation_of(record, "small")
    group_must_have(
        run, record, "small", tasks={"small", "report"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    pipelinerun_must_list_task(run, "a", "small")
    # B's pod must exist before the quota that holds report's pod back would refuse it too.
    run.apply("graceful_cancel_keeps_finally-b")
    task_pod_must_exist(run, "b", "only")
    quota = run.apply("graceful_cancel_keeps_finally-quota")
    pod_creation_must_be_denied(run)
    if run.task_pods("a", "report") or _task_run_ended(run, "a", "small"):
        raise HarnessError(
            f"A's timeouts.tasks ({TASKS_TIMEOUT}) elapsed before the quota holding report's pod back was in force: "
            "this cluster is too slow for the scenario's setup; raise TASKS_TIMEOUT"
        )

    # The stop: the tasks timeout cancels small; report is still to run but has no pod while the quota lasts.
    small = taskrun_must_be_done(run, "a", "small")
    if (small.get("spec") or {}).get("status") != "TaskRunCancelled":
        raise HarnessError(f"TaskRun {small['metadata']['name']} ended without Tekton cancelling it at timeouts.tasks: the scenario's stop did not happen")
    task_pod_must_stay_pending(run, "b", "only")
    group_must_be(run, "a", "small", state=State.RESERVED, node=node, claim_generation=generation)
    task_pod_must_not_exist(run, "a", "report", attempt=0)

    for doc in quota:
        run.delete(doc)
    pod_creation_must_be_allowed(run)
    run.nudge_task_run("a", "report")
    report = task_pod_must_be_bound(run, "a", "report")
    assert report["spec"]["nodeName"] == node, f"A's finally task report ran on {report['spec']['nodeName']}, not on its group's node {node}"
    group_must_stay(run, "a", "report", node=node, holders=(report,))
    group_must_be(run, "a", "report", state=State.RESERVED, node=node, claim_generation=generation)

    run.release_pod(report["metadata"]["name"])
    pipelinerun_must_end_with(run, "a", status="False", reason="PipelineRunTimeout")
    group_must_be(run, "a", "report", state=State.RELEASED, node=node, claim_generation=generation)
    b_pod = task_pod_must_be_bound(run, "b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "b")


def _task_run_ended(run: ScenarioRun, pipeline_run: str, task: str) -> bool:
    """_task_run_ended() is whether the task's TaskRun has a terminal Succeeded condition now."""
    return any(
        c.get("type") == "Succeeded" and c.get("status") != "Unknown"
        for task_run in run.task_runs(pipeline_run, task)
        for c in (task_run.get("status") or {}).get("conditions") or []
    )
