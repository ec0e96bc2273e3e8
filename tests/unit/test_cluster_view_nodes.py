"""ClusterView.node_views() follows the node informer's events: it reads only the nodes they name,
keeps every other node's NodeView object, and answers as a view built from scratch would."""

from __future__ import annotations

import sys
import threading
from types import SimpleNamespace
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from reference_scheduler.core.headroom import NodeView
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.placed_pods import PlacedPods
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime import cluster_view
from reference_scheduler.runtime.cluster_view import ASSUME_TTL_SECONDS, ClusterView
from reference_scheduler.runtime.informer import Informer, key_of

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class _Cache(Informer):
    """A real Informer fed by hand, whose reads are counted.

    `watch` does what Informer._watch does with one event (the store first, then the
    handlers); `relist` runs Informer._relist itself on the given listing.
    """

    def __init__(self, name: str, objects: list[Obj]) -> None:
        self._listing: list[Obj] = []
        super().__init__(name, lambda **_: {"items": list(self._listing)}, stop=threading.Event())
        self.lists = 0
        self.gets: list[str] = []
        self.after_list: Callable[[], None] = lambda: None
        self.relist(objects)

    def relist(self, objects: list[Obj]) -> None:
        self._listing = list(objects)
        self._relist()

    def watch(self, kind: str, obj: Obj) -> None:
        with self._lock:
            old = self._store.get(key_of(obj))
            if kind == "DELETED":
                self._store.pop(key_of(obj), None)
            else:
                self._store[key_of(obj)] = obj
        self._emit(kind, obj, old)

    def objects(self) -> list[Obj]:
        """objects() is the store, read without counting."""
        with self._lock:
            return list(self._store.values())

    # Last: below this line, `list` in an annotation would name the method.
    def list(self, predicate: Callable[[Obj], bool] | None = None) -> list[Obj]:
        self.lists += 1
        found = super().list(predicate)
        self.after_list()
        return found

    def get(self, namespace: str, name: str) -> Obj | None:
        self.gets.append(name)
        return super().get(namespace, name)


def _node(name: str, version: str = "1", *, cpu: str = "4", pods: str = "110", label: str = "a") -> Obj:
    return {
        "metadata": {"name": name, "resourceVersion": version, "labels": {"l": label}},
        "spec": {},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods}},
    }


def _pod(
    name: str, node: str | None, *, cpu: str = "100m", phase: str = "Running", task: str | None = None, rv: str = "1", port: int | None = None
) -> Obj:
    labels = {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": task} if task else {}
    container: Obj = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    spec: Obj = {"containers": [container]}
    if port is not None:  # a host port, and required anti-affinity: what the placed pods' indexes hold
        container["ports"] = [{"containerPort": port, "hostPort": port}]
        term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv, "labels": labels}, "spec": spec, "status": {"phase": phase}}


def _record(version: str, tasks: list[str]) -> Obj:
    return {
        "metadata": {"name": "run", "namespace": "ns", "resourceVersion": version},
        "spec": {"groups": [{"name": "g0", "tasks": tasks, "peak": {"cpu": "1"}}]},
        "status": {"groups": [{"name": "g0", "state": "Pending"}]},
    }


def _view(nodes: list[Obj], pods: Sequence[Obj] = ()) -> tuple[ClusterView, _Cache, _Cache]:
    node_cache, pod_cache = _Cache("nodes", nodes), _Cache("pods", list(pods))
    return ClusterView(pods=pod_cache, nodes=node_cache, records=_Cache("records", [])), node_cache, pod_cache


def _normal(views: dict[str, NodeView]) -> dict[str, tuple[Any, ...]]:
    """The views' contents, each node's pods in uid order (a pod indexed again after an event moves to the end)."""
    return {name: (v.name, v.allocatable, v.max_pods, sorted(v.pods, key=lambda p: p.uid)) for name, v in views.items()}


def _uids(view: NodeView) -> list[str]:
    return sorted(p.uid for p in view.pods)


