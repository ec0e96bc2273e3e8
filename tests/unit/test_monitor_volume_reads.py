"""The reads behind the volume rules, and how the scenario monitor and rescon audit ask them: the API is a fake that answers from dicts."""

from __future__ import annotations

import copy
import json
import logging
from types import SimpleNamespace
from typing import Any

import kubernetes
import pytest

from harness.audit.auditor import Auditor
from harness.audit.dedup import AuditLine, Change
from harness.audit.live_state import LiveState, VolumeCheck
from harness.audit.metrics import AuditMetrics
from harness.audit.watches import WatchEvent
from harness.contract import record as contract
from harness.monitor import invariants as rules
from harness.monitor import volume_reads
from harness.monitor.watcher import VOLUME_RULES, ContractMonitor, _Event
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
ME = "tkn"
NS, RUN, RUN_UID = "ns", "run", "run-uid"
HOSTNAME = "kubernetes.io/hostname"


def node(name: str) -> Obj:
    return {"metadata": {"name": name, "labels": {HOSTNAME: name}}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}


def volume(name: str, pinned_to: str) -> Obj:
    terms = [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [pinned_to]}]}]
    return {"metadata": {"name": name}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": terms}}}}


def claim(name: str, bound_to: str | None = None) -> Obj:
    spec = {"volumeName": bound_to} if bound_to else {}
    return {"metadata": {"name": name, "namespace": NS}, "spec": spec, "status": {"phase": "Bound" if bound_to else "Pending"}}


def pod(name: str, *claims: str, node_name: str | None = "n1", task: str | None = "build", scheduler: str = ME, namespace: str = NS) -> Obj:
    labels = {"tekton.dev/pipelineRun": RUN, "tekton.dev/pipelineTask": task} if task else {}
    spec: Obj = {"schedulerName": scheduler, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                 "volumes": [{"name": f"ws-{c}", "persistentVolumeClaim": {"claimName": c}} for c in claims]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "900", "labels": labels},
            "spec": spec, "status": {"phase": "Pending"}}


def record_json(state: str = "Reserved", node_name: str = "n1") -> Obj:
    status: Obj = {"name": "source", "state": state, "claimGeneration": 1 if state == "Reserved" else 0}
    if state == "Reserved":
        status.update(node=node_name, holders=["uid-first"], reservedAt="2026-12-04T10:00:00Z")
    return {
        "apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord",
        "metadata": {"name": RUN, "namespace": NS, "resourceVersion": "100", "creationTimestamp": "2026-12-04T09:59:00Z",
                     "labels": {"rescon.dev/active": "true"} if state == "Reserved" else {}, "annotations": {contract.SCHEDULER_ANNOTATION: ME},
                     "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": RUN, "uid": RUN_UID, "controller": True}]},
        "spec": {"pipelineRun": {"name": RUN, "uid": RUN_UID},
                 "groups": [{"name": "source", "tasks": ["build", "test"], "workspaces": ["cache", "source"], "peak": {"cpu": "1", "memory": "0"}}]},
        "status": {"groups": [status]},
    }


PIPELINE_RUN: Obj = {
    "metadata": {"name": RUN, "namespace": NS, "uid": RUN_UID, "creationTimestamp": "2026-12-04T09:58:00Z"},
    "spec": {"workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "src"}},
                            {"name": "cache", "persistentVolumeClaim": {"claimName": "cache-pvc"}}],
             "taskRunTemplate": {"podTemplate": {"schedulerName": ME}}},
    "status": {"pipelineSpec": {"tasks": [
        {"name": "build", "workspaces": [{"name": "w", "workspace": "source"}]},
        {"name": "test", "workspaces": [{"name": "w", "workspace": "source"}, {"name": "c", "workspace": "cache"}]},
    ]}},
}


class FakeApi:
    """The four GETs the volume rules make, answered from dicts (a missing object is 404), each call written down in order."""

    def __init__(self, *, claims: list[Obj] = (), volumes: list[Obj] = (), nodes: list[Obj] = (), record: Obj | None = None,  # type: ignore[assignment]
                 failing: int | None = None) -> None:
        self.claims = {c["metadata"]["name"]: c for c in claims}
        self.volumes = {v["metadata"]["name"]: v for v in volumes}
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.record = record
        self.failing = failing
        self.calls: list[str] = []
        self.kube: Any = SimpleNamespace(core=self, custom=self)

    def _answer(self, what: str, obj: Obj | None, options: dict[str, Any]) -> Any:
        assert options.get("_request_timeout"), f"{what} without a timeout could stall the monitor"
        self.calls.append(what)
        if self.failing is not None:
            raise kubernetes.client.ApiException(status=self.failing, reason="Internal Server Error")
        if obj is None:
            raise kubernetes.client.ApiException(status=404, reason="Not Found")
        return SimpleNamespace(data=json.dumps(obj).encode())

    def read_namespaced_persistent_volume_claim(self, name: str, namespace: str, **options: Any) -> Any:
        return self._answer(f"claim {namespace}/{name}", self.claims.get(name), options)

    def read_persistent_volume(self, name: str, **options: Any) -> Any:
        return self._answer(f"volume {name}", self.volumes.get(name), options)

    def read_node(self, name: str, **options: Any) -> Any:
        return self._answer(f"node {name}", self.nodes.get(name), options)

    def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, **options: Any) -> Any:
        answer = self._answer(f"record {namespace}/{name}", self.record, options)
        return json.loads(answer.data)


