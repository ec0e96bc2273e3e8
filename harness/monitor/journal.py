"""journal: the moments the contract monitor saw that the report's timings are made of.

The monitor applies each watch event to its World and asks the rules; beside
that it tells the journal, which notes when (the monitor's clock: seconds from
its start) it first saw each of these:

- a pod created: its ADDED event;
- a pod of the scheduler under test marked unschedulable (`PodScheduled`
  `False`, reason `Unschedulable`) and bound (first seen with a node);
- room freed on a node: a pod bound there seen finished (`Succeeded`,
  `Failed`) or gone, a group Reserved there seen leaving Reserved (released,
  rolled back, lost with its node), or its record gone;
- a group of the scheduler under test seen Reserved (once per claim) and seen
  Released;
- a group's release seen due (the monitor's read, harness.monitor.release_due).

A state first shown by a re-list after a gap (a SYNC) is noted as the state it
is, with no moment: it came at a time the monitor did not see, and a timing
from it would be a guess. harness.monitor.latencies turns the moments into
latencies. Nothing here calls the API or reads a clock: the monitor passes `at`.

    journal = Journal()
    journal.pod(0.4, pod, event="ADDED", ours=True)        # PodCreated(0.4, ...)
    journal.record(1.1, record, event="MODIFIED", judged=True)  # GroupReserved(1.1, ...) if its group is now Reserved
    journal.events()                                       -> (PodCreated(...), GroupReserved(...))
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from harness.contract.record import Record, State
from harness.monitor.invariants import TERMINAL_PHASES, node_of, task_of
from harness.monitor.release_due import RunKey, run_key

Obj = Mapping[str, Any]

#: The watch event type of a re-list: its states came at moments the monitor did not see.
SYNC = "SYNC"
ADDED = "ADDED"
#: Tekton labels a run's TaskRuns, and so their pods, with the PipelineRun's uid: it tells two runs of one name apart.
PIPELINE_RUN_UID_LABEL = "tekton.dev/pipelineRunUID"


@dataclass(frozen=True)
class PodCreated:
    """PodCreated: a pod first seen in its ADDED event; `pipeline_run`, `task` and `pipeline_run_uid` from Tekton's labels, None when absent."""

    at: float
    uid: str
    namespace: str
    pipeline_run: str | None
    task: str | None
    pipeline_run_uid: str | None = None


@dataclass(frozen=True)
class PodUnschedulable:
    """PodUnschedulable: a pod of the scheduler under test first seen marked unschedulable (it fits no node now)."""

    at: float
    uid: str


@dataclass(frozen=True)
class PodBound:
    """PodBound: a pod of the scheduler under test first seen bound, to `node`."""

    at: float
    uid: str
    node: str


@dataclass(frozen=True)
class RoomFreed:
    """RoomFreed: something that held room on `node` stopped holding it; `cause` says what, for a reader."""

    at: float
    node: str
    cause: str


@dataclass(frozen=True)
class GroupReserved:
    """GroupReserved: a group first seen Reserved under claim `generation`; `tasks` are its spec's, to find its pods."""

    at: float
    run: RunKey
    pipeline_run: str
    group: str
    tasks: tuple[str, ...]
    generation: int


@dataclass(frozen=True)
class GroupReleased:
    """GroupReleased: a group first seen Released."""

    at: float
    run: RunKey
    group: str


@dataclass(frozen=True)
class ReleaseDue:
    """ReleaseDue: the monitor's read first showed the group's release due."""

    at: float
    run: RunKey
    group: str


Moment = PodCreated | PodUnschedulable | PodBound | RoomFreed | GroupReserved | GroupReleased | ReleaseDue


@dataclass(frozen=True)
class _PodState:
    node: str | None
    terminal: bool
    unschedulable: bool


@dataclass(frozen=True)
class _GroupState:
    state: State
    node: str | None
    generation: int