def _normal_placed(placed: PlacedPods) -> tuple[Any, ...]:
    """The placed pods' contents: each node's pod uids in order, its used ports, its anti-affinity pods' uids."""

    def uids(pods: Sequence[Any]) -> list[str]:
        return sorted(p["metadata"]["uid"] for p in pods)

    return (
        {n: uids(pods) for n, pods in placed.by_node.items()},
        dict(placed.used_ports),
        {n: uids(pods) for n, pods in placed.with_anti_affinity.items()},
    )


def test_nothing_changed_reads_no_node_and_returns_the_same_views_in_a_new_dict() -> None:
    view, nodes, _ = _view([_node(f"n{i}") for i in range(100)])
    first = view.node_views()
    assert nodes.lists == 1 and len(first) == 100
    nodes.gets.clear()
    second = view.node_views()
    assert nodes.lists == 1 and nodes.gets == []  # not one node walked
    assert second is not first and second.keys() == first.keys()
    assert all(second[name] is first[name] for name in first)


def test_a_changed_allocatable_gets_a_new_view_and_only_that_node_is_read() -> None:
    view, nodes, _ = _view([_node(f"n{i}") for i in range(100)], [_pod("a", "n7")])
    first = view.node_views()
    nodes.gets.clear()
    nodes.watch("MODIFIED", _node("n7", "2", cpu="2"))
    second = view.node_views()
    assert nodes.gets == ["n7"] and nodes.lists == 1
    assert second["n7"] == NodeView("n7", Resources(cpu=2000, memory=8 * 2**30), 110, second["n7"].pods)
    assert _uids(second["n7"]) == ["uid-a"]
    assert first["n7"].allocatable.cpu == 4000  # the dict returned before is never changed
    assert all(second[name] is first[name] for name in first if name != "n7")


def test_a_node_update_that_keeps_its_allocatable_keeps_its_view() -> None:
    # A new label or a status condition: the same NodeView object, so the cycle's per-node
    # results stay valid (node checks are cached on the node object separately).
    view, nodes, _ = _view([_node("n1")])
    first = view.node_views()
    nodes.watch("MODIFIED", _node("n1", "2", label="b"))
    assert view.node_views()["n1"] is first["n1"]
    nodes.watch("MODIFIED", _node("n1", "3", pods="50"))
    assert view.node_views()["n1"].max_pods == 50


def test_a_deleted_node_disappears_and_comes_back_with_its_pods() -> None:
    view, nodes, _ = _view([_node("n1"), _node("n2")], [_pod("a", "n2")])
    first = view.node_views()
    nodes.watch("DELETED", _node("n2"))
    second = view.node_views()
    assert set(second) == {"n1"} and set(first) == {"n1", "n2"}
    nodes.watch("ADDED", _node("n2", "5", cpu="8"))
    third = view.node_views()
    assert set(third) == {"n1", "n2"} and third["n2"].allocatable.cpu == 8000 and _uids(third["n2"]) == ["uid-a"]


def test_a_node_added_after_its_pods_were_bound_shows_them() -> None:
    view, nodes, pods = _view([_node("n1")])
    view.node_views()
    pods.watch("ADDED", _pod("a", "n9"))
    assert set(view.node_views()) == {"n1"}  # no node object, no view
    nodes.watch("ADDED", _node("n9"))
    assert _uids(view.node_views()["n9"]) == ["uid-a"]


def test_a_relist_replays_its_differences() -> None:
    view, nodes, _ = _view([_node("n1"), _node("n2"), _node("n3")])
    first = view.node_views()
    nodes.relist([_node("n1"), _node("n3", "7", cpu="1"), _node("n4")])
    second = view.node_views()
    assert set(second) == {"n1", "n3", "n4"} and second["n1"] is first["n1"] and second["n3"].allocatable.cpu == 1000


