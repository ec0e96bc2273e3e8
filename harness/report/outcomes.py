"""outcomes: how one scenario ended, the vocabulary of the ConformanceReport's ``tests:`` and of their attempts."""

from __future__ import annotations

import enum


class Outcome(enum.StrEnum):
    """Outcome is how one scenario ended. Example: ``Outcome("passed") is Outcome.PASSED``."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    #: Not a verdict: the scenario could not judge (the scheduler never started, a fixture is broken, the cluster failed).
    ERROR = "error"
    #: Failed, then passed when run again in the same session (--rerun-failures; harness.report.attempts).
    FLAKY = "flaky"
