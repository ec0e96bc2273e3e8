"""The suite's own peak (harness.generative.peaks): docs/contract.md section 6's worked examples, and a brute force."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.generative.peaks import (
    PlannedTask,
    can_overlap,
    expected_peaks,
    group_peak,
    matrix_combinations,
    max_antichain,
    plan,
    predecessors,
    result_references,
    run_demand,
)
from harness.monitor.expected_groups import expected_groups
from harness.quantities import Amount

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
Mi = 2**20
GPU = "example.com/gpu"


def _spec(*steps: Obj, **fields: Any) -> Obj:
    return {"steps": [{"name": f"s{i}", "image": "busybox", **s} for i, s in enumerate(steps)], **fields}


def _requests(cpu: str | None = None, memory: str | None = None) -> Obj:
    requests = {**({"cpu": cpu} if cpu else {}), **({"memory": memory} if memory else {})}
    return {"computeResources": {"requests": requests}}


def _entry(name: str, cpu: str, memory: str, *, after: tuple[str, ...] = (), ws: str | None = "source", **fields: Any) -> Obj:
    entry: Obj = {"name": name, "taskSpec": _spec(_requests(cpu, memory)), **fields}
    if after:
        entry["runAfter"] = list(after)
    if ws:
        entry["workspaces"] = [{"name": "w", "workspace": ws}]
    return entry


def _run(tasks: list[Obj], finally_: list[Obj] | None = None, **spec: Any) -> Obj:
    workspaces = [{"name": "source", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "reports", "persistentVolumeClaim": {"claimName": "r"}}]
    return {"spec": {"workspaces": workspaces, **spec}, "status": {"pipelineSpec": {"tasks": tasks, "finally": finally_ or []}}}


def _peaks(run: Obj, tasks: dict[str, Obj] | None = None) -> dict[frozenset[str], Amount]:
    return expected_peaks(expected_groups(run) or (), run, tasks or {})


def test_the_contract_example_record() -> None:
    """docs/contract.md section 6 (docs/contract-example.yaml): source 2000m / 2560Mi, reports 800m / 1Gi."""
    run = _run(
        [
            _entry("clone", "100m", "128Mi"),
            _entry("build", "1500m", "2Gi", after=("clone",)),
            _entry("unit-test", "1", "1Gi", after=("build",)),
            _entry("lint", "500m", "512Mi", after=("clone",)),
            _entry("scan", "800m", "1Gi", ws="reports"),
        ],
        [_entry("publish-report", "200m", "256Mi", ws="reports")],
    )
    assert _peaks(run) == {
        frozenset({"clone", "build", "unit-test", "lint"}): Amount(2000, 2560 * Mi),
        frozenset({"scan", "publish-report"}): Amount(800, 1024 * Mi),
    }


def test_cpu_and_memory_peaks_come_from_different_sets() -> None:
    # a -> b, c beside both: CPU a+c = 1000 + 100, memory b+c = 900Mi + 100Mi.
    run = _run([_entry("a", "1", "100Mi"), _entry("b", "100m", "900Mi", after=("a",)), _entry("c", "100m", "100Mi")])
    assert _peaks(run) == {frozenset({"a", "b", "c"}): Amount(1100, 1000 * Mi)}


def _gpu_entry(name: str, cpu: str, gpus: int, *, after: tuple[str, ...] = ()) -> Obj:
    """A task asking for GPUs as users write it: requests and equal limits (the API server requires limits for extended resources)."""
    step = {"computeResources": {"requests": {"cpu": cpu, GPU: str(gpus)}, "limits": {GPU: str(gpus)}}} if gpus else _requests(cpu)
    entry: Obj = {"name": name, "taskSpec": _spec(step), "workspaces": [{"name": "w", "workspace": "source"}]}
    if after:
        entry["runAfter"] = list(after)
    return entry


def test_each_resource_peaks_over_its_own_set_of_tasks() -> None:
    """build (1 gpu, 500m) and lint (1000m) overlap, test (1 gpu, 2000m) follows both: peak 2000m and 1 gpu, never 2."""
    run = _run([_gpu_entry("build", "500m", 1), _gpu_entry("lint", "1000m", 0), _gpu_entry("test", "2000m", 1, after=("build", "lint"))])
    peak = _peaks(run)[frozenset({"build", "lint", "test"})]
    assert peak == Amount.of({"cpu": 2000, GPU: 1})


def test_overlapping_tasks_add_their_gpus_and_a_matrix_multiplies_them() -> None:
    shards = {"params": [{"name": "shard", "value": ["a", "b", "c"]}]}
    run = _run([_gpu_entry("train", "100m", 1, **{}), {**_gpu_entry("eval", "100m", 2), "matrix": shards}])
    assert _peaks(run)[frozenset({"train", "eval"})].get(GPU) == 1 + 3 * 2


def test_a_group_requesting_nothing_but_cpu_names_no_other_resource() -> None:
    run = _run([_gpu_entry("build", "500m", 0)])
    assert _peaks(run)[frozenset({"build"})].others == ()


def test_an_order_through_a_task_outside_the_group_counts() -> None:
    # a -> x -> b, x in no group: a and b never overlap, so the peak is the larger.
    run = _run([_entry("a", "1", "1Mi"), _entry("x", "1", "1Mi", after=("a",), ws=None), _entry("b", "2", "1Mi", after=("x",))])
    assert _peaks(run) == {frozenset({"a", "b"}): Amount(2000, Mi)}


def test_a_result_reference_orders_two_tasks() -> None:
    """result_dependency's arithmetic: produce 480m, consume 2400m through its result only: 2400m, not 2880m."""
    consume = _entry("consume", "2400m", "0", params=[{"name": "d", "value": "$(tasks.produce.results.digest)"}])
    run = _run([_entry("produce", "480m", "0"), consume])
    assert _peaks(run) == {frozenset({"produce", "consume"}): Amount(2400, 0)}


