"""rescon audit's de-duplication: a lasting violation is one line when it starts, one when its objects change, one when it clears."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from harness.audit.dedup import Change, ViolationTracker, violation_key
from harness.monitor.invariants import CLAIM_CHANGED_NODE, GROUP_SPLIT, NODE_OVERCOMMITTED, Finding

pytestmark = pytest.mark.unit

AT = datetime(2026, 12, 3, 11, 40, tzinfo=UTC)


def over(node: str, *pods: str, held: str = "5000m") -> Finding:
    return Finding(NODE_OVERCOMMITTED, f"node {node} holds {held} CPU", (f"node {node}", *(f"pod ns/{p}" for p in pods)))


def test_a_violation_is_keyed_by_rule_and_first_object() -> None:
    assert violation_key(over("a", "x")) == (NODE_OVERCOMMITTED, "node a")
    assert violation_key(Finding(GROUP_SPLIT, "split", ())) == (GROUP_SPLIT, "split")


def test_a_lasting_violation_is_one_line_until_it_clears() -> None:
    tracker = ViolationTracker()
    started = tracker.update([over("a", "x", "y")], at=AT)
    assert [(line.rule, line.change) for line in started] == [(NODE_OVERCOMMITTED, Change.STARTED)]
    assert tracker.update([over("a", "x", "y")], at=AT) == []
    cleared = tracker.update([], at=AT)
    assert [(line.change, line.objects[0]) for line in cleared] == [(Change.CLEARED, "node a")]
    assert cleared[0].message.startswith("no longer found: node a holds")
    assert tracker.update([], at=AT) == []
    assert tracker.counts == {NODE_OVERCOMMITTED: 1}


@pytest.mark.parametrize(
    ("then", "change"),
    [
        pytest.param(over("a", "x", "y", held="5200m"), None, id="figures-only-is-no-change"),
        pytest.param(over("a", "y", "x"), None, id="same-objects-in-another-order-is-no-change"),
        pytest.param(over("a", "x", "y", "z"), Change.CHANGED, id="another-pod-is-a-change"),
        pytest.param(over("a", "x"), Change.CHANGED, id="a-pod-gone-is-a-change"),
    ],
)
def test_a_violation_changes_only_when_its_objects_do(then: Finding, change: Change | None) -> None:
    tracker = ViolationTracker()
    tracker.update([over("a", "x", "y")], at=AT)
    lines = tracker.update([then], at=AT)
    assert [line.change for line in lines] == ([change] if change else [])


def test_two_nodes_are_two_violations_and_clear_apart() -> None:
    tracker = ViolationTracker()
    assert len(tracker.update([over("a", "x"), over("b", "y")], at=AT)) == 2
    lines = tracker.update([over("b", "y")], at=AT)
    assert [(line.change, line.objects[0]) for line in lines] == [(Change.CLEARED, "node a")]
    assert tracker.active_by_rule() == {NODE_OVERCOMMITTED: 1}


def test_transition_findings_are_one_line_each_and_never_active() -> None:
    tracker = ViolationTracker()
    moved = Finding(CLAIM_CHANGED_NODE, "group g of record ns/r moved its claim from a to b", ("record ns/r",))
    lines = tracker.happened([moved, moved], at=AT)
    assert [line.change for line in lines] == [Change.HAPPENED, Change.HAPPENED]
    assert tracker.active == {} and tracker.counts == {CLAIM_CHANGED_NODE: 2}
