"""ClusterView: the accounting's inputs (NodeView, ActiveReservation) read from the informers' caches.

It also remembers *assumed* pods: pods this scheduler has just bound (or is
binding, on a worker) whose binding the pod informer has not shown yet. Without
them, two pods popped in quick succession would both see the node as empty
(kube-scheduler's cache assumes pods for the same reason).

And it remembers the records this scheduler has just written (*assumed records*):
the response of every create and status write, until the record informer shows
that version or a later one. So the claim a pod made is counted at once: the next
pod, of another PipelineRun, sees the group's whole peak held on the node, not
only the assumed pod's request (without it, two first pods of different runs
popped within an informer round trip could over-commit a node); and the next
compare-and-swap starts from the version just written instead of a GET.

And, one step earlier, the records as decided while their writes still wait in a
lane (`intents`): `record_of` and `active_reservations` show them, so a claim counts
from the moment it is decided; `confirmed_record_of` shows only what the API holds,
the base of every compare-and-swap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reference_scheduler.core.headroom import ActiveReservation, NodeView, PodUsage
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import allocatable_pods, node_allocatable
from reference_scheduler.core.node_ports import HostPort
from reference_scheduler.core.placed_pods import PlacedPods, node_index
from reference_scheduler.core.bound_pod_requests import bound_pod_request
from reference_scheduler.core.resources import InvalidQuantity, Resources
from reference_scheduler.runtime.informer import Informer, key_of
from reference_scheduler.runtime.intended_records import IntendedRecords
from reference_scheduler.runtime.records import spec_group_of_task

Obj = dict[str, Any]

PIPELINE_RUN_LABEL = "tekton.dev/pipelineRun"
PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"
TERMINAL_PHASES = ("Succeeded", "Failed")

#: An assumed pod the informer never confirms is forgotten after this long.
ASSUME_TTL_SECONDS = 30.0


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def pipeline_task_of(pod: Obj) -> tuple[str, str] | None:
    """pipeline_task_of(pod) is (PipelineRun name, pipeline task name) from Tekton's labels, if both are set."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    run, task = labels.get(PIPELINE_RUN_LABEL), labels.get(PIPELINE_TASK_LABEL)
    return (run, task) if run and task else None


@dataclass(frozen=True)
class _WrittenRecord:
    record: Obj
    #: resourceVersions this write is known to supersede (the versions it was based on, earlier writes).
    older: frozenset[str]
    at: float


