"""Lanes: writes run off the scheduling thread, in order per key, and concurrently across keys.

A PipelineRun's record takes its writes one after another: create, then the first
pod's claim, then each join. Run on a thread of their own they keep the scheduling
thread from waiting for the API server (kube-scheduler's loop never waits for a write
either), but only if one record's writes still land in the order they were decided:
a join sent before the claim it joins would find the group Pending. So each key (a
record) gets a lane: its tasks run one at a time, in submission order; different
records' lanes run at once, on a fixed number of threads.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Callable, Hashable

from reference_scheduler.runtime.background import Background

log = logging.getLogger("tkn-scheduler.lanes")


class Lanes:
    """Lanes(name, threads) runs `submit(key, task)`ed callables: in order per key, `threads` keys at a time."""

    def __init__(self, name: str, *, threads: int) -> None:
        self._pool = Background(name, threads=threads)
        self._lock = threading.Lock()
        self._waiting: dict[Hashable, deque[Callable[[], None]]] = {}

    def submit(self, key: Hashable, task: Callable[[], None]) -> None:
        """submit() queues the task behind the key's earlier ones; a key with none starts on a free thread."""
        with self._lock:
            lane = self._waiting.get(key)
            if lane is not None:  # a thread is draining this key: it runs the task after the others
                lane.append(task)
                return
            self._waiting[key] = deque([task])
        self._pool.submit(lambda: self._drain(key))

    def wait_idle(self, timeout: float) -> bool:
        """wait_idle() is True once every submitted task has finished (False after `timeout` seconds)."""
        return self._pool.wait_idle(timeout)

    def _drain(self, key: Hashable) -> None:
        while True:
            with self._lock:
                lane = self._waiting[key]
                if not lane:
                    del self._waiting[key]
                    return
                task = lane.popleft()
            try:
                task()
            except Exception:  # noqa: BLE001 - one failed write must never stop the lane
                log.exception("a write for %s failed", key)
