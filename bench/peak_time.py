"""How long a group's peak takes to compute for a large, dense pipeline, with no cluster.

`python -m bench.peak_time [--tasks 300] [--window 40] [--density 0.3] [--repeat 5]`
builds a pipeline of `--tasks` tasks in one workspace group, each running after
each of the `--window` tasks before it with probability `--density` (seeded),
and times `group_peak` (the network on the pipeline's edges) against the same
maximum flow on every ordered pair of tasks (`max_weight_antichain` with
`reaches`). Both must give the same peak; the times are medians of `--repeat`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from reference_scheduler.core.peaks import group_peak, max_weight_antichain
from reference_scheduler.core.pipeline_graph import PipelineGraph, TaskNode
from reference_scheduler.core.resources import Resources


def dense_pipeline(tasks: int, window: int, density: float, seed: int = 1) -> PipelineGraph:
    rng = random.Random(seed)
    nodes = []
    for i in range(tasks):
        depends_on = frozenset(f"t{j}" for j in range(max(0, i - window), i) if rng.random() < density)
        request = Resources(cpu=rng.randint(1, 2000), memory=rng.randint(1, 2**30))
        nodes.append(TaskNode(f"t{i}", frozenset({"source"}), depends_on, False, 0, request, 1))
    return PipelineGraph(nodes)


def _median_ms(work: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(1000 * (time.perf_counter() - started))
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peak_time", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--window", type=int, default=40)
    parser.add_argument("--density", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    graph = dense_pipeline(args.tasks, args.window, args.density)
    names = list(graph.order)
    edges = sum(len(graph.nodes[n].depends_on) for n in names)
    peak = group_peak(graph, names)
    pairs = Resources(
        cpu=max_weight_antichain({n: graph.nodes[n].request.cpu for n in names}, graph.reaches),
        memory=max_weight_antichain({n: graph.nodes[n].request.memory for n in names}, graph.reaches),
    )
    if peak != pairs:
        print(f"peak_time: the two networks disagree: {peak} against {pairs}", file=sys.stderr)
        return 1
    on_edges = _median_ms(lambda: group_peak(graph, names), args.repeat)
    on_pairs = _median_ms(
        lambda: [max_weight_antichain({n: getattr(graph.nodes[n].request, r) for n in names}, graph.reaches) for r in ("cpu", "memory")],
        max(1, args.repeat // 2),
    )
    print(
        f"peak_time: {args.tasks} tasks, {edges} runAfter edges: peak {peak.cpu}m CPU, {peak.memory} B; "
        f"group_peak {on_edges:.0f} ms, all ordered pairs {on_pairs:.0f} ms (medians)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