def _version(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def _not_newer(candidate: str, current: str) -> bool:
    """_not_newer(a, b): a is known not to be newer than b.

    resourceVersions are opaque to clients; but where both are numbers (etcd's revisions, on
    every API server this suite meets) their order is the order of the writes. Otherwise
    nothing is known, and only the versions a write is known to supersede count as older.
    """
    return candidate.isdigit() and current.isdigit() and int(candidate) <= int(current)


@dataclass(frozen=True)
class _Assumed:
    node: str
    usage: PodUsage
    at: float
    pod: Obj  # the pod itself: the filters that read other pods (ports, pod affinity, spread) see it on its node


class ClusterView:
    """ClusterView answers "what is on each node" from caches plus this scheduler's assumptions."""

    def __init__(self, *, pods: Informer, nodes: Informer, records: Informer) -> None:
        self._pods = pods
        self._nodes = nodes
        self._records = records
        self._lock = threading.Lock()
        self._assumed: dict[str, _Assumed] = {}
        self._written: dict[tuple[str, str], _WrittenRecord] = {}
        #: The records as decided, while their writes wait in a lane (runtime/intended_records.py).
        self.intents = IntendedRecords()
        self._request_cache: dict[tuple[str, str], Resources] = {}
        # Parsed per object version (resourceVersion): parsing quantities for every node and
        # record on every attempt cost more than the decision at 1000 nodes. An object
        # without a resourceVersion is parsed every time. A node's entry keeps the
        # status.allocatable it was parsed from (all node_allocatable and allocatable_pods
        # read): a heartbeat's new version with the same allocatable is not parsed again.
        self._node_cache: dict[str, tuple[str, Any, Resources, int]] = {}
        self._allocatable_parses: dict[tuple[tuple[str, Any], ...], tuple[Resources, int]] = {}
        # The Reserved groups of the records the informer holds, kept from its events (built
        # from its cache on first use), so an attempt no longer walks every record: only the
        # records just written or decided are read on top (active_reservations).
        self._records_lock = threading.Lock()
        self._records_indexed = False
        self._confirmed: dict[tuple[str, str], tuple[str, list[ActiveReservation]]] = {}
        self._confirmed_flat: list[ActiveReservation] | None = None  # None: to be flattened again
        # Reservations of the records read on top, per record: by resourceVersion, or by the
        # object itself for a decided record (it has no version).
        self._record_cache: dict[tuple[str, str], tuple[Obj, str, list[ActiveReservation]]] = {}
        self._group_cache: dict[tuple[str, str, str], tuple[str, GroupKey | None]] = {}
        # The bound pods per node, kept from the pod informer's events, so that node_views()
        # rebuilds only the nodes whose pods changed since the last call (every pod used to
        # be walked on every attempt). Built from the cache on first use.
        self._index_lock = threading.Lock()
        self._indexed = False
        self._pod_node: dict[str, str] = {}  # uid -> node, non-terminal bound pods
        self._pod_run: dict[str, tuple[str, str]] = {}  # uid -> (namespace, PipelineRun) of those pods
        self._node_pods: dict[str, dict[str, Obj]] = {}
        self._run_pods: dict[tuple[str, str], set[str]] = {}
        self._bound: set[str] = set()  # every pod with a nodeName, terminal ones too
        self._dirty: set[str] = set()  # nodes whose pods changed
        # Likewise the nodes added, changed or deleted, from the node informer's events: the
        # node objects are read again only for these (walking all 5000 cost a third of an attempt).
        self._changed_nodes: set[str] = set()
        self._views: dict[str, NodeView] = {}
        self._untrusted: set[str] = set()  # nodes without a resourceVersion: read on every call
        # Nodes whose assumed pods changed (assumed, forgotten, confirmed or expired) since the last
        # node_views(): only these, and the nodes whose bound pods changed, are rebuilt.
        self._assumed_changed: set[str] = set()
        # The placed pods themselves per node, with their used host ports and those with required
        # anti-affinity (core/placed_pods.py), kept beside the views and rebuilt with them.
        self._placed_by_node: dict[str, tuple[Mapping[str, Any], ...]] = {}
        self._ports_by_node: dict[str, frozenset[HostPort]] = {}
        self._anti_by_node: dict[str, tuple[Mapping[str, Any], ...]] = {}
        self._placed = PlacedPods()
        pods.add_handler(self._on_pod)
        nodes.add_handler(self._on_node)
        records.add_handler(self._on_record)

    # --- groups ---

    def record_of(self, namespace: str, pipeline_run: str) -> Obj | None:
        """record_of(ns, run) is the run's record as decided: the state its queued writes lead to, else confirmed_record_of."""
        intended = self.intents.get((namespace, pipeline_run))
        return intended if intended is not None else self.confirmed_record_of(namespace, pipeline_run)

    def confirmed_record_of(self, namespace: str, pipeline_run: str) -> Obj | None:
        """confirmed_record_of(ns, run) is the record the API holds: the informer's copy, or the one just written if that is newer.

        The base of every compare-and-swap (an intended record has no resourceVersion).
        """
        return self._resolved((namespace, pipeline_run), self._records.get(namespace, pipeline_run))

    def assume_record(self, written: Obj, *, replaces: str = "") -> None:
        """assume_record(response) remembers a record this scheduler wrote, until the informer shows it.

        `replaces` is the resourceVersion the write was based on (a compare-and-swap's), so
        the informer's copy at that version reads as stale. A response that is not newer than
        one already remembered (two writers' responses arriving out of order) is ignored.
        """
        meta = written.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        version = _version(written)
        if not version:
            return
        with self._lock:
            previous = self._written.get(key)
            older = {replaces} if replaces else set()
            if previous is not None:
                before = _version(previous.record)
                if _not_newer(version, before):
                    return
                older |= previous.older | {before}
            self._written[key] = _WrittenRecord(written, frozenset(older), time.monotonic())

    def _resolved(self, key: tuple[str, str], cached: Obj | None) -> Obj | None:
        with self._lock:
            written = self._written.get(key)
            if written is None:
                return cached
            version = _version(cached)
            stale = cached is None or version in written.older or (version != _version(written.record) and _not_newer(version, _version(written.record)))
            if stale and time.monotonic() - written.at <= ASSUME_TTL_SECONDS:
                return written.record
            del self._written[key]  # the informer caught up (or moved past it): its copy is the truth
            return cached

    def group_of(self, pod: Obj) -> GroupKey | None:
        """group_of(pod) is the pod's group according to its PipelineRun's record; None for a plain pod."""
        found = pipeline_task_of(pod)
        if found is None:
            return None
        run, task = found
        namespace = pod["metadata"].get("namespace") or ""
        record = self._records.get(namespace, run)
        if record is None:
            return None
        version = record["metadata"].get("resourceVersion") or ""
        key = (namespace, run, task)
        cached = self._group_cache.get(key)
        if cached is not None and version and cached[0] == version:
            return cached[1]
        group = spec_group_of_task(record, task)
        result = GroupKey(namespace, run, str(group.get("name"))) if group is not None else None
        if version:
            if len(self._group_cache) > 50_000:
                self._group_cache.clear()
            self._group_cache[key] = (version, result)
        return result

    def active_reservations(self) -> list[ActiveReservation]:
        """active_reservations() is every Reserved group: as the informer holds the records, or as just written or decided."""
        with self._records_lock:
            if not self._records_indexed:
                for record in self._records.list():
                    self._index_record(record)
                self._records_indexed = True
            if self._confirmed_flat is None:
                self._confirmed_flat = [r for _, reservations in self._confirmed.values() for r in reservations]
            confirmed, flat = self._confirmed, self._confirmed_flat
            on_top: dict[tuple[str, str], Obj] = {}
            with self._lock:
                written_keys = list(self._written)
            for key in written_keys:  # records just written: newer than (or absent from) the informer's
                resolved = self._resolved(key, self._records.get(*key))
                if resolved is not None:
                    on_top[key] = resolved
            on_top.update(self.intents.items())  # claims decided but not written yet hold their peak already
            if not on_top:
                self._record_cache.clear()
                return list(flat)
            replaced = {id(r) for key in on_top if key in confirmed for r in confirmed[key][1]}
            active = [r for r in flat if id(r) not in replaced] if replaced else list(flat)
            cache: dict[tuple[str, str], tuple[Obj, str, list[ActiveReservation]]] = {}
            for key, record in on_top.items():
                version = _version(record)
                cached = self._record_cache.get(key)
                if cached is None or not (cached[0] is record or (version and cached[1] == version)):
                    cached = (record, version, reservations_of(record))
                cache[key] = cached
                active.extend(cached[2])
            self._record_cache = cache
        return active

    def _index_record(self, record: Obj, *, deleted: bool = False) -> None:
        """_index_record() keeps the informer's copy of one record's Reserved groups (under _records_lock)."""
        key = key_of(record)
        before = self._confirmed.get(key)
        if deleted:
            if before is not None:
                del self._confirmed[key]
                self._confirmed_flat = None
            return
        version = _version(record)
        if before is not None and version and before[0] == version:
            return
        self._confirmed[key] = (version, reservations_of(record))
        self._confirmed_flat = None

    # --- pods and nodes ---

    def request_of(self, pod: Obj) -> Resources:
        """request_of(pod) is its effective request, computed once per pod version."""
        meta = pod.get("metadata") or {}
        version = meta.get("resourceVersion") or ""
        if not version:
            return bound_pod_request(pod)  # no version to tell two states apart
        key = (meta.get("uid") or "", version)
        cached = self._request_cache.get(key)
        if cached is None:
            cached = bound_pod_request(pod)
            if len(self._request_cache) > 50_000:
                self._request_cache.clear()
            self._request_cache[key] = cached
        return cached

    def assume(self, pod: Obj, node: str, group: GroupKey | None) -> None:
        usage = PodUsage(pod["metadata"]["uid"], self.request_of(pod), group)
        with self._lock:
            before = self._assumed.get(usage.uid)
            if before is not None:
                self._assumed_changed.add(before.node)
            self._assumed[usage.uid] = _Assumed(node, usage, time.monotonic(), pod)
            self._assumed_changed.add(node)

    def forget_assumed(self, uid: str) -> None:
        with self._lock:
            self._forget_assumed(uid)

    def _forget_assumed(self, uid: str) -> None:
        """_forget_assumed() drops one assumed pod and marks its node to rebuild (under _lock)."""
        gone = self._assumed.pop(uid, None)
        if gone is not None:
            self._assumed_changed.add(gone.node)

    def node_objects(self) -> list[Obj]:
        return self._nodes.list()

    def node_named(self, name: str) -> Obj | None:
        return self._nodes.get("", name)

    def nodes_with_run(self, namespace: str, pipeline_run: str) -> set[str]:
        """nodes_with_run(ns, run) is every node with a non-terminal pod of the PipelineRun, bound or assumed."""
        run = (namespace, pipeline_run)
        with self._index_lock:
            found = {self._pod_node[uid] for uid in self._run_pods.get(run, ()) if uid in self._pod_node}
        with self._lock:
            found |= {a.node for a in self._assumed.values() if a.usage.group is not None and (a.usage.group.namespace, a.usage.group.pipeline_run) == run}
        return found

    def node_of(self, uid: str) -> str | None:
        """node_of(uid) is the node a non-terminal pod is bound (or assumed) to, if any."""
        with self._lock:
            assumed = self._assumed.get(uid)
        if assumed is not None:
            return assumed.node
        with self._index_lock:
            return self._pod_node.get(uid)

    def node_views(self) -> dict[str, NodeView]:
        """node_views() lists every node with its non-terminal bound pods (and assumed ones).

        A node's view is rebuilt only when its pods, its allocatable, the groups of its
        pods or its assumed pods changed; otherwise the previous NodeView object is
        returned again, which also lets the scheduling cycle reuse its per-node results.
        Only the nodes named by an event since the last call are looked at.
        """
        with self._index_lock:
            if not self._indexed:
                self._build_index()
            dirty, self._dirty = self._dirty, set()
            changed, self._changed_nodes = self._changed_nodes, set()
            assumed_by_node: dict[str, list[PodUsage]] = {}
            assumed_pods: dict[str, list[Obj]] = {}
            now = time.monotonic()
            with self._lock:
                for uid, assumed in list(self._assumed.items()):
                    if uid in self._bound or now - assumed.at > ASSUME_TTL_SECONDS:
                        self._forget_assumed(uid)
                    else:
                        assumed_by_node.setdefault(assumed.node, []).append(assumed.usage)
                        assumed_pods.setdefault(assumed.node, []).append(assumed.pod)
                assumed_changed, self._assumed_changed = self._assumed_changed, set()
            # A node whose bound and assumed pods are as at the last call keeps its view: the same
            # pods in the same order would rebuild an equal one.
            rebuild = dirty | assumed_changed
            pods_of = {node: list(self._node_pods.get(node, {}).values()) for node in rebuild}
        current = dict(self._views)  # a new dict each call: the one returned is never changed afterwards
        placed_changed = False
        for name in changed | rebuild | self._untrusted:
            node = self._nodes.get("", name)
            if node is None:  # deleted, or pods on a node the cache does not hold (yet)
                current.pop(name, None)
                self._node_cache.pop(name, None)
                self._untrusted.discard(name)
                placed_changed = self._set_placed(name, ()) or placed_changed
                continue
            version = node["metadata"].get("resourceVersion") or ""
            cached = self._node_cache.get(name)
            if cached is None or not version or cached[0] != version:
                raw = (node.get("status") or {}).get("allocatable")
                if cached is not None and version and cached[0] and raw == cached[1]:
                    # A new version with the same allocatable (a heartbeat): parsed as before.
                    cached = self._node_cache[name] = (version, raw, cached[2], cached[3])
                else:
                    cached = self._node_cache[name] = (version, raw, *self._parsed_allocatable(node, raw))
            if version:
                self._untrusted.discard(name)
            else:
                self._untrusted.add(name)  # no version: never trusted to be unchanged
            view = current.get(name)
            if view is None or name in rebuild or view.allocatable != cached[2] or view.max_pods != cached[3]:
                if name not in pods_of:
                    with self._index_lock:
                        pods_of[name] = list(self._node_pods.get(name, {}).values())
                usages = [self._usage(pod) for pod in pods_of[name]] + assumed_by_node.get(name, [])
                rebuilt = NodeView(name, cached[2], cached[3], tuple(usages))
                # The same content keeps the same object (a node with pods still assumed is looked at
                # on every call): the cycle's per-node memo holds as long as the object does.
                current[name] = view if view is not None and view == rebuilt else rebuilt
                placed_changed = self._set_placed(name, (*pods_of[name], *assumed_pods.get(name, ()))) or placed_changed
        self._views = current
        if placed_changed:
            self._placed = PlacedPods(dict(self._placed_by_node), dict(self._ports_by_node), dict(self._anti_by_node))
        return current

    def _parsed_allocatable(self, node: Obj, raw: Any) -> tuple[Resources, int]:
        """_parsed_allocatable(node, its status.allocatable) is (node_allocatable, allocatable_pods), parsed once per distinct allocatable.

        The nodes of a pool report the same allocatable: 5000 of them are one parse, not 5000.
        """
        try:
            key = tuple(sorted(raw.items())) if isinstance(raw, Mapping) else None
            found = self._allocatable_parses.get(key) if key is not None else None
        except TypeError:  # a value that does not hash: parsed on its own
            key = found = None
        if found is None:
            found = (node_allocatable(node), allocatable_pods(node))
            if key is not None:
                if len(self._allocatable_parses) > 4096:
                    self._allocatable_parses.clear()
                self._allocatable_parses[key] = found
        return found

    def placed_pods(self) -> PlacedPods:
        """placed_pods() is the pods on each node as of the last node_views(): the same pods its views count.

        What NodePorts, InterPodAffinity and PodTopologySpread read (core/placed_pods.py):
        the pods themselves, bound and not finished or assumed, with each node's used host
        ports and its pods with required anti-affinity. Rebuilt only for the nodes whose views
        were; the snapshot returned is never changed afterwards.
        """
        return self._placed

    def _set_placed(self, name: str, pods: tuple[Obj, ...]) -> bool:
        """_set_placed() replaces one node's placed pods and their indexes; False when they are the very same pods.

        Informer objects are replaced, never changed in place, so the same objects in the same
        order are the same content: a node whose pods are only still assumed (rebuilt on every
        call) keeps its entry, and the snapshot is not copied again.
        """
        before = self._placed_by_node.get(name, ())
        if len(before) == len(pods) and all(a is b for a, b in zip(before, pods)):
            return False
        placed, ports, anti = node_index(pods)
        for table, value in ((self._placed_by_node, placed), (self._anti_by_node, anti)):
            if value:
                table[name] = value
            else:
                table.pop(name, None)
        if ports:
            self._ports_by_node[name] = ports
        else:
            self._ports_by_node.pop(name, None)
        return True

    def _usage(self, pod: Obj) -> PodUsage:
        try:
            request = self.request_of(pod)
        except InvalidQuantity:
            request = Resources()
        return PodUsage((pod.get("metadata") or {}).get("uid") or "", request, self.group_of(pod))

    # --- the per-node pod index (hold _index_lock) ---

    def _build_index(self) -> None:
        # Under the same lock as the handlers' check of _indexed: an event they skipped was
        # already in the caches (informers update the cache before running handlers).
        for pod in self._pods.list():
            self._index(pod)
        self._changed_nodes.update(node["metadata"]["name"] for node in self._nodes.list())
        self._indexed = True

    def _index(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        uid = meta.get("uid") or ""
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        self._bound.add(uid)
        if is_terminal(pod):
            return
        self._pod_node[uid] = node
        self._node_pods.setdefault(node, {})[uid] = pod
        self._dirty.add(node)
        found = pipeline_task_of(pod)
        if found is not None:
            run = (meta.get("namespace") or "", found[0])
            self._pod_run[uid] = run
            self._run_pods.setdefault(run, set()).add(uid)

    def _unindex(self, uid: str) -> None:
        self._bound.discard(uid)
        node = self._pod_node.pop(uid, None)
        if node is not None:
            pods = self._node_pods.get(node)
            if pods is not None:
                pods.pop(uid, None)
                if not pods:
                    del self._node_pods[node]
            self._dirty.add(node)
        run = self._pod_run.pop(uid, None)
        if run is not None:
            uids = self._run_pods.get(run)
            if uids is not None:
                uids.discard(uid)
                if not uids:
                    del self._run_pods[run]

    def _on_pod(self, kind: str, pod: Obj, old: Obj | None) -> None:
        uid = (pod.get("metadata") or {}).get("uid") or ""
        with self._index_lock:
            if not self._indexed:
                return  # the first node_views() reads the cache, which already holds this change
            self._unindex(uid)
            if kind != "DELETED":
                self._index(pod)
        if kind == "DELETED":
            # A pod deleted before a node_views() saw it bound would otherwise stay assumed
            # on its node until ASSUME_TTL_SECONDS, holding room that is already free.
            with self._lock:
                self._forget_assumed(uid)

    def _on_node(self, kind: str, node: Obj, old: Obj | None) -> None:
        with self._index_lock:
            if self._indexed:  # else the first node_views() reads the cache, which already holds this change
                self._changed_nodes.add((node.get("metadata") or {}).get("name") or "")

    def _on_record(self, kind: str, record: Obj, old: Obj | None) -> None:
        meta = record.get("metadata") or {}
        run = (meta.get("namespace") or "", meta.get("name") or "")
        with self._records_lock:
            if self._records_indexed:  # else the first active_reservations() reads the informer's cache whole
                self._index_record(record, deleted=kind == "DELETED")
        if kind == "DELETED":
            with self._lock:
                self._written.pop(run, None)
        # A pod's group comes from its run's record: when the record appears, goes, or its
        # groups change, the nodes of that run's pods are rebuilt.
        if kind == "MODIFIED" and old is not None and (old.get("spec") or {}).get("groups") == (record.get("spec") or {}).get("groups"):
            return
        with self._index_lock:
            for uid in self._run_pods.get(run, ()):
                node = self._pod_node.get(uid)
                if node is not None:
                    self._dirty.add(node)


def reservations_of(record: Obj) -> list[ActiveReservation]:
    """reservations_of(record) is the record's Reserved groups, each with its node and parsed peak."""
    namespace = record["metadata"].get("namespace") or ""
    run = record["metadata"]["name"]
    peaks = {g.get("name"): g.get("peak") for g in (record.get("spec") or {}).get("groups") or []}
    active = []
    for entry in (record.get("status") or {}).get("groups") or []:
        if entry.get("state") == "Reserved" and entry.get("node"):
            try:
                peak = Resources.from_mapping(peaks.get(entry.get("name")) or {})
            except InvalidQuantity:
                continue  # a record edited by hand into nonsense holds nothing
            active.append(ActiveReservation(GroupKey(namespace, run, str(entry["name"])), entry["node"], peak))
    return active
