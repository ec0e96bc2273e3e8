"""Resources: per-resource arithmetic over cpu, memory and every other counted resource, missing meaning 0."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.resource_names import (
    counted,
    is_extended_resource_name,
    is_pod_level_resource,
    is_scalar_resource_name,
)
from reference_scheduler.core.resources import ZERO, InvalidQuantity, Resources, total

pytestmark = pytest.mark.unit

GI = 1024**3
NAMES = ("ephemeral-storage", "example.com/gpu", "hugepages-1Gi", "hugepages-2Mi", "nvidia.com/gpu")

amounts = st.builds(
    lambda cpu, memory, other: Resources.of({"cpu": cpu, "memory": memory, **other}),
    st.integers(-4000, 4000),
    st.integers(-4 * GI, 4 * GI),
    st.dictionaries(st.sampled_from(NAMES), st.integers(-8, 8), max_size=4),
)


def as_dict(r: Resources) -> dict[str, int]:
    return {name: amount for name, amount in r.items() if amount}


def per_resource(a: Resources, b: Resources, op: object) -> dict[str, int]:
    names = set(a.names()) | set(b.names())
    result = {name: op(a.get(name), b.get(name)) for name in names}  # type: ignore[operator]
    return {name: amount for name, amount in result.items() if amount}


# --- the laws ------------------------------------------------------------------


@given(amounts, amounts)
def test_add_sub_and_max_are_per_resource_with_missing_as_zero(a: Resources, b: Resources) -> None:
    assert as_dict(a + b) == per_resource(a, b, lambda x, y: x + y)
    assert as_dict(a - b) == per_resource(a, b, lambda x, y: x - y)
    assert as_dict(a.max(b)) == per_resource(a, b, max)


@given(amounts, amounts, amounts)
def test_add_is_commutative_and_associative_and_sub_undoes_it(a: Resources, b: Resources, c: Resources) -> None:
    assert a + b == b + a
    assert (a + b) + c == a + (b + c)
    assert (a + b) - b == a
    assert a + ZERO == a and a - a == ZERO


@given(amounts, amounts)
def test_max_covers_both_and_is_the_least_that_does(a: Resources, b: Resources) -> None:
    top = a.max(b)
    assert a.fits_in(top) and b.fits_in(top)
    assert top == b.max(a)
    assert all(top.get(name) in (a.get(name), b.get(name)) for name in top.names())


@given(amounts, amounts)
def test_fits_in_is_every_resource_at_most(a: Resources, b: Resources) -> None:
    names = set(a.names()) | set(b.names())
    assert a.fits_in(b) == all(a.get(name) <= b.get(name) for name in names)


@given(amounts)
def test_the_form_is_canonical_sorted_without_zeros(a: Resources) -> None:
    assert list(a.other) == sorted(a.other)
    assert all(amount != 0 for _, amount in a.other)
    assert Resources.of(dict(a.items())) == a
    assert a.clamp_non_negative() == Resources.of({name: max(0, amount) for name, amount in a.items()})


@given(st.lists(amounts, max_size=6))
def test_total_is_repeated_add(values: list[Resources]) -> None:
    expected = ZERO
    for value in values:
        expected = expected + value
    assert total(values) == expected


@given(amounts, st.integers(0, 5))
def test_scaled_is_repeated_add(a: Resources, count: int) -> None:
    assert a.scaled(count) == total([a] * count)


# --- examples -------------------------------------------------------------------


def test_cpu_memory_only_keeps_the_two_field_shape() -> None:
    assert Resources(200, 64) + Resources(100, 0) == Resources(300, 64) == (300, 64, ())
    assert Resources(cpu=5).get("nvidia.com/gpu") == 0


def test_a_resource_missing_on_one_side_is_zero() -> None:
    gpu = Resources.of({"cpu": 100, "nvidia.com/gpu": 1})
    assert not gpu.fits_in(Resources(cpu=4000, memory=GI))
    assert Resources(cpu=100).fits_in(gpu)
    assert (Resources(cpu=4000) - gpu).get("nvidia.com/gpu") == -1
    assert (gpu - gpu).is_zero()


def test_from_mapping_parses_every_counted_resource_and_drops_the_rest() -> None:
    parsed = Resources.from_mapping(
        {
            "cpu": "1.5",
            "memory": "1Gi",
            "ephemeral-storage": "10G",
            "hugepages-2Mi": "4Mi",
            "nvidia.com/gpu": "2",
            "pods": "110",
            "requests.nvidia.com/gpu": "1",
            "nvidia.com/zero": "0",
        }
    )
    assert parsed == Resources.of(
        {"cpu": 1500, "memory": GI, "ephemeral-storage": 10**10, "hugepages-2Mi": 4 * 1024**2, "nvidia.com/gpu": 2}
    )


def test_to_quantities_names_cpu_and_memory_always_and_others_when_not_zero() -> None:
    assert Resources(cpu=3800, memory=256).to_quantities() == {"cpu": "3800m", "memory": "256"}
    assert Resources.of({"cpu": 1000, "example.com/gpu": 1, "ephemeral-storage": 0}).to_quantities() == {
        "cpu": "1000m",
        "memory": "0",
        "example.com/gpu": "1",
    }


def test_the_api_form_reads_back_the_same() -> None:
    peak = Resources.of({"cpu": 3800, "memory": 3 * GI, "hugepages-1Gi": 2 * GI, "nvidia.com/gpu": 4})
    assert Resources.from_mapping(peak.to_quantities()) == peak


def test_dropping_keeps_cpu_and_memory() -> None:
    peak = Resources.of({"cpu": 1, "memory": 2, "nvidia.com/gpu": 1, "ephemeral-storage": 3})
    assert peak.dropping(is_extended_resource_name) == Resources.of({"cpu": 1, "memory": 2, "ephemeral-storage": 3})


@pytest.mark.parametrize(
    ("amounts", "message"),
    [
        ({"nvidia.com/gpu": "two"}, "invalid nvidia.com/gpu quantity 'two'"),
        ({"ephemeral-storage": "-1Gi"}, "invalid ephemeral-storage quantity '-1Gi': quantities must not be negative"),
        ({"cpu": "lots"}, "invalid cpu quantity 'lots'"),
    ],
)
def test_a_bad_quantity_is_one_clear_line(amounts: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidQuantity, match="^" + message) as caught:
        Resources.from_mapping(amounts)
    assert "\n" not in str(caught.value)


# --- resource names, as kube-scheduler's helpers classify them --------------------


@pytest.mark.parametrize(
    ("name", "extended", "scalar", "is_counted", "pod_level"),
    [
        ("cpu", False, False, True, True),
        ("memory", False, False, True, True),
        ("ephemeral-storage", False, False, True, False),
        ("pods", False, False, False, False),
        ("storage", False, False, False, False),
        ("hugepages-2Mi", False, True, True, True),
        ("nvidia.com/gpu", True, True, True, False),
        ("example.com/gpu", True, True, True, False),
        ("kubernetes.io/foo", False, True, True, False),
        ("requests.example.com/gpu", False, False, False, False),
        ("attachable-volumes-csi-x", False, True, True, False),
        ("example.com/-bad-", False, False, False, False),
    ],
)
def test_resource_names(name: str, extended: bool, scalar: bool, is_counted: bool, pod_level: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar
    assert counted(name) is is_counted
    assert is_pod_level_resource(name) is pod_level
