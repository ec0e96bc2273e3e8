"""Soak: the whole suite against the reference N times back to back, and how often each scenario flaked.

    .venv/bin/python -m tests.soak --runs 10          # make soak N=10: writes docs/soak.md

Each run is `pytest tests/conformance` with its own ConformanceReport under
reports/soak/ (it waits for the machine's local-cluster lock like any run).
A scenario that fails in any run of the reference is a flake: the reference
is correct, so the suite judged it wrongly, or the cluster failed it. The
table gives each scenario's failures, and its median and slowest duration,
and counts the contract monitor's findings (they are failures too).

Each run also logs every wait of every scenario (RESCON_WAIT_LOG): the
margin table gives, per scenario, the wait that came closest to its named
timeout over all runs, so a margin that is thin shows before it flakes.

Runs use `-n 6` as `make e2e` does (`--workers 0`: one process).

Exit status 0 when no scenario failed in any run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from harness.cluster.paths import REPO_ROOT
from harness.report.conformance_report import read_report
from harness.suite.session import WAIT_LOG_ENV

REPORTS_DIR = Path("reports") / "soak"
DOC = Path("docs") / "soak.md"


@dataclass
class ScenarioRecord:
    """ScenarioRecord is one scenario over every run: outcomes, durations and the messages of its failures."""

    outcomes: list[str] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o not in ("passed", "skipped"))

    @property
    def ran(self) -> int:
        """ran is how many runs executed the scenario (a skip, e.g. an opt-in feature, is not a pass)."""
        return sum(1 for o in self.outcomes if o != "skipped")

    @property
    def ran_durations(self) -> list[float]:
        return [d for o, d in zip(self.outcomes, self.durations) if o != "skipped"]


def collect(runs: Sequence[Mapping[str, tuple[str, float, str]]]) -> dict[str, ScenarioRecord]:
    """collect() turns each run's {scenario: (outcome, seconds, message)} into one record per scenario."""
    found: dict[str, ScenarioRecord] = {}
    for run in runs:
        for name, (outcome, seconds, message) in run.items():
            record = found.setdefault(name, ScenarioRecord())
            record.outcomes.append(outcome)
            record.durations.append(seconds)
            if outcome not in ("passed", "skipped"):
                record.failures.append(message)
    return found


@dataclass(frozen=True)
class Wait:
    """Wait is one logged wait of a scenario: what, its named timeout, how long it took, and the limit."""

    scenario: str
    what: str
    timeout: str
    seconds: float
    limit: float

    @property
    def used(self) -> float:
        return self.seconds / self.limit if self.limit else 0.0


