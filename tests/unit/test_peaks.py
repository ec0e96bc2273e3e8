"""Unit tests for peaks: exact maximum-weight antichains of a pipeline's tasks."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core import peaks
from reference_scheduler.core.peaks import group_peak, max_weight_antichain, max_weight_antichain_of_graph
from reference_scheduler.core.pipeline_graph import PipelineGraph, TaskNode
from reference_scheduler.core.resources import ZERO, Resources

pytestmark = pytest.mark.unit

GI = 1024**3


def node(
    name: str, cpu: int, *deps: str, memory: int = 0, other: dict[str, int] | None = None, fan_out: int | None = 1, is_finally: bool = False
) -> TaskNode:
    request = Resources.of({"cpu": cpu, "memory": memory, **(other or {})})
    return TaskNode(name, frozenset(), frozenset(deps), is_finally, 0, request, fan_out)


def graph(*nodes: TaskNode) -> PipelineGraph:
    return PipelineGraph(nodes)


CASES = [
    ("single-task", graph(node("a", 1000)), ["a"], Resources(1000)),
    ("fan-out", graph(node("clone", 500), node("b", 3000, "clone"), node("t", 3000, "clone")), ["clone", "b", "t"], Resources(6000)),
    ("chain", graph(node("a", 1000), node("b", 4000, "a"), node("c", 2000, "b")), ["a", "b", "c"], Resources(4000)),
    (
        "diamond",
        graph(node("a", 1000), node("b", 2000, "a"), node("c", 3000, "a"), node("d", 4000, "b", "c")),
        ["a", "b", "c", "d"],
        Resources(5000),
    ),
    (
        "diamond-heavy-ends",
        graph(node("a", 9000), node("b", 2000, "a"), node("c", 3000, "a"), node("d", 4000, "b", "c")),
        ["a", "b", "c", "d"],
        Resources(9000),
    ),
    (
        # b overlaps any one of the c → d → e chain, never two of them.
        "zigzag",
        graph(node("a", 1000), node("b", 5000, "a"), node("c", 1000), node("d", 1000, "c"), node("e", 1000, "a", "d")),
        ["a", "b", "c", "d", "e"],
        Resources(6000),
    ),
    (
        "ordered-through-a-task-outside-the-group",
        graph(node("a", 2000), node("x", 0, "a"), node("b", 3000, "x"), node("c", 1000)),
        ["a", "b", "c"],
        Resources(4000),
    ),
    (
        "finally-tasks-after-everything",
        graph(
            node("a", 2000),
            node("b", 2000),
            node("f1", 1000, "a", "b", is_finally=True),
            node("f2", 1500, "a", "b", is_finally=True),
        ),
        ["a", "b", "f1", "f2"],
        Resources(4000),
    ),
    (
        "finally-tasks-can-be-the-peak",
        graph(node("a", 1000), node("f1", 3000, "a", is_finally=True), node("f2", 3000, "a", is_finally=True)),
        ["a", "f1", "f2"],
        Resources(6000),
    ),
    (
        "cpu-and-memory-peak-in-different-places",
        graph(
            node("a", 1000, memory=4 * GI),
            node("b", 2000, "a", memory=1 * GI),
            node("c", 2000, "a", memory=1 * GI),
        ),
        ["a", "b", "c"],
        Resources(4000, 4 * GI),
    ),
    ("matrix-fans-out", graph(node("a", 1000, fan_out=4), node("b", 1000)), ["a", "b"], Resources(5000)),
    ("empty-group", graph(node("a", 1000)), [], ZERO),
    ("zero-requests", graph(node("a", 0), node("b", 0)), ["a", "b"], ZERO),
]


@pytest.mark.parametrize(("g", "tasks", "expected"), [(g, t, e) for _, g, t, e in CASES], ids=[n for n, _, _, _ in CASES])
def test_group_peak(g: PipelineGraph, tasks: list[str], expected: Resources) -> None:
    assert group_peak(g, tasks) == expected


def test_unknown_task_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="no pipeline task 'nope'"):
        group_peak(graph(node("a", 1)), ["nope"])


def test_wide_group_is_fast() -> None:
    # 60 parallel tasks between a fan-out and a fan-in: the antichain is all of them.
    nodes = [node("start", 100)] + [node(f"t{i:02}", 250, "start") for i in range(60)]
    nodes.append(node("end", 100, *(f"t{i:02}" for i in range(60))))
    g = PipelineGraph(nodes)
    assert group_peak(g, [n.name for n in nodes]) == Resources(60 * 250)


GPU = "example.com/gpu"
OTHER_RESOURCES = ("ephemeral-storage", GPU, "hugepages-2Mi", "nvidia.com/gpu")


def test_every_resource_peaks_on_its_own() -> None:
    """clone → {build (3 CPU, 1Gi), test (1 CPU, 2 GPUs)} → push (1 GPU): cpu from {build, test}, GPUs from {test}."""
    g = graph(
        node("clone", 500, memory=GI),
        node("build", 3000, "clone", memory=GI),
        node("test", 1000, "clone", other={GPU: 2, "ephemeral-storage": 5 * GI}),
        node("push", 100, "build", "test", other={GPU: 1, "hugepages-2Mi": 4 * 1024**2}),
    )
    peak = group_peak(g, ["clone", "build", "test", "push"])
    assert peak == Resources.of({"cpu": 4000, "memory": GI, GPU: 2, "ephemeral-storage": 5 * GI, "hugepages-2Mi": 4 * 1024**2})
    assert peak.to_quantities() == {
        "cpu": "4000m",
        "memory": str(GI),
        GPU: "2",
        "ephemeral-storage": str(5 * GI),
        "hugepages-2Mi": str(4 * 1024**2),
    }


def test_a_matrixed_gpu_task_counts_each_combination() -> None:
    g = graph(node("train", 1000, other={GPU: 1}, fan_out=3), node("eval", 500, "train", other={GPU: 2}))
    assert group_peak(g, ["train", "eval"]) == Resources.of({"cpu": 3000, GPU: 3})


def test_a_group_without_gpus_has_none_in_its_peak() -> None:
    g = graph(node("a", 1000), node("b", 1000, "a", other={GPU: 1}))
    assert group_peak(g, ["a"]).other == ()


@st.composite
def weighted_dags(draw: st.DrawFn) -> tuple[PipelineGraph, list[str]]:
    size = draw(st.integers(1, 9))
    names = [f"t{i}" for i in range(size)]
    nodes = []
    for i, name in enumerate(names):
        deps = [names[j] for j in range(i) if draw(st.integers(0, 3)) == 0]
        cpu = draw(st.integers(0, 5000))
        memory = draw(st.integers(0, 8 * GI))
        other = draw(st.dictionaries(st.sampled_from(OTHER_RESOURCES), st.integers(0, 4), max_size=3))
        nodes.append(node(name, cpu, *deps, memory=memory, other=other, fan_out=draw(st.sampled_from([1, 1, 1, 2, 3]))))
    group = draw(st.lists(st.sampled_from(names), unique=True))
    return PipelineGraph(nodes), group


def brute_force_peak(g: PipelineGraph, tasks: list[str]) -> Resources:
    best = ZERO
    for size in range(1, len(tasks) + 1):
        for subset in combinations(tasks, size):
            if all(g.concurrent(a, b) for a, b in combinations(subset, 2)):
                together = ZERO
                for name in subset:
                    together += g.nodes[name].concurrent_request
                best = best.max(together)
    return best


@settings(max_examples=200, deadline=None)
@given(weighted_dags())
def test_matches_brute_force_on_small_dags(case: tuple[PipelineGraph, list[str]]) -> None:
    g, tasks = case
    assert group_peak(g, tasks) == brute_force_peak(g, tasks)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefg"), st.integers(0, 100), min_size=1))
def test_antichain_of_a_total_order_is_the_heaviest_element(weights: dict[str, int]) -> None:
    assert max_weight_antichain(weights, lambda x, y: x < y) == max(weights.values())


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefg"), st.integers(0, 100), min_size=1))
def test_antichain_without_order_is_everything(weights: dict[str, int]) -> None:
    assert max_weight_antichain(weights, lambda x, y: False) == sum(weights.values())


@st.composite
def larger_dags(draw: st.DrawFn) -> tuple[PipelineGraph, list[str]]:
    size = draw(st.integers(2, 40))
    names = [f"t{i:02}" for i in range(size)]
    nodes = []
    for i, name in enumerate(names):
        deps = [names[j] for j in range(max(0, i - 8), i) if draw(st.integers(0, 2)) == 0]
        nodes.append(node(name, draw(st.integers(0, 3000)), *deps, memory=draw(st.integers(0, 4 * GI))))
    group = draw(st.lists(st.sampled_from(names), unique=True, min_size=1))
    return PipelineGraph(nodes), group


@settings(max_examples=150, deadline=None)
@given(larger_dags())
def test_the_network_on_the_pipelines_edges_agrees_with_the_one_on_every_ordered_pair(case: tuple[PipelineGraph, list[str]]) -> None:
    g, tasks = case
    weights = {name: g.nodes[name].concurrent_request.cpu for name in tasks}
    assert max_weight_antichain_of_graph(weights, g) == max_weight_antichain(weights, g.reaches)


def test_a_300_task_dense_dag_gets_the_exact_peak() -> None:
    # Each task runs after every second of the ten before it: a dense order, and a peak worth checking
    # against the all-pairs network (the hostile input of issue 14; its time is in bench/microbench.py).
    nodes = [node(f"t{i:03}", 100 + (i * 37) % 900, *(f"t{j:03}" for j in range(max(0, i - 10), i, 2))) for i in range(300)]
    g = PipelineGraph(nodes)
    weights = {n.name: n.request.cpu for n in nodes}
    assert group_peak(g, list(weights)).cpu == max_weight_antichain(weights, g.reaches)


@settings(max_examples=200, deadline=None)
@given(larger_dags())
def test_branching_over_a_few_tasks_agrees_with_the_flow_network(case: tuple[PipelineGraph, list[str]]) -> None:
    g, tasks = case
    weights = {name: g.nodes[name].concurrent_request.cpu for name in tasks[: peaks.BRANCHING_LIMIT]}
    assert max_weight_antichain_of_graph(weights, g) == max_weight_antichain(weights, g.reaches)