@pytest.mark.parametrize(
    "entry, found",
    [
        ({"params": [{"name": "p", "value": "$(tasks.a.results.r)"}]}, {"a"}),
        ({"params": [{"name": "p", "value": ["$(tasks.a.results.r[*])"]}]}, {"a"}),
        ({"when": [{"input": "$(tasks.b.results.r.key)", "operator": "in", "values": ["x"]}]}, {"b"}),
        ({"matrix": {"params": [{"name": "m", "value": "$(tasks.c.results.list[*])"}]}}, {"c"}),
        ({"taskSpec": {"steps": [{"name": "s", "script": "echo $(tasks.d.results.r)"}]}}, {"d"}),
        ({"taskSpec": {"sidecars": [{"name": "s", "env": [{"name": "E", "value": "$(tasks.e.results.r)"}]}]}}, {"e"}),
        ({"params": [{"name": "p", "value": "$(params.x)"}]}, set()),
    ],
)
def test_result_references_are_read_where_the_contract_says(entry: Obj, found: set[str]) -> None:
    assert result_references(entry) == found


def test_finally_tasks_add_to_each_other_never_to_a_dag_task() -> None:
    run = _run([_entry("a", "1", "0")], [_entry("f1", "600m", "0"), _entry("f2", "600m", "0")])
    assert _peaks(run) == {frozenset({"a", "f1", "f2"}): Amount(1200, 0)}


def test_a_matrix_counts_once_per_combination_and_a_retry_adds_nothing() -> None:
    matrix = {"params": [{"name": "x", "value": ["a", "b"]}], "include": [{"name": "i", "params": [{"name": "x", "value": "c"}]}]}
    run = _run([_entry("m", "100m", "1Mi", matrix=matrix, retries=2)])
    assert _peaks(run) == {frozenset({"m"}): Amount(300, 3 * Mi)}


@pytest.mark.parametrize(
    "matrix, count",
    [
        (None, 1),
        ({"params": [{"name": "x", "value": ["a", "b"]}]}, 2),
        ({"params": [{"name": "x", "value": ["a", "b"]}, {"name": "y", "value": ["1", "2", "3"]}]}, 6),
        # The contract's worked example: {x: a} agrees with a and adds none, {x: c} agrees with none and adds one.
        ({"params": [{"name": "x", "value": ["a", "b"]}], "include": [{"params": [{"name": "x", "value": "a"}]}, {"params": [{"name": "x", "value": "c"}]}]}, 3),
        ({"params": [{"name": "x", "value": ["a", "b"]}], "include": [{"params": [{"name": "x", "value": "a"}, {"name": "flavour", "value": "slim"}]}]}, 2),
        # One of its params has a value a combination has: no new combination, although the other differs.
        ({"params": [{"name": "x", "value": ["a", "b"]}, {"name": "y", "value": ["1"]}], "include": [{"params": [{"name": "x", "value": "a"}, {"name": "y", "value": "9"}]}]}, 2),
        ({"include": [{"params": [{"name": "x", "value": "a"}]}, {"params": [{"name": "x", "value": "b"}]}]}, 2),
    ],
)
def test_matrix_combinations_follow_fan_out(matrix: Obj | None, count: int) -> None:
    assert matrix_combinations(matrix) == count


def test_an_unresolved_matrix_is_refused() -> None:
    with pytest.raises(HarnessError, match="still a reference"):
        matrix_combinations({"params": [{"name": "x", "value": "$(params.xs[*])"}]})


