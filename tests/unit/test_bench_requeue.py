"""The requeue measurement's pure parts (bench/requeue.py), its lines of summary.json and its report table."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from bench.report import requeue_table
from bench.requeue import (
    NODE_CPU_MILLIS,
    POD_CPU_MILLIS,
    PROBE_CPU_MILLIS,
    fillers_that_fit,
    next_to_free,
    requeue_figures,
    run_done_patch,
    sample_seconds,
)
from bench.scales import SCALES
from bench.summary import requeue_summary, summary
from bench.workload import TaskSize, pipeline_run
from reference_scheduler.core.release import ReleaseReason, release_decision

pytestmark = pytest.mark.unit


# --- bench/requeue.py ---------------------------------------------------------------


def test_the_node_is_filled_to_less_than_one_waiting_pods_room() -> None:
    # 4000m node, 100m probe: three 1000m fillers, 900m left, so a 1000m pod waits; one filler gone, 1900m: it fits.
    fill = fillers_that_fit(NODE_CPU_MILLIS, POD_CPU_MILLIS, PROBE_CPU_MILLIS)
    assert fill == 3
    free = NODE_CPU_MILLIS - PROBE_CPU_MILLIS - fill * POD_CPU_MILLIS
    assert 0 <= free < POD_CPU_MILLIS <= free + POD_CPU_MILLIS
    assert fillers_that_fit(4000, 1000, 0) == 4
    assert fillers_that_fit(500, 1000, 100) == 0


def test_a_pod_asking_nothing_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="must ask some CPU"):
        fillers_that_fit(4000, 0, 100)


@pytest.mark.parametrize(
    ("bound", "finished", "expected"),
    [
        pytest.param([("a", 2.0), ("b", 1.0)], set(), "b", id="oldest-bind-first"),
        pytest.param([("a", 2.0), ("b", 1.0)], {"b"}, "a", id="a-finished-pod-is-not-freed-twice"),
        pytest.param([("a", 2.0)], {"a"}, None, id="nothing-left-running"),
        pytest.param([], set(), None, id="nothing-bound"),
    ],
)
def test_the_pod_freed_next_is_the_running_one_bound_longest_ago(bound: list[tuple[str, float]], finished: set[str], expected: str | None) -> None:
    assert next_to_free(bound, finished) == expected


def test_a_sample_is_freed_to_bound_and_missing_when_an_end_was_not_seen() -> None:
    assert sample_seconds(10.0, 10.25) == pytest.approx(0.25)
    assert sample_seconds(None, 10.25) is None
    assert sample_seconds(10.0, None) is None


def test_figures_count_a_missed_free_apart_from_the_percentiles() -> None:
    got = requeue_figures([0.1, 0.3, None])
    assert got == {"p50_ms": 200.0, "p99_ms": pytest.approx(298.0), "max_ms": 300.0, "samples": 2, "missed": 1}
    nothing = requeue_figures([None])
    assert (nothing["p50_ms"], nothing["p99_ms"], nothing["samples"], nothing["missed"]) == (None, None, 0, 1)


def test_the_run_done_patch_makes_the_reference_release_a_pending_runs_group() -> None:
    # The release path frees room only if the reference's own release rule reads the patched run as done.
    run = pipeline_run("r-0", "single", pvc="ws-0", scheduler_name="s", pool_selector={}, run_label="x", pending=True, sizes={"t0": TaskSize(cpu="1000m")})
    run["status"] = {"conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "PipelineRunPending"}]}
    assert not release_decision({"t0"}, run, {}).release
    patch = run_done_patch(datetime(2026, 12, 3, 12, 40, 5, tzinfo=timezone.utc))
    assert patch["status"]["completionTime"] == "2026-12-03T12:40:05Z"
    done = {**run, "status": patch["status"]}
    decision = release_decision({"t0"}, done, {})
    assert (decision.release, decision.reason) == (True, ReleaseReason.PIPELINE_RUN_DONE)


def test_make_bench_and_smoke_measure_requeue_smoke_with_fewer_frees() -> None:
    assert "requeue" in SCALES["full"].parts and "requeue" in SCALES["smoke"].parts
    assert 20 <= SCALES["full"].requeue_samples <= 30
    assert SCALES["smoke"].requeue_samples < SCALES["full"].requeue_samples


# --- summary.json and the report ------------------------------------------------------


def requeue_entry(scheduler: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"scheduler": scheduler, "path": path, "p50_ms": 120.0, "p99_ms": 400.0, "max_ms": 410.0, "samples": 25, "missed": 0,
            "commit": "abc1234", "measured_at": "2026-12-03 12:45 UTC", "samples_s": [0.12], **extra}


def test_requeue_is_keyed_by_the_way_room_was_freed_then_by_scheduler() -> None:
    got = requeue_summary([
        requeue_entry("reference", "pod-finished"),
        requeue_entry("kube-scheduler", "pod-finished", p50_ms=30.0),
        requeue_entry("reference", "release", p99_ms=900.0),
        {"scheduler": "command", "path": "pod-finished", "error": "scheduler died"},
    ])
    assert set(got) == {"requeue", "requeue_after_release"}
    assert set(got["requeue"]) == {"reference", "kube-scheduler"}
    assert got["requeue"]["kube-scheduler"]["p50_ms"] == 30.0
    assert got["requeue"]["reference"]["samples"] == 25
    assert "samples_s" not in got["requeue"]["reference"]
    assert set(got["requeue_after_release"]) == {"reference"}
    assert got["requeue_after_release"]["reference"]["p99_ms"] == 900.0


def test_summary_carries_requeue_beside_the_node_counts_and_leaves_it_out_when_not_measured() -> None:
    base = {"machine": {"commit": "abc1234"}, "measured_at": "2026-12-03 12:45 UTC", "throughput": []}
    assert "requeue" not in summary(base)
    got = summary({**base, "requeue": [requeue_entry("reference", "pod-finished")]})
    assert got["requeue"]["reference"]["p50_ms"] == 120.0


def test_the_report_table_names_how_room_was_freed_and_a_failure() -> None:
    table = requeue_table([requeue_entry("reference", "release"), {"scheduler": "kube-scheduler", "path": "pod-finished", "error": "boom"}])
    assert "the group's release" in table
    assert "120.0 ms | 400.0 ms" in table
    assert "failed: `boom`" in table
