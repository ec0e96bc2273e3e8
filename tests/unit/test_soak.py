"""The soak table: failures and durations per scenario over runs."""

from __future__ import annotations

import pytest

from tests.soak import Wait, closest_waits, collect, render

pytestmark = pytest.mark.unit


def test_a_scenario_that_failed_once_in_three_runs_is_counted_and_quoted() -> None:
    runs = [
        {"colocation": ("passed", 3.0, ""), "retry_hold": ("passed", 2.0, "")},
        {"colocation": ("failed", 31.0, "timed out after 30s (pod_scheduled) waiting for x"), "retry_hold": ("passed", 2.2, "")},
        {"colocation": ("passed", 3.2, ""), "retry_hold": ("error", 0.1, "cluster down")},
    ]
    records = collect(runs)
    assert records["colocation"].failed == 1 and records["retry_hold"].failed == 1
    lines = render(records, runs=3, walls=[70.0, 100.0, 72.0], commit="abc123")
    assert "| `colocation` | 1 of 3 | 3.2 | 31.0 | — |" in lines
    assert "Failures of the reference: **2**." in lines[2]
    assert any("timed out after 30s (pod_scheduled)" in line for line in lines)


def test_no_failure_reads_zero() -> None:
    lines = render(collect([{"a": ("passed", 1.0, "")}]), runs=1, walls=[10.0], commit="c")
    assert "Failures of the reference: **0**." in lines[2] and "Failures:" not in lines


def test_the_wait_closest_to_its_timeout_is_shown_per_scenario() -> None:
    waits = [
        Wait("colocation", "colocation/fetch to be bound", "pod_scheduled", 1.5, 30.0),
        Wait("colocation", "colocation to succeed", "pipelinerun_done", 27.0, 60.0),
        Wait("colocation", "colocation/build to be bound", "pod_scheduled", 0.4, 30.0),
    ]
    closest = closest_waits(waits)
    assert closest["colocation"].timeout == "pipelinerun_done"
    lines = render(collect([{"colocation": ("passed", 3.0, "")}]), runs=1, walls=[10.0], commit="c", closest=closest, workers=2)
    assert "| `colocation` | 0 of 1 | 3.0 | 3.0 | `pipelinerun_done`: 27.0 s of 60 s (45%), colocation to succeed |" in lines
    assert "`pytest tests/conformance -n 2`" in lines[2]


def test_a_scenario_skipped_in_every_run_is_listed_apart_never_as_zero_failures() -> None:
    runs = [{"colocation": ("passed", 3.0, ""), "load": ("skipped", 0.0, "opt-in")}, {"colocation": ("passed", 3.4, ""), "load": ("skipped", 0.0, "opt-in")}]
    lines = render(collect(runs), runs=2, walls=[10.0, 11.0], commit="c")
    assert not any(line.startswith("| `load`") for line in lines)
    assert "Skipped in every run (not judged by this soak): `load`." in lines


def test_a_scenario_skipped_in_some_runs_counts_only_the_runs_that_ran_it() -> None:
    runs = [{"resize": ("skipped", 0.0, "")}, {"resize": ("passed", 2.0, "")}, {"resize": ("failed", 9.0, "boom")}]
    lines = render(collect(runs), runs=3, walls=[1.0, 1.0, 1.0], commit="c")
    assert "| `resize` | 1 of 2 | 5.5 | 9.0 | — |" in lines
