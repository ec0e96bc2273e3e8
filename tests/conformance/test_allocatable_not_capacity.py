"""allocatable_not_capacity: a node's room is its allocatable, not its capacity.

The fault it exists to catch: sizing nodes by `status.capacity` instead of
`status.allocatable` (mutant `sizes_nodes_by_capacity`). A kubelet keeps part
of its node back for the system (system-reserved, kube-reserved, the eviction
threshold) and reports only the rest as allocatable; on the local cluster every
pool node does the same, 200m CPU and 512Mi of memory (harness/cluster/node_pools.py).
Here two runs ask for a little more than A leaves of the allocatable, one in
CPU and one in memory, and a little less than A would leave of the capacity:
both must wait until A is done. A scheduler reading capacity binds them at
once, and the contract monitor sees the node over-committed.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="allocatable_not_capacity",
    description=(
        "one node of allocatable 4800m / 8Gi (capacity 200m and 512Mi more); beside A (200m running, peak 3800m and half "
        "the memory) B (1100m) and C (4Gi + 256Mi) fit the capacity but not the allocatable: both wait until A is done"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("allocatable_not_capacity-a", "allocatable_not_capacity-b", "allocatable_not_capacity-c"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source", "c-source"),
)


# One node: allocatable 4800m / 8Gi; capacity 5000m / 8704Mi (the local cluster's pool nodes).
# A: small (200m, no memory) then big (3800m, 4Gi): peak max(200, 3800) = 3800m, max(0, 4Gi) = 4Gi.
#   While small runs, A's residual is 3800 - 200 = 3600m and 4Gi - 0 = 4Gi.
# B asks 1100m (no memory): allocatable leaves 4800 - 200 - 3600 = 1000m < 1100m, so B waits;
#   capacity would leave 5000 - 200 - 3600 = 1200m >= 1100m.
# C asks 96m and 17/32 of 8Gi = 4Gi + 256Mi: allocatable leaves 8Gi - 0 - 4Gi = 4Gi < 4Gi + 256Mi,
#   so C waits; capacity would leave 8704Mi - 4096Mi = 4608Mi >= 4352Mi. C's CPU fits either way
#   (4800 - 200 - 3600 = 1000m >= 96m), so only memory decides.
# Bound at once, B would make the node hold 200 + 3600 + 1100 = 4900m > 4800m, C 4Gi + 4Gi + 256Mi > 8Gi:
#   the monitor's node-overcommitted. Once A is done both fit: 1100 + 96 = 1196m, 4Gi + 256Mi.


def test_allocatable_not_capacity(run: ScenarioRun) -> None:
    (only,) = run.node_names
    run.apply("allocatable_not_capacity-a")
    small, node, record = task_must_hold_its_group(run, run.named("a"), "small")
    assert node == only
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(run.node_cpu_millis(), 3800 / 4800), peak_memory_bytes=share_of(run.node_memory_bytes(), 0.5),
    )

    run.apply("allocatable_not_capacity-b")
    run.apply("allocatable_not_capacity-c")
    task_pod_must_stay_pending(run, run.named("b"), "only")
    task_pod_must_stay_pending(run, run.named("c"), "only")

    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, run.named("a"), "big")
    assert big["spec"]["nodeName"] == node, f"A's big task ran on {big['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, run.named("a"))
    for name in (run.named("b"), run.named("c")):
        pod = task_pod_must_be_bound(run, name, "only")
        assert pod["spec"]["nodeName"] == node, f"{name} is on {pod['spec']['nodeName']}, but the pool's only node is {node}"
        group_must_be(run, name, "only", state=State.RESERVED, node=node)
        run.release_pod(pod["metadata"]["name"])
    pipelinerun_must_succeed(run, run.named("b"))
    pipelinerun_must_succeed(run, run.named("c"))
