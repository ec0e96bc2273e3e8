"""failed_task_keeps_finally: a group whose DAG task fails for good keeps its reservation while a finally task of it is still to run.

docs/contract.md section 8: a group is released once every task of it is
done. A DAG task that fails with no retry left is done, but its PipelineRun
is not: Tekton starts no new DAG task and runs the finally tasks, and a
finally task that shares the group's workspace is in the group (section 4).
So the group must keep its peak until that task is done too.

The fault it exists to catch: a failed task read as the end of its run
(mutant `failed_task_ends_group`): the group is released when `small`
fails, and B, pending beside A's peak, takes the room meant for the finally
task `report` (the monitor also finds the release untrue, rule
`release-reason-untrue`). The fixtures are the graceful-stop set
(harness/suite/graceful_stops.py): the same group, the same quota holding
report's pod back, so the gap between the failure and the finally pod lasts
the whole `pod_stays_pending` window instead of Tekton's few milliseconds;
only the way `small` ends differs (it exits 1 when released, and has no
retries).

What Tekton v1.15 does: the TaskRun of `small` ends Succeeded False (reason
Failed), the PipelineRun stays Unknown (reason Running) and creates report's
TaskRun, which waits as ExceededResourceQuota under the quota; once `report`
is done the PipelineRun ends Succeeded False, reason Failed.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite import graceful_stops
from harness.suite.checks import group_must_be, pod_must_be_finished, task_pod_must_not_exist, task_pod_must_stay_pending, taskrun_must_be_done
from harness.suite.features import Feature
from harness.suite.graceful_stops import group_ready_to_stop, report_must_land_then_b
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="failed_task_keeps_finally",
    description="A run's 200m DAG task fails for good while its finally task (3800m) shares its workspace: the group stays Reserved while a quota holds the finally pod back, B (2000m) waits, the finally task lands on the group's node under the same claim, and only then is the group Released and B binds",
    features=(Feature.RELEASE,),
    fixtures=graceful_stops.FIXTURES,
    pool=graceful_stops.POOL,
    volumes=graceful_stops.VOLUMES,
)


def test_failed_task_keeps_finally(run: ScenarioRun) -> None:
    a, b = run.named("a"), run.named("b")
    group = group_ready_to_stop(run, small_exit_codes="1")

    # The failure: small exits 1 with no retry left; report is still to run but has no pod while the quota lasts.
    run.release_pod(group.small["metadata"]["name"])
    assert pod_must_be_finished(run, group.small["metadata"]["name"]) == "Failed", "small's pod was meant to fail (exit code 1)"
    small = taskrun_must_be_done(run, a, "small")
    succeeded = next(c for c in small["status"]["conditions"] if c.get("type") == "Succeeded")
    assert succeeded.get("status") == "False", f"small's TaskRun was meant to fail, but ended {succeeded}"
    task_pod_must_stay_pending(run, b, "only")
    group_must_be(run, a, "small", state=State.RESERVED, node=group.node, claim_generation=group.generation)
    task_pod_must_not_exist(run, a, "report", attempt=0)

    report_must_land_then_b(run, group, a_ends_with="Failed")
