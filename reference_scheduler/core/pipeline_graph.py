"""pipeline_graph: the tasks of a Pipeline, what each needs, and which may run at the same time.

Tekton starts a pipeline task as soon as the tasks it depends on are done, with
no limit on how many run at once, so two tasks may overlap exactly when neither
is a transitive predecessor of the other. A task depends on another when it
names it in ``runAfter`` or uses one of its results, ``$(tasks.<name>.results.<r>)``
(also ``<r>[*]``, ``<r>[i]`` and ``<r>.<key>``), in its params, matrix,
``when`` expressions, or in the steps and sidecars of its embedded ``taskSpec``
(the places Tekton's ``PipelineTask.Deps`` looks; a reference anywhere else
creates no ordering in Tekton either, so it creates none here).

``finally`` tasks start once every other task is done, and are concurrent with
each other: Tekton rejects a finally task that uses another finally task's
results (``$(finally.…)`` is only allowed in pipeline results) and finally tasks
have no ``runAfter``, so nothing orders them among themselves.

A matrixed task fans out into one TaskRun, hence one pod, per combination, all
started together; the number of combinations is computed as Tekton's
``Matrix.FanOut`` does when the values are known before the run (literals and
pipeline params); when they come from results it is not known (``fan_out`` is
None).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from reference_scheduler.core.resources import ZERO, Resources
from reference_scheduler.core.tekton_pods import predict_task_pod_request

__all__ = [
    "InvalidPipeline",
    "MissingTaskSpec",
    "PipelineCycle",
    "PipelineGraph",
    "PipelineGraphError",
    "TaskNode",
    "build_pipeline_graph",
    "matrix_fan_out",
    "result_references",
]


class PipelineGraphError(ValueError):
    """A Pipeline that cannot be turned into a task graph."""


class MissingTaskSpec(PipelineGraphError):
    """A pipeline task refers to a Task whose spec was not supplied."""


class PipelineCycle(PipelineGraphError):
    """The pipeline tasks' dependencies form a cycle."""


class InvalidPipeline(PipelineGraphError):
    """A Pipeline Tekton itself would reject (duplicate names, unknown task references)."""


@dataclass(frozen=True)
class TaskNode:
    """TaskNode is one pipeline task, reduced to what scheduling needs.

    workspaces are PipelineRun-level workspace names; depends_on are the direct
    predecessors (for a finally task, every non-finally task); request is the
    effective request of one of its pods; fan_out is how many pods Tekton starts
    for it at once (matrix combinations; 1 without a matrix; None when the
    matrix values are only known at run time). Retries add no concurrency: a
    retry is the same task, later.

    Example: TaskNode('build', frozenset({'source'}), frozenset({'clone'}), False, 0,
    Resources(cpu=2000)).concurrent_request == Resources(cpu=2000).
    """

    name: str
    workspaces: frozenset[str]
    depends_on: frozenset[str]
    is_finally: bool
    retries: int
    request: Resources
    fan_out: int | None = 1

    @property
    def concurrent_request(self) -> Resources:
        """concurrent_request is what the task's pods need together: request × fan_out.

        An unknown fan-out counts as 1, a lower bound; PipelineGraph.unknown_fan_out
        lists those tasks so a caller can refuse or over-reserve.
        """
        count = 1 if self.fan_out is None else self.fan_out
        return self.request if count == 1 else self.request.scaled(count)


