"""Replicas: two leader-electing launches of the scheduler under test, for a scenario's duration.

The leader is known by construction, from the Lease alone: the first replica
starts alone and the suite waits for the Lease to name a holder (it can only
be that replica); then the second starts, as a follower. So the harness needs
no metrics and no knowledge of how a scheduler spells its identity. A
failover is the Lease naming another, non-empty holder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import kubernetes

from harness.cluster.processes import ManagedProcess, tail
from harness.errors import HarnessError
from harness.kube import Kube, json_object
from harness.suite import lease_names
from harness.suite.scheduler_under_test import PROCESS_NAME, SchedulerDied, SchedulerUnderTest, which_executable
from harness.timeouts import TimeoutConfig
from harness.waits import Broken, NotYet, wait_for

LEASES = ("coordination.k8s.io", "v1")


@dataclass
class Replicas:
    """Replicas runs `count` replicas of the scheduler under test competing for one Lease in `lease_namespace`."""

    scheduler: SchedulerUnderTest
    kube: Kube
    lease_namespace: str
    timeouts: TimeoutConfig
    count: int = 2
    processes: list[ManagedProcess] = field(default_factory=list)
    #: The replica that holds the Lease, and the holderIdentity it wrote.
    leader: ManagedProcess | None = None
    leader_identity: str = ""
    #: The replicas kill_leader() ended.
    killed: list[ManagedProcess] = field(default_factory=list)

    @property
    def lease_name(self) -> str:
        # The scheduler name is per xdist worker (harness.suite.workers), so each worker's replicas have their own Lease.
        return lease_names.lease_name(self.scheduler.scheduler_name, lease_names.REPLICAS)

    def start(self) -> None:
        """start() launches the first replica, waits until it holds the Lease, then launches the others."""
        for index in range(self.count):
            process = ManagedProcess.in_dir(f"{PROCESS_NAME}-{self.scheduler.scheduler_name}-replica-{index}", self.scheduler.workdir)
            argv = self.scheduler.replica_argv(index, lease_name=self.lease_name, lease_namespace=self.lease_namespace)
            if not argv:
                raise HarnessError("--scheduler-replica-cmd is empty: give the command that starts one replica")
            executable = argv[0] if os.path.isabs(argv[0]) else which_executable(argv[0])
            process.stop(grace_seconds=5)
            self.scheduler.launch_logs.starting(process.log_file, f"{self.scheduler.scheduler_name}-replica-{index}")
            process.start([executable, *argv[1:]], env=dict(os.environ), cwd=self.scheduler.workdir, dies_with_parent=True)
            self.processes.append(process)
            if index == 0:
                self.leader = process
                self.leader_identity = self._wait_holder(other_than="", what="the first replica to take the Lease")

    def holder(self) -> str:
        """holder() is the Lease's spec.holderIdentity ('' while it names none or does not exist)."""
        try:
            raw = json_object(self.kube.custom.get_namespaced_custom_object(*LEASES, self.lease_namespace, "leases", self.lease_name))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                return ""
            raise
        return str((raw.get("spec") or {}).get("holderIdentity") or "")

    def kill_leader(self) -> None:
        """kill_leader() ends the leading replica as a crash would (SIGKILL): its Lease stays until it expires."""
        if self.leader is None:
            raise HarnessError("kill_leader() before start(): no replica leads")
        self.killed.append(self.leader)
        self.leader.stop(grace_seconds=0)

    def wait_failover(self) -> str:
        """wait_failover() returns the new holder once the Lease names a replica other than the killed one."""
        survivors = [p for p in self.processes if p is not self.leader]
        identity = self._wait_holder(other_than=self.leader_identity, what="another replica to take the Lease", watch=survivors)
        self.leader, self.leader_identity = (survivors[0] if len(survivors) == 1 else None), identity
        return identity

    def check_alive(self) -> None:
        """check_alive() fails, naming its log, if a replica the scenario did not kill has died."""
        for process in self.processes:
            if process not in self.killed and not process.alive():
                raise SchedulerDied(f"{process.name} died while being tested; its log ends {tail(process.log_file, 5)!r} (log: {process.log_file})")

    def stop(self) -> None:
        for process in self.processes:
            process.stop(grace_seconds=self.timeouts.process_stop)

    def log_tails(self, lines: int = 100) -> str:
        return "\n".join(f"--- {p.name} ---\n{tail(p.log_file, lines)}" for p in self.processes)

    def _wait_holder(self, *, other_than: str, what: str, watch: list[ManagedProcess] | None = None) -> str:
        watched = list(self.processes if watch is None else watch)

        def poll() -> str:
            for process in watched:
                if not process.alive():
                    raise Broken(f"{process.name} exited before it led: {tail(process.log_file, 5)!r}")
            holder = self.holder()
            if not holder or holder == other_than:
                raise NotYet(f"Lease {self.lease_namespace}/{self.lease_name} names {holder or 'no holder'!r}")
            return holder

        timeout = "scheduler_restart" if watch is None else "scheduler_failover"
        return wait_for(poll, what=what, timeout=timeout, timeouts=self.timeouts)
