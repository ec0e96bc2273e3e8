"""The reference's per-version caches on the scheduling path answer exactly as recomputing would."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reference_scheduler.core.headroom import ActiveReservation, NodeView
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import node_check_failures
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import NodeCheckCache, NodeResultsCache
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


def test_node_check_cache_keeps_its_answer_across_a_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_scheduler.runtime import cycle

    cache = NodeCheckCache()
    pod = _pod({"pool": "p"})
    checked: list[str] = []
    monkeypatch.setattr(cycle, "node_check_failures", lambda p, n: checked.append(n["metadata"]["resourceVersion"]) or node_check_failures(p, n))
    heartbeat = _node("n1", "2")
    heartbeat["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "now"}]
    assert cache.for_pod(pod)(_node("n1", "1")) == cache.for_pod(pod)(heartbeat) == ()
    assert checked == ["1"]  # only status changed: labels and spec are what the checks read
    relabelled = _node("n1", "3", pool="q")
    assert cache.for_pod(pod)(relabelled) == tuple(node_check_failures(pod, relabelled)) != () and checked == ["1", "3"]


def test_nodes_with_the_same_allocatable_are_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference_scheduler.runtime import cluster_view

    parsed: list[str] = []
    allocatable = cluster_view.node_allocatable
    monkeypatch.setattr(cluster_view, "node_allocatable", lambda node: parsed.append(node["metadata"]["name"]) or allocatable(node))
    nodes = _informer("nodes", [_node("n1", "1"), _node("n2", "1"), _node("n3", "1", cpu="8")])
    views = ClusterView(pods=_informer("pods", []), nodes=nodes, records=_informer("records", [])).node_views()
    assert [views[n].allocatable.cpu for n in ("n1", "n2", "n3")] == [4000, 4000, 8000]
    assert len(parsed) == 2


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
    _event(nodes, "MODIFIED", _node("n1", "2", cpu="2"))  # as the informer delivers it: the store, then the handlers
    assert view.node_views()["n1"].allocatable.cpu == 2000
    _event(nodes, "DELETED", _node("n1", "2"))
    assert view.node_views() == {}


def test_active_reservations_follow_record_changes() -> None:
    records = _informer("records", [_record("1", state="Pending", node=None)])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    assert view.active_reservations() == []
    _event(records, "MODIFIED", _record("2", state="Reserved", node="n1", peak="3"))  # the store, then the handlers
    [reservation] = view.active_reservations()
    assert (reservation.group, reservation.node, reservation.peak) == (GroupKey("ns", "run", "g0"), "n1", Resources(cpu=3000))
    _event(records, "MODIFIED", _record("3", state="Released", node="n1"))
    assert view.active_reservations() == []
    _event(records, "MODIFIED", _record("4", state="Reserved", node="n2"))
    assert [r.node for r in view.active_reservations()] == ["n2"]
    _event(records, "DELETED", _record("4", state="Reserved", node="n2"))
    assert view.active_reservations() == []


def test_active_reservations_read_the_informers_cache_whole_on_first_use() -> None:
    records = _informer("records", [])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    _event(records, "ADDED", _record("2", state="Reserved", node="n1"))  # before the first read: not indexed yet
    assert [r.node for r in view.active_reservations()] == ["n1"]


def test_active_reservations_put_a_just_written_record_over_the_informers_copy() -> None:
    records = _informer("records", [_record("1", state="Reserved", node="n1")])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    assert [r.node for r in view.active_reservations()] == ["n1"]
    view.assume_record(_record("2", state="Released", node="n1"), replaces="1")
    assert view.active_reservations() == []  # the informer still holds version 1, Reserved
    _event(records, "MODIFIED", _record("2", state="Released", node="n1"))
    assert view.active_reservations() == []


def test_active_reservations_put_a_decided_record_over_the_informers_copy() -> None:
    records = _informer("records", [_record("1", state="Pending", node=None)])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    assert view.active_reservations() == []
    epoch = view.intents.intend(_record("1", state="Reserved", node="n2", peak="2"))
    [held] = view.active_reservations()
    assert (held.node, held.peak) == ("n2", Resources(cpu=2000))
    assert view.active_reservations() == [held]  # parsed once for the decided object, then reused
    view.intents.settle(("ns", "run"), epoch)
    assert view.active_reservations() == []


def test_group_of_follows_the_record() -> None:
    records = _informer("records", [_record("1", state="Pending", node=None, tasks=("b",))])
    view = ClusterView(pods=_informer("pods", []), nodes=_informer("nodes", []), records=records)
    pod = {"metadata": {"name": "x", "namespace": "ns", "labels": {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "a"}}}
    assert view.group_of(pod) is None
    _put(records, _record("2", state="Pending", node=None, tasks=("a",)))
    assert view.group_of(pod) == GroupKey("ns", "run", "g0")


# --- the incremental node index and the per-node results ---


def _bound_pod(name: str, node: str, *, cpu: str = "100m", run: str | None = None, task: str = "a", phase: str = "Running", rv: str = "1") -> Obj:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if run else {}
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase},
    }


def _event(informer: Informer, kind: str, obj: Obj) -> None:
    meta = obj["metadata"]
    key = (meta.get("namespace") or "", meta["name"])
    old = informer._store.get(key)  # noqa: SLF001
    if kind == "DELETED":
        informer._store.pop(key, None)  # noqa: SLF001
    else:
        informer._store[key] = obj  # noqa: SLF001
    informer._emit(kind, obj, old)  # noqa: SLF001


def _view_with(pods: list[Obj], records: list[Obj] | None = None) -> tuple[ClusterView, Informer, Informer]:
    pod_informer = _informer("pods", pods)
    record_informer = _informer("records", records or [])
    view = ClusterView(pods=pod_informer, nodes=_informer("nodes", [_node("n1", "1"), _node("n2", "1")]), records=record_informer)
    return view, pod_informer, record_informer


def test_node_views_follow_pod_events_and_reuse_unchanged_nodes() -> None:
    view, pods, _ = _view_with([_bound_pod("a", "n1")])
    first = view.node_views()
    assert [p.uid for p in first["n1"].pods] == ["uid-a"] and first["n2"].pods == ()
    _event(pods, "ADDED", _bound_pod("b", "n2"))
    second = view.node_views()
    assert second["n1"] is first["n1"]  # untouched: the same object, so per-node results can be reused
    assert [p.uid for p in second["n2"].pods] == ["uid-b"]
    _event(pods, "MODIFIED", _bound_pod("b", "n2", phase="Succeeded", rv="2"))
    assert view.node_views()["n2"].pods == ()
    _event(pods, "DELETED", _bound_pod("a", "n1"))
    assert view.node_views()["n1"].pods == ()


def test_node_views_keep_the_object_of_a_node_whose_assumed_pods_did_not_change() -> None:
    view, _, _ = _view_with([])
    pending = {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"}, "spec": {"containers": []}}
    view.node_views()
    view.assume(pending, "n2", None)
    first = view.node_views()["n2"]
    assert view.node_views()["n2"] is first  # looked at again (a pod still assumed), the same content: the same object
    view.forget_assumed("uid-p")
    assert view.node_views()["n2"].pods == ()


def test_attempt_keys_number_equal_keys_alike_and_start_again_when_full() -> None:
    cache = NodeResultsCache()
    cache.MAX_ATTEMPT_KEYS = 4
    a, b = cache.attempt_keys(("a",), ("b",))
    assert (a, b) == (0, 1) and cache.attempt_keys(("b",), ("a",)) == (1, 0)
    node = NodeView("n1", Resources(cpu=4000), 110)
    cache.for_node(node, ())[a] = ((), 50)
    assert cache.attempt_keys(("c",), ("d",)) == (2, 3)
    assert cache.for_node(node, ())[a] == ((), 50)
    # A fifth key would overflow: every number starts again, and so does every memo (a number may now mean another key).
    assert cache.attempt_keys(("e",)) == (0,)
    assert cache.for_node(node, ()) == {}


def test_node_results_start_again_when_the_view_or_the_reservations_change() -> None:
    cache = NodeResultsCache()
    node = NodeView("n1", Resources(cpu=4000), 110)
    cache.for_node(node, ())[0] = ((), 50)
    assert cache.for_node(node, ()) == {0: ((), 50)}
    held = (ActiveReservation(GroupKey("ns", "run", "g0"), "n1", Resources(cpu=1000)),)
    assert cache.for_node(node, held) == {}
    assert cache.for_node(NodeView("n1", Resources(cpu=4000), 110), held) == {}  # an equal view, but another object


def test_node_views_pick_up_a_record_created_after_its_pods() -> None:
    view, _, records = _view_with([_bound_pod("a", "n1", run="run", task="a")])
    assert view.node_views()["n1"].pods[0].group is None
    _event(records, "ADDED", _record("1", state="Reserved", node="n1"))
    assert view.node_views()["n1"].pods[0].group == GroupKey("ns", "run", "g0")


def test_assumed_pods_count_until_the_cache_shows_them_bound() -> None:
    view, pods, _ = _view_with([])
    pending = {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"}, "spec": {"containers": []}}
    view.node_views()
    view.assume(pending, "n2", None)
    assert [p.uid for p in view.node_views()["n2"].pods] == ["uid-p"]
    assert view.node_of("uid-p") == "n2"
    _event(pods, "MODIFIED", _bound_pod("p", "n2"))
    views = view.node_views()
    assert [p.uid for p in views["n2"].pods] == ["uid-p"]  # now from the cache, once
    assert view.node_of("uid-p") == "n2"


def test_an_assumed_pod_deleted_before_it_was_seen_bound_stops_counting() -> None:
    # Bound, confirmed and deleted between two cycles (a 1 s task on real kubelets): the
    # assumption must go with the pod, not linger for ASSUME_TTL_SECONDS.
    view, pods, _ = _view_with([])
    view.node_views()
    _event(pods, "MODIFIED", _bound_pod("p", "n2"))
    view.assume(_bound_pod("p", "n2"), "n2", None)
    _event(pods, "DELETED", _bound_pod("p", "n2"))
    assert view.node_views()["n2"].pods == ()
    assert view.node_of("uid-p") is None


def test_memoised_cycle_decides_as_a_fresh_one_through_binds_and_releases() -> None:
    """Between attempts pods get bound and finish; a long-lived Cycle (with its per-node memo and
    the incremental view) must choose exactly what a Cycle built from scratch chooses."""
    import random

    from bench import microbench

    rng = random.Random(5)
    cycle, todo, decisions = microbench.build(40, 120, 30, 25, seed=3)
    pods_informer = cycle._view._pods  # noqa: SLF001
    for pod in todo:
        fresh, _, fresh_decisions = microbench.build(40, 120, 30, 0, seed=3)
        fresh._view._pods._store = dict(pods_informer._store)  # noqa: SLF001
        outcome_before = len(decisions)
        events_before = len(cycle._bench_events.messages)  # type: ignore[attr-defined]  # noqa: SLF001
        cycle.schedule(pod)
        fresh.schedule(pod)
        assert decisions[outcome_before:] == fresh_decisions
        assert cycle._bench_events.messages[events_before:] == fresh._bench_events.messages  # type: ignore[attr-defined]  # noqa: SLF001
        if fresh_decisions:  # bind it for real, as the informer would report it
            bound = {**pod, "spec": {**pod["spec"], "nodeName": fresh_decisions[0][1]}, "status": {"phase": "Running"}}
            bound["metadata"] = {**pod["metadata"], "resourceVersion": str(rng.randrange(10**9))}
            _event(pods_informer, "MODIFIED", bound)
        if rng.random() < 0.3:  # and some running pod finishes
            running = [p for p in pods_informer._store.values() if p["status"].get("phase") == "Running"]  # noqa: SLF001
            done = rng.choice(running)
            _event(pods_informer, "MODIFIED", {**done, "status": {"phase": "Succeeded"}, "metadata": {**done["metadata"], "resourceVersion": "x"}})
    assert len(decisions) >= 20  # most pods were placed: the comparison covered real choices
