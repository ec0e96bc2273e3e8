"""Observability: metric names and labels in the exposition, /metrics and /healthz on a loopback server, log lines."""

from __future__ import annotations

import io
import json
import logging
import urllib.error
import urllib.request
from typing import Callable, Iterator

import pytest
from prometheus_client import generate_latest

from reference_scheduler.core.release import ReleaseReason
from reference_scheduler.runtime.observability import (
    JsonFormatter,
    MetricsServer,
    Observability,
    TextFormatter,
    configure_logging,
)

pytestmark = pytest.mark.unit


def exposition(obs: Observability) -> str:
    return generate_latest(obs.registry).decode()


def test_every_metric_is_exposed_from_the_start() -> None:
    text = exposition(Observability())
    for line in (
        'tkn_scheduler_scheduling_attempts_total{result="bound"} 0.0',
        'tkn_scheduler_scheduling_attempts_total{result="unschedulable"} 0.0',
        'tkn_scheduler_scheduling_attempts_total{result="retry"} 0.0',
        'tkn_scheduler_scheduling_attempts_total{result="error"} 0.0',
        "tkn_scheduler_scheduling_duration_seconds_count 0.0",
        "tkn_scheduler_active_reservations 0.0",
        'tkn_scheduler_pending_pods{queue="active"} 0.0',
        'tkn_scheduler_pending_pods{queue="backoff"} 0.0',
        'tkn_scheduler_pending_pods{queue="unschedulable"} 0.0',
        'tkn_scheduler_releases_total{reason="TasksDone"} 0.0',
        "tkn_scheduler_claim_conflicts_total 0.0",
        "tkn_scheduler_is_leader 0.0",
    ):
        assert line in text.splitlines(), f"missing {line!r}"


def test_registry_is_private() -> None:
    first, second = Observability(), Observability()
    first.claim_conflict()
    assert "tkn_scheduler_claim_conflicts_total 0.0" in exposition(second)
    assert "process_cpu_seconds_total" not in exposition(first)


def test_methods_record_what_they_say() -> None:
    obs = Observability()
    obs.attempt("bound", 0.04)
    obs.attempt("unschedulable", 0.002)
    obs.released(ReleaseReason.PIPELINE_RUN_CANCELLED)
    obs.claim_conflict()
    obs.set_active_reservations(3)
    obs.set_pending({"active": 2, "backoff": 1, "unschedulable": 5})
    obs.set_leader(True)
    lines = exposition(obs).splitlines()
    assert 'tkn_scheduler_scheduling_attempts_total{result="bound"} 1.0' in lines
    assert 'tkn_scheduler_scheduling_duration_seconds_bucket{le="0.001"} 0.0' in lines
    assert 'tkn_scheduler_scheduling_duration_seconds_bucket{le="0.0025"} 1.0' in lines
    assert 'tkn_scheduler_scheduling_duration_seconds_bucket{le="0.05"} 2.0' in lines
    assert 'tkn_scheduler_scheduling_duration_seconds_bucket{le="10.0"} 2.0' in lines
    assert 'tkn_scheduler_releases_total{reason="PipelineRunCancelled"} 1.0' in lines
    assert "tkn_scheduler_claim_conflicts_total 1.0" in lines
    assert "tkn_scheduler_active_reservations 3.0" in lines
    assert 'tkn_scheduler_pending_pods{queue="unschedulable"} 5.0' in lines
    assert "tkn_scheduler_is_leader 1.0" in lines


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda o: o.attempt("bindd", 0.1), id="unknown-result"),
        pytest.param(lambda o: o.released("TaskRunning"), id="a-holding-reason-is-not-a-release"),
        pytest.param(lambda o: o.released("Whatever"), id="unknown-reason"),
        pytest.param(lambda o: o.set_pending({"activeQ": 1}), id="unknown-queue"),
    ],
)
def test_unknown_label_values_are_logged_once_and_dropped(
    call: Callable[[Observability], None], caplog: pytest.LogCaptureFixture
) -> None:
    obs = Observability()
    before = exposition(obs)
    with caplog.at_level(logging.WARNING, logger="tkn-scheduler.observability"):
        call(obs)
        call(obs)
    assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 1
    after = exposition(obs)
    assert "bindd" not in after and "Whatever" not in after and "activeQ" not in after
    assert 'result="error"} 0.0' in after and before.count("\n") == after.count("\n")


def test_gone_is_an_attempt_result() -> None:
    """The scheduling loop reports Outcome.GONE's value as is."""
    obs = Observability()
    obs.attempt("gone", 0.001)
    assert 'tkn_scheduler_scheduling_attempts_total{result="gone"} 1.0' in exposition(obs).splitlines()


# --- the HTTP server, on a real loopback socket ---


class Health:
    def __init__(self) -> None:
        self.ok = True

    def __call__(self) -> bool:
        return self.ok


