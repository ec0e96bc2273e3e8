"""The scenario catalogue itself: unique names, existing fixtures, declared features, one scenario per file."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.cluster.paths import REPO_ROOT
from harness.suite.features import ALL_FEATURES
from harness.suite.manifests import RenderContext, fixture_path, render
from harness.suite.scenario import OWN_NAMED_KINDS, Scenario, names_outside_prefix, object_name_prefix, provider_skip_reason

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


def _context(scenario: Scenario) -> RenderContext:
    """_context() is a dummy RenderContext; a shared fixture named by its caller (`name`) gets a name of the scenario's."""
    return RenderContext(
        namespace="ns",
        scheduler_name="tkn-scheduler",
        pool_selector={"rescon.dev/pool": "p"},
        node_cpu_millis=4800,
        node_memory_bytes=8 << 30,
        pvcs={name: name for name in (*scenario.volumes, *scenario.pinned_volumes)},
        extra={"node": "p-1", "name": f"{object_name_prefix(scenario.name)}-named-by-the-test", **scenario.values},
    )


@pytest.mark.parametrize("path, scenario", SCENARIOS, ids=[s.name for _, s in SCENARIOS])
def test_every_fixture_exists_and_renders(path: Path, scenario: Scenario) -> None:
    assert scenario.features and set(scenario.features) <= ALL_FEATURES
    assert scenario.description
    context = _context(scenario)
    for fixture in scenario.fixtures:
        assert fixture_path(fixture).is_file(), f"{scenario.name}: missing {fixture_path(fixture)}"
        docs = render(fixture, context)
        assert docs, f"{fixture} renders no object"
        for doc in docs:
            if doc["kind"] == "PipelineRun":
                pod_template = doc["spec"]["taskRunTemplate"]["podTemplate"]
                # A fixture may stand for another scheduler's run only by the scenario's declared value, and leave the
                # scheduler to Tekton's default-pod-template only in a scenario that sets it.
                if "schedulerName" not in pod_template:
                    assert DEFAULT_POD_TEMPLATE in scenario.tekton_settings, f"{fixture}: no scheduler named, and no default-pod-template to name it"
                else:
                    assert pod_template["schedulerName"] in ("tkn-scheduler", scenario.values.get("other_scheduler"))
                assert pod_template["nodeSelector"] == {"rescon.dev/pool": "p"}


def test_every_fixture_file_belongs_to_a_scenario() -> None:
    used = {f for _, s in SCENARIOS for f in s.fixtures}
    for path in (REPO_ROOT / "fixtures" / "pipelines").glob("*.yaml.j2"):
        assert path.name.removesuffix(".yaml.j2") in used, f"{path.name} is used by no scenario"


# --- names: no two scenarios create a PipelineRun, TaskRun or pod of one name ---------------
# A scheduler may find a run's pods by the tekton.dev/pipelineRun label across namespaces; two scenarios
# running at once (pytest -n 2) with a PipelineRun of one name would then fail together, by chance.


def test_no_scenario_prefix_begins_another() -> None:
    """Names `<prefix>` or `<prefix>-...` are a scenario's alone only if no prefix is another's followed by `-...`."""
    prefixes = sorted(object_name_prefix(s.name) for _, s in SCENARIOS)
    for prefix in prefixes:
        nested = [other for other in prefixes if other.startswith(f"{prefix}-")]
        assert not nested, f"scenario prefix {prefix!r} begins {nested}: their objects' names could meet"


@pytest.mark.parametrize("path, scenario", SCENARIOS, ids=[s.name for _, s in SCENARIOS])
def test_every_scenario_names_its_objects_after_itself(path: Path, scenario: Scenario) -> None:
    docs = [doc for fixture in scenario.fixtures for doc in render(fixture, _context(scenario))]
    assert not names_outside_prefix(scenario.name, docs), (
        f"{scenario.name}: name these after the scenario ({object_name_prefix(scenario.name)}-...): {names_outside_prefix(scenario.name, docs)}"
    )


