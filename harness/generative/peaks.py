"""peaks: a group's peak as docs/contract.md section 6 defines it, computed by the suite itself.

    peak[r] = max over every set S of group tasks that can run concurrently of
              sum over t in S of request[r](t)          for every resource r the group's pods request, separately

(cpu, memory, ephemeral-storage, hugepages-<size>, extended resources such as
`example.com/gpu`: harness.resource_names; cpu and memory always, 0 when no
pod requests them).

Read from the PipelineRun's resolved `status.pipelineSpec` (else its embedded
`spec.pipelineSpec`) and the Task objects its `taskRef`s name:

* request(t) is the pod Tekton builds for t (section 6.1, `pod_requests`),
  times the number of matrix combinations (all of a matrix's TaskRuns start
  together); retries add nothing;
* two DAG tasks can overlap exactly when neither is a transitive predecessor
  of the other, over the whole pipeline's DAG, whose edges are `runAfter` and
  result references `$(tasks.X.results.r)` (in params, matrix, when
  expressions, an embedded taskSpec's steps and sidecars);
* finally tasks overlap each other and never a DAG task.

A set of pairwise-overlapping tasks is an antichain of that order, so the
peak is a maximum-weight antichain of the group, found here by branching on
one task at a time (in or out); tests/unit/test_generative_peaks.py holds it
to a brute force over every subset.

Worked example (docs/contract.md section 6): clone -> build -> unit-test and
clone -> lint, 100m / 1500m / 1000m / 500m: the antichains are {clone},
{build, lint}, {unit-test, lint} and their subsets, so the CPU peak is 2000m.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from harness.errors import HarnessError
from harness.generative.pod_requests import contract_pod_request, contract_requests
from harness.monitor.expected_groups import ExpectedGroup, pipeline_spec_of
from harness.quantities import Amount

Obj = Mapping[str, Any]

#: A result reference, as Tekton reads it: `$(tasks.build.results.digest)`, `...results.list[*])`, `...results.obj.key)`.
_RESULT_REFERENCE = re.compile(r"\$\(tasks\.([^.)\s]+)\.results\.")


@dataclass(frozen=True)
class PlannedTask:
    """PlannedTask is one pipeline task as the peak sees it: its direct predecessors and what its pods request."""

    name: str
    is_finally: bool
    after: frozenset[str]
    #: How many pods run at once: the matrix's combinations, else 1.
    pods: int
    #: One pod's request (section 6.1).
    request: Amount

    @property
    def total(self) -> Amount:
        return self.request.times(self.pods)


def result_references(entry: Obj) -> frozenset[str]:
    """result_references() are the tasks whose results a pipeline-task entry uses (section 6's dependency).

    It reads the entry's params, matrix and when expressions, and the steps and
    sidecars of an embedded taskSpec; a `taskRef`'s Task cannot name another
    pipeline task's result.
    """
    parts: list[Any] = [entry.get("params"), entry.get("matrix"), entry.get("when")]
    spec = entry.get("taskSpec") or {}
    parts += [spec.get("steps"), spec.get("sidecars")]
    text = json.dumps([p for p in parts if p])
    return frozenset(_RESULT_REFERENCE.findall(text))


def _param_values(params: Iterable[Obj]) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for param in params:
        value = param.get("value")
        values[str(param["name"])] = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return values


def matrix_combinations(matrix: Obj | None) -> int:
    """matrix_combinations() counts the TaskRuns of a matrixed task, as `Matrix.FanOut` makes them (section 6).

    The product of the `params` arrays; each `include` entry then adds its
    params to every combination that agrees with it on the params they share,
    and is a new combination only when no combination has any of its params
    with the same value; with `include` and no `params`, one per entry.
    Example: x in [a, b] with include {x: a} and {x: c} is 3.
    A param whose value is still a reference (`$(params.xs[*])` unresolved)
    cannot be counted: HarnessError.
    """
    if not matrix:
        return 1
    params = _param_values(matrix.get("params") or [])
    for name, values in params.items():
        if any(v.startswith("$(") for v in values):
            raise HarnessError(f"matrix param {name} is still a reference ({values}): count it from the resolved status.pipelineSpec")
    includes = [{name: values[0] for name, values in _param_values(i.get("params") or []).items()} for i in matrix.get("include") or []]
    if not params:
        return len(includes)
    combinations: list[dict[str, str]] = [{}]
    for name, values in params.items():
        combinations = [{**c, name: v} for c in combinations for v in values]
    # First every include adds its params to the combinations it agrees with on the params they share...
    for own in includes:
        for combination in combinations:
            if all(combination[k] == v for k, v in own.items() if k in combination):
                combination.update(own)
    # ...then each is a new combination if no combination (those added before it included) shares a value with it.
    for own in includes:
        if own and not any(combination.get(k) == v for combination in combinations for k, v in own.items() if k in combination):
            combinations.append(own)
    return len(combinations)


def _task_spec(entry: Obj, tasks: Mapping[str, Obj]) -> Obj:
    if entry.get("taskSpec"):
        return dict(entry["taskSpec"])
    ref = (entry.get("taskRef") or {}).get("name")
    if ref is None or ref not in tasks:
        raise HarnessError(f"pipeline task {entry.get('name')} refers to Task {ref!r}, which the suite was not given")
    spec = tasks[ref].get("spec") or {}
    return dict(spec)


def plan(pipeline_run: Obj, tasks: Mapping[str, Obj] = {}) -> dict[str, PlannedTask]:
    """plan() reads every pipeline task of the run: predecessors, pod count and request.

    `tasks` maps a Task object's name to the object, for the entries that name
    one by `taskRef`. The run's `spec.taskRunSpecs` apply (section 6.1, steps 2
    and 3); LimitRanges, RuntimeClass overhead and Tekton feature flags other
    than the defaults are outside what this reads.
    """
    spec = pipeline_spec_of(pipeline_run)
    if spec is None:
        raise HarnessError("the PipelineRun has no pipelineSpec yet: read it once Tekton has resolved it")
    run_specs = {str(s.get("pipelineTaskName")): s for s in (pipeline_run.get("spec") or {}).get("taskRunSpecs") or []}
    planned: dict[str, PlannedTask] = {}
    for is_finally, entries in ((False, spec.get("tasks") or []), (True, spec.get("finally") or [])):
        for entry in entries:
            name = str(entry["name"])
            task_spec = _task_spec(entry, tasks)
            request = contract_pod_request(contract_requests(task_spec, run_specs.get(name, {}), None))
            after = frozenset(str(a) for a in entry.get("runAfter") or []) | result_references(entry)
            planned[name] = PlannedTask(name, is_finally, after, matrix_combinations(entry.get("matrix")), request)
    return planned


def predecessors(planned: Mapping[str, PlannedTask]) -> dict[str, frozenset[str]]:
    """predecessors() is each DAG task's transitive predecessors (a finally task's DAG edges count too)."""
    memo: dict[str, frozenset[str]] = {}

    def walk(name: str, seen: frozenset[str]) -> frozenset[str]:
        if name in memo:
            return memo[name]
        if name in seen:
            raise HarnessError(f"the pipeline's DAG has a cycle through {name}")
        found: set[str] = set()
        for parent in planned[name].after:
            if parent in planned:
                found.add(parent)
                found |= walk(parent, seen | {name})
        memo[name] = frozenset(found)
        return memo[name]

    return {name: walk(name, frozenset()) for name in planned}


def can_overlap(a: str, b: str, planned: Mapping[str, PlannedTask], before: Mapping[str, frozenset[str]]) -> bool:
    """can_overlap() is section 6's concurrency: finally tasks only with each other, DAG tasks unless one precedes the other."""
    if a == b:
        return False
    if planned[a].is_finally or planned[b].is_finally:
        return planned[a].is_finally and planned[b].is_finally
    return a not in before[b] and b not in before[a]


