"""Which parked pods an informer event moves: the hints wired to real caches (runtime/requeue.py)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference_scheduler.core.volume_binding import VolumeLookups
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.informer import Informer
from reference_scheduler.runtime.requeue import EventHints, node_fields_checked

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


def informer(name: str, objects: list[Obj]) -> Informer:
    found = Informer(name, lambda **_: {"items": []}, stop=threading.Event())
    for obj in objects:
        meta = obj["metadata"]
        found._store[(meta.get("namespace") or "", meta["name"])] = obj  # noqa: SLF001
    return found


def node(name: str, *, cpu: str = "4", unschedulable: bool = False, taint: bool = False, heartbeat: str = "t0") -> Obj:
    spec: Obj = {"unschedulable": unschedulable}
    if taint:
        spec["taints"] = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    return {
        "metadata": {"name": name, "labels": {"pool": "p"}},
        "spec": spec,
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}, "conditions": [{"type": "Ready", "lastHeartbeatTime": heartbeat}]},
    }


def pod(name: str, *, run: str | None = None, task: str = "build", node_name: str | None = None, phase: str = "Pending", cpu: str = "1") -> Obj:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if run else {}
    spec: Obj = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "ns", "uid": name, "labels": labels}, "spec": spec, "status": {"phase": phase}}


def record(run: str, *, state: str = "Reserved", node_name: str = "n1", peak: str = "3") -> Obj:
    return {
        "metadata": {"name": run, "namespace": "ns"},
        "spec": {"groups": [{"name": "g0", "tasks": ["build"], "peak": {"cpu": peak}}]},
        "status": {"groups": [{"name": "g0", "state": state, "node": node_name}]},
    }


WAITING = {"plain": pod("plain"), "b-build": pod("b-build", run="b")}


def hints(*, records: list[Obj] = (), waiting: dict[str, Obj] = WAITING, nodes: list[Obj] = ()) -> EventHints:  # type: ignore[assignment]
    pods = informer("pods", list(waiting.values()))
    node_cache = informer("nodes", list(nodes))
    view = ClusterView(pods=pods, nodes=node_cache, records=informer("records", list(records)))
    return EventHints(view=view, waiting_pod=pods.get, node_named=lambda name: node_cache.get("", name))


def moved(should_move: Any, waiting: dict[str, Obj] = WAITING) -> set[str]:
    return set() if should_move is None else {name for name in waiting if should_move(("ns", name))}


class TestNodes:
    def test_a_heartbeat_moves_no_one_and_evaluates_nothing(self) -> None:
        assert node_fields_checked(node("n1", heartbeat="t0")) == node_fields_checked(node("n1", heartbeat="t1"))
        assert hints().after_node_event("MODIFIED", node("n1", heartbeat="t1"), node("n1")) is None

    def test_an_uncordoned_or_grown_node_moves_the_pods_it_can_take(self) -> None:
        assert moved(hints().after_node_event("MODIFIED", node("n1"), node("n1", unschedulable=True))) == set(WAITING)
        assert moved(hints().after_node_event("MODIFIED", node("n1", cpu="8"), node("n1"))) == set(WAITING)

    def test_a_cordoned_or_shrunk_node_moves_no_one(self) -> None:
        assert moved(hints().after_node_event("MODIFIED", node("n1", unschedulable=True), node("n1"))) == set()
        assert moved(hints().after_node_event("MODIFIED", node("n1", cpu="2"), node("n1"))) == set()

    def test_a_new_node_moves_only_pods_its_taint_allows(self) -> None:
        assert moved(hints().after_node_event("ADDED", node("n2", taint=True), None)) == set()
        assert moved(hints().after_node_event("ADDED", node("n2"), None)) == set(WAITING)

    def test_a_new_node_does_not_move_a_pod_whose_group_is_reserved_elsewhere(self) -> None:
        found = hints(records=[record("b", node_name="n1")])
        assert moved(found.after_node_event("ADDED", node("n2"), None)) == {"plain"}
        assert moved(found.after_node_event("MODIFIED", node("n1", cpu="8"), node("n1"))) == set(WAITING)

    def test_a_deleted_node_moves_no_one_without_a_spread_constraint(self) -> None:
        # Only PodTopologySpread registers Node/Delete: a domain gone can lift a global minimum.
        assert moved(hints().after_node_event("DELETED", node("n1"), None)) == set()


class TestPods:
    def test_a_bound_pod_finishing_or_deleted_moves_everyone(self) -> None:
        running = pod("a-1", run="a", node_name="n1", phase="Running")
        done = pod("a-1", run="a", node_name="n1", phase="Succeeded")
        assert moved(hints().after_pod_event("MODIFIED", done, running)) == set(WAITING)
        assert moved(hints().after_pod_event("DELETED", running, None)) == set(WAITING)

    def test_a_bound_pod_shrunk_in_place_moves_everyone(self) -> None:
        running = pod("a-1", node_name="n1", phase="Running", cpu="2")
        assert moved(hints().after_pod_event("MODIFIED", {**running, "spec": pod("a-1", node_name="n1", cpu="1")["spec"]}, running)) == set(WAITING)

    def test_binding_a_pod_or_deleting_an_unbound_or_finished_one_moves_no_one(self) -> None:
        # A pod placed frees no room; it moves only pods whose pod affinity or spread it may
        # satisfy (TestPlacedPods), and none of these has any.
        assert moved(hints().after_pod_event("MODIFIED", pod("a-1", node_name="n1"), pod("a-1"))) == set()
        assert moved(hints().after_pod_event("ADDED", pod("a-1", node_name="n1", phase="Running"), None)) == set()
        assert hints().after_pod_event("DELETED", pod("a-1"), None) is None
        assert hints().after_pod_event("DELETED", pod("a-1", node_name="n1", phase="Succeeded"), None) is None

    def test_a_status_update_of_a_placed_pod_evaluates_nothing(self) -> None:
        running = pod("a-1", node_name="n1", phase="Running")
        assert hints().after_pod_event("MODIFIED", {**running, "status": {"phase": "Running", "podIP": "10.0.0.9"}}, running) is None

    def test_an_unreadable_request_moves_everyone(self) -> None:
        running = pod("a-1", node_name="n1", phase="Running", cpu="lots")
        assert moved(hints().after_pod_event("DELETED", running, None)) == set(WAITING)


class TestRoomFreedOnOneNode:
    """Room freed on a node moves only the parked pods that could go there."""

    SELECTING_Q = {"q": {**pod("q"), "spec": {**pod("q")["spec"], "nodeSelector": {"pool": "q"}}}, "plain": pod("plain")}

    def test_a_pod_finishing_in_another_pool_moves_no_one_who_selects_this_one(self) -> None:
        found = hints(waiting=self.SELECTING_Q, nodes=[node("n1")])
        done = pod("a-1", node_name="n1", phase="Succeeded")
        assert moved(found.after_pod_event("MODIFIED", done, pod("a-1", node_name="n1", phase="Running")), self.SELECTING_Q) == {"plain"}

    def test_a_release_in_another_pool_moves_no_one_who_selects_this_one(self) -> None:
        found = hints(waiting=self.SELECTING_Q, nodes=[node("n1")])
        assert moved(found.after_record_event("MODIFIED", record("a", state="Released"), record("a")), self.SELECTING_Q) == {"plain"}

    def test_room_freed_off_a_groups_reserved_node_does_not_move_its_pods(self) -> None:
        found = hints(records=[record("b", node_name="n2")], nodes=[node("n1"), node("n2")])
        done = pod("a-1", node_name="n1", phase="Succeeded")
        assert moved(found.after_pod_event("MODIFIED", done, pod("a-1", node_name="n1", phase="Running"))) == {"plain"}
        assert moved(found.after_pod_event("DELETED", pod("a-2", node_name="n2", phase="Running"), None)) == set(WAITING)

    def test_a_node_missing_from_the_cache_moves_everyone(self) -> None:
        found = hints(waiting=self.SELECTING_Q)
        assert moved(found.after_pod_event("DELETED", pod("a-1", node_name="gone", phase="Running"), None), self.SELECTING_Q) == set(self.SELECTING_Q)


class TestPlacedPods:
    """A pod placed, relabelled or gone moves the parked pods whose pod affinity, anti-affinity, spread
    or host ports it may decide, wherever they could go: the verdict on one node can change with a pod
    on another node of the same domain (core.queue_hints' inter-pod hints)."""

    @staticmethod
    def parked(name: str, *, affinity: str | None = None, anti: str | None = None, spread: bool = False, port: int | None = None) -> Obj:
        found = pod(name)
        spec = found["spec"]
        spec["nodeSelector"] = {"pool": "q"}  # never n1: room freed there would not move it
        terms: Obj = {}
        if affinity:
            terms["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": affinity}}, "topologyKey": "zone"}]}
        if anti:
            terms["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": anti}}, "topologyKey": "zone"}]}
        if terms:
            spec["affinity"] = terms
        if spread:
            found["metadata"]["labels"] = {"app": "web"}
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
            ]
        if port:
            spec["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
        return found

    def waiting(self) -> dict[str, Obj]:
        return {
            "affine": self.parked("affine", affinity="db"),
            "repelled": self.parked("repelled", anti="db"),
            "spread": self.parked("spread", spread=True),
            "ported": self.parked("ported", port=8080),
            "plain": self.parked("plain"),
        }

    def labelled(self, name: str, node_name: str | None, *, phase: str = "Running", port: int | None = None, **labels: str) -> Obj:
        found = pod(name, node_name=node_name, phase=phase)
        found["metadata"]["labels"] = labels
        if port:
            found["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
        return found

    def test_a_pod_bound_moves_the_pods_it_may_let_in(self) -> None:
        waiting = self.waiting()
        found = hints(waiting=waiting, nodes=[node("n1")])
        db = self.labelled("db", "n1", app="db")
        assert moved(found.after_pod_event("MODIFIED", db, self.labelled("db", None, app="db")), waiting) == {"affine"}
        web = self.labelled("web", "n1", app="web")
        assert moved(found.after_pod_event("ADDED", web, None), waiting) == {"spread"}

    def test_a_pod_gone_moves_the_pods_it_kept_out_wherever_they_could_go(self) -> None:
        waiting = self.waiting()
        found = hints(waiting=waiting, nodes=[node("n1")])
        db = self.labelled("db", "n1", app="db", port=8080)
        # Deleted, or finished: either way it no longer counts on n1 (room freed there moves none of them: pool q).
        assert moved(found.after_pod_event("DELETED", db, None), waiting) == {"repelled", "ported"}
        done = self.labelled("db", "n1", phase="Succeeded", app="db", port=8080)
        assert moved(found.after_pod_event("MODIFIED", done, db), waiting) == {"repelled", "ported"}
        web = self.labelled("web", "n1", app="web")
        assert moved(found.after_pod_event("DELETED", web, None), waiting) == {"spread"}

    def test_a_placed_pod_relabelled_moves_the_pods_its_labels_decided(self) -> None:
        waiting = self.waiting()
        found = hints(waiting=waiting, nodes=[node("n1")])
        before, after = self.labelled("x", "n1", app="db"), self.labelled("x", "n1", app="web")
        assert moved(found.after_pod_event("MODIFIED", after, before), waiting) == {"repelled", "spread"}
        assert moved(found.after_pod_event("MODIFIED", before, after), waiting) == {"affine", "spread"}

    def test_a_node_relabelled_or_deleted_moves_the_pods_spread_or_affine_over_its_key(self) -> None:
        waiting = self.waiting()
        found = hints(waiting=waiting)
        zoned, moved_zone = node("n1"), node("n1")
        zoned["metadata"]["labels"] = {"pool": "p", "zone": "a"}
        moved_zone["metadata"]["labels"] = {"pool": "p", "zone": "b"}
        assert moved(found.after_node_event("MODIFIED", moved_zone, zoned), waiting) == {"affine", "repelled", "spread"}
        assert moved(found.after_node_event("DELETED", zoned, None), waiting) == {"spread"}


class TestRecords:
    def test_a_release_moves_everyone(self) -> None:
        assert moved(hints().after_record_event("MODIFIED", record("a", state="Released"), record("a"))) == set(WAITING)

    def test_a_deleted_record_that_held_room_moves_everyone(self) -> None:
        assert moved(hints().after_record_event("DELETED", record("a"), None)) == set(WAITING)
        assert moved(hints().after_record_event("DELETED", record("a", state="Released"), None)) == set()

    def test_a_new_reservation_moves_only_its_own_runs_pods(self) -> None:
        assert moved(hints().after_record_event("MODIFIED", record("a"), record("a", state="Pending"))) == set()
        assert moved(hints().after_record_event("MODIFIED", record("b"), record("b", state="Pending"))) == {"b-build"}

    def test_a_new_record_moves_only_its_own_runs_pods_which_may_wait_for_the_plan(self) -> None:
        assert moved(hints().after_record_event("ADDED", record("b", state="Pending"), None)) == {"b-build"}
        assert moved(hints().after_record_event("ADDED", record("a", state="Pending"), None)) == set()
        # First seen after a relist, already Reserved: it only takes room, from the others.
        assert moved(hints().after_record_event("ADDED", record("a"), None)) == set()

    def test_a_deleted_record_or_changed_groups_move_their_own_runs_pods(self) -> None:
        assert moved(hints().after_record_event("DELETED", record("b", state="Pending"), None)) == {"b-build"}
        assert moved(hints().after_record_event("MODIFIED", record("b", state="Pending", peak="2"), record("b", state="Pending"))) == {"b-build"}

    def test_a_lowered_peak_or_a_move_frees_room(self) -> None:
        assert moved(hints().after_record_event("MODIFIED", record("a", peak="2"), record("a"))) == set(WAITING)
        assert moved(hints().after_record_event("MODIFIED", record("a", node_name="n2"), record("a"))) == set(WAITING)

    def test_a_status_write_that_changes_no_reservation_moves_no_one(self) -> None:
        assert hints().after_record_event("MODIFIED", record("a"), record("a")) is None


def pipeline_run(name: str, *, planned: bool = False) -> Obj:
    status: Obj = {"conditions": [{"type": "Succeeded", "status": "Unknown"}]}
    if planned:
        status["pipelineSpec"] = {"tasks": [{"name": "build"}]}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {}, "status": status}


class TestPipelineRuns:
    """A pod parked for its PipelineRun's plan is moved when the plan appears (docs/contract.md section 2)."""

    def test_a_run_that_gets_its_plan_moves_only_its_own_pods(self) -> None:
        assert moved(hints().after_pipeline_run_event("MODIFIED", pipeline_run("b", planned=True), pipeline_run("b"))) == {"b-build"}
        assert moved(hints().after_pipeline_run_event("ADDED", pipeline_run("b", planned=True), None)) == {"b-build"}

    def test_a_run_without_a_plan_yet_or_already_planned_moves_no_one(self) -> None:
        assert hints().after_pipeline_run_event("MODIFIED", pipeline_run("b"), pipeline_run("b")) is None
        assert hints().after_pipeline_run_event("ADDED", pipeline_run("b"), None) is None
        assert hints().after_pipeline_run_event("MODIFIED", pipeline_run("b", planned=True), pipeline_run("b", planned=True)) is None

    def test_another_runs_plan_moves_no_one(self) -> None:
        assert moved(hints().after_pipeline_run_event("MODIFIED", pipeline_run("a", planned=True), pipeline_run("a"))) == set()

    def test_a_deleted_run_moves_no_one(self) -> None:
        assert hints().after_pipeline_run_event("DELETED", pipeline_run("b", planned=True), None) is None


def resolution_request(owner: str, *, answered: bool) -> Obj:
    condition = {"type": "Succeeded", "status": "True" if answered else "Unknown"}
    owners = [{"kind": "PipelineRun", "name": owner, "uid": f"{owner}-uid"}]
    return {"metadata": {"name": "cluster-0a1b", "namespace": "ns", "ownerReferences": owners}, "status": {"conditions": [condition]}}


class TestResolutionRequests:
    """A pod parked for a resolved Task's answer is moved when the answer comes (docs/contract.md section 6)."""

    def test_an_answer_moves_only_the_owner_runs_pods(self) -> None:
        answer = hints().after_resolution_request_event("MODIFIED", resolution_request("b", answered=True), resolution_request("b", answered=False))
        assert moved(answer) == {"b-build"}
        assert moved(hints().after_resolution_request_event("ADDED", resolution_request("a", answered=True), None)) == set()

    def test_a_request_not_answered_or_answered_before_moves_no_one(self) -> None:
        assert hints().after_resolution_request_event("ADDED", resolution_request("b", answered=False), None) is None
        assert hints().after_resolution_request_event("MODIFIED", resolution_request("b", answered=True), resolution_request("b", answered=True)) is None
        assert hints().after_resolution_request_event("DELETED", resolution_request("b", answered=True), None) is None


def test_a_waiting_pod_that_is_gone_is_moved_so_the_loop_forgets_it() -> None:
    assert moved(hints(waiting={}).after_node_event("ADDED", node("n2", taint=True), None), {"gone": {}}) == {"gone"}


# --- volumes ---------------------------------------------------------------------


def claim(name: str, *, phase: str = "Pending", storage_class: str = "standard", capacity: str = "1Gi") -> Obj:
    spec: Obj = {"storageClassName": storage_class, **({"volumeName": f"pv-{name}"} if phase == "Bound" else {})}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": spec, "status": {"phase": phase, "capacity": {"storage": capacity}}}


def mounting(name: str, claim_name: str, **kwargs: Any) -> Obj:
    found = pod(name, **kwargs)
    found["spec"]["volumes"] = [{"name": "ws", "persistentVolumeClaim": {"claimName": claim_name}}]
    return found


class TestVolumes:
    """A pod parked on its volumes is moved by its own claims', volumes' and classes' events only."""

    WAITING = {"plain": pod("plain"), "b-build": pod("b-build", run="b"), "data-pod": mounting("data-pod", "data")}
    GROUP_RECORD = {
        "metadata": {"name": "b", "namespace": "ns"},
        "spec": {"groups": [{"name": "g0", "tasks": ["build"], "workspaces": ["cache"], "peak": {"cpu": "1"}}]},
    }
    RUN_B = {"metadata": {"name": "b", "namespace": "ns"}, "spec": {"workspaces": [{"name": "cache", "persistentVolumeClaim": {"claimName": "team-cache"}}]}}

    def hints(self, *claims: Obj) -> EventHints:
        pods = informer("pods", list(self.WAITING.values()))
        view = ClusterView(pods=pods, nodes=informer("nodes", []), records=informer("records", [self.GROUP_RECORD]))
        by_key = {("ns", c["metadata"]["name"]): c for c in claims}
        return EventHints(
            view=view,
            waiting_pod=pods.get,
            node_named=lambda name: None,
            volumes=VolumeLookups(lambda ns, name: by_key.get((ns, name)), lambda name: None, lambda name: None),
            pipeline_run_named=lambda ns, name: self.RUN_B if (ns, name) == ("ns", "b") else None,
        )

    def test_an_immediate_claim_bound_moves_the_pod_waiting_for_it_at_once(self) -> None:
        found = self.hints().after_claim_event("MODIFIED", claim("data", phase="Bound"), claim("data"))
        assert moved(found, self.WAITING) == {"data-pod"}

    def test_a_claim_appearing_moves_its_pods(self) -> None:
        assert moved(self.hints().after_claim_event("ADDED", claim("data"), None), self.WAITING) == {"data-pod"}

    def test_a_groups_workspace_claim_moves_the_groups_pods_that_do_not_mount_it(self) -> None:
        found = self.hints().after_claim_event("MODIFIED", claim("team-cache", phase="Bound"), claim("team-cache"))
        assert moved(found, self.WAITING) == {"b-build"}

    def test_claim_churn_a_deleted_claim_or_another_claim_move_no_one(self) -> None:
        assert self.hints().after_claim_event("MODIFIED", claim("data", capacity="2Gi"), claim("data")) is None
        assert self.hints().after_claim_event("DELETED", claim("data"), None) is None
        assert moved(self.hints().after_claim_event("ADDED", claim("unrelated"), None), self.WAITING) == set()

    def test_the_volume_of_a_pods_claim_moves_it(self) -> None:
        volume = {"metadata": {"name": "pv-data"}, "spec": {"claimRef": {"namespace": "ns", "name": "data"}}, "status": {"phase": "Bound"}}
        assert moved(self.hints().after_volume_event("ADDED", volume, None), self.WAITING) == {"data-pod"}
        assert self.hints().after_volume_event("MODIFIED", volume, volume) is None
        assert self.hints().after_volume_event("DELETED", volume, None) is None

    def test_the_class_of_a_pods_claim_moves_it(self) -> None:
        standard = {"metadata": {"name": "standard"}, "volumeBindingMode": "WaitForFirstConsumer"}
        found = self.hints(claim("data", storage_class="standard"), claim("team-cache", storage_class="fast"))
        assert moved(found.after_storage_class_event("ADDED", standard, None), self.WAITING) == {"data-pod"}
        fast = {"metadata": {"name": "fast"}, "volumeBindingMode": "WaitForFirstConsumer"}
        assert moved(found.after_storage_class_event("MODIFIED", fast, {**fast, "volumeBindingMode": "Immediate"}), self.WAITING) == {"b-build"}
        assert found.after_storage_class_event("MODIFIED", standard, standard) is None
        assert found.after_storage_class_event("DELETED", standard, None) is None
