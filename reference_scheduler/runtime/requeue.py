"""Requeue: which parked pods a cluster event may help, decided by the queueing hints of core/queue_hints.py.

A pod that did not fit waits in the queue's unschedulable set until an event
might change the verdict. Moving every parked pod on every event was cheap to
write and costly to run: on a 1000-node cluster the nodes' heartbeats alone
moved the whole backlog back to backoff several times a second, and each move
costs a full attempt. Each `after_*` method turns one informer event into the
predicate the queue applies to each parked pod, or None when the event can
help no pod (so there is nothing to evaluate).

Room freed on a node helps only the parked pods that could go there: a pod
that finishes in one node pool moves no pod that selects another, and a pod
whose group is Reserved on one node is moved only by room freed on that node.
When in doubt the predicates say "move": a wrong move costs one attempt (and
lengthens the pod's backoff), a wrong skip strands it until the periodic flush.
"""

from __future__ import annotations

from typing import Callable

from reference_scheduler.core.headroom import ActiveReservation
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core import volume_binding
from reference_scheduler.core.node_checks import node_check_failures
from reference_scheduler.core.label_selectors import labels_of
from reference_scheduler.core.queue_hints import (
    QUEUE,
    ClaimKey,
    PodSnapshot,
    claim_changed,
    claim_fields_read,
    inter_pod_affinity_node_changed,
    inter_pod_affinity_pod_changed,
    node_added,
    node_ports_pod_deleted,
    node_updated,
    pipeline_run_changed,
    resolution_request_answered,
    pod_deleted,
    pod_updated,
    record_added,
    reservation_changed,
    storage_class_changed,
    storage_class_fields_read,
    topology_spread_node_changed,
    topology_spread_pod_changed,
    volume_changed,
    volume_fields_read,
)
from reference_scheduler.core.resources import InvalidQuantity
from reference_scheduler.core.volume_binding import NO_VOLUMES, VolumeLookups
from reference_scheduler.runtime.cluster_view import ClusterView, is_terminal, pipeline_task_of, reservations_of
from reference_scheduler.runtime.informer import Obj
from reference_scheduler.runtime.queue import PodKey
from reference_scheduler.runtime.records import spec_group_of_task

#: The predicate the queue applies to each parked pod: move it back (True) or leave it parked.
ShouldMove = Callable[[PodKey], bool]


def _every_pod(key: PodKey) -> bool:
    return True


def node_fields_checked(node: Obj) -> tuple[object, ...]:
    """node_fields_checked(node) is what node checks and fit read of a node; a heartbeat changes none of it.

    Example: two versions of a node that differ only in ``status.conditions``
    give equal tuples, so the update is no news to any parked pod.
    """
    meta = node.get("metadata") or {}
    return (meta.get("labels") or {}, node.get("spec") or {}, (node.get("status") or {}).get("allocatable") or {})


