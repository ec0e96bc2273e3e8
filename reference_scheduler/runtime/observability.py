"""Observability: the scheduler's Prometheus metrics, its /metrics and /healthz server, and log format.

The metrics live on a private ``CollectorRegistry`` rather than the process
default, so two schedulers in one test process do not share counters, and
/metrics shows only the scheduler's series (no accidental Python process
metrics that a dashboard would start to depend on).

Label values are closed sets, spelled as the StrEnums of this module (and
``core.release.ReleaseReason`` for releases). A value outside the set is
logged once and dropped: it never becomes a new time series nobody graphs, and
a metrics call never raises into the scheduling loop that made it.

Worked example: an attempt that binds in 40 ms is ``obs.attempt("bound",
0.04)``; /metrics then shows
``tkn_scheduler_scheduling_attempts_total{result="bound"} 1.0`` and the 0.04 s
observation in the ``le="0.05"`` bucket of
``tkn_scheduler_scheduling_duration_seconds``.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from datetime import datetime, timezone
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder

from reference_scheduler.core.release import ReleaseReason

log = logging.getLogger("tkn-scheduler.observability")

PREFIX = "tkn_scheduler"


class AttemptResult(StrEnum):
    """AttemptResult is how one scheduling attempt ended.

    Example: ``AttemptResult("unschedulable") is AttemptResult.UNSCHEDULABLE``.
    """

    BOUND = "bound"
    UNSCHEDULABLE = "unschedulable"
    RETRY = "retry"
    ERROR = "error"
    GONE = "gone"
    """GONE: the pod was deleted, or bound by someone else, before this attempt could bind it."""


class PendingQueue(StrEnum):
    """PendingQueue names the scheduling queue's three sub-queues, as ``SchedulingQueue.lengths()`` keys them."""

    ACTIVE = "active"
    BACKOFF = "backoff"
    UNSCHEDULABLE = "unschedulable"


DURATION_BUCKETS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
"""DURATION_BUCKETS spans 1 ms (a cached decision) to 10 s (a cycle stuck behind API retries)."""


RELEASING_REASONS: tuple[ReleaseReason, ...] = (
    ReleaseReason.TASKS_DONE,
    ReleaseReason.PIPELINE_RUN_DONE,
    ReleaseReason.PIPELINE_RUN_CANCELLED,
    ReleaseReason.PIPELINE_RUN_STOPPED,
    ReleaseReason.PIPELINE_RUN_TIMED_OUT,
    ReleaseReason.PIPELINE_RUN_DELETED,
)
"""RELEASING_REASONS are the ReleaseReasons that end a reservation (the others only say why it is held)."""

class ApiClientName(StrEnum):
    """ApiClientName names the scheduler's two API clients, each with its own token bucket (as kube-scheduler's)."""

    MAIN = "main"
    """MAIN: informers, records, binds, the Lease."""
    EVENTS = "events"
    """EVENTS: Events and the PodScheduled condition, written on their own thread."""


API_VERBS: tuple[str, ...] = ("GET", "POST", "PUT", "PATCH", "DELETE")
"""API_VERBS are the HTTP methods counted; every one but GET is a write."""

_ATTEMPT_RESULTS = frozenset(r.value for r in AttemptResult)
_RELEASING = frozenset(r.value for r in RELEASING_REASONS)
_QUEUES = frozenset(q.value for q in PendingQueue)
_CLIENTS = frozenset(c.value for c in ApiClientName)
_VERBS = frozenset(API_VERBS)


