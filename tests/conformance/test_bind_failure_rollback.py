"""bind_failure_rollback: when binding the group's first pod fails, its claim is rolled back; once binding works, it sticks.

Before `second` is placed, a filler of half a node's CPU goes on the group's
node, so a scheduler that does not remember the group sends `second` to the
empty other node every time, not by a random tie-break.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    binding_must_be_denied,
    group_must_be,
    group_node_must_look_worse,
    group_status_now,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
    task_pod_must_exist,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario
from harness.waits import NotYet, wait_for

SCENARIO = Scenario(
    name="bind_failure_rollback",
    description="Binding the group's first pod is denied by an admission policy: the claim is rolled back and nothing is bound; once the fault is lifted the pod binds and the group is Reserved on its node",
    features=(Feature.BIND_ROLLBACK,),
    fixtures=("bind_failure_rollback-fault", "bind_failure_rollback", "filler"),
    volumes=("source",),
)


def test_bind_failure_rollback(run: ScenarioRun) -> None:
    fault = run.apply("bind_failure_rollback-fault")
    binding_must_be_denied(run)
    run.apply("bind_failure_rollback")
    task_pod_must_exist(run, "bind-failure-rollback", "first")

    if run.checks_records:

        def rolled_back() -> None:
            _, group, status = group_status_now(run, "bind-failure-rollback", "first")
            if status.claim_generation < 1:
                raise NotYet(f"group {group.name} was never claimed (claimGeneration {status.claim_generation})")
            if status.state != State.PENDING or status.node or status.holders:
                raise NotYet(f"group {group.name} is {status.state.value} on {status.node or 'no node'} with holders {list(status.holders)}")

        wait_for(rolled_back, what="a claim made and rolled back after a failed bind", timeout="record_state", timeouts=run.timeouts)

    pod = run.task_pods("bind-failure-rollback", "first")[0]
    assert not pod["spec"].get("nodeName"), f"{pod['metadata']['name']} is bound to {pod['spec']['nodeName']} although binding is denied"

    for doc in reversed(fault):
        run.delete(doc)
    bound = task_pod_must_be_bound(run, "bind-failure-rollback", "first")
    group_must_be(run, "bind-failure-rollback", "first", state=State.RESERVED, node=bound["spec"]["nodeName"])
    # Room on the group's node for second: filler 0.5 + the group's CPU peak (second's 0.4) = 0.9 of a node.
    group_node_must_look_worse(run, bound["spec"]["nodeName"])
    run.release_pod(bound["metadata"]["name"])
    second = task_pod_must_be_bound(run, "bind-failure-rollback", "second")
    assert second["spec"]["nodeName"] == bound["spec"]["nodeName"], "the group's second task left the group's node"
    pipelinerun_must_succeed(run, "bind-failure-rollback")