class EventHints:
    """EventHints answers, per informer event, which parked pods to move (see the module docstring)."""

    def __init__(
        self,
        *,
        view: ClusterView,
        waiting_pod: Callable[[str, str], Obj | None],
        node_named: Callable[[str], Obj | None],
        volumes: VolumeLookups = NO_VOLUMES,
        pipeline_run_named: Callable[[str, str], Obj | None] = lambda namespace, name: None,
    ) -> None:
        self._view = view
        self._waiting_pod = waiting_pod
        self._node_named = node_named
        self._volumes = volumes
        self._pipeline_run_named = pipeline_run_named

    # --- pods ---

    def after_pod_event(self, kind: str, pod: Obj, old: Obj | None) -> ShouldMove | None:
        """after_pod_event: a bound pod that is deleted, finishes or shrinks frees room on its node;
        a pod placed, relabelled or gone may change what the filters that read other pods decide.

        Room freed moves only the parked pods that could use that node. The pods placed on a
        node are what NodePorts, InterPodAffinity and PodTopologySpread read, and their verdict
        on *other* nodes of the same topology domain can change too, so their hints
        (core.queue_hints.node_ports_pod_deleted, inter_pod_affinity_pod_changed,
        topology_spread_pod_changed) move a parked pod wherever it could go. A pod is placed
        when it is bound and not finished: binding places it, finishing or deletion takes it
        away, and only a change of its labels matters in between. The parked pod's own changes
        are not handled here: the scheduler queues a changed pending pod of its own at once.
        """
        if kind == "DELETED":
            hint = self._pod_hint(lambda: pod_deleted(self._snapshot(pod)))
        elif kind == "MODIFIED" and old is not None:
            hint = self._pod_hint(lambda: pod_updated(self._snapshot(old), self._snapshot(pod), waiting_uid=""))
        else:
            hint = False  # a new pod only takes room
        node = (pod.get("spec") or {}).get("nodeName")
        room = hint and bool(node)
        before = (pod if kind == "DELETED" else old) if _is_placed(pod if kind == "DELETED" else old) else None
        after = pod if kind != "DELETED" and _is_placed(pod) else None
        placement_changed = (before is None) != (after is None) or (
            before is not None and after is not None and labels_of(before) != labels_of(after)
        )
        if not room and not placement_changed:
            return None

        def should_move(waiting: Obj) -> bool:
            if room and self._could_use(waiting, node):
                return True
            return placement_changed and _placement_moves(waiting, before, after)

        return self._per_pod(should_move)

    def _snapshot(self, pod: Obj) -> PodSnapshot:
        meta = pod.get("metadata") or {}
        node = (pod.get("spec") or {}).get("nodeName") or None
        return PodSnapshot(meta.get("uid") or "", node, is_terminal(pod), self._view.request_of(pod))

    @staticmethod
    def _pod_hint(hint: Callable[[], object]) -> bool:
        try:
            return hint() is QUEUE
        except InvalidQuantity:
            return True  # an unreadable request: move, when in doubt

    # --- nodes ---

    def after_node_event(self, kind: str, node: Obj, old: Obj | None) -> ShouldMove | None:
        """after_node_event: a node added, or changed where the checks look, may take parked pods.

        A deleted node frees nothing by itself: its pods' deletions and the
        release of the reservations on it are events of their own.
        """
        if kind == "ADDED":
            return self._per_pod(
                lambda pod: node_added(pod, node, reserved_node=self._reserved_node_of(pod)) is QUEUE or _node_moves(pod, None, node)
            )
        if kind == "MODIFIED" and old is not None:
            if node_fields_checked(old) == node_fields_checked(node):
                return None
            return self._per_pod(
                lambda pod: node_updated(pod, old, node, reserved_node=self._reserved_node_of(pod)) is QUEUE or _node_moves(pod, old, node)
            )
        if kind == "DELETED":
            # A domain gone can lift a spread constraint's global minimum (PodTopologySpread's Node/Delete).
            return self._per_pod(lambda pod: topology_spread_node_changed(pod, node, None) is QUEUE)
        return None

    def _reserved_node_of(self, pod: Obj) -> str | None:
        group = self._view.group_of(pod)
        if group is None:
            return None
        record = self._view.record_of(group.namespace, group.pipeline_run)
        for reservation in reservations_of(record) if record is not None else ():
            if reservation.group == group:
                return reservation.node
        return None

    # --- reservation records ---

    def after_record_event(self, kind: str, record: Obj, old: Obj | None) -> ShouldMove | None:
        """after_record_event: a reservation released, rolled back, moved or lowered frees room on its node.

        The pods of the record's own PipelineRun are also moved when the record
        appears, is deleted or its groups change: their group, and where it is
        reserved, come from it. A new record was written by the attempt of one
        pod of that run; the others may be parked waiting for the plan
        (core.queue_hints.record_added).
        """
        run = _namespaced_name(record)
        if kind == "ADDED":
            return self._per_pod(lambda pod: record_added(_run_of(pod), run) is QUEUE)
        before = _by_group(record if kind == "DELETED" else old)
        after = {} if kind == "DELETED" else _by_group(record)
        changed = [group for group in before.keys() | after.keys() if before.get(group) != after.get(group)]
        groups_changed = kind == "MODIFIED" and old is not None and (old.get("spec") or {}).get("groups") != (record.get("spec") or {}).get("groups")
        own_run_moves = kind == "DELETED" or groups_changed or bool(changed)
        if not own_run_moves:
            return None

        def should_move(pod: Obj) -> bool:
            if _run_of(pod) == run:
                return own_run_moves
            own = self._view.group_of(pod)
            return any(
                reservation_changed(before.get(g), after.get(g), pod_group=own) is QUEUE and self._could_use(pod, _freed_on(before.get(g)))
                for g in changed
            )

        return self._per_pod(should_move)

    # --- PipelineRuns ---

    def after_pipeline_run_event(self, kind: str, pipeline_run: Obj, old: Obj | None) -> ShouldMove | None:
        """after_pipeline_run_event: a run that gets its plan (or finishes without one) moves its own parked pods.

        Those pods were parked "waiting for the PipelineRun's plan"
        (core.queue_hints.pipeline_run_changed); no other pod's verdict reads
        a PipelineRun. A deleted run moves no one: its pods go with it.
        """
        if kind == "DELETED" or pipeline_run_changed(old, pipeline_run) is not QUEUE:
            return None
        run = _namespaced_name(pipeline_run)
        return self._per_pod(lambda pod: _run_of(pod) == run)

    def after_resolution_request_event(self, kind: str, request: Obj, old: Obj | None) -> ShouldMove | None:
        """after_resolution_request_event: a request that gets its answer moves the parked pods of the runs that own it."""
        if kind == "DELETED" or resolution_request_answered(old, request) is not QUEUE:
            return None
        meta = request.get("metadata") or {}
        runs = {(meta.get("namespace") or "", ref.get("name") or "") for ref in meta.get("ownerReferences") or [] if ref.get("kind") == "PipelineRun"}
        if not runs:
            return None
        return self._per_pod(lambda pod: _run_of(pod) in runs)

    # --- volumes ---

    def after_claim_event(self, kind: str, claim: Obj, old: Obj | None) -> ShouldMove | None:
        """after_claim_event: a claim added or changed where the volume rules look moves the parked pods it belongs to.

        An immediate claim the PV controller binds moves its pods at once, not at
        the next flush. A deleted claim, or an update the rules do not read, moves no one.
        """
        if kind == "DELETED":
            return None
        before = old if kind == "MODIFIED" else None
        if before is not None and claim_fields_read(before) == claim_fields_read(claim):
            return None
        return self._per_pod(lambda pod: claim_changed(self._claims_of(pod), before, claim) is QUEUE)

    def after_volume_event(self, kind: str, volume: Obj, old: Obj | None) -> ShouldMove | None:
        """after_volume_event: the volume of a parked pod's claim added or changed (claim, phase, node affinity) moves that pod."""
        if kind == "DELETED":
            return None
        before = old if kind == "MODIFIED" else None
        if before is not None and volume_fields_read(before) == volume_fields_read(volume):
            return None
        return self._per_pod(lambda pod: volume_changed(self._claims_of(pod), before, volume) is QUEUE)

    def after_storage_class_event(self, kind: str, storage_class: Obj, old: Obj | None) -> ShouldMove | None:
        """after_storage_class_event: the class of a parked pod's claim added or changed (mode, topologies) moves that pod."""
        if kind == "DELETED":
            return None
        before = old if kind == "MODIFIED" else None
        if before is not None and storage_class_fields_read(before) == storage_class_fields_read(storage_class):
            return None
        return self._per_pod(lambda pod: storage_class_changed(self._classes_of(pod), before, storage_class) is QUEUE)

    def _claims_of(self, pod: Obj) -> frozenset[ClaimKey]:
        """_claims_of(pod) is the parked pod's claims and its group's (whether or not it opens the group: when in doubt, move)."""
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        names = volume_binding.pod_claim_names(pod)
        found = pipeline_task_of(pod)
        if found is not None:
            record = self._view.record_of(namespace, found[0])
            group = spec_group_of_task(record, found[1]) if record is not None else None
            workspaces = frozenset(group.get("workspaces") or ()) if group is not None else frozenset()
            if workspaces:
                names = volume_binding.group_claim_names(pod, self._pipeline_run_named(namespace, found[0]), workspaces)
        return frozenset((namespace, name) for name in names)

    def _classes_of(self, pod: Obj) -> frozenset[str]:
        """_classes_of(pod) is the StorageClass names of the parked pod's claims (and its group's) that exist."""
        classes = set()
        for namespace, name in self._claims_of(pod):
            claim = self._volumes.get_claim(namespace, name)
            if claim is not None:
                classes.add(volume_binding.storage_class_name(claim))
        return frozenset(c for c in classes if c)

    # --- helpers ---

    def _could_use(self, pod: Obj, node_name: str | None) -> bool:
        """_could_use: room freed on this node may help the pod (its group is not Reserved elsewhere, it passes the checks)."""
        if node_name is None:
            return True
        reserved = self._reserved_node_of(pod)
        if reserved is not None and reserved != node_name:
            return False
        node = self._node_named(node_name)
        return node is None or not node_check_failures(pod, node)  # an unknown node: move, when in doubt

    def _per_pod(self, decide: Callable[[Obj], bool]) -> ShouldMove:
        def should_move(key: PodKey) -> bool:
            pod = self._waiting_pod(*key)
            if pod is None:
                return True  # gone: the loop forgets it when it pops it
            try:
                return decide(pod)
            except InvalidQuantity:
                return True
        return should_move


