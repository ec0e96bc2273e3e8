"""Kill table: the conformance suite against every mutant and the reference, as a table of who catches what.

    .venv/bin/python -m tests.mutants.kill_table                  # make mutants: all, writes docs/mutants.md
    .venv/bin/python -m tests.mutants.kill_table --smoke          # make mutants-smoke: a few quick kills, for CI
    .venv/bin/python -m tests.mutants.kill_table a b --own --repeat 10 --no-reference --output none
                                                                  # each mutant against its own scenario, 10 times: kills out of 10

Each subject (the reference, then each mutant of tests/mutants/faults.py) is a
separate `pytest tests/conformance --scheduler command ... --keep-cluster`
run under its own schedulerName (`mutant-<name>`), so it shares the cluster
with anyone else's runs; its ConformanceReport and log go to reports/mutants/.
A mutant is *killed* by a scenario that fails against it, and fails again
when rerun after every subject's first run (a busy shared cluster makes
Tekton slow and KWOK's heartbeats late; a fault fails every time).

Exit status 0 when the reference passes every scenario and every mutant is
killed by the scenario written to catch it (and so by at least one); 1
otherwise, naming the cell that is wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.cluster.paths import REPO_ROOT
from harness.report.conformance_report import read_report
from harness.suite.scheduler_under_test import REPLICA_LEASE

from .faults import MUTANTS, RULES

REFERENCE = "reference"
REPORTS_DIR = Path("reports") / "mutants"
DOC = Path("docs") / "mutants.md"
#: The smoke subset `make test` runs: mutants whose own scenario kills them within seconds.
SMOKE = ("max_peak", "finally_outside_group", "ignores_reservations")
#: pytest-timeout per scenario: a mutant can make a scenario wait out several named timeouts.
SCENARIO_TIMEOUT_SECONDS = 600

KILLED, SURVIVED, PASSED, FAILED, SKIPPED, MISSING, FLAKY = "killed", "survived", "pass", "FAIL", "skipped", "not run", "flaky"
#: The outcome of a scenario that failed once and passed when run again: an overloaded cluster, not a kill.
FLAKY_OUTCOME = "flaky"


@dataclass(frozen=True)
class Subject:
    """Subject is one scheduler the suite runs against: the reference, or one mutant."""

    name: str
    #: Tells concurrent kill tables apart (`make test` runs one while someone runs `make mutants`).
    run_id: str = ""

    @property
    def is_reference(self) -> bool:
        return self.name == REFERENCE

    @property
    def scheduler_name(self) -> str:
        """scheduler_name is mutant-<name>[-<run_id>] with dashes: a schedulerName must be a DNS subdomain.

        The suite names the scheduler's process after it and stops a process of
        that name before starting its own, so two runs must never share one.
        """
        return "mutant-" + self.name.replace("_", "-") + (f"-{self.run_id}" if self.run_id else "")

    def command(self, python: str = sys.executable, root: Path = REPO_ROOT) -> str:
        """command() is the --scheduler-cmd template: the reference's own entry point, or the mutant runner."""
        module = "reference_scheduler.main" if self.is_reference else f"tests.mutants.run {self.name}"
        return (
            f"env PYTHONPATH={root} {python} -m {module} --kubeconfig {{kubeconfig}} --scheduler-name {{scheduler_name}}"
            " --no-leader-elect --metrics-port 0 --log-format text --enable-resize"
        )


    def replica_command(self, python: str = sys.executable, root: Path = REPO_ROOT) -> str:
        """replica_command() is the --scheduler-replica-cmd template: command() with leader election on the suite's short lease (REPLICA_LEASE)."""
        duration, renew, retry = REPLICA_LEASE
        return self.command(python, root).replace(
            " --no-leader-elect",
            " --leader-elect --lease-name {lease_name} --lease-namespace {lease_namespace}"
            f" --lease-duration-seconds {duration} --renew-deadline-seconds {renew} --retry-period-seconds {retry}",
        )


