"""Claims: who holds a group's reservation, and the pure transitions that change it.

A group's claim is the durable part of its ``ReservationRecord`` entry:
state (Pending | Reserved | Released), node, holders (pod UIDs) and
claimGeneration. The runtime reads it, applies one transition here, and writes
the result back with optimistic concurrency (resourceVersion); on a write
conflict it re-reads and re-applies. Because each transition is a pure
function of the claim it read, re-applying is always safe.

The rules that keep two scheduling cycles from double-booking:

* ``reserve`` on a Pending claim *makes* a new claim: Reserved on the node,
  the pod as only holder, generation + 1. On a claim Reserved on the same node
  the pod *joins* (generation unchanged). On any other node, or once
  Released, it is a ``ClaimConflict``: the caller re-queues the pod, it never
  books a second node.
* ``unreserve`` (rolling back a failed bind) removes only the pod's own
  holder. The claim returns to Pending only when no holder is left *and* the
  generation is still the one the pod saw when it reserved, so a rollback can
  neither pull a claim from under another holder nor undo a newer claim.

Worked example: p1 makes the claim on n1 (generation 1) and p2 joins it. p1's
bind fails: the claim stays Reserved on n1 for p2. Then p2's bind fails too:
no holder is left and the generation is still 1, so the group is Pending
again, free to be placed anew (a later claim would be generation 2, which a
stale rollback carrying generation 1 cannot touch).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TypeAlias


class ClaimState(StrEnum):
    """ClaimState is a group's reservation state, spelled as in ``status.groups[].state``.

    Example: ``ClaimState("Reserved") is ClaimState.RESERVED``.
    """

    PENDING = "Pending"
    RESERVED = "Reserved"
    RELEASED = "Released"


@dataclass(frozen=True)
class GroupClaim:
    """GroupClaim is one group's claim: where it is reserved, who holds it, and which claim it is.

    ``claim_generation`` counts the claims ever made for the group; it never
    decreases, so every claim is told apart from the ones before it.
    Reserved claims always name a node; Pending claims have none.

    Example: ``GroupClaim(ClaimState.RESERVED, "n1", frozenset({"uid-1"}), 1)``.
    """

    state: ClaimState = ClaimState.PENDING
    node: str | None = None
    holders: frozenset[str] = frozenset()
    claim_generation: int = 0

    def __post_init__(self) -> None:
        if self.claim_generation < 0:
            raise ValueError(f"claim_generation must not be negative, got {self.claim_generation}")
        if self.state is ClaimState.RESERVED and not self.node:
            raise ValueError("a Reserved claim must name its node")


@dataclass(frozen=True)
class Claimed:
    """Claimed is a successful ``reserve``: the new claim and what the pod must remember.

    ``made`` is True when this pod made the claim, False when it joined one.
    ``generation`` is the claim generation the pod holds; pass it back to
    ``unreserve`` if the bind fails.

    Example: ``reserve(GroupClaim(), "p1", "n1") == Claimed(GroupClaim(RESERVED, "n1",
    frozenset({"p1"}), 1), made=True, generation=1)``.
    """

    claim: GroupClaim
    made: bool
    generation: int


class ConflictReason(StrEnum):
    """ConflictReason says why a pod could not reserve its group's claim.

    Example: ``ConflictReason.RESERVED_ON_ANOTHER_NODE == "ReservedOnAnotherNode"``.
    """

    RESERVED_ON_ANOTHER_NODE = "ReservedOnAnotherNode"
    RELEASED = "Released"


@dataclass(frozen=True)
class ClaimConflict:
    """ClaimConflict is a refused ``reserve``; the claim is unchanged and the pod must be re-queued.

    Example: reserving on n2 a claim Reserved on n1 gives
    ``ClaimConflict(claim, ConflictReason.RESERVED_ON_ANOTHER_NODE, reserved_node="n1")``.
    """

    claim: GroupClaim
    reason: ConflictReason
    reserved_node: str | None = None


ReserveResult: TypeAlias = Claimed | ClaimConflict
"""ReserveResult is what ``reserve`` returns: match on Claimed or ClaimConflict."""


def reserve(claim: GroupClaim, pod_uid: str, node: str) -> ReserveResult:
    """reserve claims the group for the pod on the node, or joins the claim already there.

    * Pending: makes a claim, Reserved on ``node`` with the pod as its only
      holder and ``claim_generation + 1`` (any holders left on a Pending claim
      are stale and dropped);
    * Reserved on ``node``: the pod joins (or is already a holder), same
      generation;
    * Reserved elsewhere, or Released: ``ClaimConflict``, claim unchanged.

    Example::

        >>> made = reserve(GroupClaim(), "p1", "n1")
        >>> (made.claim.node, made.made, made.generation)
        ('n1', True, 1)
        >>> joined = reserve(made.claim, "p2", "n1")
        >>> (sorted(joined.claim.holders), joined.made, joined.generation)
        (['p1', 'p2'], False, 1)
        >>> reserve(joined.claim, "p3", "n2").reason
        <ConflictReason.RESERVED_ON_ANOTHER_NODE: 'ReservedOnAnotherNode'>
    """
    if not node:
        raise ValueError("reserve needs a node name")
    if claim.state is ClaimState.RELEASED:
        return ClaimConflict(claim, ConflictReason.RELEASED, reserved_node=claim.node)
    if claim.state is ClaimState.PENDING:
        generation = claim.claim_generation + 1
        made = GroupClaim(ClaimState.RESERVED, node, frozenset({pod_uid}), generation)
        return Claimed(made, made=True, generation=generation)
    if claim.node != node:
        return ClaimConflict(claim, ConflictReason.RESERVED_ON_ANOTHER_NODE, reserved_node=claim.node)
    joined = replace(claim, holders=claim.holders | {pod_uid})
    return Claimed(joined, made=False, generation=claim.claim_generation)


def unreserve(claim: GroupClaim, pod_uid: str, generation_seen: int) -> GroupClaim:
    """unreserve rolls back one pod's hold on the claim after its bind failed.

    Removes only ``pod_uid`` from the holders. The claim goes back to Pending
    (node cleared, generation kept) only when no holder remains *and*
    ``claim_generation == generation_seen`` (the ``Claimed.generation`` the
    pod got from ``reserve``). A pod that is not a holder changes nothing, so
    calling it twice is the same as once; a Released claim is final and never
    changes.

    Example: p1 made generation 1 and p2 joined::

        >>> claim = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1", "p2"}), 1)
        >>> unreserve(claim, "p1", 1).state          # p2 still holds it
        <ClaimState.RESERVED: 'Reserved'>
        >>> unreserve(unreserve(claim, "p1", 1), "p2", 1).state
        <ClaimState.PENDING: 'Pending'>
    """
    if claim.state is not ClaimState.RESERVED or pod_uid not in claim.holders:
        return claim
    holders = claim.holders - {pod_uid}
    if not holders and claim.claim_generation == generation_seen:
        return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)
    return replace(claim, holders=holders)


def release(claim: GroupClaim) -> GroupClaim:
    """release ends the group's reservation for good; the node and holders stay as a record.

    Called when ``release.release_decision`` says the group's work is done.
    Releasing twice is the same as once.

    Example: ``release(GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)).state
    == ClaimState.RELEASED`` and its node is still "n1".
    """
    if claim.state is ClaimState.RELEASED:
        return claim
    return replace(claim, state=ClaimState.RELEASED)
