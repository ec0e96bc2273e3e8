"""Leader-electing replicas (leader_failover): how each mode launches them, and where the suite cannot."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.suite.scheduler_under_test import SchedulerUnderTest
from tests.mutants.faults import records_seen_since_start
from tests.mutants.kill_table import Subject

pytestmark = pytest.mark.unit


def _scheduler(tmp_path: Path, mode: str, **extra: object) -> SchedulerUnderTest:
    return SchedulerUnderTest(mode=mode, scheduler_name="tkn-scheduler-gw0", kubeconfig=tmp_path / "kc", workdir=tmp_path, **extra)  # type: ignore[arg-type]


def test_a_reference_replica_elects_on_a_short_lease_and_its_single_launch_does_not(tmp_path: Path) -> None:
    scheduler = _scheduler(tmp_path, "reference")
    argv = scheduler.replica_argv(1, lease_name="tkn-scheduler-gw0-replicas", lease_namespace="conf-x")
    assert "--no-leader-elect" not in argv
    at = argv.index("--leader-elect")
    assert argv[at + 1:at + 11] == [
        "--lease-name", "tkn-scheduler-gw0-replicas", "--lease-namespace", "conf-x",
        "--lease-duration-seconds", "6", "--renew-deadline-seconds", "4", "--retry-period-seconds", "1",
    ]
    assert "--no-leader-elect" in scheduler.argv() and "--leader-elect" not in scheduler.argv()


def test_a_command_replica_fills_the_lease_placeholders(tmp_path: Path) -> None:
    scheduler = _scheduler(
        tmp_path, "command", command_template="my-sched --name {scheduler_name}",
        replica_command_template="my-sched --name {scheduler_name} --lease {lease_namespace}/{lease_name}",
    )
    assert scheduler.replica_skip_reason() is None
    assert scheduler.replica_argv(0, lease_name="l", lease_namespace="ns") == ["my-sched", "--name", "tkn-scheduler-gw0", "--lease", "ns/l"]


@pytest.mark.parametrize(
    ("mode", "extra", "reason"),
    [
        ("external", {}, "cannot launch replicas of an external scheduler"),
        ("kube-scheduler", {}, "stock kube-scheduler"),
        ("command", {"command_template": "my-sched"}, "pass --scheduler-replica-cmd"),
    ],
)
def test_where_replicas_cannot_be_launched_the_reason_says_so(tmp_path: Path, mode: str, extra: dict[str, str], reason: str) -> None:
    scheduler = _scheduler(tmp_path, mode, **extra)
    assert reason in (scheduler.replica_skip_reason() or "")
    with pytest.raises(HarnessError, match=reason):
        scheduler.replica_argv(0, lease_name="l", lease_namespace="ns")


def test_the_kill_tables_replica_command_elects_where_its_single_command_does_not() -> None:
    subject = Subject("leader_unsynced_records")
    assert "--no-leader-elect" in subject.command()
    replica = subject.replica_command()
    assert "--no-leader-elect" not in replica
    assert "--leader-elect --lease-name {lease_name} --lease-namespace {lease_namespace}" in replica


def test_leader_unsynced_records_forgets_only_the_first_list() -> None:
    listed = {("ns", "a"): {"metadata": {"name": "a"}}}
    assert records_seen_since_start(listed, first=True) == {}
    assert records_seen_since_start(listed, first=False) == listed


def test_a_command_with_a_config_template_renders_one_config_per_replica_with_the_lease(tmp_path: Path) -> None:
    template = tmp_path / "config.yaml.j2"
    template.write_text("leaseName: {{ lease_name }}\nleaseNamespace: {{ lease_namespace }}\nport: {{ port }}\n")
    scheduler = _scheduler(tmp_path, "command", command_template="my-sched --config {config}", config_template=template)
    assert scheduler.replica_skip_reason() is None
    configs = [Path(scheduler.replica_argv(i, lease_name="l", lease_namespace="ns")[2]) for i in range(2)]
    assert configs[0] != configs[1]
    assert all(c.read_text().startswith("leaseName: l\nleaseNamespace: ns\n") for c in configs)


def test_a_failed_replica_scenario_reports_each_replicas_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from harness.cluster.processes import ManagedProcess
    from harness.suite import attachments
    from harness.suite.replicas import Replicas

    processes = []
    for index in range(2):
        process = ManagedProcess.in_dir(f"tkn-scheduler-replica-{index}", tmp_path)
        process.log_file.parent.mkdir(parents=True, exist_ok=True)
        process.log_file.write_text(f"replica {index}: acquired lease\n")
        processes.append(process)
    replicas = Replicas(scheduler=None, kube=None, lease_namespace="conf-x", timeouts=None, processes=processes)  # type: ignore[arg-type]
    attached: dict[str, str] = {}
    monkeypatch.setattr(attachments.allure, "attach", lambda body, name, *_: attached.__setitem__(name, body))
    monkeypatch.setattr(attachments, "_attach_timeline", lambda *_: None)
    monkeypatch.setattr(attachments, "_final_objects", lambda _: [])
    run = SimpleNamespace(monitor=None, rendered={}, ran_replicas=replicas)
    scheduler = SimpleNamespace(log_tail=lambda _: "the session's scheduler")
    cluster = SimpleNamespace(logs_dir=lambda: None)
    attachments.attach_scenario_artifacts(run, None, cluster, scheduler, include_logs=True, failed=True)  # type: ignore[arg-type]
    tails = attached["scheduler replicas' log tails"]
    assert "--- tkn-scheduler-replica-0 ---\nreplica 0: acquired lease" in tails
    assert "--- tkn-scheduler-replica-1 ---\nreplica 1: acquired lease" in tails
