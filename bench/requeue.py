"""Requeue: how soon a waiting pod is bound once room for it is freed (issue #24, item 2).

One KWOK node is kept full of held 1-CPU pods; N more 1-CPU pods wait, reported
Unschedulable. Then room is freed one piece at a time, each time waiting for
one waiting pod to be bound before freeing the next, so every free has exactly
one pod it can help. Two ways of freeing:

* `pod-finished` (every scheduler, the like-for-like comparison): the oldest
  running pod on the node finishes (the benchmark sets the simulation's
  `release` annotation, so KWOK ends its steps at once and writes phase
  Succeeded). kube-scheduler sees the pod leave its informer (it lists only
  non-terminal pods); the reference sees the phase change.
* `release` (the reference only): the node is full of single-task PipelineRuns'
  pods, each its own reserved group. The oldest one's pod finishes, then the
  benchmark marks its PipelineRun Succeeded, as Tekton does when the last
  task is done; the reference's releaser then writes the group Released, and
  only that frees the room (the record holds the group's peak until then).
  The waiting pods are other runs' pods: each bind costs the record's create
  and claim, as a run's first pod always does.

The clock starts at the moment the benchmark's own watch sees the freeing
object change (the pod Succeeded; the record's group Released), not at the
API write: the freeing write of the first path is KWOK's, not the
benchmark's, and the API's own timestamps have one-second resolution. The
bind is stamped by the same kind of watch in the same process (spec.nodeName
first seen), so the watches' delays cancel to first order, as for the other
latencies (bench/observe.py). Pure except measure_requeue().
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Sequence

from bench import metrics

if TYPE_CHECKING:
    from bench.run import Context
    from harness.cluster.node_pools import NodePool

#: The two ways of freeing room (module docstring).
POD_FINISHED = "pod-finished"
RELEASE = "release"
PATHS = (POD_FINISHED, RELEASE)

#: Every pod of the measurement asks this much CPU; the node has NODE_CPU_MILLIS.
POD_CPU_MILLIS = 1000
NODE_CPU_MILLIS = 4000
#: The probe pod that shows the scheduler is ready (bench.run.probe_ready) stays on the node: 100m.
PROBE_CPU_MILLIS = 100


def fillers_that_fit(node_millis: int, pod_millis: int, taken_millis: int) -> int:
    """fillers_that_fit(4000, 1000, 100) == 3: pods of pod_millis that fill the node, leaving less than one pod's room.

    With 3 × 1000m and the 100m probe on a 4000m node, 900m stay free: a
    waiting 1000m pod does not fit until one filler finishes (then 1900m).
    """
    if pod_millis <= 0:
        raise ValueError(f"a pod must ask some CPU, not {pod_millis}m")
    return max(0, (node_millis - taken_millis) // pod_millis)


def next_to_free(bound: Sequence[tuple[str, float]], finished: set[str]) -> str | None:
    """next_to_free([('a', 2.0), ('b', 1.0)], {'b'}) == 'a': the running pod bound longest ago (None: none left)."""
    running = sorted((t, name) for name, t in bound if name not in finished)
    return running[0][1] if running else None


def sample_seconds(freed: float | None, bound: float | None) -> float | None:
    """sample_seconds(10.0, 10.25) == 0.25: freed → bound; None when either end was not seen (a missed sample)."""
    if freed is None or bound is None:
        return None
    return bound - freed


def requeue_figures(samples: Sequence[float | None]) -> dict[str, Any]:
    """requeue_figures([0.1, 0.3, None]) is {'p50_ms': 200.0, 'p99_ms': 298.0, 'max_ms': 300.0, 'samples': 2, 'missed': 1}.

    A missed sample (no bind before the per-free timeout) is reported apart,
    never counted as a latency: the p99 of the seen ones would hide it, so
    `missed` must be read with it.
    """
    seen = [s for s in samples if s is not None]

    def ms(value: float) -> float | None:
        return None if math.isnan(value) else round(value * 1000, 1)

    return {
        "p50_ms": ms(metrics.percentile(seen, 50)),
        "p99_ms": ms(metrics.percentile(seen, 99)),
        "max_ms": ms(max(seen, default=math.nan)),
        "samples": len(seen),
        "missed": len(samples) - len(seen),
    }


def run_done_patch(now: datetime) -> dict[str, Any]:
    """run_done_patch(now) is the status merge patch Tekton writes when a PipelineRun's last task succeeded.

    The benchmark's runs are pending, so Tekton never writes it: the benchmark
    does, as it writes their resolved plans (bench/cluster.py).
    """
    stamp = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"status": {"completionTime": stamp, "conditions": [{
        "type": "Succeeded", "status": "True", "reason": "Succeeded",
        "message": "Tasks Completed: 1 (Failed: 0, Cancelled 0), Skipped: 0", "lastTransitionTime": stamp,
    }]}}


# --- on the cluster -----------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """Measured is one scheduler's requeue run: a sample per free (None: missed) and what was seen on the way."""

    samples: list[float | None]
    unschedulable_seen: int
    #: release path only: pod Succeeded → the group Released, per free (the reference's releaser).
    release_seconds: list[float | None]


