"""memory_decides: a memory-bound group, where memory and not CPU decides where B may go.

The fault it exists to catch: reserving CPU only (or predicting no memory), so
that the memory a group's later task needs is handed to another run. CPU is
plentiful on both nodes throughout; only memory rules A's node out for B.
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
    name="memory_decides",
    description="A's group reserves 0.7 of a node's memory (little CPU); B (0.4 memory) fits beside A's running pod but not beside A's memory peak, so it goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("memory_decides-a", "memory_decides-filler", "memory_decides-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small (0.02 CPU, 0.05 memory) then big (0.05 CPU, 0.7 memory): a chain, never both at once,
#   so the peak is the larger per resource: CPU 0.05 (big), memory 0.7 (big).
#   On a 4800m / 8Gi node: 240m and int(8Gi * 0.7) = 6012954214 bytes.
# Placement: on A's node 1 - 0.05 (small's pod) - (0.7 - 0.05) (A's residual) = 0.3 memory is left;
#   B asks 0.4, so it must go to the other node, where the filler leaves 0.8. Counting CPU only,
#   A's node (0.02 CPU and 0.05 memory used) looks emptier in both resources than the filler's.

def test_memory_decides(run: ScenarioRun) -> None:
    run.apply("memory_decides-a")
    small, a_node, record = task_must_hold_its_group(run, "memory-decides-a", "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(run.node_cpu_millis(), 0.05), peak_memory_bytes=share_of(run.node_memory_bytes(), 0.7),
    )

    b_pod = b_must_land_beside_the_filler(run, "memory_decides", a_node=a_node, why="inside the memory A reserved there")
    group_must_be(run, "memory-decides-a", "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, "memory-decides-a", held=small, next_task="big", node=a_node, others=(b_pod,))
