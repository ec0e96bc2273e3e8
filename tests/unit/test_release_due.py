"""release-late's clock (harness.monitor.release_due): which run is read when, since when a release is due, which group is late; a fake clock throughout."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.contract.record import Record
from harness.contract.record import ReleaseReason as R
from harness.monitor import invariants as rules
from harness.monitor import rulebook
from harness.monitor.release_due import Due, Late, ReleaseClock

pytestmark = pytest.mark.unit

LIMIT = 15.0
DONE = frozenset({R.TASKS_DONE})

RECORD: dict[str, Any] = {
    "apiVersion": "rescon.dev/v1alpha1",
    "kind": "ReservationRecord",
    "metadata": {
        "name": "run", "namespace": "ns", "labels": {"rescon.dev/active": "true"},
        "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "run", "uid": "u", "controller": True}],
    },
    "spec": {"pipelineRun": {"name": "run", "uid": "u"},
             "groups": [{"name": "source", "tasks": ["fetch", "deploy"], "workspaces": ["source"], "peak": {"cpu": "1", "memory": "0"}},
                        {"name": "cache", "tasks": ["warm"], "workspaces": ["cache"], "peak": {"cpu": "1", "memory": "0"}}]},
}


def _group(name: str, state: str) -> dict[str, Any]:
    if state == "Reserved":
        return {"name": name, "state": state, "node": "n1", "holders": ["p"], "claimGeneration": 1, "reservedAt": "2026-12-01T10:00:00Z"}
    if state == "Released":
        return {"name": name, "state": state, "node": "n1", "holders": ["p"], "claimGeneration": 1, "reservedAt": "2026-12-01T10:00:00Z",
                "releasedAt": "2026-12-01T10:01:00Z", "releaseReason": "TasksDone"}
    return {"name": name, "state": state}


def record(source: str = "Reserved", cache: str = "Pending", *, name: str = "run", uid: str = "u") -> Record:
    obj = copy.deepcopy(RECORD)
    obj["metadata"]["name"] = obj["spec"]["pipelineRun"]["name"] = obj["metadata"]["ownerReferences"][0]["name"] = name
    obj["spec"]["pipelineRun"]["uid"] = obj["metadata"]["ownerReferences"][0]["uid"] = uid
    obj["status"] = {"groups": [_group("source", source), _group("cache", cache)]}
    if "Reserved" not in (source, cache):
        obj["metadata"]["labels"] = {}
    return Record.from_json(obj)


def run(*started: str, name: str = "run", uid: str = "u", skipped: tuple[str, ...] = (), verdict: str = "Unknown") -> dict[str, Any]:
    """The watched PipelineRun: `started` tasks have a TaskRun in childReferences, `skipped` are in skippedTasks."""
    return {"metadata": {"name": name, "namespace": "ns", "uid": uid},
            "status": {"conditions": [{"type": "Succeeded", "status": verdict, "reason": "Running"}],
                       "childReferences": [{"name": f"{name}-{t}", "pipelineTaskName": t} for t in started],
                       "skippedTasks": [{"name": t, "reason": "When Expressions evaluated to false"} for t in skipped]}}


def test_a_run_is_read_only_once_every_group_task_has_a_task_run_or_is_skipped() -> None:
    clock = ReleaseClock(limit=LIMIT)
    held = [record()]
    assert clock.next_read(held, {("ns", "run"): run("fetch")}, now=0.0) is None  # deploy not started: nothing can be due
    assert clock.next_read(held, {("ns", "run"): run("fetch", skipped=("deploy",))}, now=0.0) == (held[0], ("source",))
    assert clock.next_read(held, {("ns", "run"): run(verdict="True")}, now=0.0) == (held[0], ("source",))  # Tekton's verdict
    assert clock.next_read(held, {}, now=0.0) == (held[0], ("source",))  # no run watched: gone, or not seen yet; read to know


def test_a_run_is_read_again_only_after_the_read_interval_and_never_once_seen_due() -> None:
    clock = ReleaseClock(limit=LIMIT)
    held, runs = [record()], {("ns", "run"): run("fetch", "deploy")}
    clock.observe(held[0], {"source": frozenset()}, now=1.0)
    assert clock.next_read(held, runs, now=2.9) is None
    assert clock.next_read(held, runs, now=3.0) == (held[0], ("source",))
    clock.observe(held[0], {"source": DONE}, now=3.2)
    assert clock.next_read(held, runs, now=30.0) is None


def test_the_run_read_longest_ago_goes_first() -> None:
    clock = ReleaseClock(limit=LIMIT)
    a, b, c = record(name="a"), record(name="b"), record(name="c")
    runs = {("ns", n): run("fetch", "deploy", name=n) for n in "abc"}
    clock.observe(a, {}, now=1.0)
    clock.observe(b, {}, now=0.5)
    assert clock.next_read([a, b, c], runs, now=5.0) == (c, ("source",))  # never read
    clock.observe(c, {}, now=5.0)
    assert clock.next_read([a, b, c], runs, now=5.0) == (b, ("source",))


def test_a_group_is_late_only_strictly_past_the_limit_from_the_first_read_that_saw_it_due() -> None:
    clock = ReleaseClock(limit=LIMIT)
    held = [record()]
    clock.observe(held[0], {"source": DONE}, now=3.0)
    clock.observe(held[0], {"source": frozenset({R.TASKS_DONE, R.PIPELINE_RUN_DONE})}, now=10.0)  # seen again: the first read counts
    assert clock.late(held, now=18.0) == []
    assert clock.late(held, now=18.01) == [Late(held[0], "source", Due(3.0, DONE))]


def test_released_groups_and_gone_records_are_forgotten_and_a_new_run_of_the_name_starts_afresh() -> None:
    clock = ReleaseClock(limit=LIMIT)
    clock.observe(record(), {"source": DONE}, now=0.0)
    clock.settle([record("Released")])
    assert clock.late([record()], now=100.0) == [] and not clock.running()
    clock.observe(record(), {"source": DONE}, now=0.0)
    clock.settle([record(uid="another")])
    assert clock.late([record(uid="another")], now=100.0) == []


def test_a_group_that_goes_pending_and_reserved_again_stays_due() -> None:
    clock = ReleaseClock(limit=LIMIT)
    clock.observe(record(), {"source": DONE}, now=0.0)
    clock.settle([record("Pending")])
    assert clock.late([record("Pending")], now=100.0) == []  # only a Reserved group holds room
    assert [late.group for late in clock.late([record()], now=100.0)] == ["source"]


def test_the_finding_names_the_group_the_reasons_and_the_limit() -> None:
    held = record()
    finding = rulebook.late_release(Late(held, "source", Due(3.0, DONE)), now=18.5, limit=LIMIT)
    assert finding.rule == rules.RELEASE_LATE
    assert "group source of record ns/run is still Reserved on n1 15.5s after the monitor first saw its release due (TasksDone; release_late 15s)" in finding.message
    assert finding.objects == ("record ns/run",)


def test_only_a_fresh_read_of_the_same_run_still_reserved_confirms() -> None:
    late = Late(record(), "source", Due(0.0, DONE))
    assert rulebook.still_reserved(late, record())
    assert not rulebook.still_reserved(late, record("Released"))
    assert not rulebook.still_reserved(late, record(uid="another"))
    assert not rulebook.still_reserved(late, None)


@given(
    onset=st.floats(0.0, 60.0),
    gaps=st.lists(st.floats(0.05, 4.0), min_size=1, max_size=60),
    latency=st.floats(0.0, 0.5),
    released_after=st.one_of(st.none(), st.floats(0.0, 40.0)),
)
def test_late_is_never_said_early_and_always_said_once_reads_show_it(
    onset: float, gaps: list[float], latency: float, released_after: float | None,
) -> None:
    """The release falls due at `onset`; the monitor reads at its own pace (a read answers `latency` after it starts).

    Whatever the pace, release-late is said only when the group really has
    been Reserved past the limit since the onset; and, if it is never
    Released, it is said at most one read gap and one latency after that.
    """
    clock = ReleaseClock(limit=LIMIT)
    released_at = None if released_after is None else onset + released_after
    now, said = 0.0, None
    for gap in gaps:
        now += gap
        state = "Released" if released_at is not None and now >= released_at else "Reserved"
        held = [record(state)]
        clock.settle(held)
        answered = now + latency
        clock.observe(held[0], {"source": DONE if now >= onset else frozenset()}, now=answered)
        if clock.late(held, now=answered) and said is None:
            said = answered
    if said is not None:
        assert said - onset > LIMIT
    elif released_at is None:
        seen_due = [t for t in _times(gaps) if t >= onset]
        assert not seen_due or _times(gaps)[-1] + latency - (seen_due[0] + latency) <= LIMIT


def _times(gaps: list[float]) -> list[float]:
    times, now = [], 0.0
    for gap in gaps:
        now += gap
        times.append(now)
    return times
