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
from harness.suite import graceful_stops
from harness.suite.checks import group_must_be, task_pod_must_not_exist, task_pod_must_stay_pending, taskrun_must_be_done
from harness.suite.features import Feature
from harness.suite.graceful_stops import group_ready_to_stop, report_must_land_then_b
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="graceful_cancel_keeps_finally",
    description="A run whose finally task (3800m) shares its workspace is stopped with CancelledRunFinally while its 200m DAG task runs: the group stays Reserved while a quota holds the finally pod back, B (2000m) waits, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=graceful_stops.FIXTURES,
    pool=graceful_stops.POOL,
    volumes=graceful_stops.VOLUMES,
)


def test_graceful_cancel_keeps_finally(run: ScenarioRun) -> None:
    group = group_ready_to_stop(run)

    # The stop: small is cancelled, report is still to run but has no pod while the quota lasts.
    run.cancel("graceful-cancel-keeps-finally-a", status="CancelledRunFinally")
    taskrun_must_be_done(run, "graceful-cancel-keeps-finally-a", "small")
    task_pod_must_stay_pending(run, "graceful-cancel-keeps-finally-b", "only")
    group_must_be(run, "graceful-cancel-keeps-finally-a", "small", state=State.RESERVED, node=group.node, claim_generation=group.generation)
    task_pod_must_not_exist(run, "graceful-cancel-keeps-finally-a", "report", attempt=0)

    report_must_land_then_b(run, group, a_ends_with="Cancelled")
