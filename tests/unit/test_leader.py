"""LeaderElector: the pure acquire decision, the Lease bodies, and the run loop against an in-memory Lease."""

from __future__ import annotations

import copy
import http.server
import json
import threading
import time
from datetime import datetime, timezone
from typing import Any

import pytest
from kubernetes.client import ApiClient, Configuration

from reference_scheduler.runtime.leader import (
    KubernetesLeaseApi,
    LeaderElector,
    LeaseConflict,
    LeaseRecord,
    Observation,
    Verdict,
    claimed_lease,
    decide,
    default_identity,
    micro_time,
    observe,
    released_lease,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
NOON = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def record(holder: str, *, duration: int | None = 15, renew: str = "r1") -> LeaseRecord:
    return LeaseRecord(holder=holder, lease_duration_seconds=duration, renew_time=renew, acquire_time=None, transitions=0)


# --- the decision ---


@pytest.mark.parametrize(
    ("lease", "since", "now", "expected"),
    [
        pytest.param(None, 0.0, 0.0, Verdict.CREATE, id="no-lease-create-it"),
        pytest.param(record("me"), 0.0, 1000.0, Verdict.RENEW, id="held-by-me-renew-even-if-stale"),
        pytest.param(record(""), 100.0, 100.0, Verdict.ACQUIRE_RELEASED, id="released-take-it-at-once"),
        pytest.param(record("other"), 100.0, 110.0, Verdict.WAIT, id="other-holder-within-duration-wait"),
        pytest.param(record("other"), 100.0, 115.0, Verdict.TAKE_OVER_EXPIRED, id="other-holder-unchanged-for-duration-take-over"),
        pytest.param(record("other", duration=30), 100.0, 120.0, Verdict.WAIT, id="the-holders-own-duration-counts"),
        pytest.param(record("other", duration=None), 100.0, 109.0, Verdict.WAIT, id="no-duration-uses-the-default-wait"),
        pytest.param(record("other", duration=None), 100.0, 110.0, Verdict.TAKE_OVER_EXPIRED, id="no-duration-uses-the-default-expired"),
    ],
)
def test_decide(lease: LeaseRecord | None, since: float, now: float, expected: Verdict) -> None:
    observation = Observation(record=lease, since=since)
    assert decide(observation, identity="me", now=now, default_duration=10.0) is expected


def test_an_old_renew_time_is_not_trusted_across_clocks() -> None:
    """A record first seen now counts from now, however old its renewTime: skewed clocks cannot expire it."""
    ancient = record("other", renew=micro_time(datetime(2000, 1, 1, tzinfo=timezone.utc)))
    observation = observe(None, ancient, now=500.0)
    assert decide(observation, identity="me", now=501.0, default_duration=15.0) is Verdict.WAIT
    assert decide(observation, identity="me", now=515.0, default_duration=15.0) is Verdict.TAKE_OVER_EXPIRED


def test_observe_restarts_only_when_the_record_changes() -> None:
    first = observe(None, record("other", renew="r1"), now=10.0)
    assert observe(first, record("other", renew="r1"), now=12.0).since == 10.0
    assert observe(first, record("other", renew="r2"), now=14.0).since == 14.0
    assert observe(first, record("third", renew="r1"), now=14.0).since == 14.0
    assert observe(first, None, now=16.0) == Observation(record=None, since=16.0)


def test_only_waiting_does_not_write() -> None:
    assert [v for v in Verdict if not v.writes] == [Verdict.WAIT]


# --- the bodies ---


def test_micro_time_always_has_six_digits() -> None:
    assert micro_time(NOON) == "2024-05-01T12:00:00.000000Z"
    assert micro_time(NOON.replace(microsecond=5)) == "2024-05-01T12:00:00.000005Z"


def test_creating_a_lease() -> None:
    body = claimed_lease(None, namespace="ns", name="l", identity="me", duration_seconds=15, now=NOON)
    assert body["metadata"] == {"name": "l", "namespace": "ns"}
    assert body["spec"] == {
        "holderIdentity": "me",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-05-01T12:00:00.000000Z",
        "renewTime": "2024-05-01T12:00:00.000000Z",
        "leaseTransitions": 0,
    }


def lease(holder: str | None, *, transitions: int = 2, rv: str = "7") -> Obj:
    spec: Obj = {"leaseDurationSeconds": 15, "acquireTime": "then", "renewTime": "then", "leaseTransitions": transitions}
    if holder is not None:
        spec["holderIdentity"] = holder
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l", "namespace": "ns", "resourceVersion": rv, "managedFields": [{}]},
        "spec": spec,
    }


def test_renewing_moves_only_renew_time_and_keeps_the_resource_version() -> None:
    body = claimed_lease(lease("me"), namespace="ns", name="l", identity="me", duration_seconds=15, now=NOON)
    assert body["metadata"] == {"name": "l", "namespace": "ns", "resourceVersion": "7"}
    assert body["spec"]["acquireTime"] == "then"
    assert body["spec"]["renewTime"] == micro_time(NOON)
    assert body["spec"]["leaseTransitions"] == 2


