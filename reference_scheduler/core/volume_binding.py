"""volume_binding: which nodes a pod's volumes admit, and which of its claims its bind must provision.

The rules are docs' volume spec V1 (a claim must exist; a Bound claim's volume
must admit the node; an unbound WaitForFirstConsumer claim goes to the node it
selected, else where its class's allowedTopologies allow; an unbound immediate
claim makes the pod wait), V2 (which claims the bind annotates) and V3 (a group's
first pod is held to the claims of every task of its group). They are
kube-scheduler's VolumeBinding plugin without the matching of static volumes to
unbound claims, over the raw JSON of pods, PersistentVolumeClaims,
PersistentVolumes and StorageClasses, as the informers hold them.

As in kube-scheduler, the work is split so that a node costs little: an
attempt classifies its claims once (``volume_constraints``, its PreFilter),
then ``volume_failures`` checks each node against that (its Filter). A pod
that mounts no claim pays one scan of ``spec.volumes`` and nothing per node.

Example: a pod mounting ``cache`` (Bound to a volume pinned by
``kubernetes.io/hostname In [n1]``) and ``src`` (unbound, class ``standard``,
WaitForFirstConsumer, no selected node): every node but n1 gets
``VolumeNodeAffinityConflict("cache", <pv>)``; on n1 the pod binds once ``src``
is annotated ``volume.kubernetes.io/selected-node: n1`` and Bound
(``claims_to_provision`` is ``("src",)``).
"""

from __future__ import annotations

# collections.abc's Mapping: isinstance() against typing's alias is slow (see core/node_checks.py).
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, TypeAlias

from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.node_checks import node_selector_matches, node_selector_term_matches
from reference_scheduler.core.reasons import (
    AllowedTopologyMismatch,
    BoundVolumeNotFound,
    Reason,
    SelectedNodeMismatch,
    UnboundImmediateClaims,
    VolumeClaimBeingDeleted,
    VolumeClaimNotFound,
    VolumeNodeAffinityConflict,
)

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object: a pod, a claim, a volume, a storage class, a node or a PipelineRun."""

SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
"""SELECTED_NODE_ANNOTATION is kube's AnnSelectedNode: the node a delayed claim is to be provisioned on."""

LEGACY_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
"""LEGACY_CLASS_ANNOTATION names a claim's class before ``spec.storageClassName`` existed; it still wins, as in kube."""

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
"""WAIT_FOR_FIRST_CONSUMER is the ``volumeBindingMode`` that leaves the node to the scheduler (a *delayed* claim)."""

BOUND_PHASE = "Bound"


@dataclass(frozen=True)
class VolumeLookups:
    """VolumeLookups is where the claims, volumes and classes are read from: the informers' caches, or dicts in tests.

    Example: ``VolumeLookups(lambda ns, name: claims.get((ns, name)), volumes.get, classes.get)``.
    """

    get_claim: Callable[[str, str], Json | None]
    get_volume: Callable[[str], Json | None]
    get_storage_class: Callable[[str], Json | None]


NO_VOLUMES = VolumeLookups(lambda namespace, name: None, lambda name: None, lambda name: None)
"""NO_VOLUMES finds nothing: every claim is "not found", so a pod that mounts one is never bound blind."""




def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- whose claims ------------------------------------------------------------


def pod_claim_names(pod: Json) -> tuple[str, ...]:
    """pod_claim_names is every claim the pod mounts, in volume order, each once.

    A ``persistentVolumeClaim`` volume names its claim (Tekton mounts a workspace
    bound to a claim or a volumeClaimTemplate this way); an ``ephemeral``
    volume's claim is named ``<pod name>-<volume name>``, as the ephemeral
    volume controller names it.

    Example: a pod ``p`` with volumes ``ws`` (persistentVolumeClaim ``pvc-1a2b``),
    ``scratch`` (ephemeral) and ``tools`` (emptyDir) gives ``("pvc-1a2b", "p-scratch")``.
    """
    volumes = value_at(pod, "spec", "volumes")
    if not volumes or not isinstance(volumes, list):
        return ()
    names: dict[str, None] = {}
    for volume in volumes:
        if not isinstance(volume, Mapping):
            continue
        claim = volume.get("persistentVolumeClaim")
        if isinstance(claim, Mapping):
            name = _text(claim.get("claimName"))
            if name:
                names[name] = None
        elif volume.get("ephemeral") is not None and volume.get("name"):
            names[f"{_text(value_at(pod, 'metadata', 'name'))}-{_text(volume.get('name'))}"] = None
    return tuple(names)


