"""InterPodAffinity: required pod affinity and anti-affinity, as kube-scheduler v1.37's filter decides them.

A pod's ``spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution``
asks for a node whose *topology domain* (the nodes sharing its value of the
term's ``topologyKey``) already runs a pod the term selects;
``podAntiAffinity`` asks for a domain that runs none. And anti-affinity is
symmetric: a placed pod's required anti-affinity keeps every pod it selects out
of its own domain. Only the required terms filter; the preferred ones only score.

kube-scheduler (``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``,
with ``InterPodAffinityHostnameFastPath`` off, its v1.37 default) counts once per
attempt, in PreFilter, per (topologyKey, value) pair:

* the placed pods matching **all** of the pod's affinity terms (each such pod
  adds 1 to every term's pair on its node);
* the placed pods matching **each** of the pod's anti-affinity terms;
* the placed pods whose own anti-affinity terms match the pod;

and Filter then reads the node's labels against those counts (``inter_pod_affinity_failure``).
Only a pair the node carries a label for is ever counted.

Which namespaces a term means: its ``namespaces``, plus for the pod's own terms
every namespace its ``namespaceSelector`` selects (an empty selector ``{}``
selects all); with neither, the namespace of the pod that owns the term. A placed
pod's anti-affinity term is matched against the pod's namespace's labels.
``matchLabelKeys`` and ``mismatchLabelKeys`` are not read here: the API server
merges them into the term's ``labelSelector`` when it creates the pod
(``mutatePodAffinity`` in ``pkg/registry/core/pod/strategy.go``; the
MatchLabelKeysInPodAffinity gate is GA and locked on), so a placed pod's
selector already holds them, and kube-scheduler does not apply them again.

**The first pod of a self-affine set.** A pod whose affinity selects pods like
itself could never start the set: kube-scheduler lets it pass its affinity on a
node that has every topologyKey when no placed pod in any counted domain matches
all its terms and it matches them itself.

Worked example: nodes n1 and n2 in zone ``a``, n3 in zone ``b``; pod ``db`` (labels
``app=db``) runs on n1. A pod with affinity ``app=db`` on ``topology.kubernetes.io/zone``
passes n1 and n2 and fails n3 ("node(s) didn't match pod affinity rules"); with
anti-affinity ``app=db`` on zone instead, it passes only n3 ("node(s) didn't match pod
anti-affinity rules" on n1 and n2). If ``db`` itself has anti-affinity ``app=web`` on
``kubernetes.io/hostname``, a pod labelled ``app=web`` fails n1 alone ("node(s) didn't
satisfy existing pods anti-affinity rules").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.label_selectors import NOTHING, LabelSelector, labels_of, parse_label_selector
from reference_scheduler.core.reasons import (
    ExistingPodsAntiAffinityRulesNotMatch,
    PodAffinityRulesNotMatch,
    PodAntiAffinityRulesNotMatch,
)

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object (a pod, a node)."""

TopologyPair: TypeAlias = tuple[str, str]
"""TopologyPair is a topology domain: (topologyKey, the nodes' value of it), e.g. ("topology.kubernetes.io/zone", "a")."""

InterPodAffinityFailure: TypeAlias = PodAffinityRulesNotMatch | PodAntiAffinityRulesNotMatch | ExistingPodsAntiAffinityRulesNotMatch
"""InterPodAffinityFailure is a reason ``inter_pod_affinity_failure`` can return."""

POD_AFFINITY = "podAffinity"
POD_ANTI_AFFINITY = "podAntiAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _namespace(pod: Json) -> str:
    return str(value_at(pod, "metadata", "namespace") or "")


@dataclass(frozen=True)
class AffinityTerm:
    """AffinityTerm is one parsed required pod (anti-)affinity term, kube-scheduler's ``fwk.AffinityTerm``.

    A pod is selected when it is in ``namespaces`` or its namespace's labels
    match ``namespace_selector``, and its labels match ``selector``. A null
    ``labelSelector`` selects no pod; a null ``namespaceSelector`` no namespace.

    Example: a term of a pod in ``ci`` with ``labelSelector: {matchLabels: {app: db}}``
    and ``topologyKey: kubernetes.io/hostname`` is
    ``AffinityTerm(frozenset({"ci"}), NOTHING, <app In [db]>, "kubernetes.io/hostname")``:
    it selects the ``app=db`` pods of ``ci``.
    """

    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str

    def matches(self, pod: Json, namespace_labels: Mapping[str, Any] | None = None) -> bool:
        """matches(pod, labels of the pod's namespace) is kube-scheduler's ``AffinityTerm.Matches``."""
        if _namespace(pod) in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(labels_of(pod))
        return False


def _parse_term(owner: Json, term: Any) -> AffinityTerm | None:
    if not isinstance(term, Mapping):
        return None
    listed = term.get("namespaces")
    namespaces = [str(n) for n in listed] if isinstance(listed, list) else []
    raw_namespace_selector = term.get("namespaceSelector")
    if not namespaces and raw_namespace_selector is None:
        namespaces = [_namespace(owner)]
    return AffinityTerm(
        frozenset(namespaces),
        parse_label_selector(raw_namespace_selector),
        parse_label_selector(term.get("labelSelector")),
        str(term.get("topologyKey") or ""),
    )