def test_taking_over_counts_a_transition() -> None:
    body = claimed_lease(lease("other"), namespace="ns", name="l", identity="me", duration_seconds=15, now=NOON)
    assert body["spec"]["holderIdentity"] == "me"
    assert body["spec"]["acquireTime"] == micro_time(NOON)
    assert body["spec"]["leaseTransitions"] == 3


def test_releasing_clears_the_holder() -> None:
    body = released_lease(lease("me"), now=NOON)
    assert "holderIdentity" not in body["spec"]
    assert body["spec"]["leaseDurationSeconds"] == 1
    assert body["metadata"]["resourceVersion"] == "7"
    assert LeaseRecord.from_lease(body).holder == ""


def test_default_identity_is_unique_per_process_start() -> None:
    assert default_identity() != default_identity()


# --- the run loop, against an in-memory Lease with resourceVersion compare-and-swap ---


class FakeLeases:
    """FakeLeases stores one namespace's Leases the way the API server does: 409 on a stale resourceVersion."""

    def __init__(self) -> None:
        self.items: dict[str, Obj] = {}
        self.version = 1000
        self.fail = threading.Event()
        self.lock = threading.Lock()

    def _stored(self, body: Obj) -> Obj:
        self.version += 1
        stored = copy.deepcopy(body)
        stored["metadata"]["resourceVersion"] = str(self.version)
        self.items[stored["metadata"]["name"]] = stored
        return copy.deepcopy(stored)

    def read(self, namespace: str, name: str, *, timeout: float) -> Obj | None:
        if self.fail.is_set():
            raise ConnectionError("API server unreachable")
        with self.lock:
            found = self.items.get(name)
            return copy.deepcopy(found) if found is not None else None

    def create(self, namespace: str, body: Obj, *, timeout: float) -> Obj:
        with self.lock:
            if body["metadata"]["name"] in self.items:
                raise LeaseConflict("exists")
            return self._stored(body)

    def replace(self, namespace: str, name: str, body: Obj, *, timeout: float) -> Obj:
        if self.fail.is_set():
            raise ConnectionError("API server unreachable")
        with self.lock:
            if self.items[name]["metadata"]["resourceVersion"] != body["metadata"].get("resourceVersion"):
                raise LeaseConflict("stale")
            return self._stored(body)

    def holder(self, name: str = "l") -> str:
        return LeaseRecord.from_lease(self.items[name]).holder


def elector(leases: FakeLeases, identity: str, *, renew_deadline: float = 0.4) -> LeaderElector:
    return LeaderElector(
        None,
        namespace="ns",
        name="l",
        identity=identity,
        lease_duration=1.0,
        renew_deadline=renew_deadline,
        retry_period=0.05,
        lease_api=leases,
    )


class Candidate:
    """Candidate runs one elector on a thread and records its callbacks."""

    def __init__(self, leases: FakeLeases, identity: str, **kwargs: Any) -> None:
        self.elector = elector(leases, identity, **kwargs)
        self.stop = threading.Event()
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.thread = threading.Thread(
            target=self.elector.run, args=(self.started.set, self.stopped.set, self.stop), daemon=True
        )
        self.thread.start()

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive(), "run() did not return after stop"


def test_leads_then_releases_on_stop() -> None:
    leases = FakeLeases()
    a = Candidate(leases, "a")
    assert a.started.wait(5)
    assert a.elector.is_leader
    assert leases.holder() == "a"
    a.finish()
    assert a.stopped.is_set()
    assert not a.elector.is_leader
    assert leases.holder() == ""


def test_a_follower_can_be_stopped_while_waiting() -> None:
    leases = FakeLeases()
    a = Candidate(leases, "a")
    assert a.started.wait(5)
    b = Candidate(leases, "b")
    time.sleep(0.2)
    assert not b.started.is_set()
    b.finish()
    assert not b.stopped.is_set()  # never led, so never stopped leading
    assert leases.holder() == "a"
    a.finish()


def test_a_released_lease_passes_to_the_follower_at_once() -> None:
    leases = FakeLeases()
    a = Candidate(leases, "a")
    assert a.started.wait(5)
    b = Candidate(leases, "b")
    time.sleep(0.1)
    a.finish()
    assert b.started.wait(0.5), "the follower waited for expiry instead of taking the released lease"
    assert leases.holder() == "b"
    assert leases.items["l"]["spec"]["leaseTransitions"] == 1  # a -> b; releasing is not a transition
    b.finish()


def test_a_leader_that_cannot_renew_stops_within_the_deadline() -> None:
    leases = FakeLeases()
    a = Candidate(leases, "a", renew_deadline=0.3)
    assert a.started.wait(5)
    leases.fail.set()
    lost_at = time.monotonic()
    a.thread.join(5)
    assert not a.thread.is_alive(), "run() should return when the lease is lost"
    assert a.stopped.is_set() and not a.stop.is_set()
    assert time.monotonic() - lost_at < 1.0, "it kept leading past its lease duration"


