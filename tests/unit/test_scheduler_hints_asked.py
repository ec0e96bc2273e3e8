"""Scheduler._move asks an event's queueing hint only while a pod waits for events (parked, or being decided)."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest

from reference_scheduler.runtime.scheduler import Scheduler

pytestmark = pytest.mark.unit


def test_a_hint_is_asked_only_when_a_pod_could_use_it() -> None:
    found = Scheduler(kubernetes.client.ApiClient(), scheduler_name="s")
    asked: list[str] = []

    def hint() -> Any:
        asked.append("asked")
        return lambda key: True

    found._move(hint, "pod modified")  # noqa: SLF001 - the queue is empty: nothing to move
    assert asked == []
    found.queue.add(("ns", "a"))
    key = found.queue.pop(0)
    assert key is not None
    found.queue.done(key, unschedulable=True)
    found._move(hint, "pod modified")  # noqa: SLF001
    assert asked == ["asked"] and found.queue.lengths()["unschedulable"] == 0
