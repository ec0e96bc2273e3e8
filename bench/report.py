"""Report: docs/benchmarks.md and its plots, from docs/benchmarks/results-<scale>.json.

The tables are computed here from the saved results (nothing is measured), so
`python -m bench report` can be re-run at will. Prose that needs a person's
judgement lives in docs/benchmarks/findings.md and is included verbatim.
"""

from __future__ import annotations

import io
import json
import math
import pstats
from pathlib import Path
from typing import Any, Iterable

from bench import metrics
from bench.cold_build import parse_log
from bench.summary import cpu_seconds_per_pod

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
RESULTS_DIR = DOCS / "benchmarks"
SCALE_ORDER = ("full", "small", "medium", "large")  # "smoke" results are never reported
#: The schedulers of a side-by-side table, in their order; "command" is BENCH_SCHEDULER_CMD's.
SIDE_BY_SIDE = ("kube-scheduler", "reference", "command")


def load_results() -> dict[str, dict[str, Any]]:
    found = {}
    for scale in SCALE_ORDER:
        path = RESULTS_DIR / f"results-{scale}.json"
        if path.exists():
            found[scale] = json.loads(path.read_text())
    return found


def fmt(value: Any, digits: int = 1) -> str:
    """fmt(12.345) == '12.3'; fmt(None) == '–'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def ms(value: Any) -> str:
    """ms(0.0123) == '12'; latencies are reported in milliseconds."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value * 1000:.0f}"


def ratio_text(value: float, *, target: float | None = None, higher_is_better: bool = True) -> str:
    """ratio_text(1.3, target=1.0) == '1.30× ✅'; with no target just '1.30×'."""
    if value is None or math.isnan(value):
        return "–"
    text = f"{value:.2f}×"
    if target is None:
        return text
    met = value >= target if higher_is_better else value <= target
    return f"{text} {'✅' if met else '❌'}"


def _get(entry: dict[str, Any], *path: str) -> Any:
    current: Any = entry
    for step in path:
        if not isinstance(current, dict):
            return None
        current = current.get(step)
    return current


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else math.nan


def pairs(entries: Iterable[dict[str, Any]]) -> list[tuple[tuple[Any, ...], dict[str, Any] | None, dict[str, Any] | None]]:
    """pairs(throughput entries) matches each (nodes, mix, mode, qps) reference run with its kube-scheduler run."""
    table: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for entry in entries:
        key = (entry.get("nodes"), entry.get("mix"), entry.get("mode"), entry.get("qps"))
        table.setdefault(key, {})[str(entry.get("scheduler"))] = entry
    mode_order = {"backlog": 0, "stream": 1, "tekton": 2}
    keys = sorted(table, key=lambda k: (k[0] or 0, mode_order.get(k[2], 9), str(k[3]), str(k[1])))
    return [(k, table[k].get("reference"), table[k].get("kube-scheduler")) for k in keys]


