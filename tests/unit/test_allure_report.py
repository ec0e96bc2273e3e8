"""Allure: the harness's own failures land in the right category, the plugin writes the report's metadata,
and `make report` renders one HTML file that holds every scenario.

A small suite of scenario modules, run in a subprocess with allure-pytest, raises
the harness's real errors through the real code (checks' helpers on a fake run,
the monitor's Violation, wait_for and hold_for with short timeouts), so the
categories are tested on the status messages allure-pytest actually records.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cluster.paths import REPO_ROOT
from harness.report.allure_metadata import CATEGORIES, categories_of, environment_properties, executor_info

pytestmark = pytest.mark.unit

FAKES = '''
"""A stand-in ScenarioRun for the checks' helpers: no cluster, short timeouts."""
from types import SimpleNamespace

from harness.timeouts import DEFAULT_TIMEOUTS

SHORT = DEFAULT_TIMEOUTS.with_overrides({"pod_created": 0.2, "pod_scheduled": 0.2, "pod_stays_pending": 0.2, "group_stays": 0.2})


def pod(name, node=None):
    return {"metadata": {"name": name, "uid": name}, "spec": {"nodeName": node} if node else {}, "status": {"phase": "Pending"}}


def run(*, pods=(), record=None):
    return SimpleNamespace(
        namespace="conf-ns", timeouts=SHORT, checks_records=True,
        assert_contract=lambda: None, record=lambda name: record,
        task_pods=lambda pipeline_run, task: list(pods),
        scheduler=SimpleNamespace(check_alive=lambda: None),
    )
'''

SCENARIO = '''
from harness.suite.features import Feature
from harness.suite.scenario import Scenario

SCENARIO = Scenario(name="{name}", description="{name} for the Allure test", features=(Feature.COLOCATION,), fixtures=())


