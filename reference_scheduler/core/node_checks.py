"""Node checks every scheduler makes, over the raw pod and node JSON.

Each check is a small pure function ``check(pod, node) -> Reason | None``
(None: the node passes), mirroring one kube-scheduler Filter plugin:
NodeName, NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector and
required node affinity) and the pod-count half of NodeResourcesFit. They read
the dicts the API returns, so the runtime can feed informer objects directly.

Resources (cpu, memory, ephemeral-storage, hugepages, extended resources) are not checked here: that is ``headroom.fit``, which also
applies the pod-count limit through ``NodeView.max_pods``; ``too_many_pods``
is the same limit for callers that only hold the raw node.

Nor are the filters that read the pods already placed, which need more than
the two objects: NodePorts (``node_ports``), InterPodAffinity
(``inter_pod_affinity``) and PodTopologySpread (``topology_spread``), run together
by ``inter_pod_checks`` once per attempt; and kube-scheduler's SchedulingGates,
which keeps a gated pod out of the queue before any check (``scheduling_gates``).
"""

from __future__ import annotations

import re
# collections.abc's Mapping, not typing's: the same type, but isinstance() against typing's alias
# goes through a slow __instancecheck__, and these checks run for every node of every attempt.
from collections.abc import Mapping
from typing import Any, Callable, Sequence, TypeAlias

from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.reasons import (
    NodeAffinityMismatch,
    NodeNameMismatch,
    NodeSelectorMismatch,
    NodeUnschedulable,
    TooManyPods,
    UntoleratedTaint,
)
from reference_scheduler.core.resources import InvalidQuantity, Resources, memory_bytes

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object as the API returns it (a pod or a node)."""

UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
"""UNSCHEDULABLE_TAINT_KEY is the taint a toleration must match for a pod to go to a cordoned node."""

FILTERED_TAINT_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
"""FILTERED_TAINT_EFFECTS are the effects that keep pods off a node; PreferNoSchedule only scores."""

NodeCheckFailure: TypeAlias = (
    NodeNameMismatch | NodeUnschedulable | UntoleratedTaint | NodeSelectorMismatch | NodeAffinityMismatch
)




def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _name(node: Json) -> str:
    return str(value_at(node, "metadata", "name") or "")


def _labels(node: Json) -> Mapping[str, Any]:
    labels = value_at(node, "metadata", "labels")
    return labels if isinstance(labels, Mapping) else {}


# --- spec.nodeName -----------------------------------------------------------


def node_name_mismatch(pod: Json, node: Json) -> NodeNameMismatch | None:
    """node_name_mismatch rejects every node but the one a pod's ``spec.nodeName`` names.

    Example: a pod with ``spec.nodeName: n2`` checked against node n1 gives
    ``NodeNameMismatch(requested="n2", node="n1")``; without nodeName any node passes.
    """
    requested = value_at(pod, "spec", "nodeName")
    if not requested or requested == _name(node):
        return None
    return NodeNameMismatch(requested=str(requested), node=_name(node))


# --- tolerations and taints --------------------------------------------------


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """tolerates says whether one toleration matches one taint, with the API's matching rules.

    * an empty toleration effect matches every effect, else the effects must be equal;
    * an empty key matches every key (the API only allows it with ``Exists``);
    * operator ``Exists`` ignores the value; ``Equal`` (the default) needs equal values.

    Example: ``tolerates({"operator": "Exists"}, {"key": "gpu", "effect": "NoSchedule"})`` is
    True; ``tolerates({"key": "gpu", "value": "a"}, {"key": "gpu", "value": "b", "effect": "NoSchedule"})``
    is False.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def _tolerations(pod: Json) -> list[Mapping[str, Any]]:
    return [t for t in _list(value_at(pod, "spec", "tolerations")) if isinstance(t, Mapping)]