def world(*pods: Obj, records: list[Obj] = (), nodes: tuple[str, ...] = ("n1", "n2")) -> rules.World:  # type: ignore[assignment]
    held = rules.World(pods={p["metadata"]["uid"]: p for p in pods}, nodes={n: node(n) for n in nodes})
    held.pipeline_runs[(NS, RUN)] = copy.deepcopy(PIPELINE_RUN)
    for obj in records:
        held.records[(NS, RUN)] = contract.Record.from_json(obj)
    return held


# --- the reads ---


def test_what_is_gone_is_left_out_and_only_bound_claims_have_their_volume_read() -> None:
    api = FakeApi(claims=[claim("src", "pv-src"), claim("wait"), claim("orphan", "pv-gone")], volumes=[volume("pv-src", "n1")])
    reads = volume_reads.read_volumes(api.kube, NS, ["src", "wait", "gone", "orphan", "src"])
    assert sorted(reads.claims) == ["orphan", "src", "wait"] and sorted(reads.volumes) == ["pv-src"]
    assert api.calls == ["claim ns/src", "claim ns/wait", "claim ns/gone", "claim ns/orphan", "volume pv-src", "volume pv-gone"]


def test_a_failed_read_that_is_no_404_raises() -> None:
    with pytest.raises(kubernetes.client.ApiException):
        volume_reads.read_volumes(FakeApi(failing=500).kube, NS, ["src"])


def test_a_pod_that_mounts_no_claim_costs_no_read() -> None:
    api = FakeApi()
    bound = pod("p", task=None)
    assert volume_reads.judge_bind(api.kube, world(bound), bound, with_reservations=True) == []
    assert api.calls == []


def test_a_bind_reads_the_pods_and_its_groups_claims_then_their_volumes_then_the_record() -> None:
    api = FakeApi(claims=[claim("src", "pv-src"), claim("cache-pvc", "pv-cache")], volumes=[volume("pv-src", "n1"), volume("pv-cache", "n2")],
                  record=record_json())
    bound = pod("run-build-pod", "src")
    found = volume_reads.judge_bind(api.kube, world(bound, records=[record_json()]), bound, with_reservations=True)
    assert [f.rule for f in found] == [rules.GROUP_VOLUME_NODE_CONFLICT]
    assert "claim ns/cache-pvc (workspace cache of PipelineRun ns/run)" in found[0].message
    assert api.calls == ["claim ns/src", "claim ns/cache-pvc", "volume pv-src", "volume pv-cache", "record ns/run"]


def test_the_group_is_judged_on_the_record_read_after_the_claims_not_on_the_one_held() -> None:
    """The held record says Reserved on n1; by the read the group is Pending (its node was lost): nothing to judge."""
    api = FakeApi(claims=[claim("src", "pv-src"), claim("cache-pvc", "pv-cache")], volumes=[volume("pv-src", "n1"), volume("pv-cache", "n2")],
                  record=record_json("Pending"))
    bound = pod("run-build-pod", "src")
    assert volume_reads.judge_bind(api.kube, world(bound, records=[record_json()]), bound, with_reservations=True) == []


def test_without_records_a_bind_is_judged_by_the_pod_rules_alone() -> None:
    api = FakeApi(claims=[claim("src")])
    bound = pod("run-build-pod", "src")
    found = volume_reads.judge_bind(api.kube, world(bound, records=[record_json()]), bound, with_reservations=False)
    assert [f.rule for f in found] == [rules.POD_BOUND_BEFORE_CLAIM]
    assert api.calls == ["claim ns/src"]


def test_a_node_outside_the_world_is_read_and_a_node_gone_is_not_judged() -> None:
    pinned = [claim("src", "pv-src")], [volume("pv-src", "n2")]
    bound = pod("p", "src", node_name="n9", task=None)
    api = FakeApi(claims=pinned[0], volumes=pinned[1], nodes=[node("n9")])
    assert [f.rule for f in volume_reads.judge_bind(api.kube, world(bound), bound, with_reservations=True)] == [rules.POD_VOLUME_NODE_CONFLICT]
    assert api.calls[-1] == "node n9"
    gone = FakeApi(claims=pinned[0], volumes=pinned[1])
    assert volume_reads.judge_bind(gone.kube, world(bound), bound, with_reservations=True) == []


