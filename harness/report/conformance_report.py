"""conformance_report: the one YAML a suite run hands to whoever asks "does it conform?".

The shape follows the Gateway API conformance report: who was tested
(``implementation``), against what (``suite``), one entry per conformance
profile with a *core* and an *extended* status, then every scenario's own
outcome. Example, as ``write_report`` writes it::

    apiVersion: rescon.dev/v1alpha1
    kind: ConformanceReport
    date: "2026-11-30T13:00:00Z"
    implementation: {organization: example, project: tkn-scheduler, url: ..., version: v0.1.0,
                     contact: ["@example/ci"], schedulerName: tkn-scheduler}
    suite: {version: 0.1.0, kubernetesVersion: v1.31.0, tektonVersion: v1.15.0, cluster: local,
            coschedule: disabled}
    mode: reservation-state
    profiles:
    - name: Reservation
      summary: Core tests succeeded. Extended tests failed (1 of 2 failed).
      core: {result: success, statistics: {Passed: 5, Failed: 0, Skipped: 0}, failedTests: [], skippedTests: []}
      extended: {result: failure, statistics: {Passed: 1, Failed: 1, Skipped: 1},
                 supportedFeatures: [Retries], unsupportedFeatures: [Resize], failedTests: [retry-same-node],
                 skippedTests: [resize-grow]}
    tests:
    - {name: reserve-basic, description: ..., features: [Reservation], outcome: passed,
       duration_seconds: 4.2, message: ""}
    - {name: burst, ..., outcome: flaky, duration_seconds: 40.1, message: "",
       attempts: [{outcome: failed, seed: null, namespace: conf-burst-1a2b3c, message: ..., log: ...},
                  {outcome: passed, seed: null, namespace: conf-burst-4d5e6f, message: "", log: ""}]}
    timings: {claimSeconds: {count: 41, p50: 0.112, p99: 0.53, max: 0.53}, releaseSeconds: ..., requeueSeconds: ...}
    wallTimeSeconds: 93.5

Everything here is pure: ``build_report`` decides, ``write_report`` and
``read_report`` only move the result to and from a file.

The result rule is Gateway API's for failures: one failed scenario makes a
profile a ``failure``, however many passed, since a reader must never take a
scheduler that breaks the contract for one that nearly keeps it. Skips are
already explained by the features an implementation declares
(``unsupportedFeatures``), so they do not make a result "partial": all that
ran passed is success, and none ran is skipped. A scenario that failed and
then passed when run again (``--rerun-failures``) is ``flaky``
(harness.report.attempts): it makes its level ``partial``, never ``success``.
The ``timings`` block (harness.report.timings) is for readers; no result
reads it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import yaml

from harness.report.attempts import Attempt
# Re-exported: the report's readers import the outcomes from here.
from harness.report.outcomes import Outcome as Outcome
from harness.report.timings import Timings

API_VERSION = "rescon.dev/v1alpha1"
"""API_VERSION is a report's ``apiVersion``."""

KIND = "ConformanceReport"
"""KIND is a report's ``kind``."""

PROFILE_NAME = "Reservation"
"""PROFILE_NAME is the conformance profile every scenario belongs to (the suite has one)."""

CLUSTER_KINDS = ("local", "kind", "existing")
"""CLUSTER_KINDS are the values of ``suite.cluster``: which cluster provider the run used."""

PLACEMENT_ONLY_NOTE = "placement-only: reservation state not checked"
"""PLACEMENT_ONLY_NOTE is what a placement-only report says about itself (docs/contract.md, section 12)."""

DURATION_DECIMALS = 3
"""DURATION_DECIMALS: durations are kept to the millisecond, so a report reads back equal to itself."""

MESSAGE_WIDTH = 100
"""MESSAGE_WIDTH is how many characters of a scenario's message ``summary_lines`` shows."""


class Result(enum.StrEnum):
    """Result is a profile level's verdict over its scenarios; ``result_of`` computes it."""

    SUCCESS = "success"
    #: Every scenario that ran passed, but some only when run again (flaky, --rerun-failures). Older reports wrote it
    #: for a level with failures too; a failed scenario now makes a failure.
    PARTIAL = "partial"
    FAILURE = "failure"
    SKIPPED = "skipped"
    #: Some scenario hit a setup error: the level has no verdict, and certainly no success.
    ERROR = "error"