def test_{name}():
{body}
'''

#: scenario name -> (body, the one category its result must land in; None for none of ours)
CASES: dict[str, tuple[str, str | None]] = {
    "node_overcommitted": (
        "from harness.monitor import invariants as rules\n"
        "from harness.monitor.watcher import ContractBroken, Violation\n"
        "raise ContractBroken(Violation(rules.NODE_OVERCOMMITTED, 3.2, 'node n1 holds 5000m CPU of 4800m').describe())",
        "Placement violation",
    ),
    "bound_while_held_back": (
        "import fakes\nfrom harness.suite import checks\n"
        "checks.task_pod_must_stay_pending(fakes.run(pods=[fakes.pod('b-pod', 'n1')]), 'b', 'only')",
        "Placement violation",
    ),
    "b_beside_a": (
        "b_node, node = 'n2', 'n1'\n"
        "assert b_node == node, f\"B is on {b_node}, but the pool's only node is {node}\"",
        "Placement violation",
    ),
    "claim_moved": (
        "from harness.monitor import invariants as rules\n"
        "from harness.monitor.watcher import ContractBroken, Violation\n"
        "raise ContractBroken(Violation(rules.CLAIM_CHANGED_NODE, 1.5, 'group g moved from n1 to n2').describe())",
        "Reservation-state violation",
    ),
    "group_let_go": (
        "import fakes\nfrom harness.suite import checks\n"
        "checks.group_must_stay(fakes.run(record=None), 'a', 'build', node='n1')",
        "Reservation-state violation",
    ),
    "record_lacks_group": (
        "from types import SimpleNamespace\nfrom harness.suite import checks\n"
        "checks.claim_generation_of(SimpleNamespace(key='conf-ns/a', group_of_task=lambda task: None), 'build')",
        "Reservation-state violation",
    ),
    "pod_never_bound": (
        "import fakes\nfrom harness.suite import checks\n"
        "checks.task_pod_must_be_bound(fakes.run(pods=[fakes.pod('b-pod')]), 'b', 'only')",
        "Timeout",
    ),
    "scheduler_exits_at_launch": (
        "from harness.suite.scheduler_under_test import SchedulerFailedToStart\n"
        "raise SchedulerFailedToStart(\"the scheduler under test (command) exited 0.3s after its start, "
        "saying 'invalid isolationStrategy': fix its command or configuration (log: x.log)\")",
        "Scheduler error",
    ),
    "scheduler_dies": (
        "from harness.suite.scheduler_under_test import SchedulerDied\n"
        "raise SchedulerDied(\"the scheduler under test (command) died while being tested; its last line was 'panic' (log: x.log)\")",
        "Scheduler error",
    ),
    "fixture_missing": (
        "from harness.suite import manifests\n"
        "manifests.render_text('no-such-fixture', None)",
        "Setup error",
    ),
    "passes": ("pass", None),
}


def _this_checkout_first() -> str:
    """The subprocess imports this checkout's harness, not the one the venv's editable install points at (another worktree's)."""
    return os.pathsep.join([str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """suite_run is a folder where the little suite ran: its results/ (allure-pytest) and junit.xml."""
    folder = tmp_path_factory.mktemp("allure-suite")
    (folder / "fakes.py").write_text(FAKES, encoding="utf-8")
    for name, (body, _) in CASES.items():
        indented = "\n".join("    " + line for line in body.splitlines())
        (folder / f"test_{name}.py").write_text(SCENARIO.format(name=name, body=indented), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
         "--alluredir", str(folder / "results"), "--junitxml", str(folder / "junit.xml"), str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=120, env={**os.environ, "GITHUB_ACTIONS": "", "PYTHONPATH": _this_checkout_first()},
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # some scenarios fail, as written
    return folder


def _results(folder: Path) -> dict[str, dict[str, object]]:
    results = {}
    for path in (folder / "results").glob("*-result.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        results[str(data["name"])] = data
    return results


def test_each_harness_failure_lands_in_its_one_category(suite_run: Path) -> None:
    results = _results(suite_run)
    assert sorted(results) == sorted(f"test_{name}" for name in CASES)
    found = {}
    for name, data in results.items():
        details = data.get("statusDetails") or {}
        message = str(details.get("message", "")) if isinstance(details, dict) else ""
        found[name.removeprefix("test_")] = categories_of(str(data["status"]), message)
    assert found == {name: [category] if category else [] for name, (_, category) in CASES.items()}


def test_the_plugin_writes_environment_categories_and_executor(suite_run: Path) -> None:
    results = suite_run / "results"
    environment = dict(
        line.split("=", 1) for line in (results / "environment.properties").read_text(encoding="utf-8").splitlines()
    )
    assert environment["scheduler.name"] == "tkn-scheduler"
    assert environment["scheduler.launch"] == "reference"
    assert environment["cluster"] == "local"
    assert environment["mode"] == "reservation-state"
    assert environment["coschedule"] == "disabled"
    assert environment["kubernetes.version"] == "unknown"  # no cluster came up in this run
    assert re.fullmatch(r"v?\d+\.\d+\.\d+.*", environment["tekton.version"]), environment["tekton.version"]
    assert json.loads((results / "categories.json").read_text(encoding="utf-8")) == [c.as_json() for c in CATEGORIES]
    executor = json.loads((results / "executor.json").read_text(encoding="utf-8"))
    assert executor["reportName"] == "Reservation conformance: reference-scheduler (tkn-scheduler)"


def test_environment_properties_are_escaped_as_java_reads_them() -> None:
    text = environment_properties({"scheduler.command": "/bin/s --config {config}", "a key": "x=y:z", "lead": " space"})
    assert text == "scheduler.command=/bin/s --config {config}\na\\ key=x\\=y\\:z\nlead=\\ space\n"


def test_the_executor_links_a_github_actions_run() -> None:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "42", "GITHUB_RUN_NUMBER": "7", "GITHUB_REPOSITORY": "o/r", "GITHUB_SERVER_URL": "https://github.com"}
    info = executor_info(suite_version="0.1.0", scheduler_name="s", project="p", cluster="kind", mode="placement-only", env=env)
    assert (info["buildUrl"], info["buildOrder"]) == ("https://github.com/o/r/actions/runs/42", 7)
    assert "buildUrl" not in executor_info(suite_version="0.1.0", scheduler_name="s", project="p", cluster="kind", mode="placement-only", env={})


def embedded_files(html: str) -> dict[str, bytes]:
    """embedded_files() is what a single-file Allure report carries: each data file, by path, decoded from base64."""
    return {path: base64.b64decode(data) for path, data in re.findall(r"d\('([^']+)','([A-Za-z0-9+/=]*)'\)", html)}


def test_make_report_renders_one_html_file_holding_every_scenario(suite_run: Path, tmp_path: Path) -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java on this machine: the Allure command line needs one (make report says how to install it)")
    out = tmp_path / "report"
    done = subprocess.run(
        ["make", "-s", "report", f"ALLURE_RESULTS={suite_run / 'results'}", f"REPORT_DIR={out}"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert [p.name for p in out.iterdir()] == ["index.html"]
    files = embedded_files((out / "index.html").read_text(encoding="utf-8"))
    cases = [json.loads(data) for path, data in files.items() if path.startswith("data/test-cases/")]
    assert sorted(case["name"] for case in cases) == sorted(f"test_{name}" for name in CASES)
    categories = json.loads(files["data/categories.json"])
    shown = {group["name"] for group in categories["children"]}
    assert shown == {category for _, category in CASES.values() if category}
    environment = json.loads(files["widgets/environment.json"])
    assert {"name": "scheduler.name", "values": ["tkn-scheduler"]} in environment
    assert json.loads(files["widgets/executors.json"])[0]["reportName"].startswith("Reservation conformance")


def test_every_monitor_rule_is_in_exactly_one_violation_category() -> None:
    from harness.monitor import invariants
    from harness.report.allure_metadata import PLACEMENT_RULES, RESERVATION_STATE_RULES

    rules = {value for name, value in vars(invariants).items() if name.isupper() and isinstance(value, str) and re.fullmatch(r"[a-z]+(-[a-z]+)+", value)}
    assert len(rules) >= 14
    assert sorted(PLACEMENT_RULES + RESERVATION_STATE_RULES) == sorted(rules)
    for rule in sorted(rules):
        message = f"harness.monitor.watcher.ContractBroken: contract monitor: {rule} at 1.0s: seen"
        expected = "Placement violation" if rule in PLACEMENT_RULES else "Reservation-state violation"
        assert categories_of("failed", message) == [expected], rule
