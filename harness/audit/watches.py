"""watches: one kind's list and watch for the auditor, slimmed, started over on 410 Gone, retried with backoff on errors.

Each WatchSource runs in a thread of its own and puts WatchEvents on the
auditor's queue: SYNC with every item after a (re)list, then ADDED, MODIFIED
and DELETED. A watch resumes from its last resourceVersion when the server
ends it (its timeout); when that version has expired (410 Gone) it lists
again; when the connection fails (an API server restart) it is retried with
exponential backoff (tenacity), for at most `audit_api_unreachable` seconds
without reaching the server, after which it puts a FATAL event and ends.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import kubernetes
from tenacity import RetryCallState, Retrying, retry_if_exception

from harness.audit.metrics import RESTART_ERROR, RESTART_EXPIRED, AuditMetrics
from harness.audit.slim import slim_node, slim_pipeline_run, slim_pod
from harness.contract import record as contract
from harness.kube import Kube, as_plain_watch, json_object

log = logging.getLogger("rescon.audit")

Obj = dict[str, Any]

TEKTON = ("tekton.dev", "v1")
#: The server-side timeout of one watch request; the watch then resumes from its last resourceVersion.
WATCH_SECONDS = 60
#: The client's read timeout on a watch: longer than WATCH_SECONDS, so only a dead connection trips it.
READ_TIMEOUT_SECONDS = WATCH_SECONDS + 30
#: How often a kind the server does not serve (no ReservationRecord CRD) is asked for again.
NOT_SERVED_RECHECK_SECONDS = 30.0
#: The backoff between failed attempts: 0.5 s doubling up to 30 s.
BACKOFF_FIRST_SECONDS, BACKOFF_MAX_SECONDS = 0.5, 30.0

KINDS = ("pods", "nodes", "pipelineruns", "records")


@dataclass
class WatchEvent:
    """WatchEvent is one change of one kind (SYNC carries every item of a fresh list; FATAL the reason the watch gave up)."""

    kind: str
    type: str  # SYNC, ADDED, MODIFIED, DELETED, FATAL
    obj: Obj | None = None
    items: list[Obj] = field(default_factory=list)
    error: str = ""
    #: False on the SYNC of a kind the server does not serve (404: no ReservationRecord CRD, no Tekton).
    served: bool = True


def backoff_seconds(failures: int) -> float:
    """backoff_seconds(1) == 0.5, backoff_seconds(2) == 1.0, ... at most BACKOFF_MAX_SECONDS."""
    return float(min(BACKOFF_MAX_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** max(0, failures - 1)))


class Expired(Exception):
    """Expired is a watch whose resourceVersion is too old (410 Gone): list again."""


def _slimmer(kind: str) -> Callable[[Obj], Obj]:
    if kind == "pods":
        return slim_pod
    if kind == "nodes":
        return slim_node
    if kind == "pipelineruns":
        return slim_pipeline_run
    return lambda obj: obj  # records are parsed into contract.Record by the auditor


def _transient(err: BaseException) -> bool:
    """_transient() is True for what a retry can cure: a dropped connection, a timeout, an API server answering 5xx or 429.

    401 and 403 count too: an API server that has just restarted refuses
    every request until its RBAC caches are filled (seen on kind: "clusterrole
    ... not found" for a few seconds), and a rotated token is refused until
    the new one is read. A lasting refusal ends in FATAL after the limit.
    """
    if isinstance(err, kubernetes.client.ApiException):
        return err.status is None or err.status >= 500 or err.status in (401, 403, 429)
    return not isinstance(err, (Expired, KeyboardInterrupt))


def describe_error(err: BaseException) -> str:
    """describe_error() is one line: '403 Forbidden: pods is forbidden: ...' for an API answer, the exception's text otherwise."""
    if isinstance(err, kubernetes.client.ApiException):
        try:
            message = str(json.loads(err.body or "{}").get("message") or "")
        except (ValueError, AttributeError):
            message = ""
        return f"{err.status} {err.reason}" + (f": {message[:300]}" if message else "")
    # urllib3's MaxRetryError names the whole URL; its reason (refused, ended prematurely) is what helps.
    cause = getattr(err, "reason", None)
    shown = cause if isinstance(cause, BaseException) else err
    return f"{shown.__class__.__name__}: {str(shown)[:300]}"


class WatchSource:
    """WatchSource lists and watches one kind of object in the auditor's scope (all namespaces, or one)."""

    def __init__(
        self,
        kind: str,
        kube: Kube,
        events: queue.Queue[WatchEvent],
        *,
        namespace: str | None,
        metrics: AuditMetrics,
        stop: threading.Event,
        unreachable_limit: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kind = kind
        self.kube = kube
        self.events = events
        self.namespace = namespace
        self.metrics = metrics
        self.stop = stop
        self.unreachable_limit = unreachable_limit
        self._clock = clock
        self._slim = _slimmer(kind)
        self.resource_version = ""
        self.last_contact = clock()
        #: Failed attempts since the server last answered (the backoff's exponent).
        self.failures = 0
        self.thread = threading.Thread(target=self.run, name=f"audit-{kind}", daemon=True)

    # --- the API calls of this kind ---

    def _call(self) -> tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        """_call() is the list function, its positional arguments and keywords, for both list and watch."""
        core, custom = self.kube.core, self.kube.custom
        if self.kind == "pods":  # every namespace: room on a node counts every pod on it
            return core.list_pod_for_all_namespaces, (), {}
        if self.kind == "nodes":
            return core.list_node, (), {}
        api = (contract.GROUP, contract.VERSION, contract.PLURAL) if self.kind == "records" else (*TEKTON, "pipelineruns")
        if self.namespace:
            return custom.list_namespaced_custom_object, (api[0], api[1], self.namespace, api[2]), {}
        return custom.list_cluster_custom_object, api, {}

    def list_items(self) -> tuple[list[Obj], str]:
        """list_items() is every object of the kind, slimmed, and the list's resourceVersion."""
        func, args, kwargs = self._call()
        if self.kind in ("pods", "nodes"):
            data: Obj = json.loads(func(*args, _preload_content=False, **kwargs).data)
        else:
            data = json_object(func(*args, **kwargs))
        items = [self._slim(item) for item in data.get("items") or []]
        return items, str((data.get("metadata") or {}).get("resourceVersion") or "")

    def _stream(self) -> Iterator[dict[str, Any]]:
        func, args, kwargs = self._call()
        watch: Any = kubernetes.watch.Watch()  # type: ignore[no-untyped-call]
        return iter(watch.stream(
            as_plain_watch(func), *args, resource_version=self.resource_version, timeout_seconds=WATCH_SECONDS,
            allow_watch_bookmarks=True, _request_timeout=READ_TIMEOUT_SECONDS, **kwargs,
        ))

    # --- the loop ---

    def run(self) -> None:
        """run() keeps the kind watched until stop is set; it gives up (FATAL) only after unreachable_limit without the server."""
        try:
            for attempt in Retrying(
                retry=retry_if_exception(_transient),
                wait=self._backoff,
                stop=self._gave_up,
                sleep=self._sleep,
                before_sleep=self._count_error,
                reraise=True,
            ):
                with attempt:
                    self._session()
        except Exception as err:  # noqa: BLE001 - out of retries, or an error no retry cures: the auditor exits and says why
            if self.stop.is_set():
                return
            why = (
                f"no answer for {self.unreachable_limit:g}s (audit_api_unreachable)" if _transient(err)
                else "an error no retry cures"
            )
            self.events.put(WatchEvent(self.kind, "FATAL", error=f"{why}: {describe_error(err)}"))

    def _sleep(self, seconds: float) -> None:
        """_sleep() waits out the backoff, or less if the auditor is told to stop."""
        self.stop.wait(seconds)

    def _backoff(self, state: RetryCallState) -> float:
        """_backoff() doubles with each failure since the server last answered: a watch that ran for hours starts again at 0.5 s."""
        return backoff_seconds(self.failures)

    def _gave_up(self, state: RetryCallState) -> bool:
        return self.stop.is_set() or self._clock() - self.last_contact > self.unreachable_limit

    def _count_error(self, state: RetryCallState) -> None:
        self.failures += 1
        self.metrics.restarts.labels(kind=self.kind, reason=RESTART_ERROR).inc()
        outcome = state.outcome.exception() if state.outcome is not None else None
        if outcome is not None:
            log.warning("the watch of %s failed (%s); retrying in %gs", self.kind, describe_error(outcome), backoff_seconds(self.failures))

    def _contact(self) -> None:
        self.last_contact = self._clock()
        self.failures = 0

    def _session(self) -> None:
        """_session() lists (when it has no resourceVersion) and watches until stop; it raises on a failed call."""
        while not self.stop.is_set():
            if not self.resource_version:
                if not self._list_or_wait():
                    continue
            try:
                self._watch()
            except Expired:
                self.metrics.restarts.labels(kind=self.kind, reason=RESTART_EXPIRED).inc()
                self.resource_version = ""

    def _list_or_wait(self) -> bool:
        """_list_or_wait() lists and sends SYNC; for a kind not served (records without their CRD) it sends an empty SYNC and waits."""
        try:
            items, self.resource_version = self.list_items()
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
            self._contact()
            self.events.put(WatchEvent(self.kind, "SYNC", items=[], served=False))
            self.stop.wait(NOT_SERVED_RECHECK_SECONDS)
            return False
        self._contact()
        self.events.put(WatchEvent(self.kind, "SYNC", items=items))
        return True

    def _watch(self) -> None:
        try:
            for event in self._stream():
                if self.stop.is_set():
                    return
                self._contact()
                raw = event.get("raw_object") or {}
                kind = event.get("type")
                if kind == "ERROR":
                    if raw.get("code") == 410:
                        raise Expired()
                    raise kubernetes.client.ApiException(status=raw.get("code"), reason=str(raw.get("message")))
                self.resource_version = str((raw.get("metadata") or {}).get("resourceVersion") or self.resource_version)
                if kind in ("ADDED", "MODIFIED", "DELETED"):
                    self.events.put(WatchEvent(self.kind, str(kind), obj=self._slim(raw)))
        except kubernetes.client.ApiException as err:
            if err.status == 410:
                raise Expired() from err
            raise
        self._contact()