class PipelineGraph:
    """PipelineGraph is a validated, acyclic set of TaskNodes with its reachability computed once.

    Why precomputed: peaks ask "can these two run together?" for every pair of a
    group's tasks, so each answer must be a lookup.

    Example: with clone → build and clone → test, reaches('clone', 'test') is True
    and concurrent('build', 'test') is True.
    """

    __slots__ = ("_nodes", "_order", "_ancestors", "_index")

    def __init__(self, nodes: Iterable[TaskNode]) -> None:
        by_name: dict[str, TaskNode] = {}
        for node in nodes:
            if node.name in by_name:
                raise InvalidPipeline(f"pipeline task {node.name!r} is defined twice: give each task a unique name")
            by_name[node.name] = node
        for node in by_name.values():
            for dependency in sorted(node.depends_on):
                if dependency not in by_name:
                    raise InvalidPipeline(
                        f"pipeline task {node.name!r} depends on unknown task {dependency!r}: fix runAfter or the result reference"
                    )
        self._nodes: Mapping[str, TaskNode] = MappingProxyType(by_name)
        self._order = _topological_order(by_name)
        self._index = {name: i for i, name in enumerate(self._order)}
        ancestors: dict[str, int] = {}
        for name in self._order:
            mask = 0
            for dependency in by_name[name].depends_on:
                mask |= ancestors[dependency] | (1 << self._index[dependency])
            ancestors[name] = mask
        self._ancestors = ancestors

    @property
    def nodes(self) -> Mapping[str, TaskNode]:
        """nodes maps task name to TaskNode (read-only)."""
        return self._nodes

    @property
    def order(self) -> tuple[str, ...]:
        """order is a topological order of the task names, ties broken by name."""
        return self._order

    @property
    def unknown_fan_out(self) -> tuple[str, ...]:
        """unknown_fan_out names the matrixed tasks whose number of pods is only known at run time."""
        return tuple(name for name in self._order if self._nodes[name].fan_out is None)

    def __contains__(self, name: object) -> bool:
        return name in self._nodes

    def __iter__(self) -> Iterator[TaskNode]:
        return (self._nodes[name] for name in self._order)

    def __len__(self) -> int:
        return len(self._nodes)

    def _position(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no pipeline task {name!r} in this graph: use one of {sorted(self._nodes)}") from None

    def reaches(self, a: str, b: str) -> bool:
        """reaches(a, b) is True when a must finish before b can start (a is a transitive predecessor of b).

        Example: for clone → build → push, reaches('clone', 'push') is True and
        reaches('push', 'clone') and reaches('clone', 'clone') are False.
        """
        bit = 1 << self._position(a)
        self._position(b)
        return bool(self._ancestors[b] & bit)

    def concurrent(self, a: str, b: str) -> bool:
        """concurrent(a, b) is True when a and b are different tasks that may run at the same time.

        Example: two tasks that both only runAfter 'clone' are concurrent; a task
        and a finally task never are.
        """
        return a != b and not self.reaches(a, b) and not self.reaches(b, a)


def _topological_order(nodes: Mapping[str, TaskNode]) -> tuple[str, ...]:
    remaining = {name: set(node.depends_on) for name, node in nodes.items()}
    dependents: dict[str, list[str]] = {name: [] for name in nodes}
    for name, node in nodes.items():
        for dependency in node.depends_on:
            dependents[dependency].append(name)
    ready = sorted(name for name, deps in remaining.items() if not deps)
    order: list[str] = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        released = []
        for dependent in dependents[name]:
            remaining[dependent].discard(name)
            if not remaining[dependent]:
                released.append(dependent)
        ready = sorted(ready + released)
    if len(order) != len(nodes):
        stuck = sorted(set(nodes) - set(order))
        raise PipelineCycle(
            f"pipeline tasks {stuck} depend on each other in a cycle: remove a runAfter or result reference among them"
        )
    return tuple(order)


# Tekton's VariableSubstitutionRegex, written without its nested repetition
# (the first character class already admits dots), which would backtrack
# exponentially in Python's engine on an unterminated "$(".
_EXPRESSION = re.compile(r"\$\(([_a-zA-Z0-9.-]+(?:\[(?:[0-9]+|\*)\])?)\)")


def result_references(text: str) -> frozenset[str]:
    """result_references returns the pipeline tasks whose results text uses, parsed as Tekton does.

    Example: result_references('$(tasks.clone.results.commit) $(tasks.scan.results.list[*]) '
    '$(tasks.cfg.results.obj.key) $(params.x)') == frozenset({'clone', 'scan', 'cfg'}).
    """
    found = set()
    for expression in _EXPRESSION.findall(text):
        parts = expression.split(".")
        if len(parts) in (4, 5) and parts[0] in ("tasks", "finally") and parts[2] == "results":
            found.add(parts[1])
    return frozenset(found)


def _strings(value: object) -> Iterator[str]:
    """_strings yields every string inside a JSON value (a param value may be a string, list or object)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, Sequence):
        for item in value:
            yield from _strings(item)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _container_strings(container: Mapping[str, Any]) -> Iterator[str]:
    """_container_strings yields the step or sidecar fields Tekton scans for result references."""
    for field in ("name", "image", "imagePullPolicy", "script", "workingDir"):
        yield from _strings(container.get(field))
    yield from _strings(container.get("command"))
    yield from _strings(container.get("args"))
    for env in _list(container.get("env")):
        yield from _strings(env.get("value"))
        value_from = _mapping(env.get("valueFrom"))
        for source in ("secretKeyRef", "configMapKeyRef"):
            ref = _mapping(value_from.get(source))
            yield from _strings(ref.get("key"))
            yield from _strings(ref.get("name"))


def _dependency_strings(task: Mapping[str, Any]) -> Iterator[str]:
    matrix = _mapping(task.get("matrix"))
    for param in (*_list(task.get("params")), *_list(matrix.get("params"))):
        yield from _strings(param.get("value"))
    for include in _list(matrix.get("include")):
        for param in _list(include.get("params")):
            yield from _strings(param.get("value"))
    for when in _list(task.get("when")):
        yield from _strings(when.get("input"))
        yield from _strings(when.get("cel"))
        yield from _strings(when.get("values"))
    task_spec = _mapping(task.get("taskSpec"))
    for container in (*_list(task_spec.get("steps")), *_list(task_spec.get("sidecars"))):
        yield from _container_strings(container)


_WORKSPACE_USE = re.compile(r"\$\(workspaces(?:\.([^.)\[\]]+)|\[\"([^\"]+)\"\]|\['([^']+)'\])")


def _propagated_workspaces(task_spec: Mapping[str, Any]) -> set[str]:
    """_propagated_workspaces: workspaces an embedded taskSpec uses without binding them.

    Tekton binds those to the PipelineRun workspace of the same name
    (propagated workspaces). Example: a step script 'cd $(workspaces.src.path)'
    propagates 'src'.
    """
    texts: list[str] = []
    for container in (*_list(task_spec.get("steps")), *_list(task_spec.get("sidecars"))):
        texts += _strings(container.get("script"))
        texts += _strings(container.get("args"))
        texts += _strings(container.get("command"))
        texts += _strings(container.get("workingDir"))
        texts += [str(env.get("value") or "") for env in _list(container.get("env"))]
        for param in _list(container.get("params")):
            texts += _strings(param.get("value"))
    template = _mapping(task_spec.get("stepTemplate"))
    texts += _strings(template.get("args"))
    texts += _strings(template.get("command"))
    texts += _strings(template.get("workingDir"))
    texts += [str(env.get("value") or "") for env in _list(template.get("env"))]
    used = set()
    for text in texts:
        for match in _WORKSPACE_USE.finditer(text):
            used.add(next(group for group in match.groups() if group))
    return used


def _task_workspaces(task: Mapping[str, Any]) -> frozenset[str]:
    bindings = _list(task.get("workspaces"))
    names = {str(b.get("workspace") or b.get("name")) for b in bindings if b.get("workspace") or b.get("name")}
    task_spec = _mapping(task.get("taskSpec"))
    if task_spec:
        bound = {str(b.get("name")) for b in bindings}
        names |= _propagated_workspaces(task_spec) - bound
    return frozenset(names)


_WHOLE_PARAM = re.compile(r"^\$\(params\.([_a-zA-Z0-9.-]+?)(\[\*\])?\)$")
_STRING_PARAM = re.compile(r"\$\(params\.([_a-zA-Z0-9-]+)\)")


def _substitute(text: str, strings: Mapping[str, str]) -> str:
    return _STRING_PARAM.sub(lambda m: strings.get(m.group(1), m.group(0)), text)


def matrix_fan_out(matrix: Mapping[str, Any] | None, params: Mapping[str, object] | None = None) -> int | None:
    """matrix_fan_out is the number of TaskRuns Tekton's Matrix.FanOut makes, or None if not known before the run.

    params are the pipeline's parameter values (PipelineRun values over
    Pipeline defaults); a matrix param given as '$(params.x)' or '$(params.x[*])'
    takes x's array. A value from a task result makes the count unknown.
    A task without a matrix fans out to 1.

    Example: params os: [linux, mac] and arch: [amd64, arm64] give 4; an include
    {os: windows, arch: amd64} adds a 5th; an include {os: linux, flavour: slim}
    only adds flavour to the linux combinations, still 4.
    """
    if not matrix:
        return 1
    values = params or {}
    strings = {name: value for name, value in values.items() if isinstance(value, str)}
    arrays: list[tuple[str, list[str]]] = []
    for param in _list(matrix.get("params")):
        value = param.get("value")
        if isinstance(value, str):
            whole = _WHOLE_PARAM.match(value)
            resolved = values.get(whole.group(1)) if whole else None
            if not isinstance(resolved, list):
                return None
            value = resolved
        if not isinstance(value, list):
            return None
        arrays.append((str(param.get("name")), [_substitute(str(v), strings) for v in value]))
    includes = []
    for include in _list(matrix.get("include")):
        combination = {}
        for param in _list(include.get("params")):
            combination[str(param.get("name"))] = _substitute(str(param.get("value")), strings)
        includes.append(combination)
    if not arrays and not includes:
        return 1
    if not arrays:
        return len(includes)

    combinations: list[dict[str, str]] = []
    for name, array in arrays:
        if not combinations:
            combinations = [{name: v} for v in array]
        else:
            combinations = [{**c, name: v} for v in array for c in combinations]
    for combination in combinations:
        for include in includes:
            if all(combination.get(k, v) == v for k, v in include.items()):
                combination.update(include)
    for include in includes:
        if include and not any(c.get(k) == v for c in combinations for k, v in include.items() if k in c):
            combinations.append(include)
    return len(combinations)


def _is_custom_task(task: Mapping[str, Any]) -> bool:
    ref = _mapping(task.get("taskRef"))
    spec = _mapping(task.get("taskSpec"))
    return bool(ref.get("apiVersion") and ref.get("kind")) or bool(spec.get("apiVersion") and spec.get("kind"))


def _runs_pipeline(task: Mapping[str, Any]) -> bool:
    return bool(task.get("pipelineRef") or task.get("pipelineSpec"))


def _ref_description(task: Mapping[str, Any]) -> str:
    ref = _mapping(task.get("taskRef"))
    if ref.get("name"):
        return f"Task {ref['name']!r}"
    if ref.get("resolver"):
        return f"a Task from the {ref['resolver']!r} resolver"
    return "a Task"


def _pipeline_params(pipeline_spec: Mapping[str, Any], run_params: Sequence[Mapping[str, Any]]) -> dict[str, object]:
    values: dict[str, object] = {}
    for spec in _list(pipeline_spec.get("params")):
        if "default" in spec:
            values[str(spec.get("name"))] = spec["default"]
    for param in run_params:
        values[str(param.get("name"))] = param.get("value")
    return values


def build_pipeline_graph(
    pipeline_spec: Mapping[str, Any],
    *,
    task_specs: Mapping[str, Mapping[str, Any]],
    task_run_specs: Sequence[Mapping[str, Any]] = (),
    limit_range: Mapping[str, Any] | None = None,
    params: Sequence[Mapping[str, Any]] = (),
    sidecar_logs_results: bool = False,
    native_sidecars: bool = False,
    overheads: Mapping[str, Mapping[str, Any]] | None = None,
    container_defaults: Mapping[str, Mapping[str, Any]] | None = None,
) -> PipelineGraph:
    """build_pipeline_graph turns a Pipeline spec (a PipelineRun's resolved pipelineSpec) into a PipelineGraph.

    task_specs holds the resolved spec of each ``taskRef`` task, keyed by
    pipeline task name; embedded ``taskSpec`` tasks need none. task_run_specs
    and params are the PipelineRun's ``spec.taskRunSpecs`` and ``spec.params``.
    sidecar_logs_results and native_sidecars are Tekton's feature flags;
    overheads maps a pipeline task to its pod's ``spec.overhead`` (from the
    RuntimeClass its pod template names; core.tekton_config); container_defaults
    is config-defaults' ``default-container-resource-requirements``
    (core.container_defaults).
    Custom tasks (a taskRef or taskSpec with apiVersion and kind) create no pod
    and request nothing; nor does a task that runs a Pipeline (pipelineRef or
    pipelineSpec, alpha): its tasks are its child PipelineRun's, planned there.

    Example: tasks clone (workspace source), build (runAfter clone, 2 CPU) and
    test (uses $(tasks.clone.results.commit)) give build and test both depending
    on clone, and concurrent with each other.

    Raises MissingTaskSpec, PipelineCycle or InvalidPipeline, each saying what to fix.
    """
    run_specs = {str(s.get("pipelineTaskName")): s for s in task_run_specs}
    param_values = _pipeline_params(pipeline_spec, params)
    dag_tasks = _list(pipeline_spec.get("tasks"))
    finally_tasks = _list(pipeline_spec.get("finally"))
    dag_names = frozenset(str(t.get("name")) for t in dag_tasks)
    finally_names = frozenset(str(t.get("name")) for t in finally_tasks)

    nodes = []
    for task, is_finally in [*((t, False) for t in dag_tasks), *((t, True) for t in finally_tasks)]:
        name = str(task.get("name"))
        references: frozenset[str] = frozenset().union(*(result_references(s) for s in _dependency_strings(task)))
        unknown = sorted(references - dag_names - finally_names)
        if unknown:
            raise InvalidPipeline(
                f"pipeline task {name!r} uses results of unknown task {unknown[0]!r}: fix the $(tasks.{unknown[0]}.results...) reference"
            )
        if is_finally:
            inner = sorted(references & finally_names)
            if inner:
                raise InvalidPipeline(
                    f"finally task {name!r} uses results of finally task {inner[0]!r}: finally tasks may only use results of non-finally tasks"
                )
            depends_on = dag_names
        else:
            if references & finally_names:
                raise InvalidPipeline(
                    f"pipeline task {name!r} uses results of finally task {sorted(references & finally_names)[0]!r}: only finally tasks run after it"
                )
            depends_on = references | frozenset(str(n) for n in task.get("runAfter") or ())

        request = ZERO
        if not _is_custom_task(task) and not _runs_pipeline(task):
            spec = _mapping(task.get("taskSpec")) or task_specs.get(name)
            if spec is None:
                raise MissingTaskSpec(
                    f"pipeline task {name!r} refers to {_ref_description(task)} whose spec was not given: resolve it and pass it as task_specs[{name!r}]"
                )
            request = predict_task_pod_request(
                spec,
                task_run_spec=run_specs.get(name),
                limit_range=limit_range,
                sidecar_logs_results=sidecar_logs_results,
                native_sidecars=native_sidecars,
                overhead=(overheads or {}).get(name),
                container_defaults=container_defaults,
            )
        matrix = _mapping(task.get("matrix"))
        nodes.append(
            TaskNode(
                name=name,
                workspaces=_task_workspaces(task),
                depends_on=frozenset(depends_on),
                is_finally=is_finally,
                retries=int(task.get("retries") or 0),
                request=request,
                fan_out=matrix_fan_out(matrix, param_values) if matrix else 1,
            )
        )
    return PipelineGraph(nodes)