def measure_requeue(ctx: Context, pool: NodePool, kind: str, path: str, *, say: Callable[[str], None]) -> Measured:
    """measure_requeue(ctx, pool, 'reference', 'pod-finished') fills the one-node pool, lets N pods wait, frees room N times."""
    from bench import cluster as bc
    from bench.observe import PodTimeline, RecordTimeline
    from bench.run import create_resolved_runs, probe_ready, short_id, wait_until
    from bench.schedulers import DEFAULT_QPS
    from bench.workload import RUN_LABEL, TaskSize, pipeline_run, task_pod
    from harness.cluster.simulation import RELEASE as RELEASE_ANNOTATION

    grouped = path == RELEASE
    scale = ctx.scale
    namespace = f"bench-rq-{kind[:9]}-{short_id()}"
    run_label = f"rq-{kind}-{path}-{short_id()}"
    scheduler = ctx.scheduler(kind, DEFAULT_QPS)
    size = TaskSize(cpu=f"{POD_CPU_MILLIS}m")
    fill = fillers_that_fit(NODE_CPU_MILLIS, POD_CPU_MILLIS, PROBE_CPU_MILLIS)
    names = [f"fill-{i}" for i in range(fill)] + [f"wait-{i}" for i in range(scale.requeue_samples)]
    bc.make_namespace(ctx.kube, namespace)
    timeline = PodTimeline(ctx.kube, namespace, label_selector=f"{RUN_LABEL}={run_label}")
    records = RecordTimeline(ctx.kube, namespace) if grouped else None
    try:
        pvc = bc.make_pvcs(ctx.kube, namespace, 1)[0] if grouped else None
        common: dict[str, Any] = {"scheduler_name": scheduler.name, "pool_selector": pool.selector, "run_label": run_label}
        if grouped:
            runs = tuple(pipeline_run(n, "single", pvc=str(pvc), pending=True, sizes={"t0": size}, **common) for n in names)
            create_resolved_runs(ctx, namespace, run_label, runs)
            pods = {n: task_pod(n, "t0", pvc=pvc, size=size, **common) for n in names}
        else:
            pods = {n: task_pod("", n, pvc=None, size=size, **common) for n in names}
        timeline.start()
        if records is not None:
            records.start()
        scheduler.start()
        probe_ready(ctx, scheduler, namespace, pool, run_label)

        def traces() -> dict[str, Any]:
            return {t.name: t for t in timeline.snapshot() if t.kind != "probe"}

        bc.create_pods(ctx.kube, namespace, [pods[n] for n in names[:fill]])
        if not wait_until(lambda: sum(1 for t in traces().values() if t.bound) >= fill, timeout=60, alive=scheduler.alive):
            raise RuntimeError(f"{kind} did not bind the {fill} pods that fill the node within 60 s: {scheduler.log_tail(5)}")
        waiting = [pods[n] for n in names[fill:]]
        bc.create_pods(ctx.kube, namespace, waiting)
        # Every waiting pod must have been tried and found no room before the first free.
        wait_until(lambda: sum(1 for t in traces().values() if t.unschedulable_seen) >= len(waiting), timeout=60, alive=scheduler.alive)
        unschedulable = sum(1 for t in traces().values() if t.unschedulable_seen)
        say(f"  {fill} pods fill the node, {unschedulable} of {len(waiting)} reported Unschedulable; freeing room {len(waiting)} times")
        samples: list[float | None] = []
        release_seconds: list[float | None] = []
        finished: set[str] = set()
        for _ in waiting:
            now = traces()
            victim = next_to_free([(t.name, t.bound) for t in now.values() if t.bound is not None], finished)
            if victim is None:
                break
            bound_before = {name for name, t in now.items() if t.bound is not None}
            ctx.kube.core.patch_namespaced_pod(victim, namespace, {"metadata": {"annotations": {RELEASE_ANNOTATION: "true"}}}, _preload_content=False)
            finished.add(victim)
            wait_until(lambda: traces()[victim].finished is not None, timeout=30, alive=scheduler.alive, every=0.05)
            pod_done = traces()[victim].finished
            run = now[victim].run
            if grouped:
                _mark_run_done(ctx, namespace, run)

            def newly_bound() -> list[Any]:
                return [t for name, t in traces().items() if t.bound is not None and name not in bound_before]

            wait_until(lambda: bool(newly_bound()), timeout=scale.requeue_timeout, alive=scheduler.alive, every=0.02)
            got = newly_bound()
            bind = min((t.bound for t in got), default=None)
            freed = pod_done
            if records is not None:
                groups = [g for g in records.snapshot() if g.run == run]
                released = groups[0].released if groups else None
                release_seconds.append(sample_seconds(pod_done, released))
                freed = released
            samples.append(sample_seconds(freed, bind))
        return Measured(samples, unschedulable, release_seconds)
    finally:
        timeline.stop()
        if records is not None:
            records.stop()
        scheduler.stop()
        bc.remove_namespace(ctx.kube, namespace, say)


