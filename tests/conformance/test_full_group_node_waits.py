"""full_group_node_waits: a group's pod that finds its claim's node full waits there; it never leaves for a free node.

Fault it exists to catch: the group's node treated as a preference, not a rule:
a pod of a Reserved group that does not fit on the claim's node is placed on
another node (tests/mutants/faults.py: spills_from_full_group_node), leaving
the group's volume behind.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    pod_must_be_running,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.checks import pods_must_be_gone
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="full_group_node_waits",
    description=(
        "a filler fills g's claim node while the other nodes are free: g's next pod stays Pending, "
        "never leaves; once the filler goes it lands on the claim's node"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "full_group_node_waits"),
    pool=PoolSpec(count=3),
    volumes=("source",),
    volumes_attach_anywhere=(
        "the group keeps to its node even where its volume would let it move (a network share): with a volume made on "
        "the group's node, the volume check alone would keep a scheduler that treats the node as a preference from spilling"
    ),
)

# Nodes 4800m. g's peak: first (600m) then second (2400m): max(600, 2400) = 2400m; memory 0.
# With first Running on the claim's node X, a 3000m filler is put on X by nodeName (past the
# scheduler). Once first has finished, second (2400m) would need, on X:
#   4800 - 3000 (filler) - 0 (no other group's residual) = 1800m free < 2400m
# so it must wait; every other node is empty (4800m free) and would take it at once.
# With the filler gone X has 4800m free and second lands there.
PEAK_CPU = 2400


def test_full_group_node_waits(run: ScenarioRun) -> None:
    run.apply("full_group_node_waits")
    first, node, record = task_must_hold_its_group(run, "full-group-node-waits", "first")
    group_must_have(
        run, record, "first", tasks={"first", "second"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    run.apply("filler", name="full-group-node-waits-filler", node=node, share=3000 / 4800)
    pod_must_be_running(run, "full-group-node-waits-filler")

    run.release_pod(first["metadata"]["name"])
    assert pod_must_be_finished(run, first["metadata"]["name"]) == "Succeeded"
    task_pod_must_stay_pending(run, "full-group-node-waits", "second")
    group_must_be(run, "full-group-node-waits", "second", state=State.RESERVED, node=node)

    run.delete({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "full-group-node-waits-filler"}})
    pods_must_be_gone(run, ("full-group-node-waits-filler",))
    second = task_pod_must_be_bound(run, "full-group-node-waits", "second")
    assert second["spec"]["nodeName"] == node, f"g's second pod landed on {second['spec']['nodeName']}, not on its group's node {node}"
    run.release_pod(second["metadata"]["name"])
    pipelinerun_must_succeed(run, "full-group-node-waits")
    group_must_be(run, "full-group-node-waits", "second", state=State.RELEASED, node=node)
