"""result_dependency: a dependency only through results makes two tasks sequential, so they do not add up.

The faults it exists to catch: building the DAG from runAfter alone, and
reading result references from params alone (held-out fault
`held_result_deps_from_params_only`: C's `check` reads produce's result in a
`when` expression only, and would be taken to run beside produce, 0.3 + 0.4 CPU
reserved for a peak of 0.4). `consume`
names no runAfter but uses `$(tasks.produce.results.digest)` in its params, so
Tekton starts it only after produce is done (docs/contract.md section 6). An
implementation that misses the edge thinks the two can overlap, reserves
their sum, and turns B away from the only node although there is room.

What Tekton v1.15 did on the local cluster (read once while writing this
scenario): produce's pod `result-dependency-a-produce-pod` has container `step-work` (480m) and
init containers `prepare` and `place-scripts` with no resources. consume got
no TaskRun while produce ran; once produce was done, consume was skipped
("Results were missing", its onError is continue: KWOK's simulated step writes
no result) and the PipelineRun Succeeded (reason Completed).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
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
    name="result_dependency",
    description="consume uses produce's result (no runAfter): they never overlap, so A's group reserves 0.5, not 0.6, and B (0.45) fits beside it on the only node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("result_dependency-a", "result_dependency-b", "result_dependency-c"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source", "c-source"),
)


# Peak, by hand (fractions of one node, as cpu() renders them; no task requests memory and
#   Tekton's init containers request none, so the memory peak is 0):
#   produce: 0.1 CPU (480m); consume: 0.5 CPU (2400m), after produce through its result.
#   The only concurrent sets are {produce} and {consume}: the peak is max(480, 2400) = 2400m.
# Placement: the node (4800m) has 4800 - 480 (produce's pod) - (2400 - 480) (A's residual) = 2400m
#   left; B asks 2160m and fits. Treating the two as parallel (peak 2880m) leaves 1920m: B would wait.

def test_result_dependency(run: ScenarioRun) -> None:
    run.apply("result_dependency-a")
    produce, node, record = task_must_hold_its_group(run, "result-dependency-a", "produce")
    group_must_have(
        run, record, "produce", tasks={"produce", "consume"}, workspaces={"source"},
        peak_cpu_millis=share_of(run.node_cpu_millis(), 0.5), peak_memory_bytes=0,
    )

    run.apply("result_dependency-b")
    b_pod = task_pod_must_be_bound(run, "result-dependency-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    group_must_be(run, "result-dependency-b", "only", state=State.RESERVED, node=node)
    group_must_be(run, "result-dependency-a", "produce", state=State.RESERVED, node=node)

    run.release_pod(produce["metadata"]["name"])
    pipelinerun_must_succeed(run, "result-dependency-a")
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "result-dependency-b")

    # C: check reads produce's result in a `when` expression only; it runs after produce, and the peak is check's.
    run.apply("result_dependency-c")
    produce, c_node, c_record = task_must_hold_its_group(run, "result-dependency-c", "produce")
    group_must_have(
        run, c_record, "produce", tasks={"produce", "check"}, workspaces={"source"},
        peak_cpu_millis=max(share_of(run.node_cpu_millis(), 0.3), share_of(run.node_cpu_millis(), 0.4)), peak_memory_bytes=0,
    )
    run.release_pod(produce["metadata"]["name"])
    check = task_pod_must_be_bound(run, "result-dependency-c", "check")
    assert check["spec"]["nodeName"] == c_node, f"check ran on {check['spec']['nodeName']}, not on its group's node {c_node}"
    pipelinerun_must_succeed(run, "result-dependency-c")