def _is_placed(pod: Obj | None) -> bool:
    """_is_placed(pod): bound to a node and not finished, so the filters that read other pods count it there."""
    return pod is not None and bool((pod.get("spec") or {}).get("nodeName")) and not is_terminal(pod)


def _placement_moves(waiting: Obj, before: Obj | None, after: Obj | None) -> bool:
    """_placement_moves: a pod placed (before None), relabelled, or gone (after None) may let the waiting pod pass NodePorts, InterPodAffinity or PodTopologySpread.

    A pod placed or relabelled matters only to a waiting pod with pod (anti-)affinity or spread
    constraints of its own: most have none, and every bind asks every parked pod, so they are
    answered from two lookups. A pod gone can also free a host port, or lift its own anti-affinity.
    """
    if after is not None and not _has_own_terms(waiting):
        return False
    if after is None and before is not None and node_ports_pod_deleted(waiting, before) is QUEUE:
        return True
    return inter_pod_affinity_pod_changed(waiting, before, after) is QUEUE or topology_spread_pod_changed(waiting, before, after) is QUEUE


def _has_own_terms(pod: Obj) -> bool:
    """_has_own_terms(pod): the pod has pod affinity, pod anti-affinity or spread constraints (required or not)."""
    spec = pod.get("spec") or {}
    affinity = spec.get("affinity") or {}
    return bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity") or spec.get("topologySpreadConstraints"))


def _node_moves(waiting: Obj, old: Obj | None, new: Obj) -> bool:
    """_node_moves: a node added (old None) or relabelled may let the waiting pod pass InterPodAffinity or PodTopologySpread."""
    return inter_pod_affinity_node_changed(waiting, old, new) is QUEUE or topology_spread_node_changed(waiting, old, new) is QUEUE


def _namespaced_name(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _run_of(pod: Obj) -> tuple[str, str] | None:
    """_run_of(pod) is the pod's (namespace, PipelineRun) from Tekton's labels, None for a plain pod."""
    found = pipeline_task_of(pod)
    return ((pod.get("metadata") or {}).get("namespace") or "", found[0]) if found is not None else None


def _freed_on(reservation: ActiveReservation | None) -> str | None:
    return reservation.node if reservation is not None else None


def _by_group(record: Obj | None) -> dict[GroupKey, ActiveReservation]:
    return {r.group: r for r in reservations_of(record)} if record is not None else {}
