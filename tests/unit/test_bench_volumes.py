"""The volumes mix's pure parts (issue #35): its workload, the claim watch's stamps, the figures, summary.json and the report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.observe import SELECTED_NODE, ClaimTrace, PodTrace
from bench.provisioning import summarise_provisioning
from bench.report import volumes_table
from bench.scales import SCALES
from bench.summary import summary, write_summary
from bench.workload import PIPELINE_RUN_LABEL, RUN_LABEL, TEKTON_MIX, VOLUMES_MIX, direct_workload, template_claim_name

pytestmark = pytest.mark.unit


def workload(mix: Any = VOLUMES_MIX, pods: int = 10) -> Any:
    return direct_workload(mix, pods, prefix="rv", pvcs=["ws-0", "ws-1"], scheduler_name="bench-reference", pool_selector={"pool": "p"}, run_label="lbl")


# --- the workload ----------------------------------------------------------------------


def test_each_run_of_the_volumes_mix_has_a_template_of_the_default_class_and_its_own_claim() -> None:
    got = workload()
    assert len(got.pods) == 10 and len(got.pipeline_runs) == 6 and len(got.claims) == 6
    for run in got.pipeline_runs:
        (binding,) = run["spec"]["workspaces"]
        assert binding["name"] == "source" and "persistentVolumeClaim" not in binding
        claim_spec = binding["volumeClaimTemplate"]["spec"]
        assert "storageClassName" not in claim_spec  # the cluster's default class
        assert claim_spec["resources"]["requests"]["storage"] == "1Gi"
    claim_of_run = got.claim_of_run()
    assert set(claim_of_run) == {r["metadata"]["name"] for r in got.pipeline_runs}
    for claim in got.claims:
        assert "storageClassName" not in claim["spec"]
        assert claim["metadata"]["labels"][RUN_LABEL] == "lbl"
    for pod in got.pods:
        run = pod["metadata"]["labels"][PIPELINE_RUN_LABEL]
        (volume,) = pod["spec"]["volumes"]
        assert volume["persistentVolumeClaim"]["claimName"] == claim_of_run[run]
    # A fan-out's three first pods share their run's claim.
    fanout = [p for p in got.pods if "-fanout-0-" in p["metadata"]["name"]]
    assert len(fanout) == 3 and len({p["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] for p in fanout}) == 1


def test_only_runs_whose_pods_are_kept_get_a_claim() -> None:
    # 6 pods: the first unit's 5 and the second unit's single; the second chain and fan-out have no pod.
    got = workload(pods=6)
    assert len(got.pods) == 6 and len(got.claims) == 4


def test_the_tekton_mix_keeps_its_shared_bound_claims() -> None:
    got = workload(TEKTON_MIX)
    assert got.claims == () and got.claim_of_run() == {}
    assert got.pipeline_runs[0]["spec"]["workspaces"] == [{"name": "source", "persistentVolumeClaim": {"claimName": "ws-0"}}]


def test_template_claim_names_look_like_tektons() -> None:
    name = template_claim_name("rv-single-0-0")
    assert re.fullmatch(r"pvc-[0-9a-f]{10}", name)
    assert name == template_claim_name("rv-single-0-0") != template_claim_name("rv-single-1-0")


# --- the claim watch ---------------------------------------------------------------------


def claim(node: str | None = None, phase: str = "Pending", volume: str | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "pvc-a", "annotations": {SELECTED_NODE: node} if node else {}},
        "spec": {"volumeName": volume} if volume else {},
        "status": {"phase": phase},
    }


def test_a_claim_trace_stamps_the_first_annotation_and_the_first_bound() -> None:
    trace = ClaimTrace("pvc-a")
    trace.observe(claim(), 10.0)
    trace.observe(claim("n-1"), 10.5)
    trace.observe(claim("n-1"), 11.0)  # the provisioner's own annotations: no new selection
    trace.observe(claim("n-1", "Bound", "pvc-123"), 12.5)
    trace.observe(claim("n-1", "Bound", "pvc-123"), 13.0)
    assert (trace.added, trace.selected, trace.bound) == (10.0, 10.5, 12.5)
    assert (trace.node, trace.volume, trace.unselected) == ("n-1", "pvc-123", 0)


def test_a_lost_annotation_is_counted_and_the_node_chosen_again_is_kept() -> None:
    # The provisioner's "reschedule": the annotation is taken off; a scheduler then chooses n-2.
    trace = ClaimTrace("pvc-a")
    trace.observe(claim("n-1"), 1.0)
    trace.observe(claim(), 2.0)
    trace.observe(claim("n-2"), 3.0)
    trace.observe(claim("n-2", "Bound"), 5.0)
    assert (trace.selected, trace.bound, trace.node, trace.unselected) == (1.0, 5.0, "n-2", 1)
    # Moved straight to another node: one loss too; after Bound nothing counts.
    moved = ClaimTrace("pvc-b")
    for node, phase, now in (("n-1", "Pending", 1.0), ("n-3", "Pending", 2.0), ("n-3", "Bound", 4.0), (None, "Bound", 5.0)):
        moved.observe(claim(node, phase), now)
    assert (moved.selected, moved.bound, moved.node, moved.unselected) == (1.0, 4.0, "n-3", 1)


# --- the figures -------------------------------------------------------------------------


def pod(name: str, run: str, added: float, bound: float | None, node: str = "n-1") -> PodTrace:
    return PodTrace(name, kind="task", run=run, added=added, bound=bound, node=node if bound is not None else None)


def test_added_is_the_first_pods_latency_less_its_claims_provisioning() -> None:
    # Run a: pod seen 10.00, claim selected 10.03, Bound 12.03, pod bound 12.05: 2.05 s, 2.00 provisioning, 0.05 added.
    # Run b: pod seen 20.00, selected 20.01, Bound 21.51, bound 21.60: 1.60 s, 1.50, 0.10 added; its second pod 0.20 later.
    claims = [
        ClaimTrace("pvc-a", added=1.0, selected=10.03, node="n-1", bound=12.03, phase="Bound"),
        ClaimTrace("pvc-b", added=1.0, selected=20.01, node="n-2", bound=21.51, phase="Bound"),
    ]
    pods = [
        pod("a-t0", "a", 10.0, 12.05),
        pod("b-p0", "b", 20.0, 21.60, "n-2"), pod("b-p1", "b", 20.2, 21.62, "n-2"),
        PodTrace("probe", kind="probe", added=1.0, bound=1.1, node="n-9"),
    ]
    got = summarise_provisioning(pods, claims, {"a": "pvc-a", "b": "pvc-b"})
    assert (got["claims"], got["claims_selected"], got["claims_bound"], got["nodes_selected"]) == (2, 2, 2, 2)
    assert got["selected_to_bound"]["count"] == 2 and got["selected_to_bound"]["max"] == pytest.approx(2.0)
    assert sorted([got["first_pod_latency"]["p50"]]) == [pytest.approx((2.05 + 1.60) / 2)]
    assert got["added"]["max"] == pytest.approx(0.10) and got["added"]["p50"] == pytest.approx(0.075)
    assert got["pod_to_selected"]["max"] == pytest.approx(0.03)
    assert got["claim_bound_to_pod_bound"]["max"] == pytest.approx(0.09)
    assert got["later_pod_latency"]["count"] == 1 and got["later_pod_latency"]["p50"] == pytest.approx(1.42)
    assert got["pods_off_claim_node"] == 0 and got["unselected"] == 0
    assert [c["name"] for c in got["claims_detail"]] == ["pvc-a", "pvc-b"]


def test_unprovisioned_claims_and_pods_elsewhere_are_counted_not_averaged() -> None:
    # Run a's claim never got Bound (its pod neither); run b's pod went to another node than its claim's.
    claims = [ClaimTrace("pvc-a", added=1.0, selected=2.0, node="n-1"), ClaimTrace("pvc-b", added=1.0, selected=3.0, node="n-2", bound=4.0)]
    got = summarise_provisioning([pod("a-t0", "a", 1.5, None), pod("b-t0", "b", 2.5, 4.2, "n-7")], claims, {"a": "pvc-a", "b": "pvc-b", "c": "pvc-c"})
    assert (got["claims"], got["claims_selected"], got["claims_bound"]) == (3, 2, 1)
    assert got["first_pod_latency"]["count"] == 1 and got["added"]["count"] == 1
    assert got["pods_off_claim_node"] == 1


# --- summary.json and the report ----------------------------------------------------------


def volumes_entry(scheduler: str, *, added_p50: float, first_p50: float = 2.05, **extra: Any) -> dict[str, Any]:
    return {
        "nodes": 100, "mode": "volumes", "mix": "volumes", "scheduler": scheduler, "qps": "default", "qps_value": 50, "burst": 100,
        "pods": 50, "bound": 50, "commit": "abc1234", "latency": {"p50": 1.9, "p99": 2.4},
        "api": {"writes_per_pod": 3.4},
        "volumes": {
            "claims": 30, "claims_bound": 30, "claims_selected": 30, "unselected": 0, "pods_off_claim_node": 0,
            "selected_to_bound": {"count": 30, "p50": 2.01, "p90": 2.1, "p99": 2.3, "max": 2.31},
            "first_pod_latency": {"count": 30, "p50": first_p50, "p90": 2.2, "p99": 2.4, "max": 2.5},
            "added": {"count": 30, "p50": added_p50, "p90": 0.08, "p99": 0.1, "max": 0.12},
            "later_pod_latency": {"count": 20, "p50": 1.8},
        },
        **extra,
    }


def test_summary_reports_the_volumes_mix_under_its_own_key() -> None:
    results = {"machine": {"commit": "abc1234"}, "throughput": [
        volumes_entry("reference", added_p50=0.042), volumes_entry("kube-scheduler", added_p50=0.021, first_p50=2.03),
        {"nodes": 100, "mode": "backlog", "scheduler": "reference", "qps": "default", "throughput": {"average": 26.0}},
    ]}
    got = summary(results)
    line = got["volumes"]["100"]
    assert line["reference"]["claims_bound"] == "30/30"
    assert line["reference"]["selected_to_bound_p50_ms"] == 2010.0
    assert line["reference"]["added_p50_ms"] == 42.0 and line["kube-scheduler"]["added_p50_ms"] == 21.0
    assert line["added_p50_ratio"] == 2.0
    assert line["first_pod_p50_ratio"] == pytest.approx(2050 / 2030, abs=0.001)
    assert "command_added_p50_ratio" not in line
    # The volumes runs are not the 100-node line's backlog or stream.
    assert got["100"]["reference"]["pods_per_s"] == 26.0 and got["100"]["p99_ratio"] is None


def test_no_volumes_key_when_the_mix_did_not_run(tmp_path: Path) -> None:
    results = {"throughput": [{"nodes": 100, "mode": "backlog", "scheduler": "reference", "qps": "default", "throughput": {"average": 26.0}}]}
    assert "volumes" not in summary(results)
    failed = {"throughput": [{"nodes": 100, "mode": "volumes", "scheduler": "reference", "qps": "default", "error": "no provisioner"}]}
    assert json.loads(write_summary(failed, tmp_path / "s.json").read_text())["volumes"] == {"100": {"added_p50_ratio": None, "first_pod_p50_ratio": None}}


def test_volumes_table_has_a_row_per_scheduler_with_the_added_ratio() -> None:
    table = volumes_table([
        volumes_entry("reference", added_p50=0.042), volumes_entry("kube-scheduler", added_p50=0.021),
        volumes_entry("reference", added_p50=0.1, mode="stream"),
    ])
    header, _, kube, reference = table.splitlines()
    assert kube.split(" | ")[2] == "kube-scheduler" and reference.split(" | ")[2] == "reference"
    assert "2010 / 2300 / 2310" in reference and "42 / 100" in reference and "2.00×" in reference
    assert header.count("|") == reference.count("|")
    assert volumes_table([]) == ""
    failed = volumes_table([{"nodes": 100, "mode": "volumes", "scheduler": "reference", "qps": "default", "error": "x"}]).splitlines()[-1]
    assert failed.count("|") == header.count("|")


# --- scales -------------------------------------------------------------------------------


def test_the_volumes_mix_runs_at_100_nodes_only_in_the_full_scale_and_in_the_smoke() -> None:
    full = {case.nodes: case.volume_pods for case in SCALES["full"].cases}
    assert full[100] > 0 and full[1000] == full[5000] == 0
    assert all(case.volume_pods > 0 for case in SCALES["smoke"].cases)
    assert all(case.volume_pods == 0 for name in ("small", "medium", "large") for case in SCALES[name].cases)


# --- the run's order of steps (bench.run.run_volumes, with no cluster) ----------------------


class FakeScheduler:
    name = "bench-reference"

    def __init__(self, steps: list[str]) -> None:
        self.steps = steps

    def start(self) -> int:
        self.steps.append("scheduler started")
        return 1

    def stop(self) -> None:
        self.steps.append("scheduler stopped")

    def alive(self) -> bool:
        return True

    def log_tail(self, lines: int = 5) -> str:
        return ""


class FakeTimeline:
    """A pod or claim watch that sees every pod bound at once (the workload's pods and the probe)."""

    def __init__(self, steps: list[str], what: str, pods: int) -> None:
        self.steps, self.what, self.pods = steps, what, pods

    def start(self) -> None:
        self.steps.append(f"{self.what} watch started")

    def stop(self) -> None:
        self.steps.append(f"{self.what} watch stopped")

    def bound_count(self) -> int:
        return self.pods + 1

    def snapshot(self) -> list[Any]:
        return []


def run_volumes_with_fakes(monkeypatch: pytest.MonkeyPatch, *, fail_at: str | None = None) -> tuple[list[str], dict[str, Any] | None]:
    from types import SimpleNamespace

    from bench import run
    from bench.scales import ThroughputCase
    from bench.schedulers import DEFAULT_QPS

    steps: list[str] = []

    def step(name: str, value: Any = None) -> Any:
        steps.append(name)
        if name == fail_at:
            raise RuntimeError(f"{name} failed")
        return value

    case = ThroughputCase(100, volume_pods=10)
    monkeypatch.setattr(run, "PodTimeline", lambda kube, ns, label_selector: FakeTimeline(steps, "pod", case.volume_pods))
    monkeypatch.setattr(run, "ClaimTimeline", lambda kube, ns, label_selector: FakeTimeline(steps, "claim", 0))
    monkeypatch.setattr(run, "ProcSampler", lambda pid: SimpleNamespace(start=lambda: None, stop=lambda: None, samples=[]))
    monkeypatch.setattr(run, "create_resolved_runs", lambda ctx, ns, label, runs: step(f"{len(runs)} runs created", 0.0))
    monkeypatch.setattr(run.bc, "create_claims", lambda kube, ns, claims: step(f"{len(list(claims))} claims created"))
    monkeypatch.setattr(run, "probe_ready", lambda *a: step("probe bound", 0.1))
    monkeypatch.setattr(run, "paced_create", lambda kube, ns, pods, rate: step(f"{len(pods)} pods created at {rate:g}/s"))
    monkeypatch.setattr(run.bc, "remove_provisioned_claims", lambda kube, ns, selector: step("claims removed"))
    monkeypatch.setattr(run.bc, "verify_plans", lambda kube, ns, label: [])
    monkeypatch.setattr(run.time, "sleep", lambda seconds: None)
    ctx = SimpleNamespace(kube=None, scale=SimpleNamespace(run_timeout=1.0), requests=lambda: {}, scheduler=lambda kind, qps: FakeScheduler(steps))
    pool = SimpleNamespace(selector={"pool": "p"})
    try:
        return steps, run.run_volumes(ctx, case, pool, "ns", ["ws-0"], "reference", DEFAULT_QPS)  # type: ignore[arg-type]
    except RuntimeError:
        return steps, None


def test_a_volumes_run_makes_its_claims_before_the_scheduler_starts_and_removes_them_after_it_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    steps, result = run_volumes_with_fakes(monkeypatch)
    assert steps == [
        "pod watch started", "claim watch started", "6 runs created", "6 claims created", "scheduler started", "probe bound",
        "10 pods created at 5/s", "scheduler stopped", "pod watch stopped", "claim watch stopped", "claims removed",
    ]
    assert result is not None and result["volumes"]["claims"] == 6 and result["rate"] == 5.0


def test_a_failed_volumes_run_still_removes_its_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    steps, result = run_volumes_with_fakes(monkeypatch, fail_at="probe bound")
    assert result is None
    assert steps[-4:] == ["scheduler stopped", "pod watch stopped", "claim watch stopped", "claims removed"]
