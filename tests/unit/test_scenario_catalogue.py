"""The scenario catalogue itself: unique names, existing fixtures, declared features, one scenario per file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from harness.cluster.paths import REPO_ROOT
from harness.suite.features import ALL_FEATURES
from harness.suite.manifests import RenderContext, fixture_path, render
from harness.suite.scenario import Scenario

pytestmark = pytest.mark.unit

SCENARIO_DIR = REPO_ROOT / "tests" / "conformance"


def _scenarios() -> list[tuple[Path, Scenario]]:
    found = []
    for path in sorted(SCENARIO_DIR.glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"scenario_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        scenario = getattr(module, "SCENARIO", None)
        assert isinstance(scenario, Scenario), f"{path.name} defines no SCENARIO"
        found.append((path, scenario))
    return found


SCENARIOS = _scenarios()


def test_the_catalogue_is_not_empty() -> None:
    assert len(SCENARIOS) >= 4


def test_scenario_names_are_unique_and_match_their_file() -> None:
    names = [s.name for _, s in SCENARIOS]
    assert len(names) == len(set(names)), f"duplicate scenario names: {names}"
    for path, scenario in SCENARIOS:
        assert path.stem == f"test_{scenario.name}", f"{path.name} declares scenario {scenario.name!r}"


@pytest.mark.parametrize("path, scenario", SCENARIOS, ids=[s.name for _, s in SCENARIOS])
def test_every_fixture_exists_and_renders(path: Path, scenario: Scenario) -> None:
    assert scenario.features and set(scenario.features) <= ALL_FEATURES
    assert scenario.description
    context = RenderContext(
        namespace="ns",
        scheduler_name="tkn-scheduler",
        pool_selector={"rescon.dev/pool": "p"},
        node_cpu_millis=4800,
        node_memory_bytes=8 << 30,
        pvcs={name: name for name in scenario.volumes},
        extra={"node": "p-1", **scenario.values},
    )
    for fixture in scenario.fixtures:
        assert fixture_path(fixture).is_file(), f"{scenario.name}: missing {fixture_path(fixture)}"
        docs = render(fixture, context)
        assert docs, f"{fixture} renders no object"
        for doc in docs:
            if doc["kind"] == "PipelineRun":
                pod_template = doc["spec"]["taskRunTemplate"]["podTemplate"]
                # A fixture may stand for another scheduler's run only by the scenario's declared value.
                assert pod_template["schedulerName"] in ("tkn-scheduler", scenario.values.get("other_scheduler"))
                assert pod_template["nodeSelector"] == {"rescon.dev/pool": "p"}


def test_every_fixture_file_belongs_to_a_scenario() -> None:
    used = {f for _, s in SCENARIOS for f in s.fixtures}
    for path in (REPO_ROOT / "fixtures" / "pipelines").glob("*.yaml.j2"):
        assert path.name.removesuffix(".yaml.j2") in used, f"{path.name} is used by no scenario"
