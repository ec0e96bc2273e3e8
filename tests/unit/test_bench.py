"""The benchmark's pure parts: metrics, workload shapes, report helpers. No cluster, no benchmark run."""

from __future__ import annotations

import math

import pytest

from bench import metrics
from bench.cold_build import parse_elapsed, parse_log
from bench.report import fmt, ms, pairs, ratio_text
from bench.workload import (
    PIPELINE_RUN_LABEL,
    PIPELINE_TASK_LABEL,
    PLAIN_HEAVY_MIX,
    TEKTON_MIX,
    contention_runs,
    direct_workload,
    first_tasks,
    task_names,
)
from harness.cluster.simulation import HOLD

pytestmark = pytest.mark.unit


def test_percentile_interpolates_like_numpy() -> None:
    assert metrics.percentile([1, 2, 3, 4], 50) == 2.5
    assert metrics.percentile([5], 99) == 5
    assert math.isnan(metrics.percentile([], 50))


def test_throughput_matches_the_docstring_example() -> None:
    binds = [0.1, 0.5, 1.2, 1.3, 1.9, 2.4]
    assert metrics.per_second_counts(binds) == [2, 3]
    result = metrics.throughput(binds)
    assert result.pods == 6
    assert result.average == pytest.approx(6 / 2.3)
    assert (result.p50, result.p90) == (2.5, pytest.approx(2.9))


def test_throughput_of_one_bind_has_no_rate() -> None:
    assert math.isnan(metrics.throughput([3.0]).average)
    assert metrics.throughput([]).pods == 0


def test_latency_skips_pods_missing_an_end() -> None:
    result = metrics.latency([(0.0, 0.1), (1.0, 1.3), (2.0, None), (None, 4.0)])
    assert result.count == 2
    assert result.p50 == pytest.approx(0.2)
    assert result.max == pytest.approx(0.3)


def test_cpu_seconds_used_interpolates_between_samples() -> None:
    assert metrics.cpu_seconds_used([(0.0, 0.0), (10.0, 5.0)], 2.0, 6.0) == pytest.approx(2.0)
    assert metrics.cpu_seconds_used([(0.0, 1.0), (10.0, 5.0)], -5.0, 20.0) == pytest.approx(4.0)


def test_wasted_reservation_matches_the_docstring_example() -> None:
    reserved = [(3.0, metrics.Interval(0.0, 10.0))]
    used = [(0.5, metrics.Interval(0.0, 4.0)), (3.0, metrics.Interval(5.0, 9.0))]
    assert metrics.wasted_reservation(reserved, used, run_end=20.0) == (30.0, pytest.approx(16.0))


def test_wasted_reservation_closes_open_intervals_at_the_end_of_the_run() -> None:
    total, wasted = metrics.wasted_reservation([(1.0, metrics.Interval(0.0, None))], [], run_end=5.0)
    assert (total, wasted) == (5.0, 5.0)


def test_ratio_and_cdf() -> None:
    assert metrics.ratio(30, 60) == 0.5
    assert math.isnan(metrics.ratio(1, 0))
    assert metrics.cdf([3, 1, 2]) == ([1, 2, 3], [1 / 3, 2 / 3, 1.0])


@pytest.mark.parametrize(
    ("shape", "tasks", "first"),
    [("single", ["t0"], ["t0"]), ("chain", ["a", "b", "c"], ["a"]), ("fanout", ["p0", "p1", "p2", "join"], ["p0", "p1", "p2"])],
)
def test_shapes_and_the_pods_tekton_starts_with(shape: str, tasks: list[str], first: list[str]) -> None:
    assert task_names(shape) == tasks
    assert first_tasks(shape) == first