def pytest_argv(
    subject: Subject,
    *,
    report: Path,
    scenarios: Sequence[str],
    python: str = sys.executable,
    count: int = 0,
    workers: int = 0,
    first_kill: bool = False,
    all_features: bool = True,
) -> list[str]:
    """pytest_argv() is the suite run for one subject; `scenarios` limits it to those (empty: all).

    With `count`, pytest-repeat runs each scenario that many times in the one
    session: one scheduler launch, a fresh namespace and pool for every run.
    With `workers`, pytest-xdist runs that many at a time, each worker with
    its own instance of the subject (harness/suite/workers.py). With
    `first_kill`, the session ends at the first failing scenario (a mutant
    needs one killer; a survivor still meets every scenario). Without
    `all_features`, the scenarios of the default features only, as a user's
    first run has them.

    It runs the venv's `pytest` script, not `python -m pytest`: with the
    checkout on sys.path its stale egg-info reorders the pytest plugins.
    """
    argv = [
        str(Path(python).parent / "pytest"), "tests/conformance", "-q", "-p", "no:cacheprovider", "--keep-cluster",
        "--scheduler", "command", "--scheduler-cmd", subject.command(python),
        "--scheduler-replica-cmd", subject.replica_command(python),
        "--scheduler-name", subject.scheduler_name, *(["--all-features"] if all_features else []),
        f"--timeout={SCENARIO_TIMEOUT_SECONDS}", "--report-output", str(report),
    ]
    if scenarios:
        argv += ["-k", " or ".join(f"test_{name}" for name in scenarios)]
    if count:
        argv += [f"--count={count}", "--repeat-scope=function"]
    if workers:
        argv += ["-n", str(workers)]
    if first_kill:
        argv += ["--maxfail=1"]
    return argv


def cell(subject: Subject, outcome: str | None) -> str:
    """cell() reads one scenario outcome as the table shows it: a mutant is killed when the scenario fails."""
    if outcome is None:
        return MISSING
    if outcome in ("skipped", FLAKY_OUTCOME):
        return SKIPPED if outcome == "skipped" else FLAKY
    if subject.is_reference:
        return PASSED if outcome == "passed" else FAILED
    return KILLED if outcome == "failed" else SURVIVED


def confirmed(first: Mapping[str, str], rerun: Mapping[str, str]) -> dict[str, str]:
    """confirmed() keeps a failure only if the rerun of that scenario failed too; otherwise it is "flaky".

    A mutant's fault fails its scenario every time; a failure that does not
    come back was the cluster's (a shared, busy cluster makes Tekton slow).
    """
    return {s: (FLAKY_OUTCOME if o == "failed" and rerun.get(s) == "passed" else o) for s, o in first.items()}


def problems(outcomes: Mapping[str, Mapping[str, str]]) -> list[str]:
    """problems() lists what makes the table a failure, one line each naming the fix; empty means all good.

    `outcomes` maps subject name -> scenario name -> pytest outcome.
    """
    found = []
    for scenario, outcome in sorted(outcomes.get(REFERENCE, {}).items()):
        if outcome == FLAKY_OUTCOME:
            found.append(f"the reference failed {scenario} once and passed it on a rerun: is the cluster overloaded? run again")
        elif outcome != "passed":
            found.append(f"the reference {outcome} {scenario}: fix the reference or the scenario")
    for name, by_scenario in outcomes.items():
        if name == REFERENCE:
            continue
        killers = sorted(s for s, o in by_scenario.items() if o == "failed")
        intended = MUTANTS[name].caught_by
        if not killers:
            found.append(f"mutant {name} survived every scenario it met: add a scenario that catches it")
        elif intended in by_scenario and intended not in killers:
            found.append(f"mutant {name} survived {intended}, the scenario written to catch it: fix the scenario or faults.py")
    return found


def render_table(outcomes: Mapping[str, Mapping[str, str]]) -> list[str]:
    """render_table() is the Markdown kill table: one row per subject, one column per scenario, then killers."""
    scenarios = sorted({s for by_scenario in outcomes.values() for s in by_scenario})
    lines = [
        "| scheduler | " + " | ".join(f"`{s}`" for s in scenarios) + " | killed by |",
        "|---|" + "---|" * len(scenarios) + "---|",
    ]
    for name, by_scenario in outcomes.items():
        subject = Subject(name)
        cells = [cell(subject, by_scenario.get(s)) for s in scenarios]
        cells = [f"**{c}**" if c in (KILLED, FAILED) else c for c in cells]
        killers = "—" if subject.is_reference else ", ".join(s for s in scenarios if by_scenario.get(s) == "failed") or "**nothing**"
        lines.append(f"| `{name}` | " + " | ".join(cells) + f" | {killers} |")
    return lines


