"""Claim, release and requeue latencies from hand-written journals: each expected sample worked out by hand."""

from __future__ import annotations

import pytest

from harness.monitor.journal import (
    GroupReleased,
    GroupReserved,
    Moment,
    PodBound,
    PodCreated,
    PodUnschedulable,
    ReleaseDue,
    RoomFreed,
)
from harness.monitor.latencies import Latencies, claim_latencies, latencies_of, release_latencies, requeue_latencies

pytestmark = pytest.mark.unit

RUN_A = ("ns", "a", "uid-a")
RUN_B = ("ns", "b", "uid-b")

#: A run that holds n1 while B waits for it, as peak_holds_b_back plays out.
#:   claim A: 0.62 - 0.50 = 0.12; claim B: 6.55 - 1.00 = 5.55 (B's first pod waited)
#:   release A: 6.40 - 6.25 = 0.15
#:   requeue b-x: bound 6.60 - the last room freed on n1 before it, A's group at 6.40 = 0.20
STORY: list[Moment] = [
    PodCreated(0.50, "a-fetch", "ns", "a", "fetch"),
    GroupReserved(0.62, RUN_A, "a", "source", ("fetch", "build"), 1),
    PodBound(0.70, "a-fetch", "n1"),
    PodCreated(1.00, "b-x", "ns", "b", "x"),
    PodUnschedulable(1.05, "b-x"),
    PodCreated(3.00, "a-build", "ns", "a", "build"),
    RoomFreed(3.00, "n1", "pod ns/a-fetch finished"),
    PodBound(3.10, "a-build", "n1"),
    RoomFreed(5.00, "n1", "pod ns/a-build finished"),
    RoomFreed(5.50, "n2", "pod ns/other finished"),
    ReleaseDue(6.25, RUN_A, "source"),
    GroupReleased(6.40, RUN_A, "source"),
    RoomFreed(6.40, "n1", "group ns/a/source left Reserved"),
    GroupReserved(6.55, RUN_B, "b", "g", ("x",), 1),
    PodBound(6.60, "b-x", "n1"),
]


def test_the_story_gives_every_latency_worked_out_by_hand() -> None:
    found = latencies_of(STORY)
    assert found.claim == pytest.approx((0.12, 5.55))
    assert found.release == pytest.approx((0.15,))
    assert found.requeue == pytest.approx((0.20,))


# --- claim ---


def test_a_claim_runs_from_the_groups_first_pod_not_its_later_ones() -> None:
    moments: list[Moment] = [
        PodCreated(1.0, "p1", "ns", "a", "fetch"),
        PodCreated(1.5, "p2", "ns", "a", "build"),
        GroupReserved(2.0, RUN_A, "a", "source", ("fetch", "build"), 1),
    ]
    assert claim_latencies(moments) == [1.0]


def test_pods_of_another_task_run_or_namespace_and_pods_after_the_claim_do_not_count() -> None:
    moments: list[Moment] = [
        PodCreated(0.1, "plain", "ns", "a", "report"),     # a's task outside the group
        PodCreated(0.2, "b-fetch", "ns", "b", "fetch"),    # another run, same task name
        PodCreated(0.3, "other-ns", "ns2", "a", "fetch"),  # same run name in another namespace
        PodCreated(0.4, "filler", "ns", None, None),       # a pod of no run
        PodCreated(1.0, "a-fetch", "ns", "a", "fetch"),
        GroupReserved(1.25, RUN_A, "a", "source", ("fetch",), 1),
        PodCreated(1.5, "a-fetch-retry", "ns", "a", "fetch"),
    ]
    assert claim_latencies(moments) == [0.25]


def test_a_group_never_reserved_gives_no_sample_not_zero() -> None:
    assert claim_latencies([PodCreated(1.0, "a-fetch", "ns", "a", "fetch")]) == []


def test_a_claim_whose_pods_creation_was_not_seen_is_skipped() -> None:
    # The pod came in a re-list after a gap: the journal has no PodCreated for it.
    assert claim_latencies([GroupReserved(2.0, RUN_A, "a", "source", ("fetch",), 1)]) == []


def test_only_the_first_claim_counts_a_claim_after_a_rollback_or_lost_node_does_not() -> None:
    moments: list[Moment] = [
        PodCreated(1.0, "a-fetch", "ns", "a", "fetch"),
        GroupReserved(1.5, RUN_A, "a", "source", ("fetch",), 1),
        GroupReserved(9.0, RUN_A, "a", "source", ("fetch",), 2),
    ]
    assert claim_latencies(moments) == [0.5]
    assert claim_latencies(moments[:1] + moments[2:]) == []  # first seen at generation 2: its first claim was not seen


