"""auditor: the loop of `rescon audit`: events in, rules asked, violations out, until told to stop.

One thread (the caller's) applies the watches' events to a LiveState and, at
most every TICK_SECONDS, asks the state rules, so a burst of events costs one
evaluation. A state finding that is new is confirmed by a fresh read before
it is reported (pods first, then nodes, PipelineRuns and records), as the
scenario monitor does: watches of different kinds deliver in no common order,
so a pod may be seen bound before the record write that preceded its bind.
A finding the fresh read does not show is dropped; if it is real it is found
again at the next evaluation.

The volume rules are asked at the moment they are due, a bind of the judged
scheduler or a group going Reserved, on claims, volumes and the record read
right after it (harness.monitor.volume_reads, as the scenario monitor reads
them): one line each, like a transition.

release-late is judged as the scenario monitor judges it: at most every
TICK_SECONDS one run whose group is Reserved and whose release may be due is
read (harness.monitor.release_reads), each at most every 2 s, until a read
shows the release due; a group still Reserved `release_late` after that
read, and still so in a fresh read of its record, is a violation that lasts
until the group is Released.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Callable

import kubernetes

from harness.audit.dedup import AuditLine, ViolationTracker, violation_key
from harness.audit.live_state import LiveState
from harness.audit.metrics import AuditMetrics
from harness.audit.rule_list import RULE_NAMES
from harness.audit.watches import KINDS, WatchEvent, WatchSource
from harness.contract import record as contract
from harness.kube import Kube
from harness.monitor import invariants as rules
from harness.monitor import rulebook, volume_reads
from harness.monitor.release_reads import read_release_truths, read_true_reasons
from harness.timeouts import TimeoutConfig

log = logging.getLogger("rescon.audit")

#: How often the state rules are asked while events come (and the label timers looked at when none do).
TICK_SECONDS = 0.25
#: The state rules that relate objects of two watches: confirmed by a fresh read before they are reported.
CONFIRMED_RULES = frozenset({rules.NODE_OVERCOMMITTED, rules.GROUP_SPLIT, rules.POD_OFF_CLAIM_NODE, rules.BOUND_POD_NOT_HOLDER})


@dataclass
class Auditor:
    """Auditor runs the rules on one cluster until `stop` is set; `emit` receives each line."""

    kube: Kube
    scheduler_name: str
    namespace: str | None
    timeouts: TimeoutConfig
    metrics: AuditMetrics
    emit: Callable[[AuditLine], None]
    #: Says once, on stderr, that every kind is listed: binds from then on are judged.
    announce: Callable[[str], None] = lambda text: None
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic
    events: queue.Queue[WatchEvent] = field(default_factory=queue.Queue)
    tracker: ViolationTracker = field(default_factory=ViolationTracker)
    confirmations: int = 0
    #: events_applied when the rules were last asked: with no event since, and no label timer running, nothing can have changed.
    _evaluated_at_event: int = -1
    #: When release-late's last read pass was (the auditor's clock).
    _release_pass: float | None = None

    def __post_init__(self) -> None:
        self.state = LiveState(self.scheduler_name, self.timeouts.label_converges, release_late=self.timeouts.release_late)
        self.sources = {
            kind: WatchSource(
                kind, self.kube, self.events, namespace=self.namespace, metrics=self.metrics, stop=self.stop,
                unreachable_limit=self.timeouts.audit_api_unreachable, clock=self.clock,
            )
            for kind in KINDS
        }
        self.metrics.declare(KINDS)
        self.started = self.clock()

    def restarts(self) -> int:
        return int(sum(
            self.metrics.value("rescon_audit_watch_restarts_total", {"kind": kind, "reason": reason})
            for kind in KINDS for reason in ("expired", "error")
        ))

    def run(self) -> str | None:
        """run() audits until stop is set; it returns None then, or why a watch gave up."""
        for source in self.sources.values():
            source.thread.start()
        last, announced = self.clock(), False
        while not self.stop.is_set():
            try:
                event: WatchEvent | None = self.events.get(timeout=TICK_SECONDS)
            except queue.Empty:
                event = None
            if event is not None:
                if event.type == "FATAL":
                    self.stop.set()
                    return f"gave up the watch of {event.kind} after {event.error}: check the API server and the auditor's RBAC (harness/audit/deploy/rbac.yaml)"
                self._apply(event)
            if not announced and self.state.ready():
                announced = True
                counts = ", ".join(f"{n} {kind}" for kind, n in self.state.watched().items())
                self.announce(f"rescon audit: listed {counts}; judging from now on")
            if announced:
                self._read_releases()
            if self.clock() - last >= TICK_SECONDS and announced and self._worth_evaluating():
                last = self.clock()
                self._evaluate()
        return None

    def _apply(self, event: WatchEvent) -> None:
        try:
            found = self.state.apply(event, now=self.clock(), true_reasons_of=self._true_reasons)
        except Exception as err:  # noqa: BLE001 - one odd object must not stop the auditor; say so
            log.warning("rescon audit could not apply a %s %s event: %s", event.kind, event.type, err)
            return
        self.metrics.events.labels(kind=event.kind).inc()
        self._print(self.tracker.happened(found + self._judge_volumes(), at=datetime.now(UTC)))

    def _judge_volumes(self) -> list[rules.Finding]:
        """_judge_volumes() reads the claims behind each bind and claim just seen and asks the volume rules; a failed read is logged and skipped."""
        checks, self.state.volume_checks = self.state.volume_checks, []
        found: list[rules.Finding] = []
        for check in checks:
            try:
                if check.pod is not None:
                    if self.namespace is None or (check.pod.get("metadata") or {}).get("namespace") == self.namespace:
                        found += volume_reads.judge_bind(self.kube, self.state.world, check.pod, with_reservations=self.state.records_served)
                elif check.record is not None:
                    found += volume_reads.judge_claims(self.kube, self.state.world, check.record, check.groups)
            except Exception as err:  # noqa: BLE001 - one failed read must not stop the auditor; this moment is not judged
                what = rules.pod_key(check.pod) if check.pod is not None else f"record {check.record.key if check.record else '?'}"
                log.warning("rescon audit could not read the volumes of %s: %s", what, err)
        return found

    def _read_releases(self) -> None:
        """_read_releases() reads, at most once a tick, the one run release-late wants read next; a failed read is logged and tried again later."""
        now = self.clock()
        if self._release_pass is not None and now - self._release_pass < TICK_SECONDS:
            return
        self._release_pass = now
        wanted = self.state.release_read(now=now)
        if wanted is None:
            return
        record, groups = wanted
        try:
            truths = read_release_truths(self.kube, record, {g: record.group(g).tasks for g in groups})
        except Exception as err:  # noqa: BLE001 - one failed read must not stop the auditor; the run is read again later
            log.warning("rescon audit could not read the release truth of record %s: %s", record.key, err)
            truths = {}
        self.state.release_clock.observe(record, {g: t.due for g, t in truths.items()}, now=self.clock())

    def _late_releases(self, now: float) -> list[rules.Finding]:
        """_late_releases() is release-late's findings now: one already in force stays while the watch shows the group Reserved;
        a new one counts only if a fresh read of its record shows the group still Reserved (the record watch may lag a release)."""
        found = []
        for late in self.state.late_releases(now=now):
            finding = rulebook.late_release(late, now=now, limit=self.timeouts.release_late)
            if not self.tracker.is_active(finding):
                try:
                    fresh = volume_reads.read_record(self.kube, late.record.namespace, late.record.name)
                except Exception as err:  # noqa: BLE001 - judged again at the next evaluation
                    log.warning("rescon audit could not read record %s to confirm a late release: %s", late.record.key, err)
                    continue
                if not rulebook.still_reserved(late, fresh):
                    continue
            found.append(finding)
        return found

    def _worth_evaluating(self) -> bool:
        """_worth_evaluating() is True when an event came since the last evaluation, or a label or release timer may have run out."""
        return self.state.events_applied != self._evaluated_at_event or bool(self.state.diverged_since) or self.state.release_clock.running()

    def _evaluate(self) -> None:
        """_evaluate() asks the state rules and prints what started, changed or cleared since the last time."""
        self._evaluated_at_event = self.state.events_applied
        decided, self.state.decided_on = self.state.decided_on, set()
        nodes = decided | {key[1].removeprefix("node ") for key in self.tracker.active if key[0] == rules.NODE_OVERCOMMITTED}
        now = self.clock()
        found = self.state.state_findings(now=now, nodes=nodes) + self._late_releases(now)
        new = [f for f in found if not self.tracker.is_active(f) and f.rule in CONFIRMED_RULES]
        if new:
            confirmed = self._confirmed(nodes)
            if confirmed is None:  # the read failed: judge these nodes again at the next evaluation
                self.state.decided_on |= decided
                confirmed = set()
            found = [f for f in found if f not in new or violation_key(f) in confirmed]
        self._print(self.tracker.update(found, at=datetime.now(UTC)))
        self.metrics.set_active(self.tracker.active_by_rule(), RULE_NAMES)
        for kind, count in self.state.watched().items():
            self.metrics.watched.labels(kind=kind).set(count)

    def _confirmed(self, nodes: set[str]) -> set[tuple[str, str]] | None:
        """_confirmed() is the keys of the cross-watch findings that a fresh read shows too; None if the read failed."""
        self.confirmations += 1
        fresh = LiveState(self.scheduler_name, self.timeouts.label_converges)
        try:
            for kind in KINDS:  # pods first: a record read after them reflects every write before the pods' read
                fresh.apply(self._fresh_list(kind), now=self.clock(), true_reasons_of=self._true_reasons)
        except (kubernetes.client.ApiException, OSError, ValueError) as err:
            log.warning("could not confirm a finding by a fresh read (%s); trying again at the next evaluation", err)
            return None
        return {violation_key(f) for f in fresh.state_findings(now=self.clock(), nodes=nodes) if f.rule in CONFIRMED_RULES}

    def _fresh_list(self, kind: str) -> WatchEvent:
        """_fresh_list() is a SYNC of the kind read now; a kind the server does not serve (404) is an empty one, not served."""
        try:
            items, _ = self.sources[kind].list_items()
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
            return WatchEvent(kind, "SYNC", items=[], served=False)
        return WatchEvent(kind, "SYNC", items=items)

    def _true_reasons(self, record: contract.Record, tasks: tuple[str, ...]) -> set[contract.ReleaseReason]:
        return read_true_reasons(self.kube, record, tasks)

    def _print(self, lines: list[AuditLine]) -> None:
        for line in lines:
            if line.change.value in ("started", "happened"):
                self.metrics.violations.labels(rule=line.rule).inc()
            self.emit(line)
