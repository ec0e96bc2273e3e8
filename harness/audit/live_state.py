"""live_state: the cluster as the auditor last saw it, kept from watch events, and what the rules say of it.

LiveState is the auditor's counterpart of the scenario monitor's World upkeep
(harness.monitor.watcher), for a cluster it does not control:

- every pod and node (slimmed): room on a node counts every pod on it;
- PipelineRuns and ReservationRecords in scope (all namespaces, or one);
- only what the rules need besides: when each record was created (time and
  resourceVersion), since when each record's label disagrees, which nodes the
  scheduler under audit has just decided on, the first binds of runs
  whose record has not been seen yet (dropped with their run), and the
  moments the volume rules are due at (`volume_checks`: a bind seen, groups
  seen Reserved), which the auditor takes and judges with fresh reads;
- since when each Reserved group's release has been seen due
  (`release_clock`, harness.monitor.release_due): `release_read` says which
  run the auditor should read next, `late_releases` which groups are late.

Nothing here calls the API; `apply` returns the transition findings of an
event, `state_findings` the state findings now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from harness.audit.watches import WatchEvent
from harness.contract import record as contract
from harness.kube import namespaced
from harness.monitor import invariants as rules
from harness.monitor import rulebook
from harness.monitor.expected_groups import expected_groups
from harness.monitor.release_due import Late, ReleaseClock
from harness.timeouts import DEFAULT_TIMEOUTS

Obj = dict[str, Any]
TrueReasons = Callable[[contract.Record, tuple[str, ...]], set[contract.ReleaseReason]]


@dataclass(frozen=True)
class VolumeCheck:
    """VolumeCheck is a moment the volume rules are due at: a pod of the judged scheduler seen binding, or a record's groups seen going Reserved."""

    pod: Obj | None = None
    record: contract.Record | None = None
    groups: tuple[str, ...] = ()


