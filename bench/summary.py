"""summary.json: the figures issues #13, #24 and #35 read, from one `make bench` run's results.

    {
      "commit": "1a2b3c4", "measured_at": "2026-12-01 17:10 UTC", "qps": "50/100",
      "1000": {"pods_per_s_ratio": 0.41, "p99_ratio": 1.68, "p90_ratio": 1.9, "cpu_per_pod_ratio": 1.85,
               "write_cap_ratio": 1.01, "unthrottled_pods_per_s_ratio": 0.9,
               "reference": {"pods_per_s": 24.8, "p50_ms": 20.7, "p90_ms": 30.1, "p99_ms": 45.4, "writes_per_pod": 3.2,
                             "cpu_seconds": 10.0, "cpu_ms_per_pod": 16.65,
                             "main_bucket_requests_per_pod": 2.22, "write_cap_pods_per_s": 24.5, "write_cap_ratio": 1.01,
                             "unthrottled_pods_per_s": 113.5, ...},
               "kube-scheduler": {...}},
      "100": {...}, "5000": {...},
      "requeue": {"reference": {"p50_ms": 120.0, "p99_ms": 400.0, "samples": 25, "missed": 0, ...}, "kube-scheduler": {...}},
      "requeue_after_release": {"reference": {...}},
      "volumes": {"100": {"added_p50_ratio": 1.4, "first_pod_p50_ratio": 1.01,
                          "reference": {"claims_bound": "30/30", "selected_to_bound_p50_ms": 2010.0, "added_p50_ms": 35.0, ...},
                          "kube-scheduler": {...}}}
    }

Keyed by node count. `pods_per_s_ratio` is reference ÷ kube-scheduler pods/s on
the backlog, `p99_ratio` reference ÷ kube-scheduler p99 creation → bound
latency on the stream, both at QPS 50/burst 100 (higher is better for the
first, lower for the second); null when a side is missing. With a user's
scheduler (BENCH_SCHEDULER_CMD) its figures are under "command" and its
ratios, also ÷ kube-scheduler, are `command_pods_per_s_ratio`,
`command_p99_ratio` and so on (every ratio of the line, prefixed).

`p90_ratio` (issue #35) is the same ratio at the stream's p90, beside the
p99: with few stream pods the p99 is the slowest pod but one (bench/scales.py
sizes the streams at 1000 and 5000 nodes so that it is not). `cpu_per_pod_ratio`
(issue #35, target 1) is reference ÷ kube-scheduler CPU seconds per bound pod
on the same backlog at QPS 50/100: each process's whole CPU (user + system,
its start and cache sync included, bench/observe.py ProcSampler) over the
pods it bound; lower is better. Each scheduler's `cpu_ms_per_pod` is that
figure in milliseconds.

`write_cap_ratio` (issue #24) is measured pods/s on the backlog over the
most the client's token bucket lets through for the requests the scheduler
actually sent on it (write_cap(); docs/benchmarks/findings.md, "Targets");
the line's `write_cap_ratio` is the reference's. `unthrottled_pods_per_s_ratio`
is reference ÷ kube-scheduler pods/s on the backlog at QPS 10000/10000: of the
medians when the case ran several times in turns (`unthrottled_runs_pods_per_s`
lists each run's pods/s, in the order they ran).

`volumes` (issue #35) is the volumes mix (bench/provisioning.py), keyed by node
count: runs whose workspace is a volumeClaimTemplate of the default class, at
QPS 50/100. Per scheduler, its claims' selected-node annotation → Bound (the
provisioner's time), each run's first pod's creation → bound, and `added`, that
less its claim's provisioning: what the scheduler's attempt adds around it.
`added_p50_ratio` and `first_pod_p50_ratio` are reference ÷ kube-scheduler.

`requeue` is the requeue measurement (bench/requeue.py) where room is freed by
a pod finishing, for every scheduler: freed → the waiting pod bound, p50 and
p99 over `samples` frees (`missed`: frees no pod was bound after in time).
`requeue_after_release` is the reference's, where room is freed by its
releaser releasing a finished PipelineRun's group. Pure except write_summary().
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

from bench import metrics

#: The QPS setting the ratios are taken at (bench.schedulers.DEFAULT_QPS), and the unthrottled one (UNTHROTTLED).
QPS_NAME = "default"
UNTHROTTLED_NAME = "unthrottled"

#: Request categories (bench/api_writes.py) that do not take the main client's tokens: both schedulers
#: send events through a client of their own, and leader election (off in the benchmark) has its own too.
OWN_BUCKET_CATEGORIES = ("events", "leases")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _or_none(value: float, digits: int = 3) -> float | None:
    return None if math.isnan(value) else round(value, digits)


def _find_all(entries: Iterable[dict[str, Any]], *, nodes: int, mode: str, scheduler: str, qps: str = QPS_NAME) -> list[dict[str, Any]]:
    """_find_all() is every successful run of that case, in the order of their repeats."""
    found = [
        entry for entry in entries
        if (entry.get("nodes"), entry.get("mode"), entry.get("scheduler"), entry.get("qps")) == (nodes, mode, scheduler, qps) and "error" not in entry
    ]
    return sorted(found, key=lambda entry: int(entry.get("repeat") or 0))


def _find(entries: Iterable[dict[str, Any]], *, nodes: int, mode: str, scheduler: str, qps: str = QPS_NAME) -> dict[str, Any] | None:
    found = _find_all(entries, nodes=nodes, mode=mode, scheduler=scheduler, qps=qps)
    return found[0] if found else None


def median_pods_per_s(runs: Iterable[dict[str, Any]]) -> tuple[float, list[float]]:
    """median_pods_per_s(backlog runs) is (the median of their pods/s, each run's): [60, 80, 70] -> (70.0, [60, 80, 70])."""
    each = [_number((run.get("throughput") or {}).get("average")) for run in runs]
    each = [value for value in each if not math.isnan(value)]
    return metrics.percentile(each, 50), each


def main_bucket_requests(by_category: dict[str, Any]) -> int:
    """main_bucket_requests({'binding': 600, 'records': 720, 'events': 600, 'reads': 12}) == 1332: what took the main bucket's tokens."""
    return sum(int(n) for name, n in by_category.items() if name not in OWN_BUCKET_CATEGORIES and isinstance(n, (int, float)))


def write_cap(pods: float, requests: float, *, qps: float, burst: float) -> float:
    """write_cap(600, 1320, qps=50, burst=100) == 600 / ((1320 - 100) / 50) ≈ 24.6 pods/s: the most a token bucket allows.

    The bucket starts full: `burst` requests pass at once and the rest at
    `qps` a second, so sending `requests` takes at least (requests − burst) / qps
    seconds, and `pods` binds cannot go faster than pods over that. NaN when
    the burst covers every request (no cap) or a figure is missing.
    """
    if any(math.isnan(v) for v in (pods, requests, qps, burst)) or qps <= 0:
        return math.nan
    seconds = (requests - burst) / qps
    return pods / seconds if seconds > 0 else math.nan


def write_cap_figures(backlog: dict[str, Any] | None) -> dict[str, Any]:
    """write_cap_figures(a backlog run) is its requests per pod on the main bucket, its write cap and measured ÷ cap.

    Example: 600 pods bound at 24.8 pods/s with 600 binds, 720 record writes,
    12 reads and 600 events at QPS 50/100: 1332 requests, 2.22 a pod, a cap of
    600 / ((1332 − 100) / 50) = 24.35 pods/s, a ratio of 1.02.
    """
    api = (backlog or {}).get("api") or {}
    by_category = api.get("by_category") or {}
    pods = _number(api.get("pods"))
    if not by_category or math.isnan(pods) or pods <= 0:
        return {"main_bucket_requests_per_pod": None, "write_cap_pods_per_s": None, "write_cap_ratio": None}
    requests = main_bucket_requests(by_category)
    backlog = backlog or {}
    cap = write_cap(pods, requests, qps=_number(backlog.get("qps_value")), burst=_number(backlog.get("burst")))
    measured = _number((backlog.get("throughput") or {}).get("average"))
    return {
        "main_bucket_requests_per_pod": _or_none(requests / pods),
        "write_cap_pods_per_s": _or_none(cap, 2),
        "write_cap_ratio": _or_none(metrics.ratio(measured, cap)),
    }


def cpu_seconds_per_pod(backlog: dict[str, Any] | None) -> float:
    """cpu_seconds_per_pod(a backlog run) is its scheduler's CPU seconds over the pods it bound: 10.0 s for 600 -> 0.0167.

    The process's whole CPU (cpu_seconds_total: its start and cache sync too), as
    the reference's own figure and kube-scheduler's are read the same way. NaN when
    the run has no CPU sample or bound nothing.
    """
    backlog = backlog or {}
    cpu, bound = _number(backlog.get("cpu_seconds_total")), _number(backlog.get("bound"))
    return cpu / bound if not math.isnan(cpu) and bound > 0 else math.nan


def figures(backlog: dict[str, Any] | None, stream: dict[str, Any] | None) -> dict[str, Any]:
    """figures(backlog run, stream run) is one scheduler's line of the summary (None for what was not measured).

    Example: a backlog of 1000 pods bound at 50 pods/s with 3000 writes and a
    stream whose p99 was 0.030 s give pods_per_s 50.0, writes_per_pod 3.0, p99_ms 30.0.
    """
    backlog, stream = backlog or {}, stream or {}
    throughput = backlog.get("throughput") or {}
    latency = stream.get("latency") or {}
    return {
        "pods_per_s": _or_none(_number(throughput.get("average")), 2),
        "p50_ms": _or_none(_number(latency.get("p50")) * 1000, 1),
        "p90_ms": _or_none(_number(latency.get("p90")) * 1000, 1),
        "p99_ms": _or_none(_number(latency.get("p99")) * 1000, 1),
        "writes_per_pod": (backlog.get("api") or {}).get("writes_per_pod"),
        "stream_writes_per_pod": (stream.get("api") or {}).get("writes_per_pod"),
        "cpu_seconds": _or_none(_number(backlog.get("cpu_seconds_total")), 1),
        "cpu_ms_per_pod": _or_none(cpu_seconds_per_pod(backlog) * 1000, 2),
        "peak_rss_mb": _or_none(_number(backlog.get("peak_rss_mb")), 0),
        "bound": f"{backlog.get('bound')}/{backlog.get('pods')}" if backlog else None,
        "commit": backlog.get("commit") or stream.get("commit"),
    }


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """summary(results-full.json's content) is summary.json's content (see the module docstring)."""
    entries = [e for e in results.get("throughput") or [] if isinstance(e, dict)]
    machine = results.get("machine") or {}
    out: dict[str, Any] = {
        "commit": machine.get("commit_now") or machine.get("commit"),
        "measured_at": results.get("measured_at"),
        "qps": "50/100",
    }
    for nodes in sorted({int(e["nodes"]) for e in entries if isinstance(e.get("nodes"), int)}):
        line: dict[str, Any] = {}
        cpu_per_pod: dict[str, float] = {}
        for scheduler in ("reference", "kube-scheduler", "command"):
            backlog = _find(entries, nodes=nodes, mode="backlog", scheduler=scheduler)
            cpu_per_pod[scheduler] = cpu_seconds_per_pod(backlog)
            stream = _find(entries, nodes=nodes, mode="stream", scheduler=scheduler)
            unthrottled_runs = _find_all(entries, nodes=nodes, mode="backlog", scheduler=scheduler, qps=UNTHROTTLED_NAME)
            unthrottled, each_run = median_pods_per_s(unthrottled_runs)
            if backlog or stream or each_run:
                line[scheduler] = {
                    **figures(backlog, stream),
                    **write_cap_figures(backlog),
                    "unthrottled_pods_per_s": _or_none(unthrottled, 2),
                    # A partial re-run (--nodes, BENCH_QPS) may have measured it at another commit than the rest.
                    "unthrottled_commit": unthrottled_runs[0].get("commit") if unthrottled_runs else None,
                }
                if len(each_run) > 1:
                    line[scheduler]["unthrottled_runs_pods_per_s"] = [round(value, 2) for value in each_run]
        kube = line.get("kube-scheduler") or {}
        for scheduler, prefix in (("reference", ""), ("command", "command_")):
            if scheduler == "command" and scheduler not in line:
                continue
            mine = line.get(scheduler) or {}
            line[f"{prefix}pods_per_s_ratio"] = _ratio(mine.get("pods_per_s"), kube.get("pods_per_s"))
            line[f"{prefix}p99_ratio"] = _ratio(mine.get("p99_ms"), kube.get("p99_ms"))
            line[f"{prefix}p90_ratio"] = _ratio(mine.get("p90_ms"), kube.get("p90_ms"))
            # Of the unrounded figures: cpu_seconds is shown to 0.1 s, too coarse for kube-scheduler's 1.0 s at 100 nodes.
            line[f"{prefix}cpu_per_pod_ratio"] = _or_none(metrics.ratio(cpu_per_pod[scheduler], cpu_per_pod["kube-scheduler"]))
            line[f"{prefix}write_cap_ratio"] = mine.get("write_cap_ratio")
            line[f"{prefix}unthrottled_pods_per_s_ratio"] = _ratio(mine.get("unthrottled_pods_per_s"), kube.get("unthrottled_pods_per_s"))
        out[str(nodes)] = line
    out.update(requeue_summary(results.get("requeue") or []))
    volumes = volumes_summary(entries)
    if volumes:
        out["volumes"] = volumes
    return out


def _ms(spread: Any, key: str) -> float | None:
    """_ms({'p50': 0.0345}, 'p50') == 34.5: a spread's figure (seconds) in milliseconds, None when missing."""
    return _or_none(_number((spread or {}).get(key)) * 1000, 1)


def volume_figures(entry: dict[str, Any]) -> dict[str, Any]:
    """volume_figures(a volumes run) is one scheduler's line of summary.json's "volumes".

    Example: 30 claims all Bound, selected-node → Bound p50 2.01 s, first pods'
    creation → bound p50 2.05 s: selected_to_bound_p50_ms 2010.0,
    first_pod_p50_ms 2050.0, and added_p50_ms the p50 of each first pod's
    latency less its own claim's provisioning (about 40 ms here).
    """
    volumes = entry.get("volumes") or {}
    latency = entry.get("latency") or {}
    return {
        "pods_bound": f"{entry.get('bound')}/{entry.get('pods')}",
        "claims_bound": f"{volumes.get('claims_bound')}/{volumes.get('claims')}",
        "selected_to_bound_p50_ms": _ms(volumes.get("selected_to_bound"), "p50"),
        "selected_to_bound_p99_ms": _ms(volumes.get("selected_to_bound"), "p99"),
        "selected_to_bound_max_ms": _ms(volumes.get("selected_to_bound"), "max"),
        "first_pod_p50_ms": _ms(volumes.get("first_pod_latency"), "p50"),
        "first_pod_p99_ms": _ms(volumes.get("first_pod_latency"), "p99"),
        "added_p50_ms": _ms(volumes.get("added"), "p50"),
        "added_p99_ms": _ms(volumes.get("added"), "p99"),
        "pod_to_selected_p50_ms": _ms(volumes.get("pod_to_selected"), "p50"),
        "claim_bound_to_pod_bound_p50_ms": _ms(volumes.get("claim_bound_to_pod_bound"), "p50"),
        "later_pod_p50_ms": _ms(volumes.get("later_pod_latency"), "p50"),
        "p50_ms": _ms(latency, "p50"),
        "p99_ms": _ms(latency, "p99"),
        "unselected": volumes.get("unselected"),
        "pods_off_claim_node": volumes.get("pods_off_claim_node"),
        "writes_per_pod": (entry.get("api") or {}).get("writes_per_pod"),
        "commit": entry.get("commit"),
    }


def volumes_summary(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """volumes_summary(throughput entries) is {node count: {scheduler: volume_figures, ratios}} of the volumes runs at QPS 50/100."""
    entries = list(entries)
    out: dict[str, Any] = {}
    for nodes in sorted({int(e["nodes"]) for e in entries if e.get("mode") == "volumes" and isinstance(e.get("nodes"), int)}):
        line: dict[str, Any] = {}
        for scheduler in ("reference", "kube-scheduler", "command"):
            entry = _find(entries, nodes=nodes, mode="volumes", scheduler=scheduler)
            if entry is not None:
                line[scheduler] = volume_figures(entry)
        kube = line.get("kube-scheduler") or {}
        for scheduler, prefix in (("reference", ""), ("command", "command_")):
            if scheduler not in line and scheduler == "command":
                continue
            mine = line.get(scheduler) or {}
            line[f"{prefix}added_p50_ratio"] = _ratio(mine.get("added_p50_ms"), kube.get("added_p50_ms"))
            line[f"{prefix}first_pod_p50_ratio"] = _ratio(mine.get("first_pod_p50_ms"), kube.get("first_pod_p50_ms"))
        out[str(nodes)] = line
    return out


#: summary.json's key for each way of freeing room (bench/requeue.py's paths).
REQUEUE_KEYS = {"pod-finished": "requeue", "release": "requeue_after_release"}


def requeue_summary(entries: Iterable[Any]) -> dict[str, Any]:
    """requeue_summary(results' "requeue" entries) is {"requeue": {scheduler: figures}, "requeue_after_release": {...}}.

    A failed run (an "error" entry) leaves its scheduler out; a path nobody
    measured leaves its key out.
    """
    out: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or "error" in entry or entry.get("path") not in REQUEUE_KEYS:
            continue
        shown = {k: entry.get(k) for k in ("p50_ms", "p99_ms", "max_ms", "samples", "missed", "commit", "measured_at")}
        out.setdefault(REQUEUE_KEYS[entry["path"]], {})[str(entry.get("scheduler"))] = shown
    return out


def _ratio(numerator: Any, denominator: Any) -> float | None:
    """_ratio(30, 60) == 0.5; None when either side is missing."""
    return _or_none(metrics.ratio(_number(numerator), _number(denominator)))


def write_summary(results: dict[str, Any], path: Path) -> Path:
    """write_summary() writes summary(results) to path as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary(results), indent=1, ensure_ascii=False) + "\n")
    return path