def test_an_unreadable_allocatable_counts_as_nothing_until_it_is_fixed() -> None:
    view, nodes, _ = _view([_node("n1")])
    view.node_views()
    nodes.watch("MODIFIED", _node("n1", "2", cpu="lots"))
    assert view.node_views()["n1"].allocatable == Resources()
    nodes.watch("MODIFIED", _node("n1", "3", cpu="2"))
    assert view.node_views()["n1"].allocatable.cpu == 2000


def test_a_node_without_resource_version_is_read_on_every_call() -> None:
    # A relist tells changes apart by resourceVersion: two empty ones look equal, so the
    # store gets the new object with no event. Such a node is never trusted to be unchanged.
    view, nodes, _ = _view([_node("n1", ""), _node("n2")])
    first = view.node_views()
    seen: list[str] = []
    nodes.add_handler(lambda kind, node, old: seen.append(kind))
    nodes.relist([_node("n1", "", cpu="2"), _node("n2")])
    assert seen == []
    nodes.gets.clear()
    second = view.node_views()
    assert second["n1"].allocatable.cpu == 2000 and second["n2"] is first["n2"]
    assert nodes.gets == ["n1"]
    nodes.relist([_node("n1", "5", cpu="2"), _node("n2")])  # now versioned: trusted again
    view.node_views()
    nodes.gets.clear()
    view.node_views()
    assert nodes.gets == []


def test_events_before_the_first_call_are_read_from_the_cache() -> None:
    view, nodes, _ = _view([_node("n1"), _node("n2")])
    nodes.watch("MODIFIED", _node("n1", "2", cpu="1"))
    nodes.watch("DELETED", _node("n2"))
    nodes.watch("ADDED", _node("n3"))
    views = view.node_views()
    assert set(views) == {"n1", "n3"} and views["n1"].allocatable.cpu == 1000


