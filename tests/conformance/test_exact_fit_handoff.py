"""exact_fit_handoff: five tasks in a row, each asking for the whole node, hand the room on one by one.

The faults it exists to catch: a scheduler that binds a group's next pod into
its reservation as soon as Tekton creates it, trusting that the group's tasks
run one after another (the peak is the largest task, not their sum), or that
takes a pod for gone once its TaskRun is done. Tekton marks a TaskRun done
when its steps end and creates the next task's pod at once; the finished
task's pod still runs until its sidecars and sandbox are stopped, and the
kubelet counts it until then (its phase turns Succeeded only after). A pod
bound meanwhile into room it does not leave is refused by the kubelet
(`OutOfcpu`), and Tekton fails the run (docs/contract.md section 7, "Handing
room from task to task").

Each task's pod asks for the whole node (a step of 0.95 and a sidecar of 0.05)
and keeps running a while after its steps end, as a sidecar that takes a
while to stop does: every one's for 1 s but t01's, which runs until the
scenario stops it. The scenario holds t02's pod unbound while t01's still
runs, stops t01's sidecar, then lets the five tasks run to the end, and
asserts that none of their pods was refused by a kubelet and that the run
succeeded on the claim's node. On a real kubelet (kind) a wrong
scheduler's pod is refused; on any cluster the contract monitor reports the
node over-committed at the state where both pods count.

The held pair (t01 running, t02 made) is what catches a wrong scheduler,
every time; t03 to t05 hand the room on as Tekton and a kubelet do, with
nothing held. The chain had twenty tasks before t01 was held, when each
hand-off was a race a wrong scheduler lost only sometimes; fifteen more such
races cost a minute on kind and catch nothing the held pair misses.
"""

from __future__ import annotations

from harness.quantities import share_of
from harness.suite.checks import (
    group_must_have,
    next_task_must_wait_while_the_last_counts,
    no_task_pod_must_be_refused_by_a_kubelet,
    pipelinerun_must_finish,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="exact_fit_handoff",
    description=(
        "one node; five tasks in a row over one workspace, each asking for the whole node, each pod running on "
        "a while after its TaskRun is done: each next pod waits until the last one has finished, and the kubelet refuses none"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("exact_fit_handoff",),
    pool=PoolSpec(count=1),
    volumes=("source",),
)

RUN = "exact-fit-handoff"
TASKS = frozenset(f"t{index:02d}" for index in range(1, 6))


# Peak, by hand: every task's pod is its step, cpu(0.95), beside its sidecar, cpu(0.05); Tekton's
# init containers request nothing, and no task requests memory. The tasks form a chain, so the peak
# is one pod: int(N * 0.95) + int(N * 0.05) of a node of N millicores (4560 + 240 = 4800m of the
# local pool's 4800m; 1805 + 95 = 1900m of a kind worker's 1900m slot). Two such pods never fit on
# the node together, so each next pod must wait until the last one is Succeeded.

def test_exact_fit_handoff(run: ScenarioRun) -> None:
    (only,) = run.node_names
    cpu = run.node_cpu_millis()
    run.apply("exact_fit_handoff")
    _, node, record = task_must_hold_its_group(run, RUN, "t01")
    assert node == only, f"{RUN}'s claim is on {node}, not on the pool's only node {only}"
    group_must_have(run, record, "t01", tasks=set(TASKS), workspaces={"source"}, peak_cpu_millis=share_of(cpu, 0.95) + share_of(cpu, 0.05), peak_memory_bytes=0)

    next_task_must_wait_while_the_last_counts(run, RUN, lingering="t01", next_task="t02")

    pipelinerun_must_finish(run, RUN)
    no_task_pod_must_be_refused_by_a_kubelet(run, RUN)
    pipelinerun_must_succeed(run, RUN)
