"""Headroom: how much of a node is free once pods and reservations are counted, each once.

A group's reservation is its *peak*: the most its concurrently running tasks
will request. Part of that peak is already visible as the requests of the
group's pods bound to the node; only the rest, the *residual*
``max(0, peak - requests of the group's pods on the node)``, is still
invisible to a pod-counting scheduler and must be held back.

So a node's load is counted as: every pod's request, plus every other group's
residual. Each group therefore weighs ``max(peak, its pods)`` per resource, never
``peak + its pods``. (The prototype subtracted the whole peak on top of the
running pods: a group running a 200m pod under a 3800m peak cost 4000m.)

Worked example (the seed scenario): node allocatable 4800m CPU; group A has
peak 3800m and runs one 200m pod; group B (peak 2000m) looks for a node::

    pods on the node        200m   (A's pod)
    A's residual           3600m   (3800m - 200m)
    available for B        1000m   (4800m - 200m - 3600m), not 800m

B does not fit (2000m > 1000m), but a group with peak 900m would, where
double counting (4800 - 200 - 3800 = 800m) would have turned it away.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence, TypeAlias

from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.reasons import (
    GroupPeakExceedsNode,
    GroupReservedOnAnotherNode,
    InsufficientResource,
    TooManyPods,
)
from reference_scheduler.core.resource_names import EPHEMERAL_STORAGE
from reference_scheduler.core.resources import ZERO, Resources, total


@dataclass(frozen=True)
class PodUsage:
    """PodUsage is one non-terminal pod bound to a node, as the accounting sees it.

    ``request`` is the pod's effective request (what kube-scheduler would
    count); ``group`` is the reservation group the pod belongs to, None for a
    pod outside any group (a plain pod, or one from another scheduler).

    Example: ``PodUsage("uid-a1", Resources(cpu=200), GroupKey("ci", "run-a", "g0"))``.
    """

    uid: str
    request: Resources
    group: GroupKey | None = None


@dataclass(frozen=True)
class NodeView:
    """NodeView is a node's capacity and the non-terminal pods bound to it.

    ``max_pods`` is ``status.allocatable.pods`` (0 when absent, as
    kube-scheduler reads it, so such a node admits no pod).

    Example: ``NodeView("n1", Resources(cpu=4800), 110, (PodUsage("a1", Resources(cpu=200)),))``.
    """

    name: str
    allocatable: Resources
    max_pods: int
    pods: tuple[PodUsage, ...] = ()


@dataclass(frozen=True)
class ActiveReservation:
    """ActiveReservation is a group's Reserved claim: its peak, held on one node.

    Only groups in state Reserved are active; Pending groups hold nothing yet
    and Released groups hold nothing any more (their pods still count as pods).

    Example: ``ActiveReservation(GroupKey("ci", "run-a", "g0"), "n1", Resources(cpu=3800))``.
    """

    group: GroupKey
    node: str
    peak: Resources


@dataclass(frozen=True)
class GroupDemand:
    """GroupDemand is what the pod's group asks of a node: its peak, and where it is reserved.

    ``node`` is None while the group is unassigned (Pending); then the pod
    opens the reservation and the whole peak must fit. Once the group is
    Reserved, ``node`` names the only node its pods may use.

    Example: ``GroupDemand(GroupKey("ci", "run-b", "g0"), Resources(cpu=2000), node=None)``.
    """

    key: GroupKey
    peak: Resources
    node: str | None = None


def in_report_order(names: Iterable[str]) -> list[str]:
    """in_report_order sorts resource names as kube-scheduler's fitsRequest checks them: ephemeral-storage, then scalars by name.

    (kube-scheduler walks its scalar resources in map order; by name is the stable choice.) cpu and
    memory come before all of them and are not passed here.

    Example: in_report_order(["nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage"])
    == ["ephemeral-storage", "hugepages-2Mi", "nvidia.com/gpu"].
    """
    return sorted(names, key=lambda name: (name != EPHEMERAL_STORAGE, name))


FitFailure: TypeAlias = InsufficientResource | TooManyPods | GroupReservedOnAnotherNode | GroupPeakExceedsNode
"""FitFailure is a reason ``fit`` can return."""


def _pods_of(node: NodeView, group: GroupKey) -> Resources:
    return total(pod.request for pod in node.pods if pod.group == group)


def _peaks_on(node: NodeView, reservations: Iterable[ActiveReservation]) -> dict[GroupKey, Resources]:
    """The peak per group reserved on this node; a group listed twice counts once, at the larger peak."""
    peaks: dict[GroupKey, Resources] = defaultdict(Resources)
    for reservation in reservations:
        if reservation.node == node.name:
            peaks[reservation.group] = peaks[reservation.group].max(reservation.peak)
    return peaks


def residual(node: NodeView, reservation: ActiveReservation) -> Resources:
    """residual is the part of a reservation its group's pods on the node do not yet use.

    Per resource ``max(0, peak - requests of the group's pods on the node)``;
    ZERO when the reservation is on another node.

    Example: peak 3800m with the group's 200m pod running leaves 3600m;
    with pods requesting 4000m (more than the peak) it leaves 0m.
    """
    if reservation.node != node.name:
        return ZERO
    return (reservation.peak - _pods_of(node, reservation.group)).clamp_non_negative()


def foreign_reserved(
    node: NodeView, reservations: Iterable[ActiveReservation], *, excluding: GroupKey | None
) -> Resources:
    """foreign_reserved is what other groups hold back on the node beyond their running pods.

    The sum, over groups reserved on ``node`` other than ``excluding``, of each
    group's residual. Pass ``excluding=None`` to count every group (for a
    plain pod). Reservations on other nodes are ignored.

    Example: on the seed node (A: peak 3800m, 200m pod running),
    ``foreign_reserved(node, [a], excluding=B) == Resources(cpu=3600)`` and
    ``foreign_reserved(node, [a], excluding=A) == ZERO``.
    """
    held = ZERO
    for group, peak in _peaks_on(node, reservations).items():
        if group != excluding:
            held = held + (peak - _pods_of(node, group)).clamp_non_negative()
    return held


def _pods_counted(node: NodeView, group: GroupKey | None, *, skip_uid: str | None = None) -> Resources:
    """Requests of the node's pods, less those of ``group`` (None: all pods) and of ``skip_uid``."""
    return total(
        pod.request
        for pod in node.pods
        if (group is None or pod.group != group) and pod.uid != skip_uid
    )


