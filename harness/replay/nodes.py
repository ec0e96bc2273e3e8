"""nodes: the nodes a replay runs on, from `--nodes FILE` (your cluster's `kubectl get nodes -o yaml`) or `--pool 4x4cpu8Gi`.

From a nodes file each node keeps its name, labels (zones and all), taints,
cordon, allocatable and capacity. What is a node's state rather than its
make-up goes: the taints the node lifecycle controller puts on a node that is
not Ready or under pressure (STATE_TAINTS), and annotations, conditions and
addresses. On the local cluster each becomes a KWOK node of exactly that shape
(harness.cluster.node_pools.kwok_node_manifest); on kind and existing clusters
the workers are what they are, and only their labels, taints and extended
resources can be given (worker_shapes).

`--pool COUNTxCPUcpuMEMORY` is the shorthand for nodes alike, sized as a
kubelet sizes a small node (harness.cluster.node_pools.kubelet_allocatable);
several are joined by '+':

    >>> [(n.name, n.allocatable["cpu"], n.allocatable["memory"]) for n in pool_nodes("2x4cpu8Gi+1x500mcpu1Gi", "replay")]
    [('replay-0', '4', '8Gi'), ('replay-1', '4', '8Gi'), ('replay-2', '500m', '1Gi')]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.cluster.node_pools import LIFECYCLE_TAINTS, NodeShape, kubelet_allocatable, kubelet_capacity, kwok_node_manifest
from harness.errors import HarnessError
from harness.quantities import Amount, amount_of, cpu_millis, memory_bytes
from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.loading import documents_of_text
from harness.resource_names import is_extended

#: Taints that say how a node is doing, not what it is for: the lifecycle controller sets and clears them itself.
STATE_TAINTS = (
    *LIFECYCLE_TAINTS,
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/out-of-service",
    "node.cloudprovider.kubernetes.io/uninitialized",
)
#: Labels a kubelet owns about its own machine: never copied onto a kind or existing cluster's worker.
KUBELET_LABELS = ("kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch")
KUBELET_LABEL_PREFIXES = ("beta.kubernetes.io/", "node-role.kubernetes.io/")
#: Pods a `--pool` node holds, as a kubelet's default maxPods.
POOL_NODE_PODS = 110

_POOL_PART = re.compile(r"^(?P<count>[1-9][0-9]*)x(?P<cpu>[0-9]+(?:\.[0-9]+)?m?)cpu(?P<memory>[0-9]+(?:\.[0-9]+)?(?:[KMGTPE]i?|k)?)$")


@dataclass(frozen=True)
class NodeSpec:
    """NodeSpec is one node as replay makes it: its name, labels, taints, cordon and resource lists (quantities as written)."""

    name: str
    allocatable: Mapping[str, str]
    capacity: Mapping[str, str]
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, Any], ...] = ()
    unschedulable: bool = False

    def size(self) -> Amount:
        """size() is the node's allocatable as the suite counts it: what its pods' requests may add up to."""
        return amount_of(self.allocatable)

    def manifest(self, pool: str) -> dict[str, Any]:
        """manifest() is the KWOK node of the pool that plays this node on the local cluster."""
        return kwok_node_manifest(
            self.name, pool=pool, labels=self.labels, taints=self.taints,
            capacity=self.capacity, allocatable=self.allocatable, unschedulable=self.unschedulable,
        )


def node_spec(node: Mapping[str, Any], origin: str) -> NodeSpec:
    """node_spec() reads one Node object: either resource list stands in for a missing other, and state taints go.

    >>> node_spec({"metadata": {"name": "w1", "labels": {"topology.kubernetes.io/zone": "a"}},
    ...            "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}, {"key": "ci", "value": "true", "effect": "NoSchedule"}]},
    ...            "status": {"allocatable": {"cpu": "3920m", "memory": "15Gi"}}}, "nodes.yaml").taints
    ({'key': 'ci', 'value': 'true', 'effect': 'NoSchedule'},)
    """
    metadata, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    name = str(metadata.get("name") or "")
    allocatable = dict(status.get("allocatable") or status.get("capacity") or {})
    if not name or not allocatable:
        raise ReplayInputError(bad_input.node_without_size(origin, name or "(unnamed)"))
    taints = tuple(dict(t) for t in spec.get("taints") or [] if t.get("key") not in STATE_TAINTS)
    return NodeSpec(
        name=name, allocatable=allocatable, capacity=dict(status.get("capacity") or allocatable),
        labels={str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}, taints=taints,
        unschedulable=bool(spec.get("unschedulable")),
    )


def nodes_from_text(text: str, origin: str) -> list[NodeSpec]:
    """nodes_from_text() reads a nodes file: a List, one Node or several documents; at least one Node, each named once."""
    specs: list[NodeSpec] = []
    for document in documents_of_text(text, origin):
        if document.kind != "Node":
            raise ReplayInputError(bad_input.not_a_node(document.origin, document.kind))
        spec = node_spec(document.body, origin)
        if any(s.name == spec.name for s in specs):
            raise ReplayInputError(bad_input.node_defined_twice(origin, spec.name))
        specs.append(spec)
    if not specs:
        raise ReplayInputError(bad_input.no_nodes(origin))
    return specs


def pool_nodes(text: str, prefix: str) -> list[NodeSpec]:
    """pool_nodes() reads `--pool`: nodes named <prefix>-0, <prefix>-1, ..., each part's nodes alike."""
    specs: list[NodeSpec] = []
    for part in text.split("+"):
        match = _POOL_PART.match(part.strip())
        if match is None:
            raise ReplayInputError(bad_input.bad_pool(text))
        cpu, memory = match["cpu"], match["memory"]
        try:
            cpu_millis(cpu), memory_bytes(memory)
        except HarnessError:
            raise ReplayInputError(bad_input.bad_pool(text)) from None
        for _ in range(int(match["count"])):
            specs.append(NodeSpec(
                name=f"{prefix}-{len(specs)}", allocatable=kubelet_allocatable(cpu, memory, POOL_NODE_PODS),
                capacity=kubelet_capacity(cpu, memory, POOL_NODE_PODS),
            ))
    return specs


def portable_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """portable_labels() are the labels that may go onto a kubelet's node: not the ones it sets about its own machine.

    >>> portable_labels({"kubernetes.io/hostname": "w1", "node-role.kubernetes.io/worker": "", "topology.kubernetes.io/zone": "a", "ci": "big"})
    {'topology.kubernetes.io/zone': 'a', 'ci': 'big'}
    """
    return {k: v for k, v in labels.items() if k not in KUBELET_LABELS and not k.startswith(KUBELET_LABEL_PREFIXES)}


def worker_shapes(specs: Sequence[NodeSpec]) -> list[NodeShape]:
    """worker_shapes() give a kind or existing cluster's workers what a kubelet lets them take of each node: labels, taints, cordon, extended resources."""
    return [
        NodeShape(
            index,
            cordoned=spec.unschedulable,
            taints=tuple((str(t["key"]), str(t.get("value") or ""), str(t.get("effect") or "NoSchedule")) for t in spec.taints),
            labels=tuple(sorted(portable_labels(spec.labels).items())),
            resources=tuple(sorted((r, q) for r, q in spec.allocatable.items() if is_extended(r))),
        )
        for index, spec in enumerate(specs)
    ]
