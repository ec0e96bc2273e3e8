"""Tekton's manifests as the local cluster installs them: no conversion webhook, our feature flags."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cluster import tekton
from harness.errors import HarnessError

pytestmark = pytest.mark.unit

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "tasks.tekton.dev"},
    "spec": {
        "group": "tekton.dev",
        "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "tekton-pipelines-webhook"}}}},
    },
}


def _config_dir(tmp_path: Path, *, with_all_maps: bool = True) -> Path:
    (tmp_path / "300-crds").mkdir()
    (tmp_path / "300-crds" / "300-task.yaml").write_text("# license header\n---\n" + yaml.safe_dump(CRD))
    names = list(tekton.CONFIG_MAP_ENV.values()) if with_all_maps else ["config-defaults"]
    for name in names:
        data = {"coschedule": "workspaces", "enable-api-fields": "beta", "running-in-environment-with-injected-sidecars": "true"} if name == "feature-flags" else {"_example": "x"}
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "somewhere"}, "data": data}
        (tmp_path / f"{name if name.startswith('config-') else 'config-' + name}.yaml").write_text(yaml.safe_dump(cm))
    return tmp_path


def test_crds_lose_their_conversion_webhook(tmp_path: Path) -> None:
    crds = tekton.crd_manifests(_config_dir(tmp_path))
    assert [c["metadata"]["name"] for c in crds] == ["tasks.tekton.dev"]
    assert crds[0]["spec"]["conversion"] == {"strategy": "None"}


@pytest.mark.parametrize("mode", tekton.COSCHEDULE_MODES)
def test_feature_flags_set_the_coschedule_mode_and_keep_tektons_others(tmp_path: Path, mode: str) -> None:
    maps = {m["metadata"]["name"]: m for m in tekton.config_maps(_config_dir(tmp_path), coschedule=mode)}
    flags = maps["feature-flags"]["data"]
    assert flags["coschedule"] == mode
    assert flags["running-in-environment-with-injected-sidecars"] == "true", "Tekton's default, as installed"
    assert flags["enable-api-fields"] == "beta"
    assert {m["metadata"]["namespace"] for m in maps.values()} == {tekton.NAMESPACE}


def test_injected_sidecars_are_left_at_tektons_default_unless_asked() -> None:
    assert "running-in-environment-with-injected-sidecars" not in tekton.feature_flags("disabled")
    assert tekton.feature_flags("disabled", injected_sidecars=False)["running-in-environment-with-injected-sidecars"] == "false"


def test_unknown_coschedule_mode_names_the_choices() -> None:
    with pytest.raises(HarnessError, match="use one of disabled, workspaces, pipelineruns, isolate-pipelinerun"):
        tekton.feature_flags("everything")


def test_missing_config_maps_are_reported(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="lacks ConfigMaps"):
        tekton.config_maps(_config_dir(tmp_path, with_all_maps=False), coschedule="disabled")


def test_controller_gets_every_image_flag_and_no_ha(tmp_path: Path) -> None:
    argv = tekton.controller_argv(tmp_path / "controller", tmp_path / "kubeconfig.yaml")
    for flag in tekton.IMAGE_FLAGS:
        assert f"-{flag}" in argv
    assert "-disable-ha" in argv
    assert argv[argv.index("-kubeconfig") + 1] == str(tmp_path / "kubeconfig.yaml")
    # Tekton's performance guide's example: 50 and 50, which the controller doubles.
    assert argv[argv.index("-kube-api-qps") + 1] == "50" and argv[argv.index("-kube-api-burst") + 1] == "50"


def test_controller_env_uses_the_given_ports_and_drops_kubeconfig() -> None:
    env = tekton.controller_env({"KUBECONFIG": "/home/me/.kube/config", "PATH": "/bin"}, probes_port=1, metrics_port=2, profiling_port=3)
    assert env["PROBES_PORT"] == "1" and env["PROFILING_PORT"] == "3"
    assert env["SYSTEM_NAMESPACE"] == tekton.NAMESPACE
    assert "KUBECONFIG" not in env


def test_affinity_assistant_names_are_tektons() -> None:
    # By `printf '%s' 'sourcebuild-x' | sha256sum` and `printf '%s' 'build-x' | sha256sum`, first 10 digits.
    assert tekton.affinity_assistant_name("source", "build-x") == "affinity-assistant-abde58dbfd"
    assert tekton.affinity_assistant_name("", "build-x") == "affinity-assistant-a45474c0e6"


@pytest.mark.parametrize(
    ("annotation", "required", "expected"),
    [
        (None, None, "disabled"),
        ("", None, "disabled"),
        # sha256("probe" + run) and sha256(run), run = rescon-coschedule-abcde, by sha256sum.
        ("affinity-assistant-f07ef8daae", None, "workspaces"),
        ("affinity-assistant-6688182119", None, None),
        ("affinity-assistant-6688182119", False, "pipelineruns"),
        ("affinity-assistant-6688182119", True, "isolate-pipelinerun"),
    ],
    ids=["no-annotation", "empty-annotation", "per-workspace", "per-run-statefulset-unseen", "per-run-preferred", "per-run-required"],
)
def test_the_probe_tells_the_coschedule_mode(annotation: str | None, required: bool | None, expected: str | None) -> None:
    assert tekton.observed_coschedule("rescon-coschedule-abcde", annotation, required) == expected


def test_an_assistant_no_mode_names_is_refused() -> None:
    with pytest.raises(HarnessError, match="no coschedule mode"):
        tekton.observed_coschedule("rescon-coschedule-abcde", "affinity-assistant-0000000000", None)


def test_the_coschedule_probe_has_a_pvc_workspace_and_runs_nowhere() -> None:
    probe = tekton.coschedule_probe()
    (binding,) = probe["spec"]["workspaces"]
    assert binding["name"] == tekton.COSCHEDULE_PROBE_WORKSPACE and "persistentVolumeClaim" in binding
    (task,) = probe["spec"]["pipelineSpec"]["tasks"]
    assert task["workspaces"] == [{"name": "w", "workspace": tekton.COSCHEDULE_PROBE_WORKSPACE}]
    assert probe["spec"]["taskRunTemplate"]["podTemplate"]["nodeSelector"]
    assert probe["metadata"]["labels"] == {tekton.PROBE_LABEL: "true"}