def workspace_claim_names(pipeline_run: Json | None, workspaces: Collection[str]) -> tuple[str, ...]:
    """workspace_claim_names is the ``persistentVolumeClaim.claimName`` of each of the run's bindings among ``workspaces``.

    Only bindings to an existing claim name one; a volumeClaimTemplate's claim
    is made by Tekton per run and mounted by the group's first pod already.

    Example: a run binding ``cache`` to claim ``team-cache`` and ``src`` to a
    volumeClaimTemplate gives ``("team-cache",)`` for workspaces ``{"cache", "src"}``.
    """
    bindings = value_at(pipeline_run, "spec", "workspaces")
    if not workspaces or not isinstance(bindings, list):
        return ()
    names: dict[str, None] = {}
    for binding in bindings:
        if not isinstance(binding, Mapping) or binding.get("name") not in workspaces:
            continue
        name = _text(value_at(binding, "persistentVolumeClaim", "claimName"))
        if name:
            names[name] = None
    return tuple(names)


def group_claim_names(pod: Json, pipeline_run: Json | None, workspaces: Collection[str]) -> tuple[str, ...]:
    """group_claim_names is the claims a group's first pod is held to (V3): its own, then its group's workspace claims.

    ``workspaces`` are the group's workspaces (the record's ``spec.groups[].workspaces``).
    The claims of tasks whose pods do not exist yet are in it: a later task's
    claim is either a workspace binding of the run, or the template claim the
    first pod mounts too.

    Example: fetch's pod mounts ``pvc-1a2b`` (workspace ``source``); the run binds
    ``cache`` to claim ``team-cache``; the group has workspaces ``{cache, source}``:
    ``("pvc-1a2b", "team-cache")``.
    """
    own = pod_claim_names(pod)
    shared = workspace_claim_names(pipeline_run, workspaces)
    return tuple(dict.fromkeys((*own, *shared)))


# --- one claim ---------------------------------------------------------------


def is_bound(claim: Json) -> bool:
    """is_bound says the claim names its volume and its phase is Bound.

    Example: ``{"spec": {"volumeName": "pv-1"}, "status": {"phase": "Bound"}}`` is bound;
    a claim with ``volumeName`` set but phase Pending (pre-bound, not yet bound) is not.
    """
    return bool(value_at(claim, "spec", "volumeName")) and value_at(claim, "status", "phase") == BOUND_PHASE


def storage_class_name(claim: Json) -> str:
    """storage_class_name is the class the claim asks for: the legacy annotation, else ``spec.storageClassName``; "" for none.

    Example: ``{"spec": {"storageClassName": "standard"}}`` gives ``"standard"``.
    """
    legacy = value_at(claim, "metadata", "annotations", LEGACY_CLASS_ANNOTATION)
    if isinstance(legacy, str):
        return legacy
    return _text(value_at(claim, "spec", "storageClassName"))


def selected_node(claim: Json) -> str | None:
    """selected_node is the node the claim's ``volume.kubernetes.io/selected-node`` annotation names, if any.

    Example: a claim annotated ``volume.kubernetes.io/selected-node: n1`` gives ``"n1"``.
    """
    found = value_at(claim, "metadata", "annotations", SELECTED_NODE_ANNOTATION)
    return found if isinstance(found, str) and found else None


def is_being_deleted(claim: Json) -> bool:
    """is_being_deleted says the claim has a ``metadata.deletionTimestamp`` (it waits for its finalizers)."""
    return bool(value_at(claim, "metadata", "deletionTimestamp"))


def delayed_class(claim: Json, lookups: VolumeLookups) -> Json | None:
    """delayed_class is the claim's StorageClass when it binds WaitForFirstConsumer, else None.

    A claim with no class, or naming a class that does not exist, is bound by
    the PV controller alone: Immediate.

    Example: a claim of class ``standard`` whose object says
    ``volumeBindingMode: WaitForFirstConsumer`` gives that object; class ``fast``
    with ``Immediate`` (or no mode) gives None.
    """
    name = storage_class_name(claim)
    found = lookups.get_storage_class(name) if name else None
    return found if found is not None and found.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER else None


class ClaimKind(Enum):
    """ClaimKind is what the volume rules make of one claim name."""

    MISSING = "missing"
    DELETING = "deleting"
    BOUND = "bound"
    IMMEDIATE = "immediate"  # unbound, and the PV controller binds it (the pod waits)
    DELAYED = "delayed"  # unbound WaitForFirstConsumer: provisioned where the scheduler says


