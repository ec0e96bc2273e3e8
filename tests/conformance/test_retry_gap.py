"""retry_gap: the reservation holds through the retry gap, however long it lasts.

The fault it exists to catch: releasing when every *visible* pod of the group
is terminal (mutant `release_on_visible_pods`). Between a failed attempt and
its retry every pod of the task is Failed, yet Tekton will create another; a
ResourceQuota holds that pod back, so the gap lasts the whole `group_stays`
window instead of a few milliseconds.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_stay,
    pipelinerun_must_succeed,
    pod_creation_must_be_allowed,
    pod_creation_must_be_denied,
    pod_must_be_finished,
    pod_must_be_running,
    task_pod_must_be_bound,
    task_pod_must_not_exist,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="retry_gap",
    description="A group task fails its first attempt while a quota holds its retry's pod back: the group stays Reserved on its node through the gap, and the retry lands there once the quota is lifted",
    features=(Feature.RETRY_HOLD,),
    fixtures=("retry_gap", "retry_gap-filler", "retry_gap-quota"),
    volumes=("source",),
)


def test_retry_gap(run: ScenarioRun) -> None:
    run.apply("retry_gap")
    first = task_pod_must_be_bound(run, "retry-gap", "flaky", attempt=0)
    node = first["spec"]["nodeName"]
    pod_must_be_running(run, first["metadata"]["name"])
    group_must_be(run, "retry-gap", "flaky", state=State.RESERVED, node=node)
    run.apply("retry_gap-filler", node=node)
    quota = run.apply("retry_gap-quota")
    pod_creation_must_be_denied(run)

    run.release_pod(first["metadata"]["name"])
    assert pod_must_be_finished(run, first["metadata"]["name"]) == "Failed"
    group_must_stay(run, "retry-gap", "flaky", node=node)
    task_pod_must_not_exist(run, "retry-gap", "flaky", attempt=1)

    for doc in quota:
        run.delete(doc)
    pod_creation_must_be_allowed(run)
    run.nudge_task_run("retry-gap", "flaky")
    retry = task_pod_must_be_bound(run, "retry-gap", "flaky", attempt=1)
    assert retry["spec"]["nodeName"] == node, f"the retry ran on {retry['spec']['nodeName']}, not on its group's node {node}"
    group_must_be(run, "retry-gap", "flaky", state=State.RESERVED, node=node)
    run.release_pod(retry["metadata"]["name"])
    pipelinerun_must_succeed(run, "retry-gap")
    group_must_be(run, "retry-gap", "flaky", state=State.RELEASED, node=node)
