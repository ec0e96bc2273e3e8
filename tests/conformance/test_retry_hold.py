"""retry_hold: a group's reservation survives a failed attempt, and the retry lands on the group's node.

Before `flaky` is placed, a filler of half a node's CPU goes on prep's node, so
a scheduler that does not remember the group sends flaky to the empty other
node every time, not by a random tie-break.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_node_must_look_worse,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    pod_must_be_running,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="retry_hold",
    description="A group task with retries, placed after a filler makes the group's node the worse-looking one: it fails once; the group stays Reserved on its node through the retry, which lands there; then the group is Released",
    features=(Feature.RETRY_HOLD,),
    fixtures=("retry_hold", "filler"),
    volumes=("source",),
)


def test_retry_hold(run: ScenarioRun) -> None:
    run.apply("retry_hold")
    prep = task_pod_must_be_bound(run, "retry-hold", "prep")
    node = prep["spec"]["nodeName"]
    # Room on prep's node for flaky: filler 0.5 + the group's CPU peak (flaky's 0.3) = 0.8 of a node.
    group_node_must_look_worse(run, node)
    run.release_pod(prep["metadata"]["name"])
    assert pod_must_be_finished(run, prep["metadata"]["name"]) == "Succeeded"

    first = task_pod_must_be_bound(run, "retry-hold", "flaky", attempt=0)
    assert first["spec"]["nodeName"] == node, f"flaky ran on {first['spec']['nodeName']}, not on its group's node {node}"
    pod_must_be_running(run, first["metadata"]["name"])
    run.release_pod(first["metadata"]["name"])
    assert pod_must_be_finished(run, first["metadata"]["name"]) == "Failed"

    retry = task_pod_must_be_bound(run, "retry-hold", "flaky", attempt=1)
    assert retry["metadata"]["name"].endswith("-retry1"), f"unexpected retry pod name {retry['metadata']['name']}"
    assert retry["spec"]["nodeName"] == node, f"the retry ran on {retry['spec']['nodeName']}, not on its group's node {node}"
    group_must_be(run, "retry-hold", "flaky", state=State.RESERVED, node=node)

    run.release_pod(retry["metadata"]["name"])
    pipelinerun_must_succeed(run, "retry-hold")
    group_must_be(run, "retry-hold", "flaky", state=State.RELEASED, node=node)