def test_a_claim_reads_the_groups_claims_then_the_record() -> None:
    api = FakeApi(claims=[claim("src", "pv-src"), claim("cache-pvc", "pv-cache")], volumes=[volume("pv-src", "n2"), volume("pv-cache", "n2")],
                  record=record_json())
    found = volume_reads.judge_claims(api.kube, world(), contract.Record.from_json(record_json()), ["source"])
    assert [f.objects[2] for f in found] == ["persistentvolumeclaim ns/cache-pvc", "persistentvolumeclaim ns/src"]
    assert api.calls == ["claim ns/cache-pvc", "claim ns/src", "volume pv-cache", "volume pv-src", "record ns/run"]
    api.record = None
    assert volume_reads.judge_claims(api.kube, world(), contract.Record.from_json(record_json()), ["source"]) == [], "record gone"


def test_a_claim_with_no_claim_to_read_costs_no_read() -> None:
    api = FakeApi()
    held = world()
    del held.pipeline_runs[(NS, RUN)]  # its workspaces are templates, say: only its pods name their claims
    assert volume_reads.judge_claims(api.kube, held, contract.Record.from_json(record_json()), ["source"]) == []
    assert api.calls == []


# --- the scenario monitor asks them ---


def monitor(api: FakeApi, *, records: bool = True) -> ContractMonitor:
    watcher = ContractMonitor(api.kube, NS, {"pool": "p"}, timeouts=DEFAULT_TIMEOUTS, checks_records=records, scheduler_name=ME)
    watcher._apply(_Event("nodes", "SYNC", items=[node("n1"), node("n2")]))
    watcher._apply(_Event("pipelineruns", "SYNC", items=[copy.deepcopy(PIPELINE_RUN)]))
    watcher._apply(_Event("pods", "SYNC", items=[]))
    if records:
        watcher._apply(_Event("records", "SYNC", items=[]))
    return watcher


def test_the_monitor_judges_a_bind_of_the_scheduler_under_test_seen_live() -> None:
    api = FakeApi(claims=[claim("src")])
    watcher = monitor(api, records=False)
    watcher._apply(_Event("pods", "ADDED", obj=pod("p", "src", node_name=None, task=None)))
    assert api.calls == []
    watcher._apply(_Event("pods", "MODIFIED", obj=pod("p", "src", task=None)))
    assert [v.rule for v in watcher.violations] == [rules.POD_BOUND_BEFORE_CLAIM]
    assert watcher.violations[0].objects == ("pod ns/p", "node n1", "persistentvolumeclaim ns/src")
    watcher._apply(_Event("pods", "MODIFIED", obj=pod("p", "src", task=None)))
    assert api.calls == ["claim ns/src"], "a pod is judged once, at its bind"


@pytest.mark.parametrize(
    ("event", "bound"),
    [
        ("SYNC", pod("listed", "src", task=None)),
        ("ADDED", pod("filler", "src", task=None, scheduler="default-scheduler")),
        ("ADDED", pod("elsewhere", "src", task=None, namespace="other")),
    ],
    ids=["bound-before-the-monitor-started", "bound-by-another-scheduler", "outside-the-scenarios-namespaces"],
)
def test_the_monitor_leaves_binds_it_did_not_see_the_scheduler_under_test_make(event: str, bound: Obj) -> None:
    api = FakeApi(claims=[claim("src")])
    watcher = monitor(api, records=False)
    watcher._apply(_Event("pods", event, obj=bound, items=[bound]))
    assert api.calls == [] and watcher.violations == []


def test_a_failed_read_is_logged_and_the_monitor_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    api = FakeApi(claims=[claim("src")], failing=500)
    watcher = monitor(api, records=False)
    with caplog.at_level(logging.WARNING, logger="rescon.monitor"):
        watcher._apply(_Event("pods", "ADDED", obj=pod("p", "src", task=None)))
    assert watcher.violations == []
    assert "could not read the volumes of pod ns/p" in caplog.text
    api.failing = None
    watcher._apply(_Event("pods", "ADDED", obj=pod("q", "src", task=None)))
    assert [v.rule for v in watcher.violations] == [rules.POD_BOUND_BEFORE_CLAIM]


def test_the_monitor_judges_a_group_when_it_sees_it_go_reserved() -> None:
    api = FakeApi(claims=[claim("src", "pv-src"), claim("cache-pvc", "pv-cache")], volumes=[volume("pv-src", "n1"), volume("pv-cache", "n2")],
                  record=record_json())
    watcher = monitor(api)
    watcher._apply(_Event("records", "ADDED", obj=record_json("Pending")))
    assert api.calls == []
    watcher._apply(_Event("records", "MODIFIED", obj=record_json()))
    assert [v.rule for v in watcher.violations] == [rules.GROUP_VOLUME_NODE_CONFLICT]
    assert watcher.violations[0].objects[:3] == ("record ns/run", "node n1", "persistentvolumeclaim ns/cache-pvc")


