"""The benchmark's resolved plans: written again when a Tekton reconcile wrote its status over them."""

from __future__ import annotations

from typing import Any

import pytest

from bench import cluster
from bench.workload import PENDING_REASON

pytestmark = pytest.mark.unit

SPEC = {"tasks": [{"name": "build", "taskSpec": {"steps": [{"image": "busybox"}]}}]}


def run(name: str, *, pending: bool = True, plan: bool = True) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if pending:
        status["conditions"] = [{"type": "Succeeded", "status": "Unknown", "reason": PENDING_REASON}]
    if plan:
        status["pipelineSpec"] = SPEC
    return {"metadata": {"name": name}, "spec": {"pipelineSpec": SPEC}, "status": status}


def test_only_pending_runs_without_a_plan_are_written_again() -> None:
    runs = [run("kept"), run("lost", plan=False), run("not-yet-pending", pending=False, plan=False)]
    assert [r["metadata"]["name"] for r in cluster.plans_to_write_again(runs)] == ["lost"]


def listings(monkeypatch: pytest.MonkeyPatch, *answers: list[dict[str, Any]]) -> list[list[str]]:
    """listings() makes each list of the runs answer the next of answers (the last one again), and returns the writes made."""
    queue = list(answers)
    writes: list[list[str]] = []
    monkeypatch.setattr(cluster, "list_pipeline_runs", lambda kube, ns, selector="": queue.pop(0) if len(queue) > 1 else queue[0])
    monkeypatch.setattr(cluster, "_write_plans", lambda kube, ns, runs: writes.append([r["metadata"]["name"] for r in runs]))
    monkeypatch.setattr(cluster.time, "sleep", lambda seconds: None)
    return writes


def test_a_plan_a_reconcile_wrote_over_is_written_again(monkeypatch: pytest.MonkeyPatch) -> None:
    pending = [run("a", plan=False), run("b", plan=False)]
    writes = listings(monkeypatch, pending, [run("a"), run("b", plan=False)], [run("a"), run("b")])
    cluster.resolve_pipeline_runs(None, "ns", "r1", expected=2)  # type: ignore[arg-type]
    assert writes == [["a", "b"], ["b"]]


def test_plans_that_keep_being_lost_fail_with_the_run_named(monkeypatch: pytest.MonkeyPatch) -> None:
    listings(monkeypatch, [run("a", plan=False)])
    with pytest.raises(RuntimeError, match=r"1 PipelineRuns lost their status.pipelineSpec again .*\(e.g. a\)"):
        cluster.resolve_pipeline_runs(None, "ns", "r1", expected=1, timeout=0.0)  # type: ignore[arg-type]
