"""junit: a replay's verdicts as JUnit XML, one testcase per run, for CI systems that read it.

A failed run is a `<failure>`, an error (no verdict on the scheduler) an
`<error>`, each with its first problem as the message and every problem in the
body; a run's file is its `file` attribute.

    >>> from harness.replay.judging import RunResult
    >>> from harness.report.outcomes import Outcome
    >>> print(junit_xml([RunResult("build", "ci.yaml#1", Outcome.FAILED, 9.0, problems=("group split",))], seconds=12.0))
    <?xml version="1.0" encoding="utf-8"?>
    <testsuites tests="1" failures="1" errors="0" time="12.000"><testsuite name="rescon replay" tests="1" failures="1" errors="0" skipped="0" time="12.000"><testcase classname="replay" name="build" file="ci.yaml#1" time="9.000"><failure message="group split">group split</failure></testcase></testsuite></testsuites>
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree

from harness.replay.judging import RunResult

SUITE_NAME = "rescon replay"
CLASS_NAME = "replay"
#: Each JUnit element a verdict becomes; a pass becomes none.
ELEMENT = {"failed": "failure", "error": "error"}


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def junit_xml(results: Sequence[RunResult], *, seconds: float) -> str:
    """junit_xml() is the whole JUnit document for the runs' results; `seconds` is the replay's wall time."""
    failures = sum(1 for r in results if r.outcome.value == "failed")
    errors = sum(1 for r in results if r.outcome.value == "error")
    counts = {"tests": str(len(results)), "failures": str(failures), "errors": str(errors)}
    root = ElementTree.Element("testsuites", {**counts, "time": _seconds(seconds)})
    suite = ElementTree.SubElement(root, "testsuite", {"name": SUITE_NAME, **counts, "skipped": "0", "time": _seconds(seconds)})
    for result in results:
        case = ElementTree.SubElement(suite, "testcase", {"classname": CLASS_NAME, "name": result.name, "file": result.origin, "time": _seconds(result.seconds)})
        element = ELEMENT.get(result.outcome.value)
        if element is not None:
            verdict = ElementTree.SubElement(case, element, {"message": result.problems[0] if result.problems else result.outcome.value})
            verdict.text = "\n".join(result.problems)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode")