def test_direct_workload_has_pending_runs_and_tekton_shaped_pods() -> None:
    workload = direct_workload(
        TEKTON_MIX, 10, prefix="x", pvcs=["ws-0", "ws-1"], scheduler_name="bench-reference", pool_selector={"p": "q"}, run_label="r"
    )
    assert len(workload.pods) == 10
    assert all(run["spec"]["status"] == "PipelineRunPending" for run in workload.pipeline_runs)
    run_names = {run["metadata"]["name"] for run in workload.pipeline_runs}
    for pod in workload.pods:
        labels = pod["metadata"]["labels"]
        assert labels[PIPELINE_RUN_LABEL] in run_names
        assert pod["spec"]["schedulerName"] == "bench-reference"
        assert pod["spec"]["nodeSelector"] == {"p": "q"}
        assert pod["metadata"]["annotations"][HOLD] == "true"
        assert pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] in ("ws-0", "ws-1")
    fanout_pods = [p for p in workload.pods if "-fanout-" in p["metadata"]["name"]]
    assert {p["metadata"]["labels"][PIPELINE_TASK_LABEL] for p in fanout_pods} == {"p0", "p1", "p2"}


def test_plain_heavy_mix_is_mostly_plain_pods() -> None:
    workload = direct_workload(
        PLAIN_HEAVY_MIX, 50, prefix="x", pvcs=["ws-0"], scheduler_name="s", pool_selector={}, run_label="r"
    )
    plain = [p for p in workload.pods if PIPELINE_RUN_LABEL not in p["metadata"]["labels"]]
    assert len(plain) == 40
    assert all("volumes" not in p["spec"] for p in plain)


def test_contention_runs_need_most_of_a_node_for_the_later_task() -> None:
    runs = contention_runs(2, prefix="ct", pvcs=["ws-0", "ws-1"], scheduler_name="s", pool_selector={}, run_label="r", node_cpu_millis=4000)
    tasks = runs[0]["spec"]["pipelineSpec"]["tasks"]
    assert [t["name"] for t in tasks] == ["a", "b"]
    cpu = [t["taskSpec"]["steps"][0]["computeResources"]["requests"]["cpu"] for t in tasks]
    assert cpu == ["500m", "2500m"]
    assert tasks[1]["runAfter"] == ["a"]
    assert runs[1]["spec"]["workspaces"][0]["persistentVolumeClaim"]["claimName"] == "ws-1"


def test_cold_build_log_is_read_back() -> None:
    log = (
        "2026-11-30T14:02:00Z [1/2] etcd v3.6.16: done in 1m05s -> /x\n"
        "2026-11-30T14:30:00Z [2/2] kube-apiserver v1.37.2: done in 27m50s -> /y\n"
        "2026-11-30T14:30:01Z toolchain: built 2 program(s) in 28m55s\n"
        "2026-11-30T14:30:01Z exit 0 after 1736s\n"
    )
    parsed = parse_log(log)
    assert parsed["programs"] == [("etcd", "v3.6.16", 65.0), ("kube-apiserver", "v1.37.2", 1670.0)]
    assert parsed["total_seconds"] == 1735.0
    assert parsed["finished"] is True
    assert parse_elapsed("48s") == 48.0


def test_report_pairs_reference_with_kube_scheduler_runs() -> None:
    entries = [
        {"nodes": 100, "mix": "tekton", "mode": "backlog", "qps": "default", "scheduler": "reference"},
        {"nodes": 100, "mix": "tekton", "mode": "backlog", "qps": "default", "scheduler": "kube-scheduler"},
        {"nodes": 100, "mix": "tekton", "mode": "stream", "qps": "default", "scheduler": "reference"},
    ]
    paired = pairs(entries)
    assert [key[2] for key, _, _ in paired] == ["backlog", "stream"]
    assert paired[0][1] is entries[0] and paired[0][2] is entries[1]
    assert paired[1][2] is None


def test_report_formatting() -> None:
    assert fmt(None) == "–"
    assert fmt(12.345) == "12.3"
    assert ms(0.0123) == "12"
    assert ratio_text(1.3, target=1.0) == "1.30× ✅"
    assert ratio_text(1.5, target=1.2, higher_is_better=False) == "1.50× ❌"
