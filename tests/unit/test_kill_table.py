"""The kill table's pure parts: commands, cells, verdicts and the Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutants.kill_table import (
    FLAKY_OUTCOME,
    REFERENCE,
    SMOKE,
    Subject,
    cell,
    confirmed,
    kill_counts,
    parse_args,
    problems,
    pytest_argv,
    render_doc,
    render_repeat_table,
    split_repeats,
    render_repeat_doc,
    render_rule_table,
    repeat_problems,
    render_table,
    run_id_for,
    scenarios_for,
)

pytestmark = pytest.mark.unit


def test_a_mutant_is_a_command_scheduler_with_a_dns_name() -> None:
    subject = Subject("max_peak")
    assert subject.scheduler_name == "mutant-max-peak"
    command = subject.command("/venv/python", Path("/repo"))
    assert command.startswith("env PYTHONPATH=/repo /venv/python -m tests.mutants.run max_peak --kubeconfig {kubeconfig}")
    assert "{scheduler_name}" in command and "--enable-resize" in command
    assert "-m reference_scheduler.main --kubeconfig" in Subject(REFERENCE).command()


def test_concurrent_kill_tables_never_share_a_scheduler_name() -> None:
    assert Subject("max_peak", run_id_for(41)).scheduler_name == "mutant-max-peak-k41"
    assert Subject("max_peak", run_id_for(41)).scheduler_name != Subject("max_peak", run_id_for(42)).scheduler_name


def test_the_suite_run_keeps_the_cluster_and_can_be_limited_to_scenarios() -> None:
    argv = pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=("parallel_peak", "exact_headroom"), python="/venv/bin/python")
    assert argv[0] == "/venv/bin/pytest"
    assert "--keep-cluster" in argv and "--all-features" in argv
    assert argv[argv.index("--scheduler-name") + 1] == "mutant-max-peak"
    assert argv[argv.index("-k") + 1] == "test_parallel_peak or test_exact_headroom"
    assert "-k" not in pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=())


@pytest.mark.parametrize(
    "name, outcome, shown",
    [
        ("max-peak-failed", "failed", "killed"),
        ("max-peak-passed", "passed", "survived"),
        ("skipped", "skipped", "skipped"),
        ("not-run", None, "not run"),
        ("reference-passed", "passed", "pass"),
        ("reference-failed", "failed", "FAIL"),
        ("max-peak-flaky", FLAKY_OUTCOME, "flaky"),
    ],
)
def test_cells(name: str, outcome: str | None, shown: str) -> None:
    subject = Subject(REFERENCE if name.startswith("reference") else "max_peak")
    assert cell(subject, outcome) == shown


def test_all_good_means_no_problem() -> None:
    outcomes = {REFERENCE: {"parallel_peak": "passed"}, "max_peak": {"parallel_peak": "failed"}}
    assert problems(outcomes) == []


def test_a_failing_reference_and_a_surviving_mutant_are_problems() -> None:
    outcomes = {REFERENCE: {"parallel_peak": "failed"}, "max_peak": {"parallel_peak": "passed", "colocation": "passed"}}
    assert problems(outcomes) == [
        "the reference failed parallel_peak: fix the reference or the scenario",
        "mutant max_peak survived every scenario it met: add a scenario that catches it",
    ]


def test_a_mutant_its_own_scenario_misses_is_a_problem_even_if_another_kills_it() -> None:
    outcomes = {"max_peak": {"parallel_peak": "passed", "peak_blocks_b": "failed"}}
    assert problems(outcomes) == ["mutant max_peak survived parallel_peak, the scenario written to catch it: fix the scenario or faults.py"]


def test_the_table_has_a_row_per_subject_and_names_the_killers() -> None:
    outcomes = {REFERENCE: {"a": "passed", "b": "passed"}, "max_peak": {"a": "failed", "b": "passed"}}
    lines = render_table(outcomes)
    assert lines[0] == "| scheduler | `a` | `b` | killed by |"
    assert lines[2] == "| `reference` | pass | pass | — |"
    assert lines[3] == "| `max_peak` | **killed** | survived | a |"


def test_the_doc_says_how_to_reproduce() -> None:
    text = render_doc({REFERENCE: {"a": "passed"}}, wall_seconds={REFERENCE: 30.0}, total_seconds=30.0, when="now")
    assert "make mutants" in text and "--scheduler-name mutant-max-peak" in text and "reference 30 s" in text


def test_the_doc_quotes_why_each_mutant_died_in_its_own_scenario() -> None:
    reasons = {"max_peak": "AssertionError: group source reserves\n a peak of 1500m CPU, expected 3000m"}
    text = render_doc({"max_peak": {"parallel_peak": "failed"}}, wall_seconds={}, total_seconds=1.0, when="now", reasons=reasons)
    assert "- `max_peak` in `parallel_peak`: AssertionError: group source reserves a peak of 1500m CPU, expected 3000m" in text


def test_smoke_is_a_few_mutants_against_their_own_scenarios_without_the_doc() -> None:
    args = parse_args(["--smoke"])
    assert args.mutants == list(SMOKE) and args.no_reference and args.output == "none"
    assert args.scenarios == "parallel_peak,finally_in_group,peak_blocks_b"


def test_a_failure_counts_only_if_its_rerun_fails_too() -> None:
    first = {"a": "failed", "b": "failed", "c": "passed"}
    assert confirmed(first, {"a": "failed", "b": "passed"}) == {"a": "failed", "b": FLAKY_OUTCOME, "c": "passed"}


def test_a_flaky_kill_is_no_kill_and_a_flaky_reference_is_a_problem() -> None:
    outcomes = {REFERENCE: {"parallel_peak": FLAKY_OUTCOME}, "max_peak": {"parallel_peak": FLAKY_OUTCOME}}
    assert problems(outcomes) == [
        "the reference failed parallel_peak once and passed it on a rerun: is the cluster overloaded? run again",
        "mutant max_peak survived every scenario it met: add a scenario that catches it",
    ]


def test_the_rule_table_lists_every_rule_with_its_mutants_and_their_killers() -> None:
    from tests.mutants.faults import MUTANTS, RULES

    lines = render_rule_table({"max_peak": {"parallel_peak": "failed", "colocation": "passed"}, "ignores_foreign_pods": {}})
    # One line per mutant that names its rule: a pending one without a rule yet (the held-out batch) has no row.
    assert len(lines) == 2 + sum(1 for m in MUTANTS.values() if m.rule or not m.pending)
    assert all(any(f"`{rule}`" in line for line in lines) for rule in RULES)
    (peak,) = [line for line in lines if "`max_peak`" in line]
    assert "| parallel_peak |" in peak and "`parallel_peak`: killed" in peak
    (cordon,) = [line for line in lines if "`ignores_foreign_pods`" in line]
    assert "**nothing**" in cordon and "`plain_pods_beside`: not run" in cordon
    assert "not run" in next(line for line in lines if "`stale_node`" in line)


def test_repeated_runs_count_kills_and_a_miss_is_a_problem() -> None:
    counts = {"max_peak": kill_counts([{"parallel_peak": "failed"}, {"parallel_peak": "passed"}, {"parallel_peak": "failed"}])}
    assert counts == {"max_peak": {"parallel_peak": 2}}
    assert "| `max_peak` | 6.concurrent_sum | `parallel_peak` | 2/3 | yes |" in render_repeat_table(counts, 3)
    assert repeat_problems(counts, 3) == ["mutant max_peak was killed by parallel_peak in 2 of 3 runs, not every run"]
    assert repeat_problems({"max_peak": {"parallel_peak": 3}, REFERENCE: {"colocation": 0}}, 3) == []
    assert repeat_problems({REFERENCE: {"colocation": 1}}, 3) == ["the reference failed colocation in 1 of 3 runs"]


def test_own_runs_each_mutant_against_its_own_scenario_and_the_reference_against_the_given_ones() -> None:
    assert scenarios_for("max_peak", given=["colocation"], own=True) == ["parallel_peak"]
    assert scenarios_for(REFERENCE, given=["colocation"], own=True) == ["colocation"]
    assert scenarios_for("max_peak", given=["colocation"], own=False) == ["colocation"]
    assert parse_args(["max_peak", "--own", "--repeat", "10"]).output == "none"


def test_one_session_of_repeats_splits_into_runs_and_a_missing_repeat_is_no_kill() -> None:
    outcomes = {"parallel_peak[1-3]": "failed", "parallel_peak[3-3]": "failed"}
    runs = split_repeats(outcomes, 3)
    assert runs == [{"parallel_peak": "failed"}, {}, {"parallel_peak": "failed"}]
    counts = {"max_peak": kill_counts(runs)}
    assert repeat_problems(counts, 3) == ["mutant max_peak was killed by parallel_peak in 2 of 3 runs, not every run"]
    assert split_repeats({"colocation": "passed"}, 1) == [{"colocation": "passed"}]


def test_repeats_in_one_session_ask_pytest_repeat_for_the_count() -> None:
    argv = pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=["parallel_peak"], count=10)
    assert argv[-2:] == ["--count=10", "--repeat-scope=function"]
    assert "--count=10" not in pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=["parallel_peak"])


def test_a_first_kill_run_ends_at_the_first_failing_scenario() -> None:
    argv = pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=(), workers=3, first_kill=True)
    assert argv[-3:] == ["-n", "3", "--maxfail=1"]
    assert "--maxfail=1" not in pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=())


def test_a_default_features_run_leaves_the_opt_in_features_out() -> None:
    assert "--all-features" in pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=())
    assert "--all-features" not in pytest_argv(Subject("max_peak"), report=Path("r.yaml"), scenarios=(), all_features=False)
    assert parse_args(["max_peak", "--default-features"]).default_features


def test_workers_default_to_three_for_repeats_and_to_one_process_otherwise() -> None:
    assert parse_args(["max_peak", "--own", "--repeat", "10"]).workers == 3
    assert parse_args(["max_peak"]).workers == 0
    assert parse_args(["--smoke"]).workers == 0
    assert parse_args(["max_peak", "--workers", "2", "--first-kill"]).workers == 2


def test_a_mutant_whose_own_scenario_never_reported_is_a_problem() -> None:
    assert repeat_problems({"max_peak": {"parallel_peak": 0}}, 10) == ["mutant max_peak was killed by parallel_peak in 0 of 10 runs, not every run"]


def test_the_repeat_doc_counts_a_rule_covered_only_by_a_full_kill() -> None:
    counts = {"max_peak": {"parallel_peak": 10}, "double_counted_headroom": {"exact_headroom": 9}}
    doc = render_repeat_doc(counts, 10, when="today", reasons={"max_peak": ("B landed on n0", 4.25)})
    assert "| `max_peak` | a group's peak is its largest task" in doc.replace("\n", "\n")
    assert "| `parallel_peak` | **10/10** | 4.2 | B landed on n0 |" in doc
    assert "| `exact_headroom` | 9/10 (MISSED) |" in doc
    assert "**1 of " in doc


def test_the_repeat_doc_quotes_the_first_kill_and_the_mean_time_from_the_sessions_report(tmp_path: Path) -> None:
    from harness.report.conformance_report import write_report
    from tests.mutants.kill_table import REPORTS_DIR, repeat_reasons
    from tests.unit.test_conformance_report import outcome, report_of

    report = report_of(
        outcome("parallel_peak[1-2]", "passed", duration=3.0),
        outcome("parallel_peak[2-2]", "failed", duration=5.0, message="B landed on n0"),
    )
    (tmp_path / REPORTS_DIR).mkdir(parents=True)
    write_report(report, tmp_path / REPORTS_DIR / "max_peak-x2.yaml")
    assert repeat_reasons(["max_peak", "not_measured"], 2, root=tmp_path) == {"max_peak": ("B landed on n0", 4.0)}
