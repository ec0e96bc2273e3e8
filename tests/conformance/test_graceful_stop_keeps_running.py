"""graceful_stop_keeps_running: a run stopped with StoppedRunFinally keeps its group while a task of it still runs or can still run.

docs/contract.md section 8, "The PipelineRun is over for the group": a
graceful stop releases a group only once no task of it can run any more.
StoppedRunFinally lets the running DAG tasks run to their end, starts no new
DAG task, and then runs the finally tasks; here the group's DAG task `small`
is running at the stop and its finally task `report` shares the workspace
(section 4), so the group must keep its peak through both.

The fault it exists to catch: StoppedRunFinally read as a plain stop
(mutant `graceful_stop_releases_at_once`): the group is released at the
stop, while `small` still runs and `report` is still to come, and B, pending
beside A's peak, binds in the room meant for `report` (the monitor also
finds the release reason untrue: rule `release-reason-untrue`). A
ResourceQuota (`graceful_stop-quota`) holds report's pod back
once `small` is done, so the gap between the DAG task and the finally pod
lasts the whole `pod_stays_pending` window; B exists before the quota,
which would refuse its pod too.

What Tekton v1.15 does here (watched on the local cluster, KWOK pods): within
~1 ms of the stop the PipelineRun's reason becomes StoppedRunningFinally;
`small`'s TaskRun is not cancelled (no spec.status, Succeeded Unknown,
Running) and its pod runs on until the harness releases it (11 s later), when
the TaskRun ends Succeeded True. Tekton creates `report`'s TaskRun ~15 ms after
that: it runs the finally task once the running DAG task is done. Under the
quota `report`'s TaskRun waits as ExceededResourceQuota; after the quota is
lifted and the TaskRun nudged, its pod comes at once. Once `report` is done the
PipelineRun ends Succeeded False, reason Cancelled ("PipelineRun "a" was
cancelled"), ~20 ms later, although every task of it succeeded. The
reference released the group just before that, with reason TasksDone: both
tasks were done.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite import graceful_stops
from harness.suite.checks import (
    group_must_be,
    group_must_stay,
    pod_must_be_running,
    task_pod_must_not_exist,
    task_pod_must_stay_pending,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.graceful_stops import group_ready_to_stop, report_must_land_then_b
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="graceful_stop_keeps_running",
    description="A run whose finally task (3800m) shares its workspace is stopped with StoppedRunFinally while its 200m DAG task runs: the DAG task runs on and the group stays Reserved, B (2000m) waits through it and while a quota holds the finally pod back, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=graceful_stops.FIXTURES,
    pool=graceful_stops.POOL,
    volumes=graceful_stops.VOLUMES,
)

# By hand, beside graceful_stops' arithmetic: while small runs on after the stop
# the node holds small's 200m plus A's residual 3800 - 200 = 3600m. Released at
# the stop instead, A would hold only small's 200m: 4800 - 200 = 4600m, and B
# (2000m) would fit at once.


def test_graceful_stop_keeps_running(run: ScenarioRun) -> None:
    group = group_ready_to_stop(run)
    small = group.small

    # The stop: small runs on, report is still to come.
    run.cancel("graceful-stop-keeps-running-a", status="StoppedRunFinally")
    group_must_stay(run, "graceful-stop-keeps-running-a", "small", node=group.node, holders=(small,))
    task_pod_must_stay_pending(run, "graceful-stop-keeps-running-b", "only")
    pod_must_be_running(run, small["metadata"]["name"])
    group_must_be(run, "graceful-stop-keeps-running-a", "small", state=State.RESERVED, node=group.node, claim_generation=group.generation)

    # small ends on its own; report has no pod while the quota lasts.
    run.release_pod(small["metadata"]["name"])
    small_run = taskrun_must_be_done(run, "graceful-stop-keeps-running-a", "small")
    ended = next(c for c in small_run["status"]["conditions"] if c.get("type") == "Succeeded")
    assert ended.get("status") == "True", f"A's DAG task small ended {ended.get('status')} ({ended.get('reason')}): StoppedRunFinally should have let it run to its end"
    task_pod_must_stay_pending(run, "graceful-stop-keeps-running-b", "only")
    group_must_be(run, "graceful-stop-keeps-running-a", "report", state=State.RESERVED, node=group.node, claim_generation=group.generation)
    task_pod_must_not_exist(run, "graceful-stop-keeps-running-a", "report", attempt=0)

    # Tekton ends a StoppedRunFinally run False, reason Cancelled, even when every task succeeded.
    report_must_land_then_b(run, group, a_ends_with="Cancelled")
