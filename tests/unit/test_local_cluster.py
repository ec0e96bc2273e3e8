"""The local cluster's pure parts: binary overrides, kwokctl's error line, the Tekton port check, side files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cluster import local, tekton
from harness.cluster.local import LocalCluster, kwokctl_error, override_variable, require_free_port, with_binary_overrides
from harness.errors import HarnessError

pytestmark = pytest.mark.unit


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\nexit 1\n")
    path.chmod(0o755)
    return path


def test_override_variable_is_the_program_name_in_shell_case() -> None:
    assert override_variable("kube-apiserver") == "RESCON_BINARY_OVERRIDE_KUBE_APISERVER"
    assert override_variable("etcd") == "RESCON_BINARY_OVERRIDE_ETCD"


def test_an_override_replaces_only_the_named_program(tmp_path: Path) -> None:
    crash = _executable(tmp_path / "crash.sh")
    cached = {"etcd": Path("/cache/etcd"), "kube-apiserver": Path("/cache/kube-apiserver")}
    resolved = with_binary_overrides(cached, {"RESCON_BINARY_OVERRIDE_KUBE_APISERVER": str(crash)})
    assert resolved == {"etcd": Path("/cache/etcd"), "kube-apiserver": crash}
    assert with_binary_overrides(cached, {}) == cached


def test_an_override_that_is_not_executable_names_the_variable(tmp_path: Path) -> None:
    plain = tmp_path / "not-executable"
    plain.write_text("")
    with pytest.raises(HarnessError, match=r"RESCON_BINARY_OVERRIDE_ETCD=.* is not an executable file: fix or unset it"):
        with_binary_overrides({"etcd": Path("/cache/etcd")}, {"RESCON_BINARY_OVERRIDE_ETCD": str(plain)})


def _log(level: str, msg: str, err: str | None = None) -> str:
    entry = {"time": "t", "level": level, "msg": msg}
    if err is not None:
        entry["err"] = err
    return json.dumps(entry)


@pytest.mark.parametrize(
    "output, expected",
    [
        pytest.param(
            "\n".join(
                [
                    _log("INFO", "Cluster is creating"),
                    _log("ERROR", "Failed to setup config", "cmd wait: /x/kube-apiserver version: exit status 1\nE0101 boom\n"),
                    _log("ERROR", "Execute exit", "cmd wait: /x/kube-apiserver version: exit status 1\nE0101 boom\n"),
                ]
            ),
            "cmd wait: /x/kube-apiserver version: exit status 1",
            id="last-error-first-line",
        ),
        pytest.param(_log("ERROR", "Cluster is not ready"), "Cluster is not ready", id="error-without-err"),
        pytest.param("flag provided but not defined: -bogus\n" + _log("INFO", "x"), "flag provided but not defined: -bogus", id="plain-text"),
        pytest.param("", "no output", id="empty"),
    ],
)
def test_kwokctl_error_is_one_line(output: str, expected: str) -> None:
    assert kwokctl_error(output) == expected


def test_a_busy_health_port_names_the_fix() -> None:
    with pytest.raises(HarnessError, match=r"port 8080 is in use, .*stop what listens on it .*rescon cluster down --name"):
        require_free_port(tekton.KNATIVE_HEALTH_PORT, in_use=lambda port: True)
    require_free_port(tekton.KNATIVE_HEALTH_PORT, in_use=lambda port: False)


def test_side_files_stay_out_of_kwokctls_clusters_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """kwokctl warns about every non-directory entry of <state>/clusters, so nothing of ours goes there."""
    monkeypatch.setenv("RESCON_STATE_DIR", str(tmp_path))
    cluster = LocalCluster(name="side")
    assert cluster.workdir == tmp_path / "clusters" / "side"
    assert cluster.kwokctl_config.parent != cluster.workdir.parent
    assert cluster.kwokctl_log.parent == cluster.kwokctl_config.parent


def test_up_refuses_a_busy_health_port_before_starting_anything(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_STATE_DIR", str(tmp_path))

    class NoBuilds:
        def __init__(self, **_: object) -> None:
            pass

        def ensure(self) -> dict[str, Path]:
            return {}

    monkeypatch.setattr(local, "Toolchain", NoBuilds)
    monkeypatch.setattr(local, "port_in_use", lambda port, host="127.0.0.1": port == tekton.KNATIVE_HEALTH_PORT)
    cluster = LocalCluster(name="busy", out=open("/dev/null", "w"))
    with pytest.raises(HarnessError, match="port 8080 is in use"):
        cluster.up()
    assert not cluster.workdir.exists()


def test_tekton_metrics_use_the_given_port_not_9090() -> None:
    """knative's Prometheus exporter reads METRICS_PROMETHEUS_PORT; without it two controllers collide on 9090."""
    env = tekton.controller_env({}, probes_port=1, metrics_port=2, profiling_port=3)
    assert env["METRICS_PROMETHEUS_PORT"] == "2"


def test_a_cluster_made_with_other_stages_is_stale(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # KWOK reads its Stages once, at creation: up() recreates a cluster whose kwokctl config is not this harness's.
    monkeypatch.setenv("RESCON_STATE_DIR", str(tmp_path))
    cluster = LocalCluster(name="stale")
    assert cluster._stages_stale(), "no config at all"
    cluster.kwokctl_config.parent.mkdir(parents=True, exist_ok=True)
    cluster.kwokctl_config.write_text(local._stages_text())
    assert not cluster._stages_stale()
    cluster.kwokctl_config.write_text(local._stages_text().replace("sim.rescon.dev/result.", "sim.rescon.dev/old."))
    assert cluster._stages_stale()


def test_a_worker_attaches_by_connecting_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_STATE_DIR", str(tmp_path))
    connected: list[Path] = []
    monkeypatch.setattr(local.Kube, "connect", classmethod(lambda cls, path, *a, **k: connected.append(path) or "client"))
    monkeypatch.setattr(local, "Toolchain", lambda **_: pytest.fail("a worker built or started something"))
    cluster = LocalCluster(name="shared")
    assert cluster.attach() == "client"  # type: ignore[comparison-overlap]
    assert connected == [cluster.kubeconfig]