def _required_terms(pod: Json, kind: str) -> tuple[AffinityTerm, ...]:
    raw = value_at(pod, "spec", "affinity", kind, _REQUIRED)
    if not isinstance(raw, list):
        return ()
    return tuple(term for term in (_parse_term(pod, t) for t in raw) if term is not None)


def required_affinity_terms(pod: Json) -> tuple[AffinityTerm, ...]:
    """required_affinity_terms parses ``podAffinity.requiredDuringSchedulingIgnoredDuringExecution``.

    Example: a pod with no ``spec.affinity`` gives ``()``; one term with no
    ``namespaces`` and no ``namespaceSelector`` means the pod's own namespace.
    """
    return _required_terms(pod, POD_AFFINITY)


def required_anti_affinity_terms(pod: Json) -> tuple[AffinityTerm, ...]:
    """required_anti_affinity_terms parses ``podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution``.

    Example: ``required_anti_affinity_terms({"spec": {}}) == ()``.
    """
    return _required_terms(pod, POD_ANTI_AFFINITY)


def has_required_anti_affinity(pod: Json) -> bool:
    """has_required_anti_affinity says whether a pod has required anti-affinity terms, which other pods must respect.

    kube-scheduler keeps the nodes with such pods in a list of their own
    (``HavePodsWithRequiredAntiAffinityList``), so that a pod without terms of
    its own costs a look at those pods only; ClusterView keeps the same index.

    Example: a pod with one ``podAntiAffinity`` required term is True; one with
    only preferred anti-affinity is False.
    """
    raw = value_at(pod, "spec", "affinity", POD_ANTI_AFFINITY, _REQUIRED)
    return isinstance(raw, list) and bool(raw)


def with_selected_namespaces(term: AffinityTerm, namespace_labels: Mapping[str, Mapping[str, Any]]) -> AffinityTerm:
    """with_selected_namespaces resolves the namespaceSelector of one of the *incoming* pod's terms into names.

    kube-scheduler's ``mergeAffinityTermNamespacesIfNotEmpty``: every namespace
    whose labels the selector matches joins ``namespaces`` and the selector
    becomes NOTHING, so matching a placed pod needs no lookup of its namespace.
    An empty selector ``{}`` (every namespace) is left as it is.

    Example: a term of a pod in ``ci`` with ``namespaces: [tools]`` and
    ``namespaceSelector: {matchLabels: {team: a}}``, with namespaces ``a1``
    (``team=a``) and ``b1`` (``team=b``), gets ``namespaces == {"tools", "a1"}``.
    """
    if term.namespace_selector.empty or term.namespace_selector.nothing:
        return term
    selected = {name for name, labels in namespace_labels.items() if term.namespace_selector.matches(labels)}
    return replace(term, namespaces=term.namespaces | selected, namespace_selector=NOTHING)


def matches_all(terms: Sequence[AffinityTerm], pod: Json) -> bool:
    """matches_all is kube-scheduler's ``podMatchesAllAffinityTerms``: the pod matches every term, and there is one.

    Example: ``matches_all((), pod)`` is False, so a pod with no affinity terms is never its own match.
    """
    return bool(terms) and all(term.matches(pod) for term in terms)


def matches_any(terms: Iterable[AffinityTerm], pod: Json) -> bool:
    """matches_any is kube-scheduler's ``podMatchesAnyAffinityTerms``: the pod matches at least one term (anti-affinity).

    Example: ``matches_any((), pod)`` is False.
    """
    return any(term.matches(pod) for term in terms)


@dataclass(frozen=True)
class InterPodAffinityState:
    """InterPodAffinityState is what PreFilter counts for one pod, read by Filter for every node.

    ``affinity_counts``: per domain, the placed pods matching all of the pod's
    affinity terms; ``anti_affinity_counts``: per domain, the placed pods
    matching one of its anti-affinity terms (once per term);
    ``existing_anti_affinity_counts``: per domain, the placed pods' anti-affinity
    terms that match the pod. ``matches_own_affinity`` is the self-affinity
    test (the pod matches all of its affinity terms).

    Example: for the module's worked example with affinity ``app=db`` on zone,
    ``affinity_counts == {("topology.kubernetes.io/zone", "a"): 1}`` and the
    other two counts are empty.
    """

    affinity_terms: tuple[AffinityTerm, ...]
    anti_affinity_terms: tuple[AffinityTerm, ...]
    affinity_counts: Mapping[TopologyPair, int]
    anti_affinity_counts: Mapping[TopologyPair, int]
    existing_anti_affinity_counts: Mapping[TopologyPair, int]
    matches_own_affinity: bool


