"""A node-overcommitted violation carries its node's arithmetic: short in the failure's message, whole in its detail and the report."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from harness.monitor import invariants as rules
from harness.monitor.room import NodeRoom
from harness.monitor.room_text import room_table
from harness.monitor.watcher import ARITHMETIC_SECTION, ContractBroken, ContractMonitor, Violation, _Event
from harness.plugin import message_with_detail
from harness.quantities import Amount
from harness.timeouts import DEFAULT_TIMEOUTS

pytest_plugins = ("pytester",)
pytestmark = pytest.mark.unit


def _node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "4800m", "memory": "8Gi"}}}


def _pod(name: str, cpu: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"uid": name, "name": name, "namespace": "ns"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    return {"metadata": meta, "spec": {"schedulerName": "tkn", "nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Running"}}


def _monitor(monkeypatch: pytest.MonkeyPatch, *, keep_going: bool = False) -> ContractMonitor:
    clock = [2.0]
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=False, scheduler_name="tkn",  # type: ignore[arg-type]
                              clock=lambda: clock[0], keep_going=keep_going)
    monitor.started = 0.0
    monkeypatch.setattr(monitor, "_fresh_world", lambda: monitor.world)  # the confirming read sees what the events said
    monitor._apply(_Event("nodes", "SYNC", items=[_node("n1")]))
    monitor._apply(_Event("pods", "SYNC", items=[]))
    return monitor


def _overcommit(monitor: ContractMonitor) -> None:
    """A terminating 4000m pod still counts, so the scheduler's 1000m beside it is 200m too much."""
    monitor._apply(_Event("pods", "ADDED", obj=_pod("held", "4000m", deleting=True)))
    monitor._apply(_Event("pods", "ADDED", obj=_pod("ours", "1000m")))


def test_the_violation_carries_the_room_the_monitor_judged_and_the_failure_its_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monitor = _monitor(monkeypatch)
    _overcommit(monitor)
    [violation] = monitor.violations
    assert violation.room == rules.node_room(monitor.world, "n1", with_reservations=False)
    assert violation.message.endswith("too much cpu; cpu 5000m > 4800m allocatable: pod ns/held 4000m + pod ns/ours 1000m")
    with pytest.raises(ContractBroken) as failure:
        monitor.raise_if_violated()
    assert str(failure.value) == violation.describe()
    assert failure.value.detail == f"node-overcommitted at 2.0s: {room_table(violation.room)}"
    assert "  ns/held    4000m  Running  terminating, not finished  -" in failure.value.detail.splitlines()


def test_a_rule_not_about_room_has_no_arithmetic(monkeypatch: pytest.MonkeyPatch) -> None:
    monitor = _monitor(monkeypatch)
    monitor.violations.append(Violation(rules.CLAIM_CHANGED_NODE, 1.0, "g's claim moved from n0 to n1"))
    _overcommit(monitor)  # a second rule broken: the first alone fails the scenario
    with pytest.raises(ContractBroken) as failure:
        monitor.raise_if_violated()
    assert failure.value.detail == ""


def test_keep_going_gives_the_arithmetic_of_every_violation_about_room(monkeypatch: pytest.MonkeyPatch) -> None:
    monitor = _monitor(monkeypatch, keep_going=True)
    monitor.violations.append(Violation(rules.CLAIM_CHANGED_NODE, 1.0, "g's claim moved from n0 to n1"))
    _overcommit(monitor)
    with pytest.raises(ContractBroken) as failure:
        monitor.raise_if_violated(final=True)
    assert failure.value.detail.startswith("node-overcommitted at 2.0s: room on node n1 (")


def test_room_now_judges_a_fresh_read_of_a_pool_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monitor = _monitor(monkeypatch)
    monitor._apply(_Event("pods", "ADDED", obj=_pod("ours", "1000m")))
    room = monitor.room_now("n1")
    assert room is not None and room.total == Amount(1000) and room.allocatable == Amount(4800, 8 * 2**30)
    assert monitor.room_now("elsewhere") is None


