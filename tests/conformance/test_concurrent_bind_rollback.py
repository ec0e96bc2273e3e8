"""concurrent_bind_rollback: a failed bind rolls back only its own pod's hold, never another holder's claim.

The fault it exists to catch: an Unreserve that clears the group's claim even
though another pod of the group is bound under it (mutant
`unreserve_clears_claim`). `left` binds; binding `right` is denied by an
admission policy, again at each retry; the group must stay Reserved on
left's node with left among its holders.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    binding_must_be_denied,
    group_must_be,
    group_must_stay,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
    task_pod_must_exist,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="concurrent_bind_rollback",
    description="Two parallel tasks of one group: left binds, binding right is denied; the claim survives for left (Reserved on its node, left a holder); once the fault is lifted right joins it there",
    features=(Feature.BIND_ROLLBACK,),
    fixtures=("concurrent_bind_rollback-fault", "concurrent_bind_rollback"),
    volumes=("source",),
)


def test_concurrent_bind_rollback(run: ScenarioRun) -> None:
    fault = run.apply("concurrent_bind_rollback-fault")
    binding_must_be_denied(run)
    run.apply("concurrent_bind_rollback")
    left = task_pod_must_be_bound(run, "concurrent-bind-rollback", "left")
    node = left["spec"]["nodeName"]
    task_pod_must_exist(run, "concurrent-bind-rollback", "right")

    group_must_stay(run, "concurrent-bind-rollback", "left", node=node, holders=(left,))
    right = run.task_pods("concurrent-bind-rollback", "right")[0]
    assert not right["spec"].get("nodeName"), f"{right['metadata']['name']} is bound to {right['spec']['nodeName']} although binding it is denied"

    for doc in reversed(fault):
        run.delete(doc)
    right = task_pod_must_be_bound(run, "concurrent-bind-rollback", "right")
    assert right["spec"]["nodeName"] == node, f"right ran on {right['spec']['nodeName']}, not on its group's node {node}"
    group_must_be(run, "concurrent-bind-rollback", "right", state=State.RESERVED, node=node)
    run.release_pod(left["metadata"]["name"])
    run.release_pod(right["metadata"]["name"])
    pipelinerun_must_succeed(run, "concurrent-bind-rollback")
