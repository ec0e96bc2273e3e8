"""node_checks: the node checks every scheduler makes (cordon, NoSchedule taint, nodeSelector, required node affinity).

Faults it exists to catch: a scheduler that places pods on a cordoned node, on
a node with a NoSchedule taint the pod does not tolerate, on a node that fails
the pod's nodeSelector, or on a node that fails its required node affinity
(tests/mutants/faults.py: ignores_cordon, ignores_taints, ignores_node_selector,
ignores_node_affinity), or that takes the group's toleration of the taint's key
for NoExecute as a toleration of its NoSchedule effect (held-out fault
`held_toleration_ignores_effect`). Each wrong node is there twice, once empty and once
full, and the one good node is last by name and in the middle, so whichever way
a scheduler scores (least-allocated, most-allocated, first by name), a check it
skips sends a pod to a wrong node.
"""

from __future__ import annotations

from harness.cluster.node_pools import NodeShape
from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_running,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.checks import pod_must_be_bound
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

OPEN = ("rescon.dev/lane", "open")
AWAY = ("rescon.dev/lane", "away")
TAINT = ("rescon.dev/dedicated", "other", "NoSchedule")

SCENARIO = Scenario(
    name="node_checks",
    description=(
        "a pool of a cordoned, a tainted (NoSchedule) and a labelled-away node, each once empty and once full, and one good node "
        "last by name: a plain pod (nodeSelector) and every pod of a group (required node affinity) land only on the good node"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "plain", "node_checks"),
    pool=PoolSpec(
        count=7,
        shapes=(
            NodeShape(0, cordoned=True, labels=(OPEN,)),
            NodeShape(1, taints=(TAINT,), labels=(OPEN,)),
            NodeShape(2, labels=(AWAY,)),
            NodeShape(3, cordoned=True, labels=(OPEN,)),
            NodeShape(4, taints=(TAINT,), labels=(OPEN,)),
            NodeShape(5, labels=(AWAY,)),
            NodeShape(6, labels=(OPEN,)),
        ),
    ),
    volumes=("source",),
)

# Nodes 4800m / 8Gi. Wrong nodes 0-2 are empty; wrong nodes 3-5 hold a 3000m filler; the good
# node 6 holds a 1200m filler. No pod requests memory, so each counts as 200Mi in scoring.
#
# The plain pod (1200m), as scored if a node check were skipped (least-allocated | most-allocated,
# each the integer average of the CPU and memory scores):
#   empty wrong node: cpu 1200/4800 -> 75 | 25, memory 200Mi/8192Mi -> 97 | 2:  86 | 13
#   full wrong node:  cpu 4200/4800 -> 12 | 87, memory 400Mi        -> 95 | 4:  53 | 45
#   good node 6:      cpu 2400/4800 -> 50 | 50, memory 400Mi        -> 95 | 4:  72 | 27
# so least-allocated picks an empty wrong node, most-allocated a full one, name order node 0.
# Then the group's first pod opens a claim for its 1200m peak, with the plain pod on node 6:
#   empty wrong node: 86 | 13;  full wrong node: 53 | 45;
#   good node 6:      cpu 3600/4800 -> 25 | 75, memory 600Mi -> 92 | 7:  58 | 41
# again a wrong node under every order. Only the checks leave node 6.
#
# Peak: first (600m) then second (1200m), one after the other: max(600, 1200) = 1200m; memory 0.
PEAK_CPU = 1200


def test_node_checks(run: ScenarioRun) -> None:
    # The pool comes shaped (PoolSpec.shapes): cordoned, tainted and labelled-away nodes, then the good one.
    nodes = run.node_names
    good = nodes[6]
    for index, share in ((3, 3000 / 4800), (4, 3000 / 4800), (5, 3000 / 4800), (6, 1200 / 4800)):
        run.apply("filler", name=f"node-checks-filler-{index}", node=nodes[index], share=share)
    for index in (3, 4, 5, 6):
        pod_must_be_running(run, f"node-checks-filler-{index}")

    run.apply("plain", name="node-checks-plain", share=1200 / 4800, lane="open")
    plain = pod_must_be_bound(run, "node-checks-plain")
    assert plain["spec"]["nodeName"] == good, (
        f"the plain pod landed on {plain['spec']['nodeName']}, which is cordoned, tainted or fails its nodeSelector: "
        f"only {good} passes every node check"
    )

    run.apply("node_checks")
    _, node, record = task_must_hold_its_group(run, "node-checks", "first")
    assert node == good, (
        f"g's first pod opened its claim on {node}, which is cordoned, tainted or fails its required node affinity: "
        f"only {good} passes every node check"
    )
    group_must_have(
        run, record, "first", tasks={"first", "second"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    first = run.task_pods("node-checks", "first")[0]
    run.release_pod(first["metadata"]["name"])
    second = task_pod_must_be_bound(run, "node-checks", "second")
    assert second["spec"]["nodeName"] == good, f"g's second pod landed on {second['spec']['nodeName']}, not on its group's node {good}"
    pipelinerun_must_succeed(run, "node-checks")
    group_must_be(run, "node-checks", "second", state=State.RELEASED, node=good)
