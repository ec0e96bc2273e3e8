"""node_room: the monitor's one accounting of a node, term by term, every number worked out by hand (docs/contract.md section 7)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.contract.record import Record
from harness.monitor import invariants as rules
from harness.monitor.invariants import World
from harness.monitor.room import BOUND, DATA_UNITS, TERMINATING, CountedPod, GroupResidual, NodeRoom, room_data
from harness.quantities import Amount

pytestmark = pytest.mark.unit

NS, RUN = "ns", "a"
GPU = "example.com/gpu"
MI, GI = 2**20, 2**30


def _record(peak: dict[str, str], *, node: str = "n1", state: str = "Reserved", run: str = RUN) -> Record:
    status: dict[str, Any] = {"name": "source", "state": state, "claimGeneration": 1}
    if state == "Reserved":
        status.update(node=node, holders=["p1"], reservedAt="2026-12-01T10:00:00Z")
    return Record.from_json({
        "apiVersion": "rescon.dev/v1alpha1",
        "kind": "ReservationRecord",
        "metadata": {"name": run, "namespace": NS, "labels": {"rescon.dev/active": "true"} if state == "Reserved" else {},
                     "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": run, "uid": f"{run}-uid", "controller": True}]},
        "spec": {"pipelineRun": {"name": run, "uid": f"{run}-uid"},
                 "groups": [{"name": "source", "tasks": ["small", "big"], "workspaces": ["source"], "peak": {"cpu": "0", "memory": "0", **peak}}]},
        "status": {"groups": [status]},
    })


def _pod(name: str, requests: dict[str, str], *, task: str | None = None, run: str = RUN, node: str = "n1",
         phase: str = "Running", deleting: bool = False) -> dict[str, Any]:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if task else {}
    meta: dict[str, Any] = {"uid": name, "name": name, "namespace": NS, "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T10:05:00Z"
    return {"metadata": meta, "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": requests}}]}, "status": {"phase": phase}}


def _world(*pods: dict[str, Any], records: tuple[Record, ...] = (), allocatable: dict[str, str] | None = None) -> World:
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": allocatable or {"cpu": "4800m", "memory": "8Gi", "pods": "110"}}}
    world = World(pods={p["metadata"]["uid"]: p for p in pods}, nodes={"n1": node})
    for record in records:
        world.records[(record.namespace, record.name)] = record
    return world


def _worked_example(plain_cpu: str) -> World:
    """The contract's example: a 4800m node, group A Reserved with peak 3800m running its 200m pod, and a plain pod."""
    return _world(_pod("a-small", {"cpu": "200m"}, task="small"), _pod("b", {"cpu": plain_cpu}), records=(_record({"cpu": "3800m"}),))


def test_the_worked_example_residual_3600m_total_4800m_fits() -> None:
    room = rules.node_room(_worked_example("1000m"), "n1", with_reservations=True)
    assert room.pods == (
        CountedPod("ns/a-small", Amount(200), "Running", "ns/a:source"),
        CountedPod("ns/b", Amount(1000), "Running"),
    )
    assert room.residuals == (GroupResidual("ns/a:source", Amount(3800), ("ns/a-small",), Amount(200)),)
    assert room.residuals[0].residual == Amount(3600)  # 3800m - 200m
    assert (room.pods_total, room.residuals_total, room.total) == (Amount(1200), Amount(3600), Amount(4800))
    assert room.allocatable == Amount(4800, 8 * GI) and room.over() == []


def test_one_millicore_more_is_over_on_cpu_and_the_finding_carries_that_arithmetic() -> None:
    world = _worked_example("1001m")
    room = rules.node_room(world, "n1", with_reservations=True)
    assert room.total == Amount(4801) and room.over() == ["cpu"]  # 200m + 1001m + 3600m
    [finding] = rules.overcommitted(world, with_reservations=True)
    assert finding.room == room
    assert finding.objects == ("node n1", "pod ns/a-small", "pod ns/b")


def test_the_sums_the_rule_judges_are_the_rooms_totals() -> None:
    """residuals_on and the finding's figures come from node_room: one accounting."""
    world = _worked_example("1001m")
    room = rules.node_room(world, "n1", with_reservations=True)
    assert rules.residuals_on(world, "n1") == room.residuals_total
    [finding] = rules.overcommitted(world, with_reservations=True)
    assert finding.message.startswith(f"node n1 holds {room.total.describe()} (pods {room.pods_total.describe()} + residuals {room.residuals_total.describe()})")


