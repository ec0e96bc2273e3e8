"""summary.json: the figures issue #13's acceptance reads, from one `make bench` run's results.

    {
      "commit": "1a2b3c4", "measured_at": "2026-12-01 17:10 UTC", "qps": "50/100",
      "1000": {"pods_per_s_ratio": 1.05, "p99_ratio": 1.10,
               "reference": {"pods_per_s": 58.0, "p50_ms": 9.0, "p99_ms": 30.0, "writes_per_pod": 3.2, ...},
               "kube-scheduler": {...}},
      "100": {...}, "5000": {...}
    }

Keyed by node count. `pods_per_s_ratio` is reference ÷ kube-scheduler pods/s on
the backlog, `p99_ratio` reference ÷ kube-scheduler p99 creation → bound
latency on the stream, both at QPS 50/burst 100 (higher is better for the
first, lower for the second); null when a side is missing. With a user's
scheduler (BENCH_SCHEDULER_CMD) its figures are under "command" and its
ratios, also ÷ kube-scheduler, are `command_pods_per_s_ratio` and
`command_p99_ratio`. Pure except write_summary().
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

from bench import metrics

#: The QPS setting the ratios are taken at (bench.schedulers.DEFAULT_QPS).
QPS_NAME = "default"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _or_none(value: float, digits: int = 3) -> float | None:
    return None if math.isnan(value) else round(value, digits)


def _find(entries: Iterable[dict[str, Any]], *, nodes: int, mode: str, scheduler: str) -> dict[str, Any] | None:
    for entry in entries:
        if (entry.get("nodes"), entry.get("mode"), entry.get("scheduler"), entry.get("qps")) == (nodes, mode, scheduler, QPS_NAME) and "error" not in entry:
            return entry
    return None


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
        "p99_ms": _or_none(_number(latency.get("p99")) * 1000, 1),
        "writes_per_pod": (backlog.get("api") or {}).get("writes_per_pod"),
        "stream_writes_per_pod": (stream.get("api") or {}).get("writes_per_pod"),
        "cpu_seconds": _or_none(_number(backlog.get("cpu_seconds_total")), 1),
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
        for scheduler in ("reference", "kube-scheduler", "command"):
            backlog = _find(entries, nodes=nodes, mode="backlog", scheduler=scheduler)
            stream = _find(entries, nodes=nodes, mode="stream", scheduler=scheduler)
            if backlog or stream:
                line[scheduler] = figures(backlog, stream)
        kube = line.get("kube-scheduler") or {}
        for scheduler, prefix in (("reference", ""), ("command", "command_")):
            if scheduler == "command" and scheduler not in line:
                continue
            mine = line.get(scheduler) or {}
            line[f"{prefix}pods_per_s_ratio"] = _ratio(mine.get("pods_per_s"), kube.get("pods_per_s"))
            line[f"{prefix}p99_ratio"] = _ratio(mine.get("p99_ms"), kube.get("p99_ms"))
        out[str(nodes)] = line
    return out


def _ratio(numerator: Any, denominator: Any) -> float | None:
    """_ratio(30, 60) == 0.5; None when either side is missing."""
    return _or_none(metrics.ratio(_number(numerator), _number(denominator)))


def write_summary(results: dict[str, Any], path: Path) -> Path:
    """write_summary() writes summary(results) to path as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary(results), indent=1, ensure_ascii=False) + "\n")
    return path