def render_rule_table(outcomes: Mapping[str, Mapping[str, str]]) -> list[str]:
    """render_rule_table() is the kill table read per contract rule: each rule, its mutants, and what killed each.

    A rule whose mutants all survived what they met, or met nothing, is shown
    as **not covered**; a mutant still waiting for its scenario says so.
    """
    lines = ["| contract rule | mutant | killed by | its own scenario |", "|---|---|---|---|"]
    for rule, text in RULES.items():
        mutants = [m for m in MUTANTS.values() if m.rule == rule]
        for mutant in mutants:
            by_scenario = outcomes.get(mutant.name)
            if by_scenario is None:
                killers, own = "not run", "not run"
            else:
                killers = ", ".join(sorted(s for s, o in by_scenario.items() if o == "failed")) or "**nothing**"
                own = cell(Subject(mutant.name), by_scenario.get(mutant.caught_by))
            if mutant.pending:
                own += f" (waits for {mutant.pending})"
            lines.append(f"| `{rule}`: {text} | `{mutant.name}` | {killers} | `{mutant.caught_by}`: {own} |")
    return lines


def kill_counts(runs: Sequence[Mapping[str, str]]) -> dict[str, int]:
    """kill_counts() is, per scenario, how many of `runs` (each scenario -> pytest outcome) it failed in."""
    counts: dict[str, int] = {}
    for run in runs:
        for scenario, outcome in run.items():
            counts[scenario] = counts.get(scenario, 0) + (1 if outcome == "failed" else 0)
    return counts


def split_repeats(outcomes: Mapping[str, str], runs: int) -> list[dict[str, str]]:
    """split_repeats() turns one session's "colocation[3-10]" outcomes into ten runs of {"colocation": outcome}.

    A repeat the session never reported (it died) is missing from its run, and
    so is no kill.
    """
    split: list[dict[str, str]] = [{} for _ in range(runs)]
    for name, outcome in outcomes.items():
        scenario, _, suffix = name.partition("[")
        index = suffix.rstrip("]").split("-")[0]
        if index.isdigit() and 1 <= int(index) <= runs:
            split[int(index) - 1][scenario] = outcome
        elif not suffix:
            split[0][scenario] = outcome
    return split


def render_repeat_table(counts: Mapping[str, Mapping[str, int]], runs: int) -> list[str]:
    """render_repeat_table() shows repeated runs: per subject and scenario, failures out of `runs` (kills for a mutant)."""
    lines = ["| scheduler | rule | scenario | failed in | own scenario |", "|---|---|---|---|---|"]
    for name, by_scenario in counts.items():
        mutant = MUTANTS.get(name)
        for scenario, failed in sorted(by_scenario.items()):
            own = "yes" if mutant is not None and scenario == mutant.caught_by else ""
            lines.append(f"| `{name}` | {mutant.rule if mutant else '—'} | `{scenario}` | {failed}/{runs} | {own} |")
    return lines


def repeat_problems(counts: Mapping[str, Mapping[str, int]], runs: int) -> list[str]:
    """repeat_problems(): the reference failed a run, or a mutant's own scenario missed it in some run."""
    found = []
    for name, by_scenario in counts.items():
        if name == REFERENCE:
            found += [f"the reference failed {s} in {n} of {runs} runs" for s, n in sorted(by_scenario.items()) if n]
            continue
        own = MUTANTS[name].caught_by
        if own in by_scenario and by_scenario[own] < runs:
            found.append(f"mutant {name} was killed by {own} in {by_scenario[own]} of {runs} runs, not every run")
    return found


#: How much of a failure message the doc quotes.
REASON_WIDTH = 220