def _mark_run_done(ctx: Context, namespace: str, run: str) -> None:
    """_mark_run_done() writes the PipelineRun's Succeeded condition, as Tekton would once its last task is done."""
    from bench.cluster import PIPELINE_RUNS

    group, version, plural = PIPELINE_RUNS
    ctx.kube.custom.patch_namespaced_custom_object_status(
        group, version, namespace, plural, run, run_done_patch(datetime.now(timezone.utc)),
        _content_type="application/merge-patch+json", _preload_content=False,
    )


def requeue_part(ctx: Context, *, say: Callable[[str], None]) -> None:
    """requeue_part() measures every scheduler on the pod-finished path and the reference on the release path too."""
    from bench import cluster as bc
    from bench.run import _clean, machine, short_id

    results = ctx.results.setdefault("requeue", [])
    pool_name = f"bench-rq-{short_id()}"
    pool = bc.add_pool(ctx.kube, pool_name, count=1, cpu=f"{NODE_CPU_MILLIS // 1000}", memory="16Gi", say=say)
    plan = [(kind, POD_FINISHED) for kind in ("kube-scheduler", "reference", *(["command"] if ctx.command else []))]
    plan.append(("reference", RELEASE))
    try:
        for kind, path in plan:
            say(f"requeue: {kind}, room freed by {path}, {ctx.scale.requeue_samples} times")
            started = time.monotonic()
            try:
                measured = measure_requeue(ctx, pool, kind, path, say=say)
                result: dict[str, Any] = {
                    **requeue_figures(measured.samples),
                    "samples_s": [None if s is None else round(s, 4) for s in measured.samples],
                    "unschedulable_seen": measured.unschedulable_seen,
                }
                if path == RELEASE:
                    result["pod_finished_to_released"] = requeue_figures(measured.release_seconds)
            except Exception as err:  # noqa: BLE001 - one failed run is reported, the rest go on
                say(f"  FAILED: {err}")
                result = {"error": str(err)[:500]}
            result.update(scheduler=kind, path=path, requested=ctx.scale.requeue_samples, seconds=round(time.monotonic() - started, 1),
                          commit=machine()["commit"], measured_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
            say(f"  p50 {result.get('p50_ms')} ms p99 {result.get('p99_ms')} ms over {result.get('samples')} frees ({result.get('missed')} missed)")
            results[:] = [e for e in results if (e.get("scheduler"), e.get("path")) != (kind, path)]
            results.append(_clean(result))
            ctx.save()
    finally:
        bc.remove_pool(ctx.kube, pool_name)
