"""harness.quantities.Amount and harness.resource_names: per-resource arithmetic, each resource on its own, a missing one 0."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.quantities import ZERO, Amount, amount_of, node_allocatable, units_of
from harness.resource_names import amount_text, is_counted, is_extended, is_pod_level

pytestmark = pytest.mark.unit

GPU = "example.com/gpu"
RESOURCES = ("cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "hugepages-1Gi", GPU, "vendor.io/fpga")

maps = st.dictionaries(st.sampled_from(RESOURCES), st.integers(min_value=-10**12, max_value=10**12))
amounts = maps.map(Amount.of)


@given(maps, maps)
def test_addition_subtraction_and_max_are_per_resource(a: dict[str, int], b: dict[str, int]) -> None:
    left, right = Amount.of(a), Amount.of(b)
    for resource in RESOURCES:
        assert (left + right).get(resource) == a.get(resource, 0) + b.get(resource, 0)
        assert (left - right).get(resource) == a.get(resource, 0) - b.get(resource, 0)
        assert left.max(right).get(resource) == max(a.get(resource, 0), b.get(resource, 0))


@given(amounts, amounts)
def test_addition_is_commutative_and_undone_by_subtraction(a: Amount, b: Amount) -> None:
    assert a + b == b + a
    assert (a + b) - b == a
    assert a + ZERO == a


@given(amounts, amounts, amounts)
def test_addition_is_associative(a: Amount, b: Amount, c: Amount) -> None:
    assert (a + b) + c == a + (b + c)


@given(amounts)
def test_floor_zero_keeps_each_positive_resource_and_zeroes_the_rest(a: Amount) -> None:
    floored = a.floor_zero()
    assert all(floored.get(r) == max(0, a.get(r)) for r in RESOURCES)
    assert all(v > 0 for _, v in floored.others)


@given(amounts, amounts)
def test_exceeds_names_exactly_the_resources_above_the_limit(a: Amount, limit: Amount) -> None:
    assert sorted(a.exceeds(limit)) == sorted(r for r in RESOURCES if a.get(r) > limit.get(r))


@given(amounts, st.integers(min_value=0, max_value=50))
def test_times_is_repeated_addition(a: Amount, count: int) -> None:
    total = ZERO
    for _ in range(count):
        total = total + a
    assert a.times(count) == total


def test_a_resource_an_amount_does_not_name_is_zero() -> None:
    node = Amount(4800, 8 << 30)
    pod = Amount.of({"cpu": 100, GPU: 1})
    assert node.get(GPU) == 0
    assert pod.exceeds(node) == [GPU]


def test_the_canonical_form_drops_zeros_and_sorts() -> None:
    assert Amount.of({GPU: 0, "cpu": 5}) == Amount(5, 0)
    assert Amount.of({GPU: 1, "hugepages-2Mi": 2, "ephemeral-storage": 3}).others == (("ephemeral-storage", 3), ("hugepages-2Mi", 2), (GPU, 1))


def test_a_node_that_does_not_advertise_a_resource_has_none_of_it() -> None:
    node = {"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "hugepages-2Mi": "0"}}}
    assert node_allocatable(node) == Amount(4000, 8 << 30)
    assert node_allocatable(node).get(GPU) == 0


def test_amount_of_reads_each_resource_in_its_unit() -> None:
    assert amount_of({"cpu": "1.5", "memory": "1Gi", "ephemeral-storage": "1G", GPU: "2", "hugepages-1Gi": "2Gi"}) == Amount.of(
        {"cpu": 1500, "memory": 1 << 30, "ephemeral-storage": 10**9, GPU: 2, "hugepages-1Gi": 2 << 30}
    )
    assert units_of("ephemeral-storage", "0.5") == 1  # rounded up, as Quantity.Value() does
    assert units_of("cpu", "0.0001") == 1


def test_describe_names_every_resource() -> None:
    assert Amount.of({"cpu": 1500, "memory": 1 << 30, GPU: 2, "ephemeral-storage": 6 << 30}).describe() == (
        "1500m CPU, 1024Mi, ephemeral-storage 6Gi, example.com/gpu 2"
    )


@pytest.mark.parametrize(
    "name, counted, extended, pod_level",
    [
        pytest.param("cpu", True, False, True, id="cpu"),
        pytest.param("memory", True, False, True, id="memory"),
        pytest.param("ephemeral-storage", True, False, False, id="ephemeral-storage"),
        pytest.param("hugepages-2Mi", True, False, True, id="hugepages"),
        pytest.param(GPU, True, True, False, id="extended"),
        pytest.param("kubernetes.io/batteries", True, False, False, id="prefixed-native"),
        pytest.param("pods", False, False, False, id="pods"),
        pytest.param("storage", False, False, False, id="storage"),
    ],
)
def test_which_resources_count(name: str, counted: bool, extended: bool, pod_level: bool) -> None:
    assert (is_counted(name), is_extended(name), is_pod_level(name)) == (counted, extended, pod_level)


def test_amount_text_uses_each_resources_unit() -> None:
    assert [amount_text("cpu", 1500), amount_text("hugepages-2Mi", 512 << 20), amount_text(GPU, 2)] == [
        "cpu 1500m", "hugepages-2Mi 512Mi", "example.com/gpu 2"
    ]
