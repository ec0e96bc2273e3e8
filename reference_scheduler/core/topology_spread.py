"""PodTopologySpread: a pod's DoNotSchedule spread constraints, as kube-scheduler v1.37's filter decides them.

A constraint ``{maxSkew, topologyKey, whenUnsatisfiable: DoNotSchedule,
labelSelector}`` keeps the pods its selector picks spread over the topology
domains (the values of ``topologyKey`` among the nodes): placing the pod on a
node must leave the node's domain at most ``maxSkew`` above the emptiest domain.
``ScheduleAnyway`` constraints only score, so they are not read here.

kube-scheduler (``pkg/scheduler/framework/plugins/podtopologyspread``,
``filtering.go`` and ``common.go``) counts once per attempt, in PreFilter:

* the **eligible nodes**: those labelled with *every* constraint's
  topologyKey, and, per constraint, that pass the pod's nodeSelector and
  required node affinity when ``nodeAffinityPolicy`` is Honor (the default)
  and have no NoSchedule/NoExecute taint the pod does not tolerate when
  ``nodeTaintsPolicy`` is Honor (the default is Ignore);
* per constraint and domain, the placed pods on its eligible nodes that are in
  the pod's namespace, not being deleted, and matched by the selector (an
  empty selector ``{}`` counts none); every eligible node's domain is listed,
  with 0 when it holds no matching pod;
* the global minimum: the least count over the listed domains, or 0 while
  fewer domains are listed than ``minDomains`` (default 1).

Filter then fails a node without a constraint's topologyKey ("... (missing
required label)") and a node where ``count in its domain + (1 if the pod
matches the selector) - minimum > maxSkew``.

``matchLabelKeys`` are ANDed into the selector as ``key In [the pod's value]``
for each key the pod has (kube-scheduler's ``filterTopologySpreadConstraints``,
with MatchLabelKeysInPodTopologySpread on by default; the API server has merged
them in at creation already, which selects the same pods).

kube-scheduler's *system default* constraints are all ScheduleAnyway, so they
never filter: a pod without constraints of its own is skipped here, as there.

Worked example: zones ``a`` (n1, n2) and ``b`` (n3); pods labelled ``app=web``
in the pod's namespace: two on n1, none elsewhere. A pod labelled ``app=web``
with ``maxSkew: 1`` on ``topology.kubernetes.io/zone`` selecting ``app=web``:
counts ``{a: 2, b: 0}``, minimum 0. n1 and n2 give skew 2 + 1 - 0 = 3 > 1 and
fail; n3 gives 0 + 1 - 0 = 1 and passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.label_selectors import LabelSelector, labels_of, parse_label_selector
from reference_scheduler.core.node_checks import node_affinity_mismatch, node_selector_mismatch, untolerated_taint
from reference_scheduler.core.reasons import TopologySpreadConstraintsNotMatch, TopologySpreadMissingLabel

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object (a pod, a node)."""

TopologySpreadFailure: TypeAlias = TopologySpreadConstraintsNotMatch | TopologySpreadMissingLabel
"""TopologySpreadFailure is a reason ``topology_spread_failure`` can return."""

DO_NOT_SCHEDULE = "DoNotSchedule"
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True)
class SpreadConstraint:
    """SpreadConstraint is one parsed DoNotSchedule constraint, matchLabelKeys already in its selector.

    Example: ``{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
    labelSelector: {matchLabels: {app: web}}}`` is
    ``SpreadConstraint(1, "zone", <app In [web]>, 1, "Honor", "Ignore")``.
    """

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def hard_spread_constraints(pod: Json) -> tuple[SpreadConstraint, ...]:
    """hard_spread_constraints parses the pod's ``whenUnsatisfiable: DoNotSchedule`` constraints, in order.

    A constraint's absent ``minDomains`` is 1, ``nodeAffinityPolicy`` Honor,
    ``nodeTaintsPolicy`` Ignore (kube-scheduler's defaults); each
    ``matchLabelKeys`` key the pod is labelled with adds ``key In [value]`` to
    the selector (a null selector stays one that selects nothing).

    Example: a pod labelled ``app=web, rev=7`` with a constraint selecting
    ``{matchLabels: {app: web}}`` and ``matchLabelKeys: [rev, missing]`` gets a
    selector requiring ``app=web`` and ``rev=7``; its ScheduleAnyway
    constraints are left out.
    """
    raw = value_at(pod, "spec", "topologySpreadConstraints")
    if not isinstance(raw, list):
        return ()
    pod_labels = labels_of(pod)
    found: list[SpreadConstraint] = []
    for constraint in raw:
        if not isinstance(constraint, Mapping) or constraint.get("whenUnsatisfiable") != DO_NOT_SCHEDULE:
            continue
        selector = parse_label_selector(constraint.get("labelSelector"))
        keys = constraint.get("matchLabelKeys")
        if isinstance(keys, list):
            selector = selector.with_requirements(
                tuple((str(k), "In", frozenset({str(pod_labels[k])})) for k in keys if isinstance(k, str) and k in pod_labels)
            )
        found.append(
            SpreadConstraint(
                max_skew=_int(constraint.get("maxSkew"), 1),
                topology_key=str(constraint.get("topologyKey") or ""),
                selector=selector,
                min_domains=_int(constraint.get("minDomains"), 1),
                node_affinity_policy=str(constraint.get("nodeAffinityPolicy") or HONOR),
                node_taints_policy=str(constraint.get("nodeTaintsPolicy") or IGNORE),
            )
        )
    return tuple(found)


