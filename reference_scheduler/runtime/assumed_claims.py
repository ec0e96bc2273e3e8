"""AssumedClaims: the claims this scheduler just wrote, read in place of the informer's copy until its watch shows the write.

The scheduler decides from its caches, and its own writes reach them only
through the watch. A selected-node annotation it has just written (V2) must
count at once: a group claim decided in between from the stale copy would
open on a node the claim is already being provisioned away from, stranding
the group's later task (V3). kube-scheduler keeps the same overlay for claims
(the volume binder's assume cache).

    claims = AssumedClaims(informer.get)
    claims.assume(written)                 # the PATCH's answer, resourceVersion 42
    claims.get("ns", "cache")              # the written copy while the informer holds 41, its own from 42 on
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Mapping

Obj = dict[str, Any]

#: Assumed copies kept at most; the oldest go first (each normally goes as soon as the informer catches up).
MAX_ASSUMED = 10_000


def _key(claim: Mapping[str, Any]) -> tuple[str, str]:
    meta = claim.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _version(claim: Mapping[str, Any]) -> str:
    return str((claim.get("metadata") or {}).get("resourceVersion") or "")


def at_least_as_new(cached: str, assumed: str) -> bool:
    """at_least_as_new(cached, assumed): the informer's resourceVersion has reached the assumed one (etcd revisions, as numbers).

    Versions that are not numbers cannot be ordered: only equal ones count.

    Example: ``at_least_as_new("42", "42")`` and ``("57", "42")`` are True; ``("41", "42")`` is False.
    """
    if cached == assumed:
        return True
    return cached.isdigit() and assumed.isdigit() and int(cached) > int(assumed)


class AssumedClaims:
    """AssumedClaims is the informer's get(), overlaid with the copies this scheduler wrote and has not seen come back."""

    def __init__(self, cached: Callable[[str, str], Obj | None]) -> None:
        self._cached = cached
        self._assumed: dict[tuple[str, str], Obj] = {}
        self._lock = threading.Lock()

    def assume(self, written: Mapping[str, Any] | None) -> None:
        """assume() keeps a claim as the API server answered a write of it (None, or one without a version: nothing)."""
        if not written or not _version(written):
            return
        with self._lock:
            if len(self._assumed) >= MAX_ASSUMED:
                self._assumed.pop(next(iter(self._assumed)))
            self._assumed[_key(written)] = dict(written)

    def get(self, namespace: str, name: str) -> Obj | None:
        """get() is the newer of the informer's copy and the assumed one; a claim the informer no longer holds is gone."""
        cached = self._cached(namespace, name)
        with self._lock:
            assumed = self._assumed.get((namespace, name))
            if assumed is None:
                return cached
            if cached is None or at_least_as_new(_version(cached), _version(assumed)):
                del self._assumed[(namespace, name)]
                return cached
            return assumed

    def __len__(self) -> int:
        with self._lock:
            return len(self._assumed)
