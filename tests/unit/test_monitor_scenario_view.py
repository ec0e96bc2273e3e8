"""The scenario's pods and records as the monitor's watches show them (harness.monitor.scenario_view), read by the timeline."""

from __future__ import annotations

import copy
import sys
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.monitor.scenario_view import ScenarioView
from harness.monitor.watcher import ContractMonitor, _Event
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit


def _pod(name: str, namespace: str = "ns", *, uid: str | None = None, node: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"}, "spec": {"nodeName": node}, "status": {"phase": "Pending"}}


def _record(name: str, namespace: str = "ns", *, valid: bool = True) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord", "metadata": {"name": name, "namespace": namespace}}
    if valid:
        obj["spec"] = {"pipelineRun": {"name": name, "uid": "u"}, "groups": []}
    return obj


def _names(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_pods_of_other_namespaces_are_left_out_even_when_the_monitor_keeps_them() -> None:
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=True, extra_namespaces=("ns2",))  # type: ignore[arg-type]
    monitor._apply(_Event("pods", "SYNC", items=[_pod("a"), _pod("b", "ns2"), _pod("foreign", "other", node="n1")]))
    monitor._apply(_Event("pods", "ADDED", obj=_pod("c")))
    pods, records = monitor.view.snapshot()
    assert _names(pods) == ["a", "b", "c"]
    assert "uid-foreign" in monitor.world.pods  # the monitor weighs the foreign pod on its pool's node; the picture is the scenario's
    assert records == []


def test_a_deleted_pod_leaves_and_a_modified_one_is_replaced() -> None:
    view = ScenarioView(["ns"])
    view.apply("pods", "SYNC", items=[_pod("a"), _pod("b")])
    view.apply("pods", "MODIFIED", obj=_pod("a", node="n1"))
    view.apply("pods", "DELETED", obj=_pod("b"))
    pods, _ = view.snapshot()
    assert [(p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods] == [("a", "n1")]


def test_a_pod_recreated_under_its_name_is_a_new_pod() -> None:
    view = ScenarioView(["ns"])
    view.apply("pods", "ADDED", obj=_pod("a", uid="1"))
    view.apply("pods", "ADDED", obj=_pod("a", uid="2"))
    view.apply("pods", "DELETED", obj=_pod("a", uid="1"))
    pods, _ = view.snapshot()
    assert [p["metadata"]["uid"] for p in pods] == ["2"]


def test_a_fresh_list_replaces_what_came_before() -> None:
    view = ScenarioView(["ns"])
    view.apply("records", "ADDED", obj=_record("gone-while-the-watch-was-down"))
    view.apply("records", "SYNC", items=[_record("r1")])
    _, records = view.snapshot()
    assert _names(records) == ["r1"]


def test_a_record_the_contract_refuses_is_still_drawn() -> None:
    monitor = ContractMonitor(None, "ns", {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=True)  # type: ignore[arg-type]
    monitor._apply(_Event("records", "ADDED", obj=_record("broken", valid=False)))
    _, records = monitor.view.snapshot()
    assert _names(records) == ["broken"]
    assert [v.rule for v in monitor.violations] == ["record-invalid"]


def test_nodes_and_pipeline_runs_are_not_kept() -> None:
    view = ScenarioView(["ns"])
    view.apply("nodes", "ADDED", obj={"metadata": {"name": "n1"}})
    view.apply("pipelineruns", "ADDED", obj={"metadata": {"name": "run", "namespace": "ns"}})
    assert view.snapshot() == ([], [])


def test_a_snapshot_is_a_copy_that_later_events_leave_alone() -> None:
    view = ScenarioView(["ns"])
    view.apply("pods", "ADDED", obj=_pod("a"))
    pods, _ = view.snapshot()
    view.apply("pods", "DELETED", obj=_pod("a"))
    assert _names(pods) == ["a"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), st.sampled_from(["a", "b", "c"]), st.sampled_from(["ns", "other"])), max_size=30))
def test_the_view_holds_the_last_state_of_each_pod_of_the_namespaces(events: list[tuple[str, str, str]]) -> None:
    view = ScenarioView(["ns"])
    expected: dict[str, dict[str, Any]] = {}
    for number, (event_type, name, namespace) in enumerate(events):
        pod = _pod(name, namespace, uid=f"{namespace}-{name}")
        pod["metadata"]["resourceVersion"] = str(number)
        view.apply("pods", event_type, obj=pod)
        if namespace != "ns":
            continue
        if event_type == "DELETED":
            expected.pop(name, None)
        else:
            expected[name] = pod
    pods, _ = view.snapshot()
    assert sorted(pods, key=lambda p: p["metadata"]["name"]) == [expected[n] for n in sorted(expected)]


def test_snapshots_taken_while_events_are_applied_are_whole_states() -> None:
    view = ScenarioView(["ns"])
    pods_per_list = 50
    lists = [[_pod(f"p{i}", uid=f"{generation}-{i}") for i in range(pods_per_list)] for generation in range(20)]
    stop = threading.Event()
    sizes: list[int] = []

    def read() -> None:
        while not stop.is_set():
            sizes.append(len(view.snapshot()[0]))

    reader = threading.Thread(target=read)
    view.apply("pods", "SYNC", items=lists[0])
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can, so a reader meets every step of a SYNC
    reader.start()
    try:
        for items in lists * 20:
            view.apply("pods", "SYNC", items=copy.copy(items))
    finally:
        stop.set()
        reader.join(timeout=10)
        sys.setswitchinterval(switch)
    assert sizes and set(sizes) == {pods_per_list}  # never a list half cleared and refilled
