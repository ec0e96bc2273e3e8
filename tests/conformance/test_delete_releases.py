"""delete_releases: deleting a PipelineRun releases its reservations, and their room serves other runs.

The fault it exists to catch: a reservation that outlives its PipelineRun,
such as one kept in a scheduler's memory after the record is garbage-collected
with its owner, or a record without the ownerReference that lets the
collector delete it. The group must end Released or with its record gone, and
B (which fits only without that reservation) must bind.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_be_released_or_gone,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="delete_releases",
    description="A run reserving 3800m of the single node is deleted while its 200m task runs: its group is Released or its record gone, and B (2000m, which fits only without that reservation) binds on the node",
    features=(Feature.RELEASE,),
    fixtures=("delete_releases", "delete_releases-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)


def test_delete_releases(run: ScenarioRun) -> None:
    run.apply("delete_releases")
    small = task_pod_must_be_bound(run, "delete-releases-deleted", "small")
    node = small["spec"]["nodeName"]
    group_must_be(run, "delete-releases-deleted", "small", state=State.RESERVED, node=node)

    run.delete_pipeline_run("delete-releases-deleted")
    group_must_be_released_or_gone(run, "delete-releases-deleted", "small")
    run.apply("delete_releases-b")
    b_pod = task_pod_must_be_bound(run, "delete-releases-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "delete-releases-b")
