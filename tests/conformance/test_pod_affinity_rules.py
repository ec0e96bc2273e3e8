"""pod_affinity_rules: required pod affinity and anti-affinity decide a group's node (kube-scheduler's InterPodAffinity).

Faults it exists to catch (tests/mutants/faults.py): a scheduler that places a pod
where its required pod affinity finds no matching pod (ignores_pod_affinity),
beside a pod its required anti-affinity selects (ignores_pod_anti_affinity), or
beside a placed pod whose anti-affinity selects it (ignores_existing_anti_affinity,
the rule's symmetry). Tekton users write these terms in a run's pod template:
tasks that need a node-local cache, heavy builds kept apart. On a real node a pod
beside the one it must avoid breaks the rule silently; one away from its cache
runs cold.

Three nodes: the node the terms leave is in the middle by load, so a scheduler
that skips a term sends the group elsewhere whether it scores least-allocated,
most-allocated or by name. The symmetric rule is checked on a plain pod whose
nodeSelector leaves it only the heavy build's node: it must wait there.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_must_open_on,
    fillers_must_run,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    pod_must_be_running,
    pod_must_stay_pending,
)
from harness.cluster.node_pools import NodeShape
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

LANE = "rescon.dev/lane"

SCENARIO = Scenario(
    name="pod_affinity_rules",
    description=(
        "a build cache runs on the middle node and other heavy pods on the outer two: `tests` (pod affinity to the cache) "
        "and `heavy` (anti-affinity to heavy pods) both claim the middle node, and a heavy plain pod that may go only "
        "there waits while heavy's pod runs"
    ),
    features=(Feature.COLOCATION,),
    fixtures=(
        "filler",
        "pod_affinity_rules-tests",
        "pod_affinity_rules-heavy",
        "pod_affinity_rules-plain",
    ),
    pool=PoolSpec(
        count=3,
        shapes=(NodeShape(0, labels=((LANE, "a"),)), NodeShape(1, labels=((LANE, "b"),)), NodeShape(2, labels=((LANE, "a"),))),
    ),
    volumes=("tests-source", "heavy-source"),
)

# Nodes 4800m / 8Gi. Node 0: a heavy pod X (200m). Node 1: the build cache (200m) and a 1000m filler. Node 2: a
# heavy pod Y (200m) and a 3000m filler. No pod requests memory, so each counts as 200Mi in scoring.
#
# tests' claim (peak 600m; unit 600m, then e2e 400m), scored as if its pod affinity were skipped
# (least-allocated | most-allocated, the integer average of the CPU and memory scores):
#   node 0: cpu  800/4800 -> 83 | 16, memory 400Mi/8192Mi -> 95 | 4:  89 | 10
#   node 1: cpu 1800/4800 -> 62 | 37, memory 600Mi        -> 92 | 7:  77 | 22
#   node 2: cpu 3800/4800 -> 20 | 79, memory 600Mi        -> 92 | 7:  56 | 43
# heavy's claim (peak 1200m; compile 1200m, then package 800m) with tests' unit pod on node 1, as if its
# anti-affinity were skipped:
#   node 0: cpu 1400/4800 -> 70 | 29, memory 400Mi -> 95 | 4:  82 | 16
#   node 1: cpu 3000/4800 -> 37 | 62, memory 800Mi -> 90 | 9:  63 | 35
#   node 2: cpu 4400/4800 ->  8 | 91, memory 600Mi -> 92 | 7:  50 | 49
# so least-allocated and name order pick node 0, most-allocated node 2, for both. Only the terms leave node 1.
# The heavy plain pod (200m, lane b: node 1 only) would fit there (3000m + 200m), but heavy's compile pod
# there has anti-affinity to class=heavy, so it must wait.
TESTS_PEAK_CPU = 600
HEAVY_PEAK_CPU = 1200
TESTS = "pod-affinity-rules-tests"
HEAVY = "pod-affinity-rules-heavy"
#: Heavy work of other kinds already on the outer nodes: no affinity terms of their own.
HEAVY_CLASS = {"ci.example.com/class": "heavy"}


def test_pod_affinity_rules(run: ScenarioRun) -> None:
    nodes = run.node_names
    middle = nodes[1]
    run.apply("filler", name="pod-affinity-rules-other-x", node=nodes[0], share=200 / 4800, labels=HEAVY_CLASS)
    run.apply("filler", name="pod-affinity-rules-cache", node=middle, share=200 / 4800, labels={"app": "build-cache"})
    run.apply("filler", name="pod-affinity-rules-other-y", node=nodes[2], share=200 / 4800, labels=HEAVY_CLASS)
    fillers_must_run(run, {middle: 1000 / 4800, nodes[2]: 3000 / 4800})
    for name in ("pod-affinity-rules-other-x", "pod-affinity-rules-cache", "pod-affinity-rules-other-y"):
        pod_must_be_running(run, name)

    run.apply("pod_affinity_rules-tests")
    record = claim_must_open_on(
        run, TESTS, "unit", node=middle, why=f"no pod labelled app=build-cache runs there: its required pod affinity leaves only {middle}"
    )
    group_must_have(
        run, record, "unit", tasks={"unit", "e2e"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * TESTS_PEAK_CPU // 4800, peak_memory_bytes=0,
    )

    run.apply("pod_affinity_rules-heavy")
    record = claim_must_open_on(
        run, HEAVY, "compile", node=middle,
        why=f"a pod labelled ci.example.com/class=heavy runs there: its required pod anti-affinity leaves only {middle}",
    )
    group_must_have(
        run, record, "compile", tasks={"compile", "package"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * HEAVY_PEAK_CPU // 4800, peak_memory_bytes=0,
    )

    [plain] = run.apply("pod_affinity_rules-plain", name="pod-affinity-rules-plain", lane="b")
    pod_must_stay_pending(
        run, "pod-affinity-rules-plain",
        why=f"heavy's compile pod on {middle}, the only node its nodeSelector allows, has a required anti-affinity to class=heavy",
    )
    # Gone before heavy's compile pod ends: bound then, it would keep heavy's package pod off its group's node.
    run.delete(plain)

    for pipeline_run, held, following in ((TESTS, "unit", "e2e"), (HEAVY, "compile", "package")):
        group_must_end_on_its_node(run, pipeline_run, held=run.task_pods(pipeline_run, held)[0], next_task=following, node=middle)
        group_must_be(run, pipeline_run, following, state=State.RELEASED, node=middle)