class Observability:
    """Observability holds the metrics; each method records one kind of fact in one call.

    All metrics exist (at zero) from construction, every label value included,
    so a rate() over a series that has not happened yet reads 0, not "no data".
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._lock = threading.Lock()
        self._reported: set[tuple[str, str]] = set()
        self._requests: dict[tuple[str, str], int] = {}
        self._bound = 0
        self.attempts = Counter(
            f"{PREFIX}_scheduling_attempts",
            "Scheduling attempts, by how they ended.",
            ["result"],
            registry=self.registry,
        )
        self.duration = Histogram(
            f"{PREFIX}_scheduling_duration_seconds",
            "Time from popping a pod off the queue to the end of its attempt.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.active_reservations = Gauge(
            f"{PREFIX}_active_reservations",
            "Groups whose reservation is currently Reserved on a node.",
            registry=self.registry,
        )
        self.pending_pods = Gauge(
            f"{PREFIX}_pending_pods",
            "Pods waiting in the scheduling queue, by sub-queue.",
            ["queue"],
            registry=self.registry,
        )
        self.releases = Counter(
            f"{PREFIX}_releases",
            "Reservations released, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.claim_conflicts = Counter(
            f"{PREFIX}_claim_conflicts",
            "Claims lost to a concurrent writer (a 409 on the record, or a group claimed on another node).",
            registry=self.registry,
        )
        self.is_leader = Gauge(
            f"{PREFIX}_is_leader",
            "1 while this replica holds the leader Lease (or runs without leader election), else 0.",
            registry=self.registry,
        )
        self.tekton_coschedule_disabled = Gauge(
            f"{PREFIX}_tekton_coschedule_disabled",
            "1 while Tekton's feature-flags coschedule is disabled, as this scheduler needs (docs/contract.md section 4), else 0.",
            registry=self.registry,
        )
        self.api_requests = Counter(
            f"{PREFIX}_api_requests",
            "API requests made, by client and HTTP method (all but GET are writes); "
            "writes per bound pod = the main client's writes / attempts{result=bound}.",
            ["client", "verb"],
            registry=self.registry,
        )
        for result in AttemptResult:
            self.attempts.labels(result=result.value)
        for client in ApiClientName:
            for verb in API_VERBS:
                self.api_requests.labels(client=client.value, verb=verb)
        for queue in PendingQueue:
            self.pending_pods.labels(queue=queue.value)
        for reason in RELEASING_REASONS:
            self.releases.labels(reason=reason.value)

    def attempt(self, result: str, seconds: float) -> None:
        """attempt records one scheduling attempt: its outcome (an AttemptResult value) and its duration."""
        if result not in _ATTEMPT_RESULTS:
            self._unknown("result", result, _ATTEMPT_RESULTS)
            return
        self.attempts.labels(result=result).inc()
        self.duration.observe(max(0.0, seconds))
        if result == AttemptResult.BOUND:
            with self._lock:
                self._bound += 1

    def released(self, reason: str) -> None:
        """released counts one released reservation; reason is a releasing ReleaseReason value."""
        if reason not in _RELEASING:
            self._unknown("release reason", reason, _RELEASING)
            return
        self.releases.labels(reason=reason).inc()

    def api_request(self, client: str, verb: str) -> None:
        """api_request counts one API request of `client` (an ApiClientName value) with HTTP method `verb`."""
        if client not in _CLIENTS or verb not in _VERBS:
            self._unknown("api request", f"{client} {verb}", _CLIENTS | _VERBS)
            return
        self.api_requests.labels(client=client, verb=verb).inc()
        with self._lock:
            self._requests[(client, verb)] = self._requests.get((client, verb), 0) + 1

    def request_summary(self) -> str:
        """request_summary() is one line for the log at exit: requests per client and verb, and writes per bound pod.

        Example: ``main GET=7 POST=501 PUT=1000 PATCH=100; events POST=500; bound 400; main writes per bound pod 4.00``.
        """
        with self._lock:
            counts = dict(self._requests)
            bound = self._bound
        parts = []
        for client in ApiClientName:
            verbs = " ".join(f"{verb}={counts[(client.value, verb)]}" for verb in API_VERBS if counts.get((client.value, verb)))
            parts.append(f"{client.value} {verbs or 'none'}")
        writes = sum(n for (client, verb), n in counts.items() if client == ApiClientName.MAIN and verb != "GET")
        per_pod = f"{writes / bound:.2f}" if bound else "n/a"
        return f"{'; '.join(parts)}; bound {bound}; main writes per bound pod {per_pod}"

    def claim_conflict(self) -> None:
        """claim_conflict counts one claim lost to a concurrent writer."""
        self.claim_conflicts.inc()

    def set_active_reservations(self, count: int) -> None:
        self.active_reservations.set(count)

    def set_pending(self, lengths: Mapping[str, int]) -> None:
        """set_pending takes ``SchedulingQueue.lengths()`` as is; a sub-queue it omits reads 0."""
        for queue in PendingQueue:
            self.pending_pods.labels(queue=queue.value).set(lengths.get(queue.value, 0))
        for name in set(lengths) - _QUEUES:
            self._unknown("queue", name, _QUEUES)

    def _unknown(self, what: str, value: str, valid: frozenset[str]) -> None:
        """_unknown logs a label value outside its set, once per value: a caller's bug, not the cluster's."""
        with self._lock:
            if (what, value) in self._reported:
                return
            self._reported.add((what, value))
        log.warning("metrics: unknown %s %r dropped; expected one of %s", what, value, ", ".join(sorted(valid)))

    def set_coschedule_disabled(self, disabled: bool) -> None:
        self.tekton_coschedule_disabled.set(1 if disabled else 0)

    def set_leader(self, leading: bool) -> None:
        self.is_leader.set(1 if leading else 0)

    def serve(self, bind_address: str, port: int, healthy: Callable[[], bool]) -> MetricsServer | None:
        """serve starts the /metrics and /healthz server on a daemon thread; port 0 means no server."""
        if port == 0:
            return None
        server = MetricsServer(bind_address, port, registry=self.registry, healthy=healthy)
        server.start()
        return server




STOP_POLL_SECONDS = 0.1
"""STOP_POLL_SECONDS is how often the server loop checks for stop(), which therefore returns within it."""


class MetricsServer:
    """MetricsServer serves GET /metrics (Prometheus text or OpenMetrics) and GET /healthz over HTTP.

    /healthz answers 200 "ok" when ``healthy()`` is true, else 503 (also when
    it raises: a probe that cannot tell must not report health). Port 0 binds
    an ephemeral port, which ``port`` then reports; tests use that.
    """

    def __init__(
        self,
        bind_address: str,
        port: int,
        *,
        registry: CollectorRegistry,
        healthy: Callable[[], bool],
    ) -> None:
        handler = _handler_class(registry, healthy)
        self.bind_address = bind_address
        self._httpd = ThreadingHTTPServer((bind_address, port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": STOP_POLL_SECONDS}, name="metrics-server", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        self._thread.start()
        log.info("serving /metrics and /healthz", extra={"address": f"{self.bind_address}:{self.port}"})

    def stop(self) -> None:
        """stop ends serve_forever, waits for the thread, and closes the socket; safe to call twice."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()


