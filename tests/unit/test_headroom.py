"""Headroom accounting: each pod and each group's residual counted once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.headroom import (
    ActiveReservation,
    GroupDemand,
    NodeView,
    PodUsage,
    available_for,
    fit,
    foreign_reserved,
    in_report_order,
    required_for,
    residual,
)
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.reasons import (
    INSUFFICIENT_RESOURCE_MESSAGE,
    GroupPeakExceedsNode,
    GroupReservedOnAnotherNode,
    InsufficientResource,
    TooManyPods,
)
from reference_scheduler.core.resources import ZERO, Resources, total

pytestmark = pytest.mark.unit

A = GroupKey("ci", "run-a", "g0")
B = GroupKey("ci", "run-b", "g0")
C = GroupKey("ci", "run-c", "g0")
GIB = 1024**3


def cpu(millis: int) -> Resources:
    return Resources(cpu=millis)


def seed_node(*extra: PodUsage) -> NodeView:
    """The seed: 4800m allocatable, group A's 200m pod running."""
    return NodeView("n1", cpu(4800), 110, (PodUsage("a-1", cpu(200), A), *extra))


SEED_RESERVATIONS = (ActiveReservation(A, "n1", cpu(3800)),)


def naive_available(node: NodeView, reservations: tuple[ActiveReservation, ...], group: GroupKey) -> Resources:
    """The prototype's bug: every pod and every other group's whole peak."""
    pods = total(p.request for p in node.pods if p.group != group)
    peaks = total(r.peak for r in reservations if r.node == node.name and r.group != group)
    return node.allocatable - pods - peaks


class TestSeed:
    def test_foreign_reserved_is_peak_minus_running_pods(self) -> None:
        assert foreign_reserved(seed_node(), SEED_RESERVATIONS, excluding=B) == cpu(3600)

    def test_group_sees_its_own_pods_inside_its_peak(self) -> None:
        assert foreign_reserved(seed_node(), SEED_RESERVATIONS, excluding=A) == ZERO
        assert available_for(seed_node(), SEED_RESERVATIONS, A) == cpu(4800)

    def test_b_sees_1000m_not_800m(self) -> None:
        assert available_for(seed_node(), SEED_RESERVATIONS, B) == cpu(1000)
        assert naive_available(seed_node(), SEED_RESERVATIONS, B) == cpu(800)

    def test_b_is_rejected_with_the_node_level_numbers(self) -> None:
        pod = PodUsage("b-1", cpu(500), B)
        failures = fit(seed_node(), SEED_RESERVATIONS, pod, GroupDemand(B, cpu(2000)))
        assert failures == [
            InsufficientResource(
                resource="cpu",
                requested=2000,
                available=1000,
                allocatable=4800,
                used_by_pods=200,
                reserved_by_others=3600,
            )
        ]
        assert failures[0].message() == (
            "Insufficient cpu: requires 2000m, available 1000m "
            "(allocatable 4800m, pods 200m, reserved by other groups 3600m)"
        )
        assert failures[0].message() == INSUFFICIENT_RESOURCE_MESSAGE.format(
            resource="cpu",
            requested="2000m",
            available="1000m",
            allocatable="4800m",
            used_by_pods="200m",
            reserved_by_others="3600m",
        )

    def test_correct_accounting_admits_what_double_counting_rejects(self) -> None:
        pod = PodUsage("b-1", cpu(100), B)
        demand = GroupDemand(B, cpu(900))
        assert fit(seed_node(), SEED_RESERVATIONS, pod, demand) == []
        assert not demand.peak.fits_in(naive_available(seed_node(), SEED_RESERVATIONS, B))

    def test_exactly_full_fits(self) -> None:
        pod = PodUsage("b-1", cpu(100), B)
        assert fit(seed_node(), SEED_RESERVATIONS, pod, GroupDemand(B, cpu(1000))) == []
        assert len(fit(seed_node(), SEED_RESERVATIONS, pod, GroupDemand(B, cpu(1001)))) == 1


