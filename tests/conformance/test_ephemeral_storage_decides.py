"""ephemeral_storage_decides: a group's claim goes only where its peak of ephemeral-storage fits (NodeResourcesFit).

The fault it exists to catch: a fit that leaves ephemeral-storage out
(tests/mutants/faults.py: fit_ignores_ephemeral_storage). A task that clones a
large repository asks for scratch space; on a node whose disk the other pods'
requests already hold, the kubelet refuses the pod (OutOfephemeral-storage) and
Tekton fails the TaskRun.

The requests are fractions of the least ephemeral-storage a pool node advertises
(KWOK nodes: 90Gi; a kind node reports its host's disk). Fillers ask for 70% of
it on the outer two nodes and 10% on the middle one, which is also in the middle
by CPU load, so a claim blind to the disk goes elsewhere whether the scheduler
scores least-allocated, most-allocated or by name.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_must_open_on,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    pod_must_be_running,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

DISK = "ephemeral-storage"
RUN = "ephemeral-storage-decides"

SCENARIO = Scenario(
    name="ephemeral_storage_decides",
    description=(
        "fillers hold 70% of the disk on the outer nodes and 10% on the middle one: the group (clone 40% of the disk, "
        "then build 20%) claims the middle node with a peak of 40%, and both its pods run there"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("filler", "ephemeral_storage_decides"),
    pool=PoolSpec(count=3),
    volumes=("source",),
)

# Nodes 4800m / 8Gi and D bytes of ephemeral-storage. Node 0: a 200m filler with 0.7 D; node 1: a 1200m filler with
# 0.1 D; node 2: a 3000m filler with 0.7 D. Peak: clone (600m, 0.4 D) then build (1200m, 0.2 D), one after the
# other: 1200m and 0.4 D. It fits only node 1 (0.1 + 0.4 <= 1; 0.7 + 0.4 > 1). A claim blind to the disk, scored
# (least-allocated | most-allocated, the integer average of the CPU and memory scores; scoring reads only those):
#   node 0: cpu 1400/4800 -> 70 | 29, memory 400Mi/8192Mi -> 95 | 4:  82 | 16
#   node 1: cpu 2400/4800 -> 50 | 50, memory 400Mi        -> 95 | 4:  72 | 27
#   node 2: cpu 4200/4800 -> 12 | 87, memory 400Mi        -> 95 | 4:  53 | 45
# so least-allocated and name order pick node 0, most-allocated node 2.
PEAK_CPU = 1200


def test_ephemeral_storage_decides(run: ScenarioRun) -> None:
    nodes = run.node_names
    middle = nodes[1]
    disk = run.least_allocatable(DISK)
    assert disk > 0, f"no pool node advertises {DISK}: kubelets always do"
    for index, share, disk_share in ((0, 200 / 4800, 0.7), (1, 1200 / 4800, 0.1), (2, 3000 / 4800, 0.7)):
        name = f"ephemeral-storage-decides-filler-{index}"
        run.apply("filler", name=name, node=nodes[index], share=share, resources={DISK: str(int(disk * disk_share))})
        pod_must_be_running(run, name)

    run.apply("ephemeral_storage_decides", disk=disk)
    record = claim_must_open_on(run, RUN, "clone", node=middle, why=f"a filler holds 70% of the {DISK} there: the peak of 40% fits only {middle}")
    group_must_have(
        run, record, "clone", tasks={"clone", "build"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0, peak_other={DISK: int(disk * 0.4)},
    )
    group_must_end_on_its_node(run, RUN, held=run.task_pods(RUN, "clone")[0], next_task="build", node=middle)
    group_must_be(run, RUN, "build", state=State.RELEASED, node=middle)
