"""step_template: stepTemplate requests are merged into each step, so they count in the group's peak.

The fault it exists to catch: reading each step's own computeResources and
ignoring the Task's stepTemplate. Tekton merges the template under every step
(the step's keys win, the template's other keys stay).

Where it matters: Tekton v1.15 copies an *embedded* taskSpec into the
PipelineRun's status.pipelineSpec with the template already merged into its
steps (seen on the local cluster: step work-2, written without resources,
appears there with 1920m and 1073741824), so an implementation that reads
status.pipelineSpec gets embedded templates right for free. A Task object
referred to by taskRef keeps its stepTemplate as written, so big refers to
the Task `templated` that the fixture creates.

What Tekton v1.15 built on the local cluster (big's pod, read once while
writing this scenario): containers `step-work` (1440m, 1073741824) and
`step-work-2` (1920m, 1073741824): the merge as computed below; init
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
    name="step_template",
    description="A's later task has stepTemplate requests (0.4 CPU, 1/8 memory) under a 0.3 CPU step and a step with none: its pod asks 0.7 CPU, so B (0.5) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("step_template-a", "step_template-filler", "step_template-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small: one step of 0.02 CPU (96m), no memory.
#   big:   taskRef templated, whose stepTemplate requests 0.4 CPU (1920m) and 0.125 memory (1Gi).
#          step work asks 0.3 CPU (1440m) itself: merged, it asks 1440m and 1Gi;
#          step work-2 asks nothing: merged, it asks 1920m and 1Gi.
#          Steps are containers and add up: 1440m + 1920m = 3360m CPU, 2 x 1Gi = 2147483648 bytes.
#   small then big is a chain, so the peak is big's: 3360m, 2Gi.
# Placement: A's node has 4800 - 96 - (3360 - 96) = 1440m left; B asks 2400m, so it goes to the
#   other node (4800 - 2160 filler = 2640m left). Ignoring the template, A would reserve 1440m and
#   leave 3360m on its node, the emptier one.


def test_step_template(run: ScenarioRun) -> None:
    run.apply("step_template-a")
    small, a_node, record = task_must_hold_its_group(run, "step-template-a", "small")
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(cpu, 0.3) + share_of(cpu, 0.4), peak_memory_bytes=2 * share_of(memory, 0.125),
    )

    b_pod = b_must_land_beside_the_filler(run, "step_template", a_node=a_node, why="inside the room A's merged steps need there")
    group_must_be(run, "step-template-a", "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, "step-template-a", held=small, next_task="big", node=a_node, others=(b_pod,))
