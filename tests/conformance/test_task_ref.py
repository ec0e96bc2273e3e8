"""task_ref: a pipeline task that refers to a namespaced Task by taskRef is sized from that Task.

The fault it exists to catch: sizing only embedded taskSpecs, so that a
taskRef task (the usual way pipelines are written) counts as nothing. The
fixture creates the Task `big-task` in the scenario's namespace; Tekton
resolves it into the PipelineRun's status.pipelineSpec only by name, so an
implementation has to read the Task itself.

What Tekton v1.15 built on the local cluster (big's pod, read once while
writing this scenario): container `step-work` (cpu "3", memory
2147483648: the Task's 3000m, in its canonical form); init
containers `prepare` and `place-scripts` with no resources; no overhead, no
pod-level resources.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="task_ref",
    description="A's later task refers by taskRef to a namespaced Task of 0.625 CPU and 1/4 memory: the group reserves it, so B (0.5) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("task_ref-a", "task_ref-filler", "task_ref-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small: one step of 0.02 CPU (96m), no memory (embedded taskSpec).
#   big:   taskRef big-task, whose one step asks 0.625 CPU (3000m) and 0.25 memory (2147483648 bytes).
#   small then big is a chain, so the peak is big's: 3000m, 2Gi.
# Placement: A's node has 4800 - 96 - (3000 - 96) = 1800m left; B asks 2400m, so it goes to the
#   other node (2640m left beside the filler). Sizing the taskRef task as nothing, A would reserve
#   96m and leave 4704m on its node, the emptier one.


def test_task_ref(run: ScenarioRun) -> None:
    run.apply("task_ref-a")
    small, a_node, record = task_must_hold_its_group(run, "task-ref-a", "small")
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(cpu, 0.625), peak_memory_bytes=share_of(memory, 0.25),
    )

    b_pod = b_must_land_beside_the_filler(run, "task_ref", a_node=a_node, why="inside the room A's taskRef task needs there")
    group_must_be(run, "task-ref-a", "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, "task-ref-a", held=small, next_task="big", node=a_node, others=(b_pod,))
