"""Scheduling gates: a pod with ``spec.schedulingGates`` is not tried at all until every gate is removed.

Whoever creates a pod may hold it back from scheduling with gates (a quota
controller, a batch admission system), and removes them when the pod may go.
kube-scheduler's SchedulingGates plugin is a PreEnqueue plugin: a gated pod never
enters the active queue, so it is never filtered, scored or given a message of
the scheduler's; the pod update that removes its last gate queues it. The API
server, not the scheduler, marks a gated pod: at creation it sets
``PodScheduled=False`` with reason ``SchedulingGated`` and the message
"Scheduling is blocked due to non-empty scheduling gates"
(``applySchedulingGatedCondition`` in ``pkg/registry/core/pod/strategy.go``), and
gates can only be removed afterwards, never added, so that condition is the
pod's until it is tried.

The reference does the same: the scheduler never queues a gated pod
(``runtime/scheduler.py``), never takes one along as a sibling of its group's
claim, and queues it when an update leaves it without gates
(``scheduling_gates_removed``).

Example: a pod created with ``schedulingGates: [{name: example.com/quota}]`` waits,
untried and unmarked by the scheduler; when the quota controller patches the gate
away, the pod is queued like a new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.queue_hints import QUEUE, SKIP, QueueingHint

SCHEDULING_GATED_REASON = "SchedulingGated"
"""SCHEDULING_GATED_REASON is the PodScheduled reason the API server gives a gated pod (``v1.PodReasonSchedulingGated``)."""

SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
"""SCHEDULING_GATED_MESSAGE is the API server's message beside that reason."""

WAITING_FOR_GATES_MESSAGE = "waiting for scheduling gates: [{gates}]"
"""WAITING_FOR_GATES_MESSAGE is kube-scheduler's PreEnqueue status for a gated pod, its gates' names space-separated as Go prints them."""


def scheduling_gates(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """scheduling_gates lists the names of the pod's ``spec.schedulingGates``, in order.

    Example: ``scheduling_gates({"spec": {"schedulingGates": [{"name": "a"}, {"name": "b"}]}}) == ("a", "b")``;
    a pod without the field gives ``()``.
    """
    gates = value_at(pod, "spec", "schedulingGates")
    if not isinstance(gates, list):
        return ()
    return tuple(str(g.get("name") or "") if isinstance(g, Mapping) else "" for g in gates)


def is_gated(pod: Mapping[str, Any]) -> bool:
    """is_gated says whether the pod still has a scheduling gate: then it must not be tried (kube-scheduler's PreEnqueue).

    Example: ``is_gated({"spec": {"schedulingGates": [{"name": "a"}]}})`` is True;
    ``is_gated({"spec": {"schedulingGates": []}})`` is False.
    """
    return bool(scheduling_gates(pod))


def waiting_for_gates_message(pod: Mapping[str, Any]) -> str:
    """waiting_for_gates_message is kube-scheduler's PreEnqueue message for a gated pod (the reference logs it).

    Example: gates ``a`` and ``b`` give "waiting for scheduling gates: [a b]".
    """
    return WAITING_FOR_GATES_MESSAGE.format(gates=" ".join(scheduling_gates(pod)))


def scheduling_gates_removed(old: Mapping[str, Any], new: Mapping[str, Any]) -> QueueingHint:
    """scheduling_gates_removed queues a pod whose update left it without gates, as kube-scheduler's SchedulingGates does.

    Its event is ``UpdatePodSchedulingGatesEliminated``: QUEUE when the old pod
    had gates and the new one has none; removing one gate of two, or any other
    update of a gated pod, leaves it out.

    Example: gates ``[a]`` -> ``[]`` is QUEUE; ``[a, b]`` -> ``[b]`` is SKIP;
    a pod that never had gates is SKIP (its other updates have hints of their own).
    """
    return QUEUE if is_gated(old) and not is_gated(new) else SKIP
