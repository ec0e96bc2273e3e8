"""ConformanceReport: result rules, core/extended sorting, the YAML file and the terminal table."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from harness.report.attempts import Attempt
from harness.report.conformance_report import (
    API_VERSION,
    KIND,
    PLACEMENT_ONLY_NOTE,
    PROFILE_NAME,
    ConformanceReport,
    Implementation,
    Mode,
    Outcome,
    Result,
    Statistics,
    SuiteInfo,
    TestOutcome,
    build_report,
    read_report,
    result_of,
    summary_lines,
    unsupported_message,
    write_report,
)
from harness.report.timings import LatencySummary, Timings

pytestmark = pytest.mark.unit

IMPLEMENTATION = Implementation(
    organization="example",
    project="tkn-scheduler",
    url="https://example.invalid/tkn-scheduler",
    version="v0.1.0",
    contact=("@example/ci",),
    scheduler_name="tkn-scheduler",
)
SUITE = SuiteInfo(
    version="0.1.0", kubernetes_version="v1.31.0", tekton_version="v1.15.0", cluster="local", coschedule="disabled"
)
CORE = frozenset({"Reservation", "Placement"})
DATE = datetime(2026, 11, 30, 13, 0, 0, tzinfo=UTC)


def outcome(name: str, result: str, *features: str, duration: float = 1.0, message: str = "") -> TestOutcome:
    return TestOutcome(name, f"{name} does its thing", features or ("Reservation",), Outcome(result), duration, message)


def report_of(
    *outcomes: TestOutcome, supported: frozenset[str] = frozenset(), mode: Mode = Mode.RESERVATION_STATE
) -> ConformanceReport:
    return build_report(
        outcomes,
        implementation=IMPLEMENTATION,
        suite=SUITE,
        mode=mode,
        supported_features=supported,
        core_features=CORE,
        wall_time=12.3456,
        date=DATE,
    )


@pytest.mark.parametrize(
    ("passed", "failed", "skipped", "result"),
    [
        pytest.param(3, 0, 0, Result.SUCCESS, id="all-passed-is-success"),
        pytest.param(3, 0, 2, Result.SUCCESS, id="skips-do-not-lower-success"),
        pytest.param(2, 1, 0, Result.FAILURE, id="one-failed-is-failure-as-in-gateway-api"),
        pytest.param(9, 1, 1, Result.FAILURE, id="nine-passed-do-not-make-one-failure-partial"),
        pytest.param(0, 2, 0, Result.FAILURE, id="none-passed-is-failure"),
        pytest.param(0, 1, 3, Result.FAILURE, id="skips-do-not-rescue-failure"),
        pytest.param(0, 0, 4, Result.SKIPPED, id="only-skips-is-skipped"),
        pytest.param(0, 0, 0, Result.SKIPPED, id="nothing-at-all-is-skipped"),
    ],
)
def test_result_of(passed: int, failed: int, skipped: int, result: Result) -> None:
    assert result_of(Statistics(passed, failed, skipped)) is result


@pytest.mark.parametrize(
    ("outcomes", "core_result", "extended_result"),
    [
        pytest.param(["passed", "passed"], Result.SUCCESS, Result.SKIPPED, id="core-only-success"),
        pytest.param(["passed", "failed"], Result.FAILURE, Result.SKIPPED, id="core-one-failed"),
        pytest.param(["failed", "skipped"], Result.FAILURE, Result.SKIPPED, id="core-only-failure"),
        pytest.param(["skipped"], Result.SKIPPED, Result.SKIPPED, id="nothing-ran"),
    ],
)
def test_core_results_from_outcomes(outcomes: list[str], core_result: Result, extended_result: Result) -> None:
    report = report_of(*(outcome(f"t{i}", o) for i, o in enumerate(outcomes)))
    profile = report.profile()
    assert (profile.core.result, profile.extended.result) == (core_result, extended_result)


def test_scenarios_sort_into_core_and_extended() -> None:
    report = report_of(
        outcome("reserve-basic", "passed", "Reservation"),
        outcome("placement-fit", "failed", "Placement", "Reservation", message="pod stayed Pending"),
        outcome("retry-same-node", "passed", "Reservation", "Retries"),
        outcome("retry-timeout", "failed", "Retries"),
        outcome("matrix-fanout", "skipped", "Matrix", message="no matrix today"),
        supported=frozenset({"Retries", "Matrix", "Reservation"}),
    )
    profile = report.profile(PROFILE_NAME)
    assert profile.core.statistics == Statistics(passed=1, failed=1, skipped=0)
    assert profile.core.failed_tests == ("placement-fit",)
    assert profile.core.result is Result.FAILURE
    assert profile.extended.statistics == Statistics(passed=1, failed=1, skipped=1)
    assert profile.extended.failed_tests == ("retry-timeout",)
    assert profile.extended.skipped_tests == ("matrix-fanout",)
    assert profile.extended.result is Result.FAILURE
    # Core features are not repeated as extended support.
    assert profile.extended.supported_features == ("Matrix", "Retries")
    assert profile.extended.unsupported_features == ()


def test_a_scenario_needing_an_unsupported_feature_is_skipped_and_the_feature_listed() -> None:
    report = report_of(
        outcome("resize-grow", "passed", "Reservation", "Resize"),
        outcome("resize-shrink", "skipped", "Resize", message="suite does not support Resize"),
        outcome("retry-same-node", "passed", "Retries"),
        supported=frozenset({"Retries"}),
    )
    extended = report.profile().extended
    assert extended.unsupported_features == ("Resize",)
    assert extended.supported_features == ("Retries",)
    assert extended.statistics == Statistics(passed=1, failed=0, skipped=2)
    assert extended.skipped_tests == ("resize-grow", "resize-shrink")
    assert extended.result is Result.SUCCESS
    by_name = {t.name: t for t in report.tests}
    assert by_name["resize-grow"].outcome is Outcome.SKIPPED
    assert by_name["resize-grow"].message.startswith(unsupported_message(["Resize"]))
    assert "passed" in by_name["resize-grow"].message
    # A runner's own skip keeps its message.
    assert by_name["resize-shrink"].message == "suite does not support Resize"


def test_duplicate_scenario_names_are_refused() -> None:
    with pytest.raises(ValueError, match="'reserve-basic'"):
        report_of(outcome("reserve-basic", "passed"), outcome("reserve-basic", "failed"))


def test_durations_are_kept_to_the_millisecond_and_the_date_is_utc() -> None:
    report = report_of(outcome("reserve-basic", "passed", duration=1.23456))
    assert report.tests[0].duration_seconds == 1.235
    assert report.wall_time_seconds == 12.346
    assert report.date == "2026-11-30T13:00:00Z"


def test_unknown_cluster_kind_names_the_choices() -> None:
    with pytest.raises(ValueError, match="local, kind, existing"):
        SuiteInfo(version="0.1.0", kubernetes_version="v1.31.0", tekton_version="v1.15.0", cluster="minikube")


def test_outcome_accepts_the_plain_string() -> None:
    assert TestOutcome("a", "b", ["Reservation"], "failed").outcome is Outcome.FAILED  # type: ignore[arg-type]


def test_yaml_round_trip(tmp_path: Path) -> None:
    report = report_of(
        outcome("reserve-basic", "passed", duration=4.2),
        outcome("placement-fit", "failed", "Placement", message="pod run-1-build-pod stayed Pending\nsecond line"),
        outcome("resize-grow", "passed", "Resize"),
        supported=frozenset({"Retries"}),
    )
    path = write_report(report, tmp_path / "reports" / "conformance-report.yaml")
    assert path.exists()
    assert read_report(path) == report


def test_yaml_has_the_required_keys(tmp_path: Path) -> None:
    report = report_of(outcome("reserve-basic", "passed"), mode=Mode.PLACEMENT_ONLY)
    text = write_report(report, tmp_path / "report.yaml").read_text()
    assert 'date: "2026-11-30T13:00:00Z"' in text or "date: '2026-11-30T13:00:00Z'" in text
    doc = yaml.safe_load(text)
    assert list(doc) == [
        "apiVersion",
        "kind",
        "date",
        "implementation",
        "suite",
        "mode",
        "modeNote",
        "profiles",
        "tests",
        "wallTimeSeconds",
    ]
    assert (doc["apiVersion"], doc["kind"], doc["mode"]) == (API_VERSION, KIND, "placement-only")
    assert set(doc["implementation"]) == {"organization", "project", "url", "version", "contact", "schedulerName"}
    assert set(doc["suite"]) == {"version", "kubernetesVersion", "tektonVersion", "cluster", "coschedule"}
    (profile,) = doc["profiles"]
    assert profile["name"] == PROFILE_NAME
    assert set(profile["core"]) == {"result", "statistics", "failedTests", "skippedTests", "flakyTests"}
    assert set(profile["extended"]) == {
        "result",
        "statistics",
        "supportedFeatures",
        "unsupportedFeatures",
        "failedTests",
        "skippedTests",
        "flakyTests",
    }
    assert profile["core"]["statistics"] == {"Passed": 1, "Failed": 0, "Skipped": 0, "Errors": 0, "Flaky": 0}
    assert profile["summary"] == "Core tests succeeded (1 passed). Extended tests were not run."
    (test,) = doc["tests"]
    assert set(test) == {"name", "description", "features", "outcome", "duration_seconds", "message"}


def test_read_report_refuses_another_kind(tmp_path: Path) -> None:
    path = tmp_path / "other.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\n")
    with pytest.raises(ValueError, match="not a ConformanceReport"):
        read_report(path)


def test_summary_lines() -> None:
    report = report_of(
        outcome("reserve-basic", "passed", duration=4.2),
        outcome("placement-fit", "failed", "Placement", duration=12.3, message="pod stayed Pending\nmore detail"),
        outcome("resize-grow", "skipped", "Resize", duration=0.0),
        mode=Mode.PLACEMENT_ONLY,
    )
    lines = summary_lines(report)
    assert lines[0].split() == ["PASSED", "4.20s", "reserve-basic"]
    assert lines[1].split()[:3] == ["FAILED", "12.30s", "placement-fit"]
    assert lines[1].endswith("pod stayed Pending")
    assert lines[2].startswith("SKIPPED") and "resize-grow" in lines[2]
    assert lines[3] == "Reservation core: failure (Passed 1, Failed 1, Skipped 0)"
    assert lines[4] == "Reservation extended: skipped (Passed 0, Failed 0, Skipped 1); unsupported: Resize"
    assert lines[5] == PLACEMENT_ONLY_NOTE
    assert len(lines) == 6


@pytest.mark.parametrize(
    ("statistics", "result"),
    [
        pytest.param(Statistics(passed=5, errors=1), Result.ERROR, id="one-setup-error-means-no-success"),
        pytest.param(Statistics(passed=0, failed=3, errors=1), Result.ERROR, id="errors-outrank-failures"),
        pytest.param(Statistics(skipped=2, errors=2), Result.ERROR, id="errors-outrank-skips"),
    ],
)
def test_a_setup_error_is_never_a_verdict(statistics: Statistics, result: Result) -> None:
    assert result_of(statistics) is result


def test_setup_errors_are_counted_apart_and_named() -> None:
    report = report_of(outcome("a", "passed"), outcome("b", "error", message="the scheduler under test exited at start"))
    core = report.profile().core
    assert core.statistics == Statistics(passed=1, failed=0, skipped=0, errors=1)
    assert core.result is Result.ERROR and core.failed_tests == ("b",)
    assert "Reservation core: error (Passed 1, Failed 0, Skipped 0, Errors 1)" in summary_lines(report)
    assert Statistics.from_dict(core.statistics.to_dict()) == core.statistics
    assert Statistics.from_dict({"Passed": 1, "Failed": 0, "Skipped": 0}).errors == 0


def test_a_placement_only_report_says_so_in_the_yaml_and_a_full_one_does_not() -> None:
    placement = report_of(outcome("reserve-basic", "passed"), mode=Mode.PLACEMENT_ONLY).to_dict()
    assert placement["mode"] == "placement-only" and placement["modeNote"] == PLACEMENT_ONLY_NOTE
    assert "modeNote" not in report_of(outcome("reserve-basic", "passed")).to_dict()


# --- flaky scenarios (--rerun-failures) ---


@pytest.mark.parametrize(
    ("statistics", "result"),
    [
        pytest.param(Statistics(passed=3, flaky=1), Result.PARTIAL, id="a-flaky-scenario-is-never-success"),
        pytest.param(Statistics(flaky=2), Result.PARTIAL, id="only-flaky-is-partial"),
        pytest.param(Statistics(passed=3, failed=1, flaky=1), Result.FAILURE, id="a-failure-outranks-flaky"),
        pytest.param(Statistics(passed=3, flaky=1, errors=1), Result.ERROR, id="a-setup-error-outranks-flaky"),
        pytest.param(Statistics(flaky=1, skipped=4), Result.PARTIAL, id="skips-do-not-hide-flaky"),
    ],
)
def test_a_flaky_scenario_makes_its_level_partial(statistics: Statistics, result: Result) -> None:
    assert result_of(statistics) is result


FIRST = Attempt(Outcome.FAILED, 31.2, seed=None, namespace="conf-burst-1a2b3c", message="contract monitor: group-split at 4.2s", log="WARNING x")
SECOND = Attempt(Outcome.PASSED, 29.8, seed=None, namespace="conf-burst-4d5e6f")


def test_flaky_scenarios_are_counted_apart_named_and_keep_their_attempts() -> None:
    flaky = TestOutcome("burst", "five runs at once", ("Reservation",), Outcome.FLAKY, 29.8, "", (FIRST, SECOND))
    report = report_of(outcome("a", "passed"), flaky, outcome("resize", "flaky", "Resize"), supported=frozenset({"Resize"}))
    core, extended = report.profile().core, report.profile().extended
    assert core.statistics == Statistics(passed=1, flaky=1) and core.statistics.ran == 2
    assert (core.result, core.flaky_tests, core.failed_tests) == (Result.PARTIAL, ("burst",), ())
    assert (extended.result, extended.flaky_tests) == (Result.PARTIAL, ("resize",))
    assert report.profile().summary == "Core tests partially succeeded (1 passed, 1 flaky). Extended tests partially succeeded (0 passed, 1 flaky)."
    lines = summary_lines(report)
    assert lines[1].split()[:3] == ["FLAKY", "29.80s", "burst"]
    assert "Reservation core: partial (Passed 1, Failed 0, Skipped 0, Flaky 1)" in lines
    test = report.to_dict()["tests"][1]
    assert test["outcome"] == "flaky"
    assert test["attempts"] == [
        {"outcome": "failed", "duration_seconds": 31.2, "seed": None, "namespace": "conf-burst-1a2b3c",
         "message": "contract monitor: group-split at 4.2s", "log": "WARNING x"},
        {"outcome": "passed", "duration_seconds": 29.8, "seed": None, "namespace": "conf-burst-4d5e6f", "message": "", "log": ""},
    ]
    assert "attempts" not in report.to_dict()["tests"][0], "a scenario run once has no attempts"


def test_a_flaky_scenario_of_an_unsupported_feature_is_still_a_skip() -> None:
    report = report_of(outcome("resize", "flaky", "Resize"))
    assert report.profile().extended.statistics == Statistics(skipped=1)
    assert report.tests[0].outcome is Outcome.SKIPPED


def test_an_older_report_without_flaky_counts_or_timings_still_reads() -> None:
    old = report_of(outcome("a", "passed")).to_dict()
    for level in ("core", "extended"):
        del old["profiles"][0][level]["flakyTests"]
        del old["profiles"][0][level]["statistics"]["Flaky"]
    read = ConformanceReport.from_dict(old)
    assert read.profile().core.statistics == Statistics(passed=1)
    assert read.timings is None


# --- timings: for readers, never part of a verdict ---

TIMINGS = Timings(LatencySummary(41, 0.112, 0.53, 0.53), LatencySummary(9, 0.204, 1.377, 1.377), LatencySummary(0))


def test_timings_decide_nothing() -> None:
    outcomes = (outcome("a", "passed"), outcome("b", "failed"))
    without = report_of(*outcomes)
    with_timings = build_report(
        outcomes, implementation=IMPLEMENTATION, suite=SUITE, mode=Mode.RESERVATION_STATE, supported_features=(),
        core_features=CORE, wall_time=12.3456, date=DATE, timings=TIMINGS,
    )
    assert with_timings.profiles == without.profiles and with_timings.tests == without.tests
    assert with_timings.timings == TIMINGS and without.timings is None


def test_timings_are_written_before_the_wall_time_and_read_back(tmp_path: Path) -> None:
    report = build_report(
        [outcome("a", "passed")], implementation=IMPLEMENTATION, suite=SUITE, mode=Mode.RESERVATION_STATE, supported_features=(),
        core_features=CORE, wall_time=1.0, date=DATE, timings=TIMINGS,
    )
    doc = report.to_dict()
    assert list(doc)[-2:] == ["timings", "wallTimeSeconds"]
    assert doc["timings"]["requeueSeconds"] == {"count": 0, "p50": None, "p99": None, "max": None}
    assert read_report(write_report(report, tmp_path / "r.yaml")) == report
    assert summary_lines(report)[-3:] == [
        "claim latency: p50 0.112s, p99 0.530s, max 0.530s (41 samples)",
        "release latency: p50 0.204s, p99 1.377s, max 1.377s (9 samples)",
        "requeue latency: no sample",
    ]
    assert "timings" not in report_of(outcome("a", "passed")).to_dict()
