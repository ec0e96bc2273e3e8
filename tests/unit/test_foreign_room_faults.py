"""Faults about room others hold on a node: foreign_pod_shapes' arithmetic by the suite's own count, and the records of another scheduler.

The fixture's pods take 4400 of a 4800m node; B's group needs 500. Each mutant
miscounts one pod; the test pins that every miscount frees at least B's 500,
so a scheduler with that fault binds B where it does not fit.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.quantities import pod_request
from harness.suite.manifests import RenderContext, render
from tests.mutants.faults import (
    counts_while_deleting,
    sidecars_as_init,
    without_init_containers,
    without_overhead,
    without_pod_level_requests,
)

pytestmark = pytest.mark.unit

CONTEXT = RenderContext(
    namespace="ns", scheduler_name="tkn-scheduler", pool_selector={"rescon.dev/pool": "p"}, node_cpu_millis=4800,
    node_memory_bytes=8 << 30, pvcs={"b-source": "b-source"}, extra={"node": "p-1"},
)
NODE_CPU = 4800
B_NEEDS = 500


def _pods() -> dict[str, dict[str, Any]]:
    """The fixture's pods as the API server stores them: the RuntimeClass admission plugin has set the overhead pod's spec.overhead."""
    overhead = render("foreign_pod_shapes-class", CONTEXT)[0]["overhead"]["podFixed"]
    pods = {p["metadata"]["name"].removeprefix("foreign-pod-shapes-"): p for p in render("foreign_pod_shapes-pods", CONTEXT)}
    pods["overhead"]["spec"]["overhead"] = overhead
    return pods


def test_the_five_pods_take_4400_and_leave_b_no_room() -> None:
    pods = _pods()
    assert {name: pod_request(pod).cpu for name, pod in pods.items()} == {
        "overhead": 800, "sidecar": 800, "init": 1000, "pod-level": 1000, "terminating": 800,
    }
    assert NODE_CPU - sum(pod_request(p).cpu for p in pods.values()) < B_NEEDS


@pytest.mark.parametrize(
    "shape, rewrite",
    [("overhead", without_overhead), ("sidecar", sidecars_as_init), ("init", without_init_containers), ("pod-level", without_pod_level_requests)],
)
def test_each_miscount_frees_room_for_b(shape: str, rewrite: Any) -> None:
    pods = _pods()
    miscounted = {**pods, shape: {**pods[shape], "spec": rewrite(pods[shape]["spec"])}}
    # One pod miscounted alone already frees B's room (the mutant miscounts every pod of its shape).
    assert NODE_CPU - sum(pod_request(p).cpu for p in miscounted.values()) >= B_NEEDS
    assert pod_request(miscounted[shape]).cpu < pod_request(pods[shape]).cpu, "the rewrite undercounts the shape it is named for"


def test_a_terminating_pod_left_out_frees_room_for_b() -> None:
    pods = _pods()
    terminating = {**pods["terminating"], "metadata": {**pods["terminating"]["metadata"], "deletionTimestamp": "2026-12-05T10:00:00Z"}}
    assert not counts_while_deleting(terminating)
    assert all(counts_while_deleting(p) for name, p in pods.items() if name != "terminating")
    assert NODE_CPU - sum(pod_request(p).cpu for name, p in pods.items() if name != "terminating") >= B_NEEDS


def test_own_records_only_drops_the_records_another_scheduler_wrote() -> None:
    from tests.mutants.faults import own_records_only

    def record(writer: str | None) -> dict[str, Any]:
        return {"metadata": {"annotations": {} if writer is None else {"rescon.dev/scheduler-name": writer}}}

    filtered = own_records_only(lambda r: ["held"], lambda: "tkn-gw0")
    assert filtered(record("tkn-gw0")) == ["held"] and filtered(record(None)) == ["held"]
    assert filtered(record("rescon-another-scheduler")) == []
