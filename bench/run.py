"""The benchmark's runs against the shared local cluster: throughput, contention, suite cost.

Everything it creates carries its own names: pools `bench-…`, namespaces
`bench-…`, schedulerNames `bench-reference` and `bench-kube-scheduler`; each
part deletes what it made, in a `finally`. It never brings the cluster down.
The only shared state it touches is Tekton's `coschedule` feature flag, for
the contention baselines, and it restores `disabled` afterwards.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bench import api_writes
from bench import cluster as bc
from bench import metrics
from bench.observe import ClaimTimeline, PodTimeline, PodTrace, ProcSampler, RecordTimeline
from bench.provisioning import summarise_provisioning
from bench.requeue import requeue_part
from bench.scales import Scale, ThroughputCase
from bench.schedulers import BASELINE_TREE_ENV, COMMAND_ENV, CONFIG_TEMPLATE_ENV, DEFAULT_QPS, LABEL_ENV, UNTHROTTLED, BenchScheduler, Qps
from bench.workload import MIXES, RUN_LABEL, VOLUMES_MIX, TaskSize, contention_runs, direct_workload, task_pod, tekton_runs
from harness.cluster.cluster_lock import local_cluster_lock
from harness.cluster.local import LocalCluster
from harness.cluster.node_pools import NodePool
from harness.contract.install import install_crd
from harness.kube import Kube
from harness.timeouts import DEFAULT_TIMEOUTS

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "docs" / "benchmarks"
#: BENCH_RESULTS_DIR=reports/bench: a trial run whose results (and summary.json) must not land in docs/.
RESULTS_DIR_ENV = "BENCH_RESULTS_DIR"
WORK_DIR = REPO / "reports" / "bench"

#: A later task on its group's node is "stuck" if it was reported Unschedulable first, or waited
#: at least this long for its node (tasks run 3 s).
STUCK_SECONDS = 2.0

#: The parts a run can measure (BENCH_PARTS / --parts), in the order a scale lists them.
PARTS = ("throughput", "contention", "requeue", "suite")


def say(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)


def short_id() -> str:
    return uuid.uuid4().hex[:5]


def machine() -> dict[str, Any]:
    """machine() describes where the numbers were measured."""
    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return {
        "cores": os.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "commit": commit,
    }


@dataclass
class Context:
    kube: Kube
    #: The schedulers' kubeconfig: the benchmark's scheduler identity (bench/api_writes.py), never the admin's.
    kubeconfig: Path
    scale: Scale
    results: dict[str, Any]
    out: Path
    #: BENCH_SCHEDULER_CMD and its config template: a user's scheduler beside the two others (kind "command").
    command: str | None = None
    config_template: Path | None = None
    started: float = field(default_factory=time.monotonic)

    def scheduler(self, kind: str, qps: Qps, *, profile: Path | None = None) -> BenchScheduler:
        """scheduler('reference', qps) is a fresh BenchScheduler of that kind with the benchmark's identity."""
        return BenchScheduler(kind, qps, self.kubeconfig, WORK_DIR, profile=profile, command_template=self.command, config_template=self.config_template)

    def requests(self) -> dict[str, float]:
        return bc.scrape_requests(self.kube)

    def save(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(json.dumps(self.results, indent=1, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"cannot serialise {type(value)}")


def _clean(value: Any) -> Any:
    """NaN -> None, recursively, so the JSON is valid."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


# --- waiting ---------------------------------------------------------------------


def wait_until(done: Callable[[], bool], *, timeout: float, alive: Callable[[], bool] = lambda: True, every: float = 0.2) -> bool:
    """wait_until(done, timeout=60) polls done() until True (True), the timeout or alive() False (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return True
        if not alive():
            return False
        time.sleep(every)
    return done()


def probe_ready(ctx: Context, scheduler: BenchScheduler, namespace: str, pool: NodePool, run_label: str) -> float:
    """probe_ready() creates one plain pod and returns once the scheduler has bound it (its caches are synced)."""
    started = time.monotonic()
    pod = task_pod("", f"probe-{short_id()}", pvc=None, scheduler_name=scheduler.name, pool_selector=pool.selector, run_label=run_label)
    pod["metadata"]["labels"]["bench.rescon.dev/kind"] = "probe"
    ctx.kube.core.create_namespaced_pod(namespace, pod, _preload_content=False)
    name = pod["metadata"]["name"]

    def bound() -> bool:
        got = json.loads(ctx.kube.core.read_namespaced_pod(name, namespace, _preload_content=False).data)
        return bool((got.get("spec") or {}).get("nodeName"))

    if not wait_until(bound, timeout=180, alive=scheduler.alive, every=0.3):
        raise RuntimeError(f"{scheduler.kind} did not bind a probe pod within 180 s: {scheduler.log_tail()}")
    return time.monotonic() - started


# --- throughput -------------------------------------------------------------------


def summarise_throughput(
    traces: list[PodTrace], *, expected: int, sampler: ProcSampler | None, window_start: float | None = None
) -> dict[str, Any]:
    measured = [t for t in traces if t.kind != "probe"]
    binds = [t.bound for t in measured if t.bound is not None]
    first_added = min((t.added for t in measured if t.added is not None), default=None)
    tp = metrics.throughput(binds, start=window_start)
    lat = metrics.latency((t.added, t.bound) for t in measured)
    api_lat = metrics.latency((t.api_created, t.api_scheduled) for t in measured)
    out: dict[str, Any] = {
        "pods": expected,
        "bound": len(binds),
        "throughput": tp.as_dict(),
        "latency": lat.as_dict(),
        "api_latency": api_lat.as_dict(),
        "latencies": [round(t.bound - t.added, 4) for t in measured if t.bound is not None and t.added is not None],
        "from_first_creation_pods_per_s": (len(binds) / (max(binds) - first_added)) if binds and first_added and max(binds) > first_added else None,
    }
    if sampler is not None and sampler.samples:
        out["cpu_seconds_total"] = sampler.samples[-1][1]
        if binds:
            out["cpu_seconds_window"] = metrics.cpu_seconds_used(sampler.samples, window_start or min(binds), max(binds))
        out["peak_rss_mb"] = round(sampler.peak_rss / 1024 / 1024, 1)
    return out


def _shown_path(path: Path) -> str:
    """_shown_path(path) is path relative to the checkout when inside it (as the results show it), else absolute."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def run_backlog(ctx: Context, case: ThroughputCase, pool: NodePool, namespace: str, pvcs: list[str], kind: str, qps: Qps) -> dict[str, Any]:
    """Direct-mode pods created first, then the scheduler starts: pods/s from its first bind to its last."""
    run_label = f"{kind}-{qps.name}-backlog-{short_id()}"
    # "<kind>-profiled" is the same scheduler under cProfile: slower, so reported apart.
    base_kind = kind.removesuffix("-profiled")
    suffix = "-baseline" if base_kind == "reference-baseline" else ""
    where = results_dir(ctx.scale)
    profile = where / f"profile-{ctx.scale.name}-{case.nodes}-{qps.name}{suffix}.prof" if kind.endswith("-profiled") else None
    scheduler = ctx.scheduler(base_kind, qps, profile=profile)
    workload = direct_workload(
        MIXES[case.mix], case.backlog_pods, prefix=f"{kind[:3]}{qps.name[:1]}b", pvcs=pvcs,
        scheduler_name=scheduler.name, pool_selector=pool.selector, run_label=run_label,
    )
    timeline = PodTimeline(ctx.kube, namespace, label_selector=f"{RUN_LABEL}={run_label}")
    timeline.start()
    sampler = None
    stages: dict[str, float] = {}
    try:
        resolve_seconds = create_resolved_runs(ctx, namespace, run_label, workload.pipeline_runs)
        started = time.monotonic()
        bc.create_pods(ctx.kube, namespace, workload.pods)
        stages.update(runs_created_and_resolved=resolve_seconds, pods_created=time.monotonic() - started)
        say(f"  created and resolved {len(workload.pipeline_runs)} pending PipelineRuns in {resolve_seconds:.1f}s, {len(workload.pods)} pods in {stages['pods_created']:.1f}s")
        time.sleep(2.0)  # let the watch see every pod before the clock starts
        before = ctx.requests()
        pid = scheduler.start()
        start_wall = time.time()
        sampler = ProcSampler(pid)
        sampler.start()
        complete = wait_until(lambda: timeline.bound_count() >= len(workload.pods), timeout=ctx.scale.run_timeout, alive=scheduler.alive)
        stages["scheduling"] = time.time() - start_wall
        time.sleep(0.5)
    finally:
        if sampler is not None:
            sampler.stop()
        scheduler.stop()
        timeline.stop()
    traces = timeline.snapshot()
    result = summarise_throughput(traces, expected=len(workload.pods), sampler=sampler)
    binds = [t.bound for t in traces if t.bound is not None]
    result.update(complete=complete, startup_to_first_bind=(min(binds) - start_wall) if binds else None, profile=_shown_path(profile) if profile else None)
    result.update(api=api_writes.requests_between(before, ctx.requests(), pods=len(binds)).as_dict(), stage_seconds=stages,
                  plans_lost=len(bc.verify_plans(ctx.kube, namespace, run_label)), log_tail=scheduler.log_tail(5) if not complete else None)
    result["latencies"] = []  # creation-to-bound is meaningless here: pods wait for the scheduler to start
    return result


def run_stream(ctx: Context, case: ThroughputCase, pool: NodePool, namespace: str, pvcs: list[str], kind: str, qps: Qps) -> dict[str, Any]:
    """The scheduler runs; direct-mode pods are created at a fixed rate: creation-to-bound latency."""
    run_label = f"{kind}-{qps.name}-stream-{short_id()}"
    scheduler = ctx.scheduler(kind, qps)
    workload = direct_workload(
        MIXES[case.mix], case.stream_pods, prefix=f"{kind[:3]}{qps.name[:1]}s", pvcs=pvcs,
        scheduler_name=scheduler.name, pool_selector=pool.selector, run_label=run_label,
    )
    timeline = PodTimeline(ctx.kube, namespace, label_selector=f"{RUN_LABEL}={run_label}")
    timeline.start()
    window = PacedWindow(namespace)
    stages: dict[str, float] = {}
    try:
        stages["runs_created_and_resolved"] = create_resolved_runs(ctx, namespace, run_label, workload.pipeline_runs)
        window.stream(ctx, scheduler, pool, run_label, list(workload.pods), rate=case.stream_rate, timeline=timeline, stages=stages)
    finally:
        window.stop(scheduler)
        timeline.stop()
    traces = timeline.snapshot()
    result = summarise_throughput(traces, expected=len(workload.pods), sampler=window.sampler, window_start=window.started)
    # The probe pod is the scheduler's too: its writes are in the count, so it is in the divisor.
    bound = sum(1 for t in traces if t.bound is not None)
    result.update(complete=window.complete, rate=case.stream_rate, probe_seconds=window.probe_seconds, stage_seconds=stages,
                  api=api_writes.requests_between(window.before, ctx.requests(), pods=bound).as_dict(),
                  plans_lost=len(bc.verify_plans(ctx.kube, namespace, run_label)), log_tail=scheduler.log_tail(5) if not window.complete else None)
    return result


def run_volumes(ctx: Context, case: ThroughputCase, pool: NodePool, namespace: str, pvcs: list[str], kind: str, qps: Qps) -> dict[str, Any]:
    """The stream of the volumes mix: each run's claim is provisioned on the node chosen for its first pod (bench/provisioning.py).

    As run_stream(), with the `volumes` mix's pending runs and their claims (the
    default class, WaitForFirstConsumer, the local cluster's real provisioner)
    made before the scheduler starts, and a watch of the claims beside the pods'.
    Afterwards the run's pods and claims are deleted and their volumes waited
    for, so that the next run's claims and the pool's removal find none.
    """
    run_label = f"{kind}-{qps.name}-volumes-{short_id()}"
    selector = f"{RUN_LABEL}={run_label}"
    scheduler = ctx.scheduler(kind, qps)
    workload = direct_workload(
        VOLUMES_MIX, case.volume_pods, prefix=f"{kind[:3]}{qps.name[:1]}v", pvcs=pvcs,
        scheduler_name=scheduler.name, pool_selector=pool.selector, run_label=run_label,
    )
    timeline = PodTimeline(ctx.kube, namespace, label_selector=selector)
    claims = ClaimTimeline(ctx.kube, namespace, label_selector=selector)
    window = PacedWindow(namespace)
    stages: dict[str, float] = {}
    try:
        timeline.start()
        claims.start()
        stages["runs_created_and_resolved"] = create_resolved_runs(ctx, namespace, run_label, workload.pipeline_runs)
        bc.create_claims(ctx.kube, namespace, workload.claims)
        window.stream(ctx, scheduler, pool, run_label, list(workload.pods), rate=case.volume_rate, timeline=timeline, stages=stages)
    finally:
        window.stop(scheduler)
        timeline.stop()
        claims.stop()
        cleanup_started = time.monotonic()
        try:
            bc.remove_provisioned_claims(ctx.kube, namespace, selector)
        except Exception as err:  # noqa: BLE001 - reported with the run; remove_pool's own wait still comes
            say(f"  cleanup: {err}")
        stages["claims_removed"] = time.monotonic() - cleanup_started
    traces = timeline.snapshot()
    result = summarise_throughput(traces, expected=len(workload.pods), sampler=window.sampler, window_start=window.started)
    bound = sum(1 for t in traces if t.bound is not None)
    result.update(complete=window.complete, rate=case.volume_rate, probe_seconds=window.probe_seconds, stage_seconds=stages,
                  api=api_writes.requests_between(window.before, ctx.requests(), pods=bound).as_dict(),
                  volumes=summarise_provisioning(traces, claims.snapshot(), workload.claim_of_run()),
                  plans_lost=len(bc.verify_plans(ctx.kube, namespace, run_label)), log_tail=scheduler.log_tail(5) if not window.complete else None)
    return result


@dataclass
class PacedWindow:
    """PacedWindow is a stream's measured window: the scheduler started and probed, pods created at a rate, all bound or timed out.

    Filled as it goes, so the caller's `finally` stops what was started (stop()) whatever failed.
    """

    namespace: str
    sampler: ProcSampler | None = None
    before: Any = None
    probe_seconds: float = 0.0
    started: float = 0.0
    complete: bool = False

    def stream(
        self, ctx: Context, scheduler: Any, pool: NodePool, run_label: str, pods: list[dict[str, Any]], *,
        rate: float, timeline: PodTimeline, stages: dict[str, float],
    ) -> None:
        """stream() starts the scheduler, waits for its probe pod, creates `pods` at `rate` and waits until every one is bound."""
        self.before = ctx.requests()
        self.sampler = ProcSampler(scheduler.start())
        self.sampler.start()
        self.probe_seconds = probe_ready(ctx, scheduler, self.namespace, pool, run_label)
        self.started = time.time()
        paced_create(ctx.kube, self.namespace, pods, rate=rate)
        # + 1: the probe pod is bound too.
        self.complete = wait_until(lambda: timeline.bound_count() >= len(pods) + 1, timeout=ctx.scale.run_timeout, alive=scheduler.alive)
        stages["streaming"] = time.time() - self.started
        time.sleep(0.5)  # the last binds' events reach the timeline's watch

    def stop(self, scheduler: Any) -> None:
        """stop() stops the sampler, if it started, and the scheduler."""
        if self.sampler is not None:
            self.sampler.stop()
        scheduler.stop()


def create_resolved_runs(ctx: Context, namespace: str, run_label: str, runs: tuple[dict[str, Any], ...]) -> float:
    """create_resolved_runs() creates the pending PipelineRuns and writes their resolved plans as Tekton would; returns the seconds taken."""
    started = time.monotonic()
    bc.create_pipeline_runs(ctx.kube, namespace, runs)
    if runs:
        bc.resolve_pipeline_runs(ctx.kube, namespace, run_label, len(runs))
    return time.monotonic() - started


def paced_create(kube: Kube, namespace: str, pods: list[dict[str, Any]], *, rate: float) -> None:
    """paced_create() creates pod i at start + i/rate (on a small thread pool, so a slow call does not delay the next)."""
    from concurrent.futures import ThreadPoolExecutor

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = []
        for i, pod in enumerate(pods):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            futures.append(pool.submit(kube.core.create_namespaced_pod, namespace, pod, _preload_content=False))
        for future in futures:
            future.result()


def run_tekton(ctx: Context, case: ThroughputCase, pool: NodePool, namespace: str, pvcs: list[str], kind: str, qps: Qps) -> dict[str, Any]:
    """PipelineRuns that Tekton runs (tasks of 2 s): end-to-end pods/s and creation-to-bound latency."""
    run_label = f"{kind}-{qps.name}-tekton-{short_id()}"
    scheduler = ctx.scheduler(kind, qps)
    runs = tekton_runs(
        MIXES["tekton"], case.tekton_runs, prefix=f"{kind[:3]}{qps.name[:1]}t", pvcs=pvcs,
        scheduler_name=scheduler.name, pool_selector=pool.selector, run_label=run_label,
    )
    expected_pods = sum(len(r["spec"]["pipelineSpec"]["tasks"]) for r in runs)
    timeline = PodTimeline(ctx.kube, namespace, label_selector=f"{RUN_LABEL}={run_label}")
    timeline.start()
    sampler = None
    try:
        pid = scheduler.start()
        sampler = ProcSampler(pid)
        sampler.start()
        probe_ready(ctx, scheduler, namespace, pool, run_label)
        window_start = time.time()
        bc.create_pipeline_runs(ctx.kube, namespace, runs)

        def all_done() -> bool:
            listed = bc.list_pipeline_runs(ctx.kube, namespace, f"{RUN_LABEL}={run_label}")
            return len(listed) == len(runs) and all(_run_done(r) for r in listed)

        complete = wait_until(all_done, timeout=ctx.scale.run_timeout, alive=scheduler.alive, every=1.0)
        makespan = time.time() - window_start
    finally:
        if sampler is not None:
            sampler.stop()
        scheduler.stop()
        timeline.stop()
    result = summarise_throughput(timeline.snapshot(), expected=expected_pods, sampler=sampler)
    result.update(complete=complete, pipeline_runs=len(runs), makespan=makespan)
    return result


def _run_done(run: dict[str, Any]) -> bool:
    for condition in (run.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Succeeded":
            return condition.get("status") in ("True", "False")
    return False


def _env_set(name: str) -> set[str]:
    """_env_set('BENCH_MODES') is the comma-separated values of that variable (empty: no filter)."""
    return {v for v in os.environ.get(name, "").split(",") if v}


def _entry_key(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry.get("nodes"), entry.get("mix"), entry.get("mode"), entry.get("qps"), entry.get("scheduler"), entry.get("repeat", 0))


def _short(value: Any, factor: float = 1.0) -> str:
    """_short(12.345) == '12.3'; _short(None) == '–'."""
    return f"{value * factor:.1f}" if isinstance(value, (int, float)) else "–"


def throughput_part(ctx: Context) -> None:
    results = ctx.results["throughput"]
    for case in ctx.scale.cases:
        pool_name = f"bench-n{case.nodes}-{short_id()}"
        namespace = f"bench-n{case.nodes}-{short_id()}"
        pool = None
        volumes = f", {case.volume_pods} pods of the volumes mix at {case.volume_rate:g} pods/s" if case.volume_pods else ""
        say(f"throughput: {case.nodes} nodes, mix {case.mix}, {case.backlog_pods}-pod backlog, {case.stream_pods}-pod stream at {case.stream_rate:g} pods/s{volumes}")
        case_started = time.monotonic()
        stages = ctx.results.setdefault("stage_seconds", {})
        try:
            bc.make_namespace(ctx.kube, namespace)
            pool = bc.add_pool(ctx.kube, pool_name, count=case.nodes, cpu=ctx.scale.node_cpu, memory=ctx.scale.node_memory, pods=ctx.scale.node_pods, say=say)
            stages[f"{case.nodes} nodes: pool up"] = time.monotonic() - case_started
            pvcs = bc.make_pvcs(ctx.kube, namespace, min(100, max(10, case.tekton_runs)))
            plan: list[tuple[str, Callable[..., dict[str, Any]], list[Qps]]] = [
                ("backlog", run_backlog, list(ctx.scale.qps)),
                ("stream", run_stream, list(ctx.scale.qps)),
            ]
            if case.volume_pods:
                plan.append(("volumes", run_volumes, [DEFAULT_QPS]))
            if case.tekton_runs:
                plan.append(("tekton", run_tekton, [DEFAULT_QPS]))
            baseline = bool(case.profile and os.environ.get(BASELINE_TREE_ENV))
            only_modes, only_qps, only_kinds = (_env_set(v) for v in ("BENCH_MODES", "BENCH_QPS", "BENCH_KINDS"))
            for mode, fn, settings in plan:
                if only_modes and mode not in only_modes:
                    continue
                for qps in settings:
                    if only_qps and qps.name not in only_qps:
                        continue
                    kinds = ["kube-scheduler", "reference", *(["command"] if ctx.command else [])]
                    if baseline and mode == "backlog" and qps == DEFAULT_QPS:
                        kinds.append("reference-baseline")
                    if case.profile and mode == "backlog" and qps == DEFAULT_QPS:
                        kinds += [f"{k}-profiled" for k in kinds if k.startswith("reference")]
                    repeats = case.unthrottled_repeats if mode == "backlog" and qps == UNTHROTTLED else 1
                    turns = [(repeat, kind) for repeat in range(repeats) for kind in kinds if not only_kinds or kind in only_kinds]
                    for repeat, kind in turns:
                        say(f" {case.nodes} nodes {mode} {kind} qps {qps.name}" + (f" (run {repeat + 1} of {repeats})" if repeats > 1 else ""))
                        run_started = time.monotonic()
                        try:
                            result = fn(ctx, case, pool, namespace, pvcs, kind, qps)
                        except Exception as err:  # noqa: BLE001 - one failed run is reported, the rest go on
                            say(f"  FAILED: {err}")
                            result = {"error": str(err)[:500]}
                        result.update(nodes=case.nodes, mix=VOLUMES_MIX.name if mode == "volumes" else case.mix, mode=mode, scheduler=kind, qps=qps.name, qps_value=qps.qps, burst=qps.burst,
                                      commit=machine()["commit"], measured_at=time.strftime("%H:%M UTC", time.gmtime()))
                        if repeats > 1:
                            result["repeat"] = repeat
                        if kind == "command":
                            result.update(command=ctx.command, label=os.environ.get(LABEL_ENV) or "your scheduler")
                        key = _entry_key(result)
                        results[:] = [e for e in results if _entry_key(e) != key]  # a re-measurement replaces the old one
                        results.append(_clean(result))
                        ctx.save()
                        tp = result.get("throughput") or {}
                        lat = result.get("latency") or {}
                        api = result.get("api") or {}
                        latency = f"p50 {_short(lat.get('p50'), 1000)} ms p99 {_short(lat.get('p99'), 1000)} ms " if mode != "backlog" else ""
                        say(
                            f"  bound {result.get('bound')}/{result.get('pods')} avg {_short(tp.get('average'))} pods/s {latency}"
                            f"writes/pod {api.get('writes_per_pod')} cpu {_short(result.get('cpu_seconds_total'))} s rss {result.get('peak_rss_mb')} MiB"
                        )
                        bc.clear_namespace(ctx.kube, namespace)
                        results[-1]["seconds"] = time.monotonic() - run_started
                        ctx.save()
                        say(f"  ({results[-1]['seconds']:.0f}s with set-up and clean-up; {time.monotonic() - ctx.started:.0f}s since the benchmark started)")
        finally:
            bc.remove_namespace(ctx.kube, namespace, say)
            removing = time.monotonic()
            bc.remove_pool(ctx.kube, pool_name)
            stages[f"{case.nodes} nodes: pool down"] = time.monotonic() - removing
            stages[f"{case.nodes} nodes: all"] = time.monotonic() - case_started
            ctx.save()


# --- contention -------------------------------------------------------------------


CONTENTION_SCHEDULERS = {
    "reference": ("reference", "disabled"),
    "kube-scheduler": ("kube-scheduler", "disabled"),
    "tekton-workspaces": (None, "workspaces"),
    "tekton-isolate": (None, "isolate-pipelinerun"),
}


def set_coschedule(mode: str) -> None:
    """set_coschedule('workspaces') re-applies Tekton's feature flags through LocalCluster.up()."""
    LocalCluster(name="rescon", coschedule=mode).up()


def coschedule_flag(kube: Kube) -> str:
    """coschedule_flag() is Tekton's current `coschedule` feature flag (others may switch it too)."""
    flags = kube.core.read_namespaced_config_map("feature-flags", "tekton-pipelines").data or {}
    return str(flags.get("coschedule"))


def hold_affinity_assistants(kube: Kube, namespace: str, stop: Any) -> None:
    """Mark affinity-assistant pods as held, so the KWOK simulation keeps them Running.

    The simulation ends every Running pod's steps after 1 s unless the pod is
    held; an affinity assistant is a long-running StatefulSet pod, so it must
    not "finish" (the StatefulSet would replace it, possibly elsewhere).
    """
    from harness.cluster.simulation import HOLD

    patched: set[str] = set()
    while not stop.wait(0.1):
        try:
            pods = bc.list_raw(kube.core.list_namespaced_pod, namespace, label_selector="app.kubernetes.io/component=affinity-assistant")
        except Exception:  # noqa: BLE001
            continue
        for pod in pods:
            name = pod["metadata"]["name"]
            uid = pod["metadata"]["uid"]
            if uid in patched:
                continue
            try:
                kube.core.patch_namespaced_pod(name, namespace, {"metadata": {"annotations": {HOLD: "true"}}}, _preload_content=False)
                patched.add(uid)
            except Exception:  # noqa: BLE001
                pass


def contention_part(ctx: Context) -> None:
    import threading

    results = ctx.results["contention"]
    scale = ctx.scale
    pool_name = f"bench-ct-{short_id()}"
    pool = bc.add_pool(ctx.kube, pool_name, count=scale.contention_nodes, cpu="4", memory="8Gi", say=say)
    try:
        for mode in scale.contention_modes:
            kind, coschedule = CONTENTION_SCHEDULERS[mode]
            namespace = f"bench-ct-{mode[:9]}-{short_id()}"
            scheduler = ctx.scheduler(kind, DEFAULT_QPS) if kind else None
            scheduler_name = scheduler.name if scheduler else "default-scheduler"
            run_label = f"ct-{mode}-{short_id()}"
            say(f"contention: {mode} ({scale.contention_runs} runs on {scale.contention_nodes} nodes)")
            stop_holder = threading.Event()
            timeline = records = None
            try:
                bc.make_namespace(ctx.kube, namespace)
                pvcs = bc.make_pvcs(ctx.kube, namespace, scale.contention_runs)
                runs = contention_runs(
                    scale.contention_runs, prefix="ct", pvcs=pvcs, scheduler_name=scheduler_name,
                    pool_selector=pool.selector, run_label=run_label, node_cpu_millis=4000,
                )
                if coschedule != "disabled":
                    set_coschedule(coschedule)
                    threading.Thread(target=hold_affinity_assistants, args=(ctx.kube, namespace, stop_holder), daemon=True).start()
                if scheduler is not None:
                    scheduler.start()
                    probe_ready(ctx, scheduler, namespace, pool, f"{run_label}-probe")
                timeline = PodTimeline(ctx.kube, namespace, label_selector=f"{RUN_LABEL}={run_label}")
                timeline.start()
                records = RecordTimeline(ctx.kube, namespace)
                records.start()
                started = time.time()
                bc.create_pipeline_runs(ctx.kube, namespace, runs)

                def all_done() -> bool:
                    listed = bc.list_pipeline_runs(ctx.kube, namespace, f"{RUN_LABEL}={run_label}")
                    return len(listed) == len(runs) and all(_run_done(r) for r in listed)

                flags_seen = {coschedule_flag(ctx.kube)}
                deadline = time.monotonic() + scale.contention_timeout
                complete = False
                while time.monotonic() < deadline and not complete:
                    complete = all_done()
                    flags_seen.add(coschedule_flag(ctx.kube))
                    time.sleep(0.5)
                ended = time.time()
                time.sleep(1.0)
                result = summarise_contention(timeline.snapshot(), records.snapshot(), runs=len(runs), started=started, ended=ended)
                result.update(complete=complete, mode=mode, coschedule=coschedule, scheduler=scheduler_name,
                              nodes=scale.contention_nodes, runs=len(runs), coschedule_flags_seen=sorted(flags_seen))
                if flags_seen != {coschedule}:
                    say(f"  WARNING: the coschedule flag was {sorted(flags_seen)} during this run (someone else switched it)")
            except Exception as err:  # noqa: BLE001
                say(f"  FAILED: {err}")
                result = {"mode": mode, "error": str(err)[:500]}
            finally:
                stop_holder.set()
                if timeline is not None:
                    timeline.stop()
                if records is not None:
                    records.stop()
                if scheduler is not None:
                    scheduler.stop()
                if coschedule != "disabled":
                    set_coschedule("disabled")
                bc.remove_namespace(ctx.kube, namespace, say)
            say(f"  {_clean(result)}")
            results[:] = [e for e in results if e.get("mode") != mode]  # a re-measurement replaces the old one
            results.append(_clean(result))
            ctx.save()
    finally:
        bc.remove_pool(ctx.kube, pool_name)


def summarise_contention(pods: list[PodTrace], groups: list[Any], *, runs: int, started: float, ended: float) -> dict[str, Any]:
    """Per PipelineRun: did task b start on a's node at once? Plus makespan and the reservations' waste."""
    by_run: dict[str, dict[str, PodTrace]] = {}
    for pod in pods:
        if pod.run and pod.task:
            by_run.setdefault(pod.run, {})[pod.task] = pod
    broken = stuck = never = 0
    waits = []
    detail = []
    for run, tasks in sorted(by_run.items()):
        a, b = tasks.get("a"), tasks.get("b")
        detail.append({
            "run": run,
            "a_node": a.node if a else None,
            "b_node": b.node if b else None,
            "b_wait": round(b.bound - (b.added or b.bound), 3) if b and b.bound else None,
            "b_unschedulable_seen": b.unschedulable_seen if b else None,
        })
        if a is None or b is None or b.bound is None:
            never += 1
            continue
        wait = b.bound - (b.added or b.bound)
        waits.append(wait)
        if a.node != b.node:
            broken += 1
        elif b.unschedulable_seen or wait >= STUCK_SECONDS:
            stuck += 1
    finished = [p.finished for p in pods if p.finished is not None]
    makespan = (max(finished) - started) if finished else None
    reserved_total = wasted_total = 0.0
    from reference_scheduler.core.resources import cpu_millis

    for group in groups:
        if group.reserved is None or not group.peak_cpu:
            continue
        peak = cpu_millis(group.peak_cpu) / 1000
        used = []
        for task in group.tasks:
            pod = by_run.get(group.run, {}).get(task)
            if pod is not None and pod.running is not None:
                request = sum(cpu_millis(c) for c in pod.cpu.split(",") if c) / 1000
                used.append((request, metrics.Interval(pod.running, pod.finished)))
        total, wasted = metrics.wasted_reservation(
            [(peak, metrics.Interval(group.reserved, group.released))], used, run_end=ended
        )
        reserved_total += total
        wasted_total += wasted
    return {
        "pipeline_runs_seen": len(by_run),
        "broken": broken,
        "stuck": stuck,
        "never_started": never + max(0, runs - len(by_run)),
        "could_not_start_on_group_node": broken + stuck + never + max(0, runs - len(by_run)),
        "later_task_wait": metrics.latency((0.0, w) for w in waits).as_dict(),
        "makespan": makespan,
        "reserved_cpu_seconds": reserved_total if groups else None,
        "wasted_cpu_seconds": wasted_total if groups else None,
        "groups_reserved": sum(1 for g in groups if g.reserved is not None),
        "runs_detail": detail,
    }


# --- requeue (bench/requeue.py) ------------------------------------------------------


def _requeue_part(ctx: Context) -> None:
    requeue_part(ctx, say=say)


# --- suite cost --------------------------------------------------------------------


def suite_part(ctx: Context) -> None:
    """Runs the conformance suite once (own schedulerName) and reads its report and junit durations."""
    import xml.etree.ElementTree as ET

    import yaml

    report = WORK_DIR / "suite-report.yaml"
    junit = WORK_DIR / "suite-junit.xml"
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    command = [
        str(REPO / ".venv" / "bin" / "pytest"), "tests/conformance", "--keep-cluster", "-p", "no:cacheprovider",
        "--scheduler-name", "bench-conformance", "--report-output", str(report), f"--junitxml={junit}", "-q",
    ]
    say(f"suite: {' '.join(command[1:])}")
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - started
    tests = []
    if junit.exists():
        root = ET.parse(junit).getroot()
        for case in root.iter("testcase"):
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome = "failed"
                elif child.tag == "skipped":
                    outcome = "skipped"
            tests.append({"name": case.get("name"), "seconds": float(case.get("time") or 0), "outcome": outcome})
    summary_line = (done.stdout.strip().splitlines() or [""])[-1]
    parsed = yaml.safe_load(report.read_text()) if report.exists() else {}
    ctx.results["suite"] = {
        "command": " ".join(command[1:]).replace(str(WORK_DIR), "reports/bench"),
        "wall_seconds": wall,
        "exit_code": done.returncode,
        "summary": summary_line,
        "tests": tests,
        "report_result": _report_summary(parsed),
    }
    ctx.save()
    say(f"suite: {summary_line} in {wall:.1f}s")


def _report_summary(report: Any) -> Any:
    if not isinstance(report, dict):
        return None
    return {k: report.get(k) for k in ("mode", "profiles", "summary") if k in report} or {"keys": sorted(report)[:10]}


# --- entry -------------------------------------------------------------------------


def results_dir(scale: Scale) -> Path:
    """results_dir(scale) is where its results go: docs/benchmarks/, except for smoke runs and BENCH_RESULTS_DIR."""
    if os.environ.get(RESULTS_DIR_ENV):
        return Path(os.environ[RESULTS_DIR_ENV]).resolve()
    return WORK_DIR if scale.name == "smoke" else RESULTS_DIR


def run(scale: Scale, parts: list[str]) -> Path:
    """run() measures `parts` at `scale`, holding the local cluster for the whole measurement."""
    with local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="the benchmark"):
        return _run_locked(scale, parts)


def _run_locked(scale: Scale, parts: list[str]) -> Path:
    local = LocalCluster(name="rescon")
    say("cluster: rescon cluster up (idempotent)")
    up_started = time.monotonic()
    kube0 = local.up()
    kube0.close()
    # Smoke results only check that the benchmark works: they stay out of docs/.
    out = results_dir(scale) / f"results-{scale.name}.json"
    previous = json.loads(out.read_text()) if out.exists() else {}
    results: dict[str, Any] = {k: v for k, v in previous.items() if k not in parts}
    kept = {part: list(previous.get(part) or []) for part in ("throughput", "contention", "requeue") if part in parts}
    partial = any(os.environ.get(v) for v in ("BENCH_NODES", "BENCH_MODES", "BENCH_QPS", "BENCH_KINDS", "BENCH_CONTENTION_MODES"))
    # Some parts measured again (BENCH_PARTS=requeue) while others' results are kept: that is partial too.
    partial = partial or any(previous.get(p) for p in PARTS if p not in parts)
    if partial and previous.get("machine"):
        # A partial re-measurement keeps the header of the full run; its rows carry their own commit.
        results["machine"] = {**previous["machine"], "commit_now": machine()["commit"]}
    else:
        results.update(machine=machine(), measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    results["scale"] = scale.name
    results.setdefault("cluster_up_seconds_when_already_up", time.monotonic() - up_started)
    command = os.environ.get(COMMAND_ENV) or None
    template = os.environ.get(CONFIG_TEMPLATE_ENV) or None
    ctx = Context(bc.connect(local.kubeconfig), local.kubeconfig, scale, results, out, command=command, config_template=Path(template) if template else None)
    install_crd(ctx.kube, timeouts=DEFAULT_TIMEOUTS)
    say("identity: the schedulers' ServiceAccount and FlowSchemas, so the API server counts their requests")
    ctx.kubeconfig = bc.set_up_identity(ctx.kube, admin_kubeconfig=local.kubeconfig, path=WORK_DIR / "bench-scheduler.kubeconfig")
    try:
        if command:
            # Fail on a bad command or template now, not after the pools are up.
            say(f"your scheduler: {' '.join(ctx.scheduler('command', DEFAULT_QPS).argv())}")
        _run_parts(ctx, parts, kept)
    finally:
        bc.tear_down_identity(ctx.kube)
    from bench.summary import write_summary

    # Only the full run's summary goes to docs/; the others' stay beside the smoke results.
    summary = results_dir(scale) / ("summary.json" if scale.name == "full" else f"summary-{scale.name}.json")
    say(f"summary: {write_summary(results, summary)}")
    return out


def _run_parts(ctx: Context, parts: list[str], kept: dict[str, list[Any]]) -> None:
    results = ctx.results
    for part in parts:
        results.pop(part, None)
        if part in kept:
            # Earlier results stay unless measured again (BENCH_NODES, BENCH_MODES, BENCH_QPS,
            # BENCH_KINDS, BENCH_CONTENTION_MODES select what is measured again).
            results[part] = kept[part]
        started = time.monotonic()
        {"throughput": throughput_part, "contention": contention_part, "requeue": _requeue_part, "suite": suite_part}[part](ctx)
        results.setdefault("part_seconds", {})[part] = time.monotonic() - started
        say(f"{part}: {results['part_seconds'][part]:.0f}s")
        ctx.save()
