"""attempts: a scenario run more than once in a session (--rerun-failures), and the outcome its attempts add up to.

A scenario that failed and then passed when run again is **flaky**: it did
pass, so it is no failure, but the implementation (or the suite) did not do
the same thing twice, and a reader must not take it for a clean pass. Its
profile level is therefore `partial`, never `success`
(harness.report.conformance_report.result_of). An earlier attempt that was a
setup error (an `error`: no verdict on the scheduler) makes nothing flaky.

Each attempt keeps what tells it apart from the others: its seed (only the
generative scenario draws from one; None for the others, which the suite
seeds with nothing), its namespace (every attempt gets a new one, and the
scheduler's log names it), its message and the tail of its captured log.

    final_outcome([attempt("failed"), attempt("passed")]) is Outcome.FLAKY
    final_outcome([attempt("failed"), attempt("failed")]) is Outcome.FAILED
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.report.outcomes import Outcome

LOG_LINES = 20
"""LOG_LINES is how many of an attempt's last captured log lines it keeps."""


@dataclass(frozen=True)
class Attempt:
    """Attempt is one run of a scenario within a session.

    Example: ``Attempt(Outcome.FAILED, 31.2, seed=None, namespace="conf-colocation-1a2b3c",
    message="contract monitor: node-overcommitted at 4.2s: ...", log="WARNING rescon.monitor ...")``.
    """

    outcome: Outcome
    duration_seconds: float
    seed: int | None = None
    namespace: str = ""
    message: str = ""
    log: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", Outcome(self.outcome))

    def to_dict(self) -> dict[str, Any]:
        """to_dict is one entry of a test's ``attempts:``."""
        return {
            "outcome": str(self.outcome),
            "duration_seconds": self.duration_seconds,
            "seed": self.seed,
            "namespace": self.namespace,
            "message": self.message,
            "log": self.log,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attempt:
        seed = data.get("seed")
        return cls(
            outcome=Outcome(data["outcome"]),
            duration_seconds=float(data.get("duration_seconds", 0.0)),
            seed=None if seed is None else int(seed),
            namespace=str(data.get("namespace", "")),
            message=str(data.get("message", "")),
            log=str(data.get("log", "")),
        )


def final_outcome(attempts: Sequence[Attempt]) -> Outcome:
    """final_outcome() is the last attempt's outcome, except that a pass after a failed attempt is flaky.

    Example: failed, passed -> flaky; error, passed -> passed (a setup error
    judged nothing); failed, failed -> failed; passed -> passed.
    ValueError for no attempt.
    """
    if not attempts:
        raise ValueError("a scenario's outcome needs at least one attempt")
    last = attempts[-1].outcome
    if last is Outcome.PASSED and any(a.outcome is Outcome.FAILED for a in attempts[:-1]):
        return Outcome.FLAKY
    return last


def log_tail(sections: Sequence[tuple[str, str]], lines: int = LOG_LINES) -> str:
    """log_tail() is the last `lines` lines of a test report's captured sections (log, stdout, stderr), each headed by its title.

    Example: ``log_tail([("Captured log call", "WARNING a\\nWARNING b")], lines=1) == "WARNING b"``.
    """
    text: list[str] = []
    for title, content in sections:
        if content.strip():
            text += [f"-- {title} --", *content.rstrip("\n").splitlines()]
    return "\n".join(text[-lines:])


def describe_attempts(attempts: Sequence[Attempt]) -> str:
    """describe_attempts() is the attempts for a reader (the Allure attachment of a flaky scenario), one block each.

    Example: "attempt 1: failed in 31.2s, seed none, namespace conf-a-1\\n  message: ...\\n  log:\\n    ...".
    """
    blocks = []
    for number, attempt in enumerate(attempts, start=1):
        seed = "none" if attempt.seed is None else str(attempt.seed)
        lines = [f"attempt {number}: {attempt.outcome} in {attempt.duration_seconds:.1f}s, seed {seed}, namespace {attempt.namespace or 'none'}"]
        if attempt.message:
            lines.append(f"  message: {attempt.message}")
        if attempt.log:
            lines += ["  log:", *(f"    {line}" for line in attempt.log.splitlines())]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
