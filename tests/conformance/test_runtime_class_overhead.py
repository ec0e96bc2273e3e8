"""runtime_class_overhead: a RuntimeClass's overhead counts in every pod of the run that names it.

The fault it exists to catch: predicting a task's request from its containers
only, without the pod's `spec.overhead`. When a PipelineRun's pod template
names a RuntimeClass with `overhead.podFixed`, the API server's RuntimeClass
admission plugin sets that overhead on every pod Tekton creates, and
kube-scheduler's PodRequests adds it once per pod (docs/contract.md section
6.1, step 7: the scheduler MUST add it). The fixture creates the RuntimeClass
(cluster-scoped, named after the scenario's namespace; the runner deletes it)
and names it in `taskRunTemplate.podTemplate.runtimeClassName`, the way a
Tekton user puts a whole run into, say, a sandboxed runtime.

What Tekton v1.15 and the API server build (measured for the same rule by
tests/integration/test_tekton_pod_config.py): each task's pod has
`runtimeClassName` from the run's pod template, `spec.overhead` equal to the
RuntimeClass's podFixed, container `step-work` with the step's own request,
and init containers `prepare` and `place-scripts` with no resources.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    runtime_class_must_be_in_force,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="runtime_class_overhead",
    description="A's pods name a RuntimeClass with an overhead of 0.3125 CPU: its later 0.3125 CPU task needs 0.625 with the overhead, so B (0.5) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("runtime_class_overhead-class", "runtime_class_overhead-a", "runtime_class_overhead-filler", "runtime_class_overhead-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   RuntimeClass overhead.podFixed: 0.3125 CPU (1500m), 1/32 memory (268435456 bytes), once per pod.
#   small: step 0.02 CPU (96m), no memory; pod 96 + 1500 = 1596m, 268435456 bytes.
#   big:   step 0.3125 CPU (1500m), no memory; pod 1500 + 1500 = 3000m, 268435456 bytes.
#   small then big is a chain, so the peak is big's pod: 3000m, 268435456 bytes
#   (without the overhead: 1500m, 0).
# Placement: A's node has 4800 - 1596 (small's pod) - (3000 - 1596) (A's residual) = 1800m left;
#   B asks 2400m, so it goes to the other node (4800 - 2160 filler = 2640m left). Leaving the
#   overhead out, A would reserve 1500m, less than small's pod already holds: no residual, and
#   3204m left on A's node, the emptier one. Least-allocated, with B's 2400m and the 200Mi scoring
#   counts for a pod without memory: A's node (4800 - 3996) * 100 // 4800 = 16 for CPU and
#   (8192 - 256 - 200) * 100 // 8192 = 94 for memory (in Mi), (16 + 94) // 2 = 55; the filler's
#   node 5 and (8192 - 1024 - 200) * 100 // 8192 = 85, (5 + 85) // 2 = 45.

def test_runtime_class_overhead(run: ScenarioRun) -> None:
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    run.apply("runtime_class_overhead-class")
    runtime_class_must_be_in_force(run, f"rescon-overhead-{run.namespace}", cpu=share_of(cpu, 0.3125))
    run.apply("runtime_class_overhead-a")
    small, a_node, record = task_must_hold_its_group(run, run.named("a"), "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=2 * share_of(cpu, 0.3125), peak_memory_bytes=int(memory / 32),
    )

    b_pod = b_must_land_beside_the_filler(run, "runtime_class_overhead", a_node=a_node, why="inside the room A's task and its pod overhead need there")
    group_must_be(run, run.named("a"), "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, run.named("a"), held=small, next_task="big", node=a_node, others=(b_pod,))
