"""Queueing hints: which events may make a parked pod schedulable."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.headroom import ActiveReservation
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.queue_hints import (
    QUEUE,
    SKIP,
    PodSnapshot,
    QueueingHint,
    claim_changed,
    node_added,
    node_updated,
    pipeline_run_changed,
    pod_deleted,
    pod_updated,
    own_pod_updated,
    record_added,
    reservation_changed,
    storage_class_changed,
    volume_changed,
)
from reference_scheduler.core.resources import Resources

pytestmark = pytest.mark.unit

A = GroupKey("ci", "run-a", "g0")
B = GroupKey("ci", "run-b", "g0")
WAITING = "b-1"


def snap(
    uid: str = "a-1", node: str | None = "n1", *, terminal: bool = False, cpu: int = 200, memory: int = 0
) -> PodSnapshot:
    return PodSnapshot(uid, node, terminal, Resources(cpu=cpu, memory=memory))


@pytest.mark.parametrize(
    ("deleted", "hint"),
    [
        pytest.param(snap(), QUEUE, id="running-pod-deleted"),
        pytest.param(snap(node=None), SKIP, id="unbound-pod-deleted"),
        pytest.param(snap(terminal=True), SKIP, id="terminal-pod-deleted"),
    ],
)
def test_pod_deleted(deleted: PodSnapshot, hint: QueueingHint) -> None:
    assert pod_deleted(deleted) is hint


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(snap(), snap(terminal=True), QUEUE, id="bound-pod-became-terminal"),
        pytest.param(snap(), snap(cpu=100), QUEUE, id="bound-pod-cpu-lowered"),
        pytest.param(snap(memory=2), snap(memory=1), QUEUE, id="bound-pod-memory-lowered"),
        pytest.param(snap(), snap(cpu=300), SKIP, id="bound-pod-request-raised"),
        pytest.param(snap(), snap(), SKIP, id="bound-pod-status-churn"),
        pytest.param(snap(node=None), snap(), SKIP, id="pod-got-bound"),
        pytest.param(snap(node=None), snap(node=None, terminal=True), SKIP, id="unbound-pod-finished"),
        pytest.param(snap(terminal=True), snap(terminal=True, cpu=0), SKIP, id="terminal-pod-updated"),
        pytest.param(snap(WAITING, None, cpu=2000), snap(WAITING, None, cpu=1000), QUEUE, id="waiting-pod-lowered"),
        pytest.param(snap(WAITING, None), snap(WAITING, None), SKIP, id="waiting-pod-unchanged"),
        pytest.param(snap(WAITING, None, cpu=1), snap(WAITING, None, cpu=2), SKIP, id="waiting-pod-raised"),
    ],
)
def test_pod_updated(old: PodSnapshot, new: PodSnapshot, hint: QueueingHint) -> None:
    assert pod_updated(old, new, waiting_uid=WAITING) is hint


def node(
    name: str = "n1",
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    heartbeat: str = "t0",
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or [], "unschedulable": unschedulable},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": heartbeat}],
        },
    }


def waiting_pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "b-1", "uid": WAITING}, "spec": {"containers": [{"name": "c"}], **spec}}


GPU_TAINT = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
GPU_TOLERATION = [{"key": "gpu", "operator": "Exists"}]


@pytest.mark.parametrize(
    ("pod", "added", "reserved_node", "hint"),
    [
        pytest.param(waiting_pod(), node(), None, QUEUE, id="plain-node-added"),
        pytest.param(waiting_pod(), node(taints=GPU_TAINT), None, SKIP, id="tainted-node-added"),
        pytest.param(waiting_pod(tolerations=GPU_TOLERATION), node(taints=GPU_TAINT), None, QUEUE, id="tolerated-taint"),
        pytest.param(waiting_pod(nodeSelector={"pool": "ci"}), node(), None, SKIP, id="selector-not-matched"),
        pytest.param(waiting_pod(), node(unschedulable=True), None, SKIP, id="cordoned-node-added"),
        pytest.param(waiting_pod(), node("n2"), "n1", SKIP, id="group-reserved-elsewhere"),
        pytest.param(waiting_pod(), node("n1"), "n1", QUEUE, id="group-reserved-on-it"),
    ],
)
def test_node_added(pod: dict[str, Any], added: dict[str, Any], reserved_node: str | None, hint: QueueingHint) -> None:
    assert node_added(pod, added, reserved_node=reserved_node) is hint


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(waiting_pod(), node(cpu="4"), node(cpu="8"), QUEUE, id="allocatable-cpu-grew"),
        pytest.param(waiting_pod(), node(memory="8Gi"), node(memory="16Gi"), QUEUE, id="allocatable-memory-grew"),
        pytest.param(waiting_pod(), node(pods="10"), node(pods="20"), QUEUE, id="allocatable-pods-grew"),
        pytest.param(waiting_pod(), node(cpu="8"), node(cpu="4"), SKIP, id="allocatable-shrank"),
        pytest.param(waiting_pod(), node(unschedulable=True), node(), QUEUE, id="uncordoned"),
        pytest.param(waiting_pod(), node(), node(unschedulable=True), SKIP, id="cordoned"),
        pytest.param(waiting_pod(), node(taints=GPU_TAINT), node(), QUEUE, id="taint-removed"),
        pytest.param(waiting_pod(), node(), node(taints=GPU_TAINT), SKIP, id="taint-added"),
        pytest.param(
            waiting_pod(tolerations=GPU_TOLERATION), node(taints=GPU_TAINT), node(), SKIP, id="tolerated-taint-removed"
        ),
        pytest.param(
            waiting_pod(nodeSelector={"pool": "ci"}), node(), node(labels={"pool": "ci"}), QUEUE, id="labels-now-match"
        ),
        pytest.param(
            waiting_pod(nodeSelector={"pool": "ci"}),
            node(labels={"pool": "ci"}),
            node(labels={"pool": "ci", "zone": "a"}),
            SKIP,
            id="labels-changed-already-matched",
        ),
        pytest.param(
            waiting_pod(nodeSelector={"pool": "ci"}),
            node(cpu="4"),
            node(cpu="8"),
            SKIP,
            id="grew-but-still-not-matching",
        ),
        pytest.param(waiting_pod(), node(heartbeat="t0"), node(heartbeat="t1"), SKIP, id="heartbeat-only"),
        pytest.param(waiting_pod(), node(cpu="4"), node(cpu="four"), QUEUE, id="unreadable-allocatable"),
    ],
)
def test_node_updated(pod: dict[str, Any], old: dict[str, Any], new: dict[str, Any], hint: QueueingHint) -> None:
    assert node_updated(pod, old, new) is hint


def test_node_updated_elsewhere_than_the_reserved_node() -> None:
    assert node_updated(waiting_pod(), node("n2", cpu="4"), node("n2", cpu="8"), reserved_node="n1") is SKIP
    assert node_updated(waiting_pod(), node("n1", cpu="4"), node("n1", cpu="8"), reserved_node="n1") is QUEUE


def reservation(group: GroupKey = A, node_name: str = "n1", cpu: int = 3800, memory: int = 0) -> ActiveReservation:
    return ActiveReservation(group, node_name, Resources(cpu=cpu, memory=memory))


@pytest.mark.parametrize(
    ("old", "new", "pod_group", "hint"),
    [
        pytest.param(reservation(), None, B, QUEUE, id="reservation-released"),
        pytest.param(None, reservation(), B, SKIP, id="reservation-made"),
        pytest.param(reservation(), reservation(node_name="n2"), B, QUEUE, id="reservation-moved"),
        pytest.param(reservation(cpu=3800), reservation(cpu=2000), B, QUEUE, id="peak-lowered"),
        pytest.param(reservation(memory=5), reservation(memory=4), B, QUEUE, id="peak-memory-lowered"),
        pytest.param(reservation(cpu=2000), reservation(cpu=3800), B, SKIP, id="peak-raised"),
        pytest.param(reservation(), reservation(), B, SKIP, id="unchanged"),
        pytest.param(None, None, B, SKIP, id="nothing-to-nothing"),
        pytest.param(None, reservation(B), B, QUEUE, id="own-group-reserved"),
        pytest.param(reservation(B), reservation(B, cpu=9000), B, QUEUE, id="own-group-changed"),
        pytest.param(reservation(), None, None, QUEUE, id="released-plain-pod"),
        pytest.param(None, reservation(), None, SKIP, id="made-plain-pod"),
    ],
)
def test_reservation_changed(
    old: ActiveReservation | None, new: ActiveReservation | None, pod_group: GroupKey | None, hint: QueueingHint
) -> None:
    assert reservation_changed(old, new, pod_group=pod_group) is hint


class TestOwnPodUpdated:
    PENDING = {
        "metadata": {"name": "b-1", "resourceVersion": "1", "labels": {"app": "b"}, "managedFields": [{"manager": "kubectl"}]},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
        "status": {"phase": "Pending"},
    }

    def test_the_schedulers_own_condition_write_is_skip(self) -> None:
        written = {
            **self.PENDING,
            "metadata": {**self.PENDING["metadata"], "resourceVersion": "2", "managedFields": [{"manager": "tkn-scheduler"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]},
        }
        assert own_pod_updated(self.PENDING, written) is SKIP

    def test_a_changed_spec_or_label_is_queue(self) -> None:
        resized = {**self.PENDING, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
        relabelled = {**self.PENDING, "metadata": {**self.PENDING["metadata"], "labels": {"app": "c"}}}
        assert own_pod_updated(self.PENDING, resized) is QUEUE
        assert own_pod_updated(self.PENDING, relabelled) is QUEUE


def pipeline_run(*, planned: bool = False, finished: bool = False, children: int = 0) -> dict[str, Any]:
    status: dict[str, Any] = {"childReferences": [{"name": f"tr-{i}"} for i in range(children)]}
    if planned:
        status["pipelineSpec"] = {"tasks": [{"name": "clone"}]}
    status["conditions"] = [{"type": "Succeeded", "status": "False" if finished else "Unknown"}]
    return {"metadata": {"namespace": "ci", "name": "run-b"}, "spec": {"pipelineSpec": {"tasks": [{"name": "clone"}]}}, "status": status}


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(pipeline_run(), pipeline_run(planned=True), QUEUE, id="plan-appeared"),
        pytest.param(None, pipeline_run(planned=True), QUEUE, id="added-already-planned"),
        pytest.param(pipeline_run(), pipeline_run(finished=True), QUEUE, id="finished-without-a-plan"),
        pytest.param(None, pipeline_run(), SKIP, id="added-not-planned-yet"),
        pytest.param(pipeline_run(), pipeline_run(children=1), SKIP, id="pending-run-updated"),
        pytest.param(pipeline_run(planned=True), pipeline_run(planned=True, children=1), SKIP, id="planned-run-updated"),
        pytest.param(pipeline_run(planned=True), pipeline_run(planned=True, finished=True), SKIP, id="planned-run-finished"),
        pytest.param(pipeline_run(finished=True), pipeline_run(finished=True, children=1), SKIP, id="finished-run-updated"),
    ],
)
def test_pipeline_run_changed(old: dict[str, Any] | None, new: dict[str, Any], hint: QueueingHint) -> None:
    assert pipeline_run_changed(old, new) is hint


@pytest.mark.parametrize(
    ("pod_run", "hint"),
    [
        pytest.param(("ci", "run-b"), QUEUE, id="pod-of-the-records-run"),
        pytest.param(("ci", "run-a"), SKIP, id="pod-of-another-run"),
        pytest.param(("other", "run-b"), SKIP, id="same-name-other-namespace"),
        pytest.param(None, SKIP, id="plain-pod"),
    ],
)
def test_record_added(pod_run: tuple[str, str] | None, hint: QueueingHint) -> None:
    assert record_added(pod_run, ("ci", "run-b")) is hint


# --- volumes -------------------------------------------------------------------

WAITING_CLAIMS = {("ci", "src"), ("ci", "cache")}


def claim(name: str = "src", namespace: str = "ci", *, phase: str = "Pending", volume: str | None = None, selected: str | None = None,
          deleting: bool = False, capacity: str = "1Gi", storage_class: str = "standard") -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if selected is not None:
        meta["annotations"] = {"volume.kubernetes.io/selected-node": selected}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T10:00:00Z"
    spec = {"storageClassName": storage_class, **({"volumeName": volume} if volume else {})}
    return {"metadata": meta, "spec": spec, "status": {"phase": phase, "capacity": {"storage": capacity}}}


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(None, claim(), QUEUE, id="the-pods-claim-appeared"),
        pytest.param(claim(), claim(phase="Bound", volume="pv-1"), QUEUE, id="immediate-claim-bound"),
        pytest.param(claim(selected="n1"), claim(), QUEUE, id="selected-node-taken-off"),
        pytest.param(claim(), claim(selected="n1"), QUEUE, id="selected-node-set"),
        pytest.param(claim(), claim(deleting=True), QUEUE, id="deletion-started"),
        pytest.param(claim(), claim(storage_class="zonal"), QUEUE, id="class-changed"),
        pytest.param(claim(), claim(capacity="2Gi"), SKIP, id="status-churn-the-rules-do-not-read"),
        pytest.param(claim(), None, SKIP, id="claim-deleted"),
        pytest.param(None, claim("other"), SKIP, id="another-pods-claim"),
        pytest.param(None, claim(namespace="elsewhere"), SKIP, id="same-name-other-namespace"),
    ],
)
def test_claim_changed(old: dict[str, Any] | None, new: dict[str, Any] | None, hint: QueueingHint) -> None:
    assert claim_changed(WAITING_CLAIMS, old, new) is hint


def pv(claim_name: str | None = "src", *, phase: str = "Bound", host: str | None = "n1", message: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if claim_name is not None:
        spec["claimRef"] = {"namespace": "ci", "name": claim_name}
    if host is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}]}}
    return {"metadata": {"name": "pv-1"}, "spec": spec, "status": {"phase": phase, "message": message}}


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(None, pv(), QUEUE, id="the-claims-volume-appeared"),
        pytest.param(pv(phase="Available"), pv(), QUEUE, id="the-claims-volume-bound"),
        pytest.param(pv(host="n1"), pv(host="n2"), QUEUE, id="node-affinity-changed"),
        pytest.param(pv("other"), pv("src"), QUEUE, id="claim-ref-now-the-pods"),
        pytest.param(pv(), pv(message="resized"), SKIP, id="status-message-only"),
        pytest.param(None, pv("other"), SKIP, id="another-claims-volume"),
        pytest.param(None, pv(None, phase="Available"), SKIP, id="static-volume-of-no-claim"),
        pytest.param(pv(), None, SKIP, id="volume-deleted"),
    ],
)
def test_volume_changed(old: dict[str, Any] | None, new: dict[str, Any] | None, hint: QueueingHint) -> None:
    assert volume_changed(WAITING_CLAIMS, old, new) is hint


def storage_class(name: str = "standard", *, mode: str = "WaitForFirstConsumer", zones: tuple[str, ...] = (), label: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {"metadata": {"name": name, "labels": {"l": label}}, "volumeBindingMode": mode}
    if zones:
        found["allowedTopologies"] = [{"matchLabelExpressions": [{"key": "zone", "values": list(zones)}]}]
    return found


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(None, storage_class(), QUEUE, id="the-claims-class-appeared"),
        pytest.param(storage_class(mode="Immediate"), storage_class(), QUEUE, id="binding-mode-changed"),
        pytest.param(storage_class(zones=("a",)), storage_class(zones=("a", "b")), QUEUE, id="allowed-topologies-changed"),
        pytest.param(storage_class(), storage_class(label="x"), SKIP, id="label-only"),
        pytest.param(None, storage_class("fast"), SKIP, id="another-class"),
        pytest.param(storage_class(), None, SKIP, id="class-deleted"),
    ],
)
def test_storage_class_changed(old: dict[str, Any] | None, new: dict[str, Any] | None, hint: QueueingHint) -> None:
    assert storage_class_changed({"standard"}, old, new) is hint


def test_a_node_newly_advertising_a_gpu_is_queue_and_one_losing_it_skip() -> None:
    old = node()
    new = node()
    new["status"]["allocatable"]["nvidia.com/gpu"] = "1"
    pod = {"metadata": {"name": "p"}, "spec": {}}
    assert node_updated(pod, old, new) is QueueingHint.QUEUE
    assert node_updated(pod, new, old) is QueueingHint.SKIP


def test_a_reservation_giving_back_its_gpu_is_queue() -> None:
    key = GroupKey("ci", "run-a", "g0")
    with_gpu = ActiveReservation(key, "n1", Resources.of({"cpu": 100, "nvidia.com/gpu": 1}))
    without = ActiveReservation(key, "n1", Resources(cpu=100))
    assert reservation_changed(with_gpu, without, pod_group=None) is QueueingHint.QUEUE
