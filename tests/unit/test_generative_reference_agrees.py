"""The reference scheduler's plan for drawn runs equals the suite's own expectations, offline.

The generative scenario judges a scheduler on the cluster against
harness.monitor.expected_groups and harness.generative.peaks. This test
gives the same drawn runs (harness.generative.grammar, many seeds) to the
reference's planner core, with no cluster: a disagreement is a bug in one of
the two readings of docs/contract.md sections 4 and 6, found in seconds, with
the seed that shows it. It lives in tests/, which may import the reference;
harness/ never does.
"""

from __future__ import annotations

import pytest

from harness.generative.grammar import MAX_BATCH, DrawContext, DrawnRun, draw_batches
from harness.generative.peaks import expected_peaks
from harness.monitor.expected_groups import expected_groups
from harness.quantities import Amount
from reference_scheduler.core import partition, pipeline_graph, resources, tekton_pods
from reference_scheduler.runtime import planner
from tests.mutants.faults import MUTANTS

pytestmark = pytest.mark.unit

CONTEXT = DrawContext("tkn-scheduler", {"rescon.dev/pool": "p"}, 4800, 8 << 30, "rescon-template-ns")
SLOTS = [(f"slot{i}-a", f"slot{i}-b") for i in range(MAX_BATCH)]


def _reference_plan(run: DrawnRun) -> dict[tuple[frozenset[str], frozenset[str]], Amount]:
    """The reference's groups and peaks, as its planner computes them from the run Tekton resolved.

    Each function is looked up through the planner's module, as the planner
    calls it, so a mutant's patch (tests/mutants/faults.py) applies here too.
    """
    spec = run.resolved["spec"]
    pipeline_spec = spec["pipelineSpec"]
    entries = [*pipeline_spec["tasks"], *(pipeline_spec.get("finally") or [])]
    task_specs = {e["name"]: run.tasks[e["taskRef"]["name"]]["spec"] for e in entries if "taskRef" in e}
    graph = planner.build_pipeline_graph(pipeline_spec, task_specs=task_specs, task_run_specs=spec.get("taskRunSpecs") or (), params=spec.get("params") or ())
    groups = planner.partition_into_groups(graph, co_locating=planner.co_locating_workspaces(spec))
    return {(frozenset(g.tasks), frozenset(g.workspaces)): Amount(g.peak.cpu, g.peak.memory) for g in groups}


def _suite_plan(run: DrawnRun) -> dict[tuple[frozenset[str], frozenset[str]], Amount]:
    groups = expected_groups(run.resolved) or ()
    peaks = expected_peaks(groups, run.resolved, run.tasks)
    return {(g.tasks, g.workspaces): peaks[g.tasks] for g in groups}


@pytest.mark.parametrize("seed", range(0, 200, 20))
def test_the_reference_plans_every_drawn_run_as_the_suite_expects(seed: int) -> None:
    for offset in range(10):
        for batch in draw_batches(seed + offset, 6, CONTEXT, pvc_slots=SLOTS, claim_templates=24):
            for run in batch:
                assert _reference_plan(run) == _suite_plan(run), f"seed {seed + offset}, {run.name}:\n  " + "\n  ".join(run.features)


def _draws(seeds: range) -> list[DrawnRun]:
    return [run for seed in seeds for batch in draw_batches(seed, 6, CONTEXT, pvc_slots=SLOTS, claim_templates=24) for run in batch]


#: The mutants whose fault is in what the record says (groups, peaks): the generative scenario's record check
#: must catch each on some draw. Mutants of placement, release or the state machine are the monitor's and
#: the hand-written scenarios' (they need a cluster).
PLAN_MUTANTS = (
    "max_peak", "inflated_memory_peak", "finally_outside_group", "finally_overlaps_dag", "ignores_result_dependencies",
    "ignores_sidecars", "ignores_step_template", "matrix_counted_once", "groups_every_workspace", "volume_claim_template_ignored",
    "decimal_memory_as_binary", "fractional_cores_truncated",
)


@pytest.mark.parametrize("name", PLAN_MUTANTS)
def test_a_plan_mutant_disagrees_with_the_suite_on_some_draw(name: str) -> None:
    """Offline evidence that the scenario can fail: with the mutant's patch, some drawn run of the first seeds is planned wrong."""
    modules = (planner, partition, pipeline_graph, tekton_pods, resources)
    saved = [dict(vars(m)) for m in modules]
    try:
        MUTANTS[name].apply()
        wrong = next((run for run in _draws(range(40)) if _reference_plan(run) != _suite_plan(run)), None)
    finally:
        for module, before in zip(modules, saved):
            vars(module).clear()
            vars(module).update(before)
    assert wrong is not None, f"mutant {name} plans all drawn runs of seeds 0-39 as the suite expects: the grammar does not reach its fault"


def test_the_mutants_above_leave_the_reference_as_it_was() -> None:
    """Run after them (the file's order): the restored modules plan as the suite expects again."""
    run = _draws(range(1))[0]
    assert _reference_plan(run) == _suite_plan(run)
    assert all(not (getattr(f, "__module__", None) or "").startswith("tests.mutants") for m in (planner, partition, pipeline_graph, tekton_pods, resources) for f in vars(m).values() if callable(f))