def read_waits(path: Path) -> list[Wait]:
    """read_waits() reads a run's RESCON_WAIT_LOG (missing file: no waits)."""
    if not path.is_file():
        return []
    return [Wait(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def closest_waits(waits: Sequence[Wait]) -> dict[str, Wait]:
    """closest_waits() is, per scenario, the wait that used the largest share of its timeout."""
    found: dict[str, Wait] = {}
    for wait in waits:
        if wait.scenario not in found or wait.used > found[wait.scenario].used:
            found[wait.scenario] = wait
    return found


def render(
    records: Mapping[str, ScenarioRecord], *, runs: int, walls: Sequence[float], commit: str, closest: Mapping[str, Wait] | None = None, workers: int = 0
) -> list[str]:
    """render() is the Markdown table of docs/soak.md."""
    flaky = sum(r.failed for r in records.values())
    closest = closest or {}
    lines = [
        "# Soak: the suite against the reference, run after run",
        "",
        f"{runs} full runs of `pytest tests/conformance{f' -n {workers}' if workers else ''}` at {commit}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
        f" (`python -m tests.soak --runs {runs}`). Wall time per run: median {statistics.median(walls):.0f} s,"
        f" slowest {max(walls):.0f} s. Failures of the reference: **{flaky}**.",
        "",
        "*closest wait* is, over all runs, the scenario's wait that used the largest share of its named",
        "timeout: how long it took, against that timeout.",
        "",
        "| scenario | failed | p50 s | max s | closest wait (all runs) |",
        "|---|---|---|---|---|",
    ]
    for name, record in sorted(records.items()):
        if not record.ran:
            continue
        wait = closest.get(name.partition("[")[0])
        margin = f"`{wait.timeout}`: {wait.seconds:.1f} s of {wait.limit:g} s ({wait.used:.0%}), {wait.what[:80]}" if wait else "—"
        durations = record.ran_durations
        lines.append(f"| `{name}` | {record.failed} of {record.ran} | {statistics.median(durations):.1f} | {max(durations):.1f} | {margin} |")
    never_ran = sorted(name for name, record in records.items() if not record.ran)
    if never_ran:
        lines += ["", "Skipped in every run (not judged by this soak): " + ", ".join(f"`{name}`" for name in never_ran) + "."]
    failures = [(name, message) for name, record in sorted(records.items()) for message in record.failures]
    if failures:
        lines += ["", "Failures:", ""] + [f"- `{name}`: {message.splitlines()[0][:300] if message else '(no message)'}" for name, message in failures]
    return lines


def run_once(index: int, root: Path, extra: Sequence[str], *, workers: int = 0) -> tuple[dict[str, tuple[str, float, str]], float]:
    report = root / REPORTS_DIR / f"run-{index}.yaml"
    log = root / REPORTS_DIR / f"run-{index}.log"
    waits = wait_log(root, index)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    waits.unlink(missing_ok=True)
    argv = [str(Path(sys.executable).parent / "pytest"), "tests/conformance", "-q", "-p", "no:cacheprovider", "--keep-cluster",
            *(["-n", str(workers)] if workers else []), "--report-output", str(report), *extra]
    started = time.monotonic()
    with log.open("w") as out:
        subprocess.run(argv, cwd=root, stdout=out, stderr=subprocess.STDOUT, check=False, env={**os.environ, WAIT_LOG_ENV: str(waits)})
    wall = time.monotonic() - started
    if not report.is_file():
        raise SystemExit(f"soak: run {index} wrote no report: read {log}")
    return {t.name: (t.outcome.value, t.duration_seconds, t.message) for t in read_report(report).tests}, wall


def wait_log(root: Path, index: int) -> Path:
    return root / REPORTS_DIR / f"run-{index}-waits.jsonl"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="how many full runs (default 10)")
    parser.add_argument("--workers", type=int, default=6, help="scenarios at a time, as make e2e runs them (-n; default 6, 0: one process)")
    parser.add_argument("--output", default=str(DOC), help=f"where the Markdown goes ('none': print only; default {DOC})")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs takes a whole number of at least 1")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=False).stdout.strip() or "unknown"
    # One hold of the local cluster for every run (the runs reenter the lock): between two runs others
    # would take it, and each run's wall time would count their turn.
    from harness.cluster.cluster_lock import local_cluster_lock
    from harness.timeouts import DEFAULT_TIMEOUTS

    with local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="the soak"):
        return _soak(args, commit)


def _soak(args: argparse.Namespace, commit: str) -> int:
    results, walls = [], []
    for index in range(1, args.runs + 1):
        outcomes, wall = run_once(index, REPO_ROOT, args.pytest_args, workers=args.workers)
        results.append(outcomes)
        walls.append(wall)
        failed = sorted(name for name, (outcome, _, _) in outcomes.items() if outcome not in ("passed", "skipped"))
        skipped = sum(1 for outcome, _, _ in outcomes.values() if outcome == "skipped")
        passed = len(outcomes) - len(failed) - skipped
        print(f"soak: run {index}/{args.runs}: {passed} passed, {skipped} skipped, {len(failed)} failed {failed or ''} in {wall:.0f} s", flush=True)
        # Written after every run, so a soak cut short keeps the runs it made.
        records, lines = _table(results, walls, commit=commit, workers=args.workers)
        if args.output != "none":
            (REPO_ROOT / args.output).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0 if all(r.failed == 0 for r in records.values()) else 1


def _table(results: Sequence[Mapping[str, tuple[str, float, str]]], walls: Sequence[float], *, commit: str, workers: int) -> tuple[dict[str, ScenarioRecord], list[str]]:
    records = collect(results)
    closest = closest_waits([w for index in range(1, len(results) + 1) for w in read_waits(wait_log(REPO_ROOT, index))])
    return records, render(records, runs=len(results), walls=walls, commit=commit, closest=closest, workers=workers)


if __name__ == "__main__":
    sys.exit(main())
