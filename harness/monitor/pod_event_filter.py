"""pod_event_filter: which of the cluster's pod watch events a scenario's contract monitor skips without decoding them.

The monitor watches every pod of the cluster, because a pod of any namespace
counts against a pool node's room once it is bound there. It keeps the pods
of the scenario's namespaces and the pods bound to its pool's nodes; every
other event it decoded (7 KB of JSON for a Tekton pod), queued and dropped.
With eight scenarios at once, most pod events are another scenario's on
another pool, and that was most of a pytest worker's monitor CPU.

The API server writes each watch event as compact JSON on a line of its own,
so an event the monitor keeps says so in its text: `"namespace":"<ns>"` for
a pod of the scenario's namespaces, `"nodeName":"<node>"` for a pod bound to
a pool node. An ADDED, MODIFIED or DELETED event with neither is skipped,
and only its resourceVersion is read, so the watch resumes after it. Every
other line (a BOOKMARK, an ERROR, text not in that form) is decoded as before:
the filter only leaves out what the monitor would have dropped.

Until the pool's nodes are known nothing is skipped. A node that joins the
pool later may already hold pods whose events were skipped: `add_pool_nodes`
says so, and the monitor lists pods afresh.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import kubernetes

#: The event types a line may be skipped for; it starts with one of these exactly as the API server writes it.
_SKIPPABLE_STARTS = tuple(f'{{"type":"{kind}","object":{{' for kind in ("ADDED", "MODIFIED", "DELETED"))
#: An object's first resourceVersion is its metadata's: metadata comes before spec and status, and a
#: resourceVersion inside a label or annotation value is escaped (\"), so it never matches here.
_RESOURCE_VERSION = re.compile(r'"resourceVersion":"([^"\\]+)"')
_COMPACT_NAMESPACE = '"namespace":"'


class PodEventFilter:
    """PodEventFilter says which pod watch lines a scenario's monitor may skip: neither its namespaces' nor on its pool."""

    def __init__(self, namespaces: Iterable[str]) -> None:
        self._namespace_marks = tuple(f'"namespace":"{namespace}"' for namespace in namespaces)
        #: The pool's nodes and their marks, swapped whole: the evaluator alone sets it, the watch thread reads it.
        #: None until the pool's nodes are first known: nothing is skipped.
        self._pool: tuple[frozenset[str], tuple[str, ...]] | None = None
        self.skipped = 0

    @property
    def knows_pool(self) -> bool:
        """knows_pool is True once the pool's nodes were given: from then on, events may be skipped."""
        return self._pool is not None

    def add_pool_nodes(self, names: Iterable[str]) -> bool:
        """add_pool_nodes() makes pods bound to these nodes kept too; True when a node is new after the first call (list pods again)."""
        known = self._pool[0] if self._pool is not None else None
        pool = frozenset(names) | (known or frozenset())
        if pool == known:
            return False
        self._pool = (pool, tuple(f'"nodeName":"{node}"' for node in sorted(pool)))
        return known is not None

    def skipped_version(self, line: str) -> str | None:
        """skipped_version() is the resourceVersion of a line the monitor may skip, None for a line to decode."""
        pool = self._pool
        if pool is None or not line.startswith(_SKIPPABLE_STARTS) or _COMPACT_NAMESPACE not in line:
            return None
        if any(mark in line for mark in self._namespace_marks) or any(mark in line for mark in pool[1]):
            return None
        found = _RESOURCE_VERSION.search(line)
        if found is None:
            return None
        self.skipped += 1
        return found.group(1)


#: The type of the event a FilteredWatch hands over for a skipped line: its object holds only the resourceVersion.
SKIPPED = "SKIPPED"


class FilteredWatch(kubernetes.watch.Watch):
    """FilteredWatch is the client's Watch, but a line the filter skips is handed over as a SKIPPED event, undecoded."""

    def __init__(self, pod_filter: PodEventFilter) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._filter = pod_filter

    def unmarshal_event(self, data: str, return_type: Any) -> Any:
        version = self._filter.skipped_version(data) if data else None
        if version is not None:
            return {"type": SKIPPED, "raw_object": {"metadata": {"resourceVersion": version}}}
        return super().unmarshal_event(data, return_type)  # type: ignore[no-untyped-call]
