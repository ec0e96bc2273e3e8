"""group_node_not_the_obvious_choice: a group's next pod goes back to its claim's node when nothing else points there.

Fault it exists to catch: the scheduler forgets the group's node once the
group's pods have finished (it reads the node from a pod cache that drops
finished pods; tests/mutants/faults.py: forgets_finished_group_node). Between
`first` finishing and `second` being placed, no pod of the group is alive, and
fillers make every other node the better choice under least-allocated scoring,
most-allocated scoring and name order alike: only the remembered claim leads
back. (colocation passes such a scheduler whenever the group's node also
happens to be the emptiest or first by name.)
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_must_be_forced_onto_the_last_node,
    every_other_node_must_look_better,
    group_must_be,
    group_must_have,
    group_must_stay,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="group_node_not_the_obvious_choice",
    description=(
        "blockers force g's claim onto the last node; after its first pod finishes, fillers make the other nodes the better "
        "choice under every scoring and name order: g's second pod must still land on the claim's node"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "group_node_not_the_obvious_choice"),
    pool=PoolSpec(count=3),
    volumes=("source",),
)

# Nodes n0 < n1 < n2 (by name), 4800m / 8Gi; no pod requests memory (each counts 200Mi in scoring).
#
# Opening: blockers of 4000m on n0 and n1 leave 800m there, less than g's 1200m peak, so g's
# first pod (600m) can only open its claim on n2.
#
# Then the blockers go; n1 gets a 3000m filler, n2 a 1200m one, n0 stays empty, and `first`
# finishes. A scheduler that forgot the claim places `second` (1200m) as a plain pod; scored
# least-allocated | most-allocated (the integer average of CPU and memory):
#   n0: cpu 1200/4800 -> 75 | 25, memory 200Mi/8192Mi -> 97 | 2:                          86 | 13
#   n1: cpu 4200/4800 -> 12 | 87, memory 400Mi -> 95 | 4:                                   53 | 45
#   n2: cpu 1200 filler + 1200 g's residual + 1200 = 3600 -> 25 | 75, memory 400Mi -> 95 | 4: 60 | 39
#       (without g's residual: 2400 -> 50 | 50:                                             72 | 27)
# n0 wins least-allocated and name order, n1 most-allocated; n2 never. A scheduler that keeps
# the claim puts `second` on n2, where it fits: 1200 filler + 1200 = 2400m of 4800m.
#
# Peak: first (600m) then second (1200m): max(600, 1200) = 1200m; memory 0.
PEAK_CPU = 1200


def test_group_node_not_the_obvious_choice(run: ScenarioRun) -> None:
    n2 = claim_must_be_forced_onto_the_last_node(run)

    run.apply("group_node_not_the_obvious_choice")
    first, node, record = task_must_hold_its_group(run, "group-node-not-the-obvious-choice", "first")
    assert node == n2, f"g's first pod opened its claim on {node}, where only 800m is free for its 1200m peak: only {n2} fits"
    group_must_have(
        run, record, "first", tasks={"first", "second"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )

    every_other_node_must_look_better(run)

    run.release_pod(first["metadata"]["name"])
    assert pod_must_be_finished(run, first["metadata"]["name"]) == "Succeeded"
    second = task_pod_must_be_bound(run, "group-node-not-the-obvious-choice", "second")
    assert second["spec"]["nodeName"] == n2, (
        f"g's second pod landed on {second['spec']['nodeName']}, not on its group's node {n2}: "
        "the claim outlives the group's finished pods, whatever scoring says"
    )
    group_must_stay(run, "group-node-not-the-obvious-choice", "second", node=n2, holders=(first, second))
    run.release_pod(second["metadata"]["name"])
    pipelinerun_must_succeed(run, "group-node-not-the-obvious-choice")
    group_must_be(run, "group-node-not-the-obvious-choice", "second", state=State.RELEASED, node=n2)