def matching_pods(pods: Sequence[Json], selector: LabelSelector, namespace: str) -> int:
    """matching_pods counts the pods a constraint counts on one node: kube-scheduler's ``countPodsMatchSelector``.

    Only pods of ``namespace`` that are not being deleted (a Terminating pod is
    on its way out, kubernetes#87621) and that the selector matches; an empty
    selector ``{}`` counts none.

    Example: pods ``app=web`` (ns ci), ``app=web`` (ns other) and ``app=web``
    with a deletionTimestamp (ns ci) count 1 for selector ``app=web`` in ``ci``.
    """
    if selector.empty:
        return 0
    count = 0
    for pod in pods:
        metadata = pod.get("metadata")
        if not isinstance(metadata, Mapping) or metadata.get("deletionTimestamp") or (metadata.get("namespace") or "") != namespace:
            continue
        if selector.matches(labels_of(pod)):
            count += 1
    return count


@dataclass(frozen=True)
class SpreadState:
    """SpreadState is what PreFilter counts for one pod's constraints, read by Filter for every node.

    Per constraint (same order): ``counts`` maps each eligible domain to its
    matching pods; ``minimums`` is the global minimum Filter subtracts (0 while
    fewer than minDomains domains are listed); ``self_matches`` is 1 when the
    pod matches the constraint's own selector.

    Example (the module's worked example): ``counts == ({"a": 2, "b": 0},)``,
    ``minimums == (0,)``, ``self_matches == (1,)``.
    """

    constraints: tuple[SpreadConstraint, ...]
    counts: tuple[Mapping[str, int], ...]
    minimums: tuple[int, ...]
    self_matches: tuple[int, ...]


def _global_minimum(counts: Mapping[str, int], min_domains: int) -> int:
    if len(counts) < min_domains or not counts:
        return 0
    return min(counts.values())


def topology_spread_state(
    pod: Json, *, nodes: Mapping[str, Json], pods_by_node: Mapping[str, Sequence[Json]]
) -> SpreadState | None:
    """topology_spread_state is the filter's PreFilter: the counts per constraint, or None when the pod has no DoNotSchedule constraint.

    ``nodes`` are the attempt's nodes by name; ``pods_by_node`` the placed pods
    per node, the pod itself not among them. Each node is looked at once, its
    pods only when it is eligible for some constraint.

    Example: a pod with only ``ScheduleAnyway`` constraints gives None (kube-scheduler's Skip).
    """
    constraints = hard_spread_constraints(pod)
    if not constraints:
        return None
    namespace = str(value_at(pod, "metadata", "namespace") or "")
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for name, node in nodes.items():
        labels = labels_of(node)
        if any(c.topology_key not in labels for c in constraints):
            continue
        affinity_ok: bool | None = None
        taints_ok: bool | None = None
        placed = pods_by_node.get(name, ())
        for index, constraint in enumerate(constraints):
            if constraint.node_affinity_policy == HONOR:
                if affinity_ok is None:
                    affinity_ok = node_selector_mismatch(pod, node) is None and node_affinity_mismatch(pod, node) is None
                if not affinity_ok:
                    continue
            if constraint.node_taints_policy == HONOR:
                if taints_ok is None:
                    taints_ok = untolerated_taint(pod, node) is None
                if not taints_ok:
                    continue
            value = str(labels[constraint.topology_key])
            domain = counts[index]
            domain[value] = domain.get(value, 0) + matching_pods(placed, constraint.selector, namespace)
    pod_labels = labels_of(pod)
    return SpreadState(
        constraints=constraints,
        counts=tuple(counts),
        minimums=tuple(_global_minimum(c, k.min_domains) for c, k in zip(counts, constraints)),
        self_matches=tuple(1 if c.selector.matches(pod_labels) else 0 for c in constraints),
    )


def topology_spread_failure(state: SpreadState, node: Json) -> TopologySpreadFailure | None:
    """topology_spread_failure is the filter's Filter for one node: the first constraint the node breaks, in order.

    A node without the constraint's topologyKey fails at once (kube-scheduler
    makes that UnschedulableAndUnresolvable); otherwise the node fails when
    ``count in its domain + self match - global minimum > maxSkew``. A domain
    with no eligible node counts 0.

    Example (the module's worked example): n1 gives
    ``TopologySpreadConstraintsNotMatch("topology.kubernetes.io/zone", "a", 2, 1, 0, 1)``,
    n3 passes, and a node without a zone label gives
    ``TopologySpreadMissingLabel("topology.kubernetes.io/zone")``.
    """
    labels = labels_of(node)
    for index, constraint in enumerate(state.constraints):
        if constraint.topology_key not in labels:
            return TopologySpreadMissingLabel(constraint.topology_key)
        value = str(labels[constraint.topology_key])
        matching = state.counts[index].get(value, 0)
        minimum = state.minimums[index]
        self_match = state.self_matches[index]
        if matching + self_match - minimum > constraint.max_skew:
            return TopologySpreadConstraintsNotMatch(constraint.topology_key, value, matching, self_match, minimum, constraint.max_skew)
    return None
