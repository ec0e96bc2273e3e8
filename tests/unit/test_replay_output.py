"""rescon replay's output: the per-run lines, the violations handed to their runs, JUnit XML and the ConformanceReport."""

from __future__ import annotations

import doctest
from pathlib import Path
from types import ModuleType
from xml.etree import ElementTree

import pytest

from harness.monitor.latencies import Latencies
from harness.replay import (
    attribution,
    caveats,
    classify,
    defaulting,
    junit,
    loading,
    names,
    nodes,
    output,
    pipeline_tasks,
    placement,
    references,
    routing,
    run_manifest,
    steps,
    workspace_needs,
)
from harness.replay.attribution import attributed, pod_runs
from harness.replay.judging import RunResult
from harness.replay.junit import junit_xml
from harness.replay.output import plan_line, result_line, summary_line
from harness.replay.plan import PlannedRun
from harness.replay.report import replay_report
from harness.report.conformance_report import Implementation, Mode, Result, SuiteInfo, read_report, write_report
from harness.report.outcomes import Outcome

pytestmark = pytest.mark.unit

RESULTS = [
    RunResult("build-c1", "tekton/build.yaml#1", Outcome.PASSED, 14.25, groups=2),
    RunResult("build-c2", "tekton/build.yaml#1", Outcome.FAILED, 31.0, groups=2,
              problems=("node-overcommitted at 4.2s: node w1 holds 5000m CPU, 0Mi\n  of 4000m CPU", "group source's pods ran on w1, but its record names node w2")),
    RunResult("nightly", "tekton/nightly.yaml#2", Outcome.ERROR, 3.0, problems=("Tekton refused it before any TaskRun: False/CouldntGetTask: x",),
              notes=("peaks not judged: the PipelineRun has no pipelineSpec yet",)),
]


def test_the_plan_line_says_what_cannot_be_simulated_or_that_nothing_stands_in() -> None:
    quiet = PlannedRun("lint", "tekton/lint.yaml#1", {}, (), {})
    noted = PlannedRun("release", "tekton/release.yaml#3", {}, ('result build.digest read by deploy gets "replay-placeholder"', "written PipelineRunPending: started at once"), {})
    assert plan_line(quiet) == "lint (tekton/lint.yaml#1): simulated as written"
    assert plan_line(noted) == ('release (tekton/release.yaml#3): simulated, but: result build.digest read by deploy gets "replay-placeholder"; '
                                "written PipelineRunPending: started at once")


def test_a_run_line_has_the_verdict_the_wall_time_and_every_problem_on_one_line() -> None:
    assert [result_line(r) for r in RESULTS] == [
        "PASSED    14.2s  build-c1  2 groups held to their peaks, no violation",
        "FAILED    31.0s  build-c2  node-overcommitted at 4.2s: node w1 holds 5000m CPU, 0Mi of 4000m CPU; group source's pods ran on w1, but its record names node w2",
        "ERROR      3.0s  nightly  Tekton refused it before any TaskRun: False/CouldntGetTask: x (peaks not judged: the PipelineRun has no pipelineSpec yet)",
    ]
    assert result_line(RunResult("one", "a#1", Outcome.PASSED, 1.0, groups=1)).endswith("1 group held to their peaks, no violation")


def test_a_very_long_line_is_cut_with_an_ellipsis() -> None:
    line = result_line(RunResult("x", "a#1", Outcome.FAILED, 1.0, problems=("y" * 1000,)))
    assert len(line) == output.LINE_WIDTH and line.endswith("…")


def test_the_summary_counts_each_verdict() -> None:
    assert summary_line(RESULTS, 48.04) == "replay: 3 runs: 1 passed, 1 failed, 1 errors in 48.0s"


def test_violations_go_to_the_runs_whose_pods_or_records_they_name() -> None:
    pods = pod_runs([
        {"metadata": {"namespace": "ns", "name": "a-build-pod", "labels": {"tekton.dev/pipelineRun": "a"}}},
        {"metadata": {"namespace": "ns", "name": "b-long-name-shortened-0f3c1-pod", "labels": {"tekton.dev/pipelineRun": "b"}}},
        {"metadata": {"namespace": "ns", "name": "filler"}},
    ])
    assert pods == {"ns/a-build-pod": "a", "ns/b-long-name-shortened-0f3c1-pod": "b"}
    found = attributed(
        ["record-after-bind at 1.0s: ...", "groups-differ at 2.0s: ...", "node-overcommitted at 3.0s: ...", "release-late at 9.0s: ..."],
        [("pod ns/b-long-name-shortened-0f3c1-pod",), ("record ns/a",), ("node w1",), ("group g of record ns/c",)],
        pods, ["a", "b", "c"],
    )
    assert found == {
        "a": ["groups-differ at 2.0s: ...", "node-overcommitted at 3.0s: ..."],
        "b": ["record-after-bind at 1.0s: ...", "node-overcommitted at 3.0s: ..."],
        "c": ["node-overcommitted at 3.0s: ...", "release-late at 9.0s: ..."],
    }


def test_junit_has_one_testcase_per_run_with_failures_and_errors() -> None:
    root = ElementTree.fromstring(junit_xml(RESULTS, seconds=48.0))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("time")) == ("3", "1", "1", "48.000")
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("file"), c.get("time")) for c in cases] == [
        ("build-c1", "tekton/build.yaml#1", "14.250"), ("build-c2", "tekton/build.yaml#1", "31.000"), ("nightly", "tekton/nightly.yaml#2", "3.000")]
    assert list(cases[0]) == []
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message", "").startswith("node-overcommitted at 4.2s")
    assert failure.text is not None and failure.text.endswith("but its record names node w2")
    assert cases[2].find("error") is not None


def test_the_report_counts_the_runs_in_the_core_level_and_reads_back(tmp_path: Path) -> None:
    report = replay_report(
        RESULTS, implementation=Implementation("example", "my-scheduler", "", "v1", scheduler_name="my-scheduler"),
        suite=SuiteInfo("0.1.0", "v1.37.2", "v1.15.0", "local"), mode=Mode.RESERVATION_STATE,
        supported_features=["Colocation", "PeakReservation", "ReservationRecords"], wall_time=48.04,
        latencies=[Latencies(claim=(0.1, 0.3)), Latencies(claim=(0.2,))],
    )
    core = report.profile().core
    assert (core.result, core.statistics.passed, core.statistics.failed, core.statistics.errors) == (Result.ERROR, 1, 1, 1)  # an error leaves the level without a verdict, as in the suite
    assert core.failed_tests == ("build-c2", "nightly")  # errors are listed with the failures, as in the suite
    assert [t.name for t in report.tests] == ["build-c1", "build-c2", "nightly"]
    assert report.tests[2].description == "replay of tekton/nightly.yaml#2"
    assert report.tests[2].message == ("Tekton refused it before any TaskRun: False/CouldntGetTask: x; "
                                       "peaks not judged: the PipelineRun has no pipelineSpec yet")
    assert report.tests[0].duration_seconds == 14.25 and report.wall_time_seconds == 48.04
    assert report.timings is not None and report.timings.claim.count == 3 and report.timings.claim.max == 0.3
    assert read_report(write_report(report, tmp_path / "replay-report.yaml")) == report


@pytest.mark.parametrize(
    "module",
    [attribution, caveats, classify, defaulting, junit, loading, names, nodes, output, pipeline_tasks, placement, references, routing, run_manifest,
     steps, workspace_needs],
    ids=lambda m: m.__name__.rsplit(".", 1)[-1],
)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
