"""Requeue: which parked pods a cluster event may help, decided by the queueing hints of core/queue_hints.py.

A pod that did not fit waits in the queue's unschedulable set until an event
might change the verdict. Moving every parked pod on every event was cheap to
write and costly to run: on a 1000-node cluster the nodes' heartbeats alone
moved the whole backlog back to backoff several times a second, and each move
costs a full attempt. Each `after_*` method turns one informer event into the
predicate the queue applies to each parked pod, or None when the event can
help no pod (so there is nothing to evaluate).

When in doubt the predicates say "move": a wrong move costs one attempt, a
wrong skip strands a pod until the queue's periodic flush.
"""

from __future__ import annotations

from typing import Callable

from reference_scheduler.core.headroom import ActiveReservation
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.queue_hints import (
    QUEUE,
    PodSnapshot,
    node_added,
    node_updated,
    pod_deleted,
    pod_updated,
    reservation_changed,
)
from reference_scheduler.core.resources import InvalidQuantity
from reference_scheduler.runtime.cluster_view import ClusterView, is_terminal, pipeline_task_of, reservations_of
from reference_scheduler.runtime.informer import Obj
from reference_scheduler.runtime.queue import PodKey

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

    def __init__(self, *, view: ClusterView, waiting_pod: Callable[[str, str], Obj | None]) -> None:
        self._view = view
        self._waiting_pod = waiting_pod

    # --- pods ---

    def after_pod_event(self, kind: str, pod: Obj, old: Obj | None) -> ShouldMove | None:
        """after_pod_event: a bound pod that is deleted, finishes or shrinks frees room for every parked pod.

        The parked pod's own changes are not handled here: the scheduler queues
        a changed pending pod of its own at once.
        """
        if kind == "DELETED":
            hint = self._pod_hint(lambda: pod_deleted(self._snapshot(pod)))
        elif kind == "MODIFIED" and old is not None:
            hint = self._pod_hint(lambda: pod_updated(self._snapshot(old), self._snapshot(pod), waiting_uid=""))
        else:
            hint = False  # a new pod only takes room
        return _every_pod if hint else None

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
            return self._per_pod(lambda pod: node_added(pod, node, reserved_node=self._reserved_node_of(pod)) is QUEUE)
        if kind == "MODIFIED" and old is not None:
            if node_fields_checked(old) == node_fields_checked(node):
                return None
            return self._per_pod(lambda pod: node_updated(pod, old, node, reserved_node=self._reserved_node_of(pod)) is QUEUE)
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
        """after_record_event: a reservation released, rolled back, moved or lowered frees room for every pod.

        The pods of the record's own PipelineRun are moved on any change of
        it: their group, and where it is reserved, come from this record.
        """
        before = _by_group(record if kind == "DELETED" else old)
        after = {} if kind == "DELETED" else _by_group(record)
        changed = [group for group in before.keys() | after.keys() if before.get(group) != after.get(group)]
        meta = record.get("metadata") or {}
        run = (meta.get("namespace") or "", meta.get("name") or "")
        spec_changed = kind != "MODIFIED" or (old is None) or (old.get("spec") or {}).get("groups") != (record.get("spec") or {}).get("groups")
        if not changed and not spec_changed:
            return None

        def should_move(pod: Obj) -> bool:
            found = pipeline_task_of(pod)
            if found is not None and (pod["metadata"].get("namespace") or "", found[0]) == run:
                return True
            own = self._view.group_of(pod)
            return any(reservation_changed(before.get(g), after.get(g), pod_group=own) is QUEUE for g in changed)

        return self._per_pod(should_move)

    # --- helpers ---

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


def _by_group(record: Obj | None) -> dict[GroupKey, ActiveReservation]:
    return {r.group: r for r in reservations_of(record)} if record is not None else {}
