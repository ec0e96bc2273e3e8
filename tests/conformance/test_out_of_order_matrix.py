"""out_of_order_matrix: a matrixed group task is done only when every one of its TaskRuns is, in whatever order they end.

docs/contract.md section 8: a group is released once every task of it is
done, and a matrixed task is done when each of its TaskRuns (one per
combination, `status.childReferences`) is. Tekton starts the combinations
together but they end in any order.

The fault it exists to catch: a task's TaskRuns read as one (mutant
`matrix_last_child_only`: a map of task to TaskRun, where a later
childReference overwrites an earlier one): the task looks done once the last
listed combination ends, the group is released while two of its pods still
run, and B, pending beside A's fan-out, binds into the room the group holds.
The scenario ends the combinations last first, then the first, and keeps the
middle one held, so a scheduler that reads any single TaskRun of the task
(the first, the last) releases early; each pod is held (sim.rescon.dev/hold)
until the scenario lets it end, so the order is the scenario's, not a race's.

What Tekton v1.15 builds (as in the scenario `matrix`): TaskRuns
`<run>-test-0`, `-1`, `-2`, listed in that order in childReferences, one pod
each; the PipelineRun stays Running until all three are done.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    matrixed_pods_must_run_on,
    pipelinerun_must_succeed,
    pod_must_be_running,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_exist,
    task_pod_must_stay_pending,
    task_run_of_pod_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="out_of_order_matrix",
    description="A's group is prep then test, matrixed over three values (3 x 1200m on the single 4800m node); the combinations end last first, then first, the middle one still running: the group stays Reserved and B (2000m) waits through both, and binds once the last combination is done and the group Released",
    features=(Feature.RELEASE,),
    fixtures=("out_of_order_matrix-a", "graceful_stop-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)

# Peak, by hand: prep 200/4800 of the node's CPU, then test's three combinations at once, 3 x 1200/4800;
# a chain, so the peak is 3600/4800, no memory. Reserved, the group leaves 4800 - 3600 = 1200m of 4800m,
# less than B's 2000m, however few of test's pods still run. Released with one 1200m pod running,
# it would leave 3600m, and B would fit.
#: The order the scenario ends test's combinations in: the last listed first, then the first.
ENDED_EARLY = (2, 0)
STILL_RUNNING = 1


def test_out_of_order_matrix(run: ScenarioRun) -> None:
    a, b = run.named("a"), run.named("b")
    run.apply("out_of_order_matrix-a", name=a)
    prep, node, record = task_must_hold_its_group(run, a, "prep")
    group_must_have(
        run, record, "prep", tasks={"prep", "test"}, workspaces={"source"},
        peak_cpu_millis=3 * (run.node_cpu_millis() * 1200 // 4800), peak_memory_bytes=0,
    )
    run.release_pod(prep["metadata"]["name"])
    pods = matrixed_pods_must_run_on(run, a, "test", combinations=3, node=node)
    for pod in pods:
        pod_must_be_running(run, pod["metadata"]["name"])
    run.apply("graceful_stop-b", name=b)
    task_pod_must_exist(run, b, "only")

    for index in ENDED_EARLY:
        run.release_pod(pods[index]["metadata"]["name"])
        task_run_of_pod_must_be_done(run, pods[index])
        # A's group still has a combination to finish: its peak stays Reserved and B waits.
        task_pod_must_stay_pending(run, b, "only")
        group_must_be(run, a, "test", state=State.RESERVED, node=node)

    run.release_pod(pods[STILL_RUNNING]["metadata"]["name"])
    pipelinerun_must_succeed(run, a)
    group_must_be(run, a, "test", state=State.RELEASED, node=node)
    b_pod = task_pod_must_be_bound(run, b, "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, b)
