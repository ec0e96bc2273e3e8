"""The scheduler under test: what serves `--scheduler-name` during the run.

    reference       the suite starts this repository's reference scheduler
    kube-scheduler  the suite starts the stock kube-scheduler serving that name (a negative control)
    command         the suite starts `--scheduler-cmd`, a template with {kubeconfig} and {scheduler_name}
    external        already running; the suite starts nothing

A scheduler the suite started is a ManagedProcess with its log next to the
cluster's; if it dies, the next scenario fails at once with its log tail
instead of timing out on pods that nobody schedules.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from harness.cluster.processes import ManagedProcess, free_port, tail
from harness.errors import HarnessError
from harness.kube import Kube, present
from harness.suite import lease_names
from harness.suite.launch_logs import LaunchLogs
from harness.suite.features import ALL_FEATURES, CORE_FEATURES, OPT_IN_FEATURES, Feature

MODES = ("reference", "kube-scheduler", "command", "external")
PROCESS_NAME = "scheduler-under-test"


def default_features(mode: str) -> frozenset[Feature]:
    """default_features() is what a mode supports unless --supported-features says otherwise.

    The reference implements everything; the stock kube-scheduler publishes no
    ReservationRecords, so it gets placement checks only; a third-party
    scheduler is assumed to implement the core contract.
    """
    if mode == "reference":
        return ALL_FEATURES - OPT_IN_FEATURES
    if mode == "kube-scheduler":
        return CORE_FEATURES - {Feature.RESERVATION_RECORDS}
    return CORE_FEATURES


def kube_scheduler_config(*, kubeconfig: Path, scheduler_name: str) -> dict[str, object]:
    """kube_scheduler_config() makes the stock scheduler serve `scheduler_name`, with no leader election."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }


class SchedulerDied(HarnessError, AssertionError):
    """The scheduler the suite started died after it had been running a while: a verdict on it."""


class SchedulerFailedToStart(HarnessError):
    """The scheduler the suite started exited within LAUNCH_SECONDS of its start: a setup error, not a verdict."""


#: The reference replicas' lease: duration, renew deadline, retry period (seconds), as tests/integration/test_leader_election.py uses.
REPLICA_LEASE = (6, 4, 1)

#: A scheduler that exits this soon after its start never started: its death is a setup error.
LAUNCH_SECONDS = 15.0