@pytest.fixture
def served() -> Iterator[tuple[Observability, MetricsServer, Health]]:
    obs = Observability()
    health = Health()
    server = MetricsServer("127.0.0.1", 0, registry=obs.registry, healthy=health)
    server.start()
    try:
        yield obs, server, health
    finally:
        server.stop()


def get(server: MetricsServer, path: str, accept: str | None = None) -> tuple[int, str, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}")
    if accept:
        request.add_header("Accept", accept)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


def test_healthz_follows_the_probe(served: tuple[Observability, MetricsServer, Health]) -> None:
    _, server, health = served
    assert get(server, "/healthz")[0::2] == (200, "ok\n")
    health.ok = False
    assert get(server, "/healthz")[0] == 503


def test_healthz_is_unhealthy_when_the_probe_raises() -> None:
    def broken() -> bool:
        raise RuntimeError("no idea")

    server = MetricsServer("127.0.0.1", 0, registry=Observability().registry, healthy=broken)
    server.start()
    try:
        assert get(server, "/healthz")[0] == 503
    finally:
        server.stop()


def test_metrics_are_served(served: tuple[Observability, MetricsServer, Health]) -> None:
    obs, server, _ = served
    obs.attempt("retry", 0.3)
    status, content_type, body = get(server, "/metrics")
    assert status == 200
    assert content_type.startswith("text/plain")
    assert 'tkn_scheduler_scheduling_attempts_total{result="retry"} 1.0' in body.splitlines()
    status, content_type, body = get(server, "/metrics", accept="application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert body.rstrip().endswith("# EOF")


def test_other_paths_are_404(served: tuple[Observability, MetricsServer, Health]) -> None:
    assert get(served[1], "/")[0] == 404


def test_port_zero_means_no_server() -> None:
    assert Observability().serve("127.0.0.1", 0, lambda: True) is None


def test_serve_and_stop_on_a_fixed_port() -> None:
    probe = MetricsServer("127.0.0.1", 0, registry=Observability().registry, healthy=lambda: True)
    port = probe.port
    probe.stop()  # frees the port the OS chose, for serve() to bind again
    server = Observability().serve("127.0.0.1", port, lambda: True)
    assert server is not None
    try:
        assert get(server, "/healthz")[0] == 200
    finally:
        server.stop()
        server.stop()  # twice is harmless


# --- logging ---


def make_record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord("tkn-scheduler.cycle", logging.INFO, __file__, 1, "bound %s", ("ns/p",), None)
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def test_json_lines_carry_extra_fields() -> None:
    line = JsonFormatter().format(make_record(node="n1", took=object()))
    entry = json.loads(line)
    assert entry["level"] == "info"
    assert entry["logger"] == "tkn-scheduler.cycle"
    assert entry["msg"] == "bound ns/p"
    assert entry["node"] == "n1"
    assert isinstance(entry["took"], str)  # not JSON: written with str()
    assert entry["time"].endswith("Z") and "T" in entry["time"]
    assert "\n" not in line


def test_json_lines_carry_the_traceback() -> None:
    try:
        raise KeyError("x")
    except KeyError:
        import sys

        record = make_record()
        record.exc_info = sys.exc_info()
    entry = json.loads(JsonFormatter().format(record))
    assert "KeyError" in entry["exc"]


def test_text_lines_append_extra_fields() -> None:
    line = TextFormatter().format(make_record(node="n1"))
    assert line.endswith("tkn-scheduler.cycle: bound ns/p node=n1")


def test_configure_logging_replaces_the_root_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    buffer = io.StringIO()
    monkeypatch.setattr("sys.stderr", buffer)
    try:
        configure_logging("warning", "json")
        configure_logging("info", "json")
        assert len(root.handlers) == 1
        logging.getLogger("tkn-scheduler.test").info("hello", extra={"pod": "ns/p"})
        logging.getLogger("tkn-scheduler.test").debug("hidden")
        lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
        assert [(e["msg"], e["pod"]) for e in lines] == [("hello", "ns/p")]
        with pytest.raises(ValueError, match="choose one of json, text"):
            configure_logging("info", "xml")
        with pytest.raises(ValueError, match="unknown log level"):
            configure_logging("verbose", "json")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)


def test_request_summary_gives_writes_per_bound_pod() -> None:
    from reference_scheduler.runtime.observability import Observability

    obs = Observability()
    for verb in ("GET", "POST", "PUT", "PUT", "PATCH", "POST"):
        obs.api_request("main", verb)
    obs.api_request("events", "POST")
    obs.api_request("main", "LIST")  # not an HTTP method: dropped
    obs.attempt("bound", 0.01)
    obs.attempt("bound", 0.01)
    assert obs.request_summary() == "main GET=1 POST=2 PUT=2 PATCH=1; events POST=1; bound 2; main writes per bound pod 2.50"
    sample = obs.registry.get_sample_value("tkn_scheduler_api_requests_total", {"client": "main", "verb": "PUT"})
    assert sample == 2.0
