"""node-overcommitted over every resource (issue #34): GPUs, ephemeral-storage and hugepages are held like CPU, each on its own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.contract.record import Record
from harness.monitor import invariants as rules
from harness.monitor.invariants import World
from harness.quantities import Amount

pytestmark = pytest.mark.unit

NS, RUN, RUN_UID = "ns", "a", "run-uid"
GPU = "example.com/gpu"


def _record(peak: dict[str, str], *, node: str = "n1") -> Record:
    obj = {
        "apiVersion": "rescon.dev/v1alpha1",
        "kind": "ReservationRecord",
        "metadata": {"name": RUN, "namespace": NS, "labels": {"rescon.dev/active": "true"},
                     "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": RUN, "uid": RUN_UID, "controller": True}]},
        "spec": {"pipelineRun": {"name": RUN, "uid": RUN_UID},
                 "groups": [{"name": "source", "tasks": ["train", "eval"], "workspaces": ["source"], "peak": {"cpu": "0", "memory": "0", **peak}}]},
        "status": {"groups": [{"name": "source", "state": "Reserved", "node": node, "holders": ["p1"], "claimGeneration": 1,
                               "reservedAt": "2026-12-01T10:00:00Z"}]},
    }
    return Record.from_json(obj)


def _pod(uid: str, task: str | None, requests: dict[str, str], *, node: str = "n1", limits: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {"tekton.dev/pipelineRun": RUN, "tekton.dev/pipelineTask": task} if task else {}
    resources: dict[str, Any] = {"requests": requests, **({"limits": limits} if limits else {})}
    return {"metadata": {"uid": uid, "name": f"pod-{uid}", "namespace": NS, "labels": labels},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}]}, "status": {"phase": "Running"}}


def _node(**others: str) -> dict[str, Any]:
    return {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4800m", "memory": "8Gi", "pods": "110", **others}}}


def _world(*pods: dict[str, Any], node: dict[str, Any], record: Record | None = None) -> World:
    world = World(pods={p["metadata"]["uid"]: p for p in pods}, nodes={"n1": node})
    if record is not None:
        world.records[(NS, RUN)] = record
    return world


def test_a_gpu_pod_on_a_node_without_gpus_overcommits_it_naming_the_resource() -> None:
    [finding] = rules.overcommitted(_world(_pod("b", None, {"cpu": "100m", GPU: "1"}), node=_node()), with_reservations=False)
    assert finding.rule == rules.NODE_OVERCOMMITTED
    assert f"too much {GPU} (the node advertises none); {GPU} 1 > 0 allocatable" in finding.message


def test_a_reserved_gpu_is_held_like_cpu_residual_per_resource() -> None:
    """The group holds 2 GPUs, its running pod uses 1: residual 1, so a plain pod's second GPU overcommits a 2-GPU node, its 1000m CPU does not."""
    record = _record({GPU: "2", "cpu": "1"})
    running, plain = _pod("p1", "train", {GPU: "1", "cpu": "500m"}), _pod("b", None, {GPU: "1", "cpu": "1000m"})
    assert rules.residuals_on(_world(running, node=_node(**{GPU: "2"}), record=record), "n1") == Amount.of({"cpu": 500, GPU: 1})
    assert rules.overcommitted(_world(running, node=_node(**{GPU: "2"}), record=record), with_reservations=True) == []
    [finding] = rules.overcommitted(_world(running, plain, node=_node(**{GPU: "2"}), record=record), with_reservations=True)
    assert f"too much {GPU}; " in finding.message and "residuals 500m CPU, 0Mi, example.com/gpu 1" in finding.message


def test_each_resource_is_judged_on_its_own() -> None:
    """Ephemeral-storage over while hugepages and CPU fit names ephemeral-storage alone."""
    node = _node(**{"ephemeral-storage": "10Gi", "hugepages-2Mi": "64Mi"})
    pods = (_pod("a", None, {"ephemeral-storage": "6Gi", "hugepages-2Mi": "32Mi", "memory": "1Gi"}, limits={"hugepages-2Mi": "32Mi"}),
            _pod("b", None, {"ephemeral-storage": "5Gi", "hugepages-2Mi": "32Mi", "memory": "1Gi"}, limits={"hugepages-2Mi": "32Mi"}))
    [finding] = rules.overcommitted(_world(*pods, node=node), with_reservations=False)
    assert "too much ephemeral-storage; ephemeral-storage 11264Mi > 10240Mi allocatable" in finding.message


def test_a_group_whose_record_leaves_out_its_gpus_holds_none_for_them() -> None:
    """A record that names no GPU reserves none: its pod's GPU counts, the absent peak adds no residual."""
    record = _record({"cpu": "1"})
    world = _world(_pod("p1", "train", {GPU: "1", "cpu": "100m"}), node=_node(**{GPU: "1"}), record=record)
    assert rules.residuals_on(world, "n1").get(GPU) == 0
    assert rules.overcommitted(world, with_reservations=True) == []


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.integers(0, 4))
def test_overcommitted_on_gpus_exactly_when_pods_plus_residual_exceed_allocatable(peak: int, used: int, plain: int, allocatable: int) -> None:
    pods = [_pod("p1", "train", {GPU: str(used)})] if used else []
    pods += [_pod("b", None, {GPU: str(plain)})] if plain else []
    node = _node(**({GPU: str(allocatable)} if allocatable else {}))
    world = _world(*pods, node=node, record=_record({GPU: str(peak)} if peak else {}))
    held = used + plain + max(0, peak - used)
    assert bool(rules.overcommitted(world, with_reservations=True)) == (held > allocatable)
