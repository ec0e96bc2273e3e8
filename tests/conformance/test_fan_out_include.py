"""fan_out_include: a matrix's include entries make combinations as Tekton's Matrix.FanOut makes them.

The fault it exists to catch: counting only the product of `matrix.params`
and ignoring `matrix.include`. An include entry that agrees with no
combination on the params they share is a combination of its own, one more
TaskRun started with the others; an entry that agrees with one only adds its
params to it (docs/contract.md section 6, the matrixed task). Here `shard` in
[one, two] with includes `{shard: one}` and `{shard: three}` is three
TaskRuns, not two (and not four).

What Tekton v1.15 builds for that matrix (measured with the same include
entries by tests/integration/test_tekton_pod_shapes.py, `matrixed`): three
TaskRuns and three pods, each with container `step-work` (its step's request)
and init containers `prepare` and `place-scripts` with no resources. Matrix
is a beta field, enabled on the suite's clusters (`enable-api-fields: beta`).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_have,
    matrixed_pods_must_run_on,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="fan_out_include",
    description="A's later task is matrixed over two values plus an include entry that adds a third: three 0.2 CPU pods at once, a peak of 0.6, so B (0.5) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("fan_out_include-a", "fan_out_include-filler", "fan_out_include-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small: one step of 0.02 CPU (96m), no memory.
#   big:   one step of 0.2 CPU (960m), matrixed: shard in [one, two] is 2 combinations; include
#          {shard: one} agrees with `one` and adds none, {shard: three} agrees with none and adds
#          one: 3 pods at once, 3 x 960m = 2880m, no memory.
#   small then big is a chain, so the peak is big's fan-out: 2880m, 0 bytes.
# Placement: A's node has 4800 - 96 - (2880 - 96) = 1920m left; B asks 2400m, so it goes to the
#   other node (4800 - 2160 filler = 2640m left). Counting only the params' 2 combinations, A
#   would reserve 1920m and leave 2880m on its node, the emptier one: least-allocated with B's
#   2400m and the 200Mi scoring counts for a pod without memory, A's node scores
#   ((4800 - 4320) * 100 // 4800 + (8192 - 400) * 100 // 8192) // 2 = (10 + 95) // 2 = 52 (in Mi),
#   the filler's node (5 + (8192 - 1224) * 100 // 8192) // 2 = (5 + 85) // 2 = 45.


def test_fan_out_include(run: ScenarioRun) -> None:
    run.apply("fan_out_include-a")
    small, a_node, record = task_must_hold_its_group(run, run.named("a"), "small")
    cpu = run.node_cpu_millis()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=3 * share_of(cpu, 0.2), peak_memory_bytes=0,
    )

    b_pod = b_must_land_beside_the_filler(run, "fan_out_include", a_node=a_node, why="inside the room A's three matrixed pods need there")
    group_must_be(run, run.named("a"), "small", state=State.RESERVED, node=a_node)

    run.release_pod(small["metadata"]["name"])
    matrixed_pods_must_run_on(run, run.named("a"), "big", combinations=3, node=a_node)
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, run.named("a"))
    pipelinerun_must_succeed(run, run.named("b"))
