"""host_port_conflict: a group's pod goes only where its host port is free (kube-scheduler's NodePorts).

The fault it exists to catch: placing a pod, and opening its group's claim, on a
node where another pod already binds the host port it asks for
(tests/mutants/faults.py: ignores_host_ports). On a real node the kubelet refuses
such a pod and Tekton fails the TaskRun: a CI job lost to a wrong placement.

Two of the three nodes run a registry mirror on host port 5000, one empty and one
full, and the one free node is in the middle by name and by load, so whichever
way a scheduler scores (least-allocated, most-allocated, first by name), skipping
the port check sends the group to a wrong node.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    claim_must_open_on,
    fillers_must_run,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    pod_must_be_running,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="host_port_conflict",
    description=(
        "registry mirrors bind host port 5000 on an empty and on a full node; g's first task serves a registry sidecar on "
        "host port 5000, so g's claim and both its pods go to the one node between them where the port is free"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "host_port_conflict"),
    pool=PoolSpec(count=3),
    volumes=("source",),
)

# Nodes 4800m / 8Gi. Node 0: a mirror (200m). Node 1 (free port): a 1200m filler. Node 2: a mirror (200m)
# and a 3000m filler. No pod requests memory, so each counts as 200Mi in scoring.
#
# g's first pod, build (400m step + 200m sidecar = 600m), opens a claim for the 1200m peak; each node as scored if
# the port check were skipped (least-allocated | most-allocated, the integer average of the CPU and memory scores):
#   node 0: cpu 1400/4800 -> 70 | 29, memory 400Mi/8192Mi -> 95 | 4:  82 | 16
#   node 1: cpu 2400/4800 -> 50 | 50, memory 400Mi        -> 95 | 4:  72 | 27
#   node 2: cpu 4400/4800 ->  8 | 91, memory 600Mi        -> 92 | 7:  50 | 49
# so least-allocated and name order pick node 0, most-allocated node 2. Only the port check leaves node 1.
#
# Peak: build (600m) then test (1000m step + 200m sidecar = 1200m), one after the other: max(600, 1200) = 1200m.
RUN = "host-port-conflict"
#: The registry mirror a DaemonSet runs on some nodes, binding host port 5000 there.
MIRROR = {"app": "registry-mirror"}


def test_host_port_conflict(run: ScenarioRun) -> None:
    nodes = run.node_names
    free = nodes[1]
    for index in (0, 2):
        run.apply("filler", name=f"host-port-conflict-mirror-{index}", node=nodes[index], share=200 / 4800, labels=MIRROR, host_port=5000)
    fillers_must_run(run, {free: 1200 / 4800, nodes[2]: 3000 / 4800})
    for index in (0, 2):
        pod_must_be_running(run, f"host-port-conflict-mirror-{index}")

    run.apply("host_port_conflict")
    record = claim_must_open_on(run, RUN, "build", node=free, why=f"a registry mirror binds host port 5000 there; only {free} has it free")
    group_must_have(
        run, record, "build", tasks={"build", "test"}, workspaces={"source"},
        # test's step and sidecar, each a fraction of the node's CPU rounded down as the fixture's cpu() rounds it.
        peak_cpu_millis=share_of(run.node_cpu_millis(), 1000 / 4800) + share_of(run.node_cpu_millis(), 200 / 4800), peak_memory_bytes=0,
    )
    group_must_end_on_its_node(run, RUN, held=run.task_pods(RUN, "build")[0], next_task="test", node=free)
    group_must_be(run, RUN, "test", state=State.RELEASED, node=free)
