"""scenario_view: the scenario's own pods and records as the contract monitor's watches last showed them, for other threads.

The scenario's timeline (harness.suite.session) draws pods and records every
half second. It reads them here instead of listing them from the API server:
the monitor already watches both, and two LISTs per namespace every half
second, in every scenario at once, were a share of the API server's work in
`make e2e` that no check needed.

The monitor's evaluator thread applies each event as it judges it; a reader
on another thread gets whole states (`snapshot()`), never a state half applied.
Records are kept as the JSON they came as, those the contract refuses too: the
picture shows what is there, the monitor judges it.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Hashable, Iterable

from harness.kube import namespaced

Obj = dict[str, Any]


class ScenarioView:
    """ScenarioView is the last seen JSON of the pods and records in a scenario's namespaces."""

    def __init__(self, namespaces: Iterable[str]) -> None:
        self.namespaces = frozenset(namespaces)
        #: Pods by uid, records by (namespace, name).
        self._stores: dict[str, dict[Hashable, Obj]] = {"pods": {}, "records": {}}
        self._lock = threading.Lock()

    def apply(self, kind: str, event_type: str, *, obj: Obj | None = None, items: Iterable[Obj] = ()) -> None:
        """apply() takes one watch event of pods or records (SYNC: a fresh list of them); other kinds are not kept."""
        store = self._stores.get(kind)
        if store is None:
            return
        key: Callable[[Obj], Hashable] = _uid if kind == "pods" else namespaced
        with self._lock:
            if event_type == "SYNC":
                store.clear()
                for item in items:
                    if _namespace(item) in self.namespaces:
                        store[key(item)] = item
            elif obj is None or _namespace(obj) not in self.namespaces:
                return
            elif event_type == "DELETED":
                store.pop(key(obj), None)
            else:
                store[key(obj)] = obj

    def snapshot(self) -> tuple[list[Obj], list[Obj]]:
        """snapshot() is (pods, records) as of the last event applied."""
        with self._lock:
            return list(self._stores["pods"].values()), list(self._stores["records"].values())


def _namespace(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")
