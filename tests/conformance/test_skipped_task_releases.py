"""skipped_task_releases: a group whose last task is skipped by a `when` expression is Released promptly, while its run goes on.

The fault it exists to catch: a scheduler that waits for a TaskRun of every
group task before it counts the group done, so that a task Tekton skipped
(which never gets a TaskRun) holds the group until the whole PipelineRun is
over (tests/mutants/faults.py: skipped_tasks_awaited), and, with it, any
scheduler that holds a group whose tasks are done until its run ends
(release_only_when_run_done). docs/contract.md section 8: a task listed in
`status.skippedTasks` is done, the group MUST be Released once every task of
it is done, and SHOULD be promptly. Here the run goes on with a held task in
no group, so the run's end never comes to the rescue: the contract monitor's
`release-late` fails such a scheduler `release_late` (15 s) after it first
saw the release due, before this scenario's own wait for Released
(`record_state`, 30 s) runs out.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_running,
    task_must_be_skipped,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="skipped_task_releases",
    description="A's group is fetch then deploy, which a false `when` expression skips; A runs on with a held task in no group: the group is Released once fetch is done and deploy skipped, while A still runs, within release_late of the release falling due",
    features=(Feature.RELEASE,),
    fixtures=("skipped_task_releases",),
    pool=PoolSpec(count=1),
    volumes=("source",),
)
NAME = "skipped-task-releases"

# Groups, by hand: fetch and deploy use the PVC workspace, notify uses none, so the only group is
# {fetch, deploy}; they run in a chain, so its peak is deploy's 2400/4800 of the node's CPU (deploy
# counts though it will be skipped, section 6) and no memory. notify is a plain pod.


def test_skipped_task_releases(run: ScenarioRun) -> None:
    run.apply("skipped_task_releases")
    fetch, node, record = task_must_hold_its_group(run, NAME, "fetch")
    group_must_have(
        run, record, "fetch", tasks={"fetch", "deploy"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * 2400 // 4800, peak_memory_bytes=0,
    )
    notify = task_pod_must_be_bound(run, NAME, "notify")
    pod_must_be_running(run, notify["metadata"]["name"])

    # The group's release falls due: fetch's TaskRun done, deploy skipped by its guard.
    run.release_pod(fetch["metadata"]["name"])
    taskrun_must_be_done(run, NAME, "fetch")
    task_must_be_skipped(run, NAME, "deploy", reason="When Expressions evaluated to false")
    # The monitor's release-late decides a scheduler that holds the group on (release_late < record_state).
    group_must_be(run, NAME, "fetch", state=State.RELEASED, node=node)
    assert run.pod(notify["metadata"]["name"])["status"]["phase"] == "Running", "notify ended early: the scenario needs the run still running"
    ended = [c for c in (run.pipeline_run(NAME).get("status") or {}).get("conditions") or [] if c.get("status") != "Unknown"]
    assert not ended, f"PipelineRun {NAME} ended ({ended}) before its group was Released: the scenario needs it running"

    run.release_pod(notify["metadata"]["name"])
    pipelinerun_must_succeed(run, NAME)
