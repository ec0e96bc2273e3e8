"""idle_group_restart: a group with no pod alive keeps its room for as long as its next task takes to come, across a restart.

The faults it exists to catch: a reservation that expires on a timer (held for
so many seconds after its claim, or after its last pod), and a restarted
scheduler that counts only the groups it sees pods of. Real pipelines leave a
group idle for minutes, behind a long task elsewhere or a quota; every other
scenario's gap is a few seconds. Here idle-group-restart-a's group has no pod alive from
checkout's end to release's start, `group_idle` (25 s) before a scheduler
restart and as long after it, while idle-group-restart-b waits for exactly the room the
group holds, on the pool's only node.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="idle_group_restart",
    description="A group idle for 50 s (its next task behind a long task with no workspace) keeps its 0.8 on the only node across a scheduler restart in the middle: B (0.5) waits all along, and binds once the group is done",
    features=(Feature.RESTART,),
    fixtures=("idle_group_restart-a", "idle_group_restart-b"),
    pool=PoolSpec(count=1),
    volumes=("idle-source", "idle-group-restart-b-source"),
)


# By hand, on the one node: the group {checkout, release} reserves max(0.1, 0.8) = 0.8 CPU.
# integration (0.1) is a plain pod. In the gap: 0.1 (integration) + 0.8 (the group, no pod alive)
# leaves 0.1, and B asks 0.5: B must wait until the group is Released after release.


def test_idle_group_restart(run: ScenarioRun) -> None:
    run.apply("idle_group_restart-a")
    checkout, node, record = task_must_hold_its_group(run, "idle-group-restart-a", "checkout")
    generation = claim_generation_of(record, "checkout")
    run.release_pod(checkout["metadata"]["name"])
    assert pod_must_be_finished(run, checkout["metadata"]["name"]) == "Succeeded"
    integration = task_pod_must_be_bound(run, "idle-group-restart-a", "integration")

    run.apply("idle_group_restart-b")
    task_pod_must_stay_pending(run, "idle-group-restart-b", "only", duration="group_idle")
    run.restart_scheduler()
    task_pod_must_stay_pending(run, "idle-group-restart-b", "only", duration="group_idle")
    group_must_be(run, "idle-group-restart-a", "release", state=State.RESERVED, node=node, claim_generation=generation)

    run.release_pod(integration["metadata"]["name"])
    release = task_pod_must_be_bound(run, "idle-group-restart-a", "release", timeout="scheduler_failover")
    assert release["spec"]["nodeName"] == node, f"release ran on {release['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, "idle-group-restart-a")
    b_pod = task_pod_must_be_bound(run, "idle-group-restart-b", "only")
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "idle-group-restart-b")