def test_a_terminating_pod_counts_and_says_so_a_finished_one_does_not_count() -> None:
    world = _world(
        _pod("held", {"cpu": "1500m"}, deleting=True),
        _pod("done", {"cpu": "4000m"}, phase="Succeeded", deleting=True),
        _pod("failed", {"cpu": "4000m"}, phase="Failed"),
        _pod("waiting", {"cpu": "300m"}, phase="Pending"),
    )
    room = rules.node_room(world, "n1", with_reservations=True)
    assert [(p.pod, p.why, p.phase) for p in room.pods] == [("ns/held", TERMINATING, "Running"), ("ns/waiting", BOUND, "Pending")]
    assert room.total == Amount(1800)  # 1500m + 300m; the finished 8000m hold nothing


def test_a_group_whose_pods_ask_more_than_its_peak_has_residual_zero() -> None:
    """Peak 500m, its two pods 300m + 400m = 700m there: residual max(0, 500m - 700m) = 0, the pods count as they are."""
    world = _world(_pod("a-small", {"cpu": "300m"}, task="small"), _pod("a-big", {"cpu": "400m"}, task="big"), records=(_record({"cpu": "500m"}),))
    room = rules.node_room(world, "n1", with_reservations=True)
    [group] = room.residuals
    assert (group.pods, group.pods_request, group.residual) == (("ns/a-big", "ns/a-small"), Amount(700), Amount())
    assert room.total == Amount(700)


def test_every_resource_is_counted_on_its_own() -> None:
    """Peak 1 CPU, 2Gi, 10Gi of disk, 2 GPUs; its pod 400m, 512Mi, 4Gi, 1 GPU; a plain pod 100m, 1Gi, 1Gi, 1 GPU.

    Residual 600m, 1536Mi, 6Gi, 1 GPU. Total: cpu 400 + 100 + 600 = 1100m; memory 512 + 1024 + 1536 = 3072Mi;
    ephemeral-storage 4 + 1 + 6 = 11Gi; GPUs 1 + 1 + 1 = 3 of 2: over on the GPU alone.
    """
    record = _record({"cpu": "1", "memory": "2Gi", "ephemeral-storage": "10Gi", GPU: "2"})
    own = _pod("a-small", {"cpu": "400m", "memory": "512Mi", "ephemeral-storage": "4Gi", GPU: "1"}, task="small")
    plain = _pod("b", {"cpu": "100m", "memory": "1Gi", "ephemeral-storage": "1Gi", GPU: "1"})
    allocatable = {"cpu": "4800m", "memory": "8Gi", "ephemeral-storage": "20Gi", GPU: "2"}
    room = rules.node_room(_world(own, plain, records=(record,), allocatable=allocatable), "n1", with_reservations=True)
    assert room.residuals[0].residual == Amount.of({"cpu": 600, "memory": 1536 * MI, "ephemeral-storage": 6 * GI, GPU: 1})
    assert room.total == Amount.of({"cpu": 1100, "memory": 3072 * MI, "ephemeral-storage": 11 * GI, GPU: 3})
    assert room.over() == [GPU]
    assert room.resources() == ["cpu", "memory", "ephemeral-storage", GPU]


def test_placement_only_counts_pods_and_no_residual() -> None:
    room = rules.node_room(_worked_example("1001m"), "n1", with_reservations=False)
    assert (room.residuals, room.with_reservations, room.total) == ((), False, Amount(1201))


def test_a_pod_is_named_with_its_records_group_and_only_reserved_groups_on_the_node_hold_a_residual() -> None:
    """Run c's group is Pending: its pod is still c's, but c holds no residual; a task in no group and a plain pod have none."""
    pending = _record({"cpu": "2"}, state="Pending", run="c")
    elsewhere = _record({"cpu": "2"}, node="n2", run="d")
    world = _world(_pod("c-small", {"cpu": "100m"}, task="small", run="c"), _pod("a-lint", {"cpu": "100m"}, task="lint"),
                   _pod("plain", {"cpu": "100m"}), _pod("d-big", {"cpu": "100m"}, task="big", run="d"), records=(pending, elsewhere))
    room = rules.node_room(world, "n1", with_reservations=True)
    assert [(p.pod, p.group) for p in room.pods] == [("ns/a-lint", None), ("ns/c-small", "ns/c:source"), ("ns/d-big", "ns/d:source"), ("ns/plain", None)]
    assert room.residuals == ()