def inter_pod_affinity_state(
    pod: Json,
    *,
    nodes: Mapping[str, Json],
    pods_by_node: Mapping[str, Sequence[Json]],
    anti_affinity_pods_by_node: Mapping[str, Sequence[Json]],
    namespace_labels: Mapping[str, Mapping[str, Any]],
) -> InterPodAffinityState | None:
    """inter_pod_affinity_state is the filter's PreFilter: the counts above, or None when there is nothing to check.

    ``nodes`` are the attempt's nodes by name (pods on a node not listed do not
    count); ``pods_by_node`` every placed pod per node, the pod itself not
    among them; ``anti_affinity_pods_by_node`` those of them with required
    anti-affinity; ``namespace_labels`` every namespace's labels by name.

    The placed pods are walked only when the pod has terms of its own; the
    symmetry check walks only the pods with required anti-affinity, as
    kube-scheduler does. None (kube-scheduler's Skip) when the pod has no
    terms and no placed pod's anti-affinity matches it: then no node can fail.

    Example: a plain pod in a cluster where no pod has anti-affinity gives None,
    after looking at no pod.
    """
    affinity = tuple(with_selected_namespaces(t, namespace_labels) for t in required_affinity_terms(pod))
    anti_affinity = tuple(with_selected_namespaces(t, namespace_labels) for t in required_anti_affinity_terms(pod))
    own_namespace_labels = namespace_labels.get(_namespace(pod))

    existing: Counter[TopologyPair] = Counter()
    for node_name, placed in anti_affinity_pods_by_node.items():
        node = nodes.get(node_name)
        if node is None:
            continue
        node_labels = labels_of(node)
        for other in placed:
            for term in required_anti_affinity_terms(other):
                value = node_labels.get(term.topology_key)
                if value is not None and term.matches(pod, own_namespace_labels):
                    existing[(term.topology_key, str(value))] += 1

    affinity_counts: Counter[TopologyPair] = Counter()
    anti_affinity_counts: Counter[TopologyPair] = Counter()
    if affinity or anti_affinity:
        for node_name, node in nodes.items():
            placed_here = pods_by_node.get(node_name)
            if not placed_here:
                continue
            node_labels = labels_of(node)
            for other in placed_here:
                if matches_all(affinity, other):
                    for term in affinity:
                        value = node_labels.get(term.topology_key)
                        if value is not None:
                            affinity_counts[(term.topology_key, str(value))] += 1
                for term in anti_affinity:
                    value = node_labels.get(term.topology_key)
                    if value is not None and term.matches(other):
                        anti_affinity_counts[(term.topology_key, str(value))] += 1

    if not existing and not affinity and not anti_affinity:
        return None
    return InterPodAffinityState(
        affinity_terms=affinity,
        anti_affinity_terms=anti_affinity,
        affinity_counts=dict(affinity_counts),
        anti_affinity_counts=dict(anti_affinity_counts),
        existing_anti_affinity_counts=dict(existing),
        matches_own_affinity=matches_all(affinity, pod),
    )


def inter_pod_affinity_failure(state: InterPodAffinityState, node: Json) -> InterPodAffinityFailure | None:
    """inter_pod_affinity_failure is the filter's Filter for one node: the first of its three rules the node breaks.

    1. Affinity: the node has every term's topologyKey, and each term's domain
       counts a pod matching all terms, or (the first pod of a self-affine set)
       no domain counts one and the pod matches its own terms.
    2. Anti-affinity: no term's domain on the node counts a pod it selects.
    3. Symmetry: no domain of the node counts a placed pod whose anti-affinity
       selects this pod.

    Example (the module's worked example, affinity ``app=db`` on zone): n3 in
    zone ``b`` gives ``PodAffinityRulesNotMatch(terms=1)``; n2 in zone ``a``
    passes (None); a node without a zone label gives
    ``PodAffinityRulesNotMatch(1, "topology.kubernetes.io/zone")``.
    """
    labels = labels_of(node)
    if state.affinity_terms:
        pods_exist = True
        for term in state.affinity_terms:
            value = labels.get(term.topology_key)
            if value is None:
                # Every topology label must be on the node, for the self-affine first pod too.
                return PodAffinityRulesNotMatch(len(state.affinity_terms), term.topology_key)
            if state.affinity_counts.get((term.topology_key, str(value)), 0) <= 0:
                pods_exist = False
        if not pods_exist and not (not state.affinity_counts and state.matches_own_affinity):
            return PodAffinityRulesNotMatch(len(state.affinity_terms))
    if state.anti_affinity_counts:
        for term in state.anti_affinity_terms:
            value = labels.get(term.topology_key)
            if value is not None and state.anti_affinity_counts.get((term.topology_key, str(value)), 0) > 0:
                return PodAntiAffinityRulesNotMatch(term.topology_key, str(value))
    for (key, value), count in sorted(state.existing_anti_affinity_counts.items()):
        if count > 0 and key in labels and str(labels[key]) == value:
            return ExistingPodsAntiAffinityRulesNotMatch(key, value)
    return None