def unschedulable(pod: Obj) -> bool:
    """unschedulable() is True for a pod whose PodScheduled condition is False with reason Unschedulable, as schedulers mark a pod that fits no node."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable" for c in conditions)


def _name(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return f"pod {meta.get('namespace')}/{meta.get('name')}"


class Journal:
    """Journal keeps the moments of one scenario, in the order the monitor saw them; one writer (the evaluator), any reader."""

    def __init__(self) -> None:
        self._moments: list[Moment] = []
        self._pods: dict[str, _PodState] = {}
        self._groups: dict[tuple[RunKey, str], _GroupState] = {}
        self._lock = threading.Lock()

    def events(self) -> tuple[Moment, ...]:
        """events() is every moment noted so far, oldest first."""
        with self._lock:
            return tuple(self._moments)

    def _note(self, moment: Moment) -> None:
        with self._lock:
            self._moments.append(moment)

    def pod(self, at: float, pod: Obj, *, event: str, ours: bool) -> None:
        """pod() takes a pod as a watch event (ADDED, MODIFIED, SYNC) showed it; `ours` when the scheduler under test places it."""
        meta = pod.get("metadata") or {}
        uid, node, timed = str(meta.get("uid")), node_of(pod), event != SYNC
        before = self._pods.get(uid)
        terminal = (pod.get("status") or {}).get("phase") in TERMINAL_PHASES
        marked = unschedulable(pod)
        if timed and event == ADDED and before is None:
            owner = task_of(pod)
            run_uid = (meta.get("labels") or {}).get(PIPELINE_RUN_UID_LABEL)
            self._note(PodCreated(
                at, uid, str(meta.get("namespace")), owner[1] if owner else None, owner[2] if owner else None,
                str(run_uid) if run_uid else None,
            ))
        if timed and ours and marked and not (before and before.unschedulable):
            self._note(PodUnschedulable(at, uid))
        if timed and ours and node and not (before and before.node):
            self._note(PodBound(at, uid, node))
        if timed and node and terminal and not (before and before.terminal):
            self._note(RoomFreed(at, node, f"{_name(pod)} finished"))
        self._pods[uid] = _PodState(node, terminal, marked or bool(before and before.unschedulable))

    def pod_gone(self, at: float, pod: Obj) -> None:
        """pod_gone() takes a pod's DELETED event: a bound pod that had not finished frees its room now (a finished one already had)."""
        uid = str((pod.get("metadata") or {}).get("uid"))
        before = self._pods.pop(uid, None)
        node = (before.node if before else None) or node_of(pod)
        if node and not (before and before.terminal):
            self._note(RoomFreed(at, node, f"{_name(pod)} gone"))

    def record(self, at: float, record: Record, *, event: str, judged: bool) -> None:
        """record() takes a record as a watch event showed it; `judged` when the scheduler under test wrote it.

        Every record's group that leaves Reserved frees room on its node; only
        a judged record's groups are timed (Reserved, Released).
        """
        run, timed = run_key(record), event != SYNC
        for status in record.statuses:
            key = (run, status.name)
            before = self._groups.get(key)
            reserved = status.state is State.RESERVED
            if timed and judged and reserved and (before is None or before.state is not State.RESERVED or before.generation != status.claim_generation):
                tasks = record.group(status.name).tasks
                self._note(GroupReserved(at, run, record.pipeline_run, status.name, tuple(tasks), status.claim_generation))
            if timed and judged and status.state is State.RELEASED and (before is None or before.state is not State.RELEASED):
                self._note(GroupReleased(at, run, status.name))
            if timed and before is not None and before.state is State.RESERVED and before.node and (not reserved or status.node != before.node):
                self._note(RoomFreed(at, before.node, f"group {record.key}/{status.name} left Reserved"))
            self._groups[key] = _GroupState(status.state, status.node, status.claim_generation)

    def record_gone(self, at: float, record: Record) -> None:
        """record_gone() takes a record's DELETED event: its Reserved groups stop holding their nodes."""
        run = run_key(record)
        for key in [k for k in self._groups if k[0] == run]:
            before = self._groups.pop(key)
            if before.state is State.RESERVED and before.node:
                self._note(RoomFreed(at, before.node, f"record {record.key} gone with group {key[1]} Reserved"))

    def release_due(self, at: float, record: Record, groups: Iterable[str]) -> None:
        """release_due() takes the groups a read of the record's run first showed due, at the moment the read's answer came."""
        for group in groups:
            self._note(ReleaseDue(at, run_key(record), group))
