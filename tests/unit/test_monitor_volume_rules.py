"""The monitor's volume rules as pure functions: each fires on its fault, names the objects, and stays quiet otherwise."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.contract.record import Record
from harness.monitor import invariants as rules
from harness.monitor import rulebook
from harness.monitor.volume_topology import SELECTED_NODE_ANNOTATION

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
NS, RUN, RUN_UID = "ns", "run", "run-uid"
HOSTNAME = "kubernetes.io/hostname"


def node(name: str) -> Obj:
    return {"metadata": {"name": name, "labels": {HOSTNAME: name}}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}}


def volume(name: str, pinned_to: str | None) -> Obj:
    spec: Obj = {"capacity": {"storage": "1Gi"}}
    if pinned_to is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [pinned_to]}]}]}}
    return {"metadata": {"name": name}, "spec": spec}


def claim(name: str, *, bound_to: str | None = None, phase: str | None = None, selected: str | None = None) -> Obj:
    obj: Obj = {"metadata": {"name": name, "namespace": NS, "annotations": {}}, "spec": {}, "status": {}}
    if bound_to is not None:
        obj["spec"]["volumeName"] = bound_to
    obj["status"]["phase"] = phase or ("Bound" if bound_to else "Pending")
    if selected is not None:
        obj["metadata"]["annotations"][SELECTED_NODE_ANNOTATION] = selected
    return obj


def pod(name: str, *claims: str, node_name: str | None = "n1", task: str | None = "build", ephemeral: str | None = None) -> Obj:
    volumes: list[Obj] = [{"name": f"ws-{c}", "persistentVolumeClaim": {"claimName": c}} for c in claims]
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    labels = {"tekton.dev/pipelineRun": RUN, "tekton.dev/pipelineTask": task} if task else {}
    spec: Obj = {"containers": [{"name": "c"}], "volumes": volumes}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "labels": labels}, "spec": spec, "status": {"phase": "Running"}}


def record(state: str = "Reserved", node_name: str = "n1", *, workspaces: tuple[str, ...] = ("source",), generation: int = 1) -> Record:
    status: Obj = {"name": "source", "state": state, "claimGeneration": generation}
    if state == "Reserved":
        status.update(node=node_name, holders=["uid-first"], reservedAt="2026-12-04T10:00:00Z")
    return Record.from_json({
        "apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord",
        "metadata": {"name": RUN, "namespace": NS, "labels": {"rescon.dev/active": "true"} if state == "Reserved" else {},
                     "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": RUN, "uid": RUN_UID, "controller": True}]},
        "spec": {"pipelineRun": {"name": RUN, "uid": RUN_UID},
                 "groups": [{"name": "source", "tasks": ["build", "test"], "workspaces": list(workspaces), "peak": {"cpu": "1", "memory": "0"}}]},
        "status": {"groups": [status]},
    })


def pipeline_run(uid: str = RUN_UID, *, cache: Obj | None = None) -> Obj:
    """build uses source (a PVC, `src`); test uses source and cache (a PVC `cache-pvc` unless given); lint uses a template."""
    return {
        "metadata": {"name": RUN, "namespace": NS, "uid": uid},
        "spec": {"workspaces": [
            {"name": "source", "persistentVolumeClaim": {"claimName": "src"}},
            {"name": "cache", **(cache or {"persistentVolumeClaim": {"claimName": "cache-pvc"}})},
            {"name": "scratch", "volumeClaimTemplate": {"spec": {}}},
            {"name": "config", "configMap": {"name": "c"}},
        ]},
        "status": {"pipelineSpec": {"tasks": [
            {"name": "build", "workspaces": [{"name": "w", "workspace": "source"}]},
            {"name": "test", "workspaces": [{"name": "w", "workspace": "source"}, {"name": "c", "workspace": "cache"}]},
            {"name": "lint", "workspaces": [{"name": "s", "workspace": "scratch"}]},
        ]}},
    }


# --- pod-volume-node-conflict ---


@pytest.mark.parametrize(
    ("claims", "volumes", "conflicts"),
    [
        ({"src": claim("src", bound_to="pv-src")}, {"pv-src": volume("pv-src", "n1")}, []),
        ({"src": claim("src", bound_to="pv-src")}, {"pv-src": volume("pv-src", None)}, []),
        ({"src": claim("src", bound_to="pv-src")}, {"pv-src": volume("pv-src", "n2")}, ["src"]),
        ({"src": claim("src", bound_to="pv-src")}, {}, []),
        ({}, {"pv-src": volume("pv-src", "n2")}, []),
        ({"src": claim("src", bound_to="pv-src", phase="Pending")}, {"pv-src": volume("pv-src", "n2")}, []),
        ({"src": claim("src", bound_to="pv-src"), "p-scratch": claim("p-scratch", bound_to="pv-e")},
         {"pv-src": volume("pv-src", "n2"), "pv-e": volume("pv-e", "n3")}, ["src", "p-scratch"]),
    ],
    ids=["pinned-to-its-node", "not-pinned", "pinned-elsewhere", "volume-gone", "claim-gone",
         "pre-bound-but-not-bound-yet-is-the-other-rules", "every-conflicting-claim-ephemeral-included"],
)
def test_a_pod_on_a_node_its_bound_volume_excludes(claims: dict[str, Obj], volumes: dict[str, Obj], conflicts: list[str]) -> None:
    bound = pod("p", "src", ephemeral="scratch")
    found = rules.pod_volume_node_conflict(bound, node("n1"), claims, volumes)
    assert [f.rule for f in found] == [rules.POD_VOLUME_NODE_CONFLICT] * len(conflicts)
    assert [f.objects[2] for f in found] == [f"persistentvolumeclaim {NS}/{c}" for c in conflicts]


def test_the_conflict_names_pod_node_claim_volume_and_the_affinity_that_excluded_it() -> None:
    [finding] = rules.pod_volume_node_conflict(pod("p", "src"), node("n1"), {"src": claim("src", bound_to="pv-src")}, {"pv-src": volume("pv-src", "n2")})
    assert finding.objects == ("pod ns/p", "node n1", "persistentvolumeclaim ns/src", "persistentvolume pv-src")
    assert finding.message == (
        f"p is bound to n1, but its claim ns/src is Bound to PersistentVolume pv-src, whose node affinity ({HOSTNAME} In [n2]) excludes it: "
        f"node n1 has {HOSTNAME}=n1: a pod goes only to a node that the volume of each of its Bound claims admits "
        "(docs/contract.md section 7, Volumes, V1)"
    )


def test_a_node_the_monitor_cannot_see_or_an_unbound_pod_is_not_judged() -> None:
    claims, volumes = {"src": claim("src", bound_to="pv-src")}, {"pv-src": volume("pv-src", "n2")}
    assert rules.pod_volume_node_conflict(pod("p", "src"), None, claims, volumes) == []
    assert rules.pod_volume_node_conflict(pod("p", "src"), node("n3"), claims, volumes) == [], "not the pod's node"
    assert rules.pod_volume_node_conflict(pod("p", "src", node_name=None), node("n1"), claims, volumes) == []


# --- pod-bound-before-claim ---


@pytest.mark.parametrize(
    ("found", "flagged"),
    [
        (claim("src", bound_to="pv-src"), False),
        (claim("src"), True),
        (claim("src", selected="n1"), True),
        (claim("src", bound_to="pv-src", phase="Pending"), True),
        (claim("src", bound_to="pv-src", phase="Lost"), False),
        (None, False),
    ],
    ids=["bound", "pending-without-a-node", "pending-with-selected-node", "pre-bound-not-bound-yet", "lost-was-bound", "gone"],
)
def test_a_pod_bound_while_its_claim_was_not(found: Obj | None, flagged: bool) -> None:
    claims = {"src": found} if found is not None else {}
    result = rules.pod_bound_before_claim(pod("p", "src"), claims)
    assert [f.rule for f in result] == ([rules.POD_BOUND_BEFORE_CLAIM] if flagged else [])


def test_bound_before_claim_says_whether_a_node_was_selected() -> None:
    [chosen] = rules.pod_bound_before_claim(pod("p", "src"), {"src": claim("src", selected="n1")})
    [unchosen] = rules.pod_bound_before_claim(pod("p", "src"), {"src": claim("src")})
    assert chosen.objects == unchosen.objects == ("pod ns/p", "node n1", "persistentvolumeclaim ns/src")
    assert f"{SELECTED_NODE_ANNOTATION}: n1 (a node was chosen for it, but the bind did not wait for the volume)" in chosen.message
    assert f"no {SELECTED_NODE_ANNOTATION} annotation (no node was chosen for it)" in unchosen.message
    assert unchosen.message.startswith("p was bound to n1 while its claim ns/src was not Bound (read after the bind: phase Pending, no volumeName, ")
    assert rules.pod_bound_before_claim(pod("p", "src", node_name=None), {"src": claim("src")}) == []


def test_bind_volume_findings_asks_both_pod_rules() -> None:
    claims = {"a": claim("a", bound_to="pv-a"), "b": claim("b")}
    found = rulebook.bind_volume_findings(pod("p", "a", "b"), node("n1"), claims, {"pv-a": volume("pv-a", "n2")})
    assert [f.rule for f in found] == [rules.POD_VOLUME_NODE_CONFLICT, rules.POD_BOUND_BEFORE_CLAIM]


# --- group-volume-node-conflict ---


def test_a_groups_claims_are_its_tasks_workspace_claims_and_its_bound_pods_claims() -> None:
    pods = [pod("run-build-pod", "src", "pvc-tmpl", ephemeral="scratch"), pod("run-test-pod", "src", "cache-pvc", node_name=None, task="test"),
            pod("run-lint-pod", "pvc-lint", task="lint"), pod("other", "theirs", task=None)]
    assert rules.group_claims(record(), "source", pipeline_run(), pods) == {
        "src": "workspace source of PipelineRun ns/run",
        "cache-pvc": "workspace cache of PipelineRun ns/run",  # test's; the record leaves `cache` out, section 4 does not
        "pvc-tmpl": "mounted by run-build-pod (task build)",
    }, "not run-build-pod-scratch: an ephemeral claim is its pod's alone"
    assert rules.group_claims(record(), "source", pipeline_run(uid="another"), pods) == {
        "src": "mounted by run-build-pod (task build)", "pvc-tmpl": "mounted by run-build-pod (task build)",
    }, "another run of the same name adds none of its workspaces"
    assert rules.group_claims(record(), "source", None, []) == {}


@pytest.mark.parametrize(
    ("cache_pinned_to", "state", "seen_node", "flagged"),
    [
        ("n1", "Reserved", "n1", False),
        ("n2", "Reserved", "n1", True),
        ("n2", "Pending", "n1", False),
        ("n2", "Reserved", None, False),
        ("n2", "Reserved", "n2", False),
    ],
    ids=["later-task-volume-on-the-claims-node", "later-task-volume-pinned-elsewhere", "pending-holds-no-node",
         "node-not-seen", "node-given-is-not-the-claims"],
)
def test_a_reserved_group_whose_later_tasks_volume_excludes_its_node(cache_pinned_to: str, state: str, seen_node: str | None, flagged: bool) -> None:
    claims = {"src": claim("src", bound_to="pv-src"), "cache-pvc": claim("cache-pvc", bound_to="pv-cache")}
    volumes = {"pv-src": volume("pv-src", None), "pv-cache": volume("pv-cache", cache_pinned_to)}
    found = rules.group_volume_node_conflict(record(state), "source", pipeline_run(), [], node(seen_node) if seen_node else None, claims, volumes)
    assert [f.rule for f in found] == ([rules.GROUP_VOLUME_NODE_CONFLICT] if flagged else [])


def test_the_group_conflict_names_record_node_claim_where_it_comes_from_and_volume() -> None:
    claims = {"cache-pvc": claim("cache-pvc", bound_to="pv-cache")}
    [finding] = rules.group_volume_node_conflict(record(generation=2), "source", pipeline_run(), [], node("n1"), claims, {"pv-cache": volume("pv-cache", "n2")})
    assert finding.objects == ("record ns/run", "node n1", "persistentvolumeclaim ns/cache-pvc", "persistentvolume pv-cache")
    assert finding.message.startswith(
        "group source of record ns/run is Reserved on n1 (claimGeneration 2), but its claim ns/cache-pvc (workspace cache of PipelineRun ns/run) "
        f"is Bound to PersistentVolume pv-cache, whose node affinity ({HOSTNAME} In [n2]) excludes it: node n1 has {HOSTNAME}=n1: "
    )
    assert "V3" in finding.message and "V5" in finding.message


def test_after_node_loss_a_claim_elsewhere_conflicts_with_the_lost_nodes_volume() -> None:
    """V5: the replacement may not open its new claim on n2 while the template claim its first pod mounted is pinned to lost n1."""
    first = pod("run-build-pod", "pvc-tmpl", node_name="n1")
    claims = {"pvc-tmpl": claim("pvc-tmpl", bound_to="pv-local")}
    found = rules.group_volume_node_conflict(record(node_name="n2", generation=2), "source", None, [first], node("n2"), claims, {"pv-local": volume("pv-local", "n1")})
    assert [f.rule for f in found] == [rules.GROUP_VOLUME_NODE_CONFLICT]
    assert "(mounted by run-build-pod (task build))" in found[0].message


def test_group_volume_findings_judges_each_group_on_its_own_node_and_skips_unknown_groups() -> None:
    claims = {"src": claim("src", bound_to="pv-src")}
    volumes = {"pv-src": volume("pv-src", "n2")}
    nodes = {"n1": node("n1"), "n2": node("n2")}
    found = rulebook.group_volume_findings(record(node_name="n1"), ["source", "nope"], pipeline_run(), [], nodes, claims, volumes)
    assert [f.rule for f in found] == [rules.GROUP_VOLUME_NODE_CONFLICT]
    assert rulebook.group_volume_findings(record(node_name="n2"), ["source"], pipeline_run(), [], nodes, claims, volumes) == []
    assert rulebook.group_volume_findings(record(node_name="n1"), ["source"], pipeline_run(), [], {}, claims, volumes) == []


def test_newly_reserved_groups_and_their_claim_nodes() -> None:
    pending, reserved = record("Pending"), record("Reserved", "n1")
    assert rules.newly_reserved(pending, reserved) == ["source"]
    assert rules.newly_reserved(None, reserved) == ["source"]
    assert rules.newly_reserved(reserved, reserved) == []
    assert rules.newly_reserved(reserved, pending) == []
    assert rules.new_claims(pending, reserved) == {"n1"} and rules.new_claims(reserved, copy.copy(reserved)) == set()
