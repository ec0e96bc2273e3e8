"""skipped_task_counts: a task behind a `when` expression counts in the group's peak, whether or not it will run.

The fault it exists to catch: a peak that leaves out tasks guarded by `when`
expressions (they "may not run"). While A runs only its 200m task, its 3800m
task may still come, so its peak is 3800m and B (2000m) must go elsewhere;
Tekton decides to skip the task only once the small one is done.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="skipped_task_counts",
    description="A's 3800m task waits behind a when expression that will be false: A still reserves 3800m while its 200m task runs, so B (2000m) goes to the other node; the skipped task never runs and A is Released",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("skipped_task_counts-a", "skipped_task_counts-filler", "skipped_task_counts-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand: small (200/4800 of a node) then big (3800/4800) in a chain, so
# the CPU peak is big's 3800/4800 of the node's CPU; no task requests memory.

def test_skipped_task_counts(run: ScenarioRun) -> None:
    run.apply("skipped_task_counts-a")
    small, a_node, record = task_must_hold_its_group(run, "skipped-task-counts-a", "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * 3800 // 4800, peak_memory_bytes=0,
    )

    b_pod = b_must_land_beside_the_filler(run, "skipped_task_counts", a_node=a_node, why="inside the room A's skippable task may still need")

    run.release_pod(small["metadata"]["name"])
    finished = pipelinerun_must_succeed(run, "skipped-task-counts-a")
    skipped = [s.get("name") for s in (finished.get("status") or {}).get("skippedTasks") or []]
    assert skipped == ["big"], f"Tekton skipped {skipped}, expected ['big']: the fixture's when expression did not work"
    group_must_be(run, "skipped-task-counts-a", "small", state=State.RELEASED, node=a_node)
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "skipped-task-counts-b")