def throughput_table(entries: list[dict[str, Any]]) -> str:
    rows = [
        "| nodes | mix | method | QPS/burst | pods bound (ref / kube) | pods/s ref | pods/s kube | ratio | per-second p50 / p90 / p99 ref | per-second p50 / p90 / p99 kube | CPU s ref / kube | peak RSS MiB ref / kube |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (nodes, mix, mode, qps), ref, kube in pairs(entries):
        if mode not in ("backlog", "tekton"):
            continue
        ref, kube = ref or {}, kube or {}
        r_avg, k_avg = _num(_get(ref, "throughput", "average")), _num(_get(kube, "throughput", "average"))
        target = 1.0 if nodes == 1000 and mode == "backlog" else None
        qps_text = f"{fmt(ref.get('qps_value') or kube.get('qps_value'), 0)}/{ref.get('burst') or kube.get('burst')}"
        rows.append(
            f"| {nodes} | {mix} | {mode} | {qps_text} | {fmt(ref.get('bound'))}/{fmt(ref.get('pods'))} · {fmt(kube.get('bound'))}/{fmt(kube.get('pods'))} "
            f"| {fmt(r_avg)} | {fmt(k_avg)} | {ratio_text(metrics.ratio(r_avg, k_avg), target=target)} "
            f"| {_pct(ref)} | {_pct(kube)} "
            f"| {fmt(ref.get('cpu_seconds_total'))} / {fmt(kube.get('cpu_seconds_total'))} "
            f"| {fmt(ref.get('peak_rss_mb'), 0)} / {fmt(kube.get('peak_rss_mb'), 0)} |"
        )
    return "\n".join(rows)


def _pct(entry: dict[str, Any]) -> str:
    tp = entry.get("throughput") or {}
    return " / ".join(fmt(tp.get(k), 0) for k in ("p50", "p90", "p99"))


def scheduler_label(entry: dict[str, Any]) -> str:
    """scheduler_label(a run) is how the table names its scheduler: the user's label for a command."""
    if entry.get("scheduler") == "command":
        return f"{entry.get('label') or 'your scheduler'} (`BENCH_SCHEDULER_CMD`)"
    return str(entry.get("scheduler"))


def writes_text(entry: dict[str, Any]) -> str:
    """writes_text(a run) is '3.20 (1.00 / 0.20 / 1.00 / 1.00 / 0.00)': writes per pod, then by binding / pods / records / events / other."""
    api = entry.get("api") or {}
    total = api.get("writes_per_pod")
    if total is None:
        return "–"
    per = api.get("per_pod_by_category") or {}
    parts = " / ".join(f"{per.get(c, 0):.2f}" for c in ("binding", "pods", "records", "events", "leases", "other-writes"))
    return f"{total:.2f} ({parts})"


def side_by_side_table(entries: list[dict[str, Any]]) -> str:
    """side_by_side_table() has one row per scheduler per (nodes, method, QPS), with ratios to kube-scheduler's row."""
    rows = [
        "| nodes | method | QPS/burst | scheduler | pods bound | pods/s | pods/s ÷ kube | p50 ms | p90 ms | p99 ms | p90 ÷ kube | p99 ÷ kube "
        "| API writes/pod (binding / pods / records / events / leases / other) | reads/pod | CPU s | CPU ms/pod | CPU/pod ÷ kube | peak RSS MiB | plans lost |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for entry in entries:
        if entry.get("mode") in ("backlog", "stream") and entry.get("scheduler") in SIDE_BY_SIDE:
            # Runs taken in turns (ThroughputCase.unthrottled_repeats) each get their rows, compared within the turn.
            key = (entry.get("nodes") or 0, 0 if entry.get("mode") == "backlog" else 1, str(entry.get("qps")), int(entry.get("repeat") or 0))
            groups.setdefault(key, {})[str(entry["scheduler"])] = entry
    for key in sorted(groups):
        by_scheduler = groups[key]
        kube = by_scheduler.get("kube-scheduler") or {}
        for scheduler in SIDE_BY_SIDE:
            e = by_scheduler.get(scheduler)
            if e is None:
                continue
            mode = e.get("mode")
            qps_text = f"{fmt(e.get('qps_value'), 0)}/{e.get('burst')}"
            if "error" in e:
                rows.append(f"| {e.get('nodes')} | {mode} | {qps_text} | {scheduler_label(e)} | failed: {str(e['error'])[:120]} |" + " |" * 14)
                continue
            backlog = mode == "backlog"
            avg, k_avg = _num(_get(e, "throughput", "average")), _num(_get(kube, "throughput", "average"))
            p50, p90, p99 = (_num(_get(e, "latency", q)) for q in ("p50", "p90", "p99"))
            k90, k99 = _num(_get(kube, "latency", "p90")), _num(_get(kube, "latency", "p99"))
            # CPU per bound pod is the backlog's figure (summary.json's cpu_per_pod_ratio); a stream's CPU is mostly waiting.
            cpu, k_cpu = cpu_seconds_per_pod(e), cpu_seconds_per_pod(kube)
            compared = scheduler != "kube-scheduler"
            reads = _get(e, "api", "per_pod_by_category", "reads")
            method = "backlog" if backlog else f"stream @ {fmt(e.get('rate'), 0)} pods/s"
            if e.get("repeat") is not None:
                method += f" (run {int(e['repeat']) + 1})"
            rows.append(
                f"| {e.get('nodes')} | {method} | {qps_text} | {scheduler_label(e)} | {fmt(e.get('bound'))}/{fmt(e.get('pods'))} "
                f"| {fmt(avg) if backlog else '–'} | {ratio_text(metrics.ratio(avg, k_avg)) if backlog and compared else '–'} "
                f"| {'–' if backlog else ms(p50)} | {'–' if backlog else ms(p90)} | {'–' if backlog else ms(p99)} "
                f"| {ratio_text(metrics.ratio(p90, k90)) if not backlog and compared else '–'} "
                f"| {ratio_text(metrics.ratio(p99, k99)) if not backlog and compared else '–'} "
                f"| {writes_text(e)} | {fmt(reads, 2)} | {fmt(e.get('cpu_seconds_total'))} "
                f"| {fmt(cpu * 1000, 2) if backlog else '–'} | {ratio_text(metrics.ratio(cpu, k_cpu)) if backlog and compared else '–'} "
                f"| {fmt(e.get('peak_rss_mb'), 0)} | {fmt(e.get('plans_lost'))} |"
            )
    return "\n".join(rows)


def volumes_table(entries: list[dict[str, Any]]) -> str:
    """volumes_table(throughput entries): the volumes mix's runs, one row per scheduler, "" when none ran (bench/provisioning.py)."""
    rows = [
        "| nodes | QPS/burst | scheduler | pods bound | claims Bound | selected-node → Bound p50 / p99 / max ms "
        "| first pod creation → bound p50 / p99 ms | added p50 / p99 ms | added p50 ÷ kube | later pods p50 ms "
        "| claims re-selected | pods off their claim's node | API writes/pod |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    runs = [e for e in entries if e.get("mode") == "volumes" and e.get("scheduler") in SIDE_BY_SIDE]
    order = {s: i for i, s in enumerate(SIDE_BY_SIDE)}
    for e in sorted(runs, key=lambda e: (e.get("nodes") or 0, str(e.get("qps")), order[str(e["scheduler"])])):
        qps_text = f"{fmt(e.get('qps_value'), 0)}/{e.get('burst')}"
        if "error" in e:
            rows.append(f"| {e.get('nodes')} | {qps_text} | {scheduler_label(e)} | failed: {str(e['error'])[:120]} |" + " |" * 9)
            continue
        v = e.get("volumes") or {}
        kube = next((k for k in runs if k.get("scheduler") == "kube-scheduler" and k.get("nodes") == e.get("nodes") and k.get("qps") == e.get("qps")), {})
        added, k_added = _num(_get(e, "volumes", "added", "p50")), _num(_get(kube, "volumes", "added", "p50"))
        s2b, first, add = v.get("selected_to_bound") or {}, v.get("first_pod_latency") or {}, v.get("added") or {}
        rows.append(
            f"| {e.get('nodes')} | {qps_text} | {scheduler_label(e)} | {fmt(e.get('bound'))}/{fmt(e.get('pods'))} | {fmt(v.get('claims_bound'))}/{fmt(v.get('claims'))} "
            f"| {ms(s2b.get('p50'))} / {ms(s2b.get('p99'))} / {ms(s2b.get('max'))} | {ms(first.get('p50'))} / {ms(first.get('p99'))} "
            f"| {ms(add.get('p50'))} / {ms(add.get('p99'))} | {ratio_text(metrics.ratio(added, k_added)) if e.get('scheduler') != 'kube-scheduler' else '–'} "
            f"| {ms(_get(v, 'later_pod_latency', 'p50'))} | {fmt(v.get('unselected'))} | {fmt(v.get('pods_off_claim_node'))} | {fmt(_get(e, 'api', 'writes_per_pod'), 2)} |"
        )
    return "\n".join(rows) if runs else ""


VOLUMES_INTRO = """Runs of the `volumes` mix: the Tekton mix with each run's workspace a `volumeClaimTemplate` of the
default class (WaitForFirstConsumer, the local cluster's local-path provisioner), streamed as the stream
method's pods are. selected-node → Bound is the provisioner's time (the benchmark's watch of the claims
sees the scheduler's `volume.kubernetes.io/selected-node`, then `Bound`); *added* is each run's first
pod's creation → bound less its claim's selected-node → Bound: what the scheduler's attempt adds around
the provisioning (deciding and annotating before, seeing the claim Bound and binding after). Later pods
are a fan-out's second and third, which wait for the same claim."""


def stage_table(results: dict[str, Any]) -> str:
    """stage_table() is how long each stage of the run took: pools, every measured run (with its set-up and clean-up), each part."""
    rows = ["| stage | seconds |", "|---|---|"]
    for name, seconds in (results.get("stage_seconds") or {}).items():
        rows.append(f"| {name} | {fmt(seconds, 0)} |")
    for e in results.get("throughput") or []:
        if e.get("seconds") is not None:
            turn = f" run {int(e['repeat']) + 1}" if e.get("repeat") is not None else ""
            rows.append(f"| {e.get('nodes')} nodes {e.get('mode')} {e.get('scheduler')} QPS {e.get('qps')}{turn} | {fmt(e.get('seconds'), 0)} |")
    for part, seconds in (results.get("part_seconds") or {}).items():
        rows.append(f"| **part {part}** | **{fmt(seconds, 0)}** |")
    return "\n".join(rows) if len(rows) > 2 else ""


def baseline_table(entries: list[dict[str, Any]]) -> str:
    """baseline_table() compares the reference before its hot-path change (reference-baseline) with after."""
    rows = [
        "| nodes | QPS/burst | under cProfile | pods bound before / after | pods/s before | pods/s after | speed-up | CPU s before / after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    found = False
    for entry in entries:
        scheduler = str(entry.get("scheduler"))
        if not scheduler.startswith("reference-baseline") or entry.get("mode") != "backlog":
            continue
        profiled = scheduler.endswith("-profiled")
        wanted = "reference-profiled" if profiled else "reference"
        after = next(
            (e for e in entries if e.get("scheduler") == wanted and e.get("mode") == "backlog"
             and e.get("nodes") == entry.get("nodes") and e.get("qps") == entry.get("qps") and e.get("mix") == entry.get("mix")),
            {},
        )
        before_avg, after_avg = _num(_get(entry, "throughput", "average")), _num(_get(after, "throughput", "average"))
        rows.append(
            f"| {entry.get('nodes')} | {fmt(entry.get('qps_value'), 0)}/{entry.get('burst')} | {'yes' if profiled else 'no'} "
            f"| {fmt(entry.get('bound'))}/{fmt(entry.get('pods'))} · {fmt(after.get('bound'))}/{fmt(after.get('pods'))} "
            f"| {fmt(before_avg)} | {fmt(after_avg)} | {ratio_text(metrics.ratio(after_avg, before_avg))} "
            f"| {fmt(entry.get('cpu_seconds_total'))} / {fmt(after.get('cpu_seconds_total'))} |"
        )
        found = True
    return "\n".join(rows) if found else ""


def latency_table(entries: list[dict[str, Any]]) -> str:
    rows = [
        "| nodes | mix | method | QPS/burst | pods bound (ref / kube) | p50 ms ref | p50 ms kube | p99 ms ref | p99 ms kube | p99 ratio | p50 ratio | API-stamp p50 / p99 s ref | API-stamp p50 / p99 s kube | CPU s ref / kube |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (nodes, mix, mode, qps), ref, kube in pairs(entries):
        if mode not in ("stream", "tekton"):
            continue
        ref, kube = ref or {}, kube or {}
        r99, k99 = _num(_get(ref, "latency", "p99")), _num(_get(kube, "latency", "p99"))
        r50, k50 = _num(_get(ref, "latency", "p50")), _num(_get(kube, "latency", "p50"))
        target = 1.2 if nodes == 1000 and mode == "stream" else None
        qps_text = f"{fmt(ref.get('qps_value') or kube.get('qps_value'), 0)}/{ref.get('burst') or kube.get('burst')}"
        method = f"{mode} @ {fmt(ref.get('rate') or kube.get('rate'), 0)} pods/s" if mode == "stream" else mode
        rows.append(
            f"| {nodes} | {mix} | {method} | {qps_text} | {fmt(ref.get('bound'))}/{fmt(ref.get('pods'))} · {fmt(kube.get('bound'))}/{fmt(kube.get('pods'))} "
            f"| {ms(r50)} | {ms(k50)} | {ms(r99)} | {ms(k99)} "
            f"| {ratio_text(metrics.ratio(r99, k99), target=target, higher_is_better=False)} | {ratio_text(metrics.ratio(r50, k50))} "
            f"| {fmt(_get(ref, 'api_latency', 'p50'))} / {fmt(_get(ref, 'api_latency', 'p99'))} "
            f"| {fmt(_get(kube, 'api_latency', 'p50'))} / {fmt(_get(kube, 'api_latency', 'p99'))} "
            f"| {fmt(ref.get('cpu_seconds_total'))} / {fmt(kube.get('cpu_seconds_total'))} |"
        )
    return "\n".join(rows)


def contention_table(entries: list[dict[str, Any]]) -> str:
    rows = [
        "| mode | scheduler | runs on nodes | could not start on group's node | broken co-location | stuck (Unschedulable first, or ≥ 2 s) | never started | later-task wait p50 / max s | makespan s | reserved CPU·s | wasted CPU·s (share) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = ["reference", "kube-scheduler", "tekton-workspaces", "tekton-isolate"]
    for e in sorted(entries, key=lambda x: order.index(x.get("mode")) if x.get("mode") in order else 9):
        if "error" in e:
            rows.append(f"| {e.get('mode')} | – | – | failed: {str(e['error'])[:80]} | | | | | | | |")
            continue
        seen = e.get("coschedule_flags_seen")
        if seen and seen != [e.get("coschedule")]:
            rows.append(f"| {e.get('mode')} | {e.get('scheduler')} | {e.get('runs')} on {e.get('nodes')} | invalid: the coschedule flag was {seen} during the run (switched by another user) | | | | | | | |")
            continue
        reserved, wasted = e.get("reserved_cpu_seconds"), e.get("wasted_cpu_seconds")
        share = f" ({100 * wasted / reserved:.0f} %)" if reserved and wasted is not None else ""
        wait = e.get("later_task_wait") or {}
        rows.append(
            f"| {e.get('mode')} | {e.get('scheduler')} | {e.get('runs')} on {e.get('nodes')} | {e.get('could_not_start_on_group_node')} "
            f"| {e.get('broken')} | {e.get('stuck')} | {e.get('never_started')} | {fmt(wait.get('p50'))} / {fmt(wait.get('max'))} "
            f"| {fmt(e.get('makespan'))} | {fmt(reserved) if e.get('groups_reserved') else 'n/a'} | {(fmt(wasted) + share) if e.get('groups_reserved') else 'n/a'} |"
        )
    return "\n".join(rows)


def requeue_table(entries: list[dict[str, Any]]) -> str:
    """requeue_table(results' "requeue" entries): freed → waiting pod bound, per scheduler and way of freeing room."""
    rows = ["| scheduler | room freed by | p50 | p99 | max | frees seen | missed | commit |", "|---|---|---|---|---|---|---|---|"]
    for e in entries:
        if "error" in e:
            rows.append(f"| {e.get('scheduler')} | {e.get('path')} | failed: `{str(e['error'])[:120]}` | | | | | {e.get('commit') or ''} |")
            continue
        freed_by = "a pod finishing" if e.get("path") == "pod-finished" else "the group's release (the releaser)"
        rows.append(
            f"| {e.get('scheduler')} | {freed_by} | {fmt(e.get('p50_ms'))} ms | {fmt(e.get('p99_ms'))} ms | {fmt(e.get('max_ms'))} ms "
            f"| {e.get('samples')} | {e.get('missed')} | `{e.get('commit')}` |"
        )
    return "\n".join(rows)


REQUEUE_INTRO = """One node kept full of held 1-CPU pods, N 1-CPU pods waiting (reported Unschedulable); room freed
one piece at a time, each time once a waiting pod was bound after the last free. Time from the moment
the benchmark's watch saw the freeing change (the pod Succeeded; the record's group Released) to its
watch seeing the waiting pod's `spec.nodeName` (bench/requeue.py). Targets (issue #24): p50 ≤ 500 ms,
p99 ≤ 1500 ms for the reference."""


def suite_section(results: dict[str, Any]) -> str:
    suite = results.get("suite")
    lines = []
    if suite:
        lines.append(f"`{suite['command']}`: **{fmt(suite['wall_seconds'])} s** wall time, exit {suite['exit_code']} (`{suite['summary']}`).\n")
        lines.append("| scenario | seconds (junit) | outcome |")
        lines.append("|---|---|---|")
        for test in suite.get("tests") or []:
            lines.append(f"| {test['name']} | {fmt(test['seconds'])} | {test['outcome']} |")
        total = sum(t["seconds"] for t in suite.get("tests") or [])
        lines.append(f"| **sum of scenarios** | **{fmt(total)}** | |")
        target = "✅ met" if suite["wall_seconds"] <= 180 else "❌ not met"
        lines.append(f"\nTarget \"a full e2e run ≤ 3 min warm\": {target} ({fmt(suite['wall_seconds'])} s including session set-up and teardown).")
    else:
        lines.append("Not measured at this scale.")
    up = results.get("cluster_up_seconds_when_already_up")
    from_down = results.get("cluster_up_from_down_seconds")
    if from_down:
        lines.append(f"\nLocal cluster bring-up, warm (binaries cached), from down: **up in {fmt(from_down)} s** ({results.get('cluster_up_from_down_note')}); others measured 7.9 s.")
    else:
        lines.append("\nLocal cluster bring-up: the cluster was never down while this ran (others use it), so the warm bring-up from down is the value measured by others: **up in 7.9 s**.")
    if up:
        lines.append(f"`rescon cluster up` on the already running cluster (re-applies Tekton's config, waits for a probe TaskRun) took {fmt(up)} s.")
    return "\n".join(lines)


def cold_build_section() -> str:
    log = RESULTS_DIR / "cold-build.log"
    if not log.exists():
        return "Not measured (run `python -m bench cold-build`)."
    parsed = parse_log(log.read_text())
    lines = ["| program | build time |", "|---|---|"]
    for name, version, seconds in parsed["programs"]:  # type: ignore[union-attr]
        lines.append(f"| {name} {version} | {seconds / 60:.1f} min |")
    total = parsed["total_seconds"]
    if total is not None:
        lines.append(f"| **total** | **{float(total) / 60:.1f} min** |")
    if not parsed["finished"]:
        lines.append("\nThe build had not finished when this report was written; the log is `docs/benchmarks/cold-build.log`.")
    return "\n".join(lines)


def profile_text(prof: Path, limit: int = 25) -> str:
    """profile_text(path) is the top functions by own time and by cumulative time, as pstats prints them."""
    out = io.StringIO()
    stats = pstats.Stats(str(prof), stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


def write_profiles() -> list[Path]:
    written = []
    for prof in sorted(RESULTS_DIR.glob("profile-*.prof")):
        text = prof.with_suffix(".txt")
        text.write_text(profile_text(prof))
        written.append(text)
    return written


# --- plots -------------------------------------------------------------------------


def plot_throughput_vs_nodes(all_results: dict[str, dict[str, Any]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, str], dict[int, float]] = {}
    for results in all_results.values():
        for e in results.get("throughput") or []:
            if e.get("mode") != "backlog" or "error" in e or str(e.get("scheduler")).endswith("-profiled"):
                continue
            avg = _num(_get(e, "throughput", "average"))
            if not math.isnan(avg):
                series.setdefault((e["scheduler"], e["qps"]), {})[int(e["nodes"])] = avg
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(9, 4.2))
    styles = {"reference": "o-", "kube-scheduler": "s--", "command": "^-."}
    for (scheduler, qps), points in sorted(series.items()):
        xs = sorted(points)
        ax.plot(xs, [points[x] for x in xs], styles.get(scheduler, "x-"), label=f"{scheduler}, QPS {qps}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes (KWOK; the mix of each point is in its table)")
    ax.set_ylabel("pods/s (backlog, first to last bind)")
    ax.set_title("Scheduling throughput vs cluster size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_latency_cdf(results: dict[str, Any], path: Path, *, mode: str, title: str) -> bool:
    """One panel per node count; a curve per (scheduler, QPS): solid reference, dashed kube-scheduler."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [
        e for e in results.get("throughput") or []
        if e.get("mode") == mode and e.get("latencies") and e.get("scheduler") in SIDE_BY_SIDE
    ]
    if not runs:
        return False
    node_counts = sorted({int(e["nodes"]) for e in runs})
    fig, axes = plt.subplots(1, len(node_counts), figsize=(5.2 * len(node_counts), 4), squeeze=False, sharey=True)
    colours = {("reference", "default"): "tab:red", ("reference", "unthrottled"): "tab:orange",
               ("kube-scheduler", "default"): "tab:blue", ("kube-scheduler", "unthrottled"): "tab:cyan",
               ("command", "default"): "tab:green", ("command", "unthrottled"): "tab:olive"}
    for ax, nodes in zip(axes[0], node_counts):
        for e in sorted((e for e in runs if int(e["nodes"]) == nodes), key=lambda e: (e["scheduler"], e["qps"])):
            xs, ys = metrics.cdf([v * 1000 for v in e["latencies"]])
            ax.step(xs, ys, where="post", color=colours.get((e["scheduler"], e["qps"]), "gray"),
                    linestyle="-" if e["scheduler"] == "reference" else "--", label=f"{e['scheduler']}, QPS {e['qps']}")
        ax.set_xscale("log")
        mix = next((e.get("mix") for e in runs if int(e["nodes"]) == nodes), "")
        ax.set_title(f"{nodes} nodes ({mix} mix)")
        ax.set_xlabel("creation → bound (ms, benchmark's watch)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0][0].set_ylabel("fraction of pods")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


WRITE_CATEGORIES = ("binding", "pods", "records", "events", "leases", "other-writes")


def writes_bars(entries: list[dict[str, Any]]) -> list[tuple[str, dict[str, float]]]:
    """writes_bars(runs) is [(label, {category: writes per pod})] for the backlog runs at QPS 50/100, by node count then scheduler."""
    bars = []
    order = {s: i for i, s in enumerate(SIDE_BY_SIDE)}
    chosen = [e for e in entries if e.get("mode") == "backlog" and e.get("qps") == "default" and e.get("scheduler") in order
              and (e.get("api") or {}).get("per_pod_by_category")]
    for e in sorted(chosen, key=lambda e: (e.get("nodes") or 0, order[str(e["scheduler"])])):
        per = e["api"]["per_pod_by_category"]
        name = e.get("label") if e.get("scheduler") == "command" else e.get("scheduler")
        bars.append((f"{name}\n{e.get('nodes')} nodes", {c: float(per.get(c, 0.0)) for c in WRITE_CATEGORIES}))
    return bars


def plot_writes_per_pod(entries: list[dict[str, Any]], path: Path) -> bool:
    """One stacked bar per (node count, scheduler): the API server's count of its writes per pod, by kind."""
    bars = writes_bars(entries)
    if not bars:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(bars) + 2), 4))
    bottoms = [0.0] * len(bars)
    xs = list(range(len(bars)))
    for category in WRITE_CATEGORIES:
        heights = [values[category] for _, values in bars]
        if any(heights):
            ax.bar(xs, heights, bottom=bottoms, label=category)
            bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(xs, [label for label, _ in bars], fontsize=7)
    ax.set_ylabel("API writes per pod (kube-apiserver's count)")
    ax.set_title("API writes per pod, backlog at QPS 50/100")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# --- the document ------------------------------------------------------------------


def _command_note(entries: list[dict[str, Any]]) -> str:
    commands = sorted({str(e["command"]) for e in entries if e.get("command")})
    return "".join(f", with `BENCH_SCHEDULER_CMD='{c}'`" for c in commands)


def write_report() -> Path:
    all_results = load_results()
    if not all_results:
        raise SystemExit("no docs/benchmarks/results-*.json: run 'python -m bench run' (or make bench) first")
    if "full" in all_results:
        from bench.summary import write_summary

        write_summary(all_results["full"], RESULTS_DIR / "summary.json")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    write_profiles()
    plots = []
    notes: dict[str, str] = {}
    if plot_throughput_vs_nodes(all_results, RESULTS_DIR / "throughput-vs-nodes.png"):
        plots.append(("Throughput vs nodes", "benchmarks/throughput-vs-nodes.png"))
        notes["Throughput vs nodes"] = (
            "Each point is the latest backlog run at that node count (the largest scale that has one); "
            "the tables say when and at which commit each row was measured."
        )
    for old_plot in RESULTS_DIR.glob("latency-cdf-*.png"):
        old_plot.unlink()
    if "full" in all_results and plot_writes_per_pod(all_results["full"].get("throughput") or [], RESULTS_DIR / "writes-per-pod.png"):
        plots.append(("API writes per pod", "benchmarks/writes-per-pod.png"))
    for scale, results in all_results.items():
        for mode, what in (("stream", "direct pods at a fixed rate"), ("tekton", "Tekton end to end")):
            name = f"latency-cdf-{mode}-{scale}.png"
            if plot_latency_cdf(results, RESULTS_DIR / name, mode=mode, title=f"Latency CDF, {what} (BENCH_SCALE={scale})"):
                plots.append((f"Latency CDF, {what}, BENCH_SCALE={scale}", f"benchmarks/{name}"))

    parts = [HEADER]
    findings = RESULTS_DIR / "findings.md"
    if findings.exists():
        parts.append(findings.read_text().strip() + "\n")
    parts.append(METHOD)
    for scale in SCALE_ORDER:
        results = all_results.get(scale)
        if not results:
            continue
        m = results.get("machine") or {}
        parts.append(f"## Results at `BENCH_SCALE={scale}`\n")
        parts.append(
            f"Measured {results.get('measured_at')} at commit `{m.get('commit')}` on {m.get('cores')} cores "
            f"({m.get('cpu_model')}), {m.get('memory_gib')} GiB, Linux {m.get('kernel')}, Python {m.get('python')}.\n"
        )
        entries = results.get("throughput") or []
        stamped: dict[tuple[str, str], set[str]] = {}
        for e in entries:
            if e.get("commit"):
                stamped.setdefault((str(e["scheduler"]), str(e["commit"])), set()).add(str(e.get("measured_at")))
        if stamped:
            parts.append(
                "Re-measured rows (the rest at the commit above): "
                + "; ".join(f"{sched} at `{commit}` ({', '.join(sorted(times))})" for (sched, commit), times in sorted(stamped.items()))
                + ".\n"
            )
        if entries and scale == "full":
            parts.append(f"Command: `make bench` (BENCH_SCALE=full){_command_note(entries)}.\n")
            parts.append("### Side by side\n")
            parts.append(SIDE_BY_SIDE_INTRO + "\n")
            parts.append(side_by_side_table(entries) + "\n")
            stages = stage_table(results)
            if stages:
                parts.append("### How long each stage took\n")
                parts.append(stages + "\n")
        elif entries:
            parts.append("### Throughput (pods/s)\n")
            parts.append(throughput_table(entries) + "\n")
            before_after = baseline_table(entries)
            if before_after:
                parts.append("### The reference before and after its hot-path change (backlog)\n")
                parts.append(before_after + "\n")
            parts.append("### Latency (pod creation → bound)\n")
            parts.append(latency_table(entries) + "\n")
        volumes = volumes_table(entries)
        if volumes:
            parts.append("### Volumes: a claim provisioned on the chosen node\n")
            parts.append(VOLUMES_INTRO + "\n")
            parts.append(volumes + "\n")
        if entries:
            errors = [e for e in entries if "error" in e]
            for e in errors:
                parts.append(f"- run failed: {e.get('nodes')} nodes {e.get('mode')} {e.get('scheduler')} {e.get('qps')}: `{e['error'][:200]}`")
            if errors:
                parts.append("")
        if results.get("contention"):
            parts.append("### Placement quality under contention\n")
            parts.append(contention_table(results["contention"]) + "\n")
        if results.get("requeue"):
            parts.append("### Requeue: room freed → waiting pod bound\n")
            parts.append(REQUEUE_INTRO + "\n")
            parts.append(requeue_table(results["requeue"]) + "\n")
        if results.get("suite"):
            parts.append("### Suite cost\n")
            parts.append(suite_section(results) + "\n")
    if plots:
        parts.append("## Plots\n")
        for title, rel in plots:
            parts.append(f"### {title}\n\n![{title}]({rel})\n")
            if title in notes:
                parts.append(notes[title] + "\n")
    parts.append("## Cold toolchain build\n")
    parts.append(COLD_BUILD_INTRO + "\n")
    parts.append(cold_build_section() + "\n")
    profiles = sorted(RESULTS_DIR.glob("profile-*.txt"))
    if profiles:
        parts.append("## Profiles\n")
        for prof in profiles:
            parts.append(f"- [`{prof.name}`](benchmarks/{prof.name})")
        parts.append("")
    out = DOCS / "benchmarks.md"
    out.write_text("\n".join(parts).rstrip() + "\n")
    return out


SIDE_BY_SIDE_INTRO = """Every scheduler ran on the same pool, one after the other, with the same workload and the same
identity; ratios are ÷ kube-scheduler's row (pods/s: higher is better; p90, p99 and CPU per pod: lower is better).
CPU ms/pod is the process's whole CPU (its start included) over the pods it bound, on backlog rows only.
API writes and reads per pod are counted by the kube-apiserver (its APF dispatch counter for the
FlowSchemas that match only the schedulers' ServiceAccount), divided by the pods the scheduler bound;
"plans lost" counts PipelineRuns whose `status.pipelineSpec` was gone after the run (0: Tekton left
the resolved plans alone). Backlog rows have no latency (the pods wait for the scheduler to start);
stream rows' pods/s is the stream's rate."""

HEADER = """# Benchmarks: the reference scheduler vs the stock kube-scheduler

Generated by `python -m bench report` from `docs/benchmarks/results-*.json` (see [Reproduce](#reproduce));
the findings below are written by hand from those numbers.
"""

METHOD = """## Reproduce

```sh
make bench                                  # BENCH_SCALE=full: reference and kube-scheduler side by side at 100, 1000, 5000 nodes
                                            # (QPS 50/100 and unthrottled, backlog and stream), then contention: about 35 min
make bench BENCH_SCALE=smoke                # the same tooling on 100 nodes, small workloads, QPS 50/100: a few minutes
make bench BENCH_SCHEDULER_CMD='/path/to/my-scheduler --kubeconfig {kubeconfig} --scheduler-name {scheduler_name}'
                                            # your scheduler beside the two (placeholders as the suite's --scheduler-cmd;
                                            # {config} with BENCH_SCHEDULER_CONFIG_TEMPLATE=file.j2; BENCH_SCHEDULER_LABEL=name)
BENCH_SCHEDULER_CMD='sh -c "exec my-scheduler --kubeconfig {kubeconfig} --qps $RESCON_BENCH_QPS"' make bench
                                            # a command with a $ goes in the environment (make would expand it)
BENCH_SCALE=small make bench                # the older scales: 100 nodes, all three parts, about 8 minutes
BENCH_SCALE=medium make bench               # 100 and 1000 nodes (about 35 min)
BENCH_SCALE=large  make bench               # adds 5000 nodes with a plain-pod-heavy mix
BENCH_SCALE=large BENCH_NODES=5000 BENCH_PARTS=throughput make bench   # only the 5000-node case
BENCH_PARTS=throughput BENCH_SCALE=medium make bench            # one part only (throughput, contention, requeue, suite)
.venv/bin/python -m bench run --parts requeue                   # only the requeue latency (under a minute); the other parts' results stay
BENCH_CONTENTION_MODES=reference,kube-scheduler make bench      # leave Tekton's coschedule flag alone
.venv/bin/python -m bench report            # rewrite this page from the saved results
.venv/bin/python -m bench cold-build        # the cold toolchain build (about an hour on 2 cores)
```

`make bench` brings the local cluster `rescon` up if it is down (never down) and holds the
machine-wide cluster lock (harness/cluster/cluster_lock.py) for its whole run, as the suite does,
so it queues behind suite runs and they behind it. Its pools, namespaces and schedulerNames
(`bench-reference`, `bench-kube-scheduler`, `bench-command`, `bench-conformance`) are its own and
deleted afterwards, as are the schedulers' cluster-admin binding and FlowSchemas (the namespace
`bench-identity` and its ServiceAccount stay, inert without the binding).
It writes `docs/benchmarks/results-<scale>.json`, this page, and for the full scale
`docs/benchmarks/summary.json` (per node count, reference ÷ kube-scheduler pods/s, p90, p99 and CPU per bound pod at
QPS 50/100, the write-cap and unthrottled ratios; the requeue latencies; the volumes mix's provisioning). The contention baselines switch Tekton's
`coschedule` flag (through `LocalCluster(coschedule=...).up()`) and restore `disabled`.

## Method

**Schedulers.** Each run starts a fresh scheduler process serving its own schedulerName: the
reference (`python -m reference_scheduler.main --qps Q --burst B`), the toolchain's cached
kube-scheduler v1.37.2 with the default profile and `clientConnection.qps/burst` set to the same
Q/B, or a user's `BENCH_SCHEDULER_CMD`, expanded by the suite's own `--scheduler-cmd` code
(its environment holds `RESCON_BENCH_QPS` and `RESCON_BENCH_BURST` for it to honour, if it will).
All run as one ServiceAccount, `bench-identity/bench-scheduler` (cluster-admin), through a
kubeconfig with its token (`{kubeconfig}` for a command). A command's scheduler should run without
leader election, or with a lease it can take at once: each run starts it afresh, and one that waits
for its predecessor's lease to expire spends that wait before its first bind (excluded from the
backlog's pods/s, not from the stream's probe). Two settings: the default 50/100 and "unthrottled" 10000/10000. Both
schedulers limit their own requests: kube-scheduler with client-go's token bucket, the reference
with its own (`reference_scheduler/runtime/ratelimit.py`, client-go's semantics; its events client
has a bucket of its own, as kube-scheduler's does). Results measured before that bucket (commits
before 3f4b82a) ran the reference in effect unthrottled at both settings.

**Nodes.** KWOK nodes of 4 CPU, 16 GiB, 110 pods, in a pool made for the run.

**Workload.** PipelineRuns of three shapes whose tasks all share one PVC-backed workspace (claims
made Bound by `harness.cluster.volumes.make_bound_pvc`, tasks by `sim_task_spec`): `single` (one
task), `chain` (a → b → c) and `fanout` (three parallel tasks, then a join), in equal numbers (mix
`tekton`). Mix `plain-heavy` is one single-task run per four plain pods (no Tekton labels).
Every task step asks 100m CPU and 64 MiB.

Three methods, because Tekton's controller creates pods slower than either scheduler binds them:

- **backlog** (throughput): every PipelineRun is created with `spec.status: PipelineRunPending`, so
  Tekton starts nothing; once Tekton's controller has marked a run Pending, the benchmark writes the
  resolved plan where Tekton writes it when it starts a run, `status.pipelineSpec`, through the
  status subresource (a merge patch, so Tekton's condition stays). Tekton's controller leaves it
  alone: its status update replaces the whole status only when its own desired status differs, and
  after its first reconcile it reconciles from a copy that has the plan (written before that first
  reconcile, the plan could be lost to its conflict retry: hence the wait); every run's results say
  how many plans were gone afterwards ("plans lost"). Then the benchmark creates
  the pods Tekton would create first (single task, the chain's first task, the fan-out's three
  parallel tasks) itself, with Tekton's labels (`tekton.dev/pipelineRun`, `tekton.dev/pipelineTask`),
  the workspace PVC mounted and the step's request, held Running by the simulation. A scheduler
  plans each run from `status.pipelineSpec` (contract section 4) and writes its ReservationRecord
  while it is measured: no record exists before it starts. All pods exist
  before the scheduler starts; throughput is measured from its first bind to its last, so cache
  sync is excluded (and reported separately in the JSON as `startup_to_first_bind`).
- **stream** (latency): the same pods, created at a fixed rate (5 pods/s, 75 pods at 100 nodes;
  10 pods/s, 210 pods at 1000 and 5000 nodes, so that the p99 is not the slowest pod but one;
  bench/scales.py says why) while the scheduler runs (after it bound a probe pod, so its caches are
  warm). The rate is meant to be below both schedulers' capacity, so the latency is per-pod work
  rather than queueing.
- **volumes** (provisioning, 100 nodes): the stream's method with the `volumes` mix, at QPS 50/100:
  each run's workspace is a `volumeClaimTemplate` with no storageClassName, and the benchmark makes the
  claim Tekton would make for it (`pvc-<hash>`) before the scheduler starts, so each run's first pod
  has its claim provisioned, by the cluster's real provisioner, on the node the scheduler chose. A
  watch of the claims stamps the selected-node annotation and `Bound`; the run's pods and claims are
  deleted, and their volumes waited for, before the next run.
- **tekton** (end to end): PipelineRuns that Tekton runs, tasks of 2 s; Tekton creates every pod.

**Before/after.** With `BENCH_BASELINE_TREE=<checkout>` (a `git worktree` of the commit before the
reference's hot-path change, `3e5552a`), the profiled case also runs that older reference
(`reference-baseline`) on the same backlog.

**Metrics.**
- pods/s: pods bound ÷ (last bind − first bind); per-second p50/p90/p99: the number of binds in
  each complete one-second interval from the first bind, as scheduler_perf samples throughput.
- latency: pod creation → bound, both stamped by the benchmark's own watch of the pods (the
  ADDED event, then the first event with `spec.nodeName`), with sub-millisecond clocks; both ends
  pass through the same watch, so its delay cancels to first order. The API's own stamps
  (`creationTimestamp`, the PodScheduled condition's `lastTransitionTime`) have one-second
  resolution; their p50/p99 are shown as a cross-check only.
- CPU seconds (user + system, whole process lifetime, cache sync included) and peak RSS (VmHWM)
  from `/proc/<pid>` of the scheduler process (summed over its live child processes, for a command
  that is a wrapper).
- API writes per pod: counted by the kube-apiserver, so every scheduler is measured by the same
  instrument. FlowSchemas that match only the schedulers' ServiceAccount, one per kind of request
  (`binding`: pods/binding; `pods`: pod updates and patches, e.g. a label or a status condition;
  `records`: anything under rescon.dev; `events`; `leases`; `other-writes`; and `reads`: get and
  list, not watch, so kube-scheduler's informers, which start with a streaming watch, show none), send its requests to a priority level of their own, and the API server's
  `apiserver_flowcontrol_dispatched_requests_total` for them is read before the scheduler starts and
  after it stopped; the difference ÷ the pods it bound (the stream's probe pod included) is per pod.
  The benchmark's own client uses the admin identity and is never counted; nor are KWOK, Tekton or
  the controller manager. `apiserver_request_total` could not do this: it has no label for the
  client. The priority level has a large share of the server's seats (about 170 of 600) and
  queues rather than rejects, so it throttles no scheduler; at set-up the benchmark checks the
  counter on two writes of its own.
- ratios are reference ÷ kube-scheduler (higher is better for pods/s, lower for latency).

**Contention.** A pool of 4-CPU nodes and twice as many PipelineRuns as nodes, all created at once.
Each run is a chain: `a` (500m, 3 s) then `b` (2500m, 3 s) on one workspace, so the group's peak is
b's 2500m. Two runs' `a` fit on a node together but their two `b` do not: unless b's room is held
from the moment a lands, another run takes it. Per run: **broken** = b ran on another node than a;
**stuck** = b ran on a's node but waited ≥ 2 s (pod seen → bound); **never started** = b not bound
before the deadline. **Wasted reservation** = Σ over groups of peak × (Released − Reserved) minus
the CPU·s the group's pods used inside it (both from the benchmark's watches of records and pods).
**Makespan** = first PipelineRun created → last task pod finished. Tekton's baselines
(`coschedule: workspaces`, `isolate-pipelinerun`) run with the cluster's default-scheduler; their
affinity-assistant pods are annotated `sim.rescon.dev/hold` so the KWOK simulation keeps them
Running (otherwise it would "finish" them after 1 s, as any pod without a hold).

**Requeue.** A pool of one 4-CPU node, a 100m probe pod, three held 1000m pods: 900m free. N
pods of 1000m wait (the benchmark waits until each is reported Unschedulable). Then N times: the pod
bound longest ago finishes (the simulation's `release` annotation: KWOK writes it Succeeded at
once), and the benchmark waits for one waiting pod to be bound (at most 30 s; past that the free
counts as missed). Every scheduler does this at QPS 50/100 ("room freed by a pod finishing", the
like-for-like row, summary.json's `requeue`). The reference does it a second time with single-task
PipelineRuns' pods (pending runs with resolved plans, as in the backlog): each finished pod's
PipelineRun is then marked Succeeded, as Tekton marks a run whose last task is done, the reference's
releaser releases its group, and only that frees the room (`requeue_after_release`); its waiting pods'
binds include their records' create and claim. The clock starts when the benchmark's watch sees the
freeing change, not at an API write: the pod's Succeeded is KWOK's write, not the benchmark's, and
the API's own stamps have one-second resolution; the bind is stamped by the same process's pod
watch, so the watches' delays cancel to first order.

**Caveats.** One 2-core machine runs the whole control plane, KWOK, Tekton, both the scheduler
and the benchmark client, and it is shared: another developer's conformance suites and a niced
cold toolchain build may run at the same time. Absolute numbers are therefore noisy and low; the
ratios, measured back to back on the same pool, are the point.
"""

COLD_BUILD_INTRO = """`GOCACHE=$(mktemp -d) RESCON_CACHE_DIR=$(mktemp -d) nice -n 19 .venv/bin/rescon tools`: empty Go
build cache and binary cache, the same module cache (no downloads), run through
`python -m bench cold-build`, which timestamps every progress line into `docs/benchmarks/cold-build.log`.
It ran niced while benchmarks and other users shared the two cores, so it is an upper bound."""
