"""timeout_releases: a PipelineRun that runs out of time releases its reservations, and their room serves other runs.

The fault it exists to catch: a release rule that knows only success,
failure, cancel and delete, not `timeouts.pipeline` (docs/contract.md section
8): the group's later task will never run, yet its peak stays reserved and
keeps B out of the node for good.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import group_must_be, pipelinerun_must_end_with, pipelinerun_must_succeed, task_pod_must_be_bound
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="timeout_releases",
    description="A run reserving 3800m of the single node times out (timeouts.pipeline) while its 200m task runs: its group is Released, and B (2000m, which fits only without that reservation) binds on the node",
    features=(Feature.RELEASE,),
    fixtures=("timeout_releases", "timeout_releases-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
    # Long enough for the small task's pod to be bound and the claim made, short enough to keep the scenario quick. On
    # kind the pod waits for its claim to be provisioned first (the local-path helper pod): on the 2-core machine with
    # six scenarios at a time (2026-12-07) one run's pod was created 0.6 s in and bound 8.8 s after that; in another
    # it was created 2.8 s in and the 12 s timeout this had been ran out before it was bound, failing a correct scheduler.
    values={"pipeline_timeout": "30s"},
)


def test_timeout_releases(run: ScenarioRun) -> None:
    run.apply("timeout_releases")
    small = task_pod_must_be_bound(run, "timeout-releases-slow", "small")
    node = small["spec"]["nodeName"]
    group_must_be(run, "timeout-releases-slow", "small", state=State.RESERVED, node=node)

    # Tekton's work first: the run must have timed out before the scheduler is judged on it.
    pipelinerun_must_end_with(run, "timeout-releases-slow", status="False", reason="PipelineRunTimeout")
    group_must_be(run, "timeout-releases-slow", "small", state=State.RELEASED, node=node)
    run.apply("timeout_releases-b")
    b_pod = task_pod_must_be_bound(run, "timeout-releases-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "timeout-releases-b")
