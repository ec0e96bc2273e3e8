"""A local pool node reports what a kubelet reports: allocatable exactly the pool's size, capacity above it.

Each reader of a node's room (the contract monitor, the harness's sizes, the
reference) must take allocatable; the mutant sizes_nodes_by_capacity takes capacity.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.cluster import node_pools
from harness.cluster.node_pools import RESERVED_CPU_MILLIS, RESERVED_MEMORY_BYTES, kubelet_capacity, node_manifest, not_yet_schedulable
from harness.quantities import Amount, amount_of, cpu_millis, memory_bytes, node_allocatable
from reference_scheduler.core import node_checks
from reference_scheduler.core.resources import Resources
from tests.mutants import faults

pytestmark = pytest.mark.unit

MI = 2**20


def pool_node(cpu: str = "4800m", memory: str = "8Gi", pods: int = 110) -> dict[str, Any]:
    return node_manifest("p-0", pool="p", cpu=cpu, memory=memory, pods=pods, labels={}, taints=())


KUBELET_EXTRAS = {"hugepages-1Gi": "0", "hugepages-2Mi": "0"}


def test_allocatable_is_exactly_the_pool_size_with_what_a_kubelet_adds() -> None:
    assert pool_node()["status"]["allocatable"] == {"cpu": "4800m", "memory": "8Gi", "pods": "110", "ephemeral-storage": "90Gi", **KUBELET_EXTRAS}


def test_capacity_is_allocatable_plus_what_the_system_keeps() -> None:
    status = pool_node()["status"]
    assert status["capacity"] == {"cpu": "5000m", "memory": str(8 * 2**30 + 512 * MI), "pods": "110", "ephemeral-storage": "100Gi", **KUBELET_EXTRAS}
    assert amount_of(status["capacity"]) - amount_of(status["allocatable"]) == Amount.of({"cpu": 200, "memory": 512 * MI, "ephemeral-storage": 10 * 2**30})


@pytest.mark.parametrize(("cpu", "memory"), [("4", "16Gi"), ("1.5", "1G"), ("4800m", "8589934592"), ("10m", "64Mi")])
def test_capacity_is_above_allocatable_whatever_the_notation(cpu: str, memory: str) -> None:
    capacity = kubelet_capacity(cpu, memory, 3)
    assert cpu_millis(capacity["cpu"]) == cpu_millis(cpu) + RESERVED_CPU_MILLIS
    assert memory_bytes(capacity["memory"]) == memory_bytes(memory) + RESERVED_MEMORY_BYTES
    assert capacity["pods"] == "3"


def test_the_pod_count_is_the_same_in_both() -> None:
    status = pool_node(pods=3)["status"]
    assert status["capacity"]["pods"] == status["allocatable"]["pods"] == "3"


def test_taints_and_labels_are_unchanged() -> None:
    node = node_manifest("p-0", pool="p", cpu="1", memory="1Gi", pods=110, labels={"lane": "open"}, taints=({"key": "k", "effect": "NoSchedule"},))
    assert node["metadata"]["labels"]["lane"] == "open"
    assert node["spec"] == {"taints": [{"key": "k", "effect": "NoSchedule"}]}


def test_the_monitor_reads_allocatable() -> None:
    # node-overcommitted compares a node's load with node_allocatable(): 4800m, not 5000m.
    assert node_allocatable(pool_node()) == Amount.of({"cpu": 4800, "memory": 8 * 2**30, "ephemeral-storage": 90 * 2**30})


def test_the_reference_reads_allocatable() -> None:
    assert node_checks.node_allocatable(pool_node()) == Resources.of({"cpu": 4800, "memory": 8 * 2**30, "ephemeral-storage": 90 * 2**30})
    assert node_checks.allocatable_pods(pool_node(pods=3)) == 3


def test_the_reference_finds_no_room_on_a_node_without_allocatable() -> None:
    assert node_checks.node_allocatable({"status": {"capacity": {"cpu": "4"}}}) == Resources()
    assert node_checks.node_allocatable({"status": {"allocatable": {"cpu": "lots"}}}) == Resources()


def test_the_mutant_reads_capacity() -> None:
    # On allocatable_not_capacity's node: beside A's 200m pod and 3600m residual, 1200m instead of 1000m.
    assert faults.capacity_as_allocatable(pool_node()) == Resources.of({"cpu": 5000, "memory": 8 * 2**30 + 512 * MI, "ephemeral-storage": 100 * 2**30})
    assert faults.capacity_as_allocatable(pool_node()).cpu - 200 - 3600 == 1200


def test_a_new_node_is_not_schedulable_until_ready_and_the_lifecycle_taint_is_gone() -> None:
    assert not_yet_schedulable(None, []) == "is not Ready (Ready=None)"
    assert not_yet_schedulable("False", []) == "is not Ready (Ready=False)"
    # Ready=True comes first; the node lifecycle controller takes its taint off afterwards.
    assert not_yet_schedulable("True", ["node.kubernetes.io/not-ready"]) == "still has the taint node.kubernetes.io/not-ready (Ready=True)"
    assert not_yet_schedulable("True", ["node.kubernetes.io/unreachable", "rescon.dev/dedicated"]) == (
        "still has the taint node.kubernetes.io/unreachable (Ready=True)"
    )
    assert not_yet_schedulable("True", []) == ""
    assert not_yet_schedulable("True", ["rescon.dev/dedicated"]) == ""  # the pool's own taints stay


def test_a_pool_that_asks_for_a_lifecycle_taint_is_not_waited_on_for_it() -> None:
    assert not_yet_schedulable("True", ["node.kubernetes.io/not-ready"], {"node.kubernetes.io/not-ready"}) == ""


def test_a_node_registers_again_with_its_name_labels_taints_and_resources_and_no_state() -> None:
    lost = {
        "metadata": {"name": "p-1", "uid": "u-1", "resourceVersion": "42", "labels": {"kubernetes.io/hostname": "p-1", "rescon.dev/pool": "p"},
                     "annotations": {"kwok.x-k8s.io/node": "fake"}},
        "spec": {"taints": [{"key": "dedicated", "value": "ci", "effect": "NoSchedule"},
                            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}], "unschedulable": False},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "capacity": {"cpu": "5"},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }
    again = node_pools.registered_again(lost)
    assert again["metadata"] == {"name": "p-1", "labels": lost["metadata"]["labels"], "annotations": {"kwok.x-k8s.io/node": "fake"}}
    assert again["spec"] == {"taints": [{"key": "dedicated", "value": "ci", "effect": "NoSchedule"}]}
    assert again["status"] == {"capacity": {"cpu": "5"}, "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    assert node_pools.registered_again({"metadata": {"name": "p-0"}})["spec"] == {}
