"""Queueing hints: can this cluster event make a pod that did not fit schedulable?

After a failed attempt the runtime parks the pod until an event might change
the verdict. Each hint here looks at one event and answers QUEUE (retry the
pod now) or SKIP (this event cannot help it), like kube-scheduler's
QueueingHintFn. A wrong SKIP strands a pod until the next periodic flush; a
wrong QUEUE only costs one scheduling attempt, so when in doubt they QUEUE.

What can free room or open a node for a pod:

* a pod bound to a node is deleted, becomes terminal, or lowers its requests;
* the waiting pod itself lowers its requests;
* a node is added that passes the pod's node checks, or a node is updated so
  that it now passes them or its allocatable grew;
* a reservation is released (or rolled back), moves to another node, or
  lowers its peak; any change to the waiting pod's own group's reservation.

What can give a pod parked for its PipelineRun's plan its group (docs/contract.md
section 2, "The first pod before the plan"):

* the PipelineRun appears, or gets its ``status.pipelineSpec``, or finishes
  without one (then the pod is scheduled as a plain pod);
* the PipelineRun's record appears (another pod of the run planned it);
* one of the run's ResolutionRequests is answered (a Task fetched through a resolver).

What can let a pod parked on its volumes (core/volume_binding.py) go somewhere:

* one of its claims (its own, or its group's) appears or changes what the
  volume rules read: Bound at last (an immediate claim the PV controller bound),
  a selected node set or taken off, a deletion;
* the volume of one of its claims appears or changes its claim, phase or node
  affinity;
* the StorageClass of one of its claims appears or changes its binding mode or
  allowed topologies.

What can let a pod rejected by the filters that read other pods pass (core/inter_pod_checks.py),
as those plugins' EventsToRegister in kube-scheduler v1.37 say:

* NodePorts: a placed pod that bound a colliding host port leaves its node
  (``node_ports_pod_deleted``); a node added (``node_added`` above);
* InterPodAffinity: a placed pod that matches the pod's affinity is placed or
  relabelled into it, one that matched its anti-affinity is relabelled out of it
  or leaves, one whose anti-affinity rejected the pod leaves
  (``inter_pod_affinity_pod_changed``); a node added or relabelled on a term's
  topologyKey (``inter_pod_affinity_node_changed``);
* PodTopologySpread: a placed pod of the pod's namespace that a constraint
  selects is placed or leaves, or a relabel changes whether it is selected
  (``topology_spread_pod_changed``); a node with every topologyKey added or
  deleted, or a node's topologyKey labels or taints changed
  (``topology_spread_node_changed``).

Their verdict on a node depends on pods elsewhere in its topology domain, so the
runtime applies them to a parked pod whatever node the event is about.

Worked example: pod B waits for 2000m on the seed node, where group A holds
3800m. A's reservation is released: ``reservation_changed(a, None,
pod_group=b) is QUEUE``. A's 200m pod then completes: ``pod_updated(running,
succeeded, waiting_uid="b-1") is QUEUE``. A node label change on a node B
already matched: ``node_updated(b_pod, old, new) is SKIP``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Mapping, TypeAlias

from reference_scheduler.core.headroom import ActiveReservation
from reference_scheduler.core.inter_pod_affinity import AffinityTerm, required_affinity_terms, required_anti_affinity_terms
from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.label_selectors import labels_of
from reference_scheduler.core.node_checks import allocatable_pods, node_check_failures
from reference_scheduler.core.node_ports import host_ports, port_conflicts
from reference_scheduler.core.plan_readiness import PlanReadiness, plan_readiness
from reference_scheduler.core.resources import InvalidQuantity, Resources
from reference_scheduler.core.topology_spread import hard_spread_constraints
from reference_scheduler.core.volume_binding import SELECTED_NODE_ANNOTATION, storage_class_name

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object (the waiting pod, a node, a claim, a volume, a storage class)."""

ClaimKey: TypeAlias = tuple[str, str]
"""ClaimKey is a claim's (namespace, name)."""


class QueueingHint(StrEnum):
    """QueueingHint is a hint's answer: retry the pod now, or leave it parked.

    Example: ``QueueingHint.QUEUE == "Queue"``.
    """

    QUEUE = "Queue"
    SKIP = "Skip"


QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.SKIP


@dataclass(frozen=True)
class PodSnapshot:
    """PodSnapshot is what a pod event tells the hints: where the pod runs, whether it is over, what it asks.

    ``node`` is ``spec.nodeName`` (None while unbound); ``terminal`` is
    phase Succeeded or Failed; ``request`` is its effective request.

    Example: ``PodSnapshot("a-1", "n1", False, Resources(cpu=200))``.
    """

    uid: str
    node: str | None
    terminal: bool
    request: Resources


def _lowered(old: Resources, new: Resources) -> bool:
    """Some resource, any of them (a GPU too), went down."""
    return not old.fits_in(new)


def pod_deleted(deleted: PodSnapshot) -> QueueingHint:
    """pod_deleted queues when the deleted pod was still holding room on a node.

    An unbound pod held nothing; a terminal pod gave its room back when it
    finished (that update already queued).

    Example: deleting a running pod on n1 is QUEUE; deleting a Pending,
    unbound pod is SKIP.
    """
    if deleted.node is None or deleted.terminal:
        return SKIP
    return QUEUE


def pod_updated(old: PodSnapshot, new: PodSnapshot, *, waiting_uid: str) -> QueueingHint:
    """pod_updated queues when a bound pod frees room, or the waiting pod asks for less.

    A bound pod frees room when it turns terminal or lowers a request
    (in-place resize); the waiting pod (``waiting_uid``) needs less when its
    own request drops. Anything else (status churn, labels, a pod binding)
    frees nothing.

    Example: a running pod on n1 turning Succeeded is QUEUE; the same pod's
    readiness flipping is SKIP.
    """
    if new.uid == waiting_uid:
        return QUEUE if _lowered(old.request, new.request) else SKIP
    if new.node is None or old.terminal:
        return SKIP
    if new.terminal or _lowered(old.request, new.request):
        return QUEUE
    return SKIP


#: What a pending pod's update may change without changing any scheduling verdict.
_IGNORED_METADATA = ("resourceVersion", "generation", "managedFields")


def _without_status(pod: Json) -> dict[str, Any]:
    metadata = pod.get("metadata")
    kept = {k: v for k, v in metadata.items() if k not in _IGNORED_METADATA} if isinstance(metadata, Mapping) else None
    return {"metadata": kept, **{k: v for k, v in pod.items() if k not in ("metadata", "status")}}


def own_pod_updated(old: Json, new: Json) -> QueueingHint:
    """own_pod_updated queues a waiting pod again only when an update changes more than its status.

    The scheduler's own ``PodScheduled=False`` condition is a status write:
    re-queueing on it would retry the pod at once and grow its backoff for
    nothing (kube-scheduler ignores the same fields).

    Example: a new ``status.conditions`` is SKIP; a changed ``spec`` or a new
    label is QUEUE.
    """
    return SKIP if _without_status(old) == _without_status(new) else QUEUE


def _passes_node_checks(pod: Json, node: Json, reserved_node: str | None) -> bool:
    if reserved_node is not None and _get_name(node) != reserved_node:
        return False
    return not node_check_failures(pod, node)


def _get_name(node: Json) -> str | None:
    metadata = node.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) else None


def _allocatable(node: Json) -> tuple[Resources, int]:
    status = node.get("status")
    allocatable = status.get("allocatable") if isinstance(status, Mapping) else None
    return Resources.from_mapping(allocatable if isinstance(allocatable, Mapping) else None), allocatable_pods(node)


def node_added(pod: Json, node: Json, *, reserved_node: str | None = None) -> QueueingHint:
    """node_added queues when the new node passes the waiting pod's node checks.

    ``reserved_node`` is the node the pod's group is reserved on, if any: only
    that node can take the pod, so any other new node is SKIP.

    Example: a new node tainted ``gpu=true:NoSchedule`` is SKIP for a pod
    without the toleration and QUEUE for one with it.
    """
    return QUEUE if _passes_node_checks(pod, node, reserved_node) else SKIP


