"""TimelineSampler: samples while the block runs, once more at its end, and skips a failed read."""

from __future__ import annotations

from typing import Any

import pytest

from harness.report.timeline_sampler import TimelineSampler

pytestmark = pytest.mark.unit


def _pod(name: str, node: str | None, phase: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": name}, "spec": {"nodeName": node}, "status": {"phase": phase}}


class _Scripted(TimelineSampler):
    """Reads pods from a list of states, one a call; None in the list is a failed read."""

    def __init__(self, states: list[list[dict[str, Any]] | None]) -> None:
        super().__init__(seconds=3600, name="test-sampler")  # the thread never wakes: each sample is explicit
        self.states = states
        self.reads = 0
        self.seen: list[str] = []

    def read(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        state = self.states[min(self.reads, len(self.states) - 1)]
        self.reads += 1
        if state is None:
            raise RuntimeError("the API server is restarting")
        return state, []

    def observed(self, pods: Any) -> None:
        self.seen.extend(p["metadata"]["name"] for p in pods)


def test_the_block_end_samples_once_more_and_finishes_the_picture() -> None:
    sampler = _Scripted([[_pod("a", "n0", "Running")], [_pod("a", "n0", "Succeeded")]])
    with sampler:
        sampler.sample()
    assert sampler.reads == 2
    assert sampler.seen == ["a", "a"]
    assert sampler.recorder.ended is not None
    assert [i.pod for i in sampler.recorder.intervals()] == ["a"]


def test_a_failed_read_is_skipped_and_the_next_one_counts() -> None:
    sampler = _Scripted([None, [_pod("b", "n1", "Running")]])
    with sampler:
        sampler.sample()  # fails: nothing recorded, nothing raised
        assert sampler.seen == []
    assert sampler.seen == ["b"]
