"""volume_claim_template_default_class: a workspace of the default class is provisioned on its group's node.

The fixture's volumeClaimTemplate names no storage class, as most users write it,
so its claim takes the cluster's default (kind's `standard`: the local-path
provisioner, WaitForFirstConsumer). Nothing provisions such a claim until a
scheduler annotates it with the node it chose (`volume.kubernetes.io/selected-node`),
and under the contract the pod is bound only once the claim is Bound there. A
scheduler that ignores volumes binds `fetch` with its claim Pending for ever; on
real nodes the pod would sit in ContainerCreating until its TaskRun times out.

B, applied once A holds its peak, cannot fit beside it: its group, and so its claim's
volume, go to the other node.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario
from harness.suite.volume_checks import claim_must_be_provisioned_for, claims_must_be_bound_on

SCENARIO = Scenario(
    name="volume_claim_template_default_class",
    description=(
        "a volumeClaimTemplate of the default class (WaitForFirstConsumer) is provisioned on the node of its group's first pod, "
        "and every task of the group runs there; a second run that does not fit beside the first one's peak goes, with its volume, "
        "to the other node"
    ),
    features=(Feature.VOLUMES, Feature.COLOCATION),
    fixtures=("volume_claim_template_default_class",),
    default_storage_class=True,
)

A = "volume-claim-template-default-class-a"
B = "volume-claim-template-default-class-b"

# Two nodes. Each run: fetch 0.1 of a node's CPU (held), then build 0.6, then test 0.3, one at a
# time: peak 0.6. Beside A's 0.6 held on its node, B's 0.6 would need 1.2 of that node: B goes
# to the other one, empty.


def test_volume_claim_template_default_class(run: ScenarioRun) -> None:
    run.apply("volume_claim_template_default_class", name=A)
    a_fetch, a_node, record = task_must_hold_its_group(run, A, "fetch")
    claim_must_be_provisioned_for(run, a_fetch)
    group_must_have(run, record, "fetch", tasks={"fetch", "build", "test"}, workspaces={"source"},
                    peak_cpu_millis=share_of(run.node_cpu_millis(), 0.6), peak_memory_bytes=0)

    run.apply("volume_claim_template_default_class", name=B)
    b_fetch, b_node, _ = task_must_hold_its_group(run, B, "fetch")
    assert b_node != a_node, (
        f"B's fetch landed on {a_node} beside A's reserved peak of 0.6 of the node: B's own peak of 0.6 does not fit there"
    )
    claim_must_be_provisioned_for(run, b_fetch)

    for name, fetch, node in ((A, a_fetch, a_node), (B, b_fetch, b_node)):
        run.release_pod(fetch["metadata"]["name"])
        assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
        for task in ("build", "test"):
            pod = task_pod_must_be_bound(run, name, task)
            assert pod["spec"]["nodeName"] == node, f"{name}/{task} ran on {pod['spec']['nodeName']}, not on its group's node {node}, where its volume is"
            claims_must_be_bound_on(run, pod)
        pipelinerun_must_succeed(run, name)
        group_must_be(run, name, "fetch", state=State.RELEASED, node=node)
