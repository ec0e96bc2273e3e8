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


class _Monitor:
    """The part of ContractMonitor the scenario's sampler reads: its view, and whether it watches records."""

    def __init__(self, *, checks_records: bool) -> None:
        from harness.monitor.scenario_view import ScenarioView

        self.checks_records = checks_records
        self.view = ScenarioView(["ns", "ns-extra"])


class _Run:
    """A ScenarioRun whose records are listed per namespace; `listed` counts the LISTs."""

    def __init__(self, namespace: str = "ns", others: tuple[str, ...] = ("ns-extra",)) -> None:
        self.namespace, self.others, self.listed = namespace, others, 0

    def every_namespace(self) -> list[_Run]:
        return [self, *(_Run(name, ()) for name in self.others)]

    def records(self) -> list[dict[str, Any]]:
        self.listed += 1
        return [{"metadata": {"name": f"listed-{self.namespace}", "namespace": self.namespace}}]


def test_the_scenarios_sampler_reads_the_monitors_watches_and_lists_nothing() -> None:
    from harness.suite.session import _Sampler

    monitor, run = _Monitor(checks_records=True), _Run()
    monitor.view.apply("pods", "ADDED", obj={**_pod("a", "n0", "Running"), "metadata": {"name": "a", "uid": "a", "namespace": "ns-extra"}})
    monitor.view.apply("records", "ADDED", obj={"metadata": {"name": "run", "namespace": "ns"}})
    pods, records = _Sampler(run, monitor).read()  # type: ignore[arg-type]
    assert [p["metadata"]["name"] for p in pods] == ["a"]
    assert [r["metadata"]["name"] for r in records] == ["run"]
    assert run.listed == 0


def test_records_are_listed_where_the_monitor_does_not_watch_them() -> None:
    from harness.suite.session import _Sampler

    monitor, run = _Monitor(checks_records=False), _Run()
    _, records = _Sampler(run, monitor).read()  # type: ignore[arg-type]
    assert [r["metadata"]["name"] for r in records] == ["listed-ns", "listed-ns-extra"]