def _handler_class(registry: CollectorRegistry, healthy: Callable[[], bool]) -> type[BaseHTTPRequestHandler]:
    """_handler_class binds the registry and probe into a handler class, as http.server wants a class."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "tkn-scheduler"

        def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                encoder, content_type = choose_encoder(self.headers.get("Accept") or "")
                self._reply(200, encoder(registry), content_type)
            elif path == "/healthz":
                try:
                    ok = bool(healthy())
                except Exception:  # noqa: BLE001 - unknown health is ill health
                    log.exception("health check raised")
                    ok = False
                self._reply(200 if ok else 503, b"ok\n" if ok else b"unhealthy\n", "text/plain; charset=utf-8")
            else:
                self._reply(404, b"not found: try /metrics or /healthz\n", "text/plain; charset=utf-8")

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            log.debug("http: " + format, *args)

    return Handler


# --- logging ---

LOG_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
"""LOG_LEVELS maps the config's level names to the logging module's numbers."""

_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}
"""_RECORD_ATTRIBUTES are a LogRecord's own attributes; anything else on a record came from ``extra=``."""


class JsonFormatter(logging.Formatter):
    """JsonFormatter writes one JSON object a line: time, level, logger, msg, then the ``extra=`` fields.

    Example: ``log.info("bound", extra={"pod": "ns/p", "node": "n1"})`` becomes
    ``{"time": "2024-05-01T12:00:00.123Z", "level": "info", "logger": "tkn-scheduler.cycle",
    "msg": "bound", "pod": "ns/p", "node": "n1"}``. Values JSON cannot encode are
    written with str(); a traceback goes in "exc".
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
            + f"{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """TextFormatter is the classic one-line format, with ``extra=`` fields appended as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = [f"{k}={v}" for k, v in vars(record).items() if k not in _RECORD_ATTRIBUTES]
        if not extras:
            return line
        head, sep, tail = line.partition("\n")  # keep a traceback below the fields
        return f"{head} {' '.join(extras)}{sep}{tail}"


def configure_logging(level: str, fmt: str) -> None:
    """configure_logging makes the root logger write to stderr at ``level`` in ``fmt`` ("json" or "text").

    It replaces the root handlers, so calling it twice does not duplicate lines.
    """
    if level not in LOG_LEVELS:
        raise ValueError(f"unknown log level {level!r}; choose one of {', '.join(LOG_LEVELS)}")
    formatters: dict[str, Callable[[], logging.Formatter]] = {"json": JsonFormatter, "text": TextFormatter}
    if fmt not in formatters:
        raise ValueError(f"unknown log format {fmt!r}; choose one of {', '.join(formatters)}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatters[fmt]())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(LOG_LEVELS[level])
