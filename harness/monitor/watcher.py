"""watcher: the contract monitor, a watch on pods, nodes, records and PipelineRuns through a whole scenario.

It starts before the scenario's first fixture is applied and stops after its
last check. Every event updates a World (harness.monitor.invariants) and the
rules are asked again; the first finding of each rule becomes a Violation,
with its time, its objects and its message, and the scenario fails on it
(`raise_if_violated`, called by every check's poll and once more at the end).

Rules that relate two kinds of object (a pod and a record, say) are confirmed
before they count: events of different watches arrive in no guaranteed order,
so a pod may be seen bound before the record write that preceded its bind.
A finding is confirmed by reading the API afresh, pods first and records
after, so a record read always reflects every write made before the pods'
read; a fault shows in that read too, a race between two streams does not.

Claims and PersistentVolumes are not watched: when a pod of the scheduler
under test is first seen bound, or a group first seen Reserved, they are read
then (harness.monitor.volume_reads), and the volume rules asked of that read.

TaskRuns are not watched either: while a group of the scheduler under test
is Reserved and its watched PipelineRun says its release may be due, the run
and its TaskRuns are read (harness.monitor.release_reads), one run per tick
and each at most every 2 s, until a read shows the release due; from then on
the group may stay Reserved for `release_late` by the monitor's clock, and
past that, confirmed by a fresh read of the record, it is `release-late`
(harness.monitor.release_due).

Beside judging, the monitor notes in its journal (harness.monitor.journal)
when it first saw a pod created, marked unschedulable, bound or finished, a
group Reserved or Released, and a release due; `latencies()` turns them into
the scenario's claim, release and requeue latencies for the report's timings.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Mapping

import kubernetes

from harness.errors import HarnessError
from harness.contract import record as contract
from harness.kube import Kube, as_plain_watch, json_object, namespaced
from harness.monitor import invariants as rules
from harness.monitor import rulebook
from harness.monitor import volume_reads
from harness.monitor.expected_groups import expected_groups, group_of
from harness.monitor.journal import Journal
from harness.monitor.latencies import Latencies, latencies_of
from harness.monitor.pod_event_filter import SKIPPED, FilteredWatch, PodEventFilter
from harness.monitor.release_due import ReleaseClock
from harness.monitor.release_reads import TEKTON, read_release_truths, read_true_reasons
from harness.monitor.release_truth import ReleaseTruth
from harness.monitor.room import NodeRoom
from harness.monitor.room_text import room_table
from harness.monitor.scenario_view import ScenarioView
from harness.timeouts import TimeoutConfig

log = logging.getLogger("rescon.monitor")

Obj = dict[str, Any]

#: The server-side timeout of one watch request; the watch is then resumed from its last resourceVersion.
WATCH_SECONDS = 5
#: How often the evaluator looks at time-bound rules (the active label, late releases) when no event comes, and at most.
TICK_SECONDS = 0.25
#: The rules judged on claims and volumes read at a bind or a claim (harness.monitor.volume_reads).
VOLUME_RULES = (rules.POD_VOLUME_NODE_CONFLICT, rules.POD_BOUND_BEFORE_CLAIM, rules.GROUP_VOLUME_NODE_CONFLICT)


@dataclass(frozen=True)
class Violation:
    """Violation is a rule's first confirmed finding: when (seconds from the monitor's start), what, and which objects."""

    rule: str
    at: float
    message: str
    objects: tuple[str, ...] = ()
    #: The node's arithmetic when the rule is about room (node-overcommitted), as the monitor judged it.
    room: NodeRoom | None = None

    def describe(self) -> str:
        return f"contract monitor: {self.when()}: {self.message}"

    def when(self) -> str:
        """when() is "node-overcommitted at 4.2s": the rule and the moment, from the monitor's start."""
        return f"{self.rule} at {self.at:.1f}s"

    def arithmetic(self) -> str:
        """arithmetic() is the full table of the node's arithmetic, headed by the rule and the time; "" for a rule not about room."""
        return f"{self.when()}: {room_table(self.room)}" if self.room is not None else ""


#: How the failure's detail, the arithmetic of the violations about room, is titled in pytest's output and the report.
ARITHMETIC_SECTION = "(the contract's arithmetic)"


class MonitorBehind(HarnessError):
    """MonitorBehind: the monitor stopped with events it never evaluated, so no verdict can be drawn from it (not the scheduler's fault)."""