def classify(claim: Json | None, lookups: VolumeLookups) -> ClaimKind:
    """classify sorts a claim (None: not found) into the ClaimKind the rules treat alike.

    Example: a claim of a WaitForFirstConsumer class, Pending, is DELAYED; the same
    claim once Bound is BOUND; one with a deletionTimestamp is DELETING, Bound or not.
    """
    if claim is None:
        return ClaimKind.MISSING
    if is_being_deleted(claim):
        return ClaimKind.DELETING
    if is_bound(claim):
        return ClaimKind.BOUND
    return ClaimKind.DELAYED if delayed_class(claim, lookups) is not None else ClaimKind.IMMEDIATE


# --- nodes a volume admits -----------------------------------------------------


def pv_admits_node(volume: Json, node: Json) -> bool:
    """pv_admits_node says the volume's ``spec.nodeAffinity.required`` admits the node; no affinity admits every node.

    The terms are ORed; each term's matchExpressions and matchFields are ANDed
    (core.node_checks.node_selector_matches), against the node's labels alone, as
    kube-scheduler and the kubelet match it (CheckNodeAffinity builds a node of labels
    only): a matchFields entry on ``metadata.name`` meets an empty name. The kubelet
    mounts a volume only on a node this admits.

    Example: a local volume with ``kubernetes.io/hostname In [n1]`` admits the node
    labelled ``kubernetes.io/hostname=n1`` and no other.
    """
    required = value_at(volume, "spec", "nodeAffinity", "required")
    if not isinstance(required, Mapping):
        return True
    return node_selector_matches(required, {"metadata": {"labels": value_at(node, "metadata", "labels") or {}}})


def allowed_topologies_admit(storage_class: Json, node: Json) -> bool:
    """allowed_topologies_admit says the class's ``allowedTopologies`` admit the node; none admit every node.

    Terms are ORed; a term's ``matchLabelExpressions`` (key In values) are ANDed;
    a term with no expressions admits nothing (kube's MatchTopologySelectorTerms).

    Example: ``allowedTopologies: [{matchLabelExpressions: [{key: zone, values: [a, b]}]}]``
    admits nodes labelled ``zone=a`` or ``zone=b``.
    """
    terms = storage_class.get("allowedTopologies")
    if not isinstance(terms, list) or not terms:
        return True
    for term in terms:
        expressions = term.get("matchLabelExpressions") if isinstance(term, Mapping) else None
        if not isinstance(expressions, list) or not expressions:
            continue
        as_selector = {
            "matchExpressions": [
                {"key": e.get("key"), "operator": "In", "values": e.get("values") or []} for e in expressions if isinstance(e, Mapping)
            ]
        }
        if node_selector_term_matches(as_selector, node):
            return True
    return False


# --- one attempt ---------------------------------------------------------------


@dataclass(frozen=True)
class PinnedVolume:
    """PinnedVolume is a claim's volume whose node affinity every node is checked against (the claim Bound, or pre-bound)."""

    claim: str
    volume_name: str
    volume: Json


@dataclass(frozen=True)
class SelectedNode:
    """SelectedNode is an unbound delayed claim already annotated with the node it is provisioned on."""

    claim: str
    node: str


@dataclass(frozen=True)
class TopologyLimit:
    """TopologyLimit is an unbound delayed claim whose class limits where it may be provisioned."""

    claim: str
    storage_class_name: str
    storage_class: Json


@dataclass(frozen=True, eq=False)
class VolumeConstraints:
    """VolumeConstraints is what one attempt's claims ask of a node, computed once per attempt.

    ``unresolvable`` are failures no node can cure (a claim missing or being
    deleted, an unbound immediate claim, a Bound claim's volume missing): with
    any, every node fails for them alone. The rest are checked per node by
    ``volume_failures``.

    Example: claims ``cache`` (Bound to pv-1) and ``src`` (delayed, selected n2) give
    ``pinned=(PinnedVolume("cache", "pv-1", ...),)``, ``selected=(SelectedNode("src", "n2"),)``.
    """

    claims: tuple[str, ...]
    unresolvable: tuple[Reason, ...] = ()
    pinned: tuple[PinnedVolume, ...] = ()
    selected: tuple[SelectedNode, ...] = ()
    topologies: tuple[TopologyLimit, ...] = ()


