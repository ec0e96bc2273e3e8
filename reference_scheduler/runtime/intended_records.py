"""IntendedRecords: the records as the scheduling thread decided them, while their writes wait in a lane.

With its record writes off the scheduling thread (runtime/lanes.py), the next pod is
decided before the last one's create or claim has reached the API server. It must
see them anyway: a second pod of the run must find the record (not create another),
a join must find the claim it joins, and another run's pod must find the group's peak
held on the node (or two first pods could over-commit it). So each decision is kept
here, as the whole record it leads to, until every write decided on top of it has run.

An *epoch* names one unbroken chain of decisions for a record. A write that fails
abandons its record's chain: the writes queued behind it were decided on a state that
will never exist, so they must not run (they see their epoch is no longer current) and
their pods are tried again from what the API holds.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
Key = tuple[str, str]


@dataclass
class _Chain:
    record: Obj
    epoch: int
    pending: int  # writes decided in this chain that have not finished yet


def key_of(record: Obj) -> Key:
    meta = record.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class IntendedRecords:
    """IntendedRecords holds, per record, the state its queued writes lead to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chains: dict[Key, _Chain] = {}
        self._epochs = itertools.count(1)

    def intend(self, record: Obj) -> int:
        """intend(record) makes `record` the state its writes lead to, for one more queued write; returns its epoch."""
        key = key_of(record)
        # No resourceVersion: it is no version the API holds, and caches keyed by version
        # (ClusterView's parsed reservations) must not take it for the copy it was decided on.
        meta = {k: v for k, v in (record.get("metadata") or {}).items() if k != "resourceVersion"}
        record = {**record, "metadata": meta}
        with self._lock:
            chain = self._chains.get(key)
            if chain is None:
                chain = self._chains[key] = _Chain(record, next(self._epochs), 0)
            chain.record = record
            chain.pending += 1
            return chain.epoch

    def get(self, key: Key) -> Obj | None:
        with self._lock:
            chain = self._chains.get(key)
            return chain.record if chain is not None else None

    def items(self) -> list[tuple[Key, Obj]]:
        with self._lock:
            return [(key, chain.record) for key, chain in self._chains.items()]

    def current(self, key: Key, epoch: int) -> bool:
        """current(key, epoch): no write of this chain has failed, so a write decided in it may run."""
        with self._lock:
            chain = self._chains.get(key)
            return chain is not None and chain.epoch == epoch

    def settle(self, key: Key, epoch: int) -> None:
        """settle() ends one write of the chain; after the last, the API's copy (or our response) is the truth again."""
        with self._lock:
            chain = self._chains.get(key)
            if chain is None or chain.epoch != epoch:
                return
            chain.pending -= 1
            if chain.pending <= 0:
                del self._chains[key]

    def abandon(self, key: Key) -> None:
        """abandon() drops the record's chain: the writes still queued in it will not run."""
        with self._lock:
            self._chains.pop(key, None)
