"""burst: five PipelineRuns created at once into a pool that holds four of their reservations.

Faults it exists to catch: a scheduler whose placements count only once its
watch shows them (no assumed pods or claims; tests/mutants/faults.py:
no_assume), or that otherwise races itself under load, so that several claims
land in the same free room: a node holds more than its allocatable (pods plus
reserved residuals, docs/contract.md section 7), or a group's pods end up on
two nodes. Everything must also finish: the fifth run waits for a release.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import group_must_be, group_must_have, pipelinerun_must_succeed
from harness.suite.features import Feature
from harness.suite.pool_checks import LoadWatch
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

RUNS = tuple(f"r{i}" for i in range(5))

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
    with LoadWatch(run) as watch:
        run.apply("burst")
        for name in RUNS:
            pipelinerun_must_succeed(run, name)
    watch.must_be_clean()
    for name in RUNS:
        nodes = {p["spec"].get("nodeName") for task in ("t1", "t2", "t3") for p in run.task_pods(name, task)}
        assert len(nodes) == 1, f"{name}'s group ran on {sorted(str(n) for n in nodes)}: a group's pods share one node"
        record = group_must_be(run, name, "t1", state=State.RELEASED, node=nodes.pop())
        group_must_have(
            run, record, "t1", tasks={"t1", "t2", "t3"}, workspaces={"source"},
            peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
        )