def render_doc(
    outcomes: Mapping[str, Mapping[str, str]],
    *,
    wall_seconds: Mapping[str, float],
    total_seconds: float,
    when: str,
    reasons: Mapping[str, str] | None = None,
) -> str:
    """render_doc() is docs/mutants.md: what each mutant gets wrong, the kill table, how its own scenario sees it, how to reproduce."""
    example = Subject("max_peak")
    faults = [
        f"| `{m.name}` | {m.fault} | `{m.rule}` | `{m.caught_by}`{' (waits for ' + m.pending + ')' if m.pending else ''} |"
        for m in MUTANTS.values()
    ]
    seen = [
        f"- `{name}` in `{MUTANTS[name].caught_by}`: {' '.join(text.split())[:REASON_WIDTH]}"
        for name, text in (reasons or {}).items()
        if name in MUTANTS and text
    ]
    timings = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in wall_seconds.items())
    return "\n".join(
        [
            "# Mutants: which scenario catches which fault",
            "",
            "Generated by `make mutants` (`.venv/bin/python -m tests.mutants.kill_table`); do not edit by hand.",
            "",
            "Each mutant is the reference scheduler with **one** fault, patched in at start by",
            "[`tests/mutants/faults.py`](../tests/mutants/faults.py). The whole conformance suite runs against",
            "each of them and against the reference; a mutant is **killed** by a scenario that fails against it.",
            "`make mutants` exits non-zero if the reference fails anything or a mutant survives the scenario",
            "written to catch it.",
            "",
            "| mutant | its one fault | contract rule | the scenario written to catch it |",
            "|---|---|---|---|",
            *faults,
            "",
            f"## Kill table ({when})",
            "",
            *render_table(outcomes),
            "",
            "## By contract rule",
            "",
            "A rule is covered when a mutant breaking it is killed by its own scenario, every time.",
            "",
            *render_rule_table(outcomes),
            "",
            *(["How each mutant's own scenario fails against it (the rerun's message):", "", *seen, ""] if seen else []),
            f"Wall time {total_seconds:.0f} s in all: {timings}.",
            "A killing run waits out the named timeout of the check that fails (`pod_scheduled`, `record_state`: 30 s),",
            "so mutants take longer than the reference. Every failure is run a second time: only one that fails",
            "again counts as a kill; one that passes is shown as *flaky* (a busy shared cluster, not the fault).",
            "",
            "## Reproduce",
            "",
            "```sh",
            "make mutants                                                  # everything, rewrites this file",
            ".venv/bin/python -m tests.mutants.kill_table max_peak --scenarios parallel_peak --output none  # one cell",
            "# or by hand, one mutant against the suite:",
            ".venv/bin/pytest tests/conformance --keep-cluster -p no:cacheprovider --all-features \\",
            f"    --scheduler command --scheduler-name {example.scheduler_name} \\",
            f"    --scheduler-cmd '{example.command('.venv/bin/python', Path('.'))}'",
            "```",
            "",
        ]
    )


def repeat_reasons(names: Sequence[str], runs: int, root: Path = REPO_ROOT) -> dict[str, tuple[str, float]]:
    """repeat_reasons() reads each mutant's session of repeats: how its own scenario first failed, and the repeats' mean seconds."""
    found = {}
    for name in names:
        report = root / REPORTS_DIR / f"{name}-x{runs}.yaml"
        if name not in MUTANTS or not report.is_file():
            continue
        own = [t for t in read_report(report).tests if t.name.partition("[")[0] == MUTANTS[name].caught_by]
        message = next((t.message for t in own if t.outcome.value == "failed"), "")
        found[name] = (message, sum(t.duration_seconds for t in own) / max(1, len(own)))
    return found


