"""zonal_volume: a group whose volume is a zonal disk stays in the disk's zone.

The pool spans two zones (`topology.kubernetes.io/zone`): n0 in zone a, n1 and
n2 in zone b. The run's workspace is Bound to a volume that admits zone b only,
as a cloud's zonal disk does. Fillers make n0, the one node outside the zone,
the emptiest (least-allocated and name order pick it): the group's claim must
still open in zone b, and every task of the group run on that one node.
"""

from __future__ import annotations

from harness.cluster.node_pools import NodeShape
from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    pipelinerun_must_succeed,
    fillers_must_run,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario
from harness.suite.volume_checks import claims_must_be_bound_on

ZONE = "topology.kubernetes.io/zone"

SCENARIO = Scenario(
    name="zonal_volume",
    description=(
        "a run's workspace is Bound to a zonal volume (zone b) in a pool of two zones whose emptiest node is in zone a: "
        "the group's claim opens in zone b and all its tasks run on that node"
    ),
    features=(Feature.VOLUMES, Feature.COLOCATION),
    fixtures=("zonal_volume", "filler"),
    pool=PoolSpec(count=3, shapes=(NodeShape(0, labels=((ZONE, "a"),)), NodeShape(1, labels=((ZONE, "b"),)), NodeShape(2, labels=((ZONE, "b"),)))),
    pinned_volumes={"source": (ZONE, "b")},
)

NAME = "zonal-volume"

# n0 (zone a) empty; n1 and n2 (zone b) hold a filler of 0.25 of a node each. The group's peak,
# 0.4, fits everywhere; least-allocated scoring and name order pick n0.


def test_zonal_volume(run: ScenarioRun) -> None:
    n0, n1, n2 = run.node_names
    fillers_must_run(run, {n1: 0.25, n2: 0.25})

    run.apply("zonal_volume")
    fetch, node, _ = task_must_hold_its_group(run, NAME, "fetch")
    assert node in (n1, n2), f"fetch opened its group's claim on {node}, in zone a; its volume admits zone b only ({n1}, {n2})"
    claims_must_be_bound_on(run, fetch)
    run.release_pod(fetch["metadata"]["name"])
    assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
    build = task_pod_must_be_bound(run, NAME, "build")
    assert build["spec"]["nodeName"] == node, f"build ran on {build['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, NAME)
    group_must_be(run, NAME, "fetch", state=State.RELEASED, node=node)