@dataclass
class LiveState:
    """LiveState holds the slimmed objects in scope and judges the scheduler named `scheduler_name`."""

    scheduler_name: str
    #: active-label-diverged's limit (TimeoutConfig.label_converges).
    label_converges: float
    world: rules.World = field(default_factory=rules.World)
    synced: set[str] = field(default_factory=set)
    #: Whether the API serves ReservationRecords (their CRD is installed): the reservation rules need them.
    records_served: bool = False
    created: dict[tuple[str, str], str] = field(default_factory=dict)
    created_rv: dict[tuple[str, str], str] = field(default_factory=dict)
    invalid: dict[tuple[str, str], rules.Finding] = field(default_factory=dict)
    diverged_since: dict[tuple[str, str], float] = field(default_factory=dict)
    decided_on: set[str] = field(default_factory=set)
    first_binds: dict[tuple[str, str], list[Obj]] = field(default_factory=dict)
    #: Binds and claims seen live whose claims are still to be read (harness.monitor.volume_reads); the auditor empties it.
    volume_checks: list[VolumeCheck] = field(default_factory=list)
    events_applied: int = 0
    #: release-late's limit (TimeoutConfig.release_late).
    release_late: float = DEFAULT_TIMEOUTS.release_late
    release_clock: ReleaseClock = field(init=False)

    def __post_init__(self) -> None:
        self.release_clock = ReleaseClock(limit=self.release_late)

    # --- scope ---

    def run_judged(self, pipeline_run: Mapping[str, Any] | None) -> bool:
        """run_judged() is True for a PipelineRun whose pods use the scheduler under audit."""
        return pipeline_run is not None and rules.asks_for(pipeline_run, self.scheduler_name)

    def record_judged(self, record: contract.Record) -> bool:
        """record_judged() is True for a record the scheduler under audit wrote, or one of a run it serves."""
        return record.scheduler_name == self.scheduler_name or self.run_judged(self.world.pipeline_runs.get((record.namespace, record.pipeline_run)))

    def judged_world(self) -> rules.World:
        """judged_world() is the world narrowed to the scheduler under audit: its runs, their task pods, their records; every node."""
        runs = {k: r for k, r in self.world.pipeline_runs.items() if self.run_judged(r)}
        pods = {uid: p for uid, p in self.world.pods.items() if (owner := rules.task_of(p)) is not None and owner[:2] in runs}
        records = {k: r for k, r in self.world.records.items() if self.record_judged(r)}
        return rules.World(pods=pods, nodes=self.world.nodes, records=records, pipeline_runs=runs)

    # --- events ---

    def apply(self, event: WatchEvent, *, now: float, true_reasons_of: TrueReasons) -> list[rules.Finding]:
        """apply() brings the state up to date with one event; it returns the transition rules the event broke."""
        self.events_applied += 1
        if event.type == "SYNC":
            self.synced.add(event.kind)
        if event.kind == "pods":
            return self._apply_pods(event)
        if event.kind == "nodes":
            self._replace(self.world.nodes, event, key=lambda o: str((o.get("metadata") or {}).get("name")))
        elif event.kind == "pipelineruns":
            self._replace(self.world.pipeline_runs, event, key=namespaced)
            if event.type == "DELETED" and event.obj is not None:
                self.first_binds.pop(namespaced(event.obj), None)
        elif event.kind == "records":
            return self._apply_records(event, now=now, true_reasons_of=true_reasons_of)
        return []

    @staticmethod
    def _replace(store: dict[Any, Mapping[str, Any]], event: WatchEvent, *, key: Callable[[Mapping[str, Any]], Any]) -> None:
        if event.type == "SYNC":
            store.clear()
            store.update((key(item), item) for item in event.items)
        elif event.obj is not None and event.type == "DELETED":
            store.pop(key(event.obj), None)
        elif event.obj is not None:
            store[key(event.obj)] = event.obj

    def _apply_pods(self, event: WatchEvent) -> list[rules.Finding]:
        pods = self.world.pods
        if event.type == "SYNC":
            pods.clear()
            pods.update((str(p["metadata"].get("uid")), p) for p in event.items)
            return []
        pod = event.obj or {}
        uid = str((pod.get("metadata") or {}).get("uid"))
        if event.type == "DELETED":
            pods.pop(uid, None)
            return []
        before = pods.get(uid)
        pods[uid] = pod
        node = rules.node_of(pod)
        if node is None or (before is not None and rules.node_of(before)):
            return []
        # A bind seen live: a decision of the scheduler under audit (a pod bound by nodeName, or by another scheduler, is not).
        if (pod.get("spec") or {}).get("schedulerName") == self.scheduler_name:
            self.decided_on.add(node)
            self.volume_checks.append(VolumeCheck(pod=pod))
        return self._first_bind(pod)

    def _first_bind(self, pod: Obj) -> list[rules.Finding]:
        """_first_bind() compares a group pod's bind with its record's creation, or keeps the pod until that record is seen."""
        owner = rules.task_of(pod)
        if owner is None or not self.records_served or not self.run_judged(self.world.pipeline_runs.get(owner[:2])):
            return []
        key = owner[:2]
        record, created = self.world.records.get(key), self.created_rv.get(key)
        if record is None or created is None:
            if record is None:
                self.first_binds.setdefault(key, []).append(pod)
            return []
        found = rules.bound_before_record(pod, record, created)
        return [found] if found is not None else []

    def _apply_records(self, event: WatchEvent, *, now: float, true_reasons_of: TrueReasons) -> list[rules.Finding]:
        records = self.world.records
        if event.type == "SYNC":
            # A fresh list after a gap: later states are compared with these, not with states before the gap.
            self.records_served = event.served
            for store in (records, self.created, self.invalid, self.diverged_since):
                store.clear()
            found: list[rules.Finding] = []
            for obj in event.items:
                found += self._apply_record(obj, "SYNC", now=now, true_reasons_of=true_reasons_of)
            return found
        self.records_served = True
        return self._apply_record(event.obj or {}, event.type, now=now, true_reasons_of=true_reasons_of)

    def _apply_record(self, obj: Obj, change: str, *, now: float, true_reasons_of: TrueReasons) -> list[rules.Finding]:
        key = namespaced(obj)
        meta = obj.get("metadata") or {}
        if change == "DELETED":
            for store in (self.world.records, self.created, self.created_rv, self.invalid, self.diverged_since, self.first_binds):
                store.pop(key, None)
            return []
        try:
            record = contract.Record.from_json(obj)
        except contract.ContractViolation as err:
            self.invalid[key] = rules.Finding(rules.RECORD_INVALID, str(err), (f"record {key[0]}/{key[1]}",))
            self.world.records.pop(key, None)
            return []
        self.invalid.pop(key, None)
        before = self.world.records.get(key)
        self.world.records[key] = record
        self.created[key] = str(meta.get("creationTimestamp") or "")
        if record.label_agrees:
            self.diverged_since.pop(key, None)
        else:
            self.diverged_since.setdefault(key, now)
        found: list[rules.Finding] = []
        if change == "ADDED":
            self.created_rv[key] = str(meta.get("resourceVersion") or "")
            for pod in self.first_binds.pop(key, []):
                bound_early = rules.bound_before_record(pod, record, self.created_rv[key])
                found += [bound_early] if bound_early is not None else []
        if change == "SYNC" or not self.record_judged(record):
            return found
        self.decided_on.update(rules.new_claims(before, record))
        claimed = rules.newly_reserved(before, record)
        if claimed:
            self.volume_checks.append(VolumeCheck(record=record, groups=tuple(claimed)))
        return found + rules.record_transition(before, record) + rulebook.untrue_releases(before, record, true_reasons_of)

    # --- state rules ---

    def ready(self) -> bool:
        """ready() is True once every kind has been listed: judging half a cluster would report what is not there."""
        return {"pods", "nodes", "pipelineruns", "records"} <= self.synced

    def state_findings(self, *, now: float, nodes: Iterable[str]) -> list[rules.Finding]:
        """state_findings() is every state rule broken now, room judged on `nodes`."""
        judged = self.judged_world()
        found = rulebook.state_findings(self.world, with_reservations=self.records_served, nodes=nodes, judged=judged)
        for key, record in judged.records.items():
            pipeline_run = judged.pipeline_runs.get(key)
            if pipeline_run is None:
                continue
            found += rulebook.run_findings(record, self.created.get(key, ""), pipeline_run, self.scheduler_name)
            differ = rules.groups_differ(record, pipeline_run) if expected_groups(pipeline_run) is not None else None
            found += [differ] if differ is not None else []
        found += list(self.invalid.values())
        for key, since in self.diverged_since.items():
            held = self.world.records.get(key)
            if held is not None and self.record_judged(held) and now - since > self.label_converges:
                found.append(rulebook.label_diverged(held, key, seconds=now - since, limit=self.label_converges))
        return found

    def _judged_records(self) -> list[contract.Record]:
        judged = [r for r in self.world.records.values() if self.record_judged(r)] if self.records_served else []
        self.release_clock.settle(judged)
        return judged

    def release_read(self, *, now: float) -> tuple[contract.Record, tuple[str, ...]] | None:
        """release_read() is the run to read now, and its groups to ask about, for release-late; None when none is to be read."""
        return self.release_clock.next_read(self._judged_records(), self.world.pipeline_runs, now=now)

    def late_releases(self, *, now: float) -> list[Late]:
        """late_releases() is each judged group Reserved longer than `release_late` after its release was seen due (to confirm by a fresh read)."""
        return self.release_clock.late(self._judged_records(), now=now)

    def watched(self) -> dict[str, int]:
        """watched() is how many objects of each kind are held (the metrics' objects watched)."""
        world = self.world
        return {"pods": len(world.pods), "nodes": len(world.nodes), "pipelineruns": len(world.pipeline_runs), "records": len(world.records) + len(self.invalid)}
