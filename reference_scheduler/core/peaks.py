"""peaks: the most a group of pipeline tasks can need at any one moment.

Tasks that may run at the same time form an antichain of the pipeline's
"must finish before" order, so a group's peak, for each resource on its own, is
a maximum-weight antichain: the heaviest set of pairwise concurrent group tasks.
The order is the whole pipeline's: two group tasks ordered through a task
outside the group never overlap.

By the weighted Dilworth theorem that maximum equals the fewest chains (counted
with multiplicity) that cover every task as many times as its weight, and that
cover is found with one maximum flow, so the answer is exact for any DAG in
polynomial time, not a heuristic:

    peak = Σ weights − maxflow(source → x_out (cap w(x)) → y_in (x before y, unbounded) → sink (cap w(y)))

Each unit of flow links a chain ending at x to one continuing at y, saving one
chain.

group_peak builds that network on the pipeline's own edges rather than on every
pair of ordered tasks: y_in → y_out is an unbounded pass-through, and a unit
that passes through y links x to a task after y. The maximum flow is the same
(each unit still joins an x to a later task), and the network has as many
arcs as the pipeline has runAfter edges, not as many as ordered pairs: a dense
300-task DAG takes tens of milliseconds instead of a second
(bench/microbench.py times it).

Examples, one task per letter with its CPU:
* fan-out clone → {build 3, test 3}: 6 CPU.
* chain a 1 → b 4 → c 2: 4 CPU.
* diamond a 1 → {b 2, c 3} → d 4: max(1, 2+3, 4) = 5 CPU.
* finally tasks run after everything: they only add up among themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from reference_scheduler.core.pipeline_graph import PipelineGraph
from reference_scheduler.core.resources import Resources

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["group_peak", "max_weight_antichain", "max_weight_antichain_of_graph"]

_SOURCE = ("source", "")
_SINK = ("sink", "")

#: Up to this many weighted tasks, max_weight_antichain_of_graph branches over them (each in or out)
#: instead of building the flow network: a group's usual handful of tasks takes a few dozen steps,
#: where the network cost about a millisecond per group and resource. Both are exact.
BRANCHING_LIMIT = 8


def max_weight_antichain(weights: Mapping[str, int], before: Callable[[str, str], bool]) -> int:
    """max_weight_antichain is the largest total weight of elements no two of which are ordered by before.

    before must be a strict partial order (transitive, irreflexive), such as
    PipelineGraph.reaches. Zero weights may be left out: they never change the
    maximum.

    Example: max_weight_antichain({'a': 1, 'b': 2, 'c': 3}, lambda x, y: (x, y) == ('a', 'b')) == 5.
    """
    elements = sorted(name for name, weight in weights.items() if weight > 0)
    if len(elements) <= 1:
        return sum(weights[name] for name in elements)
    import networkx as nx  # when first needed: a tenth of a second of the scheduler's start, for the rare large group

    network: nx.DiGraph[tuple[str, str]] = nx.DiGraph()
    for name in elements:
        network.add_edge(_SOURCE, ("out", name), capacity=weights[name])
        network.add_edge(("in", name), _SINK, capacity=weights[name])
    linked = False
    for x in elements:
        for y in elements:
            if x != y and before(x, y):
                network.add_edge(("out", x), ("in", y))
                linked = True
    total = sum(weights[name] for name in elements)
    if not linked:
        return total
    # Integer capacities give an integer maximum flow; networkx types it as int | float.
    flow = int(nx.maximum_flow_value(network, _SOURCE, _SINK))
    return total - flow


def group_peak(graph: PipelineGraph, tasks: Iterable[str]) -> Resources:
    """group_peak is, for each resource separately, the most the given tasks of graph can request at once.

    Each task counts with its concurrent request (pod request × matrix fan-out).
    Every resource any of the tasks requests gets its own maximum (cpu,
    memory, ephemeral-storage, hugepages-<size>, extended resources such as
    nvidia.com/gpu), and the maxima may come from different sets of tasks:
    the reservation must cover each.

    Example: in clone → {build (3 CPU, 1Gi), test (3 CPU, 2Gi, 1 nvidia.com/gpu)} → push, the group
    {clone, build, test, push} peaks at cpu 6000m, memory 3Gi and 1 nvidia.com/gpu.
    """
    names = sorted(set(tasks))
    for name in names:
        if name not in graph:
            raise KeyError(f"no pipeline task {name!r} in this graph: pass names from graph.nodes")
    requests = {name: graph.nodes[name].concurrent_request for name in names}
    cpu = max_weight_antichain_of_graph({n: r.cpu for n, r in requests.items()}, graph)
    memory = max_weight_antichain_of_graph({n: r.memory for n, r in requests.items()}, graph)
    others = sorted({resource for r in requests.values() for resource, _ in r.other})
    return Resources.of(
        {
            "cpu": cpu,
            "memory": memory,
            **{resource: max_weight_antichain_of_graph({n: r.get(resource) for n, r in requests.items()}, graph) for resource in others},
        }
    )


def max_weight_antichain_of_graph(weights: Mapping[str, int], graph: PipelineGraph) -> int:
    """max_weight_antichain_of_graph is max_weight_antichain(weights, graph.reaches), on the graph's own edges.

    Tasks of the graph that are not in weights (other groups' tasks) carry the
    order between weighted ones, as they do in the pipeline.

    Example: for a 1 → b 4 → c 2 and an unweighted b, max_weight_antichain_of_graph({'a': 1, 'c': 2}, graph) == 2.
    """
    heavy = [name for name in graph.order if weights.get(name, 0) > 0]
    if len(heavy) <= 1:
        return sum(weights[name] for name in heavy)
    if len(heavy) <= BRANCHING_LIMIT:
        return _heaviest_antichain(heavy, weights, graph.reaches, 0, 0)
    import networkx as nx  # when first needed: a tenth of a second of the scheduler's start, for the rare large group

    network: nx.DiGraph[tuple[str, str]] = nx.DiGraph()
    for name in graph.order:
        network.add_edge(("in", name), ("out", name))  # no capacity: unbounded
        for dependency in graph.nodes[name].depends_on:
            network.add_edge(("out", dependency), ("in", name))
    for name in heavy:
        network.add_edge(_SOURCE, ("out", name), capacity=weights[name])
        network.add_edge(("in", name), _SINK, capacity=weights[name])
    # Integer capacities give an integer maximum flow; networkx types it as int | float.
    return sum(weights[name] for name in heavy) - int(nx.maximum_flow_value(network, _SOURCE, _SINK))


def _heaviest_antichain(names: list[str], weights: Mapping[str, int], before: Callable[[str, str], bool], taken: int, best: int) -> int:
    """_heaviest_antichain() is the most that `taken` plus an antichain of names weighs, when it beats `best` (else `best`).

    Branch and bound: the first name is in (with only the names concurrent with it left) or
    out; a branch that cannot beat the best found even with every name left is cut.

    Example: for a 1 → b 4 → c 2 (every pair ordered), _heaviest_antichain([a, b, c], ..., 0, 0) == 4.
    """
    if not names or taken + sum(weights[name] for name in names) <= best:
        return max(taken, best)
    first, rest = names[0], names[1:]
    concurrent = [name for name in rest if not before(first, name) and not before(name, first)]
    best = _heaviest_antichain(concurrent, weights, before, taken + weights[first], best)
    return _heaviest_antichain(rest, weights, before, taken, best)
