"""Reporting glue: the session's outcomes -> the ConformanceReport file and the terminal summary."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cluster import tekton
from harness.report.allure_metadata import executor_info, write_allure_metadata
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


def suite_info(state: SuiteState) -> SuiteInfo:
    """suite_info() is what the implementation was tested against, as the ConformanceReport and Allure say it."""
    return SuiteInfo(
        version=SUITE_VERSION,
        kubernetes_version=state.versions.get("kubernetes", "unknown"),
        tekton_version=tekton.version(),
        cluster=state.config.cluster,
        coschedule=state.config.coschedule,
    )


def mode_of(state: SuiteState) -> Mode:
    return Mode.RESERVATION_STATE if Feature.RESERVATION_RECORDS in state.config.supported else Mode.PLACEMENT_ONLY


def write_allure_files(state: SuiteState, directory: Path) -> list[Path]:
    """write_allure_files() gives the Allure results folder its environment, categories and executor."""
    config, suite, mode = state.config, suite_info(state), mode_of(state)
    environment = {
        "suite.version": suite.version,
        "kubernetes.version": suite.kubernetes_version,
        "tekton.version": suite.tekton_version,
        "scheduler.name": config.scheduler_name,
        "scheduler.launch": config.scheduler_mode,
        "cluster": suite.cluster,
        "mode": mode.value,
        "coschedule": suite.coschedule,
        "implementation": f"{config.implementation['organization']}/{config.implementation['project']} {config.implementation['version']}",
    }
    if config.scheduler_cmd:
        environment["scheduler.command"] = config.scheduler_cmd
    executor = executor_info(
        suite_version=suite.version, scheduler_name=config.scheduler_name, project=str(config.implementation["project"]),
        cluster=suite.cluster, mode=mode.value, env=os.environ,
    )
    return write_allure_metadata(directory, environment=environment, executor=executor)


def write_conformance_report(state: SuiteState, *, wall_time: float) -> list[str]:
    """write_conformance_report() builds the report, writes it if asked, and returns the summary lines."""
    config = state.config
    outcomes = [
        TestOutcome(o.name or o.scenario.name, o.scenario.description, tuple(f.value for f in o.scenario.features), Outcome(o.outcome), o.duration, o.message)
        for o in state.outcomes.values()
    ]
    report = build_report(
        outcomes,
        implementation=Implementation(scheduler_name=config.scheduler_name, **config.implementation),
        suite=suite_info(state),
        mode=mode_of(state),
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
