"""custom_task_in_group: a group that holds a custom task is released once its CustomRun and the rest are done, while the run goes on.

docs/contract.md section 4 groups a custom task by its workspaces like any
task; section 6 counts it as no request; section 8 reads its end from its
CustomRun (`Succeeded` True or False), which Tekton lists in the run's
`status.childReferences` with `kind: CustomRun`. Here A's group is `fetch`
(3800/4800 of the only node, held) and then `approve`, a custom task
(`taskRef: {apiVersion: example.dev/v1, kind: Approval}`) on the same
workspace; `publish`, in no group and held, runs after approve. B (2000m)
waits beside the group: through fetch, and through the CustomRun once fetch is
done (nothing of the group runs then, yet a task of it is not done). The suite
then ends the CustomRun as its controller would, and the group must be
Released while publish still runs, with B bound into its room.

The fault it exists to catch: looking for a TaskRun of every group task
(mutant `custom_runs_never_done`): no TaskRun ever comes for `approve`, so the
group is held until the run ends, and the run cannot end while `publish` is
held: the group is never Released in time, and B never binds (the monitor's
`release-late` fires first).

What Tekton v1.15 does (local cluster, no controller for the kind): it makes
the CustomRun at once after fetch, with the run's labels and the workspace
binding, and leaves it Succeeded Unknown until someone writes its status; it
then creates publish's TaskRun.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    child_run_must_exist,
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="custom_task_in_group",
    description=(
        "A's group is fetch (3800m, held) and approve, a custom task on the same workspace; publish runs after it in no group. "
        "B (2000m) waits through fetch and through approve's CustomRun; once the CustomRun succeeds the group is Released while "
        "publish still runs, and B binds"
    ),
    features=(Feature.RELEASE,),
    fixtures=("custom_task_in_group-a", "graceful_stop-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
)
A = "custom-task-in-group-a"

# Peak, by hand: fetch 3800/4800 of the node's CPU; approve has no pod (0); they run one after the other: 3800/4800.
# Reserved, the group leaves 1000/4800 of the node, less than B's 2000/4800.


def test_custom_task_in_group(run: ScenarioRun) -> None:
    b = run.named("b")
    run.apply("custom_task_in_group-a")
    fetch, node, record = task_must_hold_its_group(run, A, "fetch")
    group_must_have(
        run, record, "fetch", tasks={"fetch", "approve"}, workspaces={"source"}, peak_cpu_millis=run.node_cpu_millis() * 3800 // 4800, peak_memory_bytes=0,
    )
    run.apply("graceful_stop-b", name=b)
    task_pod_must_stay_pending(run, b, "only")

    # fetch ends; approve's CustomRun is made and runs: nothing of the group runs, yet approve is not done.
    run.release_pod(fetch["metadata"]["name"])
    assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
    taskrun_must_be_done(run, A, "fetch")
    approve = child_run_must_exist(run, A, "approve", kind="CustomRun")
    task_pod_must_stay_pending(run, b, "only")
    group_must_be(run, A, "fetch", state=State.RESERVED, node=node)

    # The CustomRun succeeds, as its controller would say: the group is done, publish is still to run (held).
    run.finish_custom_run(approve["metadata"]["name"])
    group_must_be(run, A, "fetch", state=State.RELEASED, node=node)
    b_pod = task_pod_must_be_bound(run, b, "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    publish = task_pod_must_be_bound(run, A, "publish")
    run.release_pod(publish["metadata"]["name"])
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, A)
    pipelinerun_must_succeed(run, b)