def test_a_violation_says_when_and_gives_its_table() -> None:
    room = NodeRoom("n1", Amount(4800))
    assert Violation(rules.NODE_OVERCOMMITTED, 4.25, "m", room=room).arithmetic() == f"node-overcommitted at 4.2s: {room_table(room)}"
    assert Violation(rules.GROUP_SPLIT, 1.0, "m").arithmetic() == ""


def test_message_with_detail_keeps_a_log_tails_end_and_a_tables_every_line() -> None:
    assert message_with_detail("died", "(log)", "a\nb\nc", lines=2) == "died\n(log):\nb\nc"
    assert message_with_detail("over", ARITHMETIC_SECTION, "a\nb\nc", lines=None) == f"over\n{ARITHMETIC_SECTION}:\na\nb\nc"
    assert message_with_detail("passed", "(log)", "", lines=2) == "passed"


SCENARIO = '''
from harness.monitor import invariants as rules
from harness.monitor.room import CountedPod, NodeRoom
from harness.monitor.watcher import ContractBroken, Violation
from harness.quantities import Amount
from harness.suite.features import Feature
from harness.suite.scenario import Scenario

SCENARIO = Scenario(name="overcommits", description="d", features=(Feature.COLOCATION,), fixtures=())


def test_overcommits():
    pods = tuple(CountedPod(f"ns/p{i:02d}", Amount(500), "Running") for i in range(12))
    violation = Violation(rules.NODE_OVERCOMMITTED, 3.2, "node n1 holds 6000m CPU", room=NodeRoom("n1", Amount(4800), pods))
    raise ContractBroken(violation.describe(), violation.arithmetic())
'''


def test_the_whole_table_reaches_the_terminal_junit_and_the_conformance_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_overcommits=SCENARIO)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "--junitxml=junit.xml", "--report-output=report.yaml")
    result.stdout.fnmatch_lines([f"*{ARITHMETIC_SECTION}*", "*room on node n1 (docs/contract.md section 7, Headroom): over on cpu*", "*ns/p11*"])
    case = next(ET.parse(pytester.path / "junit.xml").iter("testcase"))
    failure = case.find("failure")
    assert failure is not None and "ns/p00" in (failure.text or "")
    from harness.report.conformance_report import read_report

    (test,) = read_report(pytester.path / "report.yaml").tests
    lines = test.message.splitlines()
    assert lines[0] == "harness.monitor.watcher.ContractBroken: contract monitor: node-overcommitted at 3.2s: node n1 holds 6000m CPU"
    # Every line of the table, from its heading on: twelve pods are more than a log tail's ten lines.
    assert lines[1:4] == [f"{ARITHMETIC_SECTION}:", "node-overcommitted at 3.2s: room on node n1 (docs/contract.md section 7, Headroom): over on cpu",
                          "cpu: 6000m counted > 4800m allocatable, 1200m over"]
    assert lines[-1] == "  pods 6000m + residuals 0m = 6000m > allocatable 4800m" and sum("ns/p" in line for line in lines) == 12


def test_violation_is_a_value() -> None:
    room = NodeRoom("n1", Amount(4800))
    violation = Violation(rules.NODE_OVERCOMMITTED, 1.0, "m", ("node n1",), room)
    assert dataclasses.replace(violation) == violation and hash(violation) == hash(dataclasses.replace(violation))


def test_each_violation_about_room_is_attached_as_its_own_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    import allure

    from harness.suite import attachments

    attached: list[tuple[str, str]] = []
    monkeypatch.setattr(allure, "attach", lambda body, name, kind: attached.append((name, body)))
    room = NodeRoom("n1", Amount(4800))
    violations = [Violation(rules.GROUP_SPLIT, 1.0, "split"), Violation(rules.NODE_OVERCOMMITTED, 4.2, "over", ("node n1",), room)]
    run = SimpleNamespace(monitor=SimpleNamespace(violations=violations, events_seen=3, confirmations=1), rendered={})
    attachments.attach_scenario_artifacts(run, None, None, None, include_logs=False, failed=True)  # type: ignore[arg-type]
    rooms = [(name, body) for name, body in attached if name.startswith("room on node")]
    assert rooms == [("room on node n1 (node-overcommitted at 4.2s)", f"node-overcommitted at 4.2s: {room_table(room)}")]
