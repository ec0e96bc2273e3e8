"""Informer: a list+watch cache of one resource, so scheduling decisions read memory, not the API.

It lists once, then watches from the list's resourceVersion; a watch that ends
is resumed from the last seen resourceVersion, and a 410 Gone (the version was
compacted away) triggers a fresh list whose differences are replayed as events,
as client-go's reflector does. Handlers run on the informer's thread and must
be quick: they only enqueue work.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any, Callable, Iterator

import kubernetes
from kubernetes import watch

log = logging.getLogger("tkn-scheduler.informer")

#: Object = the raw JSON dict the API returns.
Obj = dict[str, Any]
Handler = Callable[[str, Obj, Obj | None], None]  # (event type, new object, old object)

#: How long one watch request stays open before it is renewed.
WATCH_SECONDS = 240
#: The pause after an unexpected error before listing again.
ERROR_BACKOFF_SECONDS = 1.0


def raw_lister(list_fn: Callable[..., Any], **fixed: Any) -> Callable[..., Any]:
    """raw_lister(core.list_pod_for_all_namespaces) lists as plain dicts, skipping model deserialization.

    Deserializing into the client's model classes costs more than the scheduling
    itself at scale, and the core logic wants the API's JSON shape anyway.
    """

    def call(**kwargs: Any) -> Any:
        if kwargs.get("watch"):
            return list_fn(**fixed, **kwargs)
        response = list_fn(**fixed, **kwargs, _preload_content=False)
        return json.loads(response.data)

    return call


def key_of(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class Informer:
    """Informer keeps (namespace, name) -> raw object in sync for one resource.

    `list_raw` comes from `raw_lister(...)`: called plainly it returns the list as
    a dict; called by kubernetes.watch with watch=True it returns the stream.
    """

    def __init__(self, name: str, list_raw: Callable[..., Obj], *, stop: threading.Event) -> None:
        self.name = name
        self._list_raw = list_raw
        self._stop = stop
        self._lock = threading.RLock()
        self._store: dict[tuple[str, str], Obj] = {}
        self._handlers: list[Handler] = []
        self._synced = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"informer-{name}", daemon=True)

    # --- reading ---

    def get(self, namespace: str, name: str) -> Obj | None:
        with self._lock:
            return self._store.get((namespace, name))

    def list(self, predicate: Callable[[Obj], bool] | None = None) -> list[Obj]:
        with self._lock:
            items = list(self._store.values())
        return items if predicate is None else [o for o in items if predicate(o)]

    def add_handler(self, handler: Handler) -> None:
        self._handlers.append(handler)

    # --- lifecycle ---

    def start(self) -> None:
        self._thread.start()

    def wait_synced(self, timeout: float) -> bool:
        return self._synced.wait(timeout)

    @property
    def synced(self) -> bool:
        return self._synced.is_set()

    def _run(self) -> None:
        resource_version: str | None = None
        while not self._stop.is_set():
            try:
                if resource_version is None:
                    resource_version = self._relist()
                resource_version = self._watch(resource_version)
            except kubernetes.client.ApiException as err:
                if err.status == 410:
                    log.info("informer %s: resourceVersion expired, relisting", self.name)
                else:
                    log.warning("informer %s: API error %s, relisting", self.name, err.status)
                    self._stop.wait(ERROR_BACKOFF_SECONDS)
                resource_version = None
            except Exception:  # noqa: BLE001 - a dead informer would silently freeze scheduling
                log.exception("informer %s: unexpected error, relisting", self.name)
                self._stop.wait(ERROR_BACKOFF_SECONDS)
                resource_version = None

    def _relist(self) -> str:
        listing = self._list_raw()
        fresh = {key_of(o): o for o in listing.get("items") or []}
        kind = (listing.get("kind") or "").removesuffix("List")
        api_version = listing.get("apiVersion")
        for obj in fresh.values():
            obj.setdefault("kind", kind)
            obj.setdefault("apiVersion", api_version)
        with self._lock:
            old = self._store
            self._store = fresh
        for key, obj in fresh.items():
            before = old.get(key)
            if before is None:
                self._emit("ADDED", obj, None)
            elif (before.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get("resourceVersion"):
                self._emit("MODIFIED", obj, before)
        for key, obj in old.items():
            if key not in fresh:
                self._emit("DELETED", obj, None)
        self._synced.set()
        return str((listing.get("metadata") or {}).get("resourceVersion") or "")

    def _watch(self, resource_version: str) -> str:
        watcher = watch.Watch()  # type: ignore[no-untyped-call]
        stream: Iterator[dict[str, Any]] = watcher.stream(  # type: ignore[no-untyped-call]
            self._list_raw,
            resource_version=resource_version,
            timeout_seconds=WATCH_SECONDS,
            allow_watch_bookmarks=True,
        )
        try:
            for event in stream:
                if self._stop.is_set():
                    break
                kind = event["type"]
                obj = event["raw_object"]
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise kubernetes.client.ApiException(status=410, reason="Gone")
                    raise kubernetes.client.ApiException(status=obj.get("code") or 500, reason=obj.get("message"))
                resource_version = (obj.get("metadata") or {}).get("resourceVersion") or resource_version
                if kind == "BOOKMARK":
                    continue
                key = key_of(obj)
                with self._lock:
                    before = self._store.get(key)
                    if kind == "DELETED":
                        self._store.pop(key, None)
                    else:
                        self._store[key] = obj
                self._emit(kind, obj, before)
        finally:
            watcher.stop()  # type: ignore[no-untyped-call]
        return resource_version

    def _emit(self, kind: str, obj: Obj, old: Obj | None) -> None:
        for handler in self._handlers:
            try:
                handler(kind, obj, old)
            except Exception:  # noqa: BLE001 - one bad handler must not stop the cache
                log.exception("informer %s: handler failed on %s %s", self.name, kind, key_of(obj))


class LabelsByName(Mapping[str, Mapping[str, Any]]):
    """LabelsByName is a cluster-scoped informer's objects as name -> labels, read from its cache when asked.

    What pod affinity's namespaceSelector reads of the namespaces
    (core/inter_pod_affinity.py): a pure function takes a mapping, and this one
    copies nothing until a name is looked up or the names are walked.

    Example: with namespace ``ci`` labelled ``team: a`` in the cache,
    ``LabelsByName(namespaces)["ci"] == {"team": "a"}``; an unknown name is a KeyError.
    """

    def __init__(self, informer: Informer) -> None:
        self._informer = informer

    def __getitem__(self, name: str) -> Mapping[str, Any]:
        found = self._informer.get("", name)
        if found is None:
            raise KeyError(name)
        labels = (found.get("metadata") or {}).get("labels")
        return labels if isinstance(labels, Mapping) else {}

    def __iter__(self) -> Iterator[str]:
        return iter([key_of(o)[1] for o in self._informer.list()])

    def __len__(self) -> int:
        return len(self._informer.list())
