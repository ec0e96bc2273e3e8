"""step_and_sidecar_specs: a run's stepSpecs and sidecarSpecs count in the peak, merged key by key.

The fault it exists to catch: sizing a task from its Task's containers and
ignoring the PipelineRun's `taskRunSpecs[].stepSpecs` or `sidecarSpecs`, with
which a run raises (or lowers) one step's or one sidecar's resources. Tekton
merges each over the container it names, key by key (`MergeStepsWithSpecs`,
`MergeSidecarsWithSpecs`, pkg/apis/pipeline/v1/merge.go; docs/contract.md
section 6.1, step 2): a key the override sets wins, the container's other
keys stay. Here the step's CPU and the sidecar's CPU are raised; the step's
memory, which no override names, stays.

What Tekton v1.15 builds for that shape (measured with the same kind of
overrides by tests/integration/test_tekton_pod_shapes.py, `overrides`:
700m / 64Mi and 100m / 96Mi): big's pod has container `step-work` with the
stepSpecs' CPU and the Task's memory, container `sidecar-helper` with the
sidecarSpecs' CPU, and init containers `prepare` and `place-scripts` with no
resources.
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
    name="step_and_sidecar_specs",
    description="A's later task asks 0.1 + 0.1 CPU in its Task, but the run's stepSpecs raise its step to 0.3 and sidecarSpecs its sidecar to 0.25: the group reserves 0.55, so B (0.55) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("step_and_sidecar_specs-a", "step_and_sidecar_specs-filler", "step_and_sidecar_specs-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small: one step of 0.02 CPU (96m), no memory.
#   big:   step work 0.1 CPU + 1/64 memory, stepSpecs work {cpu: 0.3}: 1440m, 134217728 bytes (kept);
#          sidecar helper 0.1 CPU, sidecarSpecs helper {cpu: 0.25}: 1200m. Containers add up:
#          1440 + 1200 = 2640m, 134217728 bytes; init containers ask nothing.
#   small then big is a chain, so the peak is big's: 2640m, 134217728 bytes.
# Placement: A's node has 4800 - 96 - (2640 - 96) = 2160m left; B asks 2640m (0.55), so it goes to the
#   other node (4800 - 1920 filler = 2880m left). The margin, 480m (0.1 of a node), is wider than the
#   ~100m by which two kind workers' daemons can differ (a slot pool is sized by its smallest node).
#   Leaving out stepSpecs, big is 480 + 1200 = 1680m and A's node keeps 3120m; leaving out
#   sidecarSpecs, 1440 + 480 = 1920m and 2880m: either way B fits there. Least-allocated with B's
#   2640m and the 200Mi scoring counts for a pod without memory, in Mi: A's node scores
#   ((4800 - 4320) * 100 // 4800 + (8192 - 528) * 100 // 8192) // 2 = (10 + 93) // 2 = 51 (without
#   stepSpecs) or ((4800 - 4560) * 100 // 4800 + 93) // 2 = (5 + 93) // 2 = 49 (without sidecarSpecs);
#   the filler's node ((4800 - 4560) * 100 // 4800 + (8192 - 1224) * 100 // 8192) // 2 = (5 + 85) // 2 = 45.


def test_step_and_sidecar_specs(run: ScenarioRun) -> None:
    run.apply("step_and_sidecar_specs-a")
    small, a_node, record = task_must_hold_its_group(run, run.named("a"), "small")
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(cpu, 0.3) + share_of(cpu, 0.25), peak_memory_bytes=int(memory / 64),
    )

    b_pod = b_must_land_beside_the_filler(run, "step_and_sidecar_specs", a_node=a_node, why="inside the room A's overridden step and sidecar need there")
    group_must_be(run, run.named("a"), "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, run.named("a"), held=small, next_task="big", node=a_node, others=(b_pod,))
