"""PendingSiblings: a PipelineRun's pods waiting in the active queue, to place with their group's claim.

When a group's first pod makes the claim, the other pods of that group often wait
in the queue already (a fan-out's tasks start together). Placed in the same attempt
on the claim's node, they are holders in the claim's own write, so each needs only
its bind: a join write each fewer, and no wait behind the claim for a turn of its
own. A pod in backoff or parked unschedulable is left alone: it waits for a reason.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from reference_scheduler.runtime.cluster_view import PIPELINE_RUN_LABEL, PIPELINE_TASK_LABEL
from reference_scheduler.runtime.informer import Informer
from reference_scheduler.runtime.queue import PodKey, SchedulingQueue

Obj = dict[str, Any]


def _key(pod: Obj) -> PodKey:
    meta = pod.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def _labels(pod: Obj) -> dict[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


class PendingSiblings:
    """PendingSiblings indexes this scheduler's pending pods by PipelineRun, and takes them from the queue."""

    def __init__(
        self,
        *,
        queue: SchedulingQueue,
        pods: Informer,
        is_ours_pending: Callable[[Obj], bool],
        attempt_started: dict[PodKey, float],
    ) -> None:
        self._queue = queue
        self._pods = pods
        self._is_ours_pending = is_ours_pending
        self._attempt_started = attempt_started  # the scheduler's: a taken pod's attempt starts now
        self._lock = threading.Lock()
        self._by_run: dict[tuple[str, str], set[PodKey]] = {}

    def on_pod(self, kind: str, pod: Obj, old: Obj | None) -> None:
        """on_pod() keeps the index: a pending pod of ours with a PipelineRun label is in it, nothing else."""
        key, run = _key(pod), _labels(pod).get(PIPELINE_RUN_LABEL)
        if not run:
            return
        index = (key[0], run)
        with self._lock:
            if kind != "DELETED" and self._is_ours_pending(pod):
                self._by_run.setdefault(index, set()).add(key)
                return
            keys = self._by_run.get(index)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_run[index]

    def take(self, pod: Obj, tasks: frozenset[str]) -> list[Obj]:
        """take(pod, tasks) pops the run's other pending pods of those pipeline tasks that wait in active."""
        own = _key(pod)
        run = _labels(pod).get(PIPELINE_RUN_LABEL)
        if not run:
            return []
        with self._lock:
            candidates = sorted(self._by_run.get((own[0], run), ()))
        taken = []
        for key in candidates:
            sibling = self._pods.get(*key)
            if key == own or sibling is None or _labels(sibling).get(PIPELINE_TASK_LABEL) not in tasks or not self._is_ours_pending(sibling):
                continue
            if self._queue.take(key):
                self._attempt_started[key] = time.monotonic()
                taken.append(sibling)
        return taken

    def give_back(self, pod: Obj) -> None:
        """give_back() returns a taken pod to the queue, untried."""
        key = _key(pod)
        self._attempt_started.pop(key, None)
        self._queue.give_back(key)
