"""node_loss: a deleted node drops its claims; the group is Pending, then claims anew on a node that exists.

The fault it exists to catch: a claim that keeps pointing at a deleted node
(mutant `stale_node`): the group's next pod can only go to a node that is gone
and never runs. A ResourceQuota holds back the pod Tekton creates to replace
the lost one, so the Pending state in between (docs/contract.md, section 10:
node, holders and reservedAt cleared, claimGeneration kept, no releaseReason)
can be observed before the next claim.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    pipelinerun_must_succeed,
    pod_creation_must_be_allowed,
    pod_creation_must_be_denied,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="node_loss",
    description="The node of a Reserved group is deleted: the group goes back to Pending with its claimGeneration kept; the replacement pod makes a new claim (generation + 1) on the other node",
    features=(Feature.NODE_LOSS,),
    fixtures=("node_loss", "node_loss-quota"),
    volumes=("source",),
    volumes_attach_anywhere=(
        "the group moves to another node when its node is lost (section 10), as it can only with a volume any node "
        "attaches (a network share); a node-local volume keeps it waiting for its node (V5)"
    ),
)


def test_node_loss(run: ScenarioRun) -> None:
    run.apply("node_loss")
    first = task_pod_must_be_bound(run, "node-loss", "work")
    lost = first["spec"]["nodeName"]
    record = group_must_be(run, "node-loss", "work", state=State.RESERVED, node=lost)
    generation = claim_generation_of(record, "work")
    quota = run.apply("node_loss-quota")
    pod_creation_must_be_denied(run)

    run.lose_node(lost)
    group_must_be(run, "node-loss", "work", state=State.PENDING, claim_generation=generation)

    for doc in quota:
        run.delete(doc)
    pod_creation_must_be_allowed(run)
    run.nudge_task_run("node-loss", "work")
    replacement = task_pod_must_be_bound(run, "node-loss", "work")
    other = next(n for n in run.node_names if n != lost)
    assert replacement["spec"]["nodeName"] == other, f"the replacement pod is on {replacement['spec']['nodeName']}, expected {other}"
    group_must_be(
        run, "node-loss", "work", state=State.RESERVED, node=other, claim_generation=None if generation is None else generation + 1
    )
    run.release_pod(replacement["metadata"]["name"])
    pipelinerun_must_succeed(run, "node-loss")
