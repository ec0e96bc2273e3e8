"""The reference's per-version caches on the scheduling path answer exactly as recomputing would."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import node_check_failures
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import NodeCheckCache
from reference_scheduler.runtime.informer import Informer

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


def _informer(name: str, objects: list[Obj]) -> Informer:
    informer = Informer(name, lambda **_: {"items": []}, stop=threading.Event())
    for obj in objects:
        _put(informer, obj)
    return informer


def _put(informer: Informer, obj: Obj) -> None:
    meta = obj["metadata"]
    informer._store[(meta.get("namespace") or "", meta["name"])] = obj  # noqa: SLF001


def _node(name: str, version: str, *, cpu: str = "4", pool: str = "p", unschedulable: bool = False) -> Obj:
    return {
        "metadata": {"name": name, "resourceVersion": version, "labels": {"pool": pool}},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def _pod(selector: dict[str, str]) -> Obj:
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": {"nodeSelector": selector}}


def _record(version: str, *, state: str, node: str | None, peak: str = "1", tasks: tuple[str, ...] = ("a",)) -> Obj:
    entry: Obj = {"name": "g0", "state": state}
    if node:
        entry["node"] = node
    return {
        "metadata": {"name": "run", "namespace": "ns", "resourceVersion": version},
        "spec": {"groups": [{"name": "g0", "tasks": list(tasks), "peak": {"cpu": peak}}]},
        "status": {"groups": [entry]},
    }


def test_node_check_cache_recomputes_when_the_node_changes() -> None:
    cache = NodeCheckCache()
    pod = _pod({"pool": "p"})
    assert cache.for_pod(pod)(_node("n1", "1")) == ()
    cordoned = _node("n1", "2", unschedulable=True)
    assert cache.for_pod(pod)(cordoned) == tuple(node_check_failures(pod, cordoned)) != ()


def test_node_check_cache_separates_pods_with_different_constraints() -> None:
    cache = NodeCheckCache()
    node = _node("n1", "1", pool="p")
    assert cache.for_pod(_pod({"pool": "p"}))(node) == ()
    other = _pod({"pool": "q"})
    assert cache.for_pod(other)(node) == tuple(node_check_failures(other, node)) != ()


def test_node_check_cache_never_trusts_a_node_without_resource_version() -> None:
    cache = NodeCheckCache()
    pod = _pod({"pool": "p"})
    assert cache.for_pod(pod)(_node("n1", "")) == ()
    assert cache.for_pod(pod)(_node("n1", "", pool="q")) != ()


def test_node_views_follow_a_changed_allocatable() -> None:
    nodes = _informer("nodes", [_node("n1", "1", cpu="4")])
    view = ClusterView(pods=_informer("pods", []), nodes=nodes, records=_informer("records", []))
    assert view.node_views()["n1"].allocatable.cpu == 4000
    _put(nodes, _node("n1", "2", cpu="2"))
    assert view.node_views()["n1"].allocatable.cpu == 2000
    nodes._store.clear()  # noqa: SLF001
    assert view.node_views() == {}


def test_active_reservations_follow_record_changes() -> None:
    records = _informer("records", [_record("1", state="Pending", node=None)])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    assert view.active_reservations() == []
    _put(records, _record("2", state="Reserved", node="n1", peak="3"))
    [reservation] = view.active_reservations()
    assert (reservation.group, reservation.node, reservation.peak) == (GroupKey("ns", "run", "g0"), "n1", Resources(cpu=3000))
    _put(records, _record("3", state="Released", node="n1"))
    assert view.active_reservations() == []


def test_group_of_follows_the_record() -> None:
    records = _informer("records", [_record("1", state="Pending", node=None, tasks=("b",))])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    pod = {"metadata": {"name": "x", "namespace": "ns", "labels": {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "a"}}}
    assert view.group_of(pod) is None
    _put(records, _record("2", state="Pending", node=None, tasks=("a",)))
    assert view.group_of(pod) == GroupKey("ns", "run", "g0")