class TestFitCases:
    def test_plain_pod_counts_every_residual(self) -> None:
        pod = PodUsage("x-1", cpu(1001))
        [failure] = fit(seed_node(), SEED_RESERVATIONS, pod, None)
        assert isinstance(failure, InsufficientResource)
        assert (failure.available, failure.reserved_by_others, failure.used_by_pods) == (1000, 3600, 200)
        assert fit(seed_node(), SEED_RESERVATIONS, PodUsage("x-1", cpu(1000)), None) == []

    def test_reserved_group_pod_uses_its_own_residual(self) -> None:
        # A's second task (1500m) fits in A's own reservation, not in the 1000m free.
        demand = GroupDemand(A, cpu(3800), node="n1")
        assert fit(seed_node(), SEED_RESERVATIONS, PodUsage("a-2", cpu(1500), A), demand) == []

    def test_reserved_group_pod_counts_its_groups_running_pods(self) -> None:
        # Allocatable 4800 - pods 200 - no foreign residual = 4600 for A's own pods.
        demand = GroupDemand(A, cpu(3800), node="n1")
        [failure] = fit(seed_node(), SEED_RESERVATIONS, PodUsage("a-2", cpu(4601), A), demand)
        assert isinstance(failure, InsufficientResource)
        assert (failure.requested, failure.available, failure.used_by_pods, failure.reserved_by_others) == (
            4601,
            4600,
            200,
            0,
        )

    def test_reserved_group_only_passes_its_node(self) -> None:
        other = NodeView("n2", cpu(64000), 110)
        demand = GroupDemand(A, cpu(3800), node="n1")
        assert fit(other, SEED_RESERVATIONS, PodUsage("a-2", cpu(100), A), demand) == [
            GroupReservedOnAnotherNode(A, "n1")
        ]

    def test_reserved_group_pod_still_respects_other_groups(self) -> None:
        node = seed_node()
        reservations = (*SEED_RESERVATIONS, ActiveReservation(B, "n1", cpu(1000)))
        demand = GroupDemand(B, cpu(1000), node="n1")
        # B's residual is B's own; A's 3600m residual is not: 4800 - 200 - 3600 = 1000.
        assert fit(node, reservations, PodUsage("b-1", cpu(1000), B), demand) == []
        assert len(fit(node, reservations, PodUsage("b-1", cpu(1001), B), demand)) == 1

    def test_memory_and_cpu_reported_separately(self) -> None:
        node = NodeView("n1", Resources(cpu=1000, memory=1 * GIB), 110)
        failures = fit(node, (), PodUsage("x", Resources(cpu=2000, memory=2 * GIB)), None)
        assert [f.resource for f in failures if isinstance(f, InsufficientResource)] == ["cpu", "memory"]
        assert "requires 2Gi, available 1Gi" in failures[1].message()

    def test_zero_request_fits_an_overcommitted_node(self) -> None:
        node = NodeView("n1", cpu(1000), 110, (PodUsage("x", cpu(1500)),))
        assert fit(node, (), PodUsage("y", ZERO), None) == []

    def test_too_many_pods(self) -> None:
        node = NodeView("n1", cpu(4800), 1, (PodUsage("x", cpu(10)),))
        assert fit(node, (), PodUsage("y", cpu(10)), None) == [TooManyPods(allowed=1, bound=1)]

    def test_pod_already_listed_does_not_count_against_itself(self) -> None:
        node = NodeView("n1", cpu(1000), 1, (PodUsage("x", cpu(1000)),))
        assert fit(node, (), PodUsage("x", cpu(1000)), None) == []

    def test_reservation_on_another_node_costs_nothing_here(self) -> None:
        reservations = (ActiveReservation(A, "n2", cpu(4000)),)
        assert available_for(NodeView("n1", cpu(4800), 110), reservations, B) == cpu(4800)

    def test_group_running_beyond_its_peak_counts_its_pods(self) -> None:
        node = NodeView("n1", cpu(4800), 110, (PodUsage("a-1", cpu(3000), A),))
        reservation = ActiveReservation(A, "n1", cpu(2000))
        assert residual(node, reservation) == ZERO
        assert available_for(node, (reservation,), B) == cpu(1800)

    def test_duplicate_reservation_of_one_group_counts_once(self) -> None:
        reservations = (*SEED_RESERVATIONS, ActiveReservation(A, "n1", cpu(3800)))
        assert available_for(seed_node(), reservations, B) == cpu(1000)

    def test_required_for(self) -> None:
        assert required_for(cpu(500), None) == cpu(500)
        assert required_for(cpu(500), GroupDemand(B, cpu(2000))) == cpu(2000)
        assert required_for(cpu(500), GroupDemand(B, cpu(2000), node="n1")) == cpu(500)
        assert required_for(cpu(2500), GroupDemand(B, cpu(2000))) == cpu(2500)


# --- properties ------------------------------------------------------------

GROUPS = (A, B, C)
# Amounts of cpu and memory and, sometimes, of other resources: the laws hold for each resource alike.
OTHER_RESOURCES = ("ephemeral-storage", "example.com/gpu", "hugepages-2Mi")
amounts = st.builds(
    lambda cpu, memory, other: Resources.of({"cpu": cpu, "memory": memory, **other}),
    st.integers(0, 8000),
    st.integers(0, 16 * GIB),
    st.dictionaries(st.sampled_from(OTHER_RESOURCES), st.integers(0, 8), max_size=2),
)
pods = st.lists(
    st.builds(PodUsage, uid=st.uuids().map(str), request=amounts, group=st.sampled_from((*GROUPS, None))),
    max_size=8,
)
nodes = st.builds(
    NodeView, name=st.just("n1"), allocatable=amounts, max_pods=st.just(110), pods=pods.map(tuple)
)
reservation_lists = st.lists(
    st.builds(ActiveReservation, group=st.sampled_from(GROUPS), node=st.sampled_from(("n1", "n2")), peak=amounts),
    max_size=3,
    unique_by=lambda r: r.group,
).map(tuple)
viewers = st.sampled_from((*GROUPS, None))