def test_a_run_made_again_under_its_name_is_timed_from_its_own_pods_by_the_uid_label() -> None:
    again = ("ns", "a", "uid-a2")
    moments: list[Moment] = [
        PodCreated(1.0, "a1", "ns", "a", "fetch", "uid-a"),
        GroupReserved(1.5, RUN_A, "a", "source", ("fetch",), 1),
        PodCreated(3.0, "a2", "ns", "a", "fetch", "uid-a2"),
        GroupReserved(4.0, again, "a", "source", ("fetch",), 1),
    ]
    assert claim_latencies(moments) == [0.5, 1.0]  # not 3.0, from the first run's pod


# --- release ---


def test_a_release_runs_from_the_read_that_first_showed_it_due() -> None:
    moments: list[Moment] = [ReleaseDue(4.25, RUN_A, "source"), ReleaseDue(6.25, RUN_A, "source"), GroupReleased(7.0, RUN_A, "source")]
    assert release_latencies(moments) == [2.75]


def test_a_release_before_any_read_showed_it_due_is_not_counted() -> None:
    assert release_latencies([GroupReleased(4.0, RUN_A, "source")]) == []
    assert release_latencies([GroupReleased(4.0, RUN_A, "source"), ReleaseDue(4.1, RUN_A, "source")]) == []


def test_a_release_due_but_never_seen_released_gives_no_sample() -> None:
    assert release_latencies([ReleaseDue(4.0, RUN_A, "source")]) == []


def test_each_group_has_its_own_due_moment() -> None:
    moments: list[Moment] = [
        ReleaseDue(1.0, RUN_A, "source"),
        ReleaseDue(2.0, RUN_A, "reports"),
        GroupReleased(2.5, RUN_A, "reports"),
        GroupReleased(3.0, RUN_A, "source"),
        GroupReleased(3.0, RUN_B, "source"),  # B's was never seen due
    ]
    assert release_latencies(moments) == [0.5, 2.0]


# --- requeue ---


def test_a_requeue_runs_from_the_last_room_freed_on_its_node_before_the_bind() -> None:
    moments: list[Moment] = [
        PodUnschedulable(2.0, "b"),
        RoomFreed(5.0, "n1", "pod finished"),
        RoomFreed(6.0, "n1", "group left Reserved"),
        PodBound(6.5, "b", "n1"),
        RoomFreed(7.0, "n1", "after the bind: not its cause"),
    ]
    assert requeue_latencies(moments) == [0.5]


def test_a_pod_never_marked_unschedulable_was_not_waiting_for_room() -> None:
    moments: list[Moment] = [RoomFreed(5.0, "n1", "pod finished"), PodBound(5.2, "b", "n1")]
    assert requeue_latencies(moments) == []


def test_room_freed_before_the_pod_waited_or_on_another_node_does_not_count() -> None:
    moments: list[Moment] = [
        RoomFreed(1.0, "n1", "before the mark"),
        PodUnschedulable(2.0, "b"),
        RoomFreed(3.0, "n2", "another node"),
        PodBound(3.5, "b", "n1"),
    ]
    assert requeue_latencies(moments) == []


def test_every_waiting_pod_has_its_own_sample() -> None:
    moments: list[Moment] = [
        PodUnschedulable(1.0, "b"),
        PodUnschedulable(1.0, "c"),
        PodUnschedulable(4.0, "c"),  # marked again: its first mark counts
        RoomFreed(3.0, "n1", "group left Reserved"),
        PodBound(3.25, "b", "n1"),
        PodBound(3.5, "c", "n1"),
    ]
    assert requeue_latencies(moments) == [0.25, 0.5]


# --- pooling and the wire ---


def test_pooled_keeps_every_sample_of_every_part() -> None:
    pooled = Latencies.pooled([Latencies(claim=(0.1,), requeue=(2.0,)), Latencies(claim=(0.3, 0.2), release=(1.0,))])
    assert pooled == Latencies(claim=(0.1, 0.3, 0.2), release=(1.0,), requeue=(2.0,))
    assert Latencies.pooled([]) == Latencies()


def test_the_wire_carries_the_samples_as_plain_lists_and_back() -> None:
    found = latencies_of(STORY)
    wire = found.to_wire()
    assert set(wire) == {"claim", "release", "requeue"} and all(isinstance(v, list) for v in wire.values())
    assert Latencies.from_wire(wire) == found
    assert Latencies.from_wire({"claim": [1]}) == Latencies(claim=(1.0,))
