"""exact_headroom: a group's reservation counts only what its running pods do not already use.

The fault it exists to catch: subtracting a foreign group's whole peak *on top
of* its running pods (mutant `double_counted_headroom`). With the contract's
worked example (node 4800m, A reserves 3800m and runs 200m) 1000m is
available, not 800m, so B's 900m group must be admitted on the only node.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="exact_headroom",
    description="On a single 4800m node where A reserves 3800m and runs 200m, B's 900m group fits (1000m available, not 800m) and binds there; A's big task still fits afterwards",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("exact_headroom-a", "exact_headroom-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)


# No task of this fixture requests memory, and Tekton's own init containers request none: the memory peak is 0.

def test_exact_headroom(run: ScenarioRun) -> None:
    run.apply("exact_headroom-a")
    small, node, record = task_must_hold_its_group(run, "exact-headroom-a", "small")
    group_must_have(run, record, "small", tasks={"small", "big"}, workspaces={"source"}, peak_cpu_millis=run.node_cpu_millis() * 3800 // 4800, peak_memory_bytes=0)

    run.apply("exact_headroom-b")
    b_pod = task_pod_must_be_bound(run, "exact-headroom-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    group_must_be(run, "exact-headroom-b", "only", state=State.RESERVED, node=node)

    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, "exact-headroom-a", "big")
    assert big["spec"]["nodeName"] == node, f"A's big task ran on {big['spec']['nodeName']}, not on its group's node {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "exact-headroom-a")
    pipelinerun_must_succeed(run, "exact-headroom-b")
