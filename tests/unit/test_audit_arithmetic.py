"""rescon audit says why a node is over-committed: an indented table under a text line, an `arithmetic` field in a JSON one."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from harness.audit.dedup import AuditLine, Change, ViolationTracker
from harness.audit.output import as_json, as_text
from harness.audit.slim import slim_pod
from harness.monitor import invariants as rules
from harness.monitor.room import TERMINATING, CountedPod, GroupResidual, NodeRoom, room_data
from harness.monitor.room_text import room_table
from harness.quantities import Amount

pytestmark = pytest.mark.unit

AT = datetime(2026, 12, 3, 11, 40, 2, 125000, tzinfo=UTC)
#: The contract's worked example, one millicore over: 200m + 1001m + (3800m - 200m) = 4801m of 4800m.
ROOM = NodeRoom(
    "n1", Amount(4800),
    (CountedPod("ns/a-small", Amount(200), "Running", "ns/a:source"), CountedPod("ns/b", Amount(1001), "Running")),
    (GroupResidual("ns/a:source", Amount(3800), ("ns/a-small",), Amount(200)),),
)
LINE = AuditLine(AT, rules.NODE_OVERCOMMITTED, Change.STARTED, "node n1 holds 4801m CPU", ("node n1", "pod ns/a-small", "pod ns/b"), ROOM)


def test_a_text_line_about_room_has_the_table_indented_under_it() -> None:
    """The table itself, word for word, is test_room_text's; here it is four spaces in, under the line."""
    first, *block = as_text(LINE).splitlines()
    assert first == "2026-12-03T11:40:02.125Z node-overcommitted started: node n1 holds 4801m CPU [node n1, pod ns/a-small, pod ns/b]"
    assert block == ["    " + line for line in room_table(ROOM).splitlines()]
    assert block[1] == "    cpu: 4801m counted > 4800m allocatable, 1m over"


def test_a_json_line_about_room_carries_the_arithmetic_as_data() -> None:
    data = json.loads(as_json(LINE))
    assert data["arithmetic"] == room_data(ROOM)
    assert (data["arithmetic"]["total"], data["arithmetic"]["over"]) == ({"cpu": 4801, "memory": 0}, ["cpu"])
    assert data["arithmetic"]["residuals"][0]["residual"] == {"cpu": 3600, "memory": 0}
    assert "arithmetic" not in json.loads(as_json(AuditLine(AT, rules.GROUP_SPLIT, Change.STARTED, "split")))


def test_lines_that_start_change_or_happen_carry_the_room_a_cleared_one_does_not() -> None:
    tracker = ViolationTracker()
    found = rules.Finding(rules.NODE_OVERCOMMITTED, "over", ("node n1", "pod ns/b"), ROOM)
    [started] = tracker.update([found], at=AT)
    [changed] = tracker.update([rules.Finding(rules.NODE_OVERCOMMITTED, "over", ("node n1", "pod ns/c"), ROOM)], at=AT)
    [cleared] = tracker.update([], at=AT)
    assert (started.room, changed.room, cleared.room) == (ROOM, ROOM, None)
    assert as_text(cleared).count("\n") == 0
    [happened] = tracker.happened([found], at=AT)
    assert happened.room == ROOM


def test_the_auditors_slim_pod_still_says_a_pod_is_terminating() -> None:
    pod: dict[str, Any] = {
        "metadata": {"name": "held", "namespace": "ns", "uid": "u", "deletionTimestamp": "2026-12-03T11:39:00Z", "finalizers": ["x"]},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]},
        "status": {"phase": "Running"},
    }
    world = rules.World(pods={"u": slim_pod(pod)}, nodes={"n1": {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1000m"}}}})
    [counted] = rules.node_room(world, "n1", with_reservations=True).pods
    assert (counted.why, counted.request) == (TERMINATING, Amount(1500))
