"""evicted_pod_returns: a group's pod evicted mid-run is created again by Tekton, and the new pod returns to the claim's node.

The fault it exists to catch: treating the eviction (a deletion) of a pod as a
failed bind (mutant `eviction_rolls_back_claim`: the pod leaves `holders` and,
with no holder left, the claim goes back to Pending), so the replacement pod
makes a new claim on whichever node scores best, away from the group's volume
data. Only a failed bind removes a holder, and only the node's deletion loses
a claim (docs/contract.md sections 7.3 and 10).

What comes back depends on the kubelet. On KWOK the evicted pod is gone at
once and Tekton creates the TaskRun's pod again. On kind (measured 2026-12-01)
the kubelet kills the held step, which exits 255: the TaskRun fails with
StepFailed and, without retries, so does the PipelineRun, and no pod comes
back. So `small` has `retries: 1`: there the replacement is the retry's pod,
and it too must return to the claim's node.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    pipelinerun_must_succeed,
    pod_must_be_running,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_be_replaced,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="evicted_pod_returns",
    description="The running 200m pod of a group that reserves 3800m is evicted: Tekton creates it again and the new pod lands on the claim's node (same claimGeneration), beside a filler that makes the other node the emptier; the group's 3800m task follows it there",
    features=(Feature.RESILIENCE,),
    fixtures=("evicted_pod_returns", "evicted_pod_returns-filler"),
    volumes=("source",),
)


def test_evicted_pod_returns(run: ScenarioRun) -> None:
    run.apply("evicted_pod_returns")
    small, node, record = task_must_hold_its_group(run, "evicted-pod-returns", "small")
    generation = claim_generation_of(record, "small")
    # 900m on the group's node: 200m (small) + 3600m (the residual: 3800m peak - 200m) + 900m = 4700m of 4800m.
    # Once small's pod is gone the node holds 900m and the other node nothing, so a scheduler that let the
    # claim go with the pod finds the other node the better choice.
    run.apply("evicted_pod_returns-filler", node=node)
    pod_must_be_running(run, "evicted-pod-returns-filler")

    run.evict_pod(small["metadata"]["name"])
    # The new pod of small (200m) fits on the claim's node: 4800m - 900m (filler) = 3900m for the group's pods.
    again = task_pod_must_be_replaced(run, "evicted-pod-returns", "small", gone=small)
    assert again["spec"]["nodeName"] == node, (
        f"{again['metadata']['name']} (the evicted pod's replacement) is on {again['spec']['nodeName']}, not on its group's node {node}"
    )
    group_must_be(run, "evicted-pod-returns", "small", state=State.RESERVED, node=node, claim_generation=generation)

    run.release_pod(again["metadata"]["name"])
    # big (3800m) fits beside the filler: 3800m <= 4800m - 900m.
    big = task_pod_must_be_bound(run, "evicted-pod-returns", "big")
    assert big["spec"]["nodeName"] == node, f"big ran on {big['spec']['nodeName']}, not on its group's node {node}"
    group_must_be(run, "evicted-pod-returns", "big", state=State.RESERVED, node=node, claim_generation=generation)
    run.release_pod(big["metadata"]["name"])
    pipelinerun_must_succeed(run, "evicted-pod-returns")
    group_must_be(run, "evicted-pod-returns", "big", state=State.RELEASED, node=node)
