"""LeaderElector: one replica schedules, the others wait, coordinated by a coordination.k8s.io/v1 Lease.

Why not ``kubernetes.leaderelection``: the client package ships an elector,
but it cannot serve a scheduler, for reasons that are defects rather than taste:

* ``LeaderElection.acquire()`` loops ``while True`` with ``time.sleep``, so a
  follower cannot be stopped: SIGTERM to a waiting replica hangs until it is
  killed.
* It never releases the Lease on shutdown, so after every rolling update the
  next leader waits a full lease duration before scheduling resumes.
* Its renew loop checks the deadline only between API calls, which carry no
  request timeout: one hung renewal keeps the old leader working past the point
  where another replica may take over, and two schedulers bind at once.
* ``LeaseLock`` builds ``CoordinationV1Api()`` on the process-wide default
  client, ignoring the ApiClient (context, QPS) the scheduler configured, and
  round-trips the Lease through the typed model, whose datetime serialization
  does not always produce the MicroTime form the API server parses.
* ``Config`` calls ``sys.exit`` on bad durations instead of raising.

So this module has its own small elector, with the rules client-go uses:

* The decision is pure (``decide``): no Lease -> create it; held by me ->
  renew; held by nobody (released) -> take it; held by another -> take it only
  once the record has not changed for its ``leaseDurationSeconds`` *as measured
  on my clock from when I first saw it* (``observe``). Comparing ``renewTime``
  with my wall clock would let clock skew between nodes hand the lease to two
  replicas; a record that stays the same for a whole duration of local time
  means its holder stopped renewing, whatever the clocks say.
* Every write is a compare-and-swap: the body carries the ``resourceVersion``
  that was read, so two candidates racing for a free lease get one success and one
  409 Conflict.
* A leader that has not renewed for ``renew_deadline`` (less than the lease
  duration) stops leading, and no API call may outlast that deadline, so it
  stops before anyone else may start.
* The leader's work (``on_started_leading``) runs on its own thread while
  this one renews, so it may block for as long as it leads.
* On stop, ``on_stopped_leading`` runs first and the work thread is joined
  (the work ends), then the Lease is released (holder cleared), so the next
  replica takes over at once without overlapping.

Worked example (duration 15 s, deadline 10 s, retry 2 s): replica A creates
the Lease and renews every 2 s. B reads it every 2 s, sees renewTime change
each time, and waits. A's node dies at t=100: B sees the same record from
t=101 on and takes over at t=116. Had A been stopped cleanly instead, it would
have cleared the holder and B would have taken over at its next retry.

The Lease is read and written as raw JSON through the custom-objects API,
which serves built-in groups too: the strings go out exactly as written here.
"""

from __future__ import annotations

import json
import logging
import math
import random
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum
from typing import Any, Callable, Protocol

from kubernetes.client import ApiClient, ApiException
from reference_scheduler.runtime.kube_api import KubeApi

log = logging.getLogger("tkn-scheduler.leader")

Obj = dict[str, Any]

GROUP = "coordination.k8s.io"
VERSION = "v1"
PLURAL = "leases"

JITTER_FACTOR = 1.2
"""JITTER_FACTOR stretches a follower's retry pause by up to 20%, so replicas that start together do not stampede."""

WAIT_SLICE_SECONDS = 0.05
"""WAIT_SLICE_SECONDS is how often a leader checks, between renewals, whether its work failed."""

MIN_REQUEST_TIMEOUT = 0.05
"""MIN_REQUEST_TIMEOUT is the shortest request timeout worth sending; below it the attempt is skipped."""


def micro_time(moment: datetime) -> str:
    """micro_time formats a MicroTime as the API server parses it.

    Example: ``micro_time(datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)) == "2024-05-01T12:00:00.000000Z"``;
    the six fractional digits are always written (``isoformat`` drops them at
    zero microseconds, which the server rejects).
    """
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    """default_identity is the hostname (the pod name in a Deployment) plus a random suffix.

    The suffix keeps a restarted container from mistaking the lease of its
    previous incarnation, still unexpired, for its own.
    """
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


# --- the pure part ---


