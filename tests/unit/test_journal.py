"""The monitor's journal: which moments a stream of watch events leaves, and which it cannot time."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.contract.record import Record
from harness.monitor.journal import (
    GroupReleased,
    GroupReserved,
    Journal,
    PodBound,
    PodCreated,
    PodUnschedulable,
    ReleaseDue,
    RoomFreed,
    unschedulable,
)

pytestmark = pytest.mark.unit

RUN = ("ns", "run", "u")
UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/2 nodes are available"}


def pod(uid: str = "p", *, node: str | None = None, phase: str = "Pending", conditions: tuple[dict[str, str], ...] = (),
        labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"uid": uid, "name": uid, "namespace": "ns",
                     "labels": {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "build", "tekton.dev/pipelineRunUID": "u"}
                     if labels is None else labels},
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase, "conditions": list(conditions)},
    }


RECORD: dict[str, Any] = {
    "apiVersion": "rescon.dev/v1alpha1",
    "kind": "ReservationRecord",
    "metadata": {
        "name": "run", "namespace": "ns", "labels": {}, "annotations": {"rescon.dev/scheduler-name": "tkn"},
        "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "run", "uid": "u", "controller": True}],
    },
    "spec": {"pipelineRun": {"name": "run", "uid": "u"},
             "groups": [{"name": "source", "tasks": ["fetch", "build"], "workspaces": ["source"], "peak": {"cpu": "1", "memory": "0"}}]},
}


def record(state: str = "Pending", *, node: str = "n1", generation: int = 1) -> Record:
    obj = copy.deepcopy(RECORD)
    if state == "Pending":
        obj["status"] = {"groups": [{"name": "source", "state": "Pending", "claimGeneration": generation}]}
    elif state == "Reserved":
        obj["status"] = {"groups": [{"name": "source", "state": "Reserved", "node": node, "holders": ["p"], "claimGeneration": generation,
                                     "reservedAt": "2026-12-01T10:00:00Z"}]}
        obj["metadata"]["labels"] = {"rescon.dev/active": "true"}
    else:
        obj["status"] = {"groups": [{"name": "source", "state": "Released", "node": node, "holders": ["p"], "claimGeneration": generation,
                                     "reservedAt": "2026-12-01T10:00:00Z", "releasedAt": "2026-12-01T10:01:00Z", "releaseReason": "TasksDone"}]}
    return Record.from_json(obj)


# --- pods ---


def test_a_pods_life_leaves_its_creation_mark_bind_and_the_room_it_frees() -> None:
    journal = Journal()
    journal.pod(1.0, pod(), event="ADDED", ours=True)
    journal.pod(1.1, pod(conditions=(UNSCHEDULABLE,)), event="MODIFIED", ours=True)
    journal.pod(1.2, pod(conditions=(UNSCHEDULABLE,)), event="MODIFIED", ours=True)  # marked again: nothing new
    journal.pod(3.0, pod(node="n1", phase="Running"), event="MODIFIED", ours=True)
    journal.pod(4.0, pod(node="n1", phase="Running"), event="MODIFIED", ours=True)
    journal.pod(5.0, pod(node="n1", phase="Succeeded"), event="MODIFIED", ours=True)
    journal.pod_gone(6.0, pod(node="n1", phase="Succeeded"))  # its room was freed when it finished
    assert journal.events() == (
        PodCreated(1.0, "p", "ns", "run", "build", "u"),
        PodUnschedulable(1.1, "p"),
        PodBound(3.0, "p", "n1"),
        RoomFreed(5.0, "n1", "pod ns/p finished"),
    )


def test_a_pod_gone_before_it_finished_frees_its_room_when_it_goes() -> None:
    journal = Journal()
    journal.pod(1.0, pod("f", node="n2", phase="Running", labels={}), event="ADDED", ours=False)
    journal.pod_gone(2.5, pod("f", node="n2", phase="Running", labels={}))
    assert journal.events() == (PodCreated(1.0, "f", "ns", None, None, None), RoomFreed(2.5, "n2", "pod ns/f gone"))


def test_another_schedulers_pod_frees_room_but_its_mark_and_bind_are_not_the_implementations() -> None:
    journal = Journal()
    journal.pod(1.0, pod("f", conditions=(UNSCHEDULABLE,)), event="MODIFIED", ours=False)
    journal.pod(2.0, pod("f", node="n1", phase="Failed"), event="MODIFIED", ours=False)
    assert journal.events() == (RoomFreed(2.0, "n1", "pod ns/f finished"),)


def test_a_relist_notes_states_without_moments_and_they_are_not_noted_again() -> None:
    journal = Journal()
    journal.pod(1.0, pod(node="n1", phase="Succeeded", conditions=(UNSCHEDULABLE,)), event="SYNC", ours=True)
    journal.pod(2.0, pod(node="n1", phase="Succeeded", conditions=(UNSCHEDULABLE,)), event="MODIFIED", ours=True)
    assert journal.events() == ()  # created, bound and finished at moments the monitor never saw


def test_unschedulable_is_kube_schedulers_mark_not_any_false_condition() -> None:
    assert unschedulable(pod(conditions=(UNSCHEDULABLE,)))
    assert not unschedulable(pod(conditions=({"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},)))
    assert not unschedulable(pod(conditions=({"type": "PodScheduled", "status": "True"},)))
    assert not unschedulable(pod())


# --- records ---


def test_a_claim_and_its_release_are_timed_and_the_release_frees_the_node() -> None:
    journal = Journal()
    journal.record(0.5, record("Pending", generation=0), event="ADDED", judged=True)
    journal.record(1.0, record("Reserved"), event="MODIFIED", judged=True)
    journal.record(1.5, record("Reserved"), event="MODIFIED", judged=True)  # the label write: nothing new
    journal.record(4.0, record("Released"), event="MODIFIED", judged=True)
    assert journal.events() == (
        GroupReserved(1.0, RUN, "run", "source", ("fetch", "build"), 1),
        GroupReleased(4.0, RUN, "source"),
        RoomFreed(4.0, "n1", "group ns/run/source left Reserved"),
    )


def test_a_rollback_frees_the_node_and_the_next_claim_is_timed_under_its_generation() -> None:
    journal = Journal()
    journal.record(1.0, record("Reserved", generation=1), event="MODIFIED", judged=True)
    journal.record(2.0, record("Pending", generation=1), event="MODIFIED", judged=True)
    journal.record(3.0, record("Reserved", node="n2", generation=2), event="MODIFIED", judged=True)
    assert journal.events() == (
        GroupReserved(1.0, RUN, "run", "source", ("fetch", "build"), 1),
        RoomFreed(2.0, "n1", "group ns/run/source left Reserved"),
        GroupReserved(3.0, RUN, "run", "source", ("fetch", "build"), 2),
    )


def test_another_schedulers_record_frees_room_but_is_not_timed() -> None:
    journal = Journal()
    journal.record(1.0, record("Reserved"), event="MODIFIED", judged=False)
    journal.record(2.0, record("Released"), event="MODIFIED", judged=False)
    assert journal.events() == (RoomFreed(2.0, "n1", "group ns/run/source left Reserved"),)


def test_a_record_gone_while_reserved_frees_its_node() -> None:
    journal = Journal()
    journal.record(1.0, record("Reserved"), event="MODIFIED", judged=True)
    journal.record_gone(3.0, record("Reserved"))
    journal.record_gone(3.5, record("Reserved"))  # already forgotten
    assert journal.events()[1:] == (RoomFreed(3.0, "n1", "record ns/run gone with group source Reserved"),)


def test_a_relisted_claim_is_not_timed_nor_its_label_write_after() -> None:
    journal = Journal()
    journal.record(1.0, record("Reserved"), event="SYNC", judged=True)
    journal.record(2.0, record("Reserved"), event="MODIFIED", judged=True)
    assert journal.events() == ()


def test_a_release_seen_due_is_noted_per_group() -> None:
    journal = Journal()
    journal.release_due(4.25, record("Reserved"), ["source"])
    journal.release_due(6.25, record("Reserved"), [])
    assert journal.events() == (ReleaseDue(4.25, RUN, "source"),)
