"""finally_in_group: a finally task that shares the workspace belongs to the workspace's group.

The fault it exists to catch: finally tasks left out of their workspace group
(mutant `finally_outside_group`): the record lacks them, the peak ignores
them, and the finally task is placed as a plain pod, away from its volume.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import group_must_be, group_must_have, pipelinerun_must_succeed, task_pod_must_be_bound
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="finally_in_group",
    description="A DAG task and a finally task share a workspace: the record's group holds both, its peak is the larger, and the finally task lands on the group's node although another node is emptier",
    features=(Feature.COLOCATION,),
    fixtures=("finally_in_group", "finally_in_group-filler"),
    volumes=("source",),
)


# Memory peak, by hand: build asks for 0.1 of a node's memory, the finally task report for 0.2; a finally task never overlaps a DAG task.

def test_finally_in_group(run: ScenarioRun) -> None:
    run.apply("finally_in_group")
    build = task_pod_must_be_bound(run, "finally-in-group", "build")
    node = build["spec"]["nodeName"]
    record = group_must_be(run, "finally-in-group", "build", state=State.RESERVED, node=node)
    group_must_have(run, record, "build", tasks={"build", "report"}, workspaces={"source"}, peak_cpu_millis=int(run.node_cpu_millis() * 0.3), peak_memory_bytes=int(run.node_memory_bytes() * 0.2))

    run.apply("finally_in_group-filler", node=node)
    run.release_pod(build["metadata"]["name"])
    report = task_pod_must_be_bound(run, "finally-in-group", "report")
    assert report["spec"]["nodeName"] == node, f"the finally task ran on {report['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, "finally-in-group")
    group_must_be(run, "finally-in-group", "report", state=State.RELEASED, node=node)
