"""Reporting glue: the session's outcomes -> the ConformanceReport file, the Allure metadata and the terminal summary.

A scenario run more than once (--rerun-failures) is one test of the report,
with its attempts (harness.report.attempts); the session's latencies, pooled
from every scenario's attempts and every worker, make the report's timings
(harness.report.timings) and three entries of Allure's environment.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cluster import tekton
from harness.monitor.latencies import Latencies
from harness.report.allure_metadata import executor_info, write_allure_metadata
from harness.report.attempts import Attempt, describe_attempts, final_outcome
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
from harness.report.timings import Timings
from harness.suite.features import CORE_FEATURES, Feature

if TYPE_CHECKING:
    from harness.plugin import Outcome as RunOutcome
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


def attempt_of(run: RunOutcome) -> Attempt:
    """attempt_of() is one attempt of a scenario as the report keeps it."""
    return Attempt(Outcome(run.outcome), round(run.duration, 3), seed=run.seed, namespace=run.namespace, message=run.message, log=run.log)


def scenario_outcomes(state: SuiteState) -> list[TestOutcome]:
    """scenario_outcomes() is one TestOutcome per scenario: its last attempt's, made flaky by a failed attempt before a pass."""
    outcomes = []
    for last in state.outcomes.values():
        earlier = state.earlier_attempts.get(last.name, [])
        attempts = tuple(attempt_of(run) for run in [*earlier, last]) if earlier else ()
        s = last.scenario
        outcomes.append(TestOutcome(
            last.name or s.name, s.description, tuple(f.value for f in s.features),
            final_outcome(attempts) if attempts else Outcome(last.outcome), last.duration, last.message, attempts,
        ))
    return outcomes


def session_timings(state: SuiteState) -> Timings:
    """session_timings() sums up every attempt's latencies, pooled first (a percentile of percentiles would mean nothing)."""
    pooled = Latencies.pooled(state.latencies)
    return Timings.of(claim=pooled.claim, release=pooled.release, requeue=pooled.requeue)


def attach_attempts(runs: Sequence[RunOutcome]) -> None:
    """attach_attempts() gives the Allure result of a scenario's last attempt its attempts, and the tag `flaky` when it is."""
    import allure

    attempts = [attempt_of(run) for run in runs]
    if final_outcome(attempts) is Outcome.FLAKY:
        allure.dynamic.tag("flaky")  # type: ignore[no-untyped-call]
    allure.attach(describe_attempts(attempts), f"attempts ({len(attempts)})", allure.attachment_type.TEXT)


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
    for name, summary in session_timings(state).by_name().items():
        environment[f"timings.{name}"] = summary.describe()
    flaky = [t.name for t in scenario_outcomes(state) if t.outcome is Outcome.FLAKY]
    if flaky:
        environment["flaky"] = f"{len(flaky)}: {', '.join(flaky)}"
    executor = executor_info(
        suite_version=suite.version, scheduler_name=config.scheduler_name, project=str(config.implementation["project"]),
        cluster=suite.cluster, mode=mode.value, env=os.environ,
    )
    return write_allure_metadata(directory, environment=environment, executor=executor)


def write_conformance_report(state: SuiteState, *, wall_time: float) -> list[str]:
    """write_conformance_report() builds the report, writes it if asked, and returns the summary lines."""
    config = state.config
    report = build_report(
        scenario_outcomes(state),
        implementation=Implementation(scheduler_name=config.scheduler_name, **config.implementation),
        suite=suite_info(state),
        mode=mode_of(state),
        supported_features=sorted(f.value for f in config.supported),
        core_features=sorted(f.value for f in CORE_FEATURES),
        wall_time=wall_time,
        timings=session_timings(state),
    )
    lines = summary_lines(report)
    if config.report_output is not None:
        path = write_report(report, config.report_output)
        lines.append(f"ConformanceReport: {path}")
    lines.append(f"wall time: {wall_time:.1f}s")
    return lines
