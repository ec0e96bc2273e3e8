"""group_done_frees_room: a group is Released when its own tasks are done, while its PipelineRun runs on.

The fault it exists to catch: releasing only when the whole PipelineRun is
over (docs/contract.md section 8, rule 1: "every task of the group is done").
A's group is one 3800m task; after it A runs a 100m task in no group for as
long as the test likes. B (2000m) needs the room A's group no longer needs.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_running,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="group_done_frees_room",
    description="A's group (one 3800m task) is done while A runs on with a 100m task in no group: the group is Released, and B (2000m, which fits only without that reservation) binds on the single node while A still runs",
    features=(Feature.RELEASE,),
    fixtures=("group_done_frees_room-a", "group_done_frees_room-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)


# Groups, by hand: build uses the PVC workspace, notify uses none, so the only group is
# {build} with peak 3800/4800 of the node's CPU and no memory; notify is a plain pod.

def test_group_done_frees_room(run: ScenarioRun) -> None:
    run.apply("group_done_frees_room-a")
    build = task_pod_must_be_bound(run, "group-done-frees-room-a", "build")
    node = build["spec"]["nodeName"]
    notify = task_pod_must_be_bound(run, "group-done-frees-room-a", "notify")
    pod_must_be_running(run, notify["metadata"]["name"])
    record = group_must_be(run, "group-done-frees-room-a", "build", state=State.RELEASED, node=node)
    group_must_have(
        run, record, "build", tasks={"build"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * 3800 // 4800, peak_memory_bytes=0,
    )

    run.apply("group_done_frees_room-b")
    b_pod = task_pod_must_be_bound(run, "group-done-frees-room-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    assert run.pod(notify["metadata"]["name"])["status"]["phase"] == "Running", "A's notify task ended early: the scenario needs A still running"
    run.release_pod(notify["metadata"]["name"])
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "group-done-frees-room-a")
    pipelinerun_must_succeed(run, "group-done-frees-room-b")
