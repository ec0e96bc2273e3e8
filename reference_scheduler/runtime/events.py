"""EventRecorder: what users see in `kubectl describe pod`: events and the PodScheduled condition.

Events are for humans (the conformance suite never asserts on them). They are
de-duplicated for a while per (pod, reason, message), as kube-scheduler's
event broadcaster does, so a pod that waits for room does not flood the API.
Failures to write an event are logged and otherwise ignored: an event is
never worth failing a scheduling attempt.

The writes happen on a thread of their own, in order, as kube-scheduler's
event broadcaster does, so the scheduling loop never waits for an event
(it was one API round trip per bound pod, about a fifth of the loop's time).
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable

import kubernetes
from kubernetes.client import ApiClient

from reference_scheduler.runtime.background import Background
from reference_scheduler.runtime.kube_api import KubeApi

log = logging.getLogger("tkn-scheduler.events")

Obj = dict[str, Any]

#: The same event for the same pod is written at most once per this many seconds.
DEDUPE_SECONDS = 30.0
#: Writes waiting for the event thread; past this, new events are dropped (and logged at debug).
MAX_PENDING_WRITES = 10_000


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventRecorder:
    """EventRecorder writes core/v1 Events and the pods' PodScheduled condition."""

    def __init__(self, api: ApiClient, *, component: str) -> None:
        self._core = KubeApi(api)
        self._component = component
        self._recent: dict[tuple[str, str, str], float] = {}
        self._lock = threading.Lock()
        self._writer = Background("events", threads=1, max_pending=MAX_PENDING_WRITES)

    def _submit(self, write: Callable[[], None]) -> None:
        if not self._writer.submit(write):
            log.debug("event queue full: dropping an event")

    def scheduled(self, pod: Obj, node: str, scheduler_name: str) -> None:
        meta = pod["metadata"]
        self._event(pod, "Normal", "Scheduled", f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}")

    def unschedulable(self, pod: Obj, message: str) -> None:
        """unschedulable() sets PodScheduled=False (reason Unschedulable) and emits FailedScheduling."""
        self._submit(lambda: self._set_unschedulable_condition(pod, message))
        self._event(pod, "Warning", "FailedScheduling", message)

    def pod_warning(self, pod: Obj, reason: str, message: str) -> None:
        self._event(pod, "Warning", reason, message)

    def _fresh(self, key: tuple[str, str, str]) -> bool:
        now = time.monotonic()
        with self._lock:
            last = self._recent.get(key)
            if last is not None and now - last < DEDUPE_SECONDS:
                return False
            if len(self._recent) > 10_000:
                self._recent.clear()
            self._recent[key] = now
            return True

    def _event(self, pod: Obj, kind: str, reason: str, message: str) -> None:
        meta = pod["metadata"]
        if not self._fresh((meta.get("uid") or "", reason, message)):
            return
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
            "involvedObject": {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta.get("uid"),
            },
            "type": kind,
            "reason": reason,
            "message": message[:1024],
            "source": {"component": self._component},
            "reportingComponent": self._component,
            "reportingInstance": self._component,
            "firstTimestamp": _now(),
            "lastTimestamp": _now(),
            "count": 1,
        }
        self._submit(lambda: self._write_event(body, reason, message))

    def _write_event(self, body: Obj, reason: str, message: str) -> None:
        meta = body["involvedObject"]
        try:
            response = self._core.create_namespaced_event(
                meta["namespace"], body, _preload_content=False
            )
            _release(response)
        except kubernetes.client.ApiException as err:
            log.debug("cannot write event %s for %s/%s: %s", reason, meta["namespace"], meta["name"], err.reason)
        log.info("%s %s/%s: %s", reason, meta["namespace"], meta["name"], message)

    def _set_unschedulable_condition(self, pod: Obj, message: str) -> None:
        meta = pod["metadata"]
        conditions = (pod.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if current and current.get("status") == "False" and current.get("message") == message:
            return
        patch = {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message[:1024],
                        "lastTransitionTime": _now().split(".")[0] + "Z",
                    }
                ]
            }
        }
        try:
            _release(self._core.patch_namespaced_pod_status(meta["name"], meta["namespace"], patch, _preload_content=False))
        except kubernetes.client.ApiException as err:
            log.debug("cannot set PodScheduled on %s/%s: %s", meta["namespace"], meta["name"], err.reason)


def _release(response: Any) -> None:
    """Read a raw response and give its connection back to the pool (see cycle.release_response)."""
    getattr(response, "data", None)
    release = getattr(response, "release_conn", None)
    if release is not None:
        release()