@dataclass(frozen=True)
class LeaseRecord:
    """LeaseRecord is what a Lease says about its holder; "" as holder means nobody (released).

    Example: ``LeaseRecord.from_lease({"spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}})``
    is held by "a" for 15 s with no renewTime.
    """

    holder: str
    lease_duration_seconds: int | None
    renew_time: str | None
    acquire_time: str | None
    transitions: int

    @classmethod
    def from_lease(cls, lease: Obj) -> LeaseRecord:
        spec = lease.get("spec") or {}
        duration = spec.get("leaseDurationSeconds")
        return cls(
            holder=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(duration) if duration else None,
            renew_time=spec.get("renewTime"),
            acquire_time=spec.get("acquireTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
        )


@dataclass(frozen=True)
class Observation:
    """Observation is a record and the local (monotonic) time it was first seen unchanged."""

    record: LeaseRecord | None
    since: float


def observe(previous: Observation | None, record: LeaseRecord | None, now: float) -> Observation:
    """observe keeps ``since`` while the record stays the same, and restarts it when the record changes.

    Example: seeing the same renewTime at t=10 and t=12 gives ``since == 10``;
    a new renewTime at t=14 gives ``since == 14``: the holder is alive.
    """
    if previous is not None and previous.record == record:
        return previous
    return Observation(record=record, since=now)


class Verdict(StrEnum):
    """Verdict is what a candidate may do with the Lease it just read.

    Example: ``decide(None, ...) is Verdict.CREATE``.
    """

    CREATE = "Create"
    RENEW = "Renew"
    ACQUIRE_RELEASED = "AcquireReleased"
    TAKE_OVER_EXPIRED = "TakeOverExpired"
    WAIT = "Wait"

    @property
    def writes(self) -> bool:
        return self is not Verdict.WAIT


def decide(observation: Observation, *, identity: str, now: float, default_duration: float) -> Verdict:
    """decide says whether ``identity`` may write the Lease, seen as ``observation``, at local time ``now``.

    A holder's lease runs ``leaseDurationSeconds`` (``default_duration`` when
    the record lacks it) from when this candidate first saw its current record.

    Example: held by "b" for 15 s, first seen at t=100: at t=110 ``WAIT``; at
    t=115 ``TAKE_OVER_EXPIRED``; and "b" itself gets ``RENEW`` at any time.
    """
    record = observation.record
    if record is None:
        return Verdict.CREATE
    if record.holder == identity:
        return Verdict.RENEW
    if not record.holder:
        return Verdict.ACQUIRE_RELEASED
    duration = record.lease_duration_seconds or default_duration
    if now - observation.since >= duration:
        return Verdict.TAKE_OVER_EXPIRED
    return Verdict.WAIT


def claimed_lease(
    current: Obj | None,
    *,
    namespace: str,
    name: str,
    identity: str,
    duration_seconds: int,
    now: datetime,
) -> Obj:
    """claimed_lease is the Lease body that makes (or keeps) ``identity`` the holder.

    It keeps ``current``'s resourceVersion, so the write fails with 409 if
    anyone wrote in between. A renewal moves only renewTime; a change of holder
    also sets acquireTime and counts a transition.

    Example: renewing a lease acquired at 12:00 at 12:01 keeps
    ``acquireTime: ...12:00:00.000000Z`` and writes ``renewTime: ...12:01:00.000000Z``.
    """
    stamp = micro_time(now)
    if current is None:
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "holderIdentity": identity,
                "leaseDurationSeconds": duration_seconds,
                "acquireTime": stamp,
                "renewTime": stamp,
                "leaseTransitions": 0,
            },
        }
    record = LeaseRecord.from_lease(current)
    spec = dict(current.get("spec") or {})
    spec["holderIdentity"] = identity
    spec["leaseDurationSeconds"] = duration_seconds
    spec["renewTime"] = stamp
    if record.holder != identity:
        spec["acquireTime"] = stamp
        spec["leaseTransitions"] = record.transitions + 1
    return _with_spec(current, spec)


def released_lease(current: Obj, *, now: datetime) -> Obj:
    """released_lease is the Lease body that gives the lease up: no holder, as client-go writes it.

    leaseDurationSeconds becomes 1, so even a candidate that does not treat an
    empty holder as free waits no more than a second.
    """
    spec = dict(current.get("spec") or {})
    spec.pop("holderIdentity", None)
    spec["leaseDurationSeconds"] = 1
    spec["acquireTime"] = micro_time(now)
    spec["renewTime"] = micro_time(now)
    return _with_spec(current, spec)


def _with_spec(current: Obj, spec: Obj) -> Obj:
    """_with_spec copies current's identity and resourceVersion, dropping server-managed bookkeeping."""
    meta = {k: v for k, v in (current.get("metadata") or {}).items() if k != "managedFields"}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Lease", "metadata": meta, "spec": spec}


# --- the I/O part ---


class LeaseConflict(Exception):
    """LeaseConflict is a lost compare-and-swap: someone wrote the Lease since it was read."""


class LeaseApi(Protocol):
    """LeaseApi is the three calls the elector makes; tests substitute an in-memory one."""

    def read(self, namespace: str, name: str, *, timeout: float) -> Obj | None:
        """read returns the Lease, or None when it does not exist."""
        ...

    def create(self, namespace: str, body: Obj, *, timeout: float) -> Obj:
        """create raises LeaseConflict when the Lease already exists."""
        ...

    def replace(self, namespace: str, name: str, body: Obj, *, timeout: float) -> Obj:
        """replace raises LeaseConflict when body's resourceVersion is stale."""
        ...