def available_for(
    node: NodeView, reservations: Iterable[ActiveReservation], group: GroupKey | None
) -> Resources:
    """available_for is what a group's peak (or a plain pod, group=None) can use on the node.

    ``allocatable - requests of the node's pods not in group - foreign_reserved``.
    The group's own pods are left out because its peak already covers them.
    The result may be negative on an over-committed node.

    Example (seed): ``available_for(node, [a], B) == Resources(cpu=1000)``,
    and ``available_for(node, [a], A) == Resources(cpu=4800)``: A's own pod and
    reservation are inside A's peak.
    """
    return (
        node.allocatable
        - _pods_counted(node, group)
        - foreign_reserved(node, reservations, excluding=group)
    )


def required_for(pod_request: Resources, demand: GroupDemand | None) -> Resources:
    """required_for is the amount a node must have free for the pod to be admitted.

    A plain pod (no group) and a pod of an already-placed group need their own
    request; a pod whose group is still unassigned opens the reservation and
    needs the group's peak (never less than its own request).

    Example: ``required_for(Resources(cpu=500), GroupDemand(b, Resources(cpu=2000))) == Resources(cpu=2000)``;
    with ``node="n1"`` set on the demand it is ``Resources(cpu=500)``.
    """
    if demand is None or demand.node is not None:
        return pod_request
    return demand.peak.max(pod_request)


def fit(
    node: NodeView,
    reservations: Sequence[ActiveReservation],
    pod: PodUsage,
    demand: GroupDemand | None,
) -> list[FitFailure]:
    """fit says why the pod cannot go to the node; an empty list means it fits.

    Three cases, by the pod's group:

    * no group: ``pod.request`` against allocatable - all pods - every group's residual;
    * group unassigned: the group's peak against ``available_for(node, ..., group)``;
    * group reserved: only its node passes (``GroupReservedOnAnotherNode``
      elsewhere); there the pod's own request must fit in allocatable - all
      pods (its group's included) - other groups' residuals. Its group's own
      residual is not subtracted: that is the room held for this very pod.

    Every resource is checked on its own: cpu, memory, then, in
    kube-scheduler's order, ephemeral-storage, hugepages-<size> and extended
    resources (``in_report_order``); a resource the node does not advertise has
    allocatable 0, so a pod requesting it fails there ("Insufficient nvidia.com/gpu").

    The pod-count limit is checked as kube-scheduler's Fit does: the node's
    pods plus this one must not exceed ``max_pods``. A pod already listed on
    the node (same uid) is not counted against itself. A resource the pod
    requests none of always fits, even on an over-committed node, again as
    kube-scheduler does; a pod requesting nothing at all fits any node with
    room for one more pod.

    Example (seed): B's first pod (500m, group peak 2000m, unassigned) on the
    seed node gets ``[InsufficientResource("cpu", requested=2000, available=1000,
    allocatable=4800, used_by_pods=200, reserved_by_others=3600)]``.
    """
    failures: list[FitFailure] = []
    others = tuple(p for p in node.pods if p.uid != pod.uid)
    if len(others) + 1 > node.max_pods:
        failures.append(TooManyPods(allowed=node.max_pods, bound=len(others)))

    group = demand.key if demand is not None else None
    if demand is not None and demand.node is not None and demand.node != node.name:
        failures.append(GroupReservedOnAnotherNode(group=demand.key, reserved_node=demand.node))
        return failures

    if demand is not None and demand.node is None:
        # The pod opens the reservation: the whole peak, beside everyone else.
        used = _pods_counted(node, group, skip_uid=pod.uid)
    else:
        # A plain pod, or a pod of the group placed here: every pod counts.
        used = _pods_counted(node, None, skip_uid=pod.uid)
    reserved = foreign_reserved(node, reservations, excluding=group)
    need = required_for(pod.request, demand)

    rows: tuple[tuple[str, int, int, int, int], ...] = (
        ("cpu", need.cpu, node.allocatable.cpu, used.cpu, reserved.cpu),
        ("memory", need.memory, node.allocatable.memory, used.memory, reserved.memory),
    )
    if need.other:
        # Only what the pod (or peak) requests can fail; a resource the node does not advertise has allocatable 0.
        rows += tuple(
            (resource, need.get(resource), node.allocatable.get(resource), used.get(resource), reserved.get(resource))
            for resource in in_report_order(name for name, _ in need.other)
        )
    for resource, requested, allocatable, by_pods, by_others in rows:
        available = allocatable - by_pods - by_others
        if group is not None and demand is not None and demand.node is None and requested > allocatable:
            # No claim can ever hold this peak here: say so, not "full for now" (a group no node can hold).
            failures.append(GroupPeakExceedsNode(group=group, resource=resource, peak=requested, allocatable=allocatable))
        elif requested > 0 and requested > available:
            failures.append(
                InsufficientResource(
                    resource=resource,
                    requested=requested,
                    available=available,
                    allocatable=allocatable,
                    used_by_pods=by_pods,
                    reserved_by_others=by_others,
                )
            )
    return failures
