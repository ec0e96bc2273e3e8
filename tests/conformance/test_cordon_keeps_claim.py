"""cordon_keeps_claim: a cordoned, tainted node keeps the claims on it; only the Node's deletion drops them.

The fault it exists to catch: treating an unschedulable or NoSchedule-tainted
node like a lost one (docs/contract.md section 10: "Only deletion counts"),
which rolls the claim back while the group's volume data lives on that node.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_stay,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="cordon_keeps_claim",
    description="A group's node is cordoned and tainted NoSchedule while its 200m task runs: the group stays Reserved there; once the node is schedulable again its 3800m task lands on it, beside a filler that makes the other node the emptier",
    features=(Feature.NODE_LOSS,),
    fixtures=("cordon_keeps_claim", "cordon_keeps_claim-filler"),
    volumes=("source",),
)


def test_cordon_keeps_claim(run: ScenarioRun) -> None:
    run.apply("cordon_keeps_claim")
    small, node, _ = task_must_hold_its_group(run, "cordon-keeps-claim", "small")

    run.cordon(node, taint=True)
    group_must_stay(run, "cordon-keeps-claim", "small", node=node, holders=(small,))
    run.uncordon(node)

    # 900m on the group's node: 200m (small) + 3600m (the residual) + 900m = 4700m of 4800m, so the
    # claim still fits; a scheduler that dropped it would find the other, empty node the better choice.
    run.apply("cordon_keeps_claim-filler", node=node)
    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, "cordon-keeps-claim", "big")
    assert big["spec"]["nodeName"] == node, f"big ran on {big['spec']['nodeName']}, not on its group's node {node}: the cordon cost the group its claim"
    group_must_be(run, "cordon-keeps-claim", "big", state=State.RESERVED, node=node)
    run.release_pod(big["metadata"]["name"])
    pipelinerun_must_succeed(run, "cordon-keeps-claim")
    group_must_be(run, "cordon-keeps-claim", "big", state=State.RELEASED, node=node)
