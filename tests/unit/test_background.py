"""Background: writes run off the scheduling thread, in order on one thread, and a full queue drops."""

from __future__ import annotations

import threading

import pytest

from reference_scheduler.runtime.background import Background

pytestmark = pytest.mark.unit


def test_one_thread_runs_tasks_in_submission_order_and_survives_a_failure() -> None:
    done: list[int] = []
    background = Background("t", threads=1)

    def fail() -> None:
        raise RuntimeError("boom")

    for i in range(5):
        background.submit(lambda i=i: done.append(i))  # type: ignore[misc]
        if i == 2:
            background.submit(fail)
    assert background.wait_idle(timeout=5)
    assert done == [0, 1, 2, 3, 4]


def test_a_full_queue_drops_the_task() -> None:
    release = threading.Event()
    background = Background("t", threads=1, max_pending=1)
    started = threading.Event()

    def blocker() -> None:
        started.set()
        release.wait(5)

    assert background.submit(blocker)
    assert started.wait(5)  # the thread holds the blocker; one more may wait, the next is dropped
    assert background.submit(lambda: None)
    assert not background.submit(lambda: None)
    release.set()
    assert background.wait_idle(timeout=5)