class KubernetesLeaseApi:
    """KubernetesLeaseApi reads and writes Leases as raw JSON through the custom-objects endpoints."""

    def __init__(self, api_client: ApiClient) -> None:
        self._api = KubeApi(api_client)

    def read(self, namespace: str, name: str, *, timeout: float) -> Obj | None:
        try:
            response: Any = self._api.get_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, name, _preload_content=False, _request_timeout=timeout
            )
        except ApiException as err:
            if err.status == 404:
                return None
            raise
        lease: Obj = json.loads(response.data)
        return lease

    def create(self, namespace: str, body: Obj, *, timeout: float) -> Obj:
        try:
            response: Any = self._api.create_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, body, _preload_content=False, _request_timeout=timeout
            )
        except ApiException as err:
            if err.status == 409:
                raise LeaseConflict(f"lease {namespace}/{body['metadata']['name']} already exists") from err
            raise
        created: Obj = json.loads(response.data)
        return created

    def replace(self, namespace: str, name: str, body: Obj, *, timeout: float) -> Obj:
        try:
            response: Any = self._api.replace_namespaced_custom_object(
                GROUP, VERSION, namespace, PLURAL, name, body, _preload_content=False, _request_timeout=timeout
            )
        except ApiException as err:
            if err.status == 409:
                raise LeaseConflict(f"lease {namespace}/{name} was written by someone else") from err
            raise
        replaced: Obj = json.loads(response.data)
        return replaced


