"""A scheduler that exits at launch is a setup error naming its own last words; one that dies later is a verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.suite.scheduler_under_test import SchedulerDied, SchedulerFailedToStart, SchedulerUnderTest
from harness.timeouts import DEFAULT_TIMEOUTS
from harness.waits import NotYet, wait_for

pytestmark = pytest.mark.unit


def _exited(scheduler: SchedulerUnderTest) -> None:
    def poll() -> None:
        if scheduler.process.alive():
            raise NotYet("still running")

    wait_for(poll, what="the scheduler to exit", timeout="process_stop", timeouts=DEFAULT_TIMEOUTS)


def test_an_exit_at_launch_is_a_setup_error_with_the_schedulers_message(tmp_path: Path) -> None:
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="s", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path,
        command_template="sh -c 'echo my-scheduler: unknown flag --frobnicate >&2; exit 3'",
    )
    scheduler.start()
    _exited(scheduler)
    with pytest.raises(SchedulerFailedToStart, match=r"exited .*s after its start, saying 'my-scheduler: unknown flag --frobnicate'"):
        scheduler.check_alive()


def test_a_death_long_after_the_start_is_a_verdict(tmp_path: Path) -> None:
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="s", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path,
        command_template="sh -c 'echo panic: nil map >&2; exit 2'",
    )
    scheduler.start()
    _exited(scheduler)
    assert scheduler.started_at is not None
    scheduler.started_at -= 60
    with pytest.raises(SchedulerDied, match="died while being tested; its last line was 'panic: nil map'"):
        scheduler.check_alive()


def test_a_config_template_is_rendered_per_launch_and_fills_config(tmp_path: Path) -> None:
    template = tmp_path / "config.yaml.j2"
    template.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "clientConnection: {kubeconfig: {{ kubeconfig }}}\nprofiles: [{schedulerName: {{ scheduler_name }}}]\n"
        "leaderElection: {resourceName: {{ lease_name }}}\n# port {{ port }}\n",
        encoding="utf-8",
    )
    scheduler = SchedulerUnderTest(
        mode="command", scheduler_name="my-plugin", kubeconfig=tmp_path / "kubeconfig", workdir=tmp_path,
        command_template="/bin/my-scheduler --config {config} -v=2", config_template=template,
    )
    argv = scheduler.argv()
    assert argv[0] == "/bin/my-scheduler" and argv[1] == "--config" and argv[3] == "-v=2"
    text = Path(argv[2]).read_text(encoding="utf-8")
    assert "schedulerName: my-plugin" in text and f"kubeconfig: {tmp_path / 'kubeconfig'}" in text
    assert "resourceName: my-plugin-under-test" in text and "{{" not in text


def test_config_without_a_template_and_unknown_template_names_fail_naming_the_fix(tmp_path: Path) -> None:
    from harness.errors import HarnessError

    without = SchedulerUnderTest(mode="command", scheduler_name="s", kubeconfig=tmp_path / "k", workdir=tmp_path, command_template="x --config {config}")
    with pytest.raises(HarnessError, match="no --scheduler-config-template was given"):
        without.argv()
    template = tmp_path / "bad.j2"
    template.write_text("{{ nodes }}\n", encoding="utf-8")
    bad = SchedulerUnderTest(mode="command", scheduler_name="s", kubeconfig=tmp_path / "k", workdir=tmp_path, command_template="x {config}", config_template=template)
    with pytest.raises(HarnessError, match="'nodes' is undefined: use scheduler_name, kubeconfig, port, lease_name"):
        bad.argv()


def test_a_relative_program_path_is_made_absolute_since_the_scheduler_runs_in_its_work_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.suite.scheduler_under_test import which_executable

    program = tmp_path / "bin" / "my-scheduler"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert which_executable("bin/my-scheduler") == str(program)
    with pytest.raises(HarnessError, match="'bin/nothing' from --scheduler-cmd does not exist or is not executable"):
        which_executable("bin/nothing")


def test_two_workers_stock_schedulers_each_serve_their_own_name(tmp_path: Path) -> None:
    """xdist workers share the workdir: each stock kube-scheduler's config must name its own worker's scheduler."""
    launches = [
        SchedulerUnderTest(mode="kube-scheduler", scheduler_name=name, kubeconfig=tmp_path / "k", workdir=tmp_path,
                           kube_scheduler_binary=Path("/bin/kube-scheduler"))
        for name in ("tkn-scheduler-gw0", "tkn-scheduler-gw1")
    ]
    configs = [Path(launch.argv()[2]) for launch in launches]
    assert configs[0] != configs[1]
    for name, config in zip(("tkn-scheduler-gw0", "tkn-scheduler-gw1"), configs, strict=True):
        assert f"schedulerName: {name}\n" in config.read_text(encoding="utf-8")