class Mode(enum.StrEnum):
    """Mode says what the suite could check.

    ``placement-only`` is for an implementation that publishes no
    ReservationRecords: only pods, TaskRuns and Nodes were read.
    """

    RESERVATION_STATE = "reservation-state"
    PLACEMENT_ONLY = "placement-only"


@dataclass(frozen=True)
class TestOutcome:
    """TestOutcome is one scenario's result, as the runner saw it.

    ``features`` are the features the scenario needs (its declared metadata);
    ``message`` is the failure or skip reason, empty when it passed.
    ``attempts`` are its runs in order, the last one included, when it was run
    more than once (--rerun-failures); empty when it ran once.

    Example: ``TestOutcome("reserve-basic", "A group's pods share one node", ("Reservation",), Outcome.PASSED, 4.2)``.
    """

    __test__: ClassVar[bool] = False  # a data class, not a pytest test class

    name: str
    description: str
    features: tuple[str, ...]
    outcome: Outcome
    duration_seconds: float = 0.0
    message: str = ""
    attempts: tuple[Attempt, ...] = ()

    def __post_init__(self) -> None:
        # Accept any iterable and the enum's plain string; store the canonical forms.
        object.__setattr__(self, "features", tuple(self.features))
        object.__setattr__(self, "outcome", Outcome(self.outcome))
        object.__setattr__(self, "attempts", tuple(self.attempts))

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the entry under ``tests:``; ``attempts`` only for a scenario run more than once."""
        return {
            "name": self.name,
            "description": self.description,
            "features": list(self.features),
            "outcome": str(self.outcome),
            "duration_seconds": self.duration_seconds,
            "message": self.message,
            **({"attempts": [a.to_dict() for a in self.attempts]} if self.attempts else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestOutcome:
        """from_dict reads an entry written by ``to_dict``."""
        return cls(
            name=str(data["name"]),
            description=str(data.get("description", "")),
            features=tuple(str(f) for f in data.get("features") or ()),
            outcome=Outcome(data["outcome"]),
            duration_seconds=float(data.get("duration_seconds", 0.0)),
            message=str(data.get("message", "")),
            attempts=tuple(Attempt.from_dict(a) for a in data.get("attempts") or ()),
        )


@dataclass(frozen=True)
class Implementation:
    """Implementation says who was tested: the scheduler, its maintainers and the ``schedulerName`` its pods use."""

    organization: str
    project: str
    url: str
    version: str
    contact: tuple[str, ...] = ()
    scheduler_name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "contact", tuple(self.contact))

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the ``implementation:`` mapping."""
        return {
            "organization": self.organization,
            "project": self.project,
            "url": self.url,
            "version": self.version,
            "contact": list(self.contact),
            "schedulerName": self.scheduler_name,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Implementation:
        """from_dict reads a mapping written by ``to_dict``."""
        return cls(
            organization=str(data["organization"]),
            project=str(data["project"]),
            url=str(data["url"]),
            version=str(data["version"]),
            contact=tuple(str(c) for c in data.get("contact") or ()),
            scheduler_name=str(data.get("schedulerName", "")),
        )


@dataclass(frozen=True)
class SuiteInfo:
    """SuiteInfo says what the implementation was tested against.

    ``cluster`` is one of ``CLUSTER_KINDS``; ``coschedule`` is Tekton's
    feature-flags coschedule mode (``disabled`` when the scheduler does the
    co-scheduling; Tekton's own modes are run as baselines).
    """

    version: str
    kubernetes_version: str
    tekton_version: str
    cluster: str
    coschedule: str = "disabled"

    def __post_init__(self) -> None:
        if self.cluster not in CLUSTER_KINDS:
            raise ValueError(f"unknown cluster kind {self.cluster!r}: use one of {', '.join(CLUSTER_KINDS)}")

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the ``suite:`` mapping."""
        return {
            "version": self.version,
            "kubernetesVersion": self.kubernetes_version,
            "tektonVersion": self.tekton_version,
            "cluster": self.cluster,
            "coschedule": self.coschedule,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SuiteInfo:
        """from_dict reads a mapping written by ``to_dict``."""
        return cls(
            version=str(data["version"]),
            kubernetes_version=str(data["kubernetesVersion"]),
            tekton_version=str(data["tektonVersion"]),
            cluster=str(data["cluster"]),
            coschedule=str(data.get("coschedule", "disabled")),
        )


@dataclass(frozen=True)
class Statistics:
    """Statistics counts a profile level's scenarios by outcome."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    #: Passed only when run again (harness.report.attempts); not counted in ``passed``.
    flaky: int = 0

    @property
    def ran(self) -> int:
        """ran is how many scenarios ran to a verdict (skips and setup errors excluded)."""
        return self.passed + self.failed + self.flaky

    def to_dict(self) -> dict[str, int]:
        """to_dict is the ``statistics:`` mapping, with Gateway API's capitalised keys (and our Errors and Flaky)."""
        return {"Passed": self.passed, "Failed": self.failed, "Skipped": self.skipped, "Errors": self.errors, "Flaky": self.flaky}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Statistics:
        """from_dict reads a mapping written by ``to_dict`` (older reports have no Errors and no Flaky)."""
        return cls(
            passed=int(data["Passed"]), failed=int(data["Failed"]), skipped=int(data["Skipped"]),
            errors=int(data.get("Errors", 0)), flaky=int(data.get("Flaky", 0)),
        )


def result_of(statistics: Statistics) -> Result:
    """result_of is the verdict over the scenarios that ran; skips do not count.

    Example: 3 passed, 1 failed is ``failure``; 3 passed, 2 skipped is
    ``success``; 3 passed, 1 flaky is ``partial``; 0 passed, 0 failed, 4
    skipped is ``skipped``; any setup error is ``error``, whatever else
    happened. A flaky scenario never leaves a level ``success``.
    """
    if statistics.errors:
        return Result.ERROR
    if statistics.ran == 0:
        return Result.SKIPPED
    if statistics.failed:
        return Result.FAILURE
    return Result.PARTIAL if statistics.flaky else Result.SUCCESS


@dataclass(frozen=True)
class Status:
    """Status is one profile level (core or extended): its result, counts and the scenarios that did not pass."""

    result: Result
    statistics: Statistics
    failed_tests: tuple[str, ...] = ()
    skipped_tests: tuple[str, ...] = ()
    flaky_tests: tuple[str, ...] = ()

    def summary(self) -> str:
        """summary says the result in words, e.g. "failed (1 of 4 failed, 2 skipped)"."""
        s = self.statistics
        skipped = f", {s.skipped} skipped" if s.skipped else ""
        match self.result:
            case Result.SUCCESS:
                return f"succeeded ({s.passed} passed{skipped})"
            case Result.PARTIAL:
                failed = f", {s.failed} of {s.ran} failed" if s.failed else ""  # older reports' partial
                return f"partially succeeded ({s.passed} passed, {s.flaky} flaky{failed}{skipped})"
            case Result.FAILURE:
                return f"failed ({s.failed} of {s.ran} failed{skipped})"
            case Result.SKIPPED:
                return f"were skipped ({s.skipped} skipped)" if s.skipped else "were not run"
            case Result.ERROR:
                return f"could not be judged ({s.errors} setup error(s), {s.failed} of {s.ran} judged failed)"

    def _base_dict(self) -> dict[str, Any]:
        return {"result": str(self.result), "statistics": self.statistics.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the ``core:`` mapping."""
        return {
            **self._base_dict(),
            "failedTests": list(self.failed_tests),
            "skippedTests": list(self.skipped_tests),
            "flakyTests": list(self.flaky_tests),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Status:
        """from_dict reads a mapping written by ``to_dict`` (older reports have no flakyTests)."""
        return cls(
            result=Result(data["result"]),
            statistics=Statistics.from_dict(data["statistics"]),
            failed_tests=tuple(str(t) for t in data.get("failedTests") or ()),
            skipped_tests=tuple(str(t) for t in data.get("skippedTests") or ()),
            flaky_tests=tuple(str(t) for t in data.get("flakyTests") or ()),
        )


@dataclass(frozen=True)
class ExtendedStatus(Status):
    """ExtendedStatus is the extended level: a Status plus which extended features the implementation declared.

    ``unsupported_features`` are the extended features some scenario needed
    and the implementation does not declare; those scenarios are skipped.
    """

    supported_features: tuple[str, ...] = ()
    unsupported_features: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the ``extended:`` mapping."""
        return {
            **self._base_dict(),
            "supportedFeatures": list(self.supported_features),
            "unsupportedFeatures": list(self.unsupported_features),
            "failedTests": list(self.failed_tests),
            "skippedTests": list(self.skipped_tests),
            "flakyTests": list(self.flaky_tests),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExtendedStatus:
        """from_dict reads a mapping written by ``to_dict``."""
        base = Status.from_dict(data)
        return cls(
            result=base.result,
            statistics=base.statistics,
            failed_tests=base.failed_tests,
            skipped_tests=base.skipped_tests,
            flaky_tests=base.flaky_tests,
            supported_features=tuple(str(f) for f in data.get("supportedFeatures") or ()),
            unsupported_features=tuple(str(f) for f in data.get("unsupportedFeatures") or ()),
        )


@dataclass(frozen=True)
class ProfileReport:
    """ProfileReport is one conformance profile's verdict, split into core and extended."""

    name: str
    core: Status
    extended: ExtendedStatus

    @property
    def summary(self) -> str:
        """summary is one sentence for humans, e.g. "Core tests succeeded (5 passed). Extended tests were not run."."""
        return f"Core tests {self.core.summary()}. Extended tests {self.extended.summary()}."

    def to_dict(self) -> dict[str, Any]:
        """to_dict is one entry under ``profiles:``; ``summary`` is derived and written for readers only."""
        return {
            "name": self.name,
            "summary": self.summary,
            "core": self.core.to_dict(),
            "extended": self.extended.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProfileReport:
        """from_dict reads an entry written by ``to_dict``."""
        return cls(
            name=str(data["name"]),
            core=Status.from_dict(data["core"]),
            extended=ExtendedStatus.from_dict(data["extended"]),
        )


@dataclass(frozen=True)
class ConformanceReport:
    """ConformanceReport is a whole run's report; build it with ``build_report``, write it with ``write_report``.

    ``timings`` are the session's latencies (harness.report.timings), for
    readers only: no result depends on them. None in a report built without
    them, and in older reports.
    """

    date: str
    implementation: Implementation
    suite: SuiteInfo
    mode: Mode
    profiles: tuple[ProfileReport, ...]
    tests: tuple[TestOutcome, ...]
    wall_time_seconds: float
    timings: Timings | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode(self.mode))
        object.__setattr__(self, "profiles", tuple(self.profiles))
        object.__setattr__(self, "tests", tuple(self.tests))

    def profile(self, name: str = PROFILE_NAME) -> ProfileReport:
        """profile returns the named profile's report; KeyError names the ones there are."""
        for p in self.profiles:
            if p.name == name:
                return p
        raise KeyError(f"no profile {name!r} in the report: it has {', '.join(p.name for p in self.profiles)}")

    def to_dict(self) -> dict[str, Any]:
        """to_dict is the whole document, keys in the order a reader expects.

        A placement-only report says so beside its mode (``modeNote``), so
        that no reader takes its results for reservation-state checks.
        """
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "date": self.date,
            "implementation": self.implementation.to_dict(),
            "suite": self.suite.to_dict(),
            "mode": str(self.mode),
            **({"modeNote": PLACEMENT_ONLY_NOTE} if self.mode is Mode.PLACEMENT_ONLY else {}),
            "profiles": [p.to_dict() for p in self.profiles],
            "tests": [t.to_dict() for t in self.tests],
            **({"timings": self.timings.to_dict()} if self.timings is not None else {}),
            "wallTimeSeconds": self.wall_time_seconds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConformanceReport:
        """from_dict reads a document written by ``to_dict``; ValueError if it is not a ConformanceReport."""
        if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
            raise ValueError(
                f"not a {KIND} of {API_VERSION}: found apiVersion {data.get('apiVersion')!r}, kind {data.get('kind')!r}"
            )
        return cls(
            date=str(data["date"]),
            implementation=Implementation.from_dict(data["implementation"]),
            suite=SuiteInfo.from_dict(data["suite"]),
            mode=Mode(data["mode"]),
            profiles=tuple(ProfileReport.from_dict(p) for p in data.get("profiles") or ()),
            tests=tuple(TestOutcome.from_dict(t) for t in data.get("tests") or ()),
            wall_time_seconds=float(data["wallTimeSeconds"]),
            timings=Timings.from_dict(data["timings"]) if data.get("timings") else None,
        )


def unsupported_message(features: Sequence[str]) -> str:
    """unsupported_message is the skip message of a scenario needing features the implementation lacks.

    Example: ``unsupported_message(["Resize"]) == "implementation does not support Resize"``.
    """
    return f"implementation does not support {', '.join(features)}"


def format_date(when: datetime) -> str:
    """format_date is RFC 3339 in UTC to the second. Example: ``"2026-11-30T13:00:00Z"``."""
    if when.tzinfo is None:
        raise ValueError("format_date needs an aware datetime: pass datetime.now(UTC)")
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class _Level:
    """_Level accumulates one profile level while ``build_report`` sorts the scenarios."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    flaky: int = 0
    failed_tests: list[str] = dataclasses.field(default_factory=list)
    skipped_tests: list[str] = dataclasses.field(default_factory=list)
    flaky_tests: list[str] = dataclasses.field(default_factory=list)

    def add(self, outcome: TestOutcome) -> None:
        match outcome.outcome:
            case Outcome.PASSED:
                self.passed += 1
            case Outcome.FAILED:
                self.failed += 1
                self.failed_tests.append(outcome.name)
            case Outcome.SKIPPED:
                self.skipped += 1
                self.skipped_tests.append(outcome.name)
            case Outcome.ERROR:
                self.errors += 1
                self.failed_tests.append(outcome.name)
            case Outcome.FLAKY:
                self.flaky += 1
                self.flaky_tests.append(outcome.name)

    def statistics(self) -> Statistics:
        return Statistics(passed=self.passed, failed=self.failed, skipped=self.skipped, errors=self.errors, flaky=self.flaky)


def build_report(
    outcomes: Iterable[TestOutcome],
    *,
    implementation: Implementation,
    suite: SuiteInfo,
    mode: Mode,
    supported_features: Iterable[str],
    core_features: Iterable[str],
    wall_time: float,
    date: datetime | None = None,
    profile: str = PROFILE_NAME,
    timings: Timings | None = None,
) -> ConformanceReport:
    """build_report sorts the scenarios' outcomes into a profile's core and extended levels.

    A scenario whose features are all in ``core_features`` counts in core.
    One that needs any other feature counts in extended; if the
    implementation does not declare that feature in ``supported_features``
    the scenario is recorded as skipped (whatever the runner said) with
    ``unsupported_message``, and the feature is listed under
    ``unsupportedFeatures``. Durations are rounded to the millisecond;
    ``date`` defaults to now. ``timings`` are carried into the report as
    they are and decide nothing.

    Example: with core ``{"Reservation"}`` and supported ``{"Retries"}``, a
    passed scenario needing ``("Reservation", "Resize")`` becomes a skip in
    extended, and ``extended.unsupportedFeatures == ("Resize",)``.

    ValueError if two outcomes share a name: a report keyed by name must not
    hide one of them.
    """
    core = frozenset(core_features)
    supported = frozenset(supported_features)
    core_level, extended_level = _Level(), _Level()
    unsupported: set[str] = set()
    tests: list[TestOutcome] = []
    seen: set[str] = set()
    for outcome in outcomes:
        if outcome.name in seen:
            raise ValueError(f"two scenarios are named {outcome.name!r}: scenario names must be unique")
        seen.add(outcome.name)
        outcome = dataclasses.replace(outcome, duration_seconds=round(outcome.duration_seconds, DURATION_DECIMALS))
        extended_needed = [f for f in outcome.features if f not in core]
        if not extended_needed:
            core_level.add(outcome)
        else:
            missing = sorted({f for f in extended_needed if f not in supported})
            if missing:
                unsupported.update(missing)
                if outcome.outcome is not Outcome.SKIPPED:
                    note = f" (it ran anyway and {outcome.outcome})"
                    outcome = dataclasses.replace(
                        outcome, outcome=Outcome.SKIPPED, message=unsupported_message(missing) + note
                    )
            extended_level.add(outcome)
        tests.append(outcome)

    core_stats, extended_stats = core_level.statistics(), extended_level.statistics()
    report_profile = ProfileReport(
        name=profile,
        core=Status(
            result=result_of(core_stats),
            statistics=core_stats,
            failed_tests=tuple(core_level.failed_tests),
            skipped_tests=tuple(core_level.skipped_tests),
            flaky_tests=tuple(core_level.flaky_tests),
        ),
        extended=ExtendedStatus(
            result=result_of(extended_stats),
            statistics=extended_stats,
            failed_tests=tuple(extended_level.failed_tests),
            skipped_tests=tuple(extended_level.skipped_tests),
            flaky_tests=tuple(extended_level.flaky_tests),
            supported_features=tuple(sorted(supported - core)),
            unsupported_features=tuple(sorted(unsupported)),
        ),
    )
    return ConformanceReport(
        date=format_date(date if date is not None else datetime.now(UTC)),
        implementation=implementation,
        suite=suite,
        mode=Mode(mode),
        profiles=(report_profile,),
        tests=tuple(tests),
        wall_time_seconds=round(wall_time, DURATION_DECIMALS),
        timings=timings,
    )


def write_report(report: ConformanceReport, path: Path | str) -> Path:
    """write_report writes the report as YAML (creating the directory) and returns the path written."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(report.to_dict(), sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)
    target.write_text(text, encoding="utf-8")
    return target


def read_report(path: Path | str) -> ConformanceReport:
    """read_report reads a report written by ``write_report``; ValueError if the file is not one."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: not a YAML mapping, so not a {KIND}")
    return ConformanceReport.from_dict(data)


def _first_line(message: str, width: int = MESSAGE_WIDTH) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def summary_lines(report: ConformanceReport) -> list[str]:
    """summary_lines is a short table for the terminal: one line per scenario, then each profile level.

    Example::

        PASSED       4.20s  reserve-basic
        FAILED      12.30s  retry-same-node  pod run-1-build-retry1 bound to node-b, want node-a
        SKIPPED      0.00s  resize-grow      implementation does not support Resize
        Reservation core: success (Passed 1, Failed 0, Skipped 0)
        Reservation extended: failure (Passed 1, Failed 1, Skipped 1); unsupported: Resize
        claim latency: p50 0.112s, p99 0.530s, max 0.530s (41 samples)

    A level with flaky scenarios adds ", Flaky N" to its counts; the
    latencies come last, when the report has timings.
    """
    lines: list[str] = []
    name_width = max((len(t.name) for t in report.tests), default=0)
    for t in report.tests:
        message = _first_line(t.message)
        row = f"{t.outcome.upper():<8} {t.duration_seconds:8.2f}s  {t.name:<{name_width}}"
        if message:
            row += f"  {message}"
        lines.append(row.rstrip())
    for p in report.profiles:
        for level_name, level in (("core", p.core), ("extended", p.extended)):
            s = level.statistics
            line = f"{p.name} {level_name}: {level.result} (Passed {s.passed}, Failed {s.failed}, Skipped {s.skipped}"
            line += f", Errors {s.errors}" if s.errors else ""
            line += f", Flaky {s.flaky})" if s.flaky else ")"
            if isinstance(level, ExtendedStatus) and level.unsupported_features:
                line += f"; unsupported: {', '.join(level.unsupported_features)}"
            lines.append(line)
    if report.mode is Mode.PLACEMENT_ONLY:
        lines.append(PLACEMENT_ONLY_NOTE)
    if report.timings is not None:
        lines += [f"{name} latency: {summary.describe()}" for name, summary in report.timings.by_name().items()]
    return lines