def render_repeat_doc(counts: Mapping[str, Mapping[str, int]], runs: int, *, when: str, reasons: Mapping[str, tuple[str, float]]) -> str:
    """render_repeat_doc() is docs/mutants.md from `--own --repeat N`: per contract rule, each mutant's kills out of N by its own scenario."""
    lines = ["| contract rule | mutant | its one fault | own scenario | killed in | mean s | how it fails (first killing run) |", "|---|---|---|---|---|---|---|"]
    for rule, text in RULES.items():
        for mutant in (m for m in MUTANTS.values() if m.rule == rule):
            killed = counts.get(mutant.name, {}).get(mutant.caught_by)
            message, seconds = reasons.get(mutant.name, ("", 0.0))
            cell_text = "not run" if killed is None else (f"**{killed}/{runs}**" if killed == runs else f"{killed}/{runs} (MISSED)")
            why = " ".join(message.split())[:REASON_WIDTH].replace("|", "\\|")
            lines.append(f"| `{rule}`: {text} | `{mutant.name}` | {mutant.fault} | `{mutant.caught_by}` | {cell_text} | {seconds:.1f} | {why} |")
    covered = sum(1 for m in MUTANTS.values() if counts.get(m.name, {}).get(m.caught_by) == runs)
    rules_covered = sum(1 for r in RULES if any(counts.get(m.name, {}).get(m.caught_by) == runs for m in MUTANTS.values() if m.rule == r))
    return "\n".join(
        [
            "# Mutants: which scenario catches which fault",
            "",
            "Generated by `.venv/bin/python -m tests.mutants.kill_table --own --no-reference --repeat 10 --output docs/mutants.md`;",
            "do not edit by hand.",
            "",
            "Each mutant is the reference scheduler with **one** fault, patched in at start by",
            "[`tests/mutants/faults.py`](../tests/mutants/faults.py), and names the contract rule it breaks",
            "([coverage.md](coverage.md) maps every rule to its checks). Here each mutant runs against the",
            f"scenario written to catch it, {runs} times in one pytest session (pytest-repeat: one scheduler",
            "launch, a fresh namespace, pool and contract monitor for every run). A rule is covered when a",
            f"mutant breaking it is killed in {runs} of {runs} runs.",
            "",
            f"Measured {when}: **{covered} of {len(MUTANTS)} mutants killed {runs}/{runs}**; {rules_covered} of {len(RULES)} rules covered.",
            "*mean s* is the own scenario's mean time per run: a kill by the contract monitor comes at the first",
            "violating observation; a kill by a check waits out that check's named timeout (`pod_scheduled`: 30 s).",
            "",
            *lines,
            "",
            "## Reproduce",
            "",
            "```sh",
            f".venv/bin/python -m tests.mutants.kill_table --own --no-reference --repeat {runs} --output docs/mutants.md   # this file",
            ".venv/bin/python -m tests.mutants.kill_table max_peak --own --no-reference --repeat 10 --output none        # one mutant",
            "make mutants    # every mutant against every scenario, with reruns (hours at this size)",
            "```",
            "",
        ]
    )


def run_id_for(pid: int) -> str:
    """run_id_for(1234) == 'k1234': this invocation's mark in every schedulerName it uses."""
    return f"k{pid}"


def confirm(subject: Subject, outcomes: dict[str, str], *, root: Path = REPO_ROOT) -> tuple[dict[str, str], float]:
    """confirm() reruns the scenarios that failed against the subject and keeps only the failures that recur."""
    failed = sorted(s for s, o in outcomes.items() if o == "failed")
    if not failed:
        return outcomes, 0.0
    rerun, seconds = run_suite(subject, scenarios=failed, root=root, suffix="-rerun")
    return confirmed(outcomes, rerun), seconds


def run_suite(
    subject: Subject,
    *,
    scenarios: Sequence[str],
    root: Path,
    suffix: str = "",
    count: int = 0,
    workers: int = 0,
    first_kill: bool = False,
    all_features: bool = True,
) -> tuple[dict[str, str], float]:
    """run_suite() is one pytest run against one subject: its outcomes by scenario and its wall time."""
    report = root / REPORTS_DIR / f"{subject.name}{suffix}.yaml"
    log = root / REPORTS_DIR / f"{subject.name}{suffix}.log"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    if not suffix:
        (root / REPORTS_DIR / f"{subject.name}-rerun.yaml").unlink(missing_ok=True)
    started = time.monotonic()
    with log.open("w") as out:
        argv = pytest_argv(subject, report=report, scenarios=scenarios, count=count, workers=workers, first_kill=first_kill, all_features=all_features)
        subprocess.run(argv, cwd=root, stdout=out, stderr=subprocess.STDOUT, check=False)
    seconds = time.monotonic() - started
    if not report.is_file():
        raise SystemExit(f"kill_table: the suite run against {subject.name} wrote no report: read {log}")
    return {test.name: test.outcome.value for test in read_report(report).tests}, seconds


