"""Node scores, 0..100, like kube-scheduler's NodeResourcesFit strategies, with reservations as allocated.

Both strategies look at the fraction of each resource that would be allocated
if the incoming amount landed on the node. "Allocated" counts the node's pods
and the residuals other groups hold back (the same accounting as
``headroom.available_for``), so a node that looks idle but is reserved is not
mistaken for an empty one.

* least-allocated (the default) spreads: ``(capacity - requested) * 100 // capacity``;
* most-allocated packs: ``requested * 100 // capacity`` (capped at capacity).

CPU and memory weigh the same; a resource the node has none of is left out of
the average, and the average is integer-divided, as kube-scheduler does.

Like kube-scheduler, a pod that requests no CPU (or memory) is scored as if it
asked for 100m CPU (or 200Mi), so best-effort pods still spread; this applies
to the incoming amount and to every pod on the node, never to reservations.

Worked example: node 4000m / 8Gi; pods 1000m / 2Gi; another group's residual
1000m / 0; incoming 1000m / 2Gi. Requested is 3000m / 4Gi, so least-allocated
scores cpu (1000 * 100 // 4000) = 25 and memory 50: ``(25 + 50) // 2 == 37``;
most-allocated scores 75 and 50: ``62``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Iterable

from reference_scheduler.core.headroom import ActiveReservation, NodeView, foreign_reserved
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.resources import Resources, total

MAX_NODE_SCORE = 100
"""MAX_NODE_SCORE is the best score a node can get, as in kube-scheduler."""

DEFAULT_CPU_MILLIS = 100
"""DEFAULT_CPU_MILLIS is the CPU a pod requesting none is scored with (kube-scheduler's non-zero default)."""

DEFAULT_MEMORY_BYTES = 200 * 1024 * 1024
"""DEFAULT_MEMORY_BYTES is the memory a pod requesting none is scored with (200Mi)."""


class Strategy(StrEnum):
    """Strategy picks how a node's allocation turns into a score.

    Example: ``Strategy("MostAllocated") is Strategy.MOST_ALLOCATED``.
    """

    LEAST_ALLOCATED = "LeastAllocated"
    MOST_ALLOCATED = "MostAllocated"


def non_zero(request: Resources) -> Resources:
    """non_zero replaces a zero CPU or memory request by the scoring default.

    Example: ``non_zero(Resources(cpu=0, memory=64)) == Resources(cpu=100, memory=64)``.
    """
    return Resources(
        cpu=request.cpu or DEFAULT_CPU_MILLIS,
        memory=request.memory or DEFAULT_MEMORY_BYTES,
    )


def least_allocated_resource_score(requested: int, capacity: int) -> int:
    """least_allocated_resource_score is the free share left after the placement, 0..100.

    Example: ``least_allocated_resource_score(3000, 4000) == 25``; over capacity it is 0.
    """
    if capacity <= 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_allocated_resource_score(requested: int, capacity: int) -> int:
    """most_allocated_resource_score is the used share after the placement, 0..100.

    Example: ``most_allocated_resource_score(3000, 4000) == 75``; over capacity it is 100.
    """
    if capacity <= 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def allocated(node: NodeView, reservations: Iterable[ActiveReservation], group: GroupKey | None) -> Resources:
    """allocated is what the node already gives away, seen by a pod of ``group`` (None: a plain pod).

    The non-zero requests of the node's pods outside ``group`` plus the
    residuals of the other groups reserved on the node.

    Example: seed node (A: peak 3800m, its 200m pod running) seen by group B:
    ``allocated(node, [a], b).cpu == 200 + 3600``.
    """
    pods = total(non_zero(p.request) for p in node.pods if group is None or p.group != group)
    return pods + foreign_reserved(node, reservations, excluding=group)


def score(
    node: NodeView,
    reservations: Iterable[ActiveReservation],
    incoming: Resources,
    *,
    group: GroupKey | None = None,
    strategy: Strategy = Strategy.LEAST_ALLOCATED,
) -> int:
    """score rates the node for placing ``incoming`` there, 0 (worst) to 100 (best).

    ``incoming`` is the pod's request for a plain pod, or the group's peak when
    the pod opens a reservation (``headroom.required_for`` gives it); ``group``
    is the pod's group, so its own pods and reservation are not counted twice.

    Example: see the module docstring: 37 least-allocated, 62 most-allocated.
    """
    requested = allocated(node, reservations, group) + non_zero(incoming)
    resource_score = (
        least_allocated_resource_score
        if strategy is Strategy.LEAST_ALLOCATED
        else most_allocated_resource_score
    )
    scores = [
        resource_score(amount, capacity)
        for amount, capacity in (
            (requested.cpu, node.allocatable.cpu),
            (requested.memory, node.allocatable.memory),
        )
        if capacity > 0
    ]
    return sum(scores) // len(scores) if scores else 0