def test_no_two_scenarios_create_objects_of_one_name() -> None:
    owners: dict[tuple[str, str], set[str]] = {}
    for _, scenario in SCENARIOS:
        for fixture in scenario.fixtures:
            for doc in render(fixture, _context(scenario)):
                if doc["kind"] in OWN_NAMED_KINDS:
                    # A generateName is a prefix the server completes: two scenarios must not share it either.
                    name = doc["metadata"].get("name") or f"{doc['metadata']['generateName']}*"
                    owners.setdefault((doc["kind"], name), set()).add(scenario.name)
    shared = {f"{kind}/{name}": sorted(names) for (kind, name), names in owners.items() if len(names) > 1}
    assert not shared, f"scenarios that create objects of one name: {shared}"
    assert any(kind == "PipelineRun" for kind, _ in owners), "no PipelineRun rendered: the check checked nothing"


def test_names_outside_prefix() -> None:
    docs = [
        {"kind": "PipelineRun", "metadata": {"name": "a"}},
        {"kind": "PipelineRun", "metadata": {"name": "task-ref-a"}},
        {"kind": "Pod", "metadata": {"name": "task-ref"}},
        {"kind": "Pod", "metadata": {"name": "task-refa"}},
        {"kind": "TaskRun", "metadata": {"name": "filler"}},
        {"kind": "Task", "metadata": {"name": "big-task"}},
        {"kind": "ResourceQuota", "metadata": {"name": "hold-new-pods"}},
    ]
    assert names_outside_prefix("task_ref", docs) == ["PipelineRun/a", "Pod/task-refa", "TaskRun/filler"]
    assert object_name_prefix("peak_blocks_b") == "peak-blocks-b"


def test_a_generated_name_must_start_with_the_prefix_itself() -> None:
    docs = [
        {"kind": "PipelineRun", "metadata": {"generateName": "task-ref-build-"}},
        {"kind": "PipelineRun", "metadata": {"generateName": "task-ref"}},
        {"kind": "PipelineRun", "metadata": {"generateName": "build-"}},
        {"kind": "Task", "metadata": {"generateName": "anything-"}},
    ]
    assert names_outside_prefix("task_ref", docs) == ["PipelineRun/task-ref*", "PipelineRun/build-*"]


def test_a_scenario_that_changes_tektons_settings_runs_in_the_window_and_never_on_a_borrowed_cluster() -> None:
    from harness.suite.workers import Slot, slot_of

    setting = [s for _, s in SCENARIOS if s.tekton_settings]
    assert setting, "no scenario sets config-defaults: default-pod-template and container defaults go unused"
    for scenario in setting:
        assert slot_of(scenario) is Slot.TEKTON_SETTINGS, f"{scenario.name} changes Tekton's settings: it runs in their window, not alone"
        assert provider_skip_reason(scenario, provider="existing", restartable=frozenset()) is not None
        assert provider_skip_reason(scenario, provider="kind", restartable=frozenset()) is None
        for setting_name in scenario.tekton_settings:
            config_map, _, key = setting_name.partition("/")
            assert config_map in ("config-defaults", "feature-flags") and key, f"{scenario.name}: {setting_name!r} is not '<config map>/<key>'"


def test_no_two_scenarios_change_one_tekton_setting() -> None:
    owners: dict[str, list[str]] = {}
    for _, scenario in SCENARIOS:
        for setting in scenario.tekton_settings:
            owners.setdefault(setting, []).append(scenario.name)
    assert owners, "no scenario changes a Tekton setting: the check checked nothing"
    assert not {k: v for k, v in owners.items() if len(v) > 1}, f"scenarios that change one Tekton setting: {owners}"


# --- the Tekton settings window: no scenario's run is reshaped by another's settings --------------------
DEFAULT_POD_TEMPLATE = "config-defaults/default-pod-template"
CONTAINER_DEFAULTS = "config-defaults/default-container-resource-requirements"
NATIVE_SIDECARS = "feature-flags/enable-kubernetes-sidecar"
API_FIELDS = "feature-flags/enable-api-fields"


