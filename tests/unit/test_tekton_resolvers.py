"""Tekton's resolvers as the local cluster runs them: the module's ConfigMaps, free ports, a probe that proves they answer."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.cluster import tekton_resolvers
from harness.errors import HarnessError

pytestmark = pytest.mark.unit


def _config_dir(tmp_path: Path, names: tuple[str, ...] = tekton_resolvers.REQUIRED_CONFIG_MAPS) -> Path:
    resolvers = tmp_path / "resolvers"
    resolvers.mkdir()
    for name in names:
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "elsewhere"}, "data": {"k": "v"}}
        (resolvers / f"{name}.yaml").write_text("# license\n---\n" + yaml.safe_dump(cm))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "tekton-pipelines-remote-resolvers"}}
    (resolvers / "resolvers-deployment.yaml").write_text(yaml.safe_dump(deployment))
    return tmp_path


def test_config_maps_are_the_modules_own_in_the_resolvers_namespace(tmp_path: Path) -> None:
    maps = tekton_resolvers.config_maps(_config_dir(tmp_path))
    assert sorted(m["metadata"]["name"] for m in maps) == sorted(tekton_resolvers.REQUIRED_CONFIG_MAPS)
    assert {m["metadata"]["namespace"] for m in maps} == {tekton_resolvers.NAMESPACE}
    assert all(m["data"] == {"k": "v"} for m in maps)


def test_a_module_without_the_cluster_resolvers_config_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"lacks ConfigMaps \['cluster-resolver-config'\]"):
        tekton_resolvers.config_maps(_config_dir(tmp_path, ("resolvers-feature-flags", "config-logging", "config-leader-election-resolvers")))


def test_env_uses_the_given_ports_the_resolvers_namespace_and_drops_kubeconfig() -> None:
    env = tekton_resolvers.resolvers_env({"KUBECONFIG": "/home/me/.kube/config", "PATH": "/bin"}, metrics_port=7, profiling_port=8)
    assert env["METRICS_PORT"] == env["METRICS_PROMETHEUS_PORT"] == "7"
    assert env["PROFILING_PORT"] == "8"
    assert env["SYSTEM_NAMESPACE"] == tekton_resolvers.NAMESPACE
    assert env["CONFIG_LEADERELECTION_NAME"] == "config-leader-election-resolvers"
    assert "KUBECONFIG" not in env and env["PATH"] == "/bin"


def test_argv_names_the_kubeconfig_and_runs_without_leader_election(tmp_path: Path) -> None:
    argv = tekton_resolvers.resolvers_argv(tmp_path / "resolvers", tmp_path / "kubeconfig.yaml")
    assert argv[argv.index("-kubeconfig") + 1] == str(tmp_path / "kubeconfig.yaml")
    assert "-disable-ha" in argv


def test_the_probe_asks_the_cluster_resolver_for_the_task_it_makes() -> None:
    probe = tekton_resolvers.probe_request("conf-x")
    task = tekton_resolvers.probe_task("conf-x")
    assert probe["metadata"]["labels"][tekton_resolvers.RESOLVER_TYPE_LABEL] == "cluster"
    params = {p["name"]: p["value"] for p in probe["spec"]["params"]}
    assert params == {"kind": "task", "name": task["metadata"]["name"], "namespace": "conf-x"}
    assert probe["metadata"]["namespace"] == task["metadata"]["namespace"] == "conf-x"


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        (None, False),
        ([{"type": "Succeeded", "status": "Unknown"}], False),
        ([{"type": "Ready", "status": "True"}], False),
        ([{"type": "Succeeded", "status": "False", "reason": "ResolutionFailed"}], True),
        ([{"type": "Succeeded", "status": "True"}], True),
    ],
)
def test_a_request_is_answered_once_succeeded_is_true_or_false(conditions: list[dict[str, str]] | None, expected: bool) -> None:
    request = {"status": {"conditions": conditions}} if conditions is not None else {}
    assert tekton_resolvers.answered(request) is expected
