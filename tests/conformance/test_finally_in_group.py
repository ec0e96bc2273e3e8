"""finally_in_group: finally tasks that share the workspace belong to the workspace's group, and add up among themselves.

The faults it exists to catch: finally tasks left out of their workspace group
(mutant `finally_outside_group`): the record lacks them, the peak ignores
them, and the finally tasks are placed as plain pods, away from their volume;
finally tasks counted beside the DAG's (mutant `finally_overlaps_dag`); and
finally tasks counted one after another (held-out fault
`held_finally_in_sequence`): Tekton starts them all at once, so report and
notify need their sum.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import group_must_be, group_must_have, pipelinerun_must_succeed, task_pod_must_be_bound
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="finally_in_group",
    description=(
        "A DAG task and two finally tasks share a workspace: the record's group holds all three, its peak is the larger of the DAG task "
        "and the finally tasks' sum, and the finally tasks land on the group's node although another node is emptier"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("finally_in_group", "finally_in_group-filler"),
    volumes=("source",),
)


# Peak, by hand (fractions of a node, as cpu()/memory() render them, each rounded down on its own): build asks
# 0.2 CPU and 0.1 memory; the finally tasks report (0.3, 0.2) and notify (0.15, 0.05) start together once build is
# done and never overlap it: max(build, report + notify) = 0.3 + 0.15 CPU and 0.2 + 0.05 memory.

def test_finally_in_group(run: ScenarioRun) -> None:
    run.apply("finally_in_group")
    build = task_pod_must_be_bound(run, "finally-in-group", "build")
    node = build["spec"]["nodeName"]
    record = group_must_be(run, "finally-in-group", "build", state=State.RESERVED, node=node)
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "build", tasks={"build", "report", "notify"}, workspaces={"source"},
        peak_cpu_millis=share_of(cpu, 0.3) + share_of(cpu, 0.15), peak_memory_bytes=share_of(memory, 0.2) + share_of(memory, 0.05),
    )

    run.apply("finally_in_group-filler", node=node)
    run.release_pod(build["metadata"]["name"])
    for task in ("report", "notify"):
        finally_pod = task_pod_must_be_bound(run, "finally-in-group", task)
        assert finally_pod["spec"]["nodeName"] == node, f"the finally task {task} ran on {finally_pod['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, "finally-in-group")
    group_must_be(run, "finally-in-group", "report", state=State.RELEASED, node=node)
