"""rescon replay's pictures and Allure results: each run drawn from its own pods and bands, each run one Allure result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.monitor.watcher import Violation
from harness.replay.allure_results import SUITE, allure_result, write_allure_results
from harness.replay.judging import RunResult
from harness.replay.nodes import NodeSpec
from harness.replay.pictures import RoundPictures, node_capacities
from harness.replay.session import violation_marks
from harness.report.outcomes import Outcome

pytestmark = pytest.mark.unit

RUN_LABEL = "tekton.dev/pipelineRun"


def _pod(name: str, run: str, node: str | None, phase: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "uid": name, "labels": {RUN_LABEL: run}},
            "spec": {"nodeName": node, "containers": [{"name": "step", "resources": {"requests": {"cpu": "500m"}}}]},
            "status": {"phase": phase}}


def _pictures() -> RoundPictures:
    nodes = node_capacities([NodeSpec("w1", {"cpu": "4", "memory": "8Gi"}, {"cpu": "4200m", "memory": "8704Mi"})])
    pictures = RoundPictures(None, "ns", nodes)  # type: ignore[arg-type]  # fed by hand below: no sampling thread, no API
    for t, phase in ((1.0, "Running"), (3.0, "Succeeded")):
        pods = [_pod("a-c1-build-pod", "a-c1", "w1", phase), _pod("a-c10-build-pod", "a-c10", "w1", phase)]
        for pod in pods:
            pictures.run_of_pod[pod["metadata"]["name"]] = pod["metadata"]["labels"][RUN_LABEL]
        pictures.recorder.observe_pods(t, pods)
    pictures.recorder.finish(4.0)
    return pictures


def test_node_capacities_are_the_pools_allocatable() -> None:
    (node,) = node_capacities([NodeSpec("w1", {"cpu": "4", "memory": "8Gi", "example.com/gpu": "2"}, {})])
    assert (node.node, node.cpu_millis, node.memory_bytes, node.others) == ("w1", 4000, 8 * 2**30, (("example.com/gpu", 2),))


def test_each_run_is_drawn_from_its_own_pods_and_a_run_without_any_is_not(tmp_path: Path) -> None:
    drawn = _pictures().render(["a-c1", "a-c10", "never-started"], tmp_path, marks={"a-c1": [(2.0, "node-overcommitted")]})
    assert sorted(drawn) == ["a-c1", "a-c10"]
    assert [path.name for path in drawn.values()] == ["a-c1.svg", "a-c10.svg"]
    assert all(ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg" for path in drawn.values())


def test_violations_mark_the_runs_they_name_and_a_node_only_one_marks_every_run() -> None:
    pods = [_pod("a-c1-build-pod", "a-c1", "w1", "Running"), _pod("b-c1-build-pod", "b-c1", "w1", "Running")]
    violations = [
        Violation("record-after-bind", 2.0, "...", ("pod ns/a-c1-build-pod",)),
        Violation("node-overcommitted", 5.0, "...", ("node w1",)),
    ]
    marks = violation_marks(violations, pods, ["a-c1", "b-c1"], shift=-1.5)
    assert marks == {"a-c1": [(0.5, "record-after-bind"), (3.5, "node-overcommitted")], "b-c1": [(3.5, "node-overcommitted")]}


def test_a_run_is_one_allure_result_with_its_verdict_problems_and_notes() -> None:
    result = allure_result(
        RunResult("build-c2", "ci.yaml#1", Outcome.FAILED, 6.5, groups=1, problems=("release-late at 21.0s: ...",), notes=("a note",)),
        stop_ms=10_000,
    )
    assert (result.name, result.status, result.start, result.stop) == ("build-c2", "failed", 3_500, 10_000)
    assert result.statusDetails.message == "release-late at 21.0s: ..."
    assert result.description == "from ci.yaml#1\na note"
    assert {(label.name, label.value) for label in result.labels} >= {("suite", SUITE)}
    assert allure_result(RunResult("x", "o", Outcome.ERROR, 1.0), stop_ms=1).status == "broken"


def test_results_are_written_with_the_pictures_attached(tmp_path: Path) -> None:
    picture = tmp_path / "a-c1.svg"
    picture.write_text("<svg/>")
    results = [RunResult("a-c1", "o", Outcome.PASSED, 1.0), RunResult("b-c1", "o", Outcome.PASSED, 1.0)]
    assert write_allure_results(results, tmp_path / "allure", pictures={"a-c1": picture}, stop_ms=5_000) == 2
    written = {r["name"]: r for r in (json.loads(p.read_text()) for p in (tmp_path / "allure").glob("*-result.json"))}
    (attachment,) = written["a-c1"]["attachments"]
    assert attachment["name"] == "timeline" and (tmp_path / "allure" / attachment["source"]).read_text() == "<svg/>"
    assert attachment["type"] == "image/svg+xml" and attachment["source"].endswith(".svg")
    assert "attachments" not in written["b-c1"] or written["b-c1"]["attachments"] == []
