"""parallel_peak: a group's peak is the sum of the tasks that can run at once, not its largest task.

The fault it exists to catch: peak = max(task request) even for tasks that run
in parallel (mutant `max_peak`), which reserves 1500m for two parallel 1500m
tasks and lets another run take the room the second one needs.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import group_must_be, group_must_have, pipelinerun_must_succeed, pod_must_be_running, task_pod_must_be_bound
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="parallel_peak",
    description="A's group runs two parallel 1500m tasks after a 200m one: its peak is 3000m, so B (2000m) does not fit beside it and goes to the other node; both parallel tasks then run on A's node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("parallel_peak-a", "parallel_peak-filler", "parallel_peak-b"),
    volumes=("a-source", "b-source"),
)


# No task of this fixture requests memory, and Tekton's own init containers request none: the memory peak is 0.

def test_parallel_peak(run: ScenarioRun) -> None:
    run.apply("parallel_peak-a")
    prep = task_pod_must_be_bound(run, "parallel-peak-a", "prep")
    a_node = prep["spec"]["nodeName"]
    pod_must_be_running(run, prep["metadata"]["name"])
    record = group_must_be(run, "parallel-peak-a", "prep", state=State.RESERVED, node=a_node)
    group_must_have(run, record, "prep", tasks={"prep", "left", "right"}, workspaces={"source"}, peak_cpu_millis=2 * (run.node_cpu_millis() * 1500 // 4800), peak_memory_bytes=0)

    other = next(n for n in run.node_names if n != a_node)
    run.apply("parallel_peak-filler", node=other)
    run.apply("parallel_peak-b")
    b_pod = task_pod_must_be_bound(run, "parallel-peak-b", "only")
    assert b_pod["spec"]["nodeName"] == other, (
        f"B landed on {b_pod['spec']['nodeName']}, inside the room A's two parallel tasks need: it should be on {other}"
    )

    run.release_pod(prep["metadata"]["name"])
    left = task_pod_must_be_bound(run, "parallel-peak-a", "left")
    right = task_pod_must_be_bound(run, "parallel-peak-a", "right")
    for pod in (left, right):
        assert pod["spec"]["nodeName"] == a_node, f"{pod['metadata']['name']} ran on {pod['spec']['nodeName']}, not on its group's node {a_node}"
        run.release_pod(pod["metadata"]["name"])
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "parallel-peak-a")
    pipelinerun_must_succeed(run, "parallel-peak-b")
