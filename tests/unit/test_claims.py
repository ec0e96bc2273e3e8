"""Claims: reserve, join, roll back, release, and ownership under interleavings."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from reference_scheduler.core.claims import (
    ClaimConflict,
    Claimed,
    ClaimState,
    ConflictReason,
    GroupClaim,
    release,
    reserve,
    unreserve,
)

pytestmark = pytest.mark.unit

PENDING = GroupClaim()


def reserved(node: str, *holders: str, generation: int = 1) -> GroupClaim:
    return GroupClaim(ClaimState.RESERVED, node, frozenset(holders), generation)


class TestReserve:
    def test_pending_claim_is_made(self) -> None:
        result = reserve(GroupClaim(claim_generation=4), "p1", "n1")
        assert result == Claimed(reserved("n1", "p1", generation=5), made=True, generation=5)

    def test_same_node_is_joined(self) -> None:
        result = reserve(reserved("n1", "p1"), "p2", "n1")
        assert result == Claimed(reserved("n1", "p1", "p2"), made=False, generation=1)

    def test_existing_holder_rejoins_idempotently(self) -> None:
        claim = reserved("n1", "p1")
        assert reserve(claim, "p1", "n1") == Claimed(claim, made=False, generation=1)

    def test_other_node_is_a_conflict(self) -> None:
        claim = reserved("n1", "p1")
        assert reserve(claim, "p2", "n2") == ClaimConflict(
            claim, ConflictReason.RESERVED_ON_ANOTHER_NODE, reserved_node="n1"
        )

    def test_released_is_refused(self) -> None:
        claim = release(reserved("n1", "p1"))
        result = reserve(claim, "p2", "n1")
        assert isinstance(result, ClaimConflict)
        assert result.reason is ConflictReason.RELEASED
        assert result.claim == claim

    def test_stale_holders_on_a_pending_claim_are_dropped(self) -> None:
        stale = GroupClaim(ClaimState.PENDING, None, frozenset({"ghost"}), 2)
        result = reserve(stale, "p1", "n1")
        assert isinstance(result, Claimed)
        assert result.claim.holders == {"p1"}

    def test_node_is_required(self) -> None:
        with pytest.raises(ValueError, match="node"):
            reserve(PENDING, "p1", "")


class TestUnreserve:
    def test_maker_alone_rolls_back_to_pending(self) -> None:
        assert unreserve(reserved("n1", "p1", generation=3), "p1", 3) == GroupClaim(claim_generation=3)

    def test_rollback_keeps_a_claim_another_pod_holds(self) -> None:
        assert unreserve(reserved("n1", "p1", "p2"), "p1", 1) == reserved("n1", "p2")

    def test_last_holder_of_the_same_generation_rolls_back(self) -> None:
        claim = unreserve(reserved("n1", "p1", "p2"), "p1", 1)
        assert unreserve(claim, "p2", 1) == GroupClaim(claim_generation=1)

    def test_stale_generation_never_clears(self) -> None:
        assert unreserve(reserved("n1", "p1", generation=2), "p1", 1) == reserved("n1", generation=2)

    def test_non_holder_changes_nothing(self) -> None:
        claim = reserved("n1", "p1")
        assert unreserve(claim, "p9", 1) is claim

    def test_idempotent(self) -> None:
        once = unreserve(reserved("n1", "p1", "p2"), "p1", 1)
        assert unreserve(once, "p1", 1) == once

    def test_released_is_final(self) -> None:
        claim = release(reserved("n1", "p1"))
        assert unreserve(claim, "p1", 1) is claim

    def test_pending_unchanged(self) -> None:
        assert unreserve(PENDING, "p1", 0) is PENDING


class TestRelease:
    def test_release_keeps_the_record(self) -> None:
        assert release(reserved("n1", "p1")) == GroupClaim(ClaimState.RELEASED, "n1", frozenset({"p1"}), 1)

    def test_release_twice(self) -> None:
        once = release(reserved("n1"))
        assert release(once) is once

    def test_pending_group_can_be_released(self) -> None:
        assert release(PENDING).state is ClaimState.RELEASED


class TestValidation:
    def test_reserved_needs_a_node(self) -> None:
        with pytest.raises(ValueError, match="node"):
            GroupClaim(ClaimState.RESERVED, None)

    def test_generation_not_negative(self) -> None:
        with pytest.raises(ValueError, match="negative"):
            GroupClaim(claim_generation=-1)

    def test_state_reads_the_record_spelling(self) -> None:
        assert ClaimState("Reserved") is ClaimState.RESERVED


PODS = ("p1", "p2", "p3", "p4")
NODES = ("n1", "n2", "n3")


class ClaimInterleavings(RuleBasedStateMachine):
    """Several pods race to reserve the group and roll back; the claim must stay owned.

    The model remembers, per pod, the generation ``reserve`` gave it (the
    runtime keeps this in the pod's cycle state), and which node each
    generation was made on.
    """

    def __init__(self) -> None:
        super().__init__()
        self.claim = GroupClaim()
        self.seen: dict[str, int] = {}
        self.node_of_generation: dict[int, str] = {}
        self.released = False

    @rule(pod=st.sampled_from(PODS), node=st.sampled_from(NODES))
    def reserve(self, pod: str, node: str) -> None:
        before = self.claim
        result = reserve(before, pod, node)
        if isinstance(result, ClaimConflict):
            assert result.claim == before
            if result.reason is ConflictReason.RELEASED:
                assert before.state is ClaimState.RELEASED
            else:
                assert before.state is ClaimState.RESERVED and before.node != node
            return
        claim = result.claim
        assert claim.state is ClaimState.RESERVED and claim.node == node and pod in claim.holders
        assert result.generation == claim.claim_generation
        if result.made:
            assert before.state is ClaimState.PENDING
            assert claim.claim_generation == before.claim_generation + 1
            assert claim.claim_generation not in self.node_of_generation, "generation reused"
            self.node_of_generation[claim.claim_generation] = node
        else:
            assert before.state is ClaimState.RESERVED and before.node == node
            assert claim.claim_generation == before.claim_generation
            assert claim.holders == before.holders | {pod}
        # One generation, one node: never booked twice.
        assert self.node_of_generation[claim.claim_generation] == node
        self.seen[pod] = result.generation
        self.claim = claim

    @rule(pod=st.sampled_from(PODS), stale=st.booleans())
    def unreserve(self, pod: str, stale: bool) -> None:
        before = self.claim
        generation = self.seen.get(pod, 0) - (1 if stale else 0)
        after = unreserve(before, pod, generation)
        assert unreserve(after, pod, generation) == after, "unreserve is not idempotent"
        assert after.claim_generation == before.claim_generation
        if before.state is not ClaimState.RESERVED or pod not in before.holders:
            assert after == before
        else:
            assert after.holders == before.holders - {pod}
            others = before.holders - {pod}
            if others or generation != before.claim_generation:
                # Never pull a claim from another holder, never undo a newer claim.
                assert after.state is ClaimState.RESERVED and after.node == before.node
            else:
                assert after.state is ClaimState.PENDING and after.node is None
        self.claim = after

    @rule()
    def release(self) -> None:
        self.claim = release(self.claim)
        self.released = True

    @invariant()
    def state_is_well_formed(self) -> None:
        claim = self.claim
        if claim.state is ClaimState.RESERVED:
            assert claim.node is not None
            assert claim.node == self.node_of_generation[claim.claim_generation]
            # Every holder reserved in this generation.
            assert all(self.seen.get(holder) == claim.claim_generation for holder in claim.holders)
        if claim.state is ClaimState.PENDING:
            assert claim.node is None and not claim.holders
        if self.released:
            assert claim.state is ClaimState.RELEASED
        assert claim.claim_generation == len(self.node_of_generation)


ClaimInterleavings.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)
TestClaimInterleavings = ClaimInterleavings.TestCase