def node_updated(pod: Json, old: Json, new: Json, *, reserved_node: str | None = None) -> QueueingHint:
    """node_updated queues when the update can turn the node from rejecting the pod to taking it.

    SKIP when the updated node still fails the pod's node checks (or is not
    the group's reserved node). Otherwise QUEUE when the old node failed them
    (uncordoned, a taint removed, labels now matching) or when allocatable
    pods or any resource grew (cpu, memory, a GPU newly advertised); an
    unreadable allocatable is QUEUE too.

    Example: ``spec.unschedulable`` going from true to false is QUEUE for a
    pod that does not tolerate the cordon; a heartbeat that changes only
    ``status.conditions`` is SKIP.
    """
    if not _passes_node_checks(pod, new, reserved_node):
        return SKIP
    if not _passes_node_checks(pod, old, reserved_node):
        return QUEUE
    try:
        old_resources, old_pods = _allocatable(old)
        new_resources, new_pods = _allocatable(new)
    except InvalidQuantity:
        return QUEUE
    grew = not new_resources.fits_in(old_resources) or new_pods > old_pods
    return QUEUE if grew else SKIP


def reservation_changed(
    old: ActiveReservation | None,
    new: ActiveReservation | None,
    *,
    pod_group: GroupKey | None,
) -> QueueingHint:
    """reservation_changed queues when a reservation stops holding room somewhere.

    ``old``/``new`` are the group's active reservation before and after (None:
    not Reserved). Released or rolled back (old only), moved to another node,
    or a lower peak: QUEUE. A new or grown reservation only takes room: SKIP,
    unless it is the waiting pod's own group (``pod_group``), whose placement
    decides where the pod may go: always QUEUE.

    Example: A released (``old=a, new=None``) is QUEUE for B; B's own group
    getting Reserved on n1 is QUEUE for B's pods; A newly reserved is SKIP for B.
    """
    if old is None and new is None:
        return SKIP
    if pod_group is not None and pod_group in {r.group for r in (old, new) if r is not None}:
        return QUEUE
    if old is None:
        return SKIP
    if new is None or new.node != old.node or _lowered(old.peak, new.peak):
        return QUEUE
    return SKIP


def pipeline_run_changed(old: Json | None, new: Json) -> QueueingHint:
    """pipeline_run_changed queues the run's parked pods when their plan can at last be decided.

    ``old`` is the run before the event (None: just added). QUEUE when the run
    was not plannable yet (absent, or no ``status.pipelineSpec``) and now is
    (core.plan_readiness READY) or never will be (NEVER: finished without a
    plan). Every other update (conditions, childReferences, a run already
    planned) leaves its pods where they are: a pod of a planned run waits for
    room, which a PipelineRun update does not give. The runtime applies it to
    the pods of that run only.

    Example: a run gaining ``status.pipelineSpec`` is QUEUE; a planned run's
    new childReferences entry is SKIP; a pending run's condition update is SKIP.
    """
    if plan_readiness(new) is PlanReadiness.NOT_YET:
        return SKIP
    if old is not None and plan_readiness(old) is not PlanReadiness.NOT_YET:
        return SKIP
    return QUEUE


