"""heap.filling_caches(): the collector off while the caches fill, every object alive frozen after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from reference_scheduler.runtime.heap import filling_caches

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    """Whatever a test freezes is thawed after it: the test process's objects go back to the collector."""
    yield
    gc.unfreeze()
    gc.enable()


def test_the_collector_is_off_while_the_caches_fill_and_what_they_hold_is_frozen_after() -> None:
    cache = [{"metadata": {"name": f"n-{i}"}} for i in range(100)]
    with filling_caches():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(cache)


def test_a_start_that_fails_freezes_nothing_and_turns_the_collector_back_on() -> None:
    with pytest.raises(RuntimeError), filling_caches():
        raise RuntimeError("the nodes cache did not sync")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with filling_caches():
        pass
    assert not gc.isenabled()
