"""Every wait_for tells its observers what it waited for, under which timeout, and how long it took."""

from __future__ import annotations

import dataclasses

import pytest

from harness.timeouts import DEFAULT_TIMEOUTS
from harness.waits import NotYet, WaitTimeout, observed, wait_for

pytestmark = pytest.mark.unit


def test_a_met_and_a_timed_out_wait_are_both_told() -> None:
    seen: list[tuple[str, str, float, float]] = []
    polls = iter([NotYet("not yet"), "done"])

    def poll() -> str:
        value = next(polls)
        if isinstance(value, Exception):
            raise value
        return value

    timeouts = dataclasses.replace(DEFAULT_TIMEOUTS, pod_scheduled=0.3)
    with observed(lambda *wait: seen.append(wait)):
        assert wait_for(poll, what="x to be bound", timeout="pod_scheduled", timeouts=timeouts) == "done"
        with pytest.raises(WaitTimeout):
            wait_for(lambda: (_ for _ in ()).throw(NotYet("never")), what="y to be bound", timeout="pod_scheduled", timeouts=timeouts)
    wait_for(lambda: 1, what="z", timeout="pod_scheduled", timeouts=timeouts)  # after the block: not told
    assert [(w[0], w[1], w[3]) for w in seen] == [("x to be bound", "pod_scheduled", 0.3), ("y to be bound", "pod_scheduled", 0.3)]
    assert 0 < seen[0][2] < 0.3 <= seen[1][2]