def resolution_request_answered(old: Json | None, new: Json) -> QueueingHint:
    """resolution_request_answered queues the owner run's parked pods when a ResolutionRequest gets its answer.

    A run with a Task fetched through a resolver is planned from the request's
    answer (core.resolved_tasks); a pod that came before the answer was parked
    "waiting for the PipelineRun's plan". QUEUE when the request's Succeeded
    condition is now True or False and was not before (or the request is new
    and answered); every other update is SKIP. The runtime applies it to the
    pods of the request's owner runs only.

    Example: Succeeded Unknown -> True is QUEUE; an answered request's label
    change is SKIP; a new request not yet answered is SKIP.
    """

    def answered(request: Json | None) -> bool:
        conditions = ((request or {}).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Succeeded" and c.get("status") in ("True", "False") for c in conditions)

    return QUEUE if answered(new) and not answered(old) else SKIP


def record_added(pod_run: tuple[str, str] | None, record_run: tuple[str, str]) -> QueueingHint:
    """record_added queues a parked pod of the new record's PipelineRun: its groups are known now.

    ``pod_run`` is the waiting pod's (namespace, PipelineRun) from its labels,
    None for a pod of no PipelineRun; ``record_run`` is the record's
    (namespace, name). A new record frees no room (its groups are Pending, or,
    first seen after a relist, newly Reserved: that only takes room), so it
    moves no other pod.

    Example: ``record_added(("ci", "build-x"), ("ci", "build-x")) is QUEUE``;
    a pod of ``ci/other`` or a plain pod is SKIP.
    """
    return QUEUE if pod_run == record_run else SKIP




def _claim_key(claim: Json) -> ClaimKey:
    return (str(value_at(claim, "metadata", "namespace") or ""), str(value_at(claim, "metadata", "name") or ""))


def claim_fields_read(claim: Json) -> tuple[object, ...]:
    """claim_fields_read is what the volume rules read of a claim; an update changing none of it is no news.

    Example: a claim's ``status.capacity`` or an annotation of the PV controller
    changing gives equal tuples; ``status.phase`` going Bound does not.
    """
    return (
        value_at(claim, "spec", "volumeName"),
        value_at(claim, "status", "phase"),
        value_at(claim, "metadata", "annotations", SELECTED_NODE_ANNOTATION),
        value_at(claim, "metadata", "deletionTimestamp"),
        storage_class_name(claim),
    )


def claim_changed(waiting_claims: Collection[ClaimKey], old: Json | None, new: Json | None) -> QueueingHint:
    """claim_changed queues a parked pod when one of its claims appears or changes what the volume rules read.

    ``waiting_claims`` are the pod's claims and its group's, as (namespace, name);
    ``old``/``new`` the claim before and after (old None: added; new None: deleted).
    A deleted claim cannot make a pod schedulable.

    Example: the pod's claim ``data`` going from Pending to Bound is QUEUE (a pod
    waiting for an immediate claim is retried at once); the same claim's capacity
    update is SKIP; another pod's claim is SKIP.
    """
    if new is None or _claim_key(new) not in waiting_claims:
        return SKIP
    if old is None:
        return QUEUE
    return QUEUE if claim_fields_read(old) != claim_fields_read(new) else SKIP


def _claim_ref(volume: Json | None) -> ClaimKey | None:
    ref = value_at(volume, "spec", "claimRef")
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return None
    return (str(ref.get("namespace") or ""), str(ref.get("name")))


def volume_fields_read(volume: Json) -> tuple[object, ...]:
    """volume_fields_read is what the volume rules read of a PersistentVolume: whose it is, its phase, its node affinity.

    Example: a volume whose ``status.message`` changes gives equal tuples.
    """
    return (_claim_ref(volume), value_at(volume, "status", "phase"), value_at(volume, "spec", "nodeAffinity"))


def volume_changed(waiting_claims: Collection[ClaimKey], old: Json | None, new: Json | None) -> QueueingHint:
    """volume_changed queues a parked pod when the volume of one of its claims appears or changes what the rules read.

    The volume's claim is its ``spec.claimRef`` (before or after the update). A
    volume that belongs to no claim of the pod cannot help it (static volumes
    are not matched to unbound claims); a deleted volume cannot either.

    Example: the provisioned volume of the pod's claim ``src`` added is QUEUE; a
    volume of another claim is SKIP; the same volume's ``status.message`` is SKIP.
    """
    if new is None:
        return SKIP
    refs = {_claim_ref(new), _claim_ref(old)}
    if not any(ref is not None and ref in waiting_claims for ref in refs):
        return SKIP
    if old is None:
        return QUEUE
    return QUEUE if volume_fields_read(old) != volume_fields_read(new) else SKIP


def storage_class_fields_read(storage_class: Json) -> tuple[object, ...]:
    """storage_class_fields_read is what the volume rules read of a StorageClass: its binding mode and allowed topologies."""
    return (storage_class.get("volumeBindingMode"), storage_class.get("allowedTopologies"))


def storage_class_changed(waiting_classes: Collection[str], old: Json | None, new: Json | None) -> QueueingHint:
    """storage_class_changed queues a parked pod when the class of one of its claims appears or changes its rules.

    ``waiting_classes`` are the class names of the pod's (and its group's) claims.
    A class appearing turns an "immediate" claim of that name (no class object)
    into a delayed one; a changed binding mode or allowedTopologies moves where
    the claim may go. A deleted class cannot help.

    Example: class ``standard`` added is QUEUE for a pod whose claim names it, SKIP for
    one whose claims name ``fast``; a new label on the class is SKIP.
    """
    if new is None or str(value_at(new, "metadata", "name") or "") not in waiting_classes:
        return SKIP
    if old is None:
        return QUEUE
    return QUEUE if storage_class_fields_read(old) != storage_class_fields_read(new) else SKIP


# --- the filters that read other pods: NodePorts, InterPodAffinity, PodTopologySpread ---
#
# Each hint below is the QueueingHintFn of one of kube-scheduler's plugins for one kind of
# event (their EventsToRegister), over the waiting pod and the event's objects. A placed pod's
# event gives ``old`` None when the pod was just placed (bound), ``new`` None when it left its
# node (deleted, or finished: the reference counts no finished pod); a node event likewise.
# They answer for their own filter only: the runtime ORs them with the room hints above.


def _placed(pod: Json | None) -> bool:
    return pod is not None and bool(value_at(pod, "spec", "nodeName"))


def _pod_namespace(pod: Json) -> str:
    return str(value_at(pod, "metadata", "namespace") or "")


def _may_match(term: AffinityTerm, pod: Json) -> bool:
    """A term's match where the namespace's labels are not at hand: a namespaceSelector may select any namespace.

    kube-scheduler's hints match with no namespace labels, so a term that names its
    namespaces only by selector would never queue; when in doubt, QUEUE.
    """
    in_namespace = _pod_namespace(pod) in term.namespaces or not term.namespace_selector.nothing
    return in_namespace and term.selector.matches(labels_of(pod))


def _may_match_all(terms: tuple[AffinityTerm, ...], pod: Json) -> bool:
    return bool(terms) and all(_may_match(term, pod) for term in terms)


def _may_match_any(terms: tuple[AffinityTerm, ...], pod: Json) -> bool:
    return any(_may_match(term, pod) for term in terms)


def node_ports_pod_deleted(waiting: Json, deleted: Json) -> QueueingHint:
    """node_ports_pod_deleted is NodePorts' hint for a placed pod that left its node (kube's ``isSchedulableAfterAssignedPodDeleted``).

    QUEUE when the pod that left was placed and bound a host port that collides
    with one the waiting pod asks for; its other updates never change its ports
    (they are immutable), so they have no hint.

    Example: a pod binding 8080/TCP deleted is QUEUE for a pod waiting for
    8080/TCP, SKIP for one waiting for 9090/TCP or for none.
    """
    if not _placed(deleted):
        return SKIP
    freed = frozenset(host_ports(deleted))
    if not freed:
        return SKIP
    return QUEUE if any(port_conflicts(port, freed) for port in host_ports(waiting)) else SKIP


def inter_pod_affinity_pod_changed(waiting: Json, old: Json | None, new: Json | None) -> QueueingHint:
    """inter_pod_affinity_pod_changed is InterPodAffinity's hint for a placed pod added, relabelled or gone.

    As kube-scheduler's ``isSchedulableAfterAssignedPodChange``: a pod not
    placed is SKIP. Placed: QUEUE when it now matches all of the waiting pod's
    affinity terms (added, or relabelled into a match). Relabelled: also when it
    stopped matching one of its anti-affinity terms. Gone: QUEUE when it matched
    one of the waiting pod's anti-affinity terms, or the waiting pod matched one
    of *its* anti-affinity terms (symmetry).

    Example: a pod waiting with affinity to ``app=db``: a placed ``app=db`` pod
    added is QUEUE, an ``app=web`` one SKIP. A pod rejected by a placed pod's
    anti-affinity: that pod deleted is QUEUE.
    """
    if (new is not None and not _placed(new)) or (old is not None and not _placed(old)):
        return SKIP
    affinity = required_affinity_terms(waiting)
    anti_affinity = required_anti_affinity_terms(waiting)
    if old is not None and new is not None:
        if not _may_match_all(affinity, old) and _may_match_all(affinity, new):
            return QUEUE
        if _may_match_any(anti_affinity, old) and not _may_match_any(anti_affinity, new):
            return QUEUE
        return SKIP
    if new is not None:
        return QUEUE if _may_match_all(affinity, new) else SKIP
    if old is None:
        return SKIP
    if _may_match_any(anti_affinity, old) or _may_match_any(required_anti_affinity_terms(old), waiting):
        return QUEUE
    return SKIP


def topology_spread_pod_changed(waiting: Json, old: Json | None, new: Json | None) -> QueueingHint:
    """topology_spread_pod_changed is PodTopologySpread's hint for a placed pod added, relabelled or gone.

    As kube-scheduler's ``isSchedulableAfterAssignedPodChange``: only a placed
    pod of the waiting pod's namespace can change its counts. Added or gone:
    QUEUE when a DoNotSchedule constraint's selector matches it (a pod added
    elsewhere can raise the global minimum; one gone can lower a domain).
    Relabelled: QUEUE when some constraint's selector matches it before and not
    after, or after and not before.

    Example: for a pod spreading ``app=web`` pods, a placed ``app=web`` pod of
    its namespace deleted is QUEUE; one of another namespace, or an ``app=db``
    pod, is SKIP.
    """
    for pod in (old, new):
        if pod is not None and (not _placed(pod) or _pod_namespace(pod) != _pod_namespace(waiting)):
            return SKIP
    constraints = hard_spread_constraints(waiting)
    if old is not None and new is not None:
        before, after = labels_of(old), labels_of(new)
        if before == after:
            return SKIP
        return QUEUE if any(c.selector.matches(before) != c.selector.matches(after) for c in constraints) else SKIP
    changed = new if new is not None else old
    if changed is None:
        return SKIP
    return QUEUE if any(c.selector.matches(labels_of(changed)) for c in constraints) else SKIP


def inter_pod_affinity_node_changed(waiting: Json, old: Json | None, new: Json) -> QueueingHint:
    """inter_pod_affinity_node_changed is InterPodAffinity's hint for a node added or relabelled (kube's ``isSchedulableAfterNodeChange``).

    For an affinity term: QUEUE when the node is added with its topologyKey,
    gains the key, or moves to another value of it. For an anti-affinity term:
    QUEUE when a node is added (its domain may hold no rejected pod), loses the
    key, or moves to another value.

    Example: a pod with affinity on ``topology.kubernetes.io/zone``: a node
    relabelled from zone ``a`` to ``b`` is QUEUE; a node whose ``team`` label
    changes is SKIP.
    """
    new_labels = labels_of(new)
    old_labels = labels_of(old) if old is not None else None
    for term in required_affinity_terms(waiting):
        key = term.topology_key
        if old_labels is None:
            if key in new_labels:
                return QUEUE
            continue
        if key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
            return QUEUE
    for term in required_anti_affinity_terms(waiting):
        key = term.topology_key
        if old_labels is None:
            return QUEUE
        if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
            return QUEUE
    return SKIP


def topology_spread_node_changed(waiting: Json, old: Json | None, new: Json | None) -> QueueingHint:
    """topology_spread_node_changed is PodTopologySpread's hint for a node added, deleted, relabelled or retainted.

    As kube-scheduler's ``isSchedulableAfterNodeChange``, with "matching" meaning
    the node carries every DoNotSchedule constraint's topologyKey: added or
    deleted, QUEUE when it matches (a domain appears or goes); updated, QUEUE
    when it starts or stops matching, or matches and changes a topologyKey's
    value or its taints (a ``nodeTaintsPolicy: Honor`` constraint counts by them).

    Example: a pod spreading over zones: a zoned node deleted is QUEUE; a node
    without a zone label added is SKIP; a zoned node's new taint is QUEUE.
    """
    constraints = hard_spread_constraints(waiting)
    if not constraints:
        return SKIP

    def matching(node: Json | None) -> bool:
        labels = labels_of(node)
        return node is not None and all(c.topology_key in labels for c in constraints)

    if old is not None and new is not None:
        if matching(old) != matching(new):
            return QUEUE
        old_labels, new_labels = labels_of(old), labels_of(new)
        moved = any(old_labels.get(c.topology_key) != new_labels.get(c.topology_key) for c in constraints)
        retainted = value_at(old, "spec", "taints") != value_at(new, "spec", "taints")
        return QUEUE if matching(new) and (moved or retainted) else SKIP
    return QUEUE if matching(new if new is not None else old) else SKIP