def kill_reasons(names: Sequence[str], root: Path = REPO_ROOT) -> dict[str, str]:
    """kill_reasons() reads, for each mutant, why its own scenario failed in the confirming rerun."""
    found = {}
    for name in names:
        report = root / REPORTS_DIR / f"{name}-rerun.yaml"
        if name in MUTANTS and report.is_file():
            for test in read_report(report).tests:
                if test.name == MUTANTS[name].caught_by and test.outcome.value == "failed":
                    found[name] = test.message
    return found


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants.kill_table", description=__doc__.splitlines()[0])
    parser.add_argument("mutants", nargs="*", help=f"mutants to run (default: all): {', '.join(MUTANTS)}")
    parser.add_argument("--scenarios", default="", help="comma-separated scenarios to run (default: all)")
    parser.add_argument("--no-reference", action="store_true", help="leave the reference out")
    parser.add_argument("--smoke", action="store_true", help=f"CI's subset: {', '.join(SMOKE)} against their own scenarios, no reference, no doc")
    parser.add_argument("--own", action="store_true", help="run each mutant against its own scenario only (its caught_by), not --scenarios")
    parser.add_argument("--repeat", type=int, default=0, help="run each cell this many times, no reruns, and count the kills (prints only)")
    parser.add_argument("--from-counts", default="", metavar="JSON", help=f"write the --own --repeat doc from a saved {REPORTS_DIR}/repeat-counts.json, running nothing")
    parser.add_argument(
        "--workers", type=int, default=None, help="scenarios at a time in a subject's run (pytest -n; default 3 with --repeat, else 0: one process); reruns go one at a time"
    )
    parser.add_argument(
        "--default-features", action="store_true", help="the scenarios of the default features only, not --all-features (a user's first run)"
    )
    parser.add_argument(
        "--first-kill", action="store_true", help="end a mutant's run at its first failing scenario, then confirm that one alone (a held-out batch: is it caught at all?)"
    )
    parser.add_argument("--fresh", action="store_true", help="with --repeat: each run its own pytest session and scheduler launch (slower)")
    parser.add_argument("--output", default=str(DOC), help=f"where the Markdown goes ('none': print only; default {DOC})")
    args = parser.parse_args(list(argv))
    unknown = [m for m in args.mutants if m not in MUTANTS]
    if unknown:
        parser.error(f"unknown mutant {unknown[0]!r}: use one of {', '.join(MUTANTS)}")
    if args.repeat < 0:
        parser.error("--repeat takes a count of runs, at least 1")
    if args.repeat and args.output == str(DOC) and not (args.own and args.no_reference and not args.mutants):
        # docs/mutants.md from repeats is the whole catalogue against its own scenarios; anything less prints only.
        args.output = "none"
    if args.workers is None:
        args.workers = 3 if args.repeat else 0
    if args.smoke:
        args.mutants = list(SMOKE)
        args.scenarios = ",".join(MUTANTS[m].caught_by for m in SMOKE)
        args.no_reference, args.output = True, "none"
    return args


def scenarios_for(name: str, *, given: Sequence[str], own: bool) -> list[str]:
    """scenarios_for(): what one subject runs: its own scenario with --own (the reference: all of `given`), else `given`."""
    if own and name in MUTANTS:
        return [MUTANTS[name].caught_by]
    return list(given)


