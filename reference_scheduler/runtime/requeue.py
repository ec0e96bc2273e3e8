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
from reference_scheduler.core.node_checks import node_check_failures
from reference_scheduler.core.queue_hints import (
    QUEUE,
    PodSnapshot,
    node_added,
    node_updated,
    pipeline_run_changed,
    pod_deleted,
    pod_updated,
    record_added,
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

    def __init__(
        self,
        *,
        view: ClusterView,
        waiting_pod: Callable[[str, str], Obj | None],
        node_named: Callable[[str], Obj | None],
    ) -> None:
        self._view = view
        self._waiting_pod = waiting_pod
        self._node_named = node_named

    # --- pods ---

    def after_pod_event(self, kind: str, pod: Obj, old: Obj | None) -> ShouldMove | None:
        """after_pod_event: a bound pod that is deleted, finishes or shrinks frees room on its node.

        The parked pod's own changes are not handled here: the scheduler queues
        a changed pending pod of its own at once.
        """
        if kind == "DELETED":
            hint = self._pod_hint(lambda: pod_deleted(self._snapshot(pod)))
        elif kind == "MODIFIED" and old is not None:
            hint = self._pod_hint(lambda: pod_updated(self._snapshot(old), self._snapshot(pod), waiting_uid=""))
        else:
            hint = False  # a new pod only takes room
        node = (pod.get("spec") or {}).get("nodeName")
        if not hint or not node:
            return None
        return self._per_pod(lambda waiting: self._could_use(waiting, node))

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
