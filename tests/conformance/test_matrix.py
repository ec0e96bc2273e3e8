"""matrix: a matrixed task counts once per combination, since Tekton starts all its TaskRuns together.

The fault it exists to catch: counting a matrixed pipeline task once. A matrix
over three values makes three TaskRuns, three pods, running at the same time.

What Tekton v1.15 built on the local cluster (read once while writing this
scenario): three pods `matrix-a-big-0-pod`, `matrix-a-big-1-pod`,
`matrix-a-big-2-pod`, each with container `step-work` (1200m, no memory) and init
containers `prepare` and `place-scripts` with no resources. Matrix is a beta
field, enabled on the local cluster (`enable-api-fields: beta`).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    matrixed_pods_must_run_on,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="matrix",
    description="A's later task is matrixed over three values: three 0.25 CPU pods at once, a peak of 0.75, so B (0.5) goes to the other node; all three then run on A's node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("matrix-a", "matrix-filler", "matrix-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small: one step of 0.02 CPU (96m), no memory.
#   big:   one step of 0.25 CPU (1200m), matrixed over shard in [one, two, three]:
#          3 combinations, 3 pods at once: 3 x 1200m = 3600m, no memory.
#   small then big is a chain, so the peak is big's fan-out: 3600m, 0 bytes.
# Placement: A's node has 4800 - 96 - (3600 - 96) = 1200m left; B asks 2400m, so it goes to the
#   other node (2640m left beside the filler). Counting big once, A would reserve 1200m and leave
#   3600m on its node, the emptier one.


def test_matrix(run: ScenarioRun) -> None:
    run.apply("matrix-a")
    small, a_node, record = task_must_hold_its_group(run, "matrix-a", "small")
    cpu = run.node_cpu_millis()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=3 * share_of(cpu, 0.25), peak_memory_bytes=0,
    )

    other = next(n for n in run.node_names if n != a_node)
    run.apply("matrix-filler", node=other)
    run.apply("matrix-b")
    b_pod = task_pod_must_be_bound(run, "matrix-b", "only")
    assert b_pod["spec"]["nodeName"] == other, (
        f"B landed on {b_pod['spec']['nodeName']}, inside the room A's three matrixed pods need there: it should be on {other}"
    )
    group_must_be(run, "matrix-a", "small", state=State.RESERVED, node=a_node)

    run.release_pod(small["metadata"]["name"])
    matrixed_pods_must_run_on(run, "matrix-a", "big", combinations=3, node=a_node)
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "matrix-a")
    pipelinerun_must_succeed(run, "matrix-b")