def pods_of(node: NodeView, group: GroupKey | None) -> Resources:
    return total(p.request for p in node.pods if p.group == group)


@given(node=nodes, reservations=reservation_lists, viewer=viewers)
def test_each_group_weighs_max_of_peak_and_pods_never_their_sum(
    node: NodeView, reservations: tuple[ActiveReservation, ...], viewer: GroupKey | None
) -> None:
    """allocatable - available == plain pods + per other group max(peak, its pods on the node)."""
    expected = pods_of(node, None)  # plain pods always count
    peaks = {r.group: r.peak for r in reservations if r.node == "n1"}
    for group in GROUPS:
        if group == viewer:
            continue
        expected = expected + pods_of(node, group).max(peaks.get(group, ZERO))
    assert node.allocatable - available_for(node, reservations, viewer) == expected


@given(node=nodes, reservations=reservation_lists, group=st.sampled_from(GROUPS), request=amounts)
def test_adding_a_groups_pod_leaves_its_own_view_unchanged(
    node: NodeView, reservations: tuple[ActiveReservation, ...], group: GroupKey, request: Resources
) -> None:
    grown = NodeView(node.name, node.allocatable, node.max_pods, (*node.pods, PodUsage("new", request, group)))
    assert available_for(grown, reservations, group) == available_for(node, reservations, group)


@given(
    node=nodes,
    reservations=reservation_lists,
    group=st.sampled_from(GROUPS),
    viewer=viewers,
    request=amounts,
)
def test_adding_a_groups_pod_costs_others_at_most_its_request(
    node: NodeView,
    reservations: tuple[ActiveReservation, ...],
    group: GroupKey,
    viewer: GroupKey | None,
    request: Resources,
) -> None:
    grown = NodeView(node.name, node.allocatable, node.max_pods, (*node.pods, PodUsage("new", request, group)))
    drop = available_for(node, reservations, viewer) - available_for(grown, reservations, viewer)
    assert ZERO.fits_in(drop)
    assert drop.fits_in(request)


@given(node=nodes, reservations=reservation_lists, viewer=viewers, extra=amounts, group=st.sampled_from(GROUPS))
def test_a_new_reservation_never_frees_room(
    node: NodeView,
    reservations: tuple[ActiveReservation, ...],
    viewer: GroupKey | None,
    extra: Resources,
    group: GroupKey,
) -> None:
    if group == viewer or any(r.group == group for r in reservations):
        return
    more = (*reservations, ActiveReservation(group, "n1", extra))
    assert available_for(node, more, viewer).fits_in(available_for(node, reservations, viewer))


@given(node=nodes, reservations=reservation_lists, group=st.sampled_from(GROUPS), peak=amounts, request=amounts)
def test_fit_agrees_with_available_for_an_unassigned_group(
    node: NodeView,
    reservations: tuple[ActiveReservation, ...],
    group: GroupKey,
    peak: Resources,
    request: Resources,
) -> None:
    reservations = tuple(r for r in reservations if r.group != group)
    failures = fit(node, reservations, PodUsage("new", request, group), GroupDemand(group, peak))
    need = peak.max(request)
    available = available_for(node, reservations, group)
    expected = {name for name, wanted in need.items() if wanted > 0 and wanted > available.get(name)}
    assert {f.resource for f in failures if isinstance(f, (InsufficientResource, GroupPeakExceedsNode))} == expected
    for failure in failures:
        if isinstance(failure, InsufficientResource):
            assert failure.available == failure.allocatable - failure.used_by_pods - failure.reserved_by_others
            assert failure.requested <= failure.allocatable, "a peak larger than the whole node is GroupPeakExceedsNode"
        if isinstance(failure, GroupPeakExceedsNode):
            assert failure.peak > failure.allocatable and failure.group == group


def test_a_peak_larger_than_the_node_says_no_claim_can_hold_it_even_on_an_empty_node() -> None:
    empty = NodeView("n1", Resources(cpu=4800, memory=8 * GIB), 110, ())
    failures = fit(empty, (), PodUsage("checkout", cpu(240), B), GroupDemand(B, Resources(cpu=5760, memory=GIB)))
    assert failures == [GroupPeakExceedsNode(group=B, resource="cpu", peak=5760, allocatable=4800)]
    assert failures[0].message() == (
        "group ci/run-b/g0's cpu peak 5760m exceeds the node's allocatable 4800m: no claim can hold it here, even on an empty node "
        "(docs/contract.md section 7, a group no node can hold)"
    )
    assert failures[0].summary() == "node(s) smaller than group ci/run-b/g0's cpu peak 5760m"


