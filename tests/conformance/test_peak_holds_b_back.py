"""peak_holds_b_back: with one node, B waits while A holds its peak there, and runs once A is done.

peak_blocks_b lets B escape to a second node, which a scheduler that spreads
PipelineRuns apart (Tekton's affinity assistants prefer separate nodes) also
does by accident. Here there is nowhere to escape: only a real reservation
keeps B off the node until A's big task has run.
"""

from __future__ import annotations

from harness.suite.checks import (
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="peak_holds_b_back",
    description="With a single node, B (which fits beside A's running pod but not beside A's peak) stays Pending until A's big task has run there",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("peak_holds_b_back-a", "peak_holds_b_back-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)


def test_peak_holds_b_back(run: ScenarioRun) -> None:
    run.apply("peak_holds_b_back-a")
    small, node, _ = task_must_hold_its_group(run, "peak-holds-b-back-a", "small")

    run.apply("peak_holds_b_back-b")
    task_pod_must_stay_pending(run, "peak-holds-b-back-b", "only")

    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, "peak-holds-b-back-a", "big")
    assert big["spec"]["nodeName"] == node
    pipelinerun_must_succeed(run, "peak-holds-b-back-a")
    b_pod = task_pod_must_be_bound(run, "peak-holds-b-back-b", "only")
    assert b_pod["spec"]["nodeName"] == node
    pipelinerun_must_succeed(run, "peak-holds-b-back-b")
