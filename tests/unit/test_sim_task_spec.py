"""sim_task_spec: the task shapes fixtures ask for, and the plain shape unchanged for existing fixtures."""

from __future__ import annotations

import pytest

from harness.cluster.simulation import HOLD, LINGER_SCRIPT, PODINFO_DIR, STEP_IMAGE, STEP_SCRIPT, sim_task_spec

pytestmark = pytest.mark.unit


def test_the_plain_shape_is_one_step_with_its_requests() -> None:
    spec = sim_task_spec(cpu="480m", memory="1Gi", hold=True)
    assert spec["metadata"] == {"annotations": {HOLD: "true"}}
    assert spec["workspaces"] == [{"name": "w"}]
    assert spec["steps"] == [
        {
            "name": "work",
            "image": STEP_IMAGE,
            "command": ["sh", "-c", STEP_SCRIPT],
            "computeResources": {"requests": {"cpu": "480m", "memory": "1Gi"}},
            "volumeMounts": [{"name": "podinfo", "mountPath": PODINFO_DIR}],
        }
    ]
    assert set(spec) == {"metadata", "workspaces", "volumes", "steps"}


def test_as_script_makes_the_step_and_a_lingering_sidecar_tektons_script() -> None:
    # Tekton adds its place-scripts init container only for a step or sidecar with a script (pkg/pod/script.go).
    spec = sim_task_spec(cpu="1", linger=True, as_script=True)
    assert spec["steps"][0]["script"] == STEP_SCRIPT and "command" not in spec["steps"][0]
    assert spec["sidecars"][0]["script"] == LINGER_SCRIPT and "command" not in spec["sidecars"][0]
    plain = sim_task_spec(cpu="1", linger=True)
    assert plain["sidecars"][0]["command"] == ["sh", "-c", LINGER_SCRIPT] and "script" not in plain["sidecars"][0]
    assert not any("script" in c for c in (*plain["steps"], *plain["sidecars"]))


def test_a_lingering_sidecar_keeps_its_name_and_default() -> None:
    assert sim_task_spec(cpu="1", linger=True)["sidecars"][0]["computeResources"] == {"requests": {"cpu": "10m"}}
    assert sim_task_spec(cpu="1", linger=True, sidecar_cpu="480m")["sidecars"][0]["name"] == "linger"


def test_a_held_linger_is_annotated_and_needs_a_lingering_sidecar_without_a_time() -> None:
    spec = sim_task_spec(cpu="1", linger=True, linger_held=True)
    assert spec["metadata"]["annotations"] == {"sim.rescon.dev/linger": "true", "sim.rescon.dev/linger-held": "true"}
    assert spec["sidecars"][0]["name"] == "linger"
    with pytest.raises(ValueError, match="needs linger=True and no linger_for"):
        sim_task_spec(cpu="1", linger_held=True)
    with pytest.raises(ValueError, match="needs linger=True and no linger_for"):
        sim_task_spec(cpu="1", linger=True, linger_for="12s", linger_held=True)


def test_a_plain_sidecar_asks_what_it_is_given() -> None:
    (sidecar,) = sim_task_spec(cpu="1", sidecar_cpu="400m", sidecar_memory="1Gi")["sidecars"]
    assert sidecar["name"] == "helper"
    assert sidecar["computeResources"] == {"requests": {"cpu": "400m", "memory": "1Gi"}}


def test_extra_steps_and_a_step_template() -> None:
    spec = sim_task_spec(cpu=None, extra_steps=[{"cpu": "100m"}, {}], step_template={"cpu": "1", "memory": "1Gi"})
    work, second, third = spec["steps"]
    assert "computeResources" not in work and "computeResources" not in third
    assert (second["name"], second["computeResources"]) == ("work-2", {"requests": {"cpu": "100m"}})
    assert third["name"] == "work-3"
    assert spec["stepTemplate"] == {"computeResources": {"requests": {"cpu": "1", "memory": "1Gi"}}}


def test_params_and_results_are_declared_as_strings() -> None:
    spec = sim_task_spec(cpu="1", params=["shard"], results=["digest"])
    assert spec["params"] == [{"name": "shard", "type": "string"}]
    assert spec["results"] == [{"name": "digest", "type": "string"}]


def test_written_results_are_declared_by_their_type_and_given_as_annotations() -> None:
    spec = sim_task_spec(cpu="1", results=["digest"], writes={"shards": ["a", "b", "c"], "commit": "abc123"})
    assert spec["results"] == [
        {"name": "digest", "type": "string"}, {"name": "shards", "type": "array"}, {"name": "commit", "type": "string"},
    ]
    assert spec["metadata"]["annotations"] == {"sim.rescon.dev/result.shards": '["a","b","c"]', "sim.rescon.dev/result.commit": "abc123"}


def test_env_goes_on_the_first_step() -> None:
    spec = sim_task_spec(cpu="1", env={"SOURCE_DIR": "$(workspaces.source.path)"}, workspaces=())
    assert spec["steps"][0]["env"] == [{"name": "SOURCE_DIR", "value": "$(workspaces.source.path)"}]
    assert spec["workspaces"] == []
