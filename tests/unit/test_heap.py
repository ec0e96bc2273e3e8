"""heap.filling_caches() and heap.importing(): the collector off while the caches fill (or the imports run), every object alive frozen after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from reference_scheduler.runtime.heap import filling_caches, importing

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
    frozen = gc.get_freeze_count()  # what importing reference_scheduler.main froze, if this process did
    with pytest.raises(RuntimeError), filling_caches():
        raise RuntimeError("the nodes cache did not sync")
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_the_imports_run_with_no_collection_and_what_they_made_is_frozen_after() -> None:
    collections = gc.get_stats()[0]["collections"]
    with importing():
        modules = [{"name": f"m-{i}", "functions": [object()]} for i in range(5000)]  # well past a young collection's 700
        assert not gc.isenabled()
    assert gc.get_stats()[0]["collections"] == collections
    assert gc.isenabled() and gc.get_freeze_count() >= len(modules)


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with filling_caches():
        pass
    assert not gc.isenabled()
