"""report: a replay's verdicts as a ConformanceReport (harness.report), each run one test of the Reservation profile's core.

A replayed run checks what the core scenarios check (a group on one node,
its peak reserved, the monitor's rules), so it counts under the core features
Colocation and PeakReservation; its description says which file it came from,
its message every problem and note. The timings are the monitor's latencies,
pooled over every round.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.monitor.latencies import Latencies
from harness.replay.judging import RunResult
from harness.report.conformance_report import ConformanceReport, Implementation, Mode, SuiteInfo, TestOutcome, build_report
from harness.report.timings import Timings
from harness.suite.features import CORE_FEATURES, Feature

#: The features a replayed run exercises.
REPLAY_FEATURES = (Feature.COLOCATION.value, Feature.PEAK_RESERVATION.value)


def report_entry(result: RunResult) -> TestOutcome:
    """report_entry() is one run as the report's `tests:` lists it."""
    return TestOutcome(
        result.name, f"replay of {result.origin}", REPLAY_FEATURES, result.outcome, result.seconds, "; ".join([*result.problems, *result.notes])
    )


def replay_report(
    results: Sequence[RunResult],
    *,
    implementation: Implementation,
    suite: SuiteInfo,
    mode: Mode,
    supported_features: Iterable[str],
    wall_time: float,
    latencies: Sequence[Latencies] = (),
) -> ConformanceReport:
    """replay_report() is the ConformanceReport of a replay: its runs in the order they were judged."""
    pooled = Latencies.pooled(latencies)
    return build_report(
        [report_entry(r) for r in results],
        implementation=implementation,
        suite=suite,
        mode=mode,
        supported_features=supported_features,
        core_features=sorted(f.value for f in CORE_FEATURES),
        wall_time=wall_time,
        timings=Timings.of(claim=pooled.claim, release=pooled.release, requeue=pooled.requeue),
    )