def test_a_placed_groups_pod_and_a_plain_pod_are_never_told_the_peak_exceeds_the_node() -> None:
    empty = NodeView("n1", cpu(4800), 110, ())
    placed = fit(empty, (), PodUsage("test-1", cpu(5000), B), GroupDemand(B, cpu(9000), node="n1"))
    plain = fit(empty, (), PodUsage("big", cpu(5000), None), None)
    assert [type(f) for f in placed + plain] == [InsufficientResource, InsufficientResource]


# --- every resource ---------------------------------------------------------------

GPU = "example.com/gpu"


def test_a_resource_the_node_does_not_advertise_is_insufficient_with_allocatable_zero() -> None:
    node = NodeView("n1", Resources(cpu=4800, memory=8 * GIB), 110, ())
    pod = PodUsage("p", Resources.of({"cpu": 100, GPU: 1}), None)
    (failure,) = fit(node, (), pod, None)
    assert isinstance(failure, InsufficientResource)
    assert failure.summary() == "Insufficient example.com/gpu"
    assert (failure.requested, failure.available, failure.allocatable) == (1, 0, 0)


def test_failures_come_in_kube_schedulers_order() -> None:
    node = NodeView("n1", Resources.of({"cpu": 100, "memory": 100, "ephemeral-storage": 1, "hugepages-2Mi": 1, GPU: 1}), 0, ())
    pod = PodUsage("p", Resources.of({"cpu": 200, "memory": 200, "nvidia.com/gpu": 1, GPU: 2, "hugepages-2Mi": 2, "ephemeral-storage": 2}), None)
    assert [f.summary() for f in fit(node, (), pod, None)] == [
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient ephemeral-storage",
        "Insufficient example.com/gpu",
        "Insufficient hugepages-2Mi",
        "Insufficient nvidia.com/gpu",
    ]


def test_a_pod_requesting_nothing_fits_a_full_node_with_room_for_one_more_pod() -> None:
    node = NodeView("n1", Resources(cpu=100), 2, (PodUsage("a", Resources.of({"cpu": 500, GPU: 4}), None),))
    assert fit(node, (), PodUsage("p", ZERO, None), None) == []


def test_another_groups_gpu_residual_is_held_for_it() -> None:
    """A Reserved with a 1-GPU peak and no GPU pod yet: the node's only GPU is held; A's own GPU pod still fits."""
    node = NodeView("n1", Resources.of({"cpu": 4000, "memory": 8 * GIB, GPU: 1}), 110, (PodUsage("a-build", cpu(1000), A),))
    held = (ActiveReservation(A, "n1", Resources.of({"cpu": 1000, GPU: 1})),)
    (failure,) = fit(node, held, PodUsage("b", Resources.of({"cpu": 100, GPU: 1}), None), None)
    assert isinstance(failure, InsufficientResource)
    assert failure.message() == (
        "Insufficient example.com/gpu: requires 1, available 0 (allocatable 1, pods 0, reserved by other groups 1)"
    )
    assert fit(node, held, PodUsage("a-test", Resources.of({"cpu": 1000, GPU: 1}), A), GroupDemand(A, held[0].peak, "n1")) == []


def test_a_gpu_peak_larger_than_the_node_says_no_claim_can_hold_it() -> None:
    node = NodeView("n1", Resources.of({"cpu": 4000, "memory": 8 * GIB, GPU: 1}), 110, ())
    (failure,) = fit(node, (), PodUsage("b", cpu(100), B), GroupDemand(B, Resources.of({"cpu": 100, GPU: 2})))
    assert isinstance(failure, GroupPeakExceedsNode)
    assert (failure.resource, failure.peak, failure.allocatable) == (GPU, 2, 1)


def test_ephemeral_storage_residuals_are_per_resource_like_cpu() -> None:
    node = NodeView("n1", Resources.of({"cpu": 4000, "ephemeral-storage": 10 * GIB}), 110, (PodUsage("a-1", Resources.of({"ephemeral-storage": 2 * GIB}), A),))
    held = (ActiveReservation(A, "n1", Resources.of({"ephemeral-storage": 6 * GIB})),)
    assert residual(node, held[0]) == Resources.of({"ephemeral-storage": 4 * GIB})
    assert available_for(node, held, B) == Resources.of({"cpu": 4000, "ephemeral-storage": 4 * GIB})


def test_in_report_order() -> None:
    assert in_report_order(["nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage"]) == ["ephemeral-storage", "hugepages-2Mi", "nvidia.com/gpu"]
