"""topology_spread_zones: a DoNotSchedule topology spread constraint decides a group's node (kube-scheduler's PodTopologySpread).

The fault it exists to catch: placing a pod, and opening its group's claim, in a
zone where the pod would break its spread constraint's maxSkew
(tests/mutants/faults.py: ignores_topology_spread). Tekton users write the
constraint in a run's pod template to spread a team's CI over zones.

Zones a, b, a: the team already runs a pod in zone a and none in b, so with
maxSkew 1 the run's pods may go only to zone b's node, which is in the middle by
name and by load: a scheduler that skips the constraint sends the group to zone
a whether it scores least-allocated, most-allocated or by name.
"""

from __future__ import annotations

from harness.cluster.node_pools import NodeShape
from harness.contract.record import State
from harness.suite.checks import (
    claim_must_open_on,
    fillers_must_run,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    pod_must_be_running,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

ZONE = "topology.kubernetes.io/zone"
RUN = "topology-spread-zones"

SCENARIO = Scenario(
    name="topology_spread_zones",
    description=(
        "zones a, b, a with one of the team's pods in zone a: the team's run (maxSkew 1 over zones, DoNotSchedule) "
        "claims zone b's node, the middle one by name and load, and both its pods run there"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "topology_spread_zones"),
    pool=PoolSpec(
        count=3,
        shapes=(NodeShape(0, labels=((ZONE, "a"),)), NodeShape(1, labels=((ZONE, "b"),)), NodeShape(2, labels=((ZONE, "a"),))),
    ),
    volumes=("source",),
)

# Nodes 4800m / 8Gi. Node 0 (zone a): the team's pod (200m). Node 1 (zone b): a 1200m filler. Node 2 (zone a): a
# 3000m filler. The team counts 1 pod in zone a, 0 in b: a pod of it in zone a makes the skew 2 - 0 = 2 > 1.
# No pod requests memory, so each counts as 200Mi in scoring.
#
# The claim (peak 1200m; build 600m, then test 1200m), scored as if the constraint were skipped
# (least-allocated | most-allocated, the integer average of the CPU and memory scores):
#   node 0: cpu 1400/4800 -> 70 | 29, memory 400Mi/8192Mi -> 95 | 4:  82 | 16
#   node 1: cpu 2400/4800 -> 50 | 50, memory 400Mi        -> 95 | 4:  72 | 27
#   node 2: cpu 4200/4800 -> 12 | 87, memory 400Mi        -> 95 | 4:  53 | 45
# so least-allocated and name order pick node 0, most-allocated node 2. Only the constraint leaves node 1.
# test runs once build has finished: the team then counts 1 pod in zone a and none in b (a finished pod is
# not counted), so node 1 passes again.
PEAK_CPU = 1200


def test_topology_spread_zones(run: ScenarioRun) -> None:
    nodes = run.node_names
    zone_b = nodes[1]
    run.apply("filler", name="topology-spread-zones-team", node=nodes[0], share=200 / 4800, labels={"ci.example.com/team": "payments"})
    fillers_must_run(run, {zone_b: 1200 / 4800, nodes[2]: 3000 / 4800})
    pod_must_be_running(run, "topology-spread-zones-team")

    run.apply("topology_spread_zones")
    record = claim_must_open_on(
        run, RUN, "build", node=zone_b, why=f"the team already has more pods in zone a than in zone b: maxSkew 1 leaves only {zone_b}"
    )
    group_must_have(
        run, record, "build", tasks={"build", "test"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    group_must_end_on_its_node(run, RUN, held=run.task_pods(RUN, "build")[0], next_task="test", node=zone_b)
    group_must_be(run, RUN, "test", state=State.RELEASED, node=zone_b)
