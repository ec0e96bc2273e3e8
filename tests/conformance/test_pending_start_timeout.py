"""pending_start_timeout: a run's `timeouts.pipeline` counts from its start, however long it was pending before.

docs/contract.md section 8: a group is released when its PipelineRun is past
`timeouts.pipeline`, and Tekton counts that from `status.startTime`, which it
sets when the run starts, not at creation. A run created PipelineRunPending
(what a queueing controller such as Kueue creates, then starts) can start
long after it was created.

The fault it exists to catch: the deadline counted from
metadata.creationTimestamp (mutant `timeout_from_creation`): the group is
released half-way through the run's time, while its big task is still to
run; the monitor finds the reason PipelineRunTimedOut untrue (rule
`release-reason-untrue`), and B, pending beside A's peak, binds before A
timed out. The scenario holds the run pending for `run_pending` and gives it
twice that as `timeouts.pipeline`, so a deadline from creation falls due
`run_pending` before the true one, far longer than a release takes.

What Tekton v1.15 does: while spec.status is PipelineRunPending the run has
no startTime and no TaskRun (the scenario checks it all along); once the
status is removed it starts, sets startTime, and times the run out
`timeouts.pipeline` later (Succeeded False, reason PipelineRunTimeout).
"""

from __future__ import annotations

from datetime import timedelta

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_end_with,
    pipelinerun_must_stay_pending,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario
from harness.timestamps import kube_time

SCENARIO = Scenario(
    name="pending_start_timeout",
    description="A run created PipelineRunPending starts run_pending later, with timeouts.pipeline twice that: its group (3800m of the single node) stays Reserved until Tekton times it out after its start, not after its creation, and B (2000m) binds only then",
    features=(Feature.RELEASE,),
    fixtures=("pending_start_timeout-a", "graceful_stop-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
    # What the fixture renders with by default (the suite's catalogue checks); the test passes twice `run_pending`.
    values={"pipeline_timeout": "30s"},
)

# Peak, by hand: small 200/4800 then big 3800/4800 of the node's CPU, a chain: 3800/4800, no memory.
# Reserved, it leaves 1000m of 4800m, less than B's 2000m.


def test_pending_start_timeout(run: ScenarioRun) -> None:
    a, b = run.named("a"), run.named("b")
    pending = run.timeouts.run_pending
    run.apply("pending_start_timeout-a", name=a, pipeline_timeout=f"{2 * pending:g}s")
    pipelinerun_must_stay_pending(run, a)
    run.start_pending(a)
    small, node, record = task_must_hold_its_group(run, a, "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * 3800 // 4800, peak_memory_bytes=0,
    )
    metadata, status = run.pipeline_run(a)["metadata"], run.pipeline_run(a)["status"]
    created, started = kube_time(metadata["creationTimestamp"]), kube_time(status["startTime"])
    assert started - created >= timedelta(seconds=pending - 1), (
        f"Tekton started {a} {started - created} after its creation, not after the {pending:g}s it was held pending: this scenario's premise failed"
    )
    run.apply("graceful_stop-b", name=b)
    task_pod_must_stay_pending(run, b, "only")

    # A's time runs out 2 x run_pending after its start; until then the group holds its peak (the contract monitor
    # watches it all along: a release before is a PipelineRunTimedOut that is not true yet).
    ended = pipelinerun_must_end_with(run, a, status="False", reason="PipelineRunTimeout")
    group_must_be(run, a, "small", state=State.RELEASED, node=node)
    b_pod = task_pod_must_be_bound(run, b, "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    # The API server marks a pod PodScheduled True when it is bound (pods/binding), whatever scheduler bound it.
    scheduled = next((c for c in b_pod["status"].get("conditions") or [] if c.get("type") == "PodScheduled" and c.get("status") == "True"), {})
    bound_at, a_end = scheduled.get("lastTransitionTime"), kube_time(ended["status"]["completionTime"])
    assert bound_at, f"B's pod {b_pod['metadata']['name']} is bound but has no PodScheduled True condition with a time: {b_pod['status'].get('conditions')}"
    # Whole seconds on both sides: one second of slack.
    assert kube_time(bound_at) >= a_end - timedelta(seconds=1), (
        f"B was bound at {bound_at}, before A timed out at {ended['status']['completionTime']}: "
        f"A's group was released before its timeouts.pipeline ran out (counted from its start, {status['startTime']})"
    )
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, b)
