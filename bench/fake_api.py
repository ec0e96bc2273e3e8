"""An in-process API server for the offline backlog: answers the Kubernetes client as kube-apiserver would, over no socket.

bench/offline_backlog.py gives the reference scheduler real `kubernetes.client.ApiClient`s whose
urllib3 pool manager is a `FakePoolManager`: everything above the socket runs as it does against a
cluster (the generated client's request building and JSON encoding, the response's decoding, the
watch's line splitting and JSON decoding), and the server below it keeps the objects, stamps
resourceVersions, answers 201/200/404/409 with the object or a Status, binds pods through the
`binding` subresource, and sends every change to the open watches as JSON lines.

The server's own work (encoding answers and events, applying writes) is not the reference's CPU: it
is timed per thread (`cpu_seconds`), so the driver can subtract it. Events are delivered one at a
time, each only after the informer has handled the one before (`flush`): the run is serialised and
deterministic, so a digest of what was written (`decisions`) tells whether a change to the reference
changed any decision.

Also here, KWOK's part: a bound pod is marked Running at once (the rescon-pod-running stage) and
`heartbeat(node)` rewrites a node's conditions (the rescon-node-heartbeat stage).
"""

from __future__ import annotations

import copy
import io
import json
import queue
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, urlsplit

import urllib3

from bench import offline_objects as objects

Obj = dict[str, Any]
Key = tuple[str, str]

#: Kinds by plural, for list answers and created objects.
KINDS = {
    "pods": ("v1", "Pod"),
    "nodes": ("v1", "Node"),
    "events": ("v1", "Event"),
    "configmaps": ("v1", "ConfigMap"),
    "limitranges": ("v1", "LimitRange"),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaim"),
    "persistentvolumes": ("v1", "PersistentVolume"),
    "namespaces": ("v1", "Namespace"),
    "runtimeclasses": ("node.k8s.io/v1", "RuntimeClass"),
    "storageclasses": ("storage.k8s.io/v1", "StorageClass"),
    "reservationrecords": ("rescon.dev/v1alpha1", "ReservationRecord"),
    "pipelineruns": ("tekton.dev/v1", "PipelineRun"),
    "taskruns": ("tekton.dev/v1", "TaskRun"),
    "tasks": ("tekton.dev/v1", "Task"),
    "customruns": ("tekton.dev/v1beta1", "CustomRun"),
    "resolutionrequests": ("resolution.tekton.dev/v1beta1", "ResolutionRequest"),
}


@dataclass(frozen=True)
class Route:
    """Route is what a request's path names: Route('pods', 'ns', 'p-1', 'binding') for /api/v1/namespaces/ns/pods/p-1/binding."""

    plural: str
    namespace: str | None = None
    name: str | None = None
    subresource: str | None = None


def route_of(path: str) -> Route:
    """route_of('/apis/rescon.dev/v1alpha1/namespaces/ns/reservationrecords/r/status') == Route('reservationrecords', 'ns', 'r', 'status')."""
    parts = [p for p in path.split("/") if p]
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    namespace = None
    if len(rest) >= 2 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
        if not rest:  # /api/v1/namespaces/<name>: the namespace itself
            return Route("namespaces", None, namespace)
    return Route(rest[0], namespace, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None)


def merge_patch(target: Any, patch: Any) -> Any:
    """merge_patch({'a': {'b': 1}}, {'a': {'b': None, 'c': 2}}) == {'a': {'c': 2}} (RFC 7386)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


class WatchResponse:
    """WatchResponse is one open watch, read by kubernetes.watch as a urllib3 response: one JSON line per event.

    `deliver(lines)` hands the informer these events and returns once it has asked for the
    one after the last, i.e. once its handlers have run for each; `end()` closes the stream.
    The informer reads them one after another as from a socket that holds them all, with no
    hand-off between threads per event (the driver's, not the scheduler's, cost).
    """

    status = 200
    reason = "OK"

    def __init__(self, plural: str, selector: Callable[[str], bool]) -> None:
        self.plural = plural
        self.selector = selector
        self.headers = urllib3.HTTPHeaderDict({"content-type": "application/json"})
        self._lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._outstanding = 0
        self._handled = threading.Event()
        self.closed = False

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        while True:
            line = self._lines.get()
            if line is None:
                return
            yield line
            self._outstanding -= 1  # asked for more: the event before is handled
            if self._outstanding == 0:
                self._handled.set()

    def deliver(self, lines: list[bytes]) -> None:
        if not lines:
            return
        self._handled.clear()
        self._outstanding = len(lines)
        for line in lines:
            self._lines.put(line)
        self._handled.wait()

    def end(self) -> None:
        self.closed = True
        self._lines.put(None)

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        pass


@dataclass
class Decisions:
    """Decisions is what the scheduler wrote that a decision shows in, without times: the digest's input."""

    binds: list[tuple[str, str]] = field(default_factory=list)
    record_writes: list[tuple[str, str, str]] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    pod_conditions: list[tuple[str, str]] = field(default_factory=list)

    def as_tuple(self) -> tuple[Any, ...]:
        return (tuple(self.binds), tuple(self.record_writes), tuple(self.events), tuple(self.pod_conditions))