def test_the_monitor_leaves_another_schedulers_record_alone() -> None:
    theirs = record_json()
    theirs["metadata"]["annotations"][contract.SCHEDULER_ANNOTATION] = "someone-else"
    api = FakeApi(claims=[claim("cache-pvc", "pv-cache")], volumes=[volume("pv-cache", "n2")], record=theirs)
    watcher = monitor(api)
    watcher._apply(_Event("records", "ADDED", obj=theirs))
    assert api.calls == [] and not any(v.rule in VOLUME_RULES for v in watcher.violations)


# --- rescon audit asks them ---


def auditor(api: FakeApi, *, namespace: str | None = None) -> tuple[Auditor, list[AuditLine]]:
    lines: list[AuditLine] = []
    audit = Auditor(api.kube, ME, namespace, DEFAULT_TIMEOUTS, AuditMetrics(), lines.append)
    for kind, items in (("pods", []), ("nodes", [node("n1"), node("n2")]), ("pipelineruns", [copy.deepcopy(PIPELINE_RUN)]), ("records", [])):
        audit._apply(WatchEvent(kind, "SYNC", items=items))
    return audit, lines


def test_the_auditor_prints_one_line_per_volume_finding_at_the_bind() -> None:
    api = FakeApi(claims=[claim("src", "pv-src")], volumes=[volume("pv-src", "n2")])
    audit, lines = auditor(api)
    audit._apply(WatchEvent("pods", "ADDED", obj=pod("p", "src", task=None)))
    assert [(line.rule, line.change) for line in lines] == [(rules.POD_VOLUME_NODE_CONFLICT, Change.HAPPENED)]
    assert audit.state.volume_checks == []
    assert audit.tracker.counts == {rules.POD_VOLUME_NODE_CONFLICT: 1}


def test_the_auditor_judges_binds_in_its_namespace_only() -> None:
    api = FakeApi(claims=[claim("src")])
    audit, lines = auditor(api, namespace="ci")
    audit._apply(WatchEvent("pods", "ADDED", obj=pod("p", "src", task=None)))
    assert lines == [] and api.calls == []


def test_the_auditor_judges_a_group_seen_going_reserved_and_survives_a_failed_read(caplog: pytest.LogCaptureFixture) -> None:
    api = FakeApi(claims=[claim("src", "pv-src"), claim("cache-pvc", "pv-cache")], volumes=[volume("pv-src", "n1"), volume("pv-cache", "n2")],
                  record=record_json(), failing=503)
    audit, lines = auditor(api)
    audit._apply(WatchEvent("records", "ADDED", obj=record_json("Pending")))
    with caplog.at_level(logging.WARNING, logger="rescon.audit"):
        audit._apply(WatchEvent("records", "MODIFIED", obj=record_json()))
    assert lines == [] and "could not read the volumes of record ns/run" in caplog.text
    api.failing = None
    audit._apply(WatchEvent("records", "MODIFIED", obj=record_json("Pending") | {"status": {"groups": [
        {"name": "source", "state": "Pending", "claimGeneration": 1}]}}))
    second = record_json()
    second["status"]["groups"][0]["claimGeneration"] = 2
    api.record = second
    audit._apply(WatchEvent("records", "MODIFIED", obj=second))
    assert [(line.rule, line.change) for line in lines] == [(rules.GROUP_VOLUME_NODE_CONFLICT, Change.HAPPENED)]


def test_the_live_state_queues_the_moments_the_volume_rules_are_due_at() -> None:
    state = LiveState(ME, label_converges=5.0)
    for kind, items in (("pods", [pod("listed", "src")]), ("nodes", [node("n1")]), ("pipelineruns", [PIPELINE_RUN]), ("records", [record_json("Pending")])):
        state.apply(WatchEvent(kind, "SYNC", items=items), now=0.0, true_reasons_of=lambda r, t: set())
    assert state.volume_checks == [], "what was listed at the start was not seen happen"
    mine, theirs = pod("mine", "src"), pod("theirs", "src", scheduler="default-scheduler")
    for bound in (mine, theirs):
        state.apply(WatchEvent("pods", "ADDED", obj=bound), now=1.0, true_reasons_of=lambda r, t: set())
    state.apply(WatchEvent("records", "MODIFIED", obj=record_json()), now=1.0, true_reasons_of=lambda r, t: set())
    assert state.volume_checks == [VolumeCheck(pod=mine), VolumeCheck(record=state.world.records[(NS, RUN)], groups=("source",))]
