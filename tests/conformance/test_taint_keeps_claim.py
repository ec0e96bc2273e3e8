"""taint_keeps_claim: a NoSchedule taint on a Reserved group's node keeps the claim; new groups avoid the node, the group's tolerating pods do not.

The fault it exists to catch: treating a tainted node like a lost one
(mutant `taint_drops_claim`: a claim on a node with a NoSchedule taint goes
back to Pending). docs/contract.md section 10: only the Node's deletion loses
a claim; a tainted node keeps it, and the group's next pod still goes there
when its tolerations allow. Unlike cordon_keeps_claim, the node stays
schedulable and the next pod lands while the taint is on.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_hold_beside_a_filler,
    group_must_stay,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

#: The taint the scenario puts on the group's node; the group's pods tolerate it, B's do not.
MAINTENANCE = {"key": "rescon.dev/maintenance", "value": "true", "effect": "NoSchedule"}

SCENARIO = Scenario(
    name="taint_keeps_claim",
    description="A group's node is tainted NoSchedule while its 200m task runs under a 3800m peak: the group stays Reserved there; B (500m, not tolerating) goes to the other node although it fits and scores best on the tainted one; the group's 3800m task, which tolerates the taint, lands on the tainted node under the same claim",
    features=(Feature.RESILIENCE,),
    fixtures=("taint_keeps_claim", "filler", "taint_keeps_claim-b"),
    volumes=("source", "b-source"),
)


def test_taint_keeps_claim(run: ScenarioRun) -> None:
    run.apply("taint_keeps_claim")
    small, node, generation, other = group_must_hold_beside_a_filler(run, "taint-keeps-claim-tainted", filler_cpu_millis=4200)

    run.taint(node, MAINTENANCE)
    try:
        group_must_stay(run, "taint-keeps-claim-tainted", "small", node=node, holders=(small,))

        # B (500m) fits on the tainted node: 4800m - 200m (small) - 3600m (the residual) = 1000m, leaving 500m
        # (least-allocated: 10 of 100); beside the 4200m filler it leaves 100m (2 of 100). Only the taint sends it there.
        run.apply("taint_keeps_claim-b")
        b_pod = task_pod_must_be_bound(run, "taint-keeps-claim-b", "only")
        assert b_pod["spec"]["nodeName"] == other, f"B landed on {b_pod['spec']['nodeName']}, whose NoSchedule taint it does not tolerate: it should be on {other}"

        # big (3800m) tolerates the taint and fits on its group's node once small is done: 3800m <= 4800m.
        run.release_pod(small["metadata"]["name"])
        big = task_pod_must_be_bound(run, "taint-keeps-claim-tainted", "big")
        assert big["spec"]["nodeName"] == node, f"big ran on {big['spec']['nodeName']}, not on its tainted group's node {node}, whose taint it tolerates"
        group_must_be(run, "taint-keeps-claim-tainted", "big", state=State.RESERVED, node=node, claim_generation=generation)
    finally:
        run.untaint(node, MAINTENANCE)
    run.release_pod(big["metadata"]["name"])
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "taint-keeps-claim-tainted")
    pipelinerun_must_succeed(run, "taint-keeps-claim-b")
    group_must_be(run, "taint-keeps-claim-tainted", "big", state=State.RELEASED, node=node)
