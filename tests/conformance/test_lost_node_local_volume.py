"""lost_node_local_volume: a group whose volume lives on a lost node waits for that node, and claims it again when it returns.

docs/contract.md, section 10 and Volumes V5: the claim is lost with the node
and the group goes back to Pending, but its Bound volume was made on that node
(the default class's, pinned by `kubernetes.io/hostname`). The replacement pod
can run nowhere else: it stays Pending, marked Unschedulable, and the group
stays Pending, while the pool's other node has all the room it needs. When a
node of that name registers again, the claim opens there, generation + 1.

The faults it exists to catch: a scheduler that moves the group to the other
node as if the volume could follow (`ignores_volume_node_affinity`: the kubelet
could never mount it there), one whose claim keeps pointing at the deleted
node (`stale_node`), and one that releases the group on node loss
(`node_loss_releases`).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    pipelinerun_must_succeed,
    pod_must_be_unschedulable,
    task_pod_must_be_bound,
    task_pod_must_be_recreated,
    task_pod_must_be_replaced,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario
from harness.suite.volume_checks import claim_must_be_provisioned_for, claims_must_be_bound_on

SCENARIO = Scenario(
    name="lost_node_local_volume",
    description=(
        "The node of a Reserved group whose claim was provisioned there is deleted: the group goes back to Pending; the "
        "replacement pod stays Unschedulable though the other node is empty; the node registers again and the claim "
        "opens there (generation + 1)"
    ),
    features=(Feature.NODE_LOSS, Feature.VOLUMES),
    fixtures=("lost_node_local_volume",),
    volumes=("source",),
    default_storage_class=True,
    local_only="a deleted kind node registers again only when its kubelet restarts, which the suite does not do",
)

NAME = "lost-node-local-volume"


def test_lost_node_local_volume(run: ScenarioRun) -> None:
    run.apply("lost_node_local_volume")
    first = task_pod_must_be_bound(run, NAME, "work")
    lost = first["spec"]["nodeName"]
    claim_must_be_provisioned_for(run, first)
    record = group_must_be(run, NAME, "work", state=State.RESERVED, node=lost)
    generation = claim_generation_of(record, "work")

    saved = run.lose_node(lost)
    group_must_be(run, NAME, "work", state=State.PENDING, claim_generation=generation)
    # Tekton makes the pod again; its volume admits only the lost node's hostname, so no node can take it.
    replacement = task_pod_must_be_recreated(run, NAME, "work", gone=first)
    pod_must_be_unschedulable(run, replacement["metadata"]["name"], why="no node admits all its volumes")
    group_must_be(run, NAME, "work", state=State.PENDING, claim_generation=generation)

    run.register_node_again(saved)
    back = task_pod_must_be_replaced(run, NAME, "work", gone=first)
    assert back["spec"]["nodeName"] == lost, f"the replacement pod is on {back['spec']['nodeName']}, but its volume lives on {lost}"
    claims_must_be_bound_on(run, back)
    group_must_be(run, NAME, "work", state=State.RESERVED, node=lost, claim_generation=None if generation is None else generation + 1)
    run.release_pod(back["metadata"]["name"])
    pipelinerun_must_succeed(run, NAME)