def _task_specs(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """_task_specs() yields every Task's spec and every embedded taskSpec of the docs, child pipelines' included."""

    def in_pipeline(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
        for task in [*(spec.get("tasks") or []), *(spec.get("finally") or [])]:
            if task.get("taskSpec"):
                yield task["taskSpec"]
            if task.get("pipelineSpec"):
                yield from in_pipeline(task["pipelineSpec"])

    for doc in docs:
        if doc["kind"] == "Task":
            yield doc["spec"]
        elif doc["kind"] == "Pipeline":
            yield from in_pipeline(doc["spec"])
        elif doc["kind"] == "PipelineRun" and doc["spec"].get("pipelineSpec"):
            yield from in_pipeline(doc["spec"]["pipelineSpec"])


def _settings_read_by(docs: list[dict[str, Any]]) -> set[str]:
    """_settings_read_by() is the Tekton settings whose change reshapes the docs' task pods, or lets Tekton admit them.

    A run that names no scheduler reads default-pod-template; a step or sidecar that asks for nothing (no
    computeResources of its own, of its task or of a stepTemplate) reads the container defaults; a sidecar reads
    enable-kubernetes-sidecar; a pipeline in a pipeline needs enable-api-fields alpha. enable-api-fields changes
    which fields Tekton admits, not the pods it builds for fields every level admits.
    """
    read: set[str] = set()
    for doc in docs:
        if doc["kind"] == "PipelineRun" and "schedulerName" not in ((doc["spec"].get("taskRunTemplate") or {}).get("podTemplate") or {}):
            read.add(DEFAULT_POD_TEMPLATE)
        if doc["kind"] in ("Pipeline", "PipelineRun"):
            spec = doc["spec"] if doc["kind"] == "Pipeline" else doc["spec"].get("pipelineSpec") or {}
            if any(t.get("pipelineSpec") or t.get("pipelineRef") for t in [*(spec.get("tasks") or []), *(spec.get("finally") or [])]):
                read.add(API_FIELDS)
    for task_spec in _task_specs(docs):
        sized_for_all = task_spec.get("computeResources") or (task_spec.get("stepTemplate") or {}).get("computeResources")
        containers = [*(task_spec.get("steps") or []), *(task_spec.get("sidecars") or [])]
        if not sized_for_all and any(not c.get("computeResources") and not c.get("resources") for c in containers):
            read.add(CONTAINER_DEFAULTS)
        if task_spec.get("sidecars"):
            read.add(NATIVE_SIDECARS)
    return read


def test_no_scenario_in_the_settings_window_has_a_run_another_ones_settings_reshape() -> None:
    window = [s for _, s in SCENARIOS if s.tekton_settings]
    assert len(window) >= 2, "fewer than two scenarios change Tekton's settings: the check checked nothing"
    for scenario in window:
        read = _settings_read_by([doc for fixture in scenario.fixtures for doc in render(fixture, _context(scenario))])
        others = {setting for other in window if other is not scenario for setting in other.tekton_settings}
        assert not read & others, f"{scenario.name}'s runs read {sorted(read & others)}, which another scenario of the window changes"


def test_what_reshapes_a_run_is_read_from_its_tasks() -> None:
    bare = {"steps": [{"name": "s"}]}
    sized = {"steps": [{"name": "s", "computeResources": {"requests": {"cpu": "1"}}}]}
    run = {"kind": "PipelineRun", "spec": {"taskRunTemplate": {"podTemplate": {"schedulerName": "s"}}, "pipelineSpec": {"tasks": [{"name": "t", "taskSpec": sized}]}}}
    assert _settings_read_by([run]) == set()
    unnamed = {"kind": "PipelineRun", "spec": {"pipelineSpec": {"tasks": [{"name": "t", "taskSpec": sized}]}}}
    assert _settings_read_by([unnamed]) == {DEFAULT_POD_TEMPLATE}
    child = {"kind": "Pipeline", "spec": {"tasks": [{"name": "c", "pipelineSpec": {"tasks": [{"name": "t", "taskSpec": {**sized, "sidecars": [{"name": "x"}]}}]}}]}}
    assert _settings_read_by([child]) == {API_FIELDS, NATIVE_SIDECARS, CONTAINER_DEFAULTS}
    assert _settings_read_by([{"kind": "Task", "spec": bare}]) == {CONTAINER_DEFAULTS}
    assert _settings_read_by([{"kind": "Task", "spec": {**bare, "stepTemplate": {"computeResources": {"requests": {"cpu": "1"}}}}}]) == set()


def test_the_config_defaults_probe_is_a_taskrun_tektons_webhook_admits() -> None:
    from harness.suite.tekton_defaults import probe_task_run

    probe = probe_task_run("tekton-config-defaults-probe")
    assert "metadata" not in probe["spec"]["taskSpec"], "a TaskRun's taskSpec has no metadata: the webhook refuses it"
    assert probe["metadata"]["annotations"]["sim.rescon.dev/hold"] == "true"
    assert probe["metadata"]["generateName"] == "tekton-config-defaults-probe-"
