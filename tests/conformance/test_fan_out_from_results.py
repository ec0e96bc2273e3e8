"""fan_out_from_results: a fan-out from a task result reserves one combination; the rest run only in room nobody else holds.

docs/contract.md section 6: a matrix whose values come from a result is not
known when the record is made, and a peak never changes, so the task counts as
one combination. Section 7: each of its pods is a pod of a Reserved group, bound
only to the group's node and only where its own request fits beside every pod
and the other groups' residuals.

Here B's group holds 2600/4800 of the only node (small 200, held; big 2600 to
come). A's `list` (200) writes `shards: [a, b, c]`; `shard` (1200 each, held)
fans out over it on the same workspace: A's peak is 1200. Once list is done,
one shard binds (2200 left beside B), the others wait (1000 left), and each
binds only when the one before it has ended.

The faults it exists to catch: counting a fan-out from results as no
combination at all (mutant `result_fan_out_counts_nothing`: A's peak is list's
200, the record says so); and letting a group's pods beyond its peak into room
another group holds (the second shard bound beside the first, into B's
residual: `node-overcommitted`, and the one-at-a-time check fails).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    matrixed_pods_must_bind_one_by_one,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="fan_out_from_results",
    description=(
        "B holds 2600m of the only 4800m node; A's list writes shards [a, b, c] and shard (1200m each) fans out over them on A's "
        "workspace: A reserves one combination (1200m), and the three shards run one at a time beside B's reservation"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("fan_out_from_results-b", "fan_out_from_results-a"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)
A, B = "fan-out-from-results-a", "fan-out-from-results-b"

# Peaks, by hand (fractions of the node's CPU, as cpu() renders them, rounded down; no memory is asked):
#   B: small 200/4800, then big 2600/4800: 2600/4800; while small runs, 200 + a residual of 2400.
#   A: list 200/4800, then shard over a result: one combination, 1200/4800. Peak 1200/4800.
# Once list is done: 4800 - 200 - 2400 = 2200/4800 beside B: one shard (1200) fits, a second does not (1000 left).
def test_fan_out_from_results(run: ScenarioRun) -> None:
    cpu = run.node_cpu_millis()
    run.apply("fan_out_from_results-b")
    small, node, b_record = task_must_hold_its_group(run, B, "small")
    group_must_have(run, b_record, "small", tasks={"small", "big"}, workspaces={"source"}, peak_cpu_millis=cpu * 2600 // 4800, peak_memory_bytes=0)

    run.apply("fan_out_from_results-a")
    listing = task_pod_must_be_bound(run, A, "list")
    assert listing["spec"]["nodeName"] == node, f"list is on {listing['spec']['nodeName']}, but the pool's only node is {node}"
    a_record = run.record(A)
    group_must_have(run, a_record, "list", tasks={"list", "shard"}, workspaces={"source"}, peak_cpu_millis=cpu * 1200 // 4800, peak_memory_bytes=0)
    done = taskrun_must_be_done(run, A, "list")
    assert [r["name"] for r in done["status"].get("results") or []] == ["shards"], f"list wrote no shards result: this scenario's premise failed ({done['status']})"

    matrixed_pods_must_bind_one_by_one(run, A, "shard", combinations=3, node=node)
    pipelinerun_must_succeed(run, A)
    group_must_be(run, A, "shard", state=State.RELEASED, node=node)
    group_must_be(run, B, "small", state=State.RESERVED, node=node)
    run.release_pod(small["metadata"]["name"])
    pipelinerun_must_succeed(run, B)
