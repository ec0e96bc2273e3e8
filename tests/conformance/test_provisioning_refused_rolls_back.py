"""provisioning_refused_rolls_back: a claim whose volume cannot be made on the chosen node is rolled back, and the group goes where it can be.

A blocker leaves the group's peak room on n0 only, and no volume can be made on
n0 (an admission policy refuses the provisioner's helper pods there, as a full
disk would refuse the volume). The scheduler chooses n0 and annotates the
template claim; the provisioner fails. Once the claim names n0, the blocker goes
and n0 is tainted NoSchedule: a Pending group avoids n0 from now on, while a
claim still held on n0 keeps its pod there for ever (section 10: a group's own
pod goes to its node whenever the rules allow, and this one does not tolerate the
taint). So the pod is bound on n1, with its volume there, only if the scheduler
gave up waiting for the volume on n0 (bounded: `provisioning_given_up`), rolled
its claim back, took its node off the claim, and chose again.
"""

from __future__ import annotations

from harness.cluster.storage import NAMESPACE as PROVISIONER_NAMESPACE
from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    pod_must_be_running,
    task_pod_must_be_bound,
    task_pod_must_exist,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario
from harness.suite.volume_checks import claim_must_be_provisioned_for, claim_of_pod_must_be_selected_for, helper_pods_must_be_refused_on

SCENARIO = Scenario(
    name="provisioning_refused_rolls_back",
    description=(
        "the provisioner cannot make the group's volume on n0, the only node with room for its peak: the scheduler gives up "
        "waiting, rolls its claim back and, once n0 is tainted and n1 has room, binds the pod on n1 with its volume there"
    ),
    features=(Feature.VOLUMES, Feature.BIND_ROLLBACK),
    fixtures=("provisioning_refused_rolls_back-fault", "provisioning_refused_rolls_back", "filler"),
    default_storage_class=True,
    local_path_faults=True,
    values={"provisioner_namespace": PROVISIONER_NAMESPACE},
)

NAME = "provisioning-refused-rolls-back"
#: What keeps a Pending group off n0 once its volume has been refused there.
NO_VOLUMES = {"key": "rescon.dev/no-volumes", "value": "true", "effect": "NoSchedule"}

# Two nodes, 4800m each. The group's peak is build's 0.4 of a node; the blocker takes 0.7 of n1,
# so at first only n0 has room (0.3 left on n1 < 0.4).


def test_provisioning_refused_rolls_back(run: ScenarioRun) -> None:
    n0, n1 = run.node_names
    run.apply("provisioning_refused_rolls_back-fault", node=n0)
    helper_pods_must_be_refused_on(run, n0, PROVISIONER_NAMESPACE)
    run.apply("filler", name=run.named("blocker"), node=n1, share=0.7)
    pod_must_be_running(run, run.named("blocker"))

    run.apply("provisioning_refused_rolls_back")
    fetch = task_pod_must_exist(run, NAME, "fetch")
    claim_of_pod_must_be_selected_for(run, fetch["metadata"]["name"], n0)
    pod = run.pod(fetch["metadata"]["name"])
    assert not pod["spec"].get("nodeName"), (
        f"{pod['metadata']['name']} was bound to {pod['spec']['nodeName']} while its claim, selected for {n0}, was not provisioned: "
        "a pod is bound only once each of its claims is Bound"
    )

    run.taint(n0, NO_VOLUMES)
    try:
        run.delete({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": run.named("blocker")}})
        fetch = task_pod_must_be_bound(run, NAME, "fetch", timeout="provisioning_given_up")
        assert fetch["spec"]["nodeName"] == n1, f"fetch was bound to {fetch['spec']['nodeName']}, where no volume can be made; {n1} has room"
        claim_must_be_provisioned_for(run, fetch)
        record = group_must_be(run, NAME, "fetch", state=State.RESERVED, node=n1)
        generation = claim_generation_of(record, "fetch")
        assert generation is None or generation >= 2, (
            f"the group is Reserved on {n1} at claimGeneration {generation}: its claim on {n0} was generation 1, "
            "so the claim on n1 must be a new one (section 7, rule 4: the rollback keeps the generation)"
        )
        run.release_pod(fetch["metadata"]["name"])
        assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
        build = task_pod_must_be_bound(run, NAME, "build")
        assert build["spec"]["nodeName"] == n1, f"build ran on {build['spec']['nodeName']}, not on {n1}, its group's and its volume's node"
        pipelinerun_must_succeed(run, NAME)
        group_must_be(run, NAME, "fetch", state=State.RELEASED, node=n1)
    finally:
        run.untaint(n0, NO_VOLUMES)
