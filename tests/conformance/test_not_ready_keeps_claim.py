"""not_ready_keeps_claim: a Reserved group's node goes NotReady; the claim holds, new groups avoid the node, and the group's next pod waits there for it.

The fault it exists to catch: treating a NotReady node like a lost one
(mutant `not_ready_drops_claim`: a claim on a node whose Ready condition is not
True goes back to Pending). docs/contract.md section 10: only the Node's
deletion loses a claim; a NotReady node keeps it. New groups avoid the node
through the `node.kubernetes.io/not-ready:NoSchedule` taint the node lifecycle
controller puts on it, and so does the group's own next pod, which does not
tolerate it: it waits, unbound, and lands on the claim's node under the same
claim once the node is Ready again.

The harness holds the node NotReady with an admission policy that refuses
Ready=True for it (harness.cluster.node_readiness): KWOK, like a kubelet,
would report it Ready again at once. Measured on the local cluster only. On
kind the same policy would refuse the kubelet's status updates while its Lease
stays renewed (so NotReady, never Unknown); that is not measured (no Docker
daemon where this was written).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_hold_beside_a_filler,
    group_must_stay,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="not_ready_keeps_claim",
    description="A group's node goes NotReady (Ready=False, tainted not-ready) while its 200m task runs under a 3800m peak: the group stays Reserved there; its 3800m task waits unbound while the node is NotReady; B (500m) goes to the other node although it fits and scores best on the NotReady one; once the node is Ready again the 3800m task lands on it under the same claim",
    features=(Feature.RESILIENCE,),
    fixtures=("not_ready_keeps_claim", "filler", "not_ready_keeps_claim-b"),
    volumes=("source", "b-source"),
)


def test_not_ready_keeps_claim(run: ScenarioRun) -> None:
    run.apply("not_ready_keeps_claim")
    small, node, generation, other = group_must_hold_beside_a_filler(run, "not-ready-keeps-claim-unready", filler_cpu_millis=4200)

    run.hold_not_ready(node)
    group_must_stay(run, "not-ready-keeps-claim-unready", "small", node=node, holders=(small,))

    # big (3800m) fits nowhere but on its group's node once small is done (4800m there; 4800m - 4200m = 600m beside
    # the filler), and the not-ready taint, which it does not tolerate, keeps it off that node while it is NotReady.
    run.release_pod(small["metadata"]["name"])
    task_pod_must_stay_pending(run, "not-ready-keeps-claim-unready", "big")
    group_must_be(run, "not-ready-keeps-claim-unready", "big", state=State.RESERVED, node=node, claim_generation=generation)

    # B (500m) fits on the NotReady node: 4800m - 3800m (the group's residual, its pods done) = 1000m, leaving 500m
    # (least-allocated: 10 of 100); beside the 4200m filler it leaves 100m (2 of 100). Only the taint keeps it off.
    run.apply("not_ready_keeps_claim-b")
    b_pod = task_pod_must_be_bound(run, "not-ready-keeps-claim-b", "only")
    assert b_pod["spec"]["nodeName"] == other, f"B landed on {b_pod['spec']['nodeName']}, which is NotReady (tainted not-ready): it should be on {other}"

    run.let_ready(node)
    big = task_pod_must_be_bound(run, "not-ready-keeps-claim-unready", "big")
    assert big["spec"]["nodeName"] == node, f"big ran on {big['spec']['nodeName']}, not on its group's node {node}, which is Ready again"
    group_must_be(run, "not-ready-keeps-claim-unready", "big", state=State.RESERVED, node=node, claim_generation=generation)
    run.release_pod(big["metadata"]["name"])
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "not-ready-keeps-claim-unready")
    pipelinerun_must_succeed(run, "not-ready-keeps-claim-b")
    group_must_be(run, "not-ready-keeps-claim-unready", "big", state=State.RELEASED, node=node)
