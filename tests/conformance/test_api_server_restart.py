"""api_server_restart: every watch breaks while A holds its peak; the claim holds and B is judged after recovery.

The fault it exists to catch: a scheduler whose view of the reservations does
not survive a broken watch (mutant `forgets_records_on_broken_watch`: its
record cache is emptied when the watch fails and refilled only by the events
that follow, so a claim nobody writes again is forgotten). The API server is
stopped (SIGTERM, as a rolling restart does) and started again while A
reserves 3800m on its node and runs only its 200m task; B arrives once the
cluster serves again.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    group_must_stay,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="api_server_restart",
    description="kube-apiserver is restarted while A reserves 3800m and runs 200m: A stays Reserved on its node with the same claimGeneration, B (2000m) created after the restart goes to the other node, A's big task lands on A's node and both runs are Released at the end",
    features=(Feature.RESILIENCE,),
    fixtures=("api_server_restart-a", "api_server_restart-filler", "api_server_restart-b"),
    volumes=("a-source", "b-source"),
    restarts=("kube-apiserver",),
)


def test_api_server_restart(run: ScenarioRun) -> None:
    run.apply("api_server_restart-a")
    small, a_node, record = task_must_hold_its_group(run, "a", "small")
    generation = claim_generation_of(record, "small")
    other = next(n for n in run.node_names if n != a_node)
    # 1000m on the other node: with A's reservation forgotten, A's node (200m used) is the emptier one.
    run.apply("api_server_restart-filler", node=other)

    run.restart_component("kube-apiserver")
    # The claim outlives the restart as it was: same node, same holder, same claim.
    group_must_stay(run, "a", "small", node=a_node, holders=(small,))
    group_must_be(run, "a", "small", state=State.RESERVED, node=a_node, claim_generation=generation)

    # On A's node B has 4800m - 200m (small) - 3600m (A's residual: 3800m peak - 200m running) = 1000m,
    # less than its 2000m; beside the filler it has 4800m - 1000m = 3800m.
    run.apply("api_server_restart-b")
    # The first pod after the restart: the scheduler's watches may first reconnect with a backoff.
    b_pod = task_pod_must_be_bound(run, "b", "only", timeout="component_recovery")
    assert b_pod["spec"]["nodeName"] == other, (
        f"B landed on {b_pod['spec']['nodeName']}, inside the peak A reserved before the API server restarted: it should be on {other}"
    )

    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, "a", "big")
    assert big["spec"]["nodeName"] == a_node, f"A's big task ran on {big['spec']['nodeName']}, not on its group's node {a_node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "a")
    pipelinerun_must_succeed(run, "b")
    # Nothing leaks: both groups are Released once their runs are done.
    group_must_be(run, "a", "big", state=State.RELEASED, node=a_node, claim_generation=generation)
    group_must_be(run, "b", "only", state=State.RELEASED, node=other)