def node_unschedulable(pod: Json, node: Json) -> NodeUnschedulable | None:
    """node_unschedulable rejects a cordoned node unless the pod tolerates the cordon.

    A node with ``spec.unschedulable: true`` (``kubectl cordon``) is rejected
    unless a toleration matches the taint
    ``node.kubernetes.io/unschedulable:NoSchedule``, whether or not the node
    lists that taint yet.

    Example: a cordoned node rejects a pod without tolerations
    (``NodeUnschedulable()``) and admits one tolerating
    ``{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}``.
    """
    if value_at(node, "spec", "unschedulable") is not True:
        return None
    cordon = {"key": UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"}
    if any(tolerates(t, cordon) for t in _tolerations(pod)):
        return None
    return NodeUnschedulable()


def untolerated_taint(pod: Json, node: Json) -> UntoleratedTaint | None:
    """untolerated_taint returns the first NoSchedule/NoExecute taint no toleration of the pod matches.

    PreferNoSchedule taints never reject (they only affect scoring).

    Example: node taint ``dedicated=ci:NoSchedule`` and a pod tolerating
    ``{"key": "dedicated", "operator": "Equal", "value": "ci"}`` passes; a pod
    without tolerations gets ``UntoleratedTaint("dedicated", "ci", "NoSchedule")``.
    """
    tolerations = _tolerations(pod)
    for taint in _list(value_at(node, "spec", "taints")):
        if not isinstance(taint, Mapping) or taint.get("effect") not in FILTERED_TAINT_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return UntoleratedTaint(
                key=str(taint.get("key") or ""),
                value=str(taint.get("value") or ""),
                effect=str(taint.get("effect")),
            )
    return None


# --- nodeSelector and required node affinity ---------------------------------


def node_selector_mismatch(pod: Json, node: Json) -> NodeSelectorMismatch | None:
    """node_selector_mismatch returns the first ``spec.nodeSelector`` entry the node's labels lack.

    Every entry must equal the node's label of the same key (exact, case-sensitive).

    Example: ``nodeSelector: {pool: ci}`` on a node labelled ``pool: batch`` gives
    ``NodeSelectorMismatch("pool", "ci", "batch")``.
    """
    selector = value_at(pod, "spec", "nodeSelector")
    if not isinstance(selector, Mapping):
        return None
    labels = _labels(node)
    for key in sorted(selector):
        wanted = str(selector[key])
        actual = labels.get(key)
        if actual is None or str(actual) != wanted:
            return NodeSelectorMismatch(
                key=str(key), wanted=wanted, actual=None if actual is None else str(actual)
            )
    return None


_INT64 = re.compile(r"[+-]?[0-9]+")


def _as_int(value: str | None) -> int | None:
    """A label or expression value as a base-10 int64 for Gt/Lt (Go's ParseInt rules), else None."""
    if value is None or not _INT64.fullmatch(value):
        return None
    number = int(value)
    return number if -(2**63) <= number < 2**63 else None


def _label_requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """One matchExpressions entry against the node's labels; entries the API would reject match nothing.

    In and NotIn need at least one value, Exists and DoesNotExist none, Gt and
    Lt exactly one integer; a label that is not an integer fails Gt and Lt.
    """
    key = requirement.get("key")
    operator = requirement.get("operator")
    values = [str(v) for v in _list(requirement.get("values"))]
    if not isinstance(key, str) or not key:
        return False
    present = key in labels
    value = str(labels[key]) if present else None
    if operator == "In":
        return present and value in values
    if operator == "NotIn":
        return bool(values) and (not present or value not in values)
    if operator == "Exists":
        return present and not values
    if operator == "DoesNotExist":
        return not present and not values
    if operator in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, bound = _as_int(value), _as_int(values[0])
        if have is None or bound is None:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def _field_requirement_matches(requirement: Mapping[str, Any], node_name: str) -> bool:
    """One matchFields entry: only metadata.name with In or NotIn and exactly one value, as the API allows."""
    values = [str(v) for v in _list(requirement.get("values"))]
    if requirement.get("key") != "metadata.name" or len(values) != 1:
        return False
    operator = requirement.get("operator")
    if operator == "In":
        return node_name == values[0]
    if operator == "NotIn":
        return node_name != values[0]
    return False


def node_selector_term_matches(term: Mapping[str, Any], node: Json) -> bool:
    """node_selector_term_matches ANDs one term's matchExpressions and matchFields.

    A term with neither matches no node (the API's rule for an empty term).

    Example: ``{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["ci"]}],
    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}``
    matches only node n1, and only while it is labelled ``pool=ci``.
    """
    expressions = [e for e in _list(term.get("matchExpressions")) if isinstance(e, Mapping)]
    fields = [f for f in _list(term.get("matchFields")) if isinstance(f, Mapping)]
    if not expressions and not fields:
        return False
    labels = _labels(node)
    name = _name(node)
    return all(_label_requirement_matches(e, labels) for e in expressions) and all(
        _field_requirement_matches(f, name) for f in fields
    )


def _selector_terms(selector: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in _list(selector.get("nodeSelectorTerms")) if isinstance(t, Mapping)]


def node_selector_matches(selector: Mapping[str, Any], node: Json) -> bool:
    """node_selector_matches ORs a NodeSelector's ``nodeSelectorTerms``: the node passes when any term matches.

    The one NodeSelector matcher of the reference: a pod's required node
    affinity and a PersistentVolume's ``spec.nodeAffinity.required`` are both
    NodeSelectors. A selector with no terms matches no node.

    Example: ``{"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname",
    "operator": "In", "values": ["n1"]}]}]}`` matches the node labelled ``kubernetes.io/hostname=n1``
    and no other.
    """
    return any(node_selector_term_matches(term, node) for term in _selector_terms(selector))


def node_affinity_mismatch(pod: Json, node: Json) -> NodeAffinityMismatch | None:
    """node_affinity_mismatch checks ``requiredDuringSchedulingIgnoredDuringExecution``.

    The nodeSelectorTerms are ORed: the node passes when any term matches. A
    pod without required node affinity passes everywhere; one whose required
    affinity lists no terms matches no node. Preferred affinity only scores.

    Example: terms ``[{pool In [ci]}, {metadata.name In [n9]}]`` admit every
    node labelled ``pool=ci`` plus node n9; any other node gets
    ``NodeAffinityMismatch(terms=2)``.
    """
    required = value_at(pod, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, Mapping):
        return None
    if node_selector_matches(required, node):
        return None
    return NodeAffinityMismatch(terms=len(_selector_terms(required)))


# --- the node's room ----------------------------------------------------------


def node_allocatable(node: Json) -> Resources:
    """node_allocatable reads ``status.allocatable``, every counted resource: the room a node offers its pods.

    Never ``status.capacity``: a kubelet reports capacity before it keeps back
    system-reserved, kube-reserved and the eviction threshold, and what is left,
    allocatable, is all kube-scheduler's NodeResourcesFit lets pods use.
    A resource absent has 0 room, as kube-scheduler reads a node that does not
    advertise it, so such a node admits no pod that asks for it. An
    unparsable allocatable (no API server stores one) means no room at all.

    Example: a node with capacity ``cpu: 5000m`` and allocatable ``cpu: 4800m,
    memory: 8Gi, nvidia.com/gpu: 2`` gives
    ``Resources(cpu=4800, memory=8589934592, other=(("nvidia.com/gpu", 2),))``.
    """
    allocatable = value_at(node, "status", "allocatable")
    try:
        return Resources.from_mapping(allocatable if isinstance(allocatable, Mapping) else None)
    except InvalidQuantity:
        return Resources()


# --- pod count ---------------------------------------------------------------


def allocatable_pods(node: Json) -> int:
    """allocatable_pods reads ``status.allocatable.pods``: how many pods the node accepts.

    Absent or unparsable means 0, as kube-scheduler reads it, so such a node
    admits no pod (a real kubelet always reports it; KWOK nodes must too).

    Example: ``allocatable_pods({"status": {"allocatable": {"pods": "110"}}}) == 110``.
    """
    value = value_at(node, "status", "allocatable", "pods")
    if value is None:
        return 0
    try:
        # A pod count is a plain integer quantity ("110", "1k"); memory_bytes
        # parses any integer quantity exactly, rounding fractions up.
        return memory_bytes(value)
    except InvalidQuantity:
        return 0


def too_many_pods(node: Json, pods_on_node: int) -> TooManyPods | None:
    """too_many_pods rejects a node already running ``status.allocatable.pods`` pods.

    ``pods_on_node`` counts the non-terminal pods bound to the node, not
    including the pod being placed. ``headroom.fit`` applies the same limit
    from ``NodeView.max_pods``; call one of them, not both.

    Example: allocatable pods "110" with 110 pods bound gives
    ``TooManyPods(allowed=110, bound=110)``; with 109 it passes.
    """
    allowed = allocatable_pods(node)
    if pods_on_node + 1 > allowed:
        return TooManyPods(allowed=allowed, bound=pods_on_node)
    return None


# --- all of them ---------------------------------------------------------------

NODE_CHECKS: Sequence[Callable[[Json, Json], NodeCheckFailure | None]] = (
    node_name_mismatch,
    node_unschedulable,
    untolerated_taint,
    node_selector_mismatch,
    node_affinity_mismatch,
)
"""NODE_CHECKS are the pod-vs-node checks that need nothing but the two objects, in report order."""


def node_check_failures(pod: Json, node: Json) -> list[NodeCheckFailure]:
    """node_check_failures runs every check in NODE_CHECKS and returns the reasons (empty: node passes).

    All checks run, so the FailedScheduling message names every reason a node
    was rejected for, not only the first.

    Example: a cordoned node that also lacks the ``pool=ci`` label wanted by the
    pod's nodeSelector gives ``[NodeUnschedulable(), NodeSelectorMismatch("pool", "ci", None)]``.
    """
    failures: list[NodeCheckFailure] = []
    for check in NODE_CHECKS:
        reason = check(pod, node)
        if reason is not None:
            failures.append(reason)
    return failures
