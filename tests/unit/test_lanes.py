"""Lanes: one record's writes in submission order, other records' at the same time, a failure never stops a lane."""

from __future__ import annotations

import threading

import pytest

from reference_scheduler.runtime.lanes import Lanes

pytestmark = pytest.mark.unit


def test_tasks_of_one_key_run_in_submission_order_and_survive_a_failure() -> None:
    done: list[int] = []
    lanes = Lanes("t", threads=4)

    def fail() -> None:
        raise RuntimeError("boom")

    for i in range(20):
        lanes.submit("record", lambda i=i: done.append(i))  # type: ignore[misc]
        if i == 5:
            lanes.submit("record", fail)
    assert lanes.wait_idle(timeout=5)
    assert done == list(range(20))


def test_a_waiting_key_does_not_hold_up_another() -> None:
    # Record A's write blocks; B's must still run: lanes are per record, not one queue.
    release = threading.Event()
    done: list[str] = []
    lanes = Lanes("t", threads=2)
    lanes.submit("a", lambda: (release.wait(5), done.append("a")))
    lanes.submit("a", lambda: done.append("a2"))
    ran_b = threading.Event()
    lanes.submit("b", lambda: (done.append("b"), ran_b.set()))
    assert ran_b.wait(5)
    assert done == ["b"]  # a2 waits behind a, although a thread is free
    release.set()
    assert lanes.wait_idle(timeout=5)
    assert done == ["b", "a", "a2"]