def test_a_task_ref_is_sized_from_its_task_and_the_pod_rules_of_section_6_1() -> None:
    """stepTemplate 200m / 256Mi; steps {cpu: 400m}, {}, {memory: 128Mi}: 800m / 640Mi (section 6.1's table)."""
    spec = _spec(_requests("400m"), {}, _requests(memory="128Mi"), stepTemplate=_requests("200m", "256Mi"))
    run = _run([{"name": "t", "taskRef": {"name": "templated"}, "workspaces": [{"name": "w", "workspace": "source"}]}])
    assert _peaks(run, {"templated": {"kind": "Task", "spec": spec}}) == {frozenset({"t"}): Amount(800, 640 * Mi)}
    with pytest.raises(HarnessError, match="was not given"):
        _peaks(run)


def test_a_sidecar_and_the_run_s_task_run_specs_count() -> None:
    """Section 6.1's table: step 100m / 64Mi, sidecar 100m / 32Mi; stepSpecs work 700m, sidecarSpecs helper 96Mi: 800m / 160Mi."""
    spec = {
        "steps": [{"name": "work", "image": "b", **_requests("100m", "64Mi")}],
        "sidecars": [{"name": "helper", "image": "b", **_requests("100m", "32Mi")}],
    }
    run_specs = [{
        "pipelineTaskName": "t",
        "stepSpecs": [{"name": "work", **_requests("700m")}],
        "sidecarSpecs": [{"name": "helper", **_requests(memory="96Mi")}],
    }]
    run = _run([{"name": "t", "taskSpec": spec, "workspaces": [{"name": "w", "workspace": "source"}]}], taskRunSpecs=run_specs)
    assert _peaks(run) == {frozenset({"t"}): Amount(800, 160 * Mi)}


def test_run_demand_adds_every_group_peak_and_every_plain_pod() -> None:
    run = _run([_entry("a", "1", "0"), _entry("b", "1", "0", after=("a",)), _entry("p", "300m", "0", ws=None, matrix={"params": [{"name": "x", "value": ["1", "2"]}]})])
    assert run_demand(expected_groups(run) or (), run) == Amount(1000 + 2 * 300, 0)


def test_a_cycle_is_refused() -> None:
    planned = {n: PlannedTask(n, False, frozenset({o}), 1, Amount(1, 1)) for n, o in (("a", "b"), ("b", "a"))}
    with pytest.raises(HarnessError, match="cycle"):
        predecessors(planned)


@st.composite
def _pipelines(draw: st.DrawFn) -> dict[str, PlannedTask]:
    """A random pipeline: tasks t0..tn in topological order, each after some earlier ones; the last few may be finally."""
    count = draw(st.integers(1, 8))
    finals = draw(st.integers(0, min(3, count - 1)))
    planned = {}
    for i in range(count):
        is_finally = i >= count - finals
        after = frozenset() if is_finally else frozenset(f"t{j}" for j in range(i) if draw(st.booleans()))
        others = {GPU: draw(st.integers(0, 2)), "ephemeral-storage": draw(st.integers(0, 900))}
        request = Amount.of({"cpu": draw(st.integers(0, 900)), "memory": draw(st.integers(0, 900)), **others})
        planned[f"t{i}"] = PlannedTask(f"t{i}", is_finally, after, draw(st.integers(1, 3)), request)
    return planned


@settings(max_examples=300, deadline=None)
@given(_pipelines(), st.data())
def test_the_peak_is_the_brute_force_over_every_subset(planned: dict[str, PlannedTask], data: st.DataObject) -> None:
    group = data.draw(st.sets(st.sampled_from(sorted(planned)), min_size=1))
    before = predecessors(planned)
    best = Amount()
    for size in range(1, len(group) + 1):
        for subset in itertools.combinations(sorted(group), size):
            if all(can_overlap(a, b, planned, before) for a, b in itertools.combinations(subset, 2)):
                total = Amount()
                for task in subset:
                    total = total + planned[task].total
                best = best.max(total)
    assert group_peak(group, planned) == best


@settings(max_examples=200, deadline=None)
@given(_pipelines())
def test_overlap_is_the_contract_s_relation(planned: dict[str, PlannedTask]) -> None:
    """Overlap is symmetric, a finally task overlaps exactly the other finally tasks, and a DAG edge never overlaps."""
    before = predecessors(planned)
    for a, b in itertools.product(planned, repeat=2):
        assert can_overlap(a, b, planned, before) == can_overlap(b, a, planned, before)
        if planned[a].is_finally != planned[b].is_finally:
            assert not can_overlap(a, b, planned, before)
        if b in planned[a].after:
            assert not can_overlap(a, b, planned, before)


def test_max_antichain_of_nothing_is_zero() -> None:
    assert max_antichain([], lambda _: 1, lambda _a, _b: True) == 0


def test_plan_needs_a_pipeline_spec() -> None:
    with pytest.raises(HarnessError, match="no pipelineSpec"):
        plan({"spec": {}})
