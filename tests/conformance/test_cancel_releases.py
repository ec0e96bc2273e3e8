"""cancel_releases: cancelling a PipelineRun releases its reservations, and their room serves other runs.

The fault it exists to catch: no release when the PipelineRun is cancelled
(mutant `no_release_on_cancel`): the group's later task will never run, yet its
peak stays reserved, a leak that keeps B out of the node for good.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    pipelinerun_must_list_task,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="cancel_releases",
    description="A run reserving 3800m of the single node is cancelled while its 200m task runs: its group is Released, and B (2000m, which fits only without that reservation) binds on the node",
    features=(Feature.RELEASE,),
    fixtures=("cancel_releases", "cancel_releases-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)


def test_cancel_releases(run: ScenarioRun) -> None:
    run.apply("cancel_releases")
    small = task_pod_must_be_bound(run, "cancel-releases-cancelled", "small")
    node = small["spec"]["nodeName"]
    group_must_be(run, "cancel-releases-cancelled", "small", state=State.RESERVED, node=node)
    # Tekton cancels only the TaskRuns it lists already: judge the scheduler only once Tekton has acted.
    pipelinerun_must_list_task(run, "cancel-releases-cancelled", "small")

    run.cancel("cancel-releases-cancelled")
    taskrun_must_be_done(run, "cancel-releases-cancelled", "small")
    group_must_be(run, "cancel-releases-cancelled", "small", state=State.RELEASED, node=node)
    run.apply("cancel_releases-b")
    b_pod = task_pod_must_be_bound(run, "cancel-releases-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "cancel-releases-b")
