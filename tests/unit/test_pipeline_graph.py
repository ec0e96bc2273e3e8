"""Unit tests for pipeline_graph: dependencies, workspaces, requests and reachability of pipeline tasks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.pipeline_graph import (
    InvalidPipeline,
    MissingTaskSpec,
    PipelineCycle,
    PipelineGraph,
    TaskNode,
    build_pipeline_graph,
    matrix_fan_out,
    result_references,
)
from reference_scheduler.core.resources import ZERO, Resources

pytestmark = pytest.mark.unit


def spec(cpu: str = "100m") -> dict[str, Any]:
    return {"steps": [{"name": "run", "image": "busybox", "computeResources": {"requests": {"cpu": cpu}}}]}


def task(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "taskSpec": fields.pop("taskSpec", spec()), **fields}


def graph_of(*tasks: dict[str, Any], finally_: tuple[dict[str, Any], ...] = (), **options: Any) -> PipelineGraph:
    pipeline: dict[str, Any] = {"tasks": list(tasks)}
    if finally_:
        pipeline["finally"] = list(finally_)
    options.setdefault("task_specs", {})
    return build_pipeline_graph(pipeline, **options)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(tasks.clone.results.commit)", {"clone"}),
        ("$(tasks.scan.results.list[*])", {"scan"}),
        ("$(tasks.scan.results.list[2])", {"scan"}),
        ("$(tasks.cfg.results.obj.key)", {"cfg"}),
        ("git checkout $(tasks.a.results.x) && echo $(tasks.b.results.y)", {"a", "b"}),
        ("$(finally.notify.results.x)", {"notify"}),
        ("$(tasks.a.status)", set()),
        ("$(tasks.status)", set()),
        ("$(params.x)", set()),
        ("$(tasks.a.results.x.y.z)", set()),
        ('$(tasks.a.results["x"])', set()),
        ("$(tasks.a.results.x", set()),
        ("$(" + "a." * 5000, set()),
    ],
    ids=[
        "string",
        "whole-array",
        "array-element",
        "object-key",
        "two-in-one-string",
        "finally-prefix",
        "task-status",
        "aggregate-status",
        "param",
        "too-many-parts",
        "bracket-notation-is-not-a-dependency-in-tekton",
        "unterminated",
        "long-unterminated-is-fast",
    ],
)
def test_result_references(text: str, expected: set[str]) -> None:
    assert result_references(text) == expected


@pytest.mark.parametrize(
    "consumer",
    [
        task("b", runAfter=["a"]),
        task("b", params=[{"name": "p", "value": "$(tasks.a.results.r)"}]),
        task("b", params=[{"name": "p", "value": ["x", "$(tasks.a.results.r[0])"]}]),
        task("b", params=[{"name": "p", "value": {"k": "$(tasks.a.results.o.k)"}}]),
        task("b", when=[{"input": "$(tasks.a.results.r)", "operator": "in", "values": ["x"]}]),
        task("b", when=[{"input": "x", "operator": "in", "values": ["$(tasks.a.results.r)"]}]),
        task("b", when=[{"cel": "'$(tasks.a.results.r)' == 'x'"}]),
        task("b", matrix={"params": [{"name": "p", "value": "$(tasks.a.results.list[*])"}]}),
        task("b", matrix={"include": [{"name": "i", "params": [{"name": "p", "value": "$(tasks.a.results.r)"}]}]}),
        task("b", taskSpec={"steps": [{"name": "s", "image": "x", "script": "echo $(tasks.a.results.r)"}]}),
        task("b", taskSpec={"steps": [{"name": "s", "image": "x", "env": [{"name": "E", "value": "$(tasks.a.results.r)"}]}]}),
        task("b", taskSpec={"steps": [{"name": "s", "image": "x"}], "sidecars": [{"name": "c", "args": ["$(tasks.a.results.r)"]}]}),
    ],
    ids=[
        "run-after",
        "param-string",
        "param-array",
        "param-object",
        "when-input",
        "when-values",
        "when-cel",
        "matrix-params",
        "matrix-include",
        "task-spec-script",
        "task-spec-env",
        "task-spec-sidecar",
    ],
)
def test_dependencies(consumer: dict[str, Any]) -> None:
    graph = graph_of(task("a"), consumer)
    assert graph.nodes["b"].depends_on == {"a"}
    assert graph.reaches("a", "b")
    assert not graph.concurrent("a", "b")


def test_reference_outside_steps_and_sidecars_is_no_dependency() -> None:
    consumer = task("b", taskSpec={**spec(), "description": "after $(tasks.a.results.r)"})
    graph = graph_of(task("a"), consumer)
    assert graph.concurrent("a", "b")


def test_finally_tasks_run_after_everything_and_with_each_other() -> None:
    graph = graph_of(
        task("a"),
        task("b", runAfter=["a"]),
        task("c"),
        finally_=(task("f1"), task("f2", params=[{"name": "p", "value": "$(tasks.a.results.r)"}])),
    )
    assert graph.nodes["f1"].is_finally
    assert graph.nodes["f1"].depends_on == {"a", "b", "c"}
    assert graph.nodes["f2"].depends_on == {"a", "b", "c"}
    for dag_task in ("a", "b", "c"):
        for final in ("f1", "f2"):
            assert graph.reaches(dag_task, final)
            assert not graph.concurrent(dag_task, final)
    assert graph.concurrent("f1", "f2")


def test_finally_task_using_finally_results_is_rejected() -> None:
    with pytest.raises(InvalidPipeline, match="finally task 'f2' uses results of finally task 'f1'"):
        graph_of(task("a"), finally_=(task("f1"), task("f2", params=[{"name": "p", "value": "$(tasks.f1.results.r)"}])))


def test_task_using_finally_results_is_rejected() -> None:
    with pytest.raises(InvalidPipeline, match="'a' uses results of finally task 'f'"):
        graph_of(task("a", params=[{"name": "p", "value": "$(finally.f.results.r)"}]), finally_=(task("f"),))


def test_unknown_result_reference_is_rejected() -> None:
    with pytest.raises(InvalidPipeline, match="unknown task 'ghost'"):
        graph_of(task("a", params=[{"name": "p", "value": "$(tasks.ghost.results.r)"}]))


def test_unknown_run_after_is_rejected() -> None:
    with pytest.raises(InvalidPipeline, match="depends on unknown task 'ghost'"):
        graph_of(task("a", runAfter=["ghost"]))


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(InvalidPipeline, match="'a' is defined twice"):
        graph_of(task("a"), finally_=(task("a"),))


@pytest.mark.parametrize(
    "tasks",
    [
        (task("a", runAfter=["a"]),),
        (task("a", runAfter=["b"]), task("b", runAfter=["a"])),
        (task("a", runAfter=["c"]), task("b", runAfter=["a"]), task("c", params=[{"name": "p", "value": "$(tasks.b.results.r)"}])),
    ],
    ids=["self", "pair", "through-a-result"],
)
def test_cycles_are_rejected(tasks: tuple[dict[str, Any], ...]) -> None:
    with pytest.raises(PipelineCycle, match="cycle") as raised:
        graph_of(*tasks)
    assert "\n" not in str(raised.value)


def test_cycle_message_names_only_the_stuck_tasks() -> None:
    with pytest.raises(PipelineCycle, match=r"\['b', 'c'\]"):
        graph_of(task("a"), task("b", runAfter=["a", "c"]), task("c", runAfter=["b"]))


def test_workspaces_are_pipeline_level_names() -> None:
    graph = graph_of(
        task("a", workspaces=[{"name": "output", "workspace": "source"}, {"name": "cache"}]),
        task("b", taskSpec={**spec(), "steps": [{"name": "s", "image": "x", "script": "ls $(workspaces.shared.path)"}]}),
        task(
            "c",
            workspaces=[{"name": "src", "workspace": "source"}],
            taskSpec={"steps": [{"name": "s", "image": "x", "workingDir": "$(workspaces.src.path)"}]},
        ),
        task("d"),
    )
    assert graph.nodes["a"].workspaces == {"source", "cache"}
    assert graph.nodes["b"].workspaces == {"shared"}
    assert graph.nodes["c"].workspaces == {"source"}
    assert graph.nodes["d"].workspaces == frozenset()


def test_task_refs_use_the_given_specs_and_run_specs() -> None:
    graph = graph_of(
        {"name": "build", "taskRef": {"name": "buildah"}},
        {"name": "test", "taskRef": {"name": "pytest"}, "retries": 2},
        task_specs={"build": spec("2"), "test": spec("1")},
        task_run_specs=[{"pipelineTaskName": "test", "computeResources": {"requests": {"cpu": "3"}}}],
    )
    assert graph.nodes["build"].request == Resources(cpu=2000)
    assert graph.nodes["test"].request == Resources(cpu=3000)
    assert graph.nodes["test"].retries == 2
    assert graph.nodes["build"].retries == 0


def test_limit_range_reaches_every_task() -> None:
    limit_range = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "64Mi"}}]}}
    graph = graph_of(task("a"), task("b"), limit_range=limit_range)
    assert {node.request.memory for node in graph} == {64 * 1024**2}


def test_missing_task_spec_names_task_and_task_ref() -> None:
    with pytest.raises(MissingTaskSpec, match=r"pipeline task 'build' refers to Task 'buildah'.*task_specs\['build'\]"):
        graph_of({"name": "build", "taskRef": {"name": "buildah"}})


def test_missing_resolver_task_spec_names_the_resolver() -> None:
    with pytest.raises(MissingTaskSpec, match="'git' resolver"):
        graph_of({"name": "build", "taskRef": {"resolver": "git", "params": []}})


def test_custom_tasks_request_nothing() -> None:
    graph = graph_of(
        {"name": "wait", "taskRef": {"apiVersion": "wait.testing.tekton.dev/v1beta1", "kind": "Wait"}},
        {"name": "approve", "taskSpec": {"apiVersion": "example.dev/v1", "kind": "Approval", "spec": {}}},
    )
    assert graph.nodes["wait"].request == ZERO
    assert graph.nodes["approve"].request == ZERO


def test_a_task_running_a_pipeline_requests_nothing_and_keeps_its_workspaces_and_order() -> None:
    # Pipelines in pipelines (alpha): the child PipelineRun's tasks are planned in its own record.
    graph = graph_of(
        {"name": "fetch", "taskSpec": {"steps": [{"name": "s", "image": "i", "computeResources": {"requests": {"cpu": "100m"}}}]},
         "workspaces": [{"name": "out", "workspace": "source"}]},
        {"name": "build-and-test", "runAfter": ["fetch"], "workspaces": [{"name": "source"}],
         "pipelineSpec": {"workspaces": [{"name": "source"}], "tasks": [{"name": "build", "taskSpec": {"steps": []}}]}},
        {"name": "release", "runAfter": ["build-and-test"], "pipelineRef": {"name": "release-pipeline"}},
    )
    assert graph.nodes["build-and-test"].request == ZERO
    assert graph.nodes["release"].request == ZERO
    assert graph.nodes["build-and-test"].workspaces == frozenset({"source"})
    assert graph.nodes["release"].depends_on == frozenset({"build-and-test"})


GO_DOCS_MATRIX = {
    "params": [
        {"name": "GOARCH", "value": ["linux/amd64", "linux/ppc64le", "linux/s390x"]},
        {"name": "version", "value": ["go1.17", "go1.18.1"]},
    ],
    "include": [
        {"name": "common-package", "params": [{"name": "package", "value": "path/to/common/package/"}]},
        {
            "name": "s390x-no-race",
            "params": [{"name": "GOARCH", "value": "linux/s390x"}, {"name": "flags", "value": "-cover -v"}],
        },
        {
            "name": "go117-context",
            "params": [{"name": "version", "value": "go1.17"}, {"name": "context", "value": "path/to/go117/context"}],
        },
        {"name": "non-existent-arch", "params": [{"name": "GOARCH", "value": "I-do-not-exist"}]},
    ],
}


@pytest.mark.parametrize(
    ("matrix", "params", "expected"),
    [
        (None, None, 1),
        ({}, None, 1),
        ({"params": [{"name": "os", "value": ["linux", "mac"]}]}, None, 2),
        ({"params": [{"name": "os", "value": ["linux", "mac"]}, {"name": "arch", "value": ["amd64", "arm64", "s390x"]}]}, None, 6),
        (GO_DOCS_MATRIX, None, 7),
        ({"include": [{"name": "a", "params": [{"name": "x", "value": "1"}]}, {"name": "b", "params": [{"name": "x", "value": "2"}]}]}, None, 2),
        ({"params": [{"name": "os", "value": "$(params.platforms)"}]}, {"platforms": ["a", "b", "c"]}, 3),
        ({"params": [{"name": "os", "value": "$(params.platforms[*])"}]}, {"platforms": ["a", "b"]}, 2),
        (
            {
                "params": [{"name": "os", "value": ["$(params.first)", "mac"]}],
                "include": [{"name": "i", "params": [{"name": "os", "value": "linux"}]}],
            },
            {"first": "linux"},
            2,
        ),
        ({"params": [{"name": "os", "value": "$(params.missing)"}]}, {}, None),
        ({"params": [{"name": "os", "value": "$(tasks.a.results.list[*])"}]}, None, None),
        ({"params": [{"name": "os", "value": []}]}, None, 0),
    ],
    ids=[
        "no-matrix",
        "empty-matrix",
        "one-param",
        "product",
        "tekton-docs-example",
        "include-only",
        "array-param",
        "array-param-star",
        "string-param-in-values",
        "unknown-param",
        "from-results",
        "empty-array",
    ],
)
def test_matrix_fan_out(matrix: dict[str, Any] | None, params: dict[str, object] | None, expected: int | None) -> None:
    assert matrix_fan_out(matrix, params) == expected


def test_matrix_fan_out_uses_pipeline_defaults_and_run_params() -> None:
    matrix = {"params": [{"name": "os", "value": "$(params.platforms)"}]}
    pipeline = {
        "params": [{"name": "platforms", "type": "array", "default": ["a", "b"]}],
        "tasks": [task("t", matrix=matrix)],
    }
    assert build_pipeline_graph(pipeline, task_specs={}).nodes["t"].fan_out == 2
    run_params = [{"name": "platforms", "value": ["a", "b", "c", "d"]}]
    graph = build_pipeline_graph(pipeline, task_specs={}, params=run_params)
    assert graph.nodes["t"].fan_out == 4
    assert graph.nodes["t"].concurrent_request == Resources(cpu=400)


def test_unknown_fan_out_is_listed() -> None:
    graph = graph_of(
        task("a"),
        task("b", matrix={"params": [{"name": "x", "value": "$(tasks.a.results.xs[*])"}]}),
    )
    assert graph.nodes["b"].fan_out is None
    assert graph.nodes["b"].concurrent_request == graph.nodes["b"].request
    assert graph.unknown_fan_out == ("b",)


def node(name: str, *deps: str) -> TaskNode:
    return TaskNode(name, frozenset(), frozenset(deps), False, 0, ZERO)


def test_graph_queries() -> None:
    graph = PipelineGraph([node("push", "build"), node("build", "clone"), node("clone"), node("lint", "clone")])
    assert graph.order == ("clone", "build", "lint", "push")
    assert len(graph) == 4 and "lint" in graph and "nope" not in graph
    assert [n.name for n in graph] == list(graph.order)
    assert graph.reaches("clone", "push")
    assert not graph.reaches("push", "clone")
    assert not graph.reaches("clone", "clone")
    assert not graph.concurrent("clone", "clone")
    assert graph.concurrent("lint", "push")
    with pytest.raises(KeyError, match="no pipeline task 'nope'"):
        graph.reaches("clone", "nope")


@st.composite
def dags(draw: st.DrawFn) -> dict[str, set[str]]:
    size = draw(st.integers(1, 9))
    names = [f"t{i}" for i in range(size)]
    edges: dict[str, set[str]] = {name: set() for name in names}
    for later in range(size):
        for earlier in range(later):
            if draw(st.booleans()):
                edges[names[later]].add(names[earlier])
    shuffled = draw(st.permutations(names))
    rename = dict(zip(names, shuffled))
    return {rename[n]: {rename[d] for d in deps} for n, deps in edges.items()}


@settings(max_examples=150, deadline=None)
@given(dags())
def test_reaches_is_transitive_reachability(edges: dict[str, set[str]]) -> None:
    graph = PipelineGraph(node(name, *deps) for name, deps in edges.items())

    def ancestors(name: str) -> set[str]:
        seen: set[str] = set()
        stack = list(edges[name])
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(edges[current])
        return seen

    for b in edges:
        found = ancestors(b)
        for a in edges:
            assert graph.reaches(a, b) == (a in found)
    position = {name: i for i, name in enumerate(graph.order)}
    for name, deps in edges.items():
        assert all(position[d] < position[name] for d in deps)
