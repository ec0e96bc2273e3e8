"""The filters that read the pods already placed, run together: NodePorts, PodTopologySpread, InterPodAffinity.

kube-scheduler runs each of them in two steps: PreFilter once per attempt
(what the pod asks, and the counts over the cluster's placed pods), then Filter
once per node (a lookup in those counts). ``inter_pod_checks`` is the three
PreFilters, ``inter_pod_failures`` the three Filters, so the cycle pays the
walk over the cluster's pods once per attempt, and only for a pod that needs it:

* NodePorts reads only the pod's own host ports and each node's used ports;
* InterPodAffinity walks every placed pod only for a pod with required pod
  (anti-)affinity terms, and otherwise only the pods with required
  anti-affinity (which may reject it);
* PodTopologySpread walks the nodes and their pods only for a pod with a
  DoNotSchedule constraint.

A pod that binds no host port, has no such terms and constraints, and that no
placed pod's anti-affinity selects gets None, and no node pays anything.

They apply to every pod alike, a group's pods included: the pod that opens its
group's claim must pass them on the claim's node, and a later pod of the group
must pass them on the group's node, or wait there.

Example: a pod asking hostPort 8080, on two nodes of which n1 already runs a pod
binding 8080: ``inter_pod_failures(checks, n1, placed) == (NodePortsConflict(...),)``
and n2 passes with ``()``; the attempt's message reads "0/2 nodes are available:
... 1 node(s) didn't have free ports for the requested pod ports".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from reference_scheduler.core.inter_pod_affinity import (
    InterPodAffinityFailure,
    InterPodAffinityState,
    inter_pod_affinity_failure,
    inter_pod_affinity_state,
)
from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.node_ports import HostPort, host_ports, node_ports_conflict
from reference_scheduler.core.placed_pods import PlacedPods
from reference_scheduler.core.reasons import NodePortsConflict
from reference_scheduler.core.topology_spread import SpreadState, TopologySpreadFailure, topology_spread_failure, topology_spread_state

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object (a pod, a node)."""

InterPodFailure: TypeAlias = NodePortsConflict | TopologySpreadFailure | InterPodAffinityFailure
"""InterPodFailure is a reason ``inter_pod_failures`` can return."""


@dataclass(frozen=True)
class InterPodChecks:
    """InterPodChecks is the three PreFilters' result for one pod: what each Filter reads per node.

    ``ports`` are the pod's host ports (empty: NodePorts passes everywhere);
    ``spread`` and ``affinity`` are None when that filter has nothing to check.

    Example: a pod with hostPort 8080 and nothing else gives
    ``InterPodChecks(ports=(("0.0.0.0", "TCP", 8080),), spread=None, affinity=None)``.
    """

    ports: tuple[HostPort, ...] = ()
    spread: SpreadState | None = None
    affinity: InterPodAffinityState | None = None


def inter_pod_checks(
    pod: Json,
    *,
    nodes: Mapping[str, Json],
    placed: PlacedPods,
    namespace_labels: Mapping[str, Mapping[str, Any]],
) -> InterPodChecks | None:
    """inter_pod_checks runs the three PreFilters once for the attempt; None when no node can fail them.

    ``nodes`` are the attempt's nodes by name, ``placed`` the pods placed on
    them (without the pod itself), ``namespace_labels`` every namespace's labels.

    Example: a plain pod (no host port, no pod affinity, no spread constraint)
    in a cluster where no pod has required anti-affinity gives None.
    """
    ports = host_ports(pod)
    spread = topology_spread_state(pod, nodes=nodes, pods_by_node=placed.by_node)
    affinity = inter_pod_affinity_state(
        pod,
        nodes=nodes,
        pods_by_node=placed.by_node,
        anti_affinity_pods_by_node=placed.with_anti_affinity,
        namespace_labels=namespace_labels,
    )
    if not ports and spread is None and affinity is None:
        return None
    return InterPodChecks(ports, spread, affinity)


def inter_pod_failures(checks: InterPodChecks, node: Json, placed: PlacedPods) -> tuple[InterPodFailure, ...]:
    """inter_pod_failures runs the three Filters on one node, in kube-scheduler's order; () when it passes all.

    Each filter gives at most one reason (its first broken rule), as each of
    kube-scheduler's Filter plugins returns one status; like the reference's
    other checks, all three run, so the message names every filter a node fails.

    Example: on a node without a zone label, for a pod with a hostPort the node
    already uses and a DoNotSchedule constraint on zone:
    ``(NodePortsConflict(...), TopologySpreadMissingLabel("topology.kubernetes.io/zone"))``.
    """
    failures: list[InterPodFailure] = []
    if checks.ports:
        conflict = node_ports_conflict(checks.ports, placed.ports_on(str(value_at(node, "metadata", "name") or "")))
        if conflict is not None:
            failures.append(conflict)
    if checks.spread is not None:
        spread = topology_spread_failure(checks.spread, node)
        if spread is not None:
            failures.append(spread)
    if checks.affinity is not None:
        affinity = inter_pod_affinity_failure(checks.affinity, node)
        if affinity is not None:
            failures.append(affinity)
    return tuple(failures)
