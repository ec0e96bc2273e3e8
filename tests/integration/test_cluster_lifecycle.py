"""Local cluster lifecycle on throwaway clusters: `down` leaves nothing behind, failures are one line and bounded.

Throwaway clusters run without Tekton: its controller always listens on port
8080, which the integration cluster's controller holds.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator
from urllib.parse import urlparse

import pytest
import yaml

from harness.cluster import storage, tekton
from harness.cluster.local import KWOKCTL_COMPONENTS, LocalCluster, override_variable
from harness.cluster.namespaces import unique_name
from harness.cluster.processes import pid_alive, port_in_use
from harness.errors import HarnessError
from harness.kube import Kube
from harness.timeouts import TimeoutConfig

pytestmark = pytest.mark.integration

#: A crash must be reported long before kwokctl would give up on its own (about two minutes).
CRASH_REPORTED_WITHIN_SECONDS = 30.0


@pytest.fixture
def throwaway(request: pytest.FixtureRequest, it_timeouts: TimeoutConfig) -> Iterator[LocalCluster]:
    """throwaway is a LocalCluster with a unique name; afterwards it is taken down and checked gone."""
    cluster = LocalCluster(name=unique_name("rescon-it", request.node.name, limit=36), timeouts=it_timeouts)
    assert cluster.name != "rescon"
    try:
        yield cluster
    finally:
        cluster.down()
        assert not cluster.workdir.exists()
        assert [p.name for p in cluster.component_processes() if p.alive()] == []
        assert _processes_mentioning(str(cluster.workdir)) == []


def _processes_mentioning(text: str) -> list[str]:
    """_processes_mentioning() are the command lines of running processes that contain text."""
    listed = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True, timeout=30).stdout
    return [line for line in listed.splitlines() if text in line]


def listening_ports(cluster: LocalCluster) -> set[int]:
    """listening_ports() are the API server's port (kubeconfig) and every component port in kwok.yaml."""
    kubeconfig = yaml.safe_load(cluster.kubeconfig.read_text())
    ports = {urlparse(c["cluster"]["server"]).port for c in kubeconfig["clusters"]}
    # kwok.yaml holds the cluster's config first, then the Stages we passed.
    documents = yaml.safe_load_all((cluster.workdir / "kwok.yaml").read_text())
    config = next(d for d in documents if isinstance(d, dict) and d.get("kind") == "KwokctlConfiguration")
    for component in config.get("components") or []:
        ports |= {p["port"] for p in component.get("ports") or []}
    return {p for p in ports if p}


def rescon_command() -> list[str]:
    """rescon_command() is the installed `rescon` next to this Python, else the same entry point by module."""
    script = Path(sys.executable).with_name("rescon")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "harness.cli"]


def test_cluster_down_leaves_no_process_and_no_port(throwaway: LocalCluster, it_timeouts: TimeoutConfig) -> None:
    throwaway.up(with_tekton=False)
    pids = {p.name: p.pid() for p in throwaway.component_processes() if p.pid() is not None}
    ports = listening_ports(throwaway)
    # The control plane and the default storage's provisioner (harness.cluster.storage), no Tekton.
    assert set(pids) == {*KWOKCTL_COMPONENTS, storage.PROCESS}
    assert all(pid_alive(pid) for pid in pids.values() if pid is not None)
    assert ports and all(port_in_use(port) for port in ports), ports

    bound = it_timeouts.cluster_delete + it_timeouts.process_stop * len(pids)
    result = subprocess.run([*rescon_command(), "cluster", "down", "--name", throwaway.name], capture_output=True, text=True, timeout=bound)

    assert result.returncode == 0, result.stderr
    assert [name for name, pid in pids.items() if pid is not None and pid_alive(pid)] == []
    assert sorted(port for port in ports if port_in_use(port)) == []
    assert not throwaway.workdir.exists()
    assert not throwaway.kwokctl_config.exists() and not throwaway.kwokctl_log.exists()


def test_a_component_that_crashes_at_start_shows_its_log_tail(
    throwaway: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crash = tmp_path / "kube-apiserver"
    # kwokctl asks the binary for its version before starting it, so only the server start fails.
    crash.write_text(
        "#!/bin/sh\n"
        'case "$1" in version|--version) echo "Kubernetes v1.37.2"; exit 0;; esac\n'
        'echo "E0101 rescon-it: this kube-apiserver refuses to start" >&2\n'
        "exit 1\n"
    )
    crash.chmod(0o755)
    monkeypatch.setenv(override_variable("kube-apiserver"), str(crash))

    started = time.monotonic()
    with pytest.raises(HarnessError) as failure:
        throwaway.up(with_tekton=False)
    elapsed = time.monotonic() - started

    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith(f"kube-apiserver of cluster {throwaway.name} exited (E0101 rescon-it: this kube-apiserver refuses to start)")
    assert f"rescon cluster down --name {throwaway.name}" in message
    assert "this kube-apiserver refuses to start" in failure.value.detail
    assert elapsed < CRASH_REPORTED_WITHIN_SECONDS, f"the crash took {elapsed:.0f}s to report"


def test_a_busy_port_8080_is_refused_before_anything_starts(throwaway: LocalCluster) -> None:
    """Port 8080 is held by the integration cluster's Tekton; if it is not, the test holds it itself."""
    with _holding(tekton.KNATIVE_HEALTH_PORT):
        with pytest.raises(HarnessError, match=r"^port 8080 is in use, .*: stop what listens on it .*and retry$"):
            throwaway.up()
    assert not throwaway.workdir.exists()


class _holding:
    """_holding(port) listens on port for the duration, unless something already does."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock: socket.socket | None = None

    def __enter__(self) -> None:
        if not port_in_use(self.port):
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind(("127.0.0.1", self.port))
            self.sock.listen(1)

    def __exit__(self, *exc: object) -> None:
        if self.sock is not None:
            self.sock.close()


def test_an_unreachable_kubeconfig_is_a_bounded_one_line_error(tmp_path: Path) -> None:
    closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "gone", "cluster": {"server": f"https://127.0.0.1:{port}", "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "u"}}],
                "current-context": "gone",
            }
        )
    )

    started = time.monotonic()
    with pytest.raises(HarnessError) as failure:
        Kube.connect(kubeconfig, reachable_within=5)
    elapsed = time.monotonic() - started

    message = str(failure.value)
    assert "\n" not in message
    assert f"cannot reach the API server https://127.0.0.1:{port}" in message
    assert "Connection refused" in message and "is the cluster running" in message
    assert elapsed < 10


@pytest.mark.parametrize(
    "write, expected",
    [
        pytest.param(None, r"kubeconfig .* does not exist: pass --kubeconfig with a valid file", id="missing-file"),
        pytest.param("current-context: nowhere\n", r"cannot use kubeconfig .*", id="unknown-context"),
    ],
)
def test_an_unusable_kubeconfig_is_one_line(tmp_path: Path, write: str | None, expected: str) -> None:
    kubeconfig = tmp_path / "kubeconfig.yaml"
    if write is not None:
        kubeconfig.write_text(write)
    with pytest.raises(HarnessError, match=expected) as failure:
        Kube.connect(kubeconfig, reachable_within=5)
    assert "\n" not in str(failure.value)