class LeaderElector:
    """LeaderElector runs the elect-lead-release cycle of one candidate; see the module docstring.

    Durations are seconds and may be fractional (tests use short ones); the
    Lease records the duration rounded up to whole seconds, as the API requires.
    """

    def __init__(
        self,
        api_client: ApiClient | None,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
        lease_api: LeaseApi | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not retry_period > 0:
            raise ValueError(f"retry_period must be above 0 seconds, not {retry_period}")
        if not renew_deadline > JITTER_FACTOR * retry_period:
            raise ValueError(f"renew_deadline ({renew_deadline}) must exceed {JITTER_FACTOR} x retry_period ({retry_period})")
        if not lease_duration > renew_deadline:
            raise ValueError(f"lease_duration ({lease_duration}) must exceed renew_deadline ({renew_deadline})")
        if not identity:
            raise ValueError("identity must not be empty: use default_identity()")
        if lease_api is None:
            if api_client is None:
                raise ValueError("pass an api_client, or a lease_api")
            lease_api = KubernetesLeaseApi(api_client)
        self._api = lease_api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self._lease_duration = lease_duration
        self._renew_deadline = renew_deadline
        self._retry_period = retry_period
        self._clock = clock
        self._observed: Observation | None = None
        self._last_holder: str | None = None
        self._leading = threading.Event()

    @property
    def is_leader(self) -> bool:
        """is_leader is true from just before on_started_leading until just before on_stopped_leading."""
        return self._leading.is_set()

    def run(
        self,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        stop: threading.Event,
    ) -> None:
        """run waits to become leader, leads until ``stop`` is set or the lease is lost, then returns.

        ``on_started_leading`` runs on its own thread (``leader-work``), so it
        may block for as long as it leads (the lease is renewed meanwhile) or
        start threads and return; returning does not give the lease up.
        ``on_stopped_leading`` is called when leading ends, for whatever
        reason, and must make that work end: run waits for the work thread (up
        to the lease duration, after which the lease has expired anyway) and
        only then releases the lease, so the next leader never overlaps it.

        If ``on_started_leading`` raises, leading ends the same way and run
        re-raises that exception. If run returns with ``stop`` unset, the lease
        was lost: the caller should exit, as kube-scheduler does, rather than
        keep caches built under a leadership it no longer has.
        """
        if not self._acquire(stop):
            return
        self._leading.set()
        log.info("became leader", extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity})
        failures: list[BaseException] = []
        failed = threading.Event()

        def work() -> None:
            try:
                on_started_leading()
            except BaseException as err:  # noqa: BLE001 - handed back to run's caller
                failures.append(err)
                failed.set()

        worker = threading.Thread(target=work, name="leader-work", daemon=True)
        worker.start()
        if self._renew_until_lost(stop, failed):
            log.error("leadership lost: no renewal within %gs", self._renew_deadline)
        elif failed.is_set():
            log.error("on_started_leading failed: giving the lease up")
        self._leading.clear()
        try:
            on_stopped_leading()
        except Exception:  # noqa: BLE001 - the work may still end; the lease is handled below either way
            log.exception("on_stopped_leading failed")
        worker.join(self._lease_duration)
        if worker.is_alive():
            log.error("the leader's work did not end within %gs: leaving the lease to expire", self._lease_duration)
        else:
            self._release()
        if failures:
            raise failures[0]

    # --- internals ---

    def _duration_seconds(self) -> int:
        return max(1, math.ceil(self._lease_duration))

    def _acquire(self, stop: threading.Event) -> bool:
        """_acquire retries every retry period (with jitter) until it holds the lease; False if stopped first."""
        while not stop.is_set():
            if self._try_acquire_or_renew(timeout=self._retry_period):
                return True
            stop.wait(self._retry_period * random.uniform(1.0, JITTER_FACTOR))
        return False

    def _renew_until_lost(self, stop: threading.Event, failed: threading.Event) -> bool:
        """_renew_until_lost renews every retry period until stop or failed; True when renewal failed for renew_deadline.

        The clock for the deadline starts *before* a successful request is
        sent, since the holder's record can only be newer than that; and no
        request may run past the deadline, so leadership ends on time even when
        the API server hangs.
        """
        last_renewed = self._clock()
        while True:
            until_deadline = last_renewed + self._renew_deadline - self._clock()
            if _wait_any(stop, failed, max(0.0, min(self._retry_period, until_deadline))):
                return False
            started = self._clock()
            remaining = last_renewed + self._renew_deadline - started
            if remaining < MIN_REQUEST_TIMEOUT:
                return True
            if self._try_acquire_or_renew(timeout=min(self._retry_period, remaining)):
                last_renewed = started

    def _try_acquire_or_renew(self, *, timeout: float) -> bool:
        """_try_acquire_or_renew reads the lease, decides, and writes it if allowed; True when we hold it."""
        try:
            now = self._clock()
            current = self._api.read(self.namespace, self.name, timeout=timeout)
            record = LeaseRecord.from_lease(current) if current is not None else None
            self._observed = observe(self._observed, record, now)
            self._log_holder(record)
            verdict = decide(self._observed, identity=self.identity, now=now, default_duration=self._lease_duration)
            if not verdict.writes:
                return False
            body = claimed_lease(
                current,
                namespace=self.namespace,
                name=self.name,
                identity=self.identity,
                duration_seconds=self._duration_seconds(),
                now=datetime.now(timezone.utc),
            )
            if current is None:
                written = self._api.create(self.namespace, body, timeout=timeout)
            else:
                written = self._api.replace(self.namespace, self.name, body, timeout=timeout)
            if verdict is not Verdict.RENEW:
                log.info("acquired lease %s/%s (%s)", self.namespace, self.name, verdict.value)
            self._observed = Observation(record=LeaseRecord.from_lease(written), since=self._clock())
            return True
        except LeaseConflict as err:
            log.info("lost a race for the lease: %s", err)
            return False
        except Exception as err:  # noqa: BLE001 - API and network errors are retried on the next period
            log.warning("lease %s/%s: %s", self.namespace, self.name, _short(err))
            return False

    def _release(self) -> None:
        """_release clears the holder if it is still us; a conflict means someone else already moved on."""
        timeout = self._retry_period
        try:
            current = self._api.read(self.namespace, self.name, timeout=timeout)
            if current is None or LeaseRecord.from_lease(current).holder != self.identity:
                return
            self._api.replace(self.namespace, self.name, released_lease(current, now=datetime.now(timezone.utc)), timeout=timeout)
            log.info("released lease %s/%s", self.namespace, self.name)
        except Exception as err:  # noqa: BLE001 - the lease then simply expires
            log.warning("could not release lease %s/%s: %s; it expires on its own", self.namespace, self.name, _short(err))

    def _log_holder(self, record: LeaseRecord | None) -> None:
        holder = record.holder if record is not None else ""
        if holder != self._last_holder:
            self._last_holder = holder
            if holder and holder != self.identity:
                log.info("lease %s/%s is held by %s", self.namespace, self.name, holder)


def _wait_any(first: threading.Event, second: threading.Event, seconds: float) -> bool:
    """_wait_any waits up to ``seconds`` for either event; True when one is set.

    threading has no wait-for-any, so it polls ``first`` in WAIT_SLICE_SECONDS
    steps: cheap, and it bounds how late a failed start is noticed.
    """
    deadline = time.monotonic() + seconds
    while not (first.is_set() or second.is_set()):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        first.wait(min(left, WAIT_SLICE_SECONDS))
    return True


def _short(err: Exception) -> str:
    """_short is one line for a failed call: the status and reason of an ApiException, else the error."""
    if isinstance(err, ApiException):
        return f"API error {err.status} {err.reason}"
    return f"{type(err).__name__}: {err}"
