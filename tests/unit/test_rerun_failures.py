"""--rerun-failures: a scenario that fails and then passes when run again is reported flaky, with both attempts.

The plumbing is pytest-rerunfailures' (it runs the item again in the same
session, keeping session fixtures); the plugin turns its "rerun" reports into
a scenario's earlier attempts, in a plain session and in xdist's controller.
Fake scenarios only: a module-level `run` fixture stands in for the plugin's,
so no test here needs a cluster, and the xdist controller is told that no
scenario needs one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.conformance_report import ConformanceReport, Outcome, Result, read_report
from harness.report.timings import LatencySummary

pytest_plugins = ("pytester",)
pytestmark = pytest.mark.unit

#: A scenario that fails on its first call and passes on its second (a file beside it remembers), noting a seed and a log line per attempt.
WOBBLY = '''
import logging
from pathlib import Path

from harness.suite.features import Feature
from harness.suite.scenario import Scenario
from harness.suite.seeds import note_seed

SCENARIO = Scenario(name="wobbly", description="fails once", features=(Feature.COLOCATION,), fixtures=())


def test_wobbly(request):
    marker = Path(__file__).with_suffix(".ran")
    first = not marker.exists()
    marker.write_text("ran")
    note_seed(request.node, 7 if first else 8)
    logging.getLogger("rescon.fake").warning("attempt %s", "one" if first else "two")
    assert not first, "b is on n1, beside a's reservation"
'''

STEADY = '''
from harness.suite.features import Feature
from harness.suite.scenario import Scenario

SCENARIO = Scenario(name="{name}", description="{behaviour}", features=(Feature.COLOCATION,), fixtures=())


def test_{name}():
    assert {passes}, "node-a is not node-b"
'''

#: A stand-in for the plugin's `run` fixture: a namespace per attempt and a monitor whose latencies are given.
FAKE_RUN = '''
import itertools
from types import SimpleNamespace

import pytest

from harness.monitor.latencies import Latencies

_attempt = itertools.count(1)


class FakeMonitor:
    def __init__(self, claim):
        self.claim = claim

    def latencies(self):
        return Latencies(claim=(self.claim,), requeue=(self.claim * 10,))

    def describe_violations(self):
        return None

    def stop(self):
        pass

    def raise_if_violated(self, *, final=False):
        pass


@pytest.fixture
def run(request):
    return SimpleNamespace(namespace=f"conf-{{request.node.name}}-{{next(_attempt)}}", monitor=FakeMonitor({claim}))
'''


def _counts(result: pytest.RunResult) -> dict[str, int]:
    """_counts() is pytest's closing line as a dict of outcomes: {"passed": 2, "rerun": 1} (assert_outcomes knows no reruns).

    Warnings are left out: an in-process run warns that `harness` is already imported where the
    outer session imported it first (a fresh clone's venv), which says nothing about the outcomes.
    """
    return {key: count for key, count in result.parseoutcomes().items() if key not in ("warning", "warnings")}


def _report(pytester: pytest.Pytester) -> ConformanceReport:
    return read_report(pytester.path / "report.yaml")


def _by_name(report: ConformanceReport) -> dict[str, Outcome]:
    return {t.name: t.outcome for t in report.tests}


def test_a_scenario_that_fails_then_passes_is_flaky_with_both_attempts_seeds_and_logs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_wobbly=WOBBLY, test_steady=STEADY.format(name="steady", behaviour="passes", passes=True))
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--rerun-failures", "1", "--report-output", "report.yaml")
    assert _counts(result) == dict(passed=2, rerun=1)
    report = _report(pytester)
    assert _by_name(report) == {"steady": Outcome.PASSED, "wobbly": Outcome.FLAKY}
    core = report.profile().core
    assert (core.result, core.statistics.flaky, core.statistics.passed, core.flaky_tests) == (Result.PARTIAL, 1, 1, ("wobbly",))
    (wobbly,) = [t for t in report.tests if t.name == "wobbly"]
    first, second = wobbly.attempts
    assert (first.outcome, first.seed, second.outcome, second.seed) == (Outcome.FAILED, 7, Outcome.PASSED, 8)
    assert "b is on n1, beside a's reservation" in first.message and second.message == ""
    assert "attempt one" in first.log and "attempt two" not in first.log
    assert "attempt two" in second.log and "attempt one" not in second.log, "each attempt keeps its own log, not the ones before"
    result.stdout.fnmatch_lines(["FLAKY * wobbly", "Reservation core: partial (Passed 1, Failed 0, Skipped 0, Flaky 1)"])


def test_without_the_option_the_same_scenario_is_a_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_wobbly=WOBBLY)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--report-output", "report.yaml")
    result.assert_outcomes(failed=1)
    report = _report(pytester)
    assert _by_name(report) == {"wobbly": Outcome.FAILED}
    assert report.tests[0].attempts == () and report.profile().core.result is Result.FAILURE


def test_a_scenario_that_fails_every_attempt_is_a_failure_with_every_attempt(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_broken=STEADY.format(name="broken", behaviour="always fails", passes=False))
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--rerun-failures", "2", "--report-output", "report.yaml")
    assert _counts(result) == dict(failed=1, rerun=2)
    (broken,) = _report(pytester).tests
    assert broken.outcome is Outcome.FAILED
    assert [a.outcome for a in broken.attempts] == [Outcome.FAILED] * 3


def test_the_rerun_keeps_session_fixtures_even_for_the_last_scenario(pytester: pytest.Pytester) -> None:
    """The cluster, the scheduler under test and the kube client are session fixtures: a rerun must not tear them down."""
    pytester.makeconftest('''
import pytest
from pathlib import Path

@pytest.fixture(scope="session")
def cluster_like():
    log = Path("setups.txt")
    log.write_text(log.read_text() + "up\\n" if log.exists() else "up\\n")
    yield
    log.write_text(log.read_text() + "down\\n")
''')
    pytester.makepyfile(test_wobbly=WOBBLY.replace("def test_wobbly(request):", "def test_wobbly(request, cluster_like):"))
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--rerun-failures", "1")
    assert _counts(result) == dict(passed=1, rerun=1)
    assert (pytester.path / "setups.txt").read_text().split() == ["up", "down"]


def test_a_flaky_scenario_is_tagged_in_allure_with_its_attempts_and_named_in_the_environment(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_wobbly=WOBBLY)
    pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--rerun-failures", "1", "--alluredir", "allure")
    results = [json.loads(p.read_text()) for p in (pytester.path / "allure").glob("*-result.json")]
    by_status = {r["status"]: r for r in results}
    assert sorted(by_status) == ["failed", "passed"], "each attempt is its own Allure result (a retry of the same test)"
    passed = by_status["passed"]
    assert {"name": "tag", "value": "flaky"} in passed["labels"]
    assert {"name": "tag", "value": "flaky"} not in by_status["failed"]["labels"]
    (attached,) = [a for a in passed["attachments"] if a["name"] == "attempts (2)"]
    text = (pytester.path / "allure" / attached["source"]).read_text()
    assert text.startswith("attempt 1: failed in ") and ", seed 7, " in text and "attempt 2: passed in " in text
    environment = (pytester.path / "allure" / "environment.properties").read_text()
    assert "flaky=1\\: wobbly\n" in environment
    assert "timings.claim=no sample\n" in environment


def test_with_xdist_every_workers_attempts_and_latencies_reach_the_controllers_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The controller must not bring up the local cluster for these fakes (harness.suite.session.ControllerCluster).
    monkeypatch.setattr("harness.suite.workers.runs_scenarios", lambda args, root: False)
    for number, claim in enumerate((0.1, 0.2, 0.3, 0.4)):
        name = f"steady{number}"
        pytester.makepyfile(**{f"test_{name}": STEADY.format(name=name, behaviour="passes", passes=True) + FAKE_RUN.format(claim=claim)})
        pytester.path.joinpath(f"test_{name}.py").write_text(
            pytester.path.joinpath(f"test_{name}.py").read_text().replace(f"def test_{name}():", f"def test_{name}(run):")
        )
    pytester.makepyfile(test_wobbly=WOBBLY.replace("def test_wobbly(request):", "def test_wobbly(request, run):") + FAKE_RUN.format(claim=1.0))
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "-n", "2", "-v", "--rerun-failures", "1", "--report-output", "report.yaml")
    assert _counts(result) == dict(passed=5, rerun=1)
    result.stdout.fnmatch_lines(["[[]gw0[]] *PASSED*"])
    result.stdout.fnmatch_lines(["[[]gw1[]] *PASSED*"])  # both workers ran scenarios: their samples met only in the controller
    report = _report(pytester)
    assert _by_name(report)["wobbly"] is Outcome.FLAKY
    (wobbly,) = [t for t in report.tests if t.name == "wobbly"]
    assert [a.seed for a in wobbly.attempts] == [7, 8]
    assert [a.namespace for a in wobbly.attempts] == ["conf-test_wobbly-1", "conf-test_wobbly-2"], "a new namespace per attempt"
    # Six attempts' samples pooled in the controller: claims 0.1, 0.2, 0.3, 0.4 and wobbly's 1.0 twice (its failed attempt counts too).
    # Nearest-rank over six: p50 is rank 3 (0.3), p99 rank 6 (1.0).
    assert report.timings is not None
    assert report.timings.claim == LatencySummary(6, 0.3, 1.0, 1.0)
    assert report.timings.requeue == LatencySummary(6, 3.0, 10.0, 10.0)
    assert report.timings.release == LatencySummary(0)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param(["--rerun-failures", "-1"], "give a number of reruns, 0 or more", id="negative"),
        pytest.param(["--rerun-failures", "2", "--reruns", "3"], "--rerun-failures 2 and --reruns 3 disagree", id="disagrees-with-reruns"),
        pytest.param(["--rerun-failures", "1", "-p", "no:rerunfailures"], "needs pytest-rerunfailures", id="plugin-disabled"),
    ],
)
def test_a_rerun_option_that_cannot_work_is_refused(pytester: pytest.Pytester, args: list[str], error: str) -> None:
    pytester.makepyfile(test_wobbly=WOBBLY)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{error}*"])
