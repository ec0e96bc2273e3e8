"""report: what a suite run leaves behind, built from plain data and unit-tested without a cluster.

``conformance_report`` turns the scenarios' outcomes into a ConformanceReport
(YAML, one per run) and a short table for the terminal, with ``attempts``
(a scenario run again: flaky or not) and ``timings`` (the session's
latencies); ``timeline`` turns
pod and ReservationRecord observations into one SVG per scenario;
``allure_metadata`` writes the Allure results folder's environment,
categories and executor.
"""

from harness.report.attempts import Attempt, final_outcome
from harness.report.conformance_report import (
    API_VERSION,
    KIND,
    PLACEMENT_ONLY_NOTE,
    PROFILE_NAME,
    ConformanceReport,
    Implementation,
    Mode,
    Outcome,
    ProfileReport,
    Result,
    Statistics,
    Status,
    SuiteInfo,
    TestOutcome,
    build_report,
    read_report,
    result_of,
    summary_lines,
    write_report,
)
from harness.report.timeline import (
    UNSCHEDULED_LANE,
    NodeCapacity,
    PodInterval,
    ReservationBand,
    TimelineRecorder,
    render_timeline,
)
from harness.report.timings import LatencySummary, Timings, nearest_rank

__all__ = [
    "API_VERSION",
    "Attempt",
    "KIND",
    "PLACEMENT_ONLY_NOTE",
    "PROFILE_NAME",
    "UNSCHEDULED_LANE",
    "ConformanceReport",
    "Implementation",
    "LatencySummary",
    "Mode",
    "NodeCapacity",
    "Outcome",
    "PodInterval",
    "ProfileReport",
    "ReservationBand",
    "Result",
    "Statistics",
    "Status",
    "SuiteInfo",
    "TestOutcome",
    "TimelineRecorder",
    "Timings",
    "build_report",
    "final_outcome",
    "nearest_rank",
    "read_report",
    "render_timeline",
    "result_of",
    "summary_lines",
    "write_report",
]
