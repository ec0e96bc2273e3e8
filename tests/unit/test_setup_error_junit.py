"""A setup error met in a scenario's body is an error in JUnit and in pytest's counts, a verdict is a failure.

pytest calls a failed report an error only when its phase is not "call", so a
scheduler that exits at launch while the first scenario's body waits for it
(SchedulerFailedToStart) would read as a conformance failure. The plugin makes
such a report read as an error; a timeout or an assertion stays a failure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest_plugins = ("pytester",)
pytestmark = pytest.mark.unit

SCENARIOS = '''
from harness.suite.features import Feature
from harness.suite.scenario import Scenario

SCENARIO = Scenario(name="{name}", description="d", features=(Feature.COLOCATION,), fixtures=())


def test_{name}():
    {body}
'''

BODIES = {
    "launch_fails": (
        "from harness.suite.scheduler_under_test import SchedulerFailedToStart\n"
        "    raise SchedulerFailedToStart(\"the scheduler under test (command) exited 0.3s after its start, "
        "saying 'invalid isolationStrategy': fix its command or configuration\", "
        "detail='I1201 starting\\nE1201 config: invalid isolationStrategy \"pods\"')"
    ),
    "fixture_broken": (
        "from harness.errors import HarnessError\n"
        "    raise HarnessError('fixture colocation-a renders invalid YAML: mapping values are not allowed here')"
    ),
    "times_out": (
        "from harness.waits import WaitTimeout\n"
        "    raise WaitTimeout('timed out after 30s (pod_scheduled) waiting for pod b bound: b is Pending on no node')"
    ),
    "asserts": "assert 'node-a' == 'node-b', 'b shares a node with a'",
}


def _run(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, str]]:
    for name, body in BODIES.items():
        pytester.makepyfile(**{f"test_{name}": SCENARIOS.format(name=name, body=body)})
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--junitxml=junit.xml")
    tree = ET.parse(pytester.path / "junit.xml")
    kinds = {}
    for case in tree.iter("testcase"):
        children = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        kinds[case.attrib["name"]] = ",".join(children) or "passed"
    return result, kinds


def test_setup_errors_in_the_body_are_junit_errors_and_verdicts_are_failures(pytester: pytest.Pytester) -> None:
    _, kinds = _run(pytester)
    assert kinds == {
        "test_launch_fails": "error",
        "test_fixture_broken": "error",
        "test_times_out": "failure",
        "test_asserts": "failure",
    }


def test_pytest_counts_them_as_errors_and_says_they_happened_in_the_body(pytester: pytest.Pytester) -> None:
    result, _ = _run(pytester)
    result.assert_outcomes(failed=2, errors=2)
    # The summary still names the phase the error came from: the report's `when` is put back.
    result.stdout.fnmatch_lines(["*ERROR at call of test_launch_fails*", "*SchedulerFailedToStart: the scheduler under test (command) exited*"])
    testsuite = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert testsuite is not None
    assert (testsuite.attrib["errors"], testsuite.attrib["failures"]) == ("2", "2")


def test_the_log_tail_of_a_scheduler_that_failed_to_start_is_in_the_terminal_junit_and_the_report(pytester: pytest.Pytester) -> None:
    for name, body in BODIES.items():
        pytester.makepyfile(**{f"test_{name}": SCENARIOS.format(name=name, body=body)})
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--junitxml=junit.xml", "--report-output=report.yaml")
    result.stdout.fnmatch_lines(["*the scheduler's log tail*", '*E1201 config: invalid isolationStrategy "pods"*'])
    case = next(c for c in ET.parse(pytester.path / "junit.xml").iter("testcase") if c.attrib["name"] == "test_launch_fails")
    error = case.find("error")
    assert error is not None and 'invalid isolationStrategy "pods"' in (error.text or "")
    from harness.report.conformance_report import read_report

    report = read_report(pytester.path / "report.yaml")
    (launch,) = [t for t in report.tests if t.name == "launch_fails"]
    assert launch.outcome.value == "error" and 'E1201 config: invalid isolationStrategy "pods"' in launch.message
    assert [p.core.result.value for p in report.profiles] == ["error"]