def _claims_of(record: Obj) -> str:
    """_claims_of(record) is its groups' claims without times: name, state, node, holders, generation."""
    groups = (record.get("status") or {}).get("groups") or []
    return json.dumps(
        [[g.get("name"), g.get("state"), g.get("node"), sorted(g.get("holders") or []), g.get("claimGeneration")] for g in groups],
        sort_keys=True,
    )


class Store:
    """Store is one resource's objects, each kept as its JSON, as a list's item (no kind, no apiVersion).

    Kept as bytes, the server's copy of the world is no work for the process's garbage
    collector, which in the scheduler's own process walks only the scheduler's objects:
    5000 nodes kept as dicts here made every full collection walk them twice.
    """

    def __init__(self) -> None:
        self._items: dict[Key, bytes] = {}

    def get(self, key: Key) -> Obj | None:
        raw = self._items.get(key)
        return json.loads(raw) if raw is not None else None

    def put(self, key: Key, obj: Obj) -> None:
        self._items[key] = json.dumps(_without_type(obj)).encode()

    def __contains__(self, key: Key) -> bool:
        return key in self._items

    def listed(self, selector: Callable[[str], bool], namespace: str | None) -> list[bytes]:
        """listed(selector, namespace) is the JSON of each object whose name the selector takes, in that namespace (None: all)."""
        return [raw for (ns, name), raw in self._items.items() if selector(name) and (namespace is None or ns == namespace)]


