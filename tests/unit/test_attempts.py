"""A scenario's attempts within a session: the outcome they add up to, and what each keeps of itself."""

from __future__ import annotations

import pytest

from harness.report.attempts import Attempt, describe_attempts, final_outcome, log_tail
from harness.report.outcomes import Outcome

pytestmark = pytest.mark.unit


def attempts(*outcomes: str) -> list[Attempt]:
    return [Attempt(Outcome(o), 1.0) for o in outcomes]


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        pytest.param(["passed"], Outcome.PASSED, id="once-passed"),
        pytest.param(["failed"], Outcome.FAILED, id="once-failed"),
        pytest.param(["failed", "passed"], Outcome.FLAKY, id="failed-then-passed-is-flaky"),
        pytest.param(["failed", "failed", "passed"], Outcome.FLAKY, id="failed-twice-then-passed-is-flaky"),
        pytest.param(["failed", "failed"], Outcome.FAILED, id="failed-every-time-is-a-failure"),
        pytest.param(["passed", "failed"], Outcome.FAILED, id="the-last-attempt-decides"),
        pytest.param(["error", "passed"], Outcome.PASSED, id="a-setup-error-judged-nothing"),
        pytest.param(["error", "failed", "passed"], Outcome.FLAKY, id="a-failure-among-errors-still-counts"),
        pytest.param(["failed", "error"], Outcome.ERROR, id="ending-in-a-setup-error-is-an-error"),
        pytest.param(["failed", "skipped"], Outcome.SKIPPED, id="a-skip-at-the-end-is-a-skip"),
    ],
)
def test_final_outcome(outcomes: list[str], expected: Outcome) -> None:
    assert final_outcome(attempts(*outcomes)) is expected


def test_no_attempt_has_no_outcome() -> None:
    with pytest.raises(ValueError, match="at least one attempt"):
        final_outcome([])


def test_an_attempt_reads_back_equal_and_a_seed_may_be_none() -> None:
    drawn = Attempt(Outcome.FAILED, 46.1, seed=1234, namespace="conf-generative-1a2b3c", message="group-split", log="seed 1234")
    assert Attempt.from_dict(drawn.to_dict()) == drawn
    assert Attempt.from_dict({"outcome": "passed"}) == Attempt(Outcome.PASSED, 0.0)
    assert Attempt("failed", 1.0).outcome is Outcome.FAILED  # type: ignore[arg-type]


def test_log_tail_keeps_the_last_lines_under_their_titles() -> None:
    sections = [("Captured log setup", "INFO a\n"), ("Captured stdout call", "   \n"), ("Captured log call", "W1\nW2\nW3\n")]
    assert log_tail(sections) == "-- Captured log setup --\nINFO a\n-- Captured log call --\nW1\nW2\nW3"
    assert log_tail(sections, lines=2) == "W2\nW3"
    assert log_tail([]) == ""


def test_describe_attempts_names_each_attempts_outcome_seed_namespace_message_and_log() -> None:
    text = describe_attempts([
        Attempt(Outcome.FAILED, 31.25, seed=None, namespace="conf-burst-1", message="timed out after 30s", log="W1\nW2"),
        Attempt(Outcome.PASSED, 29.0, seed=7, namespace="conf-burst-2"),
    ])
    assert text == (
        "attempt 1: failed in 31.2s, seed none, namespace conf-burst-1\n"
        "  message: timed out after 30s\n"
        "  log:\n"
        "    W1\n"
        "    W2\n"
        "\n"
        "attempt 2: passed in 29.0s, seed 7, namespace conf-burst-2"
    )
