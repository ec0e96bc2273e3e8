"""peak_blocks_b: another PipelineRun is admitted only into real headroom, not into a group's reserved peak.

A's run says `timeouts.pipeline: 0s`, Tekton's "no timeout" (docs/contract.md
section 8): a scheduler that reads it as a zero timeout (held-out fault
`held_zero_timeout_expires`) releases A's group as timed out as soon as the run
starts (the monitor's `release-reason-untrue`).
"""

from __future__ import annotations

from harness.contract.record import State
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
    name="peak_blocks_b",
    description="B fits next to A's running pod but not next to A's reserved peak, so B goes to the other node; A's big task later runs on A's node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("peak_blocks_b-a", "peak_blocks_b-filler", "peak_blocks_b-b"),
    volumes=("a-source", "b-source"),
)


# No task of this fixture requests memory, and Tekton's own init containers request none: the memory peak is 0.

def test_peak_blocks_b(run: ScenarioRun) -> None:
    run.apply("peak_blocks_b-a")
    small, a_node, record = task_must_hold_its_group(run, "peak-blocks-b-a", "small")
    group_must_have(run, record, "small", tasks={"small", "big"}, workspaces={"source"}, peak_cpu_millis=run.node_cpu_millis() * 3800 // 4800, peak_memory_bytes=0)

    b_pod = b_must_land_beside_the_filler(run, "peak_blocks_b", a_node=a_node, why="inside the peak A reserved there")
    # A is still only running its small task, and still holds its whole peak.
    group_must_be(run, "peak-blocks-b-a", "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, "peak-blocks-b-a", held=small, next_task="big", node=a_node, others=(b_pod,))
    group_must_be(run, "peak-blocks-b-a", "big", state=State.RELEASED, node=a_node)