class FakeApiServer:
    """FakeApiServer holds the objects by plural and (namespace, name), and answers requests as kube-apiserver would."""

    def __init__(self, *, kwok: bool = True) -> None:
        self._lock = threading.RLock()
        self._store: dict[str, Store] = {plural: Store() for plural in KINDS}
        self._version = 1
        self._pending: list[tuple[str, bytes, str]] = []  # (plural, event line, object's name) not yet delivered
        self._watches: list[WatchResponse] = []
        self._uids = 0
        self._kwok = kwok
        self._cpu = threading.local()
        self.cpu_seconds = 0.0
        #: Called when a thread enters and leaves the server's own work (a profiler pauses there).
        self.on_enter: Callable[[], None] = lambda: None
        self.on_leave: Callable[[], None] = lambda: None
        self.requests: Counter[str] = Counter()
        self.decisions = Decisions()

    # --- set-up (before the scheduler starts) ---

    def next_version(self) -> int:
        with self._lock:
            self._version += 1
            return self._version

    def next_uid(self) -> str:
        with self._lock:
            self._uids += 1
            return f"00000000-0000-4000-8000-{self._uids:012d}"

    def put(self, plural: str, obj: Obj) -> None:
        """put(plural, obj) stores an object as it is (already stamped), with no event: the world before the scheduler starts."""
        meta = obj["metadata"]
        self._store[plural].put((meta.get("namespace") or "", meta["name"]), obj)

    def get(self, plural: str, namespace: str, name: str) -> Obj | None:
        return self._store[plural].get((namespace, name))

    # --- time accounting ---

    def _enter(self) -> None:
        depth = getattr(self._cpu, "depth", 0)
        if depth == 0:
            self.on_enter()
            self._cpu.started = time.thread_time()
        self._cpu.depth = depth + 1

    def _leave(self) -> None:
        self._cpu.depth -= 1
        if self._cpu.depth == 0:
            spent = time.thread_time() - self._cpu.started
            with self._lock:
                self.cpu_seconds += spent
            self.on_leave()

    # --- requests ---

    def request(self, method: str, url: str, body: bytes | str | None) -> Any:
        """request(method, url, body) answers one request: a urllib3 response, or a WatchResponse for a watch."""
        self._enter()
        try:
            parts = urlsplit(url)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            route = route_of(parts.path)
            self.requests[f"{method} {route.plural}{'/' + route.subresource if route.subresource else ''}"] += 1
            payload = json.loads(body) if body else None
            with self._lock:
                status, answer = self._answer(method, route, query, payload)
            if isinstance(answer, WatchResponse):
                return answer
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        finally:
            self._leave()
        return urllib3.HTTPResponse(
            body=io.BytesIO(data), headers={"content-type": "application/json"}, status=status, reason="OK" if status < 300 else "Error",
            preload_content=False, decode_content=False,
        )

    def _answer(self, method: str, route: Route, query: dict[str, str], payload: Any) -> tuple[int, Any]:
        store = self._store[route.plural]
        if method == "GET" and route.name is None:
            selector = _field_selector(query.get("fieldSelector"))
            if query.get("watch") in ("true", "1", "True"):
                watch = WatchResponse(route.plural, selector)
                self._watches.append(watch)
                return 200, watch
            api_version, kind = KINDS[route.plural]
            head = json.dumps({"kind": f"{kind}List", "apiVersion": api_version, "metadata": {"resourceVersion": str(self._version)}}).encode()
            return 200, head[:-1] + b',"items":[' + b",".join(store.listed(selector, route.namespace)) + b"]}"
        key = (route.namespace or "", route.name or "")
        if method == "GET":
            found = store.get(key)
            return (200, found) if found is not None else _status(404, "NotFound", f"{route.plural} {route.name} not found")
        if method == "POST" and route.subresource == "binding":
            return self._bind(key, payload)
        if method == "POST":
            return self._create(route, payload)
        current = store.get(key)
        if current is None:
            return _status(404, "NotFound", f"{route.plural} {route.name} not found")
        if method == "PUT":
            sent = (payload.get("metadata") or {}).get("resourceVersion")
            if sent and sent != current["metadata"]["resourceVersion"]:
                return _status(409, "Conflict", "the object has been modified; please apply your changes to the latest version and try again")
            updated = copy.deepcopy(current)
            if route.subresource == "status":
                updated["status"] = payload.get("status")
            else:
                updated = {**payload, "status": current.get("status")}
            return 200, self._modified(route.plural, updated)
        if method == "PATCH":
            if route.plural == "pods":
                for condition in (payload.get("status") or {}).get("conditions") or []:
                    self.decisions.pod_conditions.append((key[1], str(condition.get("message"))))
            updated = merge_patch(current, _pod_status_patch(current, payload) if route.plural == "pods" else payload)
            return 200, self._modified(route.plural, updated)
        raise ValueError(f"the offline API server does not answer {method} {route}")

    def _create(self, route: Route, payload: Obj) -> tuple[int, Obj]:
        meta = dict(payload.get("metadata") or {})
        if route.plural == "events":  # Events are written, never watched by the reference: answer and forget
            involved = payload.get("involvedObject") or {}
            self.decisions.events.append((str(involved.get("name")), str(payload.get("reason")), str(payload.get("message"))))
            meta.setdefault("name", f"{meta.pop('generateName', 'event.')}{self._version:x}")
            return 201, {**payload, "metadata": {**meta, "uid": self.next_uid(), "resourceVersion": str(self.next_version()), "creationTimestamp": objects.STAMP}}
        key = (route.namespace or "", meta.get("name") or "")
        store = self._store[route.plural]
        if key in store:
            return _status(409, "AlreadyExists", f"{route.plural} {key[1]} already exists")
        created = objects.stored({k: v for k, v in payload.items() if k != "status"}, namespace=route.namespace, uid=self.next_uid(), version=self.next_version(), manager="tkn-scheduler")
        if route.plural == "reservationrecords":
            created["metadata"]["generation"] = 1
            self.decisions.record_writes.append(("create", key[1], json.dumps(created.get("spec"), sort_keys=True)))
        store.put(key, created)
        self._emit(route.plural, "ADDED", created)
        return 201, created

    def _modified(self, plural: str, updated: Obj) -> Obj:
        meta = updated["metadata"]
        meta["resourceVersion"] = str(self.next_version())
        self._store[plural].put((meta.get("namespace") or "", meta["name"]), updated)
        if plural == "reservationrecords":
            labels = json.dumps(meta.get("labels") or {}, sort_keys=True)
            self.decisions.record_writes.append(("write", meta["name"], f"{labels} {_claims_of(updated)}"))
        self._emit(plural, "MODIFIED", updated)
        return updated

    def _bind(self, key: Key, binding: Obj) -> tuple[int, Obj]:
        pod = self._store["pods"].get(key)
        if pod is None:
            return _status(404, "NotFound", f"pods {key[1]} not found")
        if (pod.get("spec") or {}).get("nodeName"):
            return _status(409, "Conflict", f"pod {key[1]} is already assigned to node {pod['spec']['nodeName']}")
        node = binding["target"]["name"]
        self.decisions.binds.append((key[1], node))
        after = self._modified("pods", objects.bound(pod, node))
        if self._kwok:
            self._modified("pods", objects.running(after, index=len(self.decisions.binds)))
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def _emit(self, plural: str, kind: str, obj: Obj) -> None:
        api_version, kind_name = KINDS[plural]
        sent = {**obj, "apiVersion": obj.get("apiVersion", api_version), "kind": obj.get("kind", kind_name)}
        self._pending.append((plural, json.dumps({"type": kind, "object": sent}).encode() + b"\n", obj["metadata"]["name"]))

    # --- KWOK ---

    def heartbeat(self, node_name: str, beat: int, index: int) -> None:
        """heartbeat(name, beat, index) is KWOK's rescon-node-heartbeat: the node's conditions stamped anew, a new resourceVersion."""
        self._enter()
        try:
            with self._lock:
                node = self._store["nodes"].get(("", node_name))
                assert node is not None
                updated = {**node, "metadata": dict(node["metadata"]), "status": objects.node_status(node["status"], name=node_name, index=index, beat=beat)}
                self._modified("nodes", updated)
        finally:
            self._leave()

    # --- watches ---

    def open_watches(self) -> int:
        with self._lock:
            return sum(1 for w in self._watches if not w.closed)

    def flush(self) -> int:
        """flush() delivers every pending event to the watches that select it; returns how many events there were.

        Each watch gets its events in order, and one watch's are all handled before the next
        watch gets any (informers run on threads of their own: any such order is one they can meet).
        """
        delivered = 0
        while True:
            with self._lock:
                pending, self._pending = self._pending, []
                watches = [w for w in self._watches if not w.closed]
            if not pending:
                return delivered
            for watch in watches:
                watch.deliver([line for plural, line, name in pending if plural == watch.plural and watch.selector(name)])
            delivered += len(pending)

    def pending_events(self) -> int:
        with self._lock:
            return len(self._pending)

    def end_watches(self) -> None:
        with self._lock:
            watches, self._watches = self._watches, []
        for watch in watches:
            watch.end()


