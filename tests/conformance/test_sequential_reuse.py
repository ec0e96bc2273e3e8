"""sequential_reuse: two PipelineRuns one after the other reuse one tight node; the first's reservation must go.

Fault it exists to catch: a reservation that is not released when its run is
done (tests/mutants/faults.py: no_release_when_done): the first run's peak
keeps three quarters of the only node, and the second run, started after the
first has finished, never fits.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="sequential_reuse",
    description=(
        "one 4800m node; run a (peak 3600m) runs and finishes, then run b (peak 3600m) starts: "
        "a's group is Released and b's claim fits on the same node"
    ),
    features=(Feature.RELEASE,),
    fixtures=("sequential_reuse-a", "sequential_reuse-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)

# One node, 4800m. Each run: prep (1200m) then build (3600m): peak max(1200, 3600) = 3600m; memory 0.
# b's claim needs 3600m. With a Released and its pods finished: 4800 - 0 = 4800m free, it fits.
# With a's group still Reserved (nothing of it running): a's residual is 3600 - 0 = 3600m, so
# 4800 - 3600 = 1200m free < 3600m, and b never fits.
PEAK_CPU = 3600


def _run_to_the_end(run: ScenarioRun, name: str) -> str:
    prep, node, record = task_must_hold_its_group(run, name, "prep")
    group_must_have(
        run, record, "prep", tasks={"prep", "build"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    run.release_pod(prep["metadata"]["name"])
    build = task_pod_must_be_bound(run, name, "build")
    assert build["spec"]["nodeName"] == node, f"{name}'s build ran on {build['spec']['nodeName']}, not on its group's node {node}"
    run.release_pod(build["metadata"]["name"])
    pipelinerun_must_succeed(run, name)
    group_must_be(run, name, "build", state=State.RELEASED, node=node)
    return node


def test_sequential_reuse(run: ScenarioRun) -> None:
    (only,) = run.node_names
    run.apply("sequential_reuse-a")
    assert _run_to_the_end(run, "sequential-reuse-a") == only
    run.apply("sequential_reuse-b")
    assert _run_to_the_end(run, "sequential-reuse-b") == only
