"""room_text: a node's arithmetic as a failure's short line and as a fixed-width, sorted table."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.monitor.room import CountedPod, GroupResidual, NodeRoom
from harness.monitor.room_text import columns, quantity, room_table, short_arithmetic, unit_of
from harness.quantities import Amount

pytestmark = pytest.mark.unit

GPU = "example.com/gpu"
MI, GI = 2**20, 2**30
A_SOURCE = GroupResidual("ns/a:source", Amount(3800), ("ns/a-small",), Amount(200))


def _worked_example(plain_cpu: int = 1001) -> NodeRoom:
    """A 4800m node; group A Reserved with peak 3800m, its pod 200m; a plain pod."""
    pods = (CountedPod("ns/a-small", Amount(200), "Running", "ns/a:source"), CountedPod("ns/b", Amount(plain_cpu), "Running"))
    return NodeRoom("n1", Amount(4800, 8 * GI), pods, (A_SOURCE,))


def test_the_short_line_names_the_total_allocatable_and_the_largest_terms_first() -> None:
    assert short_arithmetic(_worked_example()) == (
        "cpu 4801m > 4800m allocatable: residual ns/a:source 3600m (peak 3800m - its pods 200m) + pod ns/b 1001m + pod ns/a-small 200m"
    )


def test_the_table_of_the_worked_example() -> None:
    assert room_table(_worked_example()) == "\n".join([
        "room on node n1 (docs/contract.md section 7, Headroom): over on cpu",
        "cpu: 4801m counted > 4800m allocatable, 1m over",
        "  pod         request  phase    why counted          group",
        "  ns/a-small     200m  Running  bound, not finished  ns/a:source",
        "  ns/b          1001m  Running  bound, not finished  -",
        "  residual = max(0, peak - the requests of its pods counted here)",
        "  Reserved group   peak  its pods  their requests  residual",
        "  ns/a:source     3800m         1            200m     3600m",
        "  pods 1201m + residuals 3600m = 4801m > allocatable 4800m",
    ])


def test_a_terminating_pod_is_listed_as_counted_while_it_is_being_deleted() -> None:
    room = NodeRoom("n1", Amount(1000), (CountedPod("ns/held", Amount(1500), "Running", terminating=True),), with_reservations=False)
    assert room_table(room).splitlines()[1:] == [
        "cpu: 1500m counted > 1000m allocatable, 500m over",
        "  pod      request  phase    why counted                group",
        "  ns/held    1500m  Running  terminating, not finished  -",
        "  residuals: not counted (placement-only: no records are read)",
        "  pods 1500m + residuals 0m = 1500m > allocatable 1000m",
    ]


def test_a_group_whose_pods_ask_more_than_its_peak_shows_residual_zero() -> None:
    """Peak 500m, its pods 300m + 400m: residual max(0, 500m - 700m) = 0m; 700m + a plain 4200m = 4900m of 4800m."""
    pods = (CountedPod("ns/a-big", Amount(400), "Running", "ns/a:source"), CountedPod("ns/a-small", Amount(300), "Running", "ns/a:source"),
            CountedPod("ns/b", Amount(4200), "Running"))
    group = GroupResidual("ns/a:source", Amount(500), ("ns/a-big", "ns/a-small"), Amount(700))
    room = NodeRoom("n1", Amount(4800), pods, (group,))
    assert "  ns/a:source     500m         2            700m        0m" in room_table(room).splitlines()
    assert short_arithmetic(room) == "cpu 4900m > 4800m allocatable: pod ns/b 4200m + pod ns/a-big 400m + pod ns/a-small 300m"


def test_every_resource_in_its_unit_cpu_in_m_bytes_in_mi_extended_in_units() -> None:
    """Peak 1 CPU, 10Gi of disk, 2 GPUs; its pod 400m, 4Gi, 1 GPU; a plain pod 100m, 1Gi, 1 GPU, on 1000m, 10Gi, 2 GPUs.

    cpu 400 + 100 + 600 = 1100m; disk 4 + 1 + 6 = 11Gi = 11264Mi; GPUs 1 + 1 + 1 = 3: all three over, memory (0 of 8Gi) not.
    """
    own = CountedPod("ns/a-small", Amount.of({"cpu": 400, "ephemeral-storage": 4 * GI, GPU: 1}), "Running", "ns/a:source")
    plain = CountedPod("ns/b", Amount.of({"cpu": 100, "ephemeral-storage": GI, GPU: 1}), "Running")
    group = GroupResidual("ns/a:source", Amount.of({"cpu": 1000, "ephemeral-storage": 10 * GI, GPU: 2}), ("ns/a-small",), own.request)
    room = NodeRoom("n1", Amount.of({"cpu": 1000, "memory": 8 * GI, "ephemeral-storage": 10 * GI, GPU: 2}), (own, plain), (group,))
    table = room_table(room).splitlines()
    assert table[0] == "room on node n1 (docs/contract.md section 7, Headroom): over on cpu, ephemeral-storage, example.com/gpu"
    assert [line for line in table if not line.startswith(" ")] == [
        table[0],
        "cpu: 1100m counted > 1000m allocatable, 100m over",
        "ephemeral-storage: 11264Mi counted > 10240Mi allocatable, 1024Mi over",
        "example.com/gpu (units): 3 counted > 2 allocatable, 1 over",
    ]
    assert "  ns/a:source     10240Mi         1          4096Mi    6144Mi" in table
    assert "  pods 2 + residuals 1 = 3 > allocatable 2" in table
    assert short_arithmetic(room).split("; ")[2] == f"{GPU} 3 > 2 allocatable: residual ns/a:source 1 (peak 2 - its pods 1) + pod ns/a-small 1 + pod ns/b 1"


def test_memory_that_is_not_whole_mebibytes_is_written_in_bytes_for_every_term() -> None:
    """4294M (decimal megabytes) and one byte more: 1 byte over, which Mi would round away."""
    room = NodeRoom("n1", Amount(4800, 4294 * 10**6), (CountedPod("ns/b", Amount(0, 4294 * 10**6 + 1), "Running"),), with_reservations=False)
    assert room_table(room).splitlines()[1:4] == [
        "memory (bytes): 4294000001 counted > 4294000000 allocatable, 1 over",
        "  pod      request  phase    why counted          group",
        "  ns/b  4294000001  Running  bound, not finished  -",
    ]
    assert short_arithmetic(room) == "memory 4294000001 > 4294000000 allocatable: pod ns/b 4294000001"


def test_the_short_line_names_three_terms_and_sums_the_rest() -> None:
    pods = tuple(CountedPod(f"ns/p{i}", Amount(1000), "Running") for i in range(5))
    room = NodeRoom("n1", Amount(4800), pods, (GroupResidual("ns/a:source", Amount(1000), (), Amount()),))
    assert short_arithmetic(room) == (
        "cpu 6000m > 4800m allocatable: residual ns/a:source 1000m (peak 1000m - its pods 0m) + pod ns/p0 1000m + pod ns/p1 1000m + 3 more 3000m"
    )


def test_with_nothing_over_every_resource_is_shown() -> None:
    room = _worked_example(plain_cpu=1000)
    table = room_table(room).splitlines()
    assert table[0] == "room on node n1 (docs/contract.md section 7, Headroom): nothing over"
    assert [line for line in table[1:] if not line.startswith(" ")] == [
        "cpu: 4800m counted <= 4800m allocatable",
        "memory: 0Mi counted <= 8192Mi allocatable",
    ]
    assert short_arithmetic(room).startswith("cpu 4800m <= 4800m allocatable: residual ns/a:source 3600m")
    assert short_arithmetic(room).endswith("; memory 0Mi <= 8192Mi allocatable: nothing counted")


def test_an_empty_node_says_so() -> None:
    lines = room_table(NodeRoom("n1", Amount(4800))).splitlines()
    assert lines[1:5] == [
        "cpu: 0m counted <= 4800m allocatable",
        "  pods: none counted",
        "  residuals: none (no group is Reserved on this node)",
        "  pods 0m + residuals 0m = 0m <= allocatable 4800m",
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.booleans()), min_size=1, max_size=8), st.integers(0, 2**32))
def test_the_text_is_the_same_whatever_order_the_terms_come_in(pods: list[tuple[int, bool]], seed: int) -> None:
    counted = [CountedPod(f"ns/p{i}", Amount(cpu), "Running", terminating=deleting) for i, (cpu, deleting) in enumerate(pods)]
    groups = [GroupResidual(f"ns/r{i}:source", Amount(1000 * i), (), Amount()) for i in range(3)]
    shuffled_pods, shuffled_groups = list(counted), list(groups)
    random.Random(seed).shuffle(shuffled_pods)
    random.Random(seed).shuffle(shuffled_groups)
    first, second = NodeRoom("n1", Amount(4800), tuple(counted), tuple(groups)), NodeRoom("n1", Amount(4800), tuple(shuffled_pods), tuple(shuffled_groups))
    assert room_table(first) == room_table(second)
    assert short_arithmetic(first) == short_arithmetic(second)


def test_columns_are_fixed_width_and_numbers_right_aligned() -> None:
    assert columns(("pod", "request"), [("ns/b", "1001m")], right=frozenset({1})) == ["pod   request", "ns/b    1001m"]
    assert columns(("a", "b"), [("long name", "1"), ("x", "22")], right=frozenset({1})) == ["a           b", "long name   1", "x          22"]


def test_units_and_quantities() -> None:
    assert (unit_of("cpu", [1]), unit_of("memory", [GI, 512 * MI]), unit_of("memory", [4294000000]), unit_of(GPU, [2])) == ("m", "Mi", "", "")
    assert unit_of("hugepages-2Mi", [64 * MI]) == "Mi"
    assert (quantity(3800, "m"), quantity(GI, "Mi"), quantity(2, "")) == ("3800m", "1024Mi", "2")