def test_a_leader_that_fails_to_start_gives_the_lease_up_and_reraises() -> None:
    leases = FakeLeases()
    stopped = threading.Event()

    def boom() -> None:
        raise RuntimeError("informers did not sync")

    with pytest.raises(RuntimeError, match="informers did not sync"):
        elector(leases, "a").run(boom, stopped.set, threading.Event())
    assert stopped.is_set()
    assert leases.holder() == ""


def test_blocking_work_keeps_the_lease_renewed_and_ends_before_release() -> None:
    """on_started_leading may block while it leads (as Scheduler.run does); the lease is renewed meanwhile."""
    leases = FakeLeases()
    stop, work_stop = threading.Event(), threading.Event()
    holder_when_work_ended: list[str] = []

    def lead() -> None:
        work_stop.wait(10)
        holder_when_work_ended.append(leases.holder())

    a = elector(leases, "a")
    thread = threading.Thread(target=a.run, args=(lead, work_stop.set, stop), daemon=True)
    thread.start()
    b = Candidate(leases, "b")
    time.sleep(1.5)  # longer than the 1 s lease: only renewals keep it
    assert a.is_leader and not b.started.is_set()
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert holder_when_work_ended == ["a"], "the lease was released before the work ended"
    assert b.started.wait(1)
    b.finish()


def test_a_renewal_race_is_lost_by_compare_and_swap() -> None:
    leases = FakeLeases()
    leases.items["l"] = lease("other", rv="1")
    stale = copy.deepcopy(leases.items["l"])
    leases.replace("ns", "l", claimed_lease(stale, namespace="ns", name="l", identity="x", duration_seconds=1, now=NOON), timeout=1)
    with pytest.raises(LeaseConflict):
        leases.replace("ns", "l", claimed_lease(stale, namespace="ns", name="l", identity="y", duration_seconds=1, now=NOON), timeout=1)


@pytest.mark.parametrize(
    ("duration", "deadline", "retry"),
    [
        pytest.param(10.0, 10.0, 2.0, id="deadline-not-below-duration"),
        pytest.param(15.0, 2.0, 2.0, id="deadline-within-one-jittered-retry"),
        pytest.param(15.0, 10.0, 0.0, id="zero-retry"),
    ],
)
def test_bad_durations_raise(duration: float, deadline: float, retry: float) -> None:
    with pytest.raises(ValueError):
        LeaderElector(
            None,
            namespace="ns",
            name="l",
            identity="a",
            lease_duration=duration,
            renew_deadline=deadline,
            retry_period=retry,
            lease_api=FakeLeases(),
        )


# --- the wire format, against a loopback HTTP server standing in for the API server ---


class RecordingApiServer:
    """RecordingApiServer answers Lease requests from a script and records what it was sent."""

    def __init__(self, replies: list[tuple[int, Obj]]) -> None:
        self.requests: list[tuple[str, str, Obj | None]] = []
        replies = list(replies)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                outer.requests.append((self.command, self.path, body))
                status, payload = replies.pop(0)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_kubernetes_lease_api_sends_raw_json_to_the_lease_endpoints() -> None:
    not_found = {"kind": "Status", "code": 404, "reason": "NotFound"}
    conflict = {"kind": "Status", "code": 409, "reason": "Conflict"}
    created = lease("me", rv="5")
    server = RecordingApiServer([(404, not_found), (201, created), (200, created), (409, conflict), (409, conflict)])
    configuration = Configuration()
    configuration.host = server.host
    api = KubernetesLeaseApi(ApiClient(configuration))
    try:
        assert api.read("ns", "l", timeout=2) is None
        body = claimed_lease(None, namespace="ns", name="l", identity="me", duration_seconds=15, now=NOON)
        assert api.create("ns", body, timeout=2)["metadata"]["resourceVersion"] == "5"
        assert api.read("ns", "l", timeout=2) == created
        with pytest.raises(LeaseConflict):
            api.replace("ns", "l", released_lease(created, now=NOON), timeout=2)
        with pytest.raises(LeaseConflict):
            api.create("ns", body, timeout=2)
    finally:
        server.close()
    path = "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
    assert [(method, url) for method, url, _ in server.requests] == [
        ("GET", f"{path}/l"),
        ("POST", path),
        ("GET", f"{path}/l"),
        ("PUT", f"{path}/l"),
        ("POST", path),
    ]
    assert server.requests[1][2] == body  # exactly as built: MicroTime strings untouched
    sent_release = server.requests[3][2]
    assert sent_release is not None and sent_release["metadata"]["resourceVersion"] == "5"
    assert sent_release["spec"]["renewTime"] == "2024-05-01T12:00:00.000000Z"