def test_assumed_pods_count_until_bound_or_expired(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(cluster_view, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    view, nodes, pods = _view([_node("n1"), _node("n2")])
    first = view.node_views()
    view.assume(_pod("a", None), "n1", None)
    view.assume(_pod("b", None), "n2", None)
    second = view.node_views()
    assert _uids(second["n1"]) == ["uid-a"] and _uids(second["n2"]) == ["uid-b"]
    pods.watch("MODIFIED", _pod("a", "n1", rv="2"))
    clock[0] += ASSUME_TTL_SECONDS + 1
    third = view.node_views()
    assert _uids(third["n1"]) == ["uid-a"] and third["n2"].pods == ()  # a bound (counted once), b forgotten
    assert first["n1"].pods == () and nodes.lists == 1


def test_a_node_added_while_the_first_call_builds_is_not_lost() -> None:
    # The informer's thread adds a node just after the first node_views() listed the cache:
    # its handler must wait for the build and mark the node, not take it as already listed.
    view, nodes, _ = _view([_node("n1")])
    adding = threading.Thread(target=nodes.watch, args=("ADDED", _node("n2")))

    def add_now() -> None:
        nodes.after_list = lambda: None
        adding.start()
        adding.join(0.1)  # the store holds n2 now; the handler waits for the view's lock

    nodes.after_list = add_now
    assert set(view.node_views()) == {"n1"}
    adding.join()
    assert set(view.node_views()) == {"n1", "n2"}


def test_no_event_from_an_informer_thread_is_lost() -> None:
    # Handlers run on the informer's thread while node_views() runs on the scheduling
    # thread, from before its first call (the index is built while events arrive).
    view, nodes, pods = _view([_node(f"n{i}") for i in range(20)])

    def informer() -> None:
        for version in range(2, 600):
            name = f"n{version % 25}"
            found = nodes.get("", name)
            if version % 7 == 0 and found is not None:
                nodes.watch("DELETED", found)
            else:
                nodes.watch("MODIFIED" if found else "ADDED", _node(name, str(version), cpu=str(1 + version % 5)))
            pods.watch("ADDED", _pod(f"p{version}", f"n{version % 23}", phase="Succeeded" if version % 3 else "Running", rv=str(version)))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        thread = threading.Thread(target=informer)
        thread.start()
        while thread.is_alive():
            view.node_views()
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    fresh = ClusterView(pods=_Cache("pods", pods.objects()), nodes=_Cache("nodes", nodes.objects()), records=_Cache("records", []))
    assert _normal(view.node_views()) == _normal(fresh.node_views())


# --- any sequence of events: the incremental views are the from-scratch ones ---

NODES = ["n0", "n1", "n2", "n3"]
PODS = ["p0", "p1", "p2", "p3", "p4"]


class NodeViewsAfterEvents(RuleBasedStateMachine):
    """Nodes, pods and the record change by watch events and relists; pods are assumed, bound and
    expire. After each look, node_views() equals a ClusterView built from the same caches now, no
    node the events left alone got a new NodeView, and no dict returned before has changed."""

    @initialize()
    def start(self) -> None:
        self.clock = 1000.0
        self.patch = pytest.MonkeyPatch()
        self.patch.setattr(cluster_view, "time", SimpleNamespace(monotonic=lambda: self.clock))
        self.version = 100
        self.nodes = _Cache("nodes", [_node("n0"), _node("n1", "")])
        self.pods = _Cache("pods", [_pod("p0", "n0", task="a")])
        self.records = _Cache("records", [_record("1", ["a"])])
        self.view = ClusterView(pods=self.pods, nodes=self.nodes, records=self.records)
        self.returned: list[tuple[dict[str, NodeView], dict[str, NodeView]]] = []
        self.touched: set[str] = set()  # nodes whose pods changed (node events do not count)
        self.everything = True  # nothing to compare identity with before the first look

    def teardown(self) -> None:
        if hasattr(self, "patch"):
            self.patch.undo()

    def _next_version(self, versioned: bool) -> str:
        self.version += 1
        return str(self.version) if versioned else ""

    @rule(name=st.sampled_from(NODES), cpu=st.sampled_from(["1", "4", "lots"]), pods=st.sampled_from(["110", "0"]), versioned=st.booleans())
    def node_event(self, name: str, cpu: str, pods: str, versioned: bool) -> None:
        kind = "MODIFIED" if self.nodes.get("", name) is not None else "ADDED"
        self.nodes.watch(kind, _node(name, self._next_version(versioned), cpu=cpu, pods=pods))

    @rule(name=st.sampled_from(NODES))
    def node_deleted(self, name: str) -> None:
        found = self.nodes.get("", name)
        if found is not None:
            self.nodes.watch("DELETED", found)

    @rule(dropped=st.sets(st.sampled_from(NODES)), changed=st.sampled_from(NODES), cpu=st.sampled_from(["2", "8"]))
    def node_relist(self, dropped: set[str], changed: str, cpu: str) -> None:
        listing = [n for n in self.nodes.objects() if n["metadata"]["name"] not in dropped]
        for i, node in enumerate(listing):
            if node["metadata"]["name"] == changed:  # an unversioned node keeps its empty version
                version = node["metadata"]["resourceVersion"] and self._next_version(True)
                listing[i] = _node(changed, version, cpu=cpu)
        self.nodes.relist(listing)

    @rule(
        name=st.sampled_from(PODS),
        node=st.sampled_from([None, *NODES, "elsewhere"]),
        phase=st.sampled_from(["Running", "Running", "Succeeded"]),
        cpu=st.sampled_from(["100m", "1", "bad"]),
        task=st.sampled_from([None, "a", "b"]),
        port=st.sampled_from([None, None, 8080]),
    )
    def pod_event(self, name: str, node: str | None, phase: str, cpu: str, task: str | None, port: int | None) -> None:
        old = self.pods.get("ns", name)
        self.pods.watch("MODIFIED" if old else "ADDED", _pod(name, node, cpu=cpu, phase=phase, task=task, rv=self._next_version(True), port=port))
        self.touched |= {node or "", ((old or {}).get("spec") or {}).get("nodeName") or ""}

    @rule(name=st.sampled_from(PODS))
    def pod_deleted(self, name: str) -> None:
        old = self.pods.get("ns", name)
        if old is not None:
            self.pods.watch("DELETED", old)
            self.touched.add(old["spec"].get("nodeName") or "")

    @rule(name=st.sampled_from(PODS), node=st.sampled_from(NODES), grouped=st.booleans(), port=st.sampled_from([None, 9090]))
    def assume(self, name: str, node: str, grouped: bool, port: int | None) -> None:
        pending = _pod(name, None, cpu="200m", rv=self._next_version(True), port=port)  # requests are cached per (uid, version)
        self.view.assume(pending, node, GroupKey("ns", "run", "g0") if grouped else None)
        self.touched.add(node)

    @rule(name=st.sampled_from(PODS))
    def forget_assumed(self, name: str) -> None:
        self.view.forget_assumed(f"uid-{name}")

    @rule(seconds=st.sampled_from([1.0, ASSUME_TTL_SECONDS + 1]))
    def time_passes(self, seconds: float) -> None:
        self.clock += seconds

    @rule(tasks=st.sampled_from([["a"], ["a", "b"], ["b"]]))
    def record_changed(self, tasks: list[str]) -> None:
        self.records.watch("MODIFIED", _record(self._next_version(True), tasks))
        self.everything = True  # the nodes of the run's pods are rebuilt

    @rule()
    def look(self) -> None:
        fresh = ClusterView(pods=_Cache("pods", self.pods.objects()), nodes=_Cache("nodes", self.nodes.objects()), records=_Cache("records", self.records.objects()))
        fresh._assumed = dict(self.view._assumed)  # noqa: SLF001  # what this scheduler assumed is not in any cache
        assumed_before = {a.node for a in self.view._assumed.values()}  # noqa: SLF001  # rebuilt while assumed, and once after
        previous = self.returned[-1][0] if self.returned else {}
        views = self.view.node_views()
        assert _normal(views) == _normal(fresh.node_views())
        # The placed pods are the pods the views count, and kept as a fresh view builds them.
        placed = self.view.placed_pods()
        assert _normal_placed(placed) == _normal_placed(fresh.placed_pods())
        assert {n: _uids(v) for n, v in views.items() if v.pods} == _normal_placed(placed)[0]
        assert set(views) == {n["metadata"]["name"] for n in self.nodes.objects()}
        assert self.nodes.lists == 1  # the first look listed the nodes; every later one read only the ones named
        if not self.everything:  # a node whose pods and allocatable are as before keeps its NodeView object
            for name, node_view in views.items():
                before = previous.get(name)
                if before is not None and name not in self.touched | assumed_before:
                    same = (before.allocatable, before.max_pods) == (node_view.allocatable, node_view.max_pods)
                    assert (node_view is before) == same, name
        for returned, copy in self.returned:
            assert returned == copy and all(returned[n] is copy[n] for n in copy)
        assert all(views is not returned for returned, _ in self.returned)
        self.returned.append((views, dict(views)))
        self.touched = {a.node for a in self.view._assumed.values()}  # noqa: SLF001
        self.everything = False


NodeViewsAfterEvents.TestCase.settings = settings(max_examples=200, stateful_step_count=40, deadline=None)
TestNodeViewsAfterEvents = NodeViewsAfterEvents.TestCase


def test_placed_pods_follow_binds_assumes_and_finished_pods() -> None:
    view, nodes, pods = _view([_node("n1"), _node("n2")], [_pod("a", "n1", port=8080)])
    view.node_views()
    first = view.placed_pods()
    assert _normal_placed(first) == ({"n1": ["uid-a"]}, {"n1": frozenset({("0.0.0.0", "TCP", 8080)})}, {"n1": ["uid-a"]})
    view.assume(_pod("b", None, port=9090), "n2", None)
    pods.watch("MODIFIED", _pod("a", "n1", phase="Succeeded", rv="2", port=8080))
    view.node_views()
    second = view.placed_pods()
    assert _normal_placed(second) == ({"n2": ["uid-b"]}, {"n2": frozenset({("0.0.0.0", "TCP", 9090)})}, {"n2": ["uid-b"]})
    assert _normal_placed(first)[0] == {"n1": ["uid-a"]}  # a snapshot returned before never changes
    nodes.watch("DELETED", _node("n2"))
    view.node_views()
    assert view.placed_pods().by_node == {}


def test_an_unchanged_cluster_returns_the_same_placed_pods() -> None:
    view, _, _ = _view([_node("n1")], [_pod("a", "n1")])
    view.node_views()
    first = view.placed_pods()
    view.node_views()
    assert view.placed_pods() is first
    # A node with a pod still assumed keeps the very same pods on every call.
    view.assume(_pod("b", None), "n1", None)
    view.node_views()
    second = view.placed_pods()
    assert second is not first and sorted(p["metadata"]["uid"] for p in second.by_node["n1"]) == ["uid-a", "uid-b"]
    view.node_views()
    assert view.placed_pods() is second


def test_a_node_whose_assumed_pods_did_not_change_is_not_read_again() -> None:
    view, nodes, pods = _view([_node("n1"), _node("n2")], [_pod("a", "n1")])
    view.node_views()
    view.assume(_pod("b", None), "n2", None)
    first = view.node_views()
    nodes.gets.clear()
    assert view.node_views()["n2"] is first["n2"]
    assert nodes.gets == []  # as many assumed pods as the backlog holds, and no node rebuilt for them
    view.forget_assumed("uid-b")
    assert view.node_views()["n2"].pods == () and nodes.gets == ["n2"]
    view.assume(_pod("c", None), "n1", None)
    view.node_views()
    pods.watch("MODIFIED", _pod("c", "n1", rv="2"))  # its bind seen: counted as bound, no longer assumed
    nodes.gets.clear()
    assert sorted(p.uid for p in view.node_views()["n1"].pods) == ["uid-a", "uid-c"] and nodes.gets == ["n1"]


def test_a_heartbeat_that_keeps_the_allocatable_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    view, nodes, _ = _view([_node("n1")])
    view.node_views()
    parsed: list[str] = []
    allocatable = cluster_view.node_allocatable
    monkeypatch.setattr(cluster_view, "node_allocatable", lambda node: parsed.append(node["metadata"]["name"]) or allocatable(node))
    first = view.node_views()["n1"]
    nodes.watch("MODIFIED", _node("n1", "2"))  # only its version (and conditions) changed
    assert view.node_views()["n1"] is first and parsed == []
    nodes.watch("MODIFIED", _node("n1", "3", cpu="8"))
    assert view.node_views()["n1"].allocatable.cpu == 8000 and parsed == ["n1"]


def _kubelet_node(name: str) -> Obj:
    """A node as a kubelet reports it: capacity 5000m / 8704Mi, of which 4800m / 8Gi allocatable."""
    node = _node(name, cpu="4800m")
    node["status"]["capacity"] = {"cpu": "5000m", "memory": "8704Mi", "pods": "110"}
    return node


def test_a_view_is_sized_by_allocatable_not_capacity() -> None:
    view, _, _ = _view([_kubelet_node("n0")])
    assert view.node_views()["n0"].allocatable == Resources(cpu=4800, memory=8 * 2**30)


def test_the_capacity_mutant_sizes_views_by_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.mutants import faults

    monkeypatch.setattr(cluster_view, "node_allocatable", cluster_view.node_allocatable)
    faults.apply_sizes_nodes_by_capacity()
    view, _, _ = _view([_kubelet_node("n0")])
    assert view.node_views()["n0"].allocatable == Resources(cpu=5000, memory=8704 * 2**20)