def repeat(
    names: Sequence[str], *, given: Sequence[str], own: bool, runs: int, run_id: str, fresh: bool = False, output: str = "none", workers: int = 0
) -> int:
    """repeat() runs each subject's cells `runs` times and prints the failures out of `runs`.

    By default the runs share one pytest session (pytest-repeat); with `fresh`
    each run is a session of its own, with its own scheduler launch.
    """
    counts: dict[str, dict[str, int]] = {}
    for name in names:
        scenarios = scenarios_for(name, given=given, own=own)
        if fresh:
            results = []
            for index in range(1, runs + 1):
                outcomes, seconds = run_suite(Subject(name, run_id), scenarios=scenarios, root=REPO_ROOT, suffix=f"-r{index}")
                results.append(outcomes)
                print(f"kill_table: {name} run {index}/{runs} in {seconds:.0f} s: {outcomes}", flush=True)
        else:
            outcomes, seconds = run_suite(Subject(name, run_id), scenarios=scenarios, root=REPO_ROOT, suffix=f"-x{runs}", count=runs, workers=workers)
            results = split_repeats(outcomes, runs)
            print(f"kill_table: {name}: {runs} runs in one session, {seconds:.0f} s: {kill_counts(results)} failed", flush=True)
        # A scenario asked for and never reported (the session died) counts as failing in no run.
        counts[name] = {scenario: 0 for scenario in scenarios} | kill_counts(results)
        # Written after every subject, so a long measurement that is cut short keeps what it measured.
        (REPO_ROOT / REPORTS_DIR / "repeat-counts.json").write_text(json.dumps({"runs": runs, "counts": counts}, indent=1))
    print("\n".join(render_repeat_table(counts, runs)))
    if output != "none":
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        (REPO_ROOT / output).write_text(render_repeat_doc(counts, runs, when=when, reasons=repeat_reasons(list(counts), runs)))
        print(f"kill_table: wrote {output}")
    found = repeat_problems(counts, runs)
    for line in found:
        print(f"kill_table: {line}", file=sys.stderr)
    return 1 if found else 0


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    if args.from_counts:
        return _from_counts(args)
    # One hold of the local cluster for every subject: between two subjects' sessions other users would
    # take it, and a measurement of an hour would spend most of it waiting (the sessions reenter the lock).
    from harness.cluster.cluster_lock import local_cluster_lock
    from harness.timeouts import DEFAULT_TIMEOUTS

    with local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="the kill table"):
        return _measure(args)


def _from_counts(args: argparse.Namespace) -> int:
    """_from_counts() writes the --own --repeat doc from a saved measurement, running nothing."""
    saved = json.loads(Path(args.from_counts).read_text())
    when = datetime.fromtimestamp(Path(args.from_counts).stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
    target = args.output if args.output != "none" else str(DOC)
    (REPO_ROOT / target).write_text(render_repeat_doc(saved["counts"], saved["runs"], when=when, reasons=repeat_reasons(list(saved["counts"]), saved["runs"])))
    print(f"kill_table: wrote {target}")
    return 1 if repeat_problems(saved["counts"], saved["runs"]) else 0


def _measure(args: argparse.Namespace) -> int:
    scenarios = [s for s in args.scenarios.split(",") if s]
    names = ([] if args.no_reference else [REFERENCE]) + (args.mutants or list(MUTANTS))
    if args.repeat:
        return repeat(names, given=scenarios, own=args.own, runs=args.repeat, run_id=run_id_for(os.getpid()), fresh=args.fresh, output=args.output, workers=args.workers)
    outcomes: dict[str, dict[str, str]] = {}
    wall: dict[str, float] = {}
    started = time.monotonic()
    run_id = run_id_for(os.getpid())
    for name in names:
        print(f"kill_table: {name} as {Subject(name, run_id).scheduler_name} ...", flush=True)
        outcomes[name], wall[name] = run_suite(
            Subject(name, run_id),
            scenarios=scenarios_for(name, given=scenarios, own=args.own),
            root=REPO_ROOT,
            workers=args.workers,
            first_kill=args.first_kill and name != REFERENCE,
            all_features=not args.default_features,
        )
        print(f"kill_table: {name} done in {wall[name]:.0f} s", flush=True)
    # Reruns come after every first run, minutes later: a busy spell of the shared cluster is over by then.
    for name in names:
        outcomes[name], seconds = confirm(Subject(name, run_id), outcomes[name])
        wall[name] += seconds
        if seconds:
            print(f"kill_table: {name} rerun of its failures done in {seconds:.0f} s", flush=True)
    total = time.monotonic() - started
    print("\n".join(render_table(outcomes)))
    if args.output != "none":
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        doc = render_doc(outcomes, wall_seconds=wall, total_seconds=total, when=when, reasons=kill_reasons(list(outcomes)))
        Path(REPO_ROOT / args.output).write_text(doc)
        print(f"kill_table: wrote {args.output}")
    print(f"kill_table: wall time {total:.0f} s")
    found = problems(outcomes)
    for line in found:
        print(f"kill_table: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