@dataclass
class SchedulerUnderTest:
    """SchedulerUnderTest starts, watches and stops the scheduler the suite runs against."""

    mode: str
    scheduler_name: str
    kubeconfig: Path
    workdir: Path
    command_template: str | None = None
    kube_scheduler_binary: Path | None = None
    #: external only: the label selector of the scheduler's pods, which kill() deletes (--scheduler-pod-selector).
    pod_selector: str | None = None
    #: command only: a jinja2 file rendered per launch; its path fills {config} in the command.
    config_template: Path | None = None
    #: command only: the launch of one of two leader-electing replicas (--scheduler-replica-cmd), with
    #: {kubeconfig}, {scheduler_name}, {config}, {lease_name} and {lease_namespace}; see replica_argv().
    replica_command_template: str | None = None
    started_at: float | None = None
    #: While a scenario runs replicas in its place (ScenarioRun.replicas), the check of theirs that check_alive() runs instead.
    stand_in: Callable[[], None] | None = None
    #: Every launch's log, copied next to the reports (harness.suite.launch_logs); the replicas' launches too.
    launch_logs: LaunchLogs = field(default_factory=LaunchLogs)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise HarnessError(f"unknown --scheduler {self.mode!r}: use one of {', '.join(MODES)}")
        if self.mode == "command" and not self.command_template:
            raise HarnessError("--scheduler command needs --scheduler-cmd, e.g. --scheduler-cmd 'my-scheduler --kubeconfig {kubeconfig}'")

    @property
    def process(self) -> ManagedProcess:
        # Named after the schedulerName, so two sessions testing different names never stop each other's.
        return ManagedProcess.in_dir(f"{PROCESS_NAME}-{self.scheduler_name}", self.workdir)

    @property
    def started_by_suite(self) -> bool:
        return self.mode != "external"

    def argv(self) -> list[str]:
        if self.mode == "reference":
            return [
                sys.executable, "-m", "reference_scheduler.main",
                "--kubeconfig", str(self.kubeconfig),
                "--scheduler-name", self.scheduler_name,
                "--no-leader-elect",
                "--metrics-port", "0",
                "--log-format", "text",
                "--enable-resize",
            ]
        if self.mode == "kube-scheduler":
            if self.kube_scheduler_binary is None:
                raise HarnessError("no kube-scheduler binary: run 'make tools'")
            # One file per scheduler name: xdist workers share the workdir, and one shared file once made
            # both workers' kube-schedulers serve the last name written (the other's pods never scheduled).
            config = self.workdir / f"{PROCESS_NAME}-{self.scheduler_name}.kube-scheduler.yaml"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(yaml.safe_dump(kube_scheduler_config(kubeconfig=self.kubeconfig, scheduler_name=self.scheduler_name)))
            return [str(self.kube_scheduler_binary), "--config", str(config), "--secure-port", str(free_port()), "--bind-address", "127.0.0.1"]
        assert self.command_template is not None
        rendered = self.render_config() if self.config_template is not None else None
        if rendered is None and "{config}" in self.command_template:
            raise HarnessError("--scheduler-cmd uses {config} but no --scheduler-config-template was given: pass the template file")
        try:
            text = self.command_template.format(kubeconfig=self.kubeconfig, scheduler_name=self.scheduler_name, config=rendered or "")
        except (KeyError, IndexError) as err:
            raise HarnessError(f"--scheduler-cmd has an unknown placeholder {err}: use {{kubeconfig}}, {{scheduler_name}} and {{config}}") from err
        argv = shlex.split(text)
        if not argv:
            raise HarnessError("--scheduler-cmd is empty: give the command that starts your scheduler")
        return argv

    def replica_skip_reason(self) -> str | None:
        """replica_skip_reason() says why the suite cannot launch leader-electing replicas in this mode, or None when it can."""
        if self.mode == "external":
            return "cannot launch replicas of an external scheduler (--scheduler external): the suite starts nothing"
        if self.mode == "kube-scheduler":
            return "the stock kube-scheduler's replicas are not arranged by the suite (leader election needs a config per replica)"
        if self.mode == "command" and self.replica_command_template is None and self.config_template is None:
            return (
                "--scheduler command cannot launch leader-electing replicas: pass --scheduler-replica-cmd "
                "(with {lease_name} and {lease_namespace}) or a --scheduler-config-template that uses lease_name"
            )
        return None

    def replica_argv(self, index: int, *, lease_name: str, lease_namespace: str) -> list[str]:
        """replica_argv(0, lease_name=..., lease_namespace=...) launches one of two replicas competing for that Lease.

        The reference runs with leader election on and a short lease
        (REPLICA_LEASE: 6 s, renew 4 s, retry 1 s), so a takeover after a
        crash fits a scenario. A command runs --scheduler-replica-cmd, or
        --scheduler-cmd with its config template rendered per replica.
        """
        if self.mode == "reference":
            duration, renew, retry = REPLICA_LEASE
            argv = self.argv()
            at = argv.index("--no-leader-elect")
            return [
                *argv[:at], "--leader-elect", "--lease-name", lease_name, "--lease-namespace", lease_namespace,
                "--lease-duration-seconds", str(duration), "--renew-deadline-seconds", str(renew), "--retry-period-seconds", str(retry),
                *argv[at + 1:],
            ]
        reason = self.replica_skip_reason()
        if reason is not None:
            raise HarnessError(reason)
        template = self.replica_command_template or self.command_template
        assert template is not None
        rendered = (
            self.render_config(lease_name=lease_name, lease_namespace=lease_namespace, suffix=f".replica-{index}")
            if self.config_template is not None else None
        )
        try:
            text = template.format(
                kubeconfig=self.kubeconfig, scheduler_name=self.scheduler_name, config=rendered or "",
                lease_name=lease_name, lease_namespace=lease_namespace,
            )
        except (KeyError, IndexError) as err:
            raise HarnessError(
                f"--scheduler-replica-cmd has an unknown placeholder {err}: use {{kubeconfig}}, {{scheduler_name}}, {{config}}, {{lease_name}} and {{lease_namespace}}"
            ) from err
        return shlex.split(text)

    def render_config(self, *, lease_name: str | None = None, lease_namespace: str = "kube-system", suffix: str = "") -> Path:
        """render_config() writes the config template for this launch and returns its path.

        The template sees scheduler_name, kubeconfig, a free port, and a
        lease_name of its own (leader election on, it never contends with
        another scheduler's lease); unknown names fail naming the template.
        """
        import jinja2

        assert self.config_template is not None
        if not self.config_template.is_file():
            raise HarnessError(f"--scheduler-config-template {self.config_template} does not exist: pass the path of your config template")
        environment = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
        try:
            text = environment.from_string(self.config_template.read_text(encoding="utf-8")).render(
                scheduler_name=self.scheduler_name, kubeconfig=str(self.kubeconfig), port=free_port(),
                lease_name=lease_name or lease_names.lease_name(self.scheduler_name, lease_names.UNDER_TEST), lease_namespace=lease_namespace,
            )
        except jinja2.TemplateError as err:
            raise HarnessError(f"--scheduler-config-template {self.config_template.name}: {err}: use scheduler_name, kubeconfig, port, lease_name, lease_namespace") from err
        target = self.workdir / f"{PROCESS_NAME}-{self.scheduler_name}{suffix}.config"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def start(self) -> None:
        if not self.started_by_suite:
            return
        argv = self.argv()
        executable = argv[0] if os.path.isabs(argv[0]) else which_executable(argv[0])
        self.process.stop(grace_seconds=5)
        self.launch_logs.starting(self.process.log_file, self.scheduler_name)
        self.process.start([executable, *argv[1:]], env=dict(os.environ), cwd=self.workdir, dies_with_parent=True)
        self.started_at = time.monotonic()

    def check_alive(self) -> None:
        """check_alive() fails at once, naming its last log line, if a scheduler the suite started has died.

        Within LAUNCH_SECONDS of its start that is SchedulerFailedToStart (a
        setup error); later it is SchedulerDied (a verdict).
        """
        if self.stand_in is not None:
            self.stand_in()
            return
        if not self.started_by_suite or self.process.alive():
            return
        log_tail = tail(self.process.log_file, 30)
        last = next((line.strip() for line in reversed(log_tail.splitlines()) if line.strip()), "it wrote nothing")
        lived = time.monotonic() - self.started_at if self.started_at is not None else None
        if lived is not None and lived < LAUNCH_SECONDS:
            raise SchedulerFailedToStart(
                f"the scheduler under test ({self.mode}) exited {lived:.1f}s after its start, saying {last[:300]!r}: "
                f"fix its command or configuration (log: {self.process.log_file})",
                detail=log_tail,
            )
        raise SchedulerDied(
            f"the scheduler under test ({self.mode}) died while being tested; its last line was {last[:300]!r} (log: {self.process.log_file})",
            detail=log_tail,
        )

    def kill(self, kube: Kube | None = None) -> list[str]:
        """kill() ends it as a crash would, for restart scenarios, and returns the uids of the pods it deleted.

        A process the suite started gets SIGKILL. An external scheduler's pods
        (--scheduler-pod-selector, all namespaces) are deleted without grace;
        its Deployment is expected to replace them.
        """
        if self.started_by_suite:
            self.process.stop(grace_seconds=0)
            return []
        if not self.pod_selector or kube is None:
            raise HarnessError(
                "this scenario restarts the scheduler: pass --scheduler-pod-selector (e.g. app=my-scheduler), or --exempt-features Restart"
            )
        pods = kube.core.list_pod_for_all_namespaces(label_selector=self.pod_selector).items
        if not pods:
            raise HarnessError(f"no pod matches --scheduler-pod-selector {self.pod_selector!r}: fix the selector")
        for pod in pods:
            meta = present(pod.metadata)
            kube.core.delete_namespaced_pod(present(meta.name), present(meta.namespace), grace_period_seconds=0)
        return [str(present(pod.metadata).uid) for pod in pods]

    def stop(self) -> None:
        if self.started_by_suite:
            self.process.stop(grace_seconds=10)
            self.launch_logs.copy()

    def log_tail(self, lines: int = 200) -> str:
        return tail(self.process.log_file, lines) if self.started_by_suite else ""


def which_executable(program: str) -> str:
    import shutil

    found = shutil.which(program)
    if found is None:
        where = "does not exist or is not executable" if "/" in program else "is not on PATH"
        raise HarnessError(f"{program!r} from --scheduler-cmd {where}: give an absolute path, or a path from the directory pytest runs in")
    # Absolute: the scheduler runs in its own work directory, where a path like .venv/bin/x means nothing.
    return os.path.abspath(found)
