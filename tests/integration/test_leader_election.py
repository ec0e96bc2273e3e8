"""Two replicas of the reference with leader election: one schedules, the other takes over when it goes.

The Deployment in reference_scheduler/deploy/ runs replicas like these. Each
case asserts on object state (the Lease, pods' nodeName) and on what each
replica serves on its own /metrics (`tkn_scheduler_is_leader`), never on logs.
The lease is short here (6 s) so that a takeover after a crash fits a test.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.cluster.local import LocalCluster
from harness.cluster.node_pools import NodePool
from harness.cluster.paths import REPO_ROOT
from harness.cluster.processes import ManagedProcess
from harness.contract.install import install_crd
from harness.kube import Kube
from harness.timeouts import TimeoutConfig
from harness.waits import Broken, NotYet, hold_for, wait_for
from it_pods import plain_pod, wait_bound

pytestmark = pytest.mark.integration

SCHEDULER = "tkn-scheduler-le"
LEASE = "tkn-scheduler-le"
LEASE_SECONDS = 6
Obj = dict[str, Any]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Replica:
    """Replica is one reference process competing for the test's Lease, with its own metrics port."""

    process: ManagedProcess
    port: int

    def start(self, kubeconfig: Path, namespace: str) -> None:
        argv = [
            sys.executable, "-m", "reference_scheduler.main",
            "--kubeconfig", str(kubeconfig),
            "--scheduler-name", SCHEDULER,
            "--leader-elect", "--lease-name", LEASE, "--lease-namespace", namespace,
            "--lease-duration-seconds", str(LEASE_SECONDS), "--renew-deadline-seconds", "4", "--retry-period-seconds", "1",
            "--metrics-port", str(self.port), "--log-format", "text",
        ]
        self.process.start(argv, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, cwd=REPO_ROOT)

    def leading(self) -> bool | None:
        """leading() is what the replica's is_leader gauge says; None while it serves no metrics."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2) as reply:
                text = reply.read().decode()
        except (urllib.error.URLError, OSError):
            return None
        for family in text_string_to_metric_families(text):
            if family.name == "tkn_scheduler_is_leader":
                return any(sample.value == 1 for sample in family.samples)
        return None


@pytest.fixture
def replicas(it_cluster: LocalCluster, it_kube: Kube, namespace: str, it_timeouts: TimeoutConfig) -> Iterator[list[Replica]]:
    install_crd(it_kube, timeouts=it_timeouts)  # the reference refuses to start without it
    found = [Replica(ManagedProcess.in_dir(f"leader-election-{i}", it_cluster.workdir), _free_port()) for i in range(2)]
    try:
        for replica in found:
            replica.start(it_cluster.kubeconfig, namespace)
        yield found
    finally:
        for replica in found:
            replica.process.stop(grace_seconds=it_timeouts.process_stop)


def _lease_holder(kube: Kube, namespace: str) -> str:
    raw: Obj = kube.custom.get_namespaced_custom_object("coordination.k8s.io", "v1", namespace, "leases", LEASE)
    return str((raw.get("spec") or {}).get("holderIdentity") or "")


def _the_leader(replicas: list[Replica], timeouts: TimeoutConfig) -> Replica:
    """_the_leader() waits until exactly one running replica says it leads, and returns it."""

    def poll() -> Replica:
        for replica in replicas:
            if not replica.process.alive():
                raise Broken(f"{replica.process.crash_report()}")
        said = [replica.leading() for replica in replicas]
        leaders = [replica for replica, leading in zip(replicas, said) if leading]
        if len(leaders) != 1:
            raise NotYet(f"replicas say leading={said}")
        return leaders[0]

    return wait_for(poll, what="exactly one replica to lead", timeout="scheduler_restart", timeouts=timeouts)


def _only_one_leads(replicas: list[Replica], timeouts: TimeoutConfig) -> None:
    def check() -> None:
        said = [replica.leading() for replica in replicas]
        if sum(1 for leading in said if leading) != 1:
            raise NotYet(f"replicas say leading={said}")

    hold_for(check, what="one replica leading", duration="group_stays", timeouts=timeouts)


def _wait_exited(replica: Replica, timeouts: TimeoutConfig) -> None:
    def poll() -> None:
        if replica.process.alive():
            raise NotYet(f"pid {replica.process.pid()} still runs")

    wait_for(poll, what=f"{replica.process.name} to exit", timeout="process_stop", timeouts=timeouts)


def _bind_one(kube: Kube, namespace: str, pool: NodePool, name: str, leader: Replica, timeouts: TimeoutConfig) -> str:
    kube.core.create_namespaced_pod(namespace, plain_pod(name, pool, "100m", scheduler_name=SCHEDULER))

    def leader_alive() -> None:
        if not leader.process.alive():
            raise Broken(leader.process.crash_report())

    return wait_bound(kube, namespace, name, timeouts, check_alive=leader_alive)


def test_one_replica_leads_and_schedules(
    it_kube: Kube, namespace: str, node_pool: NodePool, replicas: list[Replica], it_timeouts: TimeoutConfig
) -> None:
    leader = _the_leader(replicas, it_timeouts)
    _only_one_leads(replicas, it_timeouts)
    assert _lease_holder(it_kube, namespace), "the leader runs but the Lease names no holder"
    assert _bind_one(it_kube, namespace, node_pool, "while-both-run", leader, it_timeouts) in node_pool.nodes


def test_a_killed_leaders_lease_is_taken_over_after_it_expires(
    it_kube: Kube, namespace: str, node_pool: NodePool, replicas: list[Replica], it_timeouts: TimeoutConfig
) -> None:
    leader = _the_leader(replicas, it_timeouts)
    holder = _lease_holder(it_kube, namespace)
    pid = leader.process.pid()
    assert pid is not None
    os.killpg(pid, signal.SIGKILL)
    _wait_exited(leader, it_timeouts)
    assert _lease_holder(it_kube, namespace) == holder, "a killed leader cannot have released its Lease"

    survivor = _the_leader([r for r in replicas if r is not leader], it_timeouts)
    assert _lease_holder(it_kube, namespace) not in ("", holder)
    assert _bind_one(it_kube, namespace, node_pool, "after-the-crash", survivor, it_timeouts) in node_pool.nodes


def test_a_stopped_leader_clears_its_lease_before_it_exits(
    it_kube: Kube, namespace: str, node_pool: NodePool, replicas: list[Replica], it_timeouts: TimeoutConfig
) -> None:
    leader = _the_leader(replicas, it_timeouts)
    holder = _lease_holder(it_kube, namespace)
    leader.process.stop(grace_seconds=it_timeouts.process_stop)  # SIGTERM, then waits for the exit
    assert _lease_holder(it_kube, namespace) != holder, "the leader exited on SIGTERM still holding the Lease"

    survivor = _the_leader([r for r in replicas if r is not leader], it_timeouts)
    assert _bind_one(it_kube, namespace, node_pool, "after-the-handover", survivor, it_timeouts) in node_pool.nodes

