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
ResourceQuota (the graceful_cancel_keeps_finally one) holds report's pod back
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
    pod_must_be_running,
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
    name="graceful_stop_keeps_running",
    description="A run whose finally task (3800m) shares its workspace is stopped with StoppedRunFinally while its 200m DAG task runs: the DAG task runs on and the group stays Reserved, B (2000m) waits through it and while a quota holds the finally pod back, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=("graceful_stop_keeps_running", "graceful_cancel_keeps_finally-b", "graceful_cancel_keeps_finally-quota"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)

# By hand, on the single 4800m node: A's group is {small, report}; its peak is
# max(200, 3800) = 3800m (a finally task never overlaps a DAG task), memory 0.
# While the group is Reserved the node holds 3800m of A whatever runs: while
# small runs on after the stop, small's 200m plus the residual 3800 - 200 =
# 3600m; after small is done and before report has a pod, the residual
# 3800 - 0; with report running, report's 3800m plus 0. That leaves
# 4800 - 3800 = 1000m, less than B's 2000m. Released at the stop instead, A
# would hold only small's 200m: 4800 - 200 = 4600m, and B would fit at once.
# Once the group is Released and report is done, 4800m is free and B fits.
PEAK_CPU = 3800


def test_graceful_stop_keeps_running(run: ScenarioRun) -> None:
    run.apply("graceful_stop_keeps_running")
    small, node, record = task_must_hold_its_group(run, "a", "small")
    generation = claim_generation_of(record, "small")
    group_must_have(
        run, record, "small", tasks={"small", "report"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    # Stop only once Tekton's status lists small's TaskRun, as graceful_cancel_keeps_finally does: the stop finds it running.
    pipelinerun_must_list_task(run, "a", "small")
    # B's pod must exist before the quota that holds report's pod back would refuse it too.
    run.apply("graceful_cancel_keeps_finally-b")
    task_pod_must_exist(run, "b", "only")
    quota = run.apply("graceful_cancel_keeps_finally-quota")
    pod_creation_must_be_denied(run)

    # The stop: small runs on, report is still to come.
    run.cancel("a", status="StoppedRunFinally")
    group_must_stay(run, "a", "small", node=node, holders=(small,))
    task_pod_must_stay_pending(run, "b", "only")
    pod_must_be_running(run, small["metadata"]["name"])
    group_must_be(run, "a", "small", state=State.RESERVED, node=node, claim_generation=generation)

    # small ends on its own; report has no pod while the quota lasts.
    run.release_pod(small["metadata"]["name"])
    small_run = taskrun_must_be_done(run, "a", "small")
    ended = next(c for c in small_run["status"]["conditions"] if c.get("type") == "Succeeded")
    assert ended.get("status") == "True", f"A's DAG task small ended {ended.get('status')} ({ended.get('reason')}): StoppedRunFinally should have let it run to its end"
    task_pod_must_stay_pending(run, "b", "only")
    group_must_be(run, "a", "report", state=State.RESERVED, node=node, claim_generation=generation)
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
