"""graceful_cancel_keeps_finally: a run stopped with CancelledRunFinally keeps its group while a finally task of it can still run.

docs/contract.md section 8, "The PipelineRun is over for the group": a
graceful stop releases a group only once no task of it can run any more.
CancelledRunFinally cancels the DAG tasks and still runs the finally tasks,
and a finally task that shares the group's workspace is in the group
(section 4), so the group must keep its peak until that task is done.

The fault it exists to catch: CancelledRunFinally read as Cancelled
(mutant `graceful_cancel_releases_at_once`): the group is released at the
stop, and B, pending beside A's peak, takes the room meant for the finally
task `report` (the monitor also finds the reason PipelineRunCancelled untrue
while `report` can still run: rule `release-reason-untrue`). A ResourceQuota
holds report's pod back after the stop, so the gap between the stop and the
finally pod lasts the whole `pod_stays_pending` window instead of the
0.15-0.3 s Tekton takes; B exists before the quota, which would refuse its pod too.

What Tekton v1.15 does here (watched on the local cluster, KWOK pods):
within ~30 ms of the stop it sets `small`'s TaskRun to TaskRunCancelled and
deletes its pod (30 s grace, which KWOK cuts short); the PipelineRun's reason
becomes CancelledRunningFinally. It marks the TaskRun Succeeded False
(TaskRunCancelled) before the pod is gone (5 ms before, once) and creates
`report`'s TaskRun 70-90 ms after the stop: it does run the finally task
after cancelling a running DAG task. The finally pod came after the cancelled
pod was gone only because KWOK finishes a deletion at once; Tekton does not
wait for it, so beside a kubelet `small`'s pod may still be terminating while
`report` runs (section 7 counts it until it is gone: 200 + 3800 still fits).
Under the quota `report`'s TaskRun waits as ExceededResourceQuota. Once
`report` is done the PipelineRun ends Succeeded False, reason Cancelled.
"""

from __future__ import annotations

from harness.contract.record import State
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
    name="graceful_cancel_keeps_finally",
    description="A run whose finally task (3800m) shares its workspace is stopped with CancelledRunFinally while its 200m DAG task runs: the group stays Reserved while a quota holds the finally pod back, B (2000m) waits, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=("graceful_cancel_keeps_finally", "graceful_cancel_keeps_finally-b", "graceful_cancel_keeps_finally-quota"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)

# By hand, on the single 4800m node: A's group is {small, report}; its peak is
# max(200, 3800) = 3800m (a finally task never overlaps a DAG task), memory 0.
# While the group is Reserved the node holds 3800m of A whatever runs: small
# (200m) plus the residual 3800 - 200 = 3600m; after small is cancelled and
# before report has a pod, the residual 3800 - 0; with report running,
# report's 3800m plus 0. That leaves 4800 - 3800 = 1000m, less than B's 2000m.
# Once the group is Released and report is done, 4800m is free and B fits.
PEAK_CPU = 3800


def test_graceful_cancel_keeps_finally(run: ScenarioRun) -> None:
    run.apply("graceful_cancel_keeps_finally")
    _, node, record = task_must_hold_its_group(run, "a", "small")
    generation = claim_generation_of(record, "small")
    group_must_have(
        run, record, "small", tasks={"small", "report"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    # Tekton cancels only the TaskRuns it lists already: judge the scheduler only once Tekton has acted.
    pipelinerun_must_list_task(run, "a", "small")
    # B's pod must exist before the quota that holds report's pod back would refuse it too.
    run.apply("graceful_cancel_keeps_finally-b")
    task_pod_must_exist(run, "b", "only")
    quota = run.apply("graceful_cancel_keeps_finally-quota")
    pod_creation_must_be_denied(run)

    # The stop: small is cancelled, report is still to run but has no pod while the quota lasts.
    run.cancel("a", status="CancelledRunFinally")
    taskrun_must_be_done(run, "a", "small")
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
    pipelinerun_must_end_with(run, "a", status="False", reason="Cancelled")
    group_must_be(run, "a", "report", state=State.RELEASED, node=node, claim_generation=generation)
    b_pod = task_pod_must_be_bound(run, "b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "b")
