"""ClusterView: the accounting's inputs (NodeView, ActiveReservation) read from the informers' caches.

It also remembers *assumed* pods: pods this scheduler has just bound whose
binding the pod informer has not shown yet. Without them, two pods popped in
quick succession would both see the node as empty (kube-scheduler's cache
assumes pods for the same reason).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from reference_scheduler.core.headroom import ActiveReservation, NodeView, PodUsage
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import allocatable_pods
from reference_scheduler.core.pod_requests import pod_effective_request
from reference_scheduler.core.resources import InvalidQuantity, Resources
from reference_scheduler.runtime.informer import Informer
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
class _Assumed:
    node: str
    usage: PodUsage
    at: float


class ClusterView:
    """ClusterView answers "what is on each node" from caches plus this scheduler's assumptions."""

    def __init__(self, *, pods: Informer, nodes: Informer, records: Informer) -> None:
        self._pods = pods
        self._nodes = nodes
        self._records = records
        self._lock = threading.Lock()
        self._assumed: dict[str, _Assumed] = {}
        self._request_cache: dict[tuple[str, str], Resources] = {}
        # Parsed per object version (resourceVersion): parsing quantities for every node and
        # record on every attempt cost more than the decision at 1000 nodes. An object
        # without a resourceVersion is parsed every time.
        self._node_cache: dict[str, tuple[str, Resources, int]] = {}
        self._record_cache: dict[tuple[str, str], tuple[str, list[ActiveReservation]]] = {}
        self._group_cache: dict[tuple[str, str, str], tuple[str, GroupKey | None]] = {}

    # --- groups ---

    def record_of(self, namespace: str, pipeline_run: str) -> Obj | None:
        return self._records.get(namespace, pipeline_run)

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
        active: list[ActiveReservation] = []
        cache: dict[tuple[str, str], tuple[str, list[ActiveReservation]]] = {}
        for record in self._records.list():
            meta = record["metadata"]
            key = (meta.get("namespace") or "", meta["name"])
            version = meta.get("resourceVersion") or ""
            cached = self._record_cache.get(key)
            if cached is None or not version or cached[0] != version:
                cached = (version, _reservations_of(record))
            cache[key] = cached
            active.extend(cached[1])
        self._record_cache = cache
        return active

    # --- pods and nodes ---

    def request_of(self, pod: Obj) -> Resources:
        """request_of(pod) is its effective request, computed once per pod version."""
        meta = pod.get("metadata") or {}
        key = (meta.get("uid") or "", meta.get("resourceVersion") or "")
        cached = self._request_cache.get(key)
        if cached is None:
            cached = pod_effective_request(pod.get("spec") or {})
            if len(self._request_cache) > 50_000:
                self._request_cache.clear()
            self._request_cache[key] = cached
        return cached

    def assume(self, pod: Obj, node: str, group: GroupKey | None) -> None:
        usage = PodUsage(pod["metadata"]["uid"], self.request_of(pod), group)
        with self._lock:
            self._assumed[usage.uid] = _Assumed(node, usage, time.monotonic())

    def forget_assumed(self, uid: str) -> None:
        with self._lock:
            self._assumed.pop(uid, None)

    def node_objects(self) -> list[Obj]:
        return self._nodes.list()

    def node_views(self) -> dict[str, NodeView]:
        """node_views() lists every node with its non-terminal bound pods (and assumed ones)."""
        pods_by_node: dict[str, list[PodUsage]] = {}
        seen: set[str] = set()
        for pod in self._pods.list():
            node = (pod.get("spec") or {}).get("nodeName")
            uid = (pod.get("metadata") or {}).get("uid") or ""
            if not node or is_terminal(pod):
                if node:
                    seen.add(uid)
                continue
            seen.add(uid)
            try:
                request = self.request_of(pod)
            except InvalidQuantity:
                request = Resources()
            pods_by_node.setdefault(node, []).append(PodUsage(uid, request, self.group_of(pod)))
        now = time.monotonic()
        with self._lock:
            for uid, assumed in list(self._assumed.items()):
                if uid in seen or now - assumed.at > ASSUME_TTL_SECONDS:
                    del self._assumed[uid]
                else:
                    pods_by_node.setdefault(assumed.node, []).append(assumed.usage)
        views = {}
        cache: dict[str, tuple[str, Resources, int]] = {}
        for node in self._nodes.list():
            name = node["metadata"]["name"]
            version = node["metadata"].get("resourceVersion") or ""
            cached = self._node_cache.get(name)
            if cached is None or not version or cached[0] != version:
                alloc = (node.get("status") or {}).get("allocatable") or {}
                try:
                    allocatable = Resources.from_mapping(alloc)
                except InvalidQuantity:
                    allocatable = Resources()
                cached = (version, allocatable, allocatable_pods(node))
            cache[name] = cached
            views[name] = NodeView(name, cached[1], cached[2], tuple(pods_by_node.get(name, ())))
        self._node_cache = cache
        return views


def _reservations_of(record: Obj) -> list[ActiveReservation]:
    """_reservations_of(record) is the record's Reserved groups, each with its node and parsed peak."""
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
