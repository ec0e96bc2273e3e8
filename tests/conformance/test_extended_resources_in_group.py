"""extended_resources_in_group: a group's peak holds its later task's GPU, so no other run takes it in between (#3049 with GPUs).

The fault it exists to catch: a peak, and so a claim, that leaves out extended
resources (tests/mutants/faults.py: peak_ignores_extended_resources). Such a
claim opens on a node with no GPU at all, where the group's training task can
never run; and on the GPU node it leaves the GPU free for another run's pod,
which takes it while the group's first task runs: the failure reservations
exist to prevent. On a real node the kubelet refuses the training pod
(OutOfexample.com/gpu) and Tekton fails the TaskRun.

One node of three advertises one example.com/gpu (a status patch, as Kubernetes'
"advertise extended resources for a node" does; a device plugin does the same
on GPU nodes). It is in the middle by name and by load, so a claim blind to the
GPU goes elsewhere whether the scheduler scores least-allocated, most-allocated
or by name.
"""

from __future__ import annotations

from harness.cluster.node_pools import NodeShape
from harness.contract.record import State
from harness.suite.checks import (
    claim_must_open_on,
    fillers_must_run,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    pod_must_be_bound,
    pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

GPU = "example.com/gpu"
RUN = "extended-resources-in-group"
JOB = "extended-resources-in-group-job"

SCENARIO = Scenario(
    name="extended_resources_in_group",
    description=(
        "only the middle node has a GPU: the run's group (prepare, then train on one GPU) claims it with a peak of one GPU, "
        "and another team's GPU pod waits until the group is done rather than take the GPU between its tasks"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("filler", "extended_resources_in_group", "extended_resources_in_group-job"),
    pool=PoolSpec(count=3, shapes=(NodeShape(1, resources=((GPU, "1"),)),)),
    volumes=("source",),
)

# Nodes 4800m / 8Gi; node 1 alone advertises one example.com/gpu. Node 1 holds a 1200m filler, node 2 a
# 3000m one, node 0 nothing. No pod requests memory, so each counts as 200Mi in scoring.
#
# Peak: prepare (600m) then train (1200m, 1 GPU), one after the other: 1200m and 1 GPU. Only node 1 has the
# GPU. A claim for 1200m alone, scored (least-allocated | most-allocated, the integer average of the CPU and
# memory scores):
#   node 0: cpu 1200/4800 -> 75 | 25, memory 200Mi/8192Mi -> 97 | 2:  86 | 13
#   node 1: cpu 2400/4800 -> 50 | 50, memory 400Mi        -> 95 | 4:  72 | 27
#   node 2: cpu 4200/4800 -> 12 | 87, memory 400Mi        -> 95 | 4:  53 | 45
# so least-allocated and name order pick node 0, most-allocated node 2: no GPU on either.
# While prepare runs, the GPU is the group's residual (1 GPU - 0 on its pods), so the job (200m, 1 GPU) fits
# no node: node 1 has 4800 - 1200 - 600 - 600 = 2400m free but 1 - 1 = 0 GPUs.
PEAK_CPU = 1200


def test_extended_resources_in_group(run: ScenarioRun) -> None:
    nodes = run.node_names
    gpu_node = nodes[1]
    fillers_must_run(run, {gpu_node: 1200 / 4800, nodes[2]: 3000 / 4800})

    run.apply("extended_resources_in_group")
    record = claim_must_open_on(
        run, RUN, "prepare", node=gpu_node, why=f"that node has no {GPU}, and the peak holds one for train: only {gpu_node} has one"
    )
    group_must_have(
        run, record, "prepare", tasks={"prepare", "train"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0, peak_other={GPU: 1},
    )

    run.apply("extended_resources_in_group-job", name=JOB)
    pod_must_stay_pending(run, JOB, why=f"the only {GPU} in the pool, on {gpu_node}, is held for the group's train task")

    group_must_end_on_its_node(run, RUN, held=run.task_pods(RUN, "prepare")[0], next_task="train", node=gpu_node)
    group_must_be(run, RUN, "train", state=State.RELEASED, node=gpu_node)
    job = pod_must_be_bound(run, JOB)
    assert job["spec"]["nodeName"] == gpu_node, f"the GPU job landed on {job['spec']['nodeName']}, which has no {GPU}"
