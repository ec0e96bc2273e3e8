"""The intermittent mutant: wrong in the first, third, ... namespace it plans in, right in the others."""

from __future__ import annotations

import pytest

from reference_scheduler.core import partition
from reference_scheduler.runtime import cycle
from tests.mutants.faults import MUTANTS, largest_task_peak
from tests.mutants.intermittent import INTERMITTENT, NamespaceAlternation, max_peak_in_alternate_namespaces
from tests.mutants.run import main as run_main

pytestmark = pytest.mark.unit


def _run_in(namespace: str) -> dict:
    return {"metadata": {"namespace": namespace, "name": "build"}}


def test_alternation_is_by_first_sight_of_a_namespace() -> None:
    alternation = NamespaceAlternation()
    assert [alternation.faulty(ns) for ns in ("a", "a", "b", "a", "c", "b", "d")] == [True, True, False, True, True, False, False]


def test_the_fault_is_in_place_only_while_a_faulty_namespace_is_planned() -> None:
    true_peak = partition.group_peak
    seen = []
    planned = max_peak_in_alternate_namespaces(lambda run: seen.append(partition.group_peak) or run, NamespaceAlternation())
    for namespace in ("first", "second", "first", "third"):
        assert planned(_run_in(namespace)) == _run_in(namespace)
        assert partition.group_peak is true_peak
    assert seen == [largest_task_peak, true_peak, largest_task_peak, largest_task_peak]


def test_the_true_peak_comes_back_when_planning_raises() -> None:
    true_peak = partition.group_peak

    def failing(run: dict) -> None:
        raise ValueError("no plan")

    with pytest.raises(ValueError, match="no plan"):
        max_peak_in_alternate_namespaces(failing, NamespaceAlternation())(_run_in("first"))
    assert partition.group_peak is true_peak


def test_apply_wraps_the_cycles_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cycle, "plan_pipeline_run", cycle.plan_pipeline_run)
    original = cycle.plan_pipeline_run
    INTERMITTENT["max_peak_every_other_namespace"].apply()
    assert cycle.plan_pipeline_run is not original
    assert cycle.plan_pipeline_run.__wrapped__ is original


def test_intermittent_mutants_stay_out_of_the_kill_tables_catalogue() -> None:
    assert not set(INTERMITTENT) & set(MUTANTS)


def test_the_runner_names_every_runnable_mutant_on_a_wrong_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(["no_such_mutant"]) == 2
    assert "max_peak_every_other_namespace" in capsys.readouterr().err