class ContractBroken(AssertionError):
    """ContractBroken fails a scenario on the monitor's first violation; its message is the violation's.

    `detail` is the full arithmetic of the violations about room, every line of
    which the plugin adds under ARITHMETIC_SECTION (harness.plugin).
    """

    detail_title: ClassVar[str] = ARITHMETIC_SECTION
    #: Every line of the detail goes into the report's message: a table read from its top (a log tail keeps its last lines).
    detail_lines: ClassVar[int | None] = None

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


@dataclass
class _Event:
    kind: str  # pods, nodes, records, pipelineruns
    type: str  # ADDED, MODIFIED, DELETED, SYNC
    obj: Obj | None = None
    items: list[Obj] = field(default_factory=list)


class ContractMonitor:
    """ContractMonitor checks the contract's invariants at every observed state of one scenario.

    with ContractMonitor(kube, namespace, pool_selector, timeouts=cfg, checks_records=True) as monitor:
        ...  # the scenario
        monitor.raise_if_violated()
    """

    def __init__(
        self,
        kube: Kube,
        namespace: str,
        pool_selector: Mapping[str, str],
        *,
        timeouts: TimeoutConfig,
        checks_records: bool,
        scheduler_name: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        keep_going: bool = False,
        extra_namespaces: tuple[str, ...] = (),
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        #: Every namespace the scenario uses (its own first): their pods, PipelineRuns and records are watched.
        self.namespaces = (namespace, *extra_namespaces)
        self.pool_selector = ",".join(f"{k}={v}" for k, v in sorted(pool_selector.items()))
        self.timeouts = timeouts
        self.checks_records = checks_records
        #: The schedulerName under test: only its binds and claims are judged against a node's room.
        self.scheduler_name = scheduler_name
        self._clock = clock
        #: Record every broken rule and fail only at the scenario's end (--contract-keep-going).
        self.keep_going = keep_going
        self.started = clock()
        self.world = rules.World()
        #: The scenario's pods and records as last seen, for the timeline's thread (records only when watched: checks_records).
        self.view = ScenarioView(self.namespaces)
        #: Pod events neither of the scenario's namespaces nor on its pool are skipped undecoded (harness.monitor.pod_event_filter).
        self.pod_filter = PodEventFilter(self.namespaces)
        #: Set when a node joined the pool after the first list: the pods watch lists again (pods on it may have been skipped).
        self._relist_pods = threading.Event()
        self.violations: list[Violation] = []
        self.events_seen = 0
        #: Events received but never evaluated: stop() ran out of monitor_drained (0 until then, and when it drained).
        self.unjudged = 0
        self.confirmations = 0
        self._queue: queue.Queue[_Event] = queue.Queue()
        self._stop = threading.Event()
        self._synced: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._evaluator = threading.Thread(target=self._evaluate_loop, name="contract-monitor", daemon=True)
        self._bound_seen: set[str] = set()
        #: Nodes where the scheduler under test just bound a pod or made a claim: judged for room at this event.
        self._decided_on: set[str] = set()
        self._groups_checked: set[tuple[str, str, str]] = set()
        self._diverged_since: dict[tuple[str, str], float] = {}
        self._created: dict[tuple[str, str], str] = {}
        #: The resourceVersion of each record's creation (its ADDED event) and each run's first-bound pods.
        self._created_rv: dict[tuple[str, str], str] = {}
        self._first_binds: dict[tuple[str, str], list[Obj]] = {}
        #: Since when each Reserved group's release has been seen due (release-late), and when the last pass over them was.
        self._release_clock = ReleaseClock(limit=timeouts.release_late)
        self._release_pass: float | None = None
        #: The moments the report's timings are made of (harness.monitor.journal).
        self.journal = Journal()
        self._lock = threading.Lock()

    # --- lifecycle ---

    def __enter__(self) -> ContractMonitor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """start() lists and watches everything, and returns once every kind has been listed."""
        kinds = ["pods", "nodes", "pipelineruns"] + (["records"] if self.checks_records else [])
        for kind in kinds:
            thread = threading.Thread(target=self._watch_loop, args=(kind,), name=f"monitor-{kind}", daemon=True)
            self._threads.append(thread)
            thread.start()
        self._evaluator.start()
        deadline = self._clock() + self.timeouts.monitor_synced
        while self._clock() < deadline:
            with self._lock:
                if self._synced >= set(kinds):
                    return
            time.sleep(0.05)
        from harness.waits import WaitTimeout

        raise WaitTimeout(f"timed out after {self.timeouts.monitor_synced:g}s (monitor_synced) listing {sorted(set(kinds) - self._synced)} for the contract monitor")

    def stop(self) -> None:
        """stop() evaluates every event received so far, then ends the evaluator (watch threads end on their own).

        Bounded by monitor_drained: the events still queued then are counted in
        `unjudged`, and raise_if_violated(final=True) refuses to give a verdict.
        """
        if self._stop.is_set():
            return
        self._queue.put(_Event("stop", "STOP"))
        self._evaluator.join(timeout=self.timeouts.monitor_drained)
        self.unjudged = self._queue.qsize() if self._evaluator.is_alive() else 0
        self._stop.set()

    # --- verdicts ---

    def behind_message(self) -> str:
        """behind_message() says, in one line, that the monitor stopped behind and what to change."""
        return (
            f"contract monitor: {self.unjudged} event(s) left unevaluated after {self.timeouts.monitor_drained:g}s (monitor_drained), "
            f"{self.events_seen} evaluated: the machine is too loaded to judge every state; run fewer at once "
            "(pytest -n, rescon replay --copies) or raise it with --rescon-timeout monitor_drained=SECONDS"
        )

    def first_violation(self) -> Violation | None:
        with self._lock:
            return self.violations[0] if self.violations else None

    def describe_violations(self) -> str | None:
        """describe_violations() is the first violation (and how many more rules broke), or with keep_going every one; None if none."""
        with self._lock:
            found = list(self.violations)
        if not found:
            return None
        if self.keep_going:
            return f"contract monitor: {len(found)} rule(s) broken: " + "; ".join(v.describe().removeprefix("contract monitor: ") for v in found)
        more = len(found) - 1
        return found[0].describe() + (f" (and {more} more rule(s) broken)" if more else "")

    def describe_arithmetic(self) -> str:
        """describe_arithmetic() is the arithmetic of the violations describe_violations() names (the first, or with keep_going all), "" if none is about room."""
        with self._lock:
            found = list(self.violations) if self.keep_going else self.violations[:1]
        return "\n\n".join(text for text in (v.arithmetic() for v in found) if text)

    def latencies(self) -> Latencies:
        """latencies() is the scenario's claim, release and requeue latencies from what the monitor has seen so far."""
        return latencies_of(self.journal.events())

    def raise_if_violated(self, *, final: bool = False) -> None:
        """raise_if_violated() fails the scenario with the first violation, if any; with keep_going, only when `final`, with all of them."""
        if self.keep_going and not final:
            return
        if final and self.unjudged:
            raise MonitorBehind(self.behind_message())
        broken = self.describe_violations()
        if broken is not None:
            raise ContractBroken(broken, self.describe_arithmetic())

    # --- watches ---

    def _list(self, kind: str) -> tuple[list[Obj], str]:
        core, custom = self.kube.core, self.kube.custom
        if kind == "pods":
            data = _raw(core.list_pod_for_all_namespaces(_preload_content=False))
        elif kind == "nodes":
            data = _raw(core.list_node(label_selector=self.pool_selector, _preload_content=False))
        else:
            api = (contract.GROUP, contract.VERSION) if kind == "records" else TEKTON
            plural = contract.PLURAL if kind == "records" else "pipelineruns"
            if len(self.namespaces) == 1:
                data = json_object(custom.list_namespaced_custom_object(*api, self.namespace, plural))
            else:  # one list for every namespace of the scenario, kept to them
                data = json_object(custom.list_cluster_custom_object(*api, plural))
                data["items"] = [item for item in data.get("items") or [] if self._in_scope(item)]
        return list(data.get("items") or []), str((data.get("metadata") or {}).get("resourceVersion") or "")

    def _in_scope(self, obj: Mapping[str, Any]) -> bool:
        """_in_scope() is True for an object in one of the scenario's namespaces."""
        return (obj.get("metadata") or {}).get("namespace") in self.namespaces

    def _stream(self, kind: str, resource_version: str) -> Iterator[dict[str, Any]]:
        watch: Any = kubernetes.watch.Watch()  # type: ignore[no-untyped-call]
        common: dict[str, Any] = {"resource_version": resource_version, "timeout_seconds": WATCH_SECONDS, "allow_watch_bookmarks": True}
        core, custom = self.kube.core, self.kube.custom
        if kind == "pods":
            return iter(FilteredWatch(self.pod_filter).stream(as_plain_watch(core.list_pod_for_all_namespaces), **common))  # type: ignore[no-untyped-call]
        if kind == "nodes":
            return iter(watch.stream(as_plain_watch(core.list_node), label_selector=self.pool_selector, **common))
        api = (contract.GROUP, contract.VERSION) if kind == "records" else TEKTON
        plural = contract.PLURAL if kind == "records" else "pipelineruns"
        if len(self.namespaces) == 1:
            return iter(watch.stream(as_plain_watch(custom.list_namespaced_custom_object), *api, self.namespace, plural, **common))
        return iter(watch.stream(as_plain_watch(custom.list_cluster_custom_object), *api, plural, **common))

    def _watch_loop(self, kind: str) -> None:
        resource_version = ""
        while not self._stop.is_set():
            try:
                if not resource_version:
                    items, resource_version = self._list(kind)
                    self._queue.put(_Event(kind, "SYNC", items=items))
                    with self._lock:
                        self._synced.add(kind)
                for event in self._stream(kind, resource_version):
                    if self._stop.is_set():
                        return
                    if kind == "pods" and self._relist_pods.is_set():
                        self._relist_pods.clear()
                        resource_version = ""  # a node joined the pool: list its pods, skipped until now
                        break
                    raw = event.get("raw_object") or {}
                    if event.get("type") == "ERROR":
                        if raw.get("code") == 410:
                            resource_version = ""  # too old: list again
                        break
                    resource_version = str((raw.get("metadata") or {}).get("resourceVersion") or resource_version)
                    if event.get("type") not in ("BOOKMARK", SKIPPED) and (kind in ("pods", "nodes") or self._in_scope(raw)):
                        self._queue.put(_Event(kind, str(event.get("type")), obj=raw))
            except kubernetes.client.ApiException as err:
                if err.status == 410:
                    resource_version = ""
                else:
                    log.debug("monitor watch of %s: %s", kind, err)
                    self._stop.wait(0.5)
            except Exception as err:  # noqa: BLE001 - a dropped connection: resume the watch
                log.debug("monitor watch of %s: %s", kind, err)
                self._stop.wait(0.5)

    # --- evaluation ---

    def _now(self) -> float:
        return self._clock() - self.started

    def _evaluate_loop(self) -> None:
        while True:
            try:
                event = self._queue.get(timeout=TICK_SECONDS)
            except queue.Empty:
                self._check_timers()
                continue
            if event.kind == "stop":
                self._check_label_timers()
                return
            try:
                self._apply(event)
            except Exception as err:  # noqa: BLE001 - a monitor bug must not hang the suite; say so
                log.warning("contract monitor could not evaluate a %s event: %s", event.kind, err)
            # Time-bound rules too: with a steady stream of events (node heartbeats) the queue is never idle.
            self._check_timers()

    def _check_timers(self) -> None:
        self._check_label_timers()
        try:
            self._check_release_timers()
        except Exception as err:  # noqa: BLE001 - as in _apply: a failed read or a monitor bug must not hang the suite
            log.warning("contract monitor could not judge late releases: %s", err)

    def _report(self, finding: rules.Finding) -> None:
        with self._lock:
            if any(v.rule == finding.rule for v in self.violations):
                return
            violation = Violation(finding.rule, self._now(), finding.message, finding.objects, finding.room)
            self.violations.append(violation)
        log.warning("%s", violation.describe())

    def _has(self, rule: str) -> bool:
        with self._lock:
            return any(v.rule == rule for v in self.violations)

    def _apply(self, event: _Event) -> None:
        self.events_seen += 1
        self.view.apply(event.kind, event.type, obj=event.obj, items=event.items)
        world = self.world
        if event.kind == "pods":
            self._apply_pods(event)
        elif event.kind == "nodes":
            _replace(world.nodes, event, key=lambda o: str(o["metadata"]["name"]))
            if self.pod_filter.add_pool_nodes(world.nodes):
                self._relist_pods.set()
        elif event.kind == "pipelineruns":
            _replace(world.pipeline_runs, event, key=namespaced)
            for key in list(world.pipeline_runs) if event.type == "SYNC" else [namespaced(event.obj or {})]:
                self._check_groups(key)
        elif event.kind == "records":
            self._apply_records(event)
        self._check_world()

    def _apply_pods(self, event: _Event) -> None:
        pods = self.world.pods
        items = event.items if event.type == "SYNC" else [event.obj or {}]
        if event.type == "SYNC":
            pods.clear()
        for pod in items:
            meta = pod.get("metadata") or {}
            if meta.get("namespace") not in self.namespaces and not rules.node_of(pod):
                continue
            uid = str(meta.get("uid"))
            ours_here = meta.get("namespace") in self.namespaces
            if event.type == "DELETED":
                pods.pop(uid, None)
                if ours_here:
                    self.journal.pod_gone(self._now(), pod)
                continue
            pods[uid] = pod
            if ours_here:  # the scenario's own pods: its pool holds nobody else's
                self.journal.pod(self._now(), pod, event=event.type, ours=self._decided_by_us(pod))
            if rules.node_of(pod) and uid not in self._bound_seen:
                self._bound_seen.add(uid)
                if event.type != "SYNC" and self._decided_by_us(pod):
                    self._decided_on.add(str(rules.node_of(pod)))
                    if meta.get("namespace") in self.namespaces:
                        self._check_bind_volumes(pod)
                # Only the scenario's own runs: their records and PipelineRuns are the ones watched here. Another
                # scenario's bound pod (seen for its node's room) would find neither, and cost a fresh read of the
                # whole cluster every time; its own scenario's monitor judges it.
                if meta.get("namespace") in self.namespaces:
                    self._check_first_bind(pod)

    def _apply_records(self, event: _Event) -> None:
        records = self.world.records
        if event.type == "SYNC":
            # A fresh list after a gap: compare the next states with these, not with states before the gap.
            records.clear()
        for obj in event.items if event.type == "SYNC" else [event.obj or {}]:
            key = namespaced(obj)
            if event.type == "DELETED":
                gone = records.pop(key, None)
                self._diverged_since.pop(key, None)
                if gone is not None:
                    self.journal.record_gone(self._now(), gone)
                continue
            try:
                record = contract.Record.from_json(obj)
            except contract.ContractViolation as err:
                self._report(rules.Finding(rules.RECORD_INVALID, str(err), (f"record {key[0]}/{key[1]}",)))
                continue
            before = records.get(key)
            records[key] = record
            self.journal.record(self._now(), record, event=event.type, judged=self._judged(record))
            if event.type == "ADDED":
                self._created_rv[key] = str((obj.get("metadata") or {}).get("resourceVersion") or "")
                self._check_write_order(key)
            self._created[key] = str((obj.get("metadata") or {}).get("creationTimestamp") or "")
            if event.type != "SYNC":
                for finding in rules.record_transition(before, record):
                    self._report(finding)
                self._check_releases(before, record)
                self._decided_on.update(rules.new_claims(before, record))
                self._check_claim_volumes(record, rules.newly_reserved(before, record))
            self._track_label(key, record)
            self._check_groups(key)

    def _decided_by_us(self, pod: Obj) -> bool:
        """A bind the scheduler under test made (a filler the suite bound by nodeName is not its decision)."""
        return self.scheduler_name is None or (pod.get("spec") or {}).get("schedulerName") == self.scheduler_name

    def _check_world(self) -> None:
        """_check_world() asks the rules after an event.

        Room is judged where the scheduler under test has just decided (a bind
        or a claim): the suite itself may crowd a node past its room with a
        filler bound by nodeName, and that is no fault of the scheduler's;
        binding or claiming into such a node is.
        """
        world = self.world
        decided, self._decided_on = self._decided_on, set()

        def check(w: rules.World) -> list[rules.Finding]:
            return rulebook.state_findings(w, with_reservations=self.checks_records, nodes=decided)

        pending = [f for f in check(world) if not self._has(f.rule)]
        if pending:
            self._confirm(check, {f.rule for f in pending})

    def _check_first_bind(self, pod: Obj) -> None:
        if not self.checks_records or self._has(rules.RECORD_AFTER_BIND):
            return
        owner = rules.task_of(pod)
        if owner is not None:
            self._first_binds.setdefault(owner[:2], []).append(pod)
            self._check_write_order(owner[:2])
        record = self.world.records.get(owner[:2]) if owner else None
        if owner is None or (record is not None and record.group_of_task(owner[2]) is not None):
            return
        pipeline_run = self.world.pipeline_runs.get(owner[:2])
        groups = expected_groups(pipeline_run) if pipeline_run is not None else None
        if groups is not None and group_of(groups, owner[2]) is None:
            return  # its resolved run puts the task in no group: no record is owed for it, fresh or not
        # The PipelineRun or the record may simply not have reached this process yet: ask the API.
        self._confirm(lambda fresh: [f for f in [rules.record_for_bound_pod(fresh, pod)] if f is not None], {rules.RECORD_AFTER_BIND})

    def _check_write_order(self, key: tuple[str, str]) -> None:
        """_check_write_order() compares the record's creation with its run's first binds, in etcd's order.

        One etcd orders every write, and its revision is the objects'
        resourceVersion: a group pod whose bind came before the record's
        creation is a record made too late, however close the two were.
        """
        created = self._created_rv.get(key)
        record = self.world.records.get(key)
        if created is None or record is None or self._has(rules.RECORD_AFTER_BIND):
            return
        for pod in self._first_binds.get(key, []):
            finding = rules.bound_before_record(pod, record, created)
            if finding is not None:
                self._report(finding)
                return

    def _check_bind_volumes(self, pod: Obj) -> None:
        """_check_bind_volumes() reads the claims of a pod just seen bound by the scheduler under test, and asks the volume rules.

        The reads come after the bind was seen, so a correct scheduler, which
        made each claim Bound before binding, cannot be flagged by them
        (harness.monitor.volume_reads). A failed read is logged, not a finding.
        """
        if all(self._has(rule) for rule in VOLUME_RULES):
            return
        try:
            found = volume_reads.judge_bind(self.kube, self.world, pod, with_reservations=self.checks_records)
        except Exception as err:  # noqa: BLE001 - a failed read must not stop the monitor; the rule is not judged for this bind
            log.warning("contract monitor could not read the volumes of %s: %s", rules.pod_key(pod), err)
            return
        for finding in found:
            self._report(finding)

    def _check_claim_volumes(self, record: contract.Record, groups: list[str]) -> None:
        """_check_claim_volumes() reads the claims of groups just seen Reserved and asks group-volume-node-conflict.

        Another scheduler's record (annotated with its name) is not judged.
        """
        mine = self.scheduler_name is None or record.scheduler_name in (None, self.scheduler_name)
        if not groups or not mine or self._has(rules.GROUP_VOLUME_NODE_CONFLICT):
            return
        try:
            found = volume_reads.judge_claims(self.kube, self.world, record, groups)
        except Exception as err:  # noqa: BLE001 - as in _check_bind_volumes
            log.warning("contract monitor could not read the volumes of record %s: %s", record.key, err)
            return
        for finding in found:
            self._report(finding)

    def _check_groups(self, key: tuple[str, str]) -> None:
        record, pipeline_run = self.world.records.get(key), self.world.pipeline_runs.get(key)
        if record is None or pipeline_run is None:
            return
        for finding in rulebook.run_findings(record, self._created.get(key, ""), pipeline_run, self.scheduler_name, self.world.pods.values()):
            self._report(finding)
        if self._has(rules.GROUPS_DIFFER):
            return
        marker = (key[0], key[1], record.pipeline_run_uid)
        if marker in self._groups_checked:
            return
        if expected_groups(pipeline_run) is None:
            return
        self._groups_checked.add(marker)
        differ = rules.groups_differ(record, pipeline_run)
        if differ is not None:
            self._report(differ)

    def _track_label(self, key: tuple[str, str], record: contract.Record) -> None:
        if record.label_agrees:
            self._diverged_since.pop(key, None)
        else:
            self._diverged_since.setdefault(key, self._now())
        self._check_label_timers()

    def _check_label_timers(self) -> None:
        limit = self.timeouts.label_converges
        for key, since in list(self._diverged_since.items()):
            if self._now() - since > limit:
                self._report(rulebook.label_diverged(self.world.records.get(key), key, seconds=self._now() - since, limit=limit))
                self._diverged_since.pop(key, None)

    def _check_releases(self, before: contract.Record | None, after: contract.Record) -> None:
        if self._has(rules.RELEASE_REASON_UNTRUE):
            return
        for finding in rulebook.untrue_releases(before, after, self._true_reasons):
            self._report(finding)

    def _true_reasons(self, record: contract.Record, tasks: tuple[str, ...]) -> set[contract.ReleaseReason]:
        return read_true_reasons(self.kube, record, tasks)

    def _judged(self, record: contract.Record) -> bool:
        """_judged() is True for a record the scheduler under test wrote (or one of its runs' records that does not say who did)."""
        if self.scheduler_name is None or record.scheduler_name == self.scheduler_name:
            return True
        run = self.world.pipeline_runs.get((record.namespace, record.pipeline_run))
        return record.scheduler_name is None and run is not None and rules.asks_for(run, self.scheduler_name, self.world.pods.values())

    def _check_release_timers(self) -> None:
        """_check_release_timers() reads one run whose release may be due, then reports a group Reserved past release_late.

        At most once a tick. The lateness is counted from the read that first
        showed the release due; past the limit, a fresh read of the record
        must show the group still Reserved (the record watch may lag behind a
        release) before release-late counts.
        """
        now = self._now()
        if not self.checks_records or self._has(rules.RELEASE_LATE):
            return
        if self._release_pass is not None and now - self._release_pass < TICK_SECONDS:
            return
        self._release_pass = now
        clock = self._release_clock
        judged = [r for r in self.world.records.values() if self._judged(r)]
        clock.settle(judged)
        wanted = clock.next_read(judged, self.world.pipeline_runs, now=now)
        if wanted is not None:
            record, groups = wanted
            try:
                truths = self._read_truths(record, {g: record.group(g).tasks for g in groups})
            except Exception as err:  # noqa: BLE001 - this read goes unjudged; the run is read again after READ_EVERY_SECONDS
                log.warning("contract monitor could not read the release truth of record %s: %s", record.key, err)
                truths = {}
            answered = self._now()
            clock.observe(record, {g: t.due for g, t in truths.items()}, now=answered)
            self.journal.release_due(answered, record, [g for g, t in truths.items() if t.due])
        for late in clock.late(judged, now=self._now()):
            if rulebook.still_reserved(late, self._read_record(late.record)):
                self._report(rulebook.late_release(late, now=self._now(), limit=clock.limit))
                return

    def _read_truths(self, record: contract.Record, groups: dict[str, tuple[str, ...]]) -> dict[str, ReleaseTruth]:
        return read_release_truths(self.kube, record, groups)

    def _read_record(self, record: contract.Record) -> contract.Record | None:
        return volume_reads.read_record(self.kube, record.namespace, record.name)

    # --- confirmation by a fresh read ---

    def _confirm(self, rule_check: Callable[[rules.World], list[rules.Finding]], wanted: set[str]) -> None:
        self.confirmations += 1
        fresh = self._fresh_world()
        for finding in rule_check(fresh):
            if finding.rule in wanted:
                self._report(finding)

    def room_now(self, node: str) -> NodeRoom | None:
        """room_now() is the node's arithmetic in a fresh read, as this monitor would judge it; None for a node not in the scenario's pool.

        For a check that failed because a pod was placed where it must not fit:
        the same accounting as node-overcommitted, on the state right after.
        """
        fresh = self._fresh_world()
        if node not in fresh.nodes:
            return None
        return rules.node_room(fresh, node, with_reservations=self.checks_records)

    def _fresh_world(self) -> rules.World:
        """_fresh_world() reads pods first, then nodes, PipelineRuns and records (see the module's docstring)."""
        fresh = rules.World()
        pods, _ = self._list("pods")
        fresh.pods = rules.PodsByUid({str(p["metadata"]["uid"]): p for p in pods if p["metadata"].get("namespace") in self.namespaces or rules.node_of(p)})
        nodes, _ = self._list("nodes")
        fresh.nodes = {str(n["metadata"]["name"]): n for n in nodes}
        runs, _ = self._list("pipelineruns")
        fresh.pipeline_runs = {namespaced(r): r for r in runs}
        if self.checks_records:
            for obj in self._list("records")[0]:
                try:
                    fresh.records[namespaced(obj)] = contract.Record.from_json(obj)
                except contract.ContractViolation:
                    continue  # reported from the watch
        return fresh


def _raw(response: Any) -> Obj:
    """_raw() is the JSON body of a call made with _preload_content=False (pods and nodes as plain dicts)."""
    data: Obj = json.loads(response.data)
    return data


def _replace(store: dict[Any, Any], event: _Event, *, key: Callable[[Obj], Any]) -> None:
    if event.type == "SYNC":
        store.clear()
        for item in event.items:
            store[key(item)] = item
    elif event.type == "DELETED":
        store.pop(key(event.obj or {}), None)
    elif event.obj is not None:
        store[key(event.obj)] = event.obj