def volume_constraints(namespace: str, claim_names: Collection[str], lookups: VolumeLookups) -> VolumeConstraints:
    """volume_constraints classifies each claim once, for ``volume_failures`` to check every node cheaply.

    Example: claims ``a`` (not found) and ``b`` (unbound, class ``fast``, Immediate) give
    ``unresolvable=(VolumeClaimNotFound("a"), UnboundImmediateClaims(("b",)))``;
    a Bound ``c`` gives ``pinned=(PinnedVolume("c", <its volume>, ...),)``.
    """
    unresolvable: list[Reason] = []
    immediate: list[str] = []
    pinned: list[PinnedVolume] = []
    selected: list[SelectedNode] = []
    topologies: list[TopologyLimit] = []
    for name in claim_names:
        claim = lookups.get_claim(namespace, name)
        kind = classify(claim, lookups)
        if kind is ClaimKind.MISSING:
            unresolvable.append(VolumeClaimNotFound(name))
        elif kind is ClaimKind.DELETING:
            unresolvable.append(VolumeClaimBeingDeleted(name))
        elif kind is ClaimKind.IMMEDIATE:
            immediate.append(name)
        else:
            assert claim is not None
            volume_name = _text(value_at(claim, "spec", "volumeName"))
            volume = lookups.get_volume(volume_name) if volume_name else None
            if kind is ClaimKind.BOUND and volume is None:
                unresolvable.append(BoundVolumeNotFound(name, volume_name))
                continue
            if volume is not None:  # Bound, or a delayed claim pre-bound to a volume that exists: that volume's node it is
                pinned.append(PinnedVolume(name, volume_name, volume))
            if kind is ClaimKind.DELAYED:
                node = selected_node(claim)
                if node is not None:
                    selected.append(SelectedNode(name, node))
                else:
                    storage_class = delayed_class(claim, lookups)
                    if storage_class is not None and storage_class.get("allowedTopologies"):
                        topologies.append(TopologyLimit(name, storage_class_name(claim), storage_class))
    if immediate:
        unresolvable.append(UnboundImmediateClaims(tuple(immediate)))
    return VolumeConstraints(tuple(claim_names), tuple(unresolvable), tuple(pinned), tuple(selected), tuple(topologies))


def volume_failures(constraints: VolumeConstraints, node: Json) -> tuple[Reason, ...]:
    """volume_failures is why the node cannot take the attempt's volumes (empty: it can).

    Every claim is checked, so the message names each conflict: two volumes
    pinned to two nodes fail every node, each for the volume pinned elsewhere.

    Example: with ``cache`` Bound to a volume pinned to n1 and ``src`` selected
    for n2, node n1 gives ``(SelectedNodeMismatch("src", "n2"),)`` and n2 gives
    ``(VolumeNodeAffinityConflict("cache", <pv>),)``: no node takes the pod.
    """
    if constraints.unresolvable:
        return constraints.unresolvable
    failures: list[Reason] = []
    for pinned in constraints.pinned:
        if not pv_admits_node(pinned.volume, node):
            failures.append(VolumeNodeAffinityConflict(pinned.claim, pinned.volume_name))
    if constraints.selected:
        name = _text(value_at(node, "metadata", "name"))
        for selection in constraints.selected:
            if selection.node != name:
                failures.append(SelectedNodeMismatch(selection.claim, selection.node))
    for limit in constraints.topologies:
        if not allowed_topologies_admit(limit.storage_class, node):
            failures.append(AllowedTopologyMismatch(limit.claim, limit.storage_class_name))
    return tuple(failures)


def passes_every_node(constraints: VolumeConstraints) -> bool:
    """passes_every_node is True when volume_failures has nothing to say of any node, so an attempt need not ask it per node.

    Nothing unresolvable, no claim selected for a node, no class limiting topologies, and no
    pinned volume with a required node affinity (whatever nodes that affinity admits): a pod
    mounting Bound claims of volumes pinned nowhere, the usual case.

    Example: a Bound claim whose volume has no ``spec.nodeAffinity`` gives True; the same
    volume with ``nodeAffinity.required`` admitting every node still gives False.
    """
    if constraints.unresolvable or constraints.selected or constraints.topologies:
        return False
    return all(not isinstance(value_at(pinned.volume, "spec", "nodeAffinity", "required"), Mapping) for pinned in constraints.pinned)


def claims_to_provision(namespace: str, claim_names: Collection[str], lookups: VolumeLookups) -> tuple[str, ...]:
    """claims_to_provision is the unbound WaitForFirstConsumer claims among a pod's own: what its bind annotates (V2).

    Pass the pod's own claims (``pod_claim_names``), never its group's: a later
    task's claim is provisioned by that task's bind, on the group's node.

    Example: a pod mounting ``src`` (delayed, Pending) and ``cache`` (Bound)
    gives ``("src",)``; once ``src`` is Bound, ``()``.
    """
    return tuple(name for name in claim_names if classify(lookups.get_claim(namespace, name), lookups) is ClaimKind.DELAYED)
