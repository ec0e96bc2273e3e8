"""kill_between_claim_and_bind: a scheduler killed after its claim and before its bind; the pod binds under that claim after the restart.

The state "claimed, not bound" is held, not hoped for: two admission policies
(fixture `kill_between_claim_and_bind-fault`) deny every binding and every
status write that would undo a claim, so the group's first pod P is claimed on
node X, its bind is denied and its rollback too. The scheduler is killed in
that state, both policies are deleted while it is down, and it is started
again. It finds the group Reserved on X with P among the holders and P
unbound. docs/contract.md sections 5 and 7: the record is the state, a
restarted scheduler MUST NOT roll back claims it finds, and a holder not yet
bound is placed under the claim it holds: P binds on X, at the same
claimGeneration, never on another node.

A filler on X makes the other node the better one by scoring, so a scheduler
that forgets the claim (or rolls it back and claims afresh, mutant
`unbound_claim_dropped_on_start`) sends P elsewhere every time.
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
from harness.waits import NotYet, hold_for, wait_for

SCENARIO = Scenario(
    name="kill_between_claim_and_bind",
    description="The group's first pod is claimed on a node but its bind is held back (admission denies the bind and the rollback); the scheduler is killed, the faults lifted, it restarts: the pod binds on the claim's node at the same claimGeneration, never on the other node, and the group is Released at the end",
    features=(Feature.RESILIENCE, Feature.RESERVATION_RECORDS),
    fixtures=("kill_between_claim_and_bind-fault", "kill_between_claim_and_bind", "filler"),
    volumes=("source",),
)


def test_kill_between_claim_and_bind(run: ScenarioRun) -> None:
    fault = run.apply("kill_between_claim_and_bind-fault")
    binding_must_be_denied(run)
    run.apply("kill_between_claim_and_bind")
    pod = task_pod_must_exist(run, "kill-between-claim-and-bind", "first")
    uid, name = pod["metadata"]["uid"], pod["metadata"]["name"]

    def claimed_not_bound() -> tuple[str, int]:
        run.assert_contract()
        _, group, status = group_status_now(run, "kill-between-claim-and-bind", "first")
        if status.state != State.RESERVED or uid not in status.holders:
            raise NotYet(f"group {group.name} is {status.state.value} on {status.node or 'no node'} with holders {list(status.holders)}, {name} ({uid}) not among them")
        bound_to = (run.pod(name).get("spec") or {}).get("nodeName")
        assert not bound_to, f"{name} is bound to {bound_to} although binding is denied"
        return str(status.node), status.claim_generation

    node, generation = wait_for(claimed_not_bound, what=f"{name} claimed and not bound", timeout="record_state", timeouts=run.timeouts)

    def still_claimed_not_bound() -> None:
        now = claimed_not_bound()
        if now != (node, generation):
            raise NotYet(f"the claim moved from {node} (generation {generation}) to {now[0]} (generation {now[1]})")

    hold_for(still_claimed_not_bound, what=f"{name} claimed on {node} and not bound", duration="group_stays", timeouts=run.timeouts)

    # Room on X for the group beside the filler: filler 0.5 + the group's CPU peak (second's 0.4,
    # the tasks run one after the other) = 0.9 of a node, so the claim still fits there; the other
    # node is empty and scores better for a pod placed afresh.
    group_node_must_look_worse(run, node)

    def lift_the_faults() -> None:
        for doc in reversed(fault):
            run.delete(doc)

    run.restart_scheduler(while_down=lift_the_faults)
    # The first binding after the kill: the successor may first wait out a leader-election lease.
    bound = task_pod_must_be_bound(run, "kill-between-claim-and-bind", "first", timeout="scheduler_failover")
    assert bound["metadata"]["uid"] == uid, f"{name} was replaced (uid {bound['metadata']['uid']}, was {uid})"
    assert bound["spec"]["nodeName"] == node, (
        f"{name} was bound to {bound['spec']['nodeName']}, not to {node}, where it held the group's claim (generation {generation}) when the scheduler was killed"
    )
    group_must_be(run, "kill-between-claim-and-bind", "first", state=State.RESERVED, node=node, claim_generation=generation)
    _, _, status = group_status_now(run, "kill-between-claim-and-bind", "first")
    assert uid in status.holders, f"{name} is bound on {node} but not a holder of its group's claim"

    run.release_pod(name)
    second = task_pod_must_be_bound(run, "kill-between-claim-and-bind", "second")
    assert second["spec"]["nodeName"] == node, f"the group's second task went to {second['spec']['nodeName']}, not to the claim's node {node}"
    pipelinerun_must_succeed(run, "kill-between-claim-and-bind")
    group_must_be(run, "kill-between-claim-and-bind", "second", state=State.RELEASED, node=node, claim_generation=generation)
