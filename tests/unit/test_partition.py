"""Unit tests for partition: workspace groups of a pipeline."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.partition import WorkspaceGroup, group_name, partition_into_groups
from reference_scheduler.core.peaks import group_peak
from reference_scheduler.core.pipeline_graph import PipelineGraph, TaskNode, build_pipeline_graph
from reference_scheduler.core.resources import Resources

pytestmark = pytest.mark.unit


def node(name: str, workspaces: set[str], *deps: str, cpu: int = 1000, is_finally: bool = False) -> TaskNode:
    return TaskNode(name, frozenset(workspaces), frozenset(deps), is_finally, 0, Resources(cpu))


def test_shared_workspaces_are_transitive() -> None:
    graph = PipelineGraph(
        [
            node("a", {"w1"}),
            node("b", {"w1", "w2"}, "a"),
            node("c", {"w2"}, "a"),
            node("d", {"w3"}),
            node("e", set()),
        ]
    )
    assert partition_into_groups(graph) == (
        WorkspaceGroup("w1", ("a", "b", "c"), ("w1", "w2"), Resources(2000)),
        WorkspaceGroup("w3", ("d",), ("w3",), Resources(1000)),
    )


def test_finally_tasks_join_groups() -> None:
    graph = PipelineGraph(
        [
            node("clone", {"source"}),
            node("build", {"source", "cache"}, "clone", cpu=3000),
            node("lint", set()),
            node("notify", {"cache"}, "clone", "build", "lint", is_finally=True),
        ]
    )
    (group,) = partition_into_groups(graph)
    assert group.name == "cache"
    assert group.tasks == ("build", "clone", "notify")
    assert group.workspaces == ("cache", "source")
    assert group.peak == Resources(3000)


def test_no_workspaces_no_groups() -> None:
    assert partition_into_groups(PipelineGraph([node("a", set()), node("b", set())])) == ()


def test_co_locating_limits_grouping() -> None:
    graph = PipelineGraph([node("a", {"pvc", "config"}), node("b", {"config"}), node("c", {"pvc"})])
    assert [g.tasks for g in partition_into_groups(graph)] == [("a", "b", "c")]
    groups = partition_into_groups(graph, co_locating={"pvc"})
    assert [(g.name, g.tasks, g.workspaces) for g in groups] == [("pvc", ("a", "c"), ("pvc",))]


def test_groups_are_ordered_by_name() -> None:
    graph = PipelineGraph([node("x", {"zeta"}), node("y", {"alpha"}), node("z", {"mid"})])
    assert [g.name for g in partition_into_groups(graph)] == ["alpha", "mid", "zeta"]


def test_peak_uses_the_whole_pipeline_order() -> None:
    # a and b only overlap if nothing outside the group orders them.
    graph = PipelineGraph([node("a", {"w"}), node("gate", set(), "a"), node("b", {"w"}, "gate")])
    (group,) = partition_into_groups(graph)
    assert group.peak == Resources(1000)


def test_from_a_pipeline_spec() -> None:
    step = {"name": "s", "image": "x", "computeResources": {"requests": {"cpu": "2"}}}
    pipeline = {
        "workspaces": [{"name": "source"}],
        "tasks": [
            {"name": "clone", "workspaces": [{"name": "output", "workspace": "source"}], "taskSpec": {"steps": [step]}},
            {"name": "build", "runAfter": ["clone"], "workspaces": [{"name": "source"}], "taskSpec": {"steps": [step]}},
            {"name": "test", "runAfter": ["clone"], "workspaces": [{"name": "source"}], "taskSpec": {"steps": [step]}},
        ],
    }
    (group,) = partition_into_groups(build_pipeline_graph(pipeline, task_specs={}))
    assert group == WorkspaceGroup("source", ("build", "clone", "test"), ("source",), Resources(4000))


LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@pytest.mark.parametrize(
    ("workspace", "pattern"),
    [
        ("source", r"^source$"),
        ("my-cache-2", r"^my-cache-2$"),
        ("My_Cache", r"^my-cache-[0-9a-f]{8}$"),
        ("-lead", r"^lead-[0-9a-f]{8}$"),
        ("___", r"^ws-[0-9a-f]{8}$"),
        ("x" * 70, r"^x{54}-[0-9a-f]{8}$"),
    ],
    ids=["valid", "valid-with-digits", "upper-and-underscore", "leading-dash", "nothing-usable", "too-long"],
)
def test_group_name(workspace: str, pattern: str) -> None:
    assert re.match(pattern, group_name(workspace))


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_group_names_are_labels_and_distinct(a: str, b: str) -> None:
    assert LABEL.match(group_name(a)) and len(group_name(a)) <= 63
    if a != b:
        assert group_name(a) != group_name(b)


@st.composite
def pipelines(draw: st.DrawFn) -> PipelineGraph:
    size = draw(st.integers(1, 10))
    nodes = []
    for i in range(size):
        deps = [f"t{j}" for j in range(i) if draw(st.integers(0, 3)) == 0]
        workspaces = draw(st.sets(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=2))
        nodes.append(node(f"t{i}", workspaces, *deps, cpu=draw(st.integers(0, 4000))))
    return PipelineGraph(nodes)


@settings(max_examples=150, deadline=None)
@given(pipelines())
def test_groups_are_the_components_of_sharing(graph: PipelineGraph) -> None:
    groups = partition_into_groups(graph)
    grouped = [t for g in groups for t in g.tasks]
    assert len(grouped) == len(set(grouped))
    assert set(grouped) == {n.name for n in graph if n.workspaces}
    seen_workspaces = [w for g in groups for w in g.workspaces]
    assert len(seen_workspaces) == len(set(seen_workspaces))
    assert [g.name for g in groups] == sorted(g.name for g in groups)
    for group in groups:
        assert group.name == min(group.workspaces)
        assert set(group.workspaces) == set().union(*(graph.nodes[t].workspaces for t in group.tasks))
        assert group.peak == group_peak(graph, group.tasks)
    # Tasks sharing a workspace are in the same group.
    where = {t: g.name for g in groups for t in g.tasks}
    for x in graph:
        for y in graph:
            if x.workspaces & y.workspaces:
                assert where[x.name] == where[y.name]
