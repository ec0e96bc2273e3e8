"""output: the lines `rescon replay` prints: one per planned run before, progress while, one per run after.

    >>> from harness.replay.judging import RunResult
    >>> from harness.report.outcomes import Outcome
    >>> result_line(RunResult("build-c1", "ci.yaml#1", Outcome.PASSED, 14.25, groups=2))
    'PASSED    14.2s  build-c1  2 groups held to their peaks, no violation'
    >>> result_line(RunResult("build-c2", "ci.yaml#1", Outcome.FAILED, 9.0, problems=("node-overcommitted at 4.2s: node w1 holds ...",)))
    'FAILED     9.0s  build-c2  node-overcommitted at 4.2s: node w1 holds ...'
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.replay.judging import RunResult
from harness.replay.plan import PlannedRun

#: How much of a run's problems its line shows; the report and JUnit keep all of them.
LINE_WIDTH = 400


def _one_line(text: str) -> str:
    return " ".join(text.split())


def plan_line(run: PlannedRun) -> str:
    """plan_line() says what replay cannot simulate of a run, or that it simulates it as written.

    Example: "build-and-test (ci.yaml#3): simulated, but: result build.digest read by deploy gets ..."
    """
    head = f"{run.base} ({run.origin})"
    if not run.notes:
        return f"{head}: simulated as written"
    return f"{head}: simulated, but: " + "; ".join(run.notes)


def result_line(result: RunResult) -> str:
    """result_line() is a run's verdict, its wall time and what went wrong (or how many groups were held), on one line."""
    if result.outcome.value == "passed":
        detail = f"{result.groups} group{'s' if result.groups != 1 else ''} held to their peaks, no violation"
    else:
        detail = "; ".join(_one_line(p) for p in result.problems)
    if result.notes:
        detail += " (" + "; ".join(result.notes) + ")"
    line = f"{result.outcome.value.upper():<7}{result.seconds:7.1f}s  {result.name}  {detail}"
    return line if len(line) <= LINE_WIDTH else line[: LINE_WIDTH - 1] + "…"


def progress_line(done: int, total: int, seconds: float, *, latest: str = "", waiting: Sequence[str] = ()) -> str:
    """progress_line() is one line of progress: how many runs of the round have ended, and the last to end or the ones still going.

    >>> progress_line(3, 12, 41.0, latest="build-c2 Succeeded")
    'replay:   3/12 runs ended after 41s (build-c2 Succeeded)'
    >>> progress_line(3, 12, 60.2, waiting=["deploy-c1", "deploy-c2", "lint-c1", "lint-c2"])
    'replay:   3/12 runs ended after 60s; still going: deploy-c1, deploy-c2, lint-c1 and 1 more'
    """
    line = f"replay: {done:>3}/{total} runs ended after {seconds:.0f}s"
    if latest:
        return f"{line} ({latest})"
    if waiting:
        shown = ", ".join(waiting[:3]) + (f" and {len(waiting) - 3} more" if len(waiting) > 3 else "")
        return f"{line}; still going: {shown}"
    return line


def summary_line(results: Sequence[RunResult], seconds: float) -> str:
    """summary_line() counts the verdicts: 'replay: 10 runs: 9 passed, 1 failed, 0 errors in 93.5s'."""
    counts = {outcome: sum(1 for r in results if r.outcome.value == outcome) for outcome in ("passed", "failed", "error")}
    return f"replay: {len(results)} runs: {counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors in {seconds:.1f}s"
