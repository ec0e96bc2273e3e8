"""The graceful-stop scenarios' shared opening and end: one fixture set, four ways for the DAG tasks to end early.

graceful_cancel_keeps_finally (CancelledRunFinally), graceful_stop_keeps_running
(StoppedRunFinally), tasks_timeout_keeps_finally (`timeouts.tasks`) and
failed_task_keeps_finally (the DAG task fails for good) judge docs/contract.md
section 8's "every task of the group is done" when finally is still to come on the fixtures `graceful_stop-a`,
`-b` and `-quota`. Each scenario writes its own stop and what must hold
through it; before and after the stop they are the same, so the steps are here.

By hand, on the pool's single 4800m node: A's group is {small, report}; its
peak is max(200, 3800) = 3800m (a finally task never overlaps a DAG task),
memory 0. While the group is Reserved the node holds 3800m of A whatever runs,
which leaves 4800 - 3800 = 1000m, less than B's 2000m. Once the group is
Released and report is done, 4800m is free and B fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.contract.record import State
from harness.suite.checks import (
    Obj,
    claim_generation_of,
    group_must_be,
    group_must_have,
    group_must_stay,
    pipelinerun_must_end_with,
    pipelinerun_must_list_task,
    pipelinerun_must_succeed,
    pod_creation_must_be_allowed,
    pod_creation_must_be_denied,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_exist,
)
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec

FIXTURES = ("graceful_stop-a", "graceful_stop-b", "graceful_stop-quota")
VOLUMES = ("a-source", "b-source")
POOL = PoolSpec(count=1)
#: A's group peak on a 4800m node, by hand (module docstring).
PEAK_CPU = 3800


@dataclass(frozen=True)
class GroupBeforeTheStop:
    """GroupBeforeTheStop is A's group held on its node, with B's pod pending and the quota in force."""

    small: Obj
    node: str
    generation: int | None
    quota: list[Obj]


def group_ready_to_stop(run: ScenarioRun, **a_params: Any) -> GroupBeforeTheStop:
    """group_ready_to_stop() runs A until small holds the group (peak 3800m), then makes B's pod and lays the quota.

    A is the PipelineRun `run.named("a")`, B `run.named("b")`; `a_params` go to
    the `graceful_stop-a` fixture (`tasks_timeout`, `small_exit_codes`).
    """
    a, b = run.named("a"), run.named("b")
    run.apply("graceful_stop-a", name=a, **a_params)
    small, node, record = task_must_hold_its_group(run, a, "small")
    generation = claim_generation_of(record, "small")
    group_must_have(
        run, record, "small", tasks={"small", "report"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    # Tekton stops only the TaskRuns it lists already: judge the scheduler only once Tekton can act on small.
    pipelinerun_must_list_task(run, a, "small")
    # B's pod must exist before the quota that holds report's pod back would refuse it too.
    run.apply("graceful_stop-b", name=b)
    task_pod_must_exist(run, b, "only")
    quota = run.apply("graceful_stop-quota")
    pod_creation_must_be_denied(run)
    return GroupBeforeTheStop(small, node, generation, quota)


def report_must_land_then_b(run: ScenarioRun, group: GroupBeforeTheStop, *, a_ends_with: str) -> None:
    """report_must_land_then_b() lifts the quota: report lands under the same claim, A ends, the group is Released, B binds.

    `a_ends_with` is the reason Tekton gives A's end (Succeeded False) for this stop.
    """
    a, b = run.named("a"), run.named("b")
    for doc in group.quota:
        run.delete(doc)
    pod_creation_must_be_allowed(run)
    run.nudge_task_run(a, "report")
    report = task_pod_must_be_bound(run, a, "report")
    assert report["spec"]["nodeName"] == group.node, f"A's finally task report ran on {report['spec']['nodeName']}, not on its group's node {group.node}"
    group_must_stay(run, a, "report", node=group.node, holders=(report,))
    group_must_be(run, a, "report", state=State.RESERVED, node=group.node, claim_generation=group.generation)

    run.release_pod(report["metadata"]["name"])
    pipelinerun_must_end_with(run, a, status="False", reason=a_ends_with)
    group_must_be(run, a, "report", state=State.RELEASED, node=group.node, claim_generation=group.generation)
    b_pod = task_pod_must_be_bound(run, b, "only")
    assert b_pod["spec"]["nodeName"] == group.node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {group.node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, b)
