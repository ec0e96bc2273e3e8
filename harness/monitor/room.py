"""room: the contract's arithmetic of one node at one moment, term by term (docs/contract.md section 7, Headroom).

The monitor judges a node by one sum, `pods + residuals <= allocatable` per
resource. When the sum is over, an implementer needs its terms to see which
one their scheduler got wrong: every counted pod with its effective request
and why it counts, every Reserved group's peak, its own pods there and its
residual. A NodeRoom holds those terms; its totals are the sums the monitor
judges (harness.monitor.invariants.node_room builds it, `overcommitted` reads
its totals), so what is shown and what is judged are one computation.

    NodeRoom("n1", Amount(4800), pods=(CountedPod("ns/b", Amount(1001), "Running"),
             CountedPod("ns/a-small", Amount(200), "Running", group="ns/a:source")),
             residuals=(GroupResidual("ns/a:source", Amount(3800), ("ns/a-small",), Amount(200)),))
    .total == Amount(4801) and .over() == ["cpu"]   # 1001m + 200m + (3800m - 200m)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.quantities import Amount, sum_of
from harness.resource_names import sort_key

#: Why a pod counts on its node, as section 7 says it: bound and not finished; a pod being deleted counts until it is gone.
BOUND = "bound, not finished"
TERMINATING = "terminating, not finished"


@dataclass(frozen=True)
class CountedPod:
    """CountedPod is one pod that counts on the node: "namespace/name", its effective request, its phase, its group if any.

    Example: CountedPod("ns/a-small-pod", Amount(200), "Running", group="ns/a:source").why == "bound, not finished".
    """

    pod: str
    request: Amount
    phase: str
    group: str | None = None
    terminating: bool = False

    @property
    def why(self) -> str:
        return TERMINATING if self.terminating else BOUND


@dataclass(frozen=True)
class GroupResidual:
    """GroupResidual is one Reserved group's hold on the node: "record:group", its peak, its counted pods there and what they request.

    Example: GroupResidual("ns/a:source", Amount(3800), ("ns/a-small-pod",), Amount(200)).residual == Amount(3600).
    """

    group: str
    peak: Amount
    pods: tuple[str, ...]
    pods_request: Amount

    @property
    def residual(self) -> Amount:
        """residual is max(0, peak - its pods on the node), per resource: a group whose pods ask more than its peak holds nothing more."""
        return (self.peak - self.pods_request).floor_zero()


@dataclass(frozen=True)
class NodeRoom:
    """NodeRoom is the terms of section 7's sum on one node; `with_reservations` False counts pods only (placement-only)."""

    node: str
    allocatable: Amount
    pods: tuple[CountedPod, ...] = ()
    residuals: tuple[GroupResidual, ...] = ()
    with_reservations: bool = True

    @property
    def pods_total(self) -> Amount:
        return sum_of(p.request for p in self.pods)

    @property
    def residuals_total(self) -> Amount:
        return sum_of(r.residual for r in self.residuals)

    @property
    def total(self) -> Amount:
        """total is what the node holds: every counted pod's request plus every Reserved group's residual."""
        return self.pods_total + self.residuals_total

    def over(self) -> list[str]:
        """over() names each resource the node holds more of than it has allocatable, in messages' order (cpu first)."""
        return self.total.exceeds(self.allocatable)

    def resources(self) -> list[str]:
        """resources() is cpu, memory and every other resource the node holds or advertises, in messages' order."""
        return sorted(self.total.max(self.allocatable).resources(), key=sort_key)


#: What the numbers of room_data() count.
DATA_UNITS = "cpu in millicores; memory, ephemeral-storage and hugepages-* in bytes; extended resources in units"


def room_data(room: NodeRoom) -> dict[str, Any]:
    """room_data() is the arithmetic as plain data for JSON, every amount a map of resource to an integer (DATA_UNITS).

    Example: {"node": "n1", "over": ["cpu"], "allocatable": {"cpu": 4800, "memory": 0}, "total": {...},
    "pods": [{"pod": "ns/b", "request": {"cpu": 1001, "memory": 0}, "phase": "Running", "why": "bound, not finished", "group": None}],
    "residuals": [{"group": "ns/a:source", "peak": {...}, "pods": ["ns/a-small"], "pods_request": {...}, "residual": {...}}], ...}.
    """
    return {
        "node": room.node,
        "over": room.over(),
        "units": DATA_UNITS,
        "allocatable": room.allocatable.as_dict(),
        "total": room.total.as_dict(),
        "pods_total": room.pods_total.as_dict(),
        "residuals_total": room.residuals_total.as_dict(),
        "residuals_counted": room.with_reservations,
        "pods": [
            {"pod": p.pod, "request": p.request.as_dict(), "phase": p.phase, "why": p.why, "group": p.group}
            for p in sorted(room.pods, key=lambda p: p.pod)
        ],
        "residuals": [
            {"group": g.group, "peak": g.peak.as_dict(), "pods": list(g.pods), "pods_request": g.pods_request.as_dict(), "residual": g.residual.as_dict()}
            for g in sorted(room.residuals, key=lambda g: g.group)
        ],
    }
