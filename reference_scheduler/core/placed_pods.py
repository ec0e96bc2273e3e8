"""PlacedPods: the pods already on each node, as the filters that read other pods see them.

NodePorts, InterPodAffinity and PodTopologySpread judge a node by the pods
placed on it (bound and not finished, or assumed by this scheduler), not only by
their requests. kube-scheduler keeps, per node, the pods themselves, the host
ports they use (``NodeInfo.UsedPorts``) and the pods with required
anti-affinity (``PodsWithRequiredAntiAffinity``), updated as pods come and go,
so that a pod with no ports and no pod affinity of its own costs nothing per
node. PlacedPods is that snapshot as plain data: the runtime's ClusterView
keeps it up to date per node (``node_index`` for a node whose pods changed),
and the cycle hands it to the checks once per attempt.

Example: n1 runs ``web`` (hostPort 8080) and ``db`` (required anti-affinity):
``placed_pods({"n1": [web, db]})`` has ``used_ports == {"n1": {("0.0.0.0", "TCP", 8080)}}``
and ``with_anti_affinity == {"n1": (db,)}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from reference_scheduler.core.inter_pod_affinity import has_required_anti_affinity
from reference_scheduler.core.node_ports import HostPort, used_host_ports

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw pod as the API returns it."""

NO_PORTS: frozenset[HostPort] = frozenset()

_V = TypeVar("_V", tuple[Json, ...], frozenset[HostPort])


def _uid(pod: Json) -> str:
    metadata = pod.get("metadata")
    return str(metadata.get("uid") or "") if isinstance(metadata, Mapping) else ""


def node_index(pods: Iterable[Json]) -> tuple[tuple[Json, ...], frozenset[HostPort], tuple[Json, ...]]:
    """node_index is one node's entry: its pods, the host ports they use, and those with required anti-affinity.

    Example: ``node_index([web])`` for a pod ``web`` binding 8080/TCP and without
    anti-affinity is ``((web,), frozenset({("0.0.0.0", "TCP", 8080)}), ())``.
    """
    placed = tuple(pods)
    return placed, used_host_ports(placed), tuple(p for p in placed if has_required_anti_affinity(p))


@dataclass(frozen=True)
class PlacedPods:
    """PlacedPods is every placed pod per node name, with the two per-node indexes the filters read.

    ``by_node`` holds only nodes with pods; ``used_ports`` only nodes whose
    pods bind host ports; ``with_anti_affinity`` only nodes with a pod that has
    required anti-affinity. It is never changed: ``with_pods`` and ``without``
    return new snapshots.

    Example: ``PlacedPods()`` is an empty cluster: every port is free, no pod
    rejects anyone.
    """

    by_node: Mapping[str, tuple[Json, ...]] = field(default_factory=dict)
    used_ports: Mapping[str, frozenset[HostPort]] = field(default_factory=dict)
    with_anti_affinity: Mapping[str, tuple[Json, ...]] = field(default_factory=dict)

    def ports_on(self, node: str) -> frozenset[HostPort]:
        """ports_on(node) is the host ports the node's pods use (empty for a node without any)."""
        return self.used_ports.get(node, NO_PORTS)

    def with_pods(self, node: str, pods: Iterable[Json]) -> PlacedPods:
        """with_pods(node, pods) is the snapshot with more pods placed on the node.

        The cycle uses it to judge a group's waiting pods placed beside the one
        that makes the group's claim, each seeing the pods placed before it.

        Example: ``PlacedPods().with_pods("n1", [web]).by_node == {"n1": (web,)}``.
        """
        added = tuple(pods)
        if not added:
            return self
        return self._replaced(node, self.by_node.get(node, ()) + added)

    def without(self, uid: str, node: str) -> PlacedPods:
        """without(uid, node) is the snapshot without that pod on that node (unchanged when it is not there).

        A pod tried again after a failed bind may still be assumed on its node;
        it must not collide with its own ports nor match its own anti-affinity there.

        Example: ``PlacedPods().with_pods("n1", [web]).without(uid of web, "n1").by_node == {}``.
        """
        pods = self.by_node.get(node, ())
        if not any(_uid(p) == uid for p in pods):
            return self
        return self._replaced(node, tuple(p for p in pods if _uid(p) != uid))

    def _replaced(self, node: str, pods: tuple[Json, ...]) -> PlacedPods:
        placed, ports, anti = node_index(pods)
        return PlacedPods(_set(self.by_node, node, placed), _set(self.used_ports, node, ports), _set(self.with_anti_affinity, node, anti))


def _set(table: Mapping[str, _V], node: str, value: _V) -> dict[str, _V]:
    """A copy of the table with the node's entry set, or dropped when the value is empty."""
    copy = dict(table)
    if value:
        copy[node] = value
    else:
        copy.pop(node, None)
    return copy


def placed_pods(by_node: Mapping[str, Iterable[Json]]) -> PlacedPods:
    """placed_pods builds a snapshot from the pods per node (unit tests; ClusterView keeps its own per node).

    Example: ``placed_pods({"n1": [], "n2": [web]}).by_node == {"n2": (web,)}``.
    """
    result: dict[str, tuple[Json, ...]] = {}
    ports: dict[str, frozenset[HostPort]] = {}
    anti: dict[str, tuple[Json, ...]] = {}
    for node, pods in by_node.items():
        placed, used, with_anti = node_index(pods)
        if placed:
            result[node] = placed
        if used:
            ports[node] = used
        if with_anti:
            anti[node] = with_anti
    return PlacedPods(result, ports, anti)
