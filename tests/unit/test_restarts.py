"""Restarting one cluster process as it ran (harness.cluster.restarts), and skipping where a provider cannot."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from harness.cluster.processes import ManagedProcess
from harness.cluster.restarts import Launch, launch_of, parse_environ, relaunch, revive, split_nul
from harness.errors import HarnessError
from harness.suite.features import Feature
from harness.suite.scenario import Scenario, provider_skip_reason
from harness.suite.session import restartable_components

pytestmark = pytest.mark.unit


def test_proc_lists_are_split_on_nul_without_the_trailing_empty_entry() -> None:
    assert split_nul(b"etcd\x00--name=node0\x00") == ["etcd", "--name=node0"]
    assert split_nul(b"") == []


def test_the_first_equals_sign_splits_a_variable_from_its_value() -> None:
    assert parse_environ(b"A=1\x00B=x=y\x00junk\x00") == {"A": "1", "B": "x=y"}


def test_a_process_that_is_not_running_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="etcd is not running, so it cannot be restarted"):
        launch_of(ManagedProcess.in_dir("etcd", tmp_path))


def test_a_stopped_process_is_started_again_as_it_ran(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    process = ManagedProcess.in_dir("sleeper", tmp_path)
    process.start([sleep, "30"], env={"RESCON_MARK": "kept"}, cwd=tmp_path)
    try:
        _wait_exec(process)
        launch = launch_of(process)
        assert launch.argv == (sleep, "30")
        assert launch.env.get("RESCON_MARK") == "kept"
        assert launch.cwd == tmp_path.resolve()
        first = process.pid()
        process.stop(grace_seconds=5)
        assert revive({"sleeper": launch}, {"sleeper": process}) == ["sleeper"]
        assert process.alive() and process.pid() != first
        _wait_exec(process)
        assert launch_of(process) == launch
        assert revive({"sleeper": launch}, {"sleeper": process}) == [], "a live process is left alone"
    finally:
        process.stop(grace_seconds=5)


def _wait_exec(process: ManagedProcess) -> None:
    """Right after the fork, /proc shows the child mid-exec (an empty or the parent's command line): wait for its own."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        cmdline = Path(f"/proc/{process.pid()}/cmdline").read_bytes()
        if cmdline.startswith(str(shutil.which("sleep")).encode()):
            return
        time.sleep(0.01)
    raise AssertionError(f"{process.name} never showed its own command line")


def test_relaunch_refuses_a_process_that_still_runs(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    process = ManagedProcess.in_dir("sleeper", tmp_path)
    process.start([sleep, "30"], env={}, cwd=tmp_path)
    try:
        with pytest.raises(HarnessError, match="already running"):
            relaunch(process, Launch((sleep, "30"), {}, tmp_path))
    finally:
        process.stop(grace_seconds=5)


ETCD_RESTART = Scenario(name="s", description="d", features=(Feature.RESILIENCE,), fixtures=(), restarts=("etcd",))


def test_a_scenario_that_restarts_what_the_provider_cannot_is_skipped_saying_why() -> None:
    assert provider_skip_reason(ETCD_RESTART, provider="kind", restartable=frozenset()) == (
        "the kind cluster cannot restart etcd (only the local cluster restarts its components)"
    )
    assert provider_skip_reason(ETCD_RESTART, provider="local", restartable=frozenset({"etcd", "kube-apiserver"})) is None
    plain = Scenario(name="p", description="d", features=(Feature.COLOCATION,), fixtures=())
    assert provider_skip_reason(plain, provider="existing", restartable=frozenset()) is None


def test_a_provider_without_the_method_restarts_nothing() -> None:
    class Kind:
        pass

    class Local:
        def restartable_components(self) -> frozenset[str]:
            return frozenset({"etcd"})

    assert restartable_components(Kind()) == frozenset()
    assert restartable_components(Local()) == frozenset({"etcd"})


def test_resilience_is_an_extended_feature() -> None:
    from harness.suite.features import CORE_FEATURES, EXTENDED_FEATURES

    assert Feature.RESILIENCE in EXTENDED_FEATURES and Feature.RESILIENCE not in CORE_FEATURES


def test_a_local_only_scenario_is_skipped_elsewhere_with_its_reason() -> None:
    scenario = Scenario(name="x", description="d", features=(), fixtures=(), local_only="the kubelet counts a just-finished pod")
    assert provider_skip_reason(scenario, provider="local", restartable=frozenset()) is None
    assert provider_skip_reason(scenario, provider="kind", restartable=frozenset()) == (
        "it runs on the local cluster only, not on kind: the kubelet counts a just-finished pod"
    )
