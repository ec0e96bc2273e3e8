"""rescon replay's step rewriting: the simulation vocabulary in, the user's requests and workspace references kept to the letter."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.cluster.simulation import HOLD, IDLE_SIDECAR_COMMAND, PODINFO_DIR, RESULT, RUN_FOR, STEP_IMAGE, STEP_SCRIPT
from harness.generative.pod_requests import contract_pod_request, contract_requests
from harness.monitor.expected_groups import referenced_workspaces
from harness.quantities import Amount
from harness.replay.steps import PLACEHOLDER, PODINFO_VOLUME, simulated_embedded, simulated_task, simulated_task_spec

pytestmark = pytest.mark.unit

GO_TASK: dict[str, Any] = {
    "apiVersion": "tekton.dev/v1",
    "kind": "Task",
    "metadata": {"name": "go-build", "namespace": "ci", "uid": "abc", "labels": {"app": "ci"}, "annotations": {HOLD: "true", "team": "core"}},
    "spec": {
        "params": [{"name": "package", "default": "./..."}],
        "results": [{"name": "digest"}, {"name": "shards", "type": "array"}],
        "workspaces": [{"name": "source"}, {"name": "cache", "optional": True}],
        "stepTemplate": {"image": "golang:1.26", "env": [{"name": "GOCACHE", "value": "$(workspaces.cache.path)"}],
                         "computeResources": {"requests": {"memory": "512Mi"}}},
        "steps": [
            {"name": "build", "image": "golang:1.26", "workingDir": "$(workspaces.source.path)",
             "script": "go build $(params.package)", "securityContext": {"privileged": True},
             "computeResources": {"requests": {"cpu": "1500m", "memory": "1536Mi", "ephemeral-storage": "4Gi"},
                                  "limits": {"cpu": "2", "nvidia.com/gpu": "1"}}},
            {"name": "test", "image": "golang:1.26", "args": ["test", "$(workspaces.source.path)/..."],
             "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}, {"name": "docker-config", "mountPath": "/root/.docker"}],
             "computeResources": {"requests": {"cpu": "0.5"}}},
        ],
        "sidecars": [{"name": "registry", "image": "registry:2", "ports": [{"containerPort": 5000, "hostPort": 5000}],
                      "script": "registry serve $(workspaces.source.path)/config.yml", "computeResources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
        "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "docker-config", "secret": {"secretName": "docker"}}],
    },
}


def _resources(spec: dict[str, Any]) -> list[Any]:
    return [c.get("computeResources") for c in [spec.get("stepTemplate") or {}, *spec["steps"], *(spec.get("sidecars") or [])]]


def test_requests_and_limits_stay_exactly_as_written() -> None:
    original = copy.deepcopy(GO_TASK)
    simulated = simulated_task(GO_TASK, run_for="2s")["spec"]
    assert _resources(simulated) == _resources(original["spec"])
    assert GO_TASK == original  # the input is not touched


def test_the_pods_request_is_the_users() -> None:
    # By hand: build 1500m / 1536Mi (its own memory over the template's 512Mi) / 4Gi scratch / 1 GPU (its limit);
    # test 500m / 512Mi (the template's); the registry sidecar 100m / 64Mi. Sum: 2100m, 2112Mi, 4Gi, 1 GPU.
    want = Amount.of({"cpu": 2100, "memory": 2112 * 2**20, "ephemeral-storage": 4 * 2**30, "nvidia.com/gpu": 1})
    for spec in (GO_TASK["spec"], simulated_task_spec(GO_TASK["spec"])):
        assert contract_pod_request(contract_requests(spec, {}, None)) == want


def test_steps_become_the_simulation_vocabulary() -> None:
    steps = simulated_task_spec(GO_TASK["spec"])["steps"]
    assert [(s["name"], s["image"]) for s in steps] == [("build", STEP_IMAGE), ("test", STEP_IMAGE)]
    assert steps[0]["script"] == STEP_SCRIPT and "command" not in steps[0]
    assert steps[1]["command"] == ["true"] and "script" not in steps[1] and "args" not in steps[1]
    assert "securityContext" not in steps[0]
    assert steps[0]["volumeMounts"] == [{"name": PODINFO_VOLUME, "mountPath": PODINFO_DIR}]


def test_every_workspace_reference_survives_the_rewrite() -> None:
    # source: build's workingDir, test's args, the sidecar's script; cache: the stepTemplate's env.
    assert referenced_workspaces(GO_TASK["spec"]) == {"source", "cache"}
    simulated = simulated_task_spec(GO_TASK["spec"])
    assert referenced_workspaces(simulated) == {"source", "cache"}
    assert simulated["steps"][1]["env"] == [{"name": "RESCON_WORKSPACE_1", "value": "$(workspaces.source.path)"}]
    assert simulated["stepTemplate"] == {"computeResources": {"requests": {"memory": "512Mi"}},
                                         "env": [{"name": "RESCON_WORKSPACE_1", "value": "$(workspaces.cache.path)"}]}


def test_volumes_that_need_nothing_stay_with_their_mounts_and_the_rest_go() -> None:
    simulated = simulated_task_spec(GO_TASK["spec"])
    assert [v["name"] for v in simulated["volumes"]] == ["scratch", PODINFO_VOLUME]
    assert simulated["steps"][1]["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]


def test_a_sidecar_idles_with_its_ports_and_requests() -> None:
    sidecar = simulated_task_spec(GO_TASK["spec"])["sidecars"][0]
    assert sidecar == {
        "name": "registry", "computeResources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
        "ports": [{"containerPort": 5000, "hostPort": 5000}], "image": STEP_IMAGE, "command": list(IDLE_SIDECAR_COMMAND),
        "env": [{"name": "RESCON_WORKSPACE_1", "value": "$(workspaces.source.path)"}],
    }


def test_the_task_keeps_its_declarations_and_gets_the_simulation_annotations() -> None:
    task = simulated_task(GO_TASK, run_for="2s")
    assert task["metadata"] == {
        "name": "go-build", "labels": {"app": "ci"},
        "annotations": {"team": "core", RUN_FOR: "2s", RESULT + "digest": PLACEHOLDER, RESULT + "shards": '["replay-placeholder"]'},
    }
    assert task["spec"]["params"] == GO_TASK["spec"]["params"]
    assert task["spec"]["results"] == GO_TASK["spec"]["results"]
    assert task["spec"]["workspaces"] == GO_TASK["spec"]["workspaces"]


def test_a_run_for_written_for_the_simulator_stays() -> None:
    task = {**GO_TASK, "metadata": {"name": "t", "annotations": {RUN_FOR: "5s"}}}
    assert simulated_task(task, run_for="2s")["metadata"]["annotations"][RUN_FOR] == "5s"


def test_an_embedded_task_carries_its_annotations_in_its_own_metadata() -> None:
    embedded = simulated_embedded({"metadata": {"labels": {"x": "y"}}, "results": [{"name": "ok"}], "steps": [{"name": "s", "image": "alpine"}]}, run_for="1s")
    assert embedded["metadata"] == {"labels": {"x": "y"}, "annotations": {RUN_FOR: "1s", RESULT + "ok": PLACEHOLDER}}
    assert embedded["steps"][0]["image"] == STEP_IMAGE


def test_a_step_that_uses_a_step_action_is_simulated_and_keeps_its_references() -> None:
    spec = {"steps": [{"name": "clone", "ref": {"name": "git-clone"}, "params": [{"name": "output", "value": "$(workspaces.out.path)"}],
                       "computeResources": {"requests": {"cpu": "250m"}}}]}
    step = simulated_task_spec(spec)["steps"][0]
    assert "ref" not in step and "params" not in step
    assert step["computeResources"] == {"requests": {"cpu": "250m"}}
    assert step["env"] == [{"name": "RESCON_WORKSPACE_1", "value": "$(workspaces.out.path)"}]