def test_pods_and_groups_come_sorted_whatever_order_the_world_holds_them_in() -> None:
    pods = [_pod(f"p{i}", {"cpu": "100m"}, task="small", run=f"r{i % 3}") for i in range(7)]
    records = tuple(_record({"cpu": "1"}, run=f"r{i}") for i in range(3))
    expected = rules.node_room(_world(*pods, records=records), "n1", with_reservations=True)
    for seed in range(5):
        shuffled = list(pods)
        random.Random(seed).shuffle(shuffled)
        world = _world(*shuffled, records=tuple(reversed(records)))
        assert rules.node_room(world, "n1", with_reservations=True) == expected
    assert [p.pod for p in expected.pods] == [f"ns/p{i}" for i in range(7)]
    assert [g.group for g in expected.residuals] == ["ns/r0:source", "ns/r1:source", "ns/r2:source"]


def test_a_node_the_world_does_not_hold_has_nothing_allocatable() -> None:
    room = rules.node_room(_world(_pod("b", {"cpu": "1m"}, node="gone")), "gone", with_reservations=True)
    assert room.allocatable == Amount() and room.over() == ["cpu"]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 6000))
def test_total_is_pods_plus_residual_and_over_exactly_when_it_exceeds_allocatable(
    peak: int, own: int, plain: int, terminating: int, finished: int, allocatable: int
) -> None:
    world = _world(
        _pod("a-small", {"cpu": f"{own}m"}, task="small"), _pod("b", {"cpu": f"{plain}m"}),
        _pod("t", {"cpu": f"{terminating}m"}, deleting=True), _pod("f", {"cpu": f"{finished}m"}, phase="Succeeded"),
        records=(_record({"cpu": f"{peak}m"}),), allocatable={"cpu": f"{allocatable}m"},
    )
    room = rules.node_room(world, "n1", with_reservations=True)
    assert room.total.cpu == own + plain + terminating + max(0, peak - own)
    assert (room.over() == ["cpu"]) == (room.total.cpu > allocatable)
    assert bool(rules.overcommitted(world, with_reservations=True)) == (room.total.cpu > allocatable)


def test_room_data_is_the_arithmetic_as_plain_numbers() -> None:
    data = room_data(rules.node_room(_worked_example("1001m"), "n1", with_reservations=True))
    assert data == {
        "node": "n1", "over": ["cpu"], "units": DATA_UNITS,
        "allocatable": {"cpu": 4800, "memory": 8 * GI}, "total": {"cpu": 4801, "memory": 0},
        "pods_total": {"cpu": 1201, "memory": 0}, "residuals_total": {"cpu": 3600, "memory": 0}, "residuals_counted": True,
        "pods": [
            {"pod": "ns/a-small", "request": {"cpu": 200, "memory": 0}, "phase": "Running", "why": BOUND, "group": "ns/a:source"},
            {"pod": "ns/b", "request": {"cpu": 1001, "memory": 0}, "phase": "Running", "why": BOUND, "group": None},
        ],
        "residuals": [{"group": "ns/a:source", "peak": {"cpu": 3800, "memory": 0}, "pods": ["ns/a-small"],
                       "pods_request": {"cpu": 200, "memory": 0}, "residual": {"cpu": 3600, "memory": 0}}],
    }


def test_a_node_room_built_by_hand_sums_as_the_module_says() -> None:
    """The module's docstring example."""
    room = NodeRoom("n1", Amount(4800), pods=(CountedPod("ns/b", Amount(1001), "Running"), CountedPod("ns/a-small", Amount(200), "Running", group="ns/a:source")),
                    residuals=(GroupResidual("ns/a:source", Amount(3800), ("ns/a-small",), Amount(200)),))
    assert room.total == Amount(4801) and room.over() == ["cpu"]
