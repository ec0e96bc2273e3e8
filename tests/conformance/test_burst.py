"""burst: five PipelineRuns created at once into a pool that holds four of their reservations.

Fault it exists to catch: a scheduler that admits work by the pods it sees and
not by the reservations (tests/mutants/faults.py: ignores_reservations, whose
own scenario is peak_blocks_b). In the burst, a group between its parallel
pair and its t3 has no pod running but still holds 2000m; the fifth run's pods
fit into that room by pods alone, so a node holds more than its allocatable
(pods plus reserved residuals, docs/contract.md section 7), which the load
watch sees while it lasts. It also fails a group split across two nodes, and
every run must finish: the fifth waits for a release. (A scheduler that does
not assume its placements until its watch shows them survived it 10 of 10 on
the local cluster: the watch is faster than Tekton's pod creation.)
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import group_must_be, group_must_have, pipelinerun_must_succeed
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

RUNS = tuple(f"burst-r{i}" for i in range(5))

SCENARIO = Scenario(
    name="burst",
    description=(
        "five PipelineRuns (peak 2000m each) created at once on two 4800m nodes, which hold two reservations each: "
        "no node is ever over-committed, no group splits, all five finish"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("burst",),
    pool=PoolSpec(count=2),
    volumes=tuple(f"{name}-source" for name in RUNS),
)

# Nodes 4800m. Each run's group: t1 || t2 (1000m each), then t3 (2000m): peak max(1000 + 1000,
# 2000) = 2000m; memory 0. Two claims fit on a node (2 x 2000 = 4000m <= 4800m), a third does
# not (6000m > 4800m): four runs start at once, the fifth waits until one is Released.
PEAK_CPU = 2000


def test_burst(run: ScenarioRun) -> None:
    # The contract monitor watches every state of the burst: an over-committed node (pods plus
    # residuals) or a split group fails the scenario the moment it is seen.
    run.apply("burst")
    for name in RUNS:
        pipelinerun_must_succeed(run, name)
    for name in RUNS:
        nodes = {p["spec"].get("nodeName") for task in ("t1", "t2", "t3") for p in run.task_pods(name, task)}
        assert len(nodes) == 1, f"{name}'s group ran on {sorted(str(n) for n in nodes)}: a group's pods share one node"
        record = group_must_be(run, name, "t1", state=State.RELEASED, node=nodes.pop())
        group_must_have(
            run, record, "t1", tasks={"t1", "t2", "t3"}, workspaces={"source"},
            peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
        )
