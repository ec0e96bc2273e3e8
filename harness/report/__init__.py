"""report: what a suite run leaves behind, built from plain data and unit-tested without a cluster.

``conformance_report`` turns the scenarios' outcomes into a ConformanceReport
(YAML, one per run) and a short table for the terminal; ``timeline`` turns
pod and ReservationRecord observations into one PNG per scenario;
``allure_metadata`` writes the Allure results folder's environment,
categories and executor.
"""

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

__all__ = [
    "API_VERSION",
    "KIND",
    "PLACEMENT_ONLY_NOTE",
    "PROFILE_NAME",
    "UNSCHEDULED_LANE",
    "ConformanceReport",
    "Implementation",
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
    "build_report",
    "read_report",
    "render_timeline",
    "result_of",
    "summary_lines",
    "write_report",
]
