"""GroupKey, and the worked examples in the decision modules' docstrings, run as doctests."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from reference_scheduler.core import claims, headroom, keys, label_selectors, node_checks, queue_hints, reasons, release, scoring
from reference_scheduler.core.keys import GroupKey

pytestmark = pytest.mark.unit


def test_group_key_is_a_value() -> None:
    key = GroupKey("ci", "build-7x2", "g0")
    assert key == GroupKey("ci", "build-7x2", "g0")
    assert {key: 1}[GroupKey("ci", "build-7x2", "g0")] == 1
    assert str(key) == "ci/build-7x2/g0"
    assert sorted([GroupKey("ci", "b", "g0"), GroupKey("ci", "a", "g1")])[0].pipeline_run == "a"
    with pytest.raises(AttributeError):
        key.group = "g1"  # type: ignore[misc]


@pytest.mark.parametrize(
    "module",
    [keys, reasons, headroom, node_checks, scoring, claims, release, queue_hints, label_selectors],
    ids=lambda m: m.__name__.rsplit(".", 1)[-1],
)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
