"""A check that fails because a pod went where it must not fit says the node's arithmetic, short in its message and whole attached."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import allure
import pytest

from harness.monitor.room import CountedPod, GroupResidual, NodeRoom
from harness.monitor.room_text import room_table
from harness.quantities import Amount
from harness.suite import checks
from harness.suite.room_notes import attachment_name, note_of, room_note
from harness.timeouts import DEFAULT_TIMEOUTS
from harness.waits import Broken

pytestmark = pytest.mark.unit

SHORT = DEFAULT_TIMEOUTS.with_overrides({"pod_created": 0.2, "pod_scheduled": 0.2, "pod_stays_pending": 0.2})
#: A's node once B (2000m) was bound inside A's reservation: 200m + 2000m + (3800m - 200m) = 5800m of 4800m.
A_NODE = NodeRoom(
    "n1", Amount(4800),
    (CountedPod("ns/a-small", Amount(200), "Running", "ns/a:source"), CountedPod("ns/b-only", Amount(2000), "Running")),
    (GroupResidual("ns/a:source", Amount(3800), ("ns/a-small",), Amount(200)),),
)
B_NOTE = "; room on n1: cpu 5800m > 4800m allocatable: residual ns/a:source 3600m (peak 3800m - its pods 200m) + pod ns/b-only 2000m + pod ns/a-small 200m"


class Monitor:
    """A stand-in contract monitor whose fresh read shows `rooms`, or fails with `error`."""

    def __init__(self, rooms: dict[str, NodeRoom], error: Exception | None = None) -> None:
        self.rooms, self.error = rooms, error

    def room_now(self, node: str) -> NodeRoom | None:
        if self.error is not None:
            raise self.error
        return self.rooms.get(node)


def _run(monitor: Monitor | None, *, pods: tuple[dict[str, Any], ...] = ()) -> Any:
    return SimpleNamespace(
        namespace="ns", timeouts=SHORT, checks_records=True, monitor=monitor, assert_contract=lambda: None,
        task_pods=lambda pipeline_run, task: list(pods), pod=lambda name: pods[0],
        scheduler=SimpleNamespace(check_alive=lambda: None),
    )


@pytest.fixture
def attached(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    monkeypatch.setattr(allure, "attach", lambda body, name, kind: found.append((name, body)))
    return found


def _bound(name: str, node: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": name}, "spec": {"nodeName": node}, "status": {"phase": "Running"}}


def test_the_note_is_the_short_arithmetic_and_the_table_is_attached(attached: list[tuple[str, str]]) -> None:
    assert room_note(_run(Monitor({"n1": A_NODE})), "n1", when="b-only was bound") == B_NOTE
    assert attached == [("room on node n1 (b-only was bound)", f"b-only was bound: {room_table(A_NODE)}")]


def test_no_monitor_no_node_or_a_failed_read_leave_the_message_as_it_is(attached: list[tuple[str, str]]) -> None:
    assert room_note(_run(None), "n1", when="x") == ""
    assert room_note(_run(Monitor({})), None, when="x") == ""
    assert room_note(_run(Monitor({})), "gone", when="x") == ""  # a node outside the pool
    assert room_note(_run(Monitor({}, error=OSError("connection refused"))), "n1", when="x") == ""
    assert attached == []


def test_note_of_and_attachment_name() -> None:
    assert note_of(None) == ""
    assert note_of(A_NODE) == B_NOTE
    assert attachment_name("n1", "node-overcommitted at 4.2s") == "room on node n1 (node-overcommitted at 4.2s)"


def test_a_pod_bound_while_it_must_wait_says_the_arithmetic_of_its_node(attached: list[tuple[str, str]]) -> None:
    run = _run(Monitor({"n1": A_NODE}), pods=(_bound("b-only", "n1"),))
    with pytest.raises(Broken) as failure:
        checks.task_pod_must_stay_pending(run, "b", "only")
    assert str(failure.value).endswith("b/only was bound: b-only is Running on n1" + B_NOTE)
    assert [name for name, _ in attached] == ["room on node n1 (b/only was bound)"]


def test_a_pod_bound_though_no_node_can_take_it_says_the_arithmetic(attached: list[tuple[str, str]]) -> None:
    run = _run(Monitor({"n1": A_NODE}), pods=(_bound("b-only", "n1"),))
    with pytest.raises(AssertionError) as failure:
        checks.pod_must_be_unschedulable(run, "b-only", why="its group's peak fits no node")
    assert str(failure.value) == "pod b-only was bound to n1, though its group's peak fits no node" + B_NOTE