def max_antichain(items: list[str], weight: Callable[[str], int], overlap: Callable[[str, str], bool]) -> int:
    """max_antichain() is the largest total weight of a set of items that pairwise overlap (0 for none).

    Branch on the first item: leave it out, or take it and keep only the
    items that overlap it. Exponential in the worst case; a group has a
    handful of tasks.
    """
    if not items:
        return 0
    first, rest = items[0], items[1:]
    without = max_antichain(rest, weight, overlap)
    with_first = weight(first) + max_antichain([i for i in rest if overlap(first, i)], weight, overlap)
    return max(without, with_first)


def group_peak(group_tasks: Iterable[str], planned: Mapping[str, PlannedTask]) -> Amount:
    """group_peak() is the group's peak, each resource over its own best set of overlapping tasks.

    Example: build (1 example.com/gpu, 500m) and lint (0 gpu, 1000m) can overlap, test (1 gpu, 2000m)
    comes after both: the peak is 2000m CPU and 1 gpu, from two different sets.
    """
    before = predecessors(planned)
    names = sorted(group_tasks)

    def overlap(a: str, b: str) -> bool:
        return can_overlap(a, b, planned, before)

    totals = {n: planned[n].total for n in names}

    def peak_of(resource: str) -> int:
        return max_antichain(names, lambda n: totals[n].get(resource), overlap)

    resources = {r for total in totals.values() for r in total.resources()} | {"cpu", "memory"}
    return Amount.of({r: peak_of(r) for r in resources})


def expected_peaks(groups: Iterable[ExpectedGroup], pipeline_run: Obj, tasks: Mapping[str, Obj] = {}) -> dict[frozenset[str], Amount]:
    """expected_peaks() maps each group's task set to its peak."""
    planned = plan(pipeline_run, tasks)
    return {group.tasks: group_peak(group.tasks, planned) for group in groups}


def run_demand(groups: Iterable[ExpectedGroup], pipeline_run: Obj, tasks: Mapping[str, Obj] = {}) -> Amount:
    """run_demand() bounds what one run can hold at once: every group's peak plus every pod of the tasks in no group.

    The generator keeps a batch's runs under a share of the pool by it, so
    that no batch can deadlock a correct scheduler (see grammar.draw_batch).
    """
    groups = tuple(groups)
    planned = plan(pipeline_run, tasks)
    grouped = {t for g in groups for t in g.tasks}
    total = Amount()
    for group in groups:
        total = total + group_peak(group.tasks, planned)
    for name, task in planned.items():
        if name not in grouped:
            total = total + task.total
    return total