class FakePoolManager:
    """FakePoolManager stands in for urllib3's PoolManager under a kubernetes ApiClient: every request goes to the server."""

    def __init__(self, server: FakeApiServer) -> None:
        self._server = server

    def request(self, method: str, url: str, *, body: bytes | str | None = None, **_: Any) -> Any:
        return self._server.request(method, url, body)

    def clear(self) -> None:
        pass


def _field_selector(selector: str | None) -> Callable[[str], bool]:
    """_field_selector('metadata.name=feature-flags') takes an object's name to that (the only field selector the reference sends)."""
    if not selector:
        return lambda name: True
    field_name, _, value = selector.partition("=")
    if field_name != "metadata.name":
        raise ValueError(f"the offline API server selects only by metadata.name, not {selector!r}")
    return lambda name: name == value


def _without_type(obj: Obj) -> Obj:
    """A list's items carry no kind and apiVersion (the informer sets them from the list's)."""
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def _status(code: int, reason: str, message: str) -> tuple[int, Obj]:
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}


def _pod_status_patch(pod: Obj, patch: Obj) -> Obj:
    """_pod_status_patch() applies a strategic merge of status.conditions by type (what the reference's PodScheduled patch needs)."""
    conditions = (patch.get("status") or {}).get("conditions")
    if conditions is None:
        return patch
    merged = {c.get("type"): c for c in (pod.get("status") or {}).get("conditions") or []}
    for condition in conditions:
        merged[condition.get("type")] = condition
        # Only the reference's unschedulable condition is patched; it is part of the digest.
    return {**patch, "status": {**patch["status"], "conditions": list(merged.values())}}
