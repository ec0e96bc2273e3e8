"""Reporting glue: the session's outcomes -> the ConformanceReport file and the terminal summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.cluster import tekton
from harness.report.conformance_report import (
    Implementation,
    Mode,
    Outcome,
    SuiteInfo,
    TestOutcome,
    build_report,
    summary_lines,
    write_report,
)
from harness.suite.features import CORE_FEATURES, Feature

if TYPE_CHECKING:
    from harness.plugin import SuiteState

SUITE_VERSION = "0.1.0"


def write_conformance_report(state: SuiteState, *, wall_time: float) -> list[str]:
    """write_conformance_report() builds the report, writes it if asked, and returns the summary lines."""
    config = state.config
    outcomes = [
        TestOutcome(o.name or o.scenario.name, o.scenario.description, tuple(f.value for f in o.scenario.features), Outcome(o.outcome), o.duration, o.message)
        for o in state.outcomes.values()
    ]
    mode = Mode.RESERVATION_STATE if Feature.RESERVATION_RECORDS in config.supported else Mode.PLACEMENT_ONLY
    report = build_report(
        outcomes,
        implementation=Implementation(scheduler_name=config.scheduler_name, **config.implementation),
        suite=SuiteInfo(
            version=SUITE_VERSION,
            kubernetes_version=state.versions.get("kubernetes", "unknown"),
            tekton_version=tekton.version(),
            cluster=config.cluster,
            coschedule=config.coschedule,
        ),
        mode=mode,
        supported_features=sorted(f.value for f in config.supported),
        core_features=sorted(f.value for f in CORE_FEATURES),
        wall_time=wall_time,
    )
    lines = summary_lines(report)
    if config.report_output is not None:
        path = write_report(report, config.report_output)
        lines.append(f"ConformanceReport: {path}")
    lines.append(f"wall time: {wall_time:.1f}s")
    return lines
