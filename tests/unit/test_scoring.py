"""Scores: kube-scheduler's least/most-allocated, with reservations counted as allocated."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.headroom import ActiveReservation, NodeView, PodUsage
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.resources import ZERO, Resources
from reference_scheduler.core.scoring import (
    DEFAULT_CPU_MILLIS,
    DEFAULT_MEMORY_BYTES,
    MAX_NODE_SCORE,
    Strategy,
    allocated,
    least_allocated_resource_score,
    most_allocated_resource_score,
    non_zero,
    score,
)

pytestmark = pytest.mark.unit

GIB = 1024**3
A = GroupKey("ci", "run-a", "g0")
B = GroupKey("ci", "run-b", "g0")


def example_node() -> NodeView:
    return NodeView("n1", Resources(4000, 8 * GIB), 110, (PodUsage("x", Resources(1000, 2 * GIB)),))


@pytest.mark.parametrize(
    ("requested", "capacity", "least", "most"),
    [
        pytest.param(0, 4000, 100, 0, id="empty-node"),
        pytest.param(3000, 4000, 25, 75, id="three-quarters"),
        pytest.param(4000, 4000, 0, 100, id="full"),
        pytest.param(5000, 4000, 0, 100, id="over-capacity"),
        pytest.param(1, 3, 66, 33, id="integer-division-floors"),
        pytest.param(10, 0, 0, 0, id="no-capacity"),
    ],
)
def test_resource_scores(requested: int, capacity: int, least: int, most: int) -> None:
    assert least_allocated_resource_score(requested, capacity) == least
    assert most_allocated_resource_score(requested, capacity) == most


def test_module_worked_example() -> None:
    reservations = (ActiveReservation(A, "n1", Resources(1000, 0)),)
    incoming = Resources(1000, 2 * GIB)
    assert score(example_node(), reservations, incoming, group=B) == 37
    assert score(example_node(), reservations, incoming, group=B, strategy=Strategy.MOST_ALLOCATED) == 62


def test_reservations_count_as_allocated() -> None:
    node = NodeView("n1", Resources(4000, 8 * GIB), 110)
    reserved = (ActiveReservation(A, "n1", Resources(3000, 6 * GIB)),)
    incoming = Resources(1000, 2 * GIB)
    assert score(node, (), incoming, group=B) > score(node, reserved, incoming, group=B)
    assert score(node, reserved, incoming, group=B) == 0


def test_a_groups_own_reservation_and_pods_are_not_counted_against_it() -> None:
    node = NodeView("n1", Resources(4000, 4 * GIB), 110, (PodUsage("a-1", Resources(1000, GIB), A),))
    reservations = (ActiveReservation(A, "n1", Resources(3000, 2 * GIB)),)
    assert allocated(node, reservations, A) == ZERO
    assert allocated(node, reservations, B) == Resources(3000, 2 * GIB)


def test_zero_requests_score_as_defaults() -> None:
    assert non_zero(ZERO) == Resources(DEFAULT_CPU_MILLIS, DEFAULT_MEMORY_BYTES)
    assert non_zero(Resources(5, 7)) == Resources(5, 7)
    busy = NodeView("n1", Resources(1000, 1 * GIB), 110, tuple(PodUsage(str(i), ZERO) for i in range(5)))
    idle = NodeView("n2", Resources(1000, 1 * GIB), 110)
    assert score(idle, (), ZERO) > score(busy, (), ZERO)


def test_resource_without_capacity_is_left_out_of_the_average() -> None:
    node = NodeView("n1", Resources(4000, 0), 110)
    assert score(node, (), Resources(1000, 0)) == 75


def test_strategy_from_its_name() -> None:
    assert Strategy("LeastAllocated") is Strategy.LEAST_ALLOCATED


amounts = st.builds(Resources, cpu=st.integers(0, 16000), memory=st.integers(0, 64 * GIB), other=st.just(()))


@given(
    allocatable=amounts,
    pods=st.lists(amounts, max_size=5),
    peak=amounts,
    incoming=amounts,
    strategy=st.sampled_from(Strategy),
)
def test_scores_stay_in_range_and_reserving_never_helps_least_allocated(
    allocatable: Resources, pods: list[Resources], peak: Resources, incoming: Resources, strategy: Strategy
) -> None:
    node = NodeView("n1", allocatable, 110, tuple(PodUsage(str(i), p) for i, p in enumerate(pods)))
    reserved = (ActiveReservation(A, "n1", peak),)
    for reservations in ((), reserved):
        assert 0 <= score(node, reservations, incoming, group=B, strategy=strategy) <= MAX_NODE_SCORE
    if strategy is Strategy.LEAST_ALLOCATED:
        assert score(node, reserved, incoming, group=B) <= score(node, (), incoming, group=B)
    else:
        assert score(node, reserved, incoming, group=B, strategy=strategy) >= score(
            node, (), incoming, group=B, strategy=strategy
        )
