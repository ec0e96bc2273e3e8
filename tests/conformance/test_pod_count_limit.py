"""pod_count_limit: a node whose `pods` allocatable is used up is never chosen, for a plain pod or a group's claim.

Fault it exists to catch: a scheduler that checks CPU and memory but not the
node's pod-count limit (tests/mutants/faults.py: ignores_pod_limit). Two full
nodes (by count) flank the good one: one nearly idle by CPU, one nearly full,
both before it by name, so least-allocated, most-allocated and name order each
pick a full node if the limit is not checked.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pod_must_be_running,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.checks import pod_must_be_bound
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="pod_count_limit",
    description=(
        "nodes allow 3 pods; n0 holds 3 tiny fillers, n1 3 big ones, n2 one: a plain pod and then a group's claim "
        "both land on n2, the only node with a pod slot left"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "plain", "pod_count_limit"),
    pool=PoolSpec(count=3, pods=3),
    volumes=("source",),
)

# Nodes 4800m / 8Gi / 3 pods. n0: 3 fillers of 10m (30m, 3 of 3 pods); n1: 3 of 1100m (3300m,
# 3 of 3 pods); n2: one of 1200m (1 of 3 pods). No pod requests memory (200Mi each in scoring).
# The plain pod (1200m), scored least-allocated | most-allocated if the limit were not checked:
#   n0: cpu 1230/4800 -> 74 | 25, memory 800Mi/8192Mi -> 90 | 9:  82 | 17
#   n1: cpu 4500/4800 ->  6 | 93, memory 800Mi        -> 90 | 9:  48 | 51
#   n2: cpu 2400/4800 -> 50 | 50, memory 400Mi        -> 95 | 4:  72 | 27
# n0 wins least-allocated and name order, n1 most-allocated. Only n2 has a slot: 2 of 3 pods.
# Then g's only pod opens a claim for its 1200m peak: n2 at 3600m, 3 of 3 pods; n0 and n1
# would still outscore it (82 | 17 and 48 | 51 against 58 | 41).
PEAK_CPU = 1200


def test_pod_count_limit(run: ScenarioRun) -> None:
    n0, n1, n2 = run.node_names
    fillers = (
        [(n0, f"pod-count-limit-tiny-{i}", 10 / 4800) for i in range(3)]
        + [(n1, f"pod-count-limit-big-{i}", 1100 / 4800) for i in range(3)]
        + [(n2, "pod-count-limit-one", 1200 / 4800)]
    )
    for node, name, share in fillers:
        run.apply("filler", name=name, node=node, share=share)
    for _, name, _ in fillers:
        pod_must_be_running(run, name)

    run.apply("plain", name="pod-count-limit-plain", share=1200 / 4800)
    plain = pod_must_be_bound(run, "pod-count-limit-plain")
    assert plain["spec"]["nodeName"] == n2, (
        f"the plain pod landed on {plain['spec']['nodeName']}, which already runs its 3 allowed pods: only {n2} has a slot"
    )

    run.apply("pod_count_limit")
    _, node, record = task_must_hold_its_group(run, "pod-count-limit", "only")
    assert node == n2, f"g's claim went to {node}, which already runs its 3 allowed pods: only {n2} has a slot"
    group_must_have(
        run, record, "only", tasks={"only"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    group_must_be(run, "pod-count-limit", "only", state=State.RESERVED, node=n2)
