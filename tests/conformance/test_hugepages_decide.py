"""hugepages_decide: a group's claim goes only where its peak of huge pages fits (NodeResourcesFit).

The fault it exists to catch: a fit that leaves hugepages-<size> out
(tests/mutants/faults.py: fit_ignores_hugepages). A node lists every huge page
size its kernel offers, most with none set aside: a claim there for a task that
needs huge pages holds room the task can never use, and the kubelet refuses its
pod (OutOfhugepages-2Mi).

Every pool node lists hugepages-2Mi, as a kubelet does; only the middle one has
1Gi of them set aside (a status patch), and it is in the middle by load too, so
a claim blind to huge pages goes elsewhere whether the scheduler scores
least-allocated, most-allocated or by name.
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
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

PAGES = "hugepages-2Mi"
RUN = "hugepages-decide"
MI = 2**20

SCENARIO = Scenario(
    name="hugepages_decide",
    description=(
        "only the middle node has 2Mi huge pages set aside: the group (warm, then bench with 512Mi of hugepages-2Mi) "
        "claims it with a peak that names them, and both its pods run there"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("filler", "hugepages_decide"),
    pool=PoolSpec(count=3, shapes=(NodeShape(1, resources=((PAGES, "1Gi"),)),)),
    volumes=("source",),
    local_only=(
        "a kubelet reports the huge pages its host's kernel has set aside, and rewrites any other figure: kind's nodes "
        "have none unless the host preallocates them"
    ),
)

# Nodes 4800m / 8Gi; every node lists hugepages-2Mi, node 1 with 1Gi, the others with 0. Node 1 holds a 1200m
# filler, node 2 a 3000m one, node 0 nothing. Peak: warm (600m) then bench (1200m, 256Mi, 512Mi of pages), one
# after the other: 1200m, 256Mi and 512Mi of hugepages-2Mi. A claim blind to the pages, scored (least-allocated |
# most-allocated, the integer average of the CPU and memory scores; a pod that asks no memory counts 200Mi):
#   node 0: cpu 1200/4800 -> 75 | 25, memory 256Mi/8192Mi -> 96 | 3:  85 | 14
#   node 1: cpu 2400/4800 -> 50 | 50, memory 456Mi        -> 94 | 5:  72 | 27
#   node 2: cpu 4200/4800 -> 12 | 87, memory 456Mi        -> 94 | 5:  53 | 46
# so least-allocated and name order pick node 0, most-allocated node 2: no huge pages on either.
PEAK_CPU = 1200


def test_hugepages_decide(run: ScenarioRun) -> None:
    nodes = run.node_names
    paged = nodes[1]
    fillers_must_run(run, {paged: 1200 / 4800, nodes[2]: 3000 / 4800})

    run.apply("hugepages_decide")
    record = claim_must_open_on(
        run, RUN, "warm", node=paged, why=f"that node has no {PAGES} set aside, and the peak holds 512Mi of them for bench: only {paged} has them"
    )
    group_must_have(
        run, record, "warm", tasks={"warm", "bench"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=256 * MI, peak_other={PAGES: 512 * MI},
    )
    group_must_end_on_its_node(run, RUN, held=run.task_pods(RUN, "warm")[0], next_task="bench", node=paged)
    group_must_be(run, RUN, "bench", state=State.RELEASED, node=paged)
