"""A fixture's share of a node (`cpu(2600 / 4800)`) is exactly what a scenario computes by hand in integers.

A fixture writes a share as a ratio and a scenario computes the peak it expects as
`cpu * 2600 // 4800`. Multiplied as floats the two part on some node sizes (1800m:
974.9999999999999, so 974 against 975), and a correct scheduler failed `fan_out_from_results`
on a kind worker whose daemons left it 1800m. No cluster.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.quantities import share_of
from harness.suite.manifests import RenderContext

pytestmark = pytest.mark.unit


def _context(cpu_millis: int, memory_bytes: int = 8 << 30) -> RenderContext:
    return RenderContext(namespace="ns", scheduler_name="s", pool_selector={}, node_cpu_millis=cpu_millis, node_memory_bytes=memory_bytes)


def test_the_share_that_float_arithmetic_rounded_down() -> None:
    assert int(1800 * (2600 / 4800)) == 974  # why share_of exists
    assert share_of(1800, 2600 / 4800) == 975
    assert _context(1800).cpu(2600 / 4800) == "975m"


@given(
    amount=st.integers(min_value=0, max_value=1 << 40),
    denominator=st.integers(min_value=1, max_value=10_000),
    data=st.data(),
)
def test_a_share_is_the_floor_of_the_exact_ratio(amount: int, denominator: int, data: st.DataObject) -> None:
    numerator = data.draw(st.integers(min_value=0, max_value=denominator))
    assert share_of(amount, numerator / denominator) == amount * numerator // denominator


@pytest.mark.parametrize(
    ("cpu_millis", "fraction", "expected"),
    [(4800, 0.25, "1200m"), (1900, 0.95, "1805m"), (1900, 0.05, "95m"), (1800, 1000 / 4800, "375m"), (1950, 0.3, "585m")],
)
def test_cpu_renders_the_exact_share(cpu_millis: int, fraction: float, expected: str) -> None:
    assert _context(cpu_millis).cpu(fraction) == expected


def test_memory_renders_the_exact_share() -> None:
    assert _context(4800, memory_bytes=7 * (1 << 30)).memory(0.35) == str(7 * (1 << 30) * 35 // 100)
