"""Observers: what the benchmark records while a run goes on.

* PodTimeline watches the run's pods and stamps, with this process's wall
  clock, when each was first seen (ADDED), first seen bound (spec.nodeName
  set), running and terminal. Both ends of a latency come from the same watch,
  so the watch's own delay cancels out to first order; the API's own
  timestamps (creationTimestamp, the PodScheduled condition) have one-second
  resolution and are kept as a cross-check.
* RecordTimeline watches ReservationRecords and stamps each group's
  Reserved and Released transitions the same way.
* ClaimTimeline watches the volumes mix's claims and stamps when each was
  first seen with the `volume.kubernetes.io/selected-node` annotation (a
  scheduler chose the node of the claim's first pod) and when it was first
  seen Bound (the provisioner made the volume there and the PV controller
  bound it): selected-node → Bound is the provisioning a bind waits for.
* ProcSampler reads a process's CPU time and resident memory from /proc.

They reuse the reference scheduler's Informer (list+watch on raw JSON): the
benchmark and the scheduler see the API the same way.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import kubernetes

from bench.cluster import RECORDS
from harness.kube import Kube
from harness.timestamps import kube_time
from reference_scheduler.runtime.informer import Informer, raw_lister

Obj = dict[str, Any]


def parse_time(text: str | None) -> float | None:
    """parse_time('2026-11-30T14:05:01Z') is the Unix time of an API timestamp; None for None."""
    if not text:
        return None
    return kube_time(text).timestamp()


@dataclass
class PodTrace:
    """PodTrace is what one pod did, in wall-clock seconds (None: not seen)."""

    name: str
    kind: str = ""
    run: str = ""
    task: str = ""
    cpu: str = ""
    added: float | None = None
    bound: float | None = None
    running: float | None = None
    finished: float | None = None
    node: str | None = None
    phase: str | None = None
    api_created: float | None = None
    api_scheduled: float | None = None
    unschedulable_seen: bool = False

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class PodTimeline:
    """PodTimeline keeps a PodTrace per pod of one namespace (optionally one label selector)."""

    def __init__(self, kube: Kube, namespace: str, *, label_selector: str = "") -> None:
        self._stop = threading.Event()
        fixed: dict[str, Any] = {"namespace": namespace}
        if label_selector:
            fixed["label_selector"] = label_selector
        self._informer = Informer(f"bench-pods-{namespace}", raw_lister(kube.core.list_namespaced_pod, **fixed), stop=self._stop)
        self._informer.add_handler(self._on_event)
        self._lock = threading.Lock()
        self.traces: dict[str, PodTrace] = {}

    def start(self) -> None:
        self._informer.start()
        if not self._informer.wait_synced(60):
            raise RuntimeError("the benchmark's pod watch did not sync in 60 s")

    def stop(self) -> None:
        self._stop.set()

    def _on_event(self, kind: str, pod: Obj, old: Obj | None) -> None:
        now = time.time()
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        labels = meta.get("labels") or {}
        with self._lock:
            trace = self.traces.get(meta.get("name", ""))
            if trace is None:
                containers = spec.get("containers") or []
                cpu = ",".join(str(((c.get("resources") or {}).get("requests") or {}).get("cpu", "")) for c in containers)
                trace = PodTrace(
                    meta.get("name", ""),
                    kind=labels.get("bench.rescon.dev/kind", ""),
                    run=labels.get("tekton.dev/pipelineRun", ""),
                    task=labels.get("tekton.dev/pipelineTask", ""),
                    cpu=cpu,
                    added=now,
                    api_created=parse_time(meta.get("creationTimestamp")),
                )
                self.traces[trace.name] = trace
            if kind == "DELETED":
                return
            if spec.get("nodeName") and trace.bound is None:
                trace.bound = now
                trace.node = spec["nodeName"]
            for condition in status.get("conditions") or []:
                if condition.get("type") == "PodScheduled":
                    if condition.get("status") == "True" and trace.api_scheduled is None:
                        trace.api_scheduled = parse_time(condition.get("lastTransitionTime"))
                    if condition.get("status") == "False":
                        trace.unschedulable_seen = True
            phase = status.get("phase")
            trace.phase = phase
            if phase == "Running" and trace.running is None:
                trace.running = now
            if phase in ("Succeeded", "Failed") and trace.finished is None:
                trace.finished = now

    def snapshot(self) -> list[PodTrace]:
        with self._lock:
            return [PodTrace(**t.__dict__) for t in self.traces.values()]

    def bound_count(self) -> int:
        with self._lock:
            return sum(1 for t in self.traces.values() if t.bound is not None)


@dataclass
class GroupTrace:
    """GroupTrace is one record group's reservation, in wall-clock seconds."""

    run: str
    group: str
    peak_cpu: str = ""
    node: str | None = None
    reserved: float | None = None
    released: float | None = None
    api_reserved: float | None = None
    api_released: float | None = None
    tasks: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class RecordTimeline:
    """RecordTimeline keeps a GroupTrace per (PipelineRun, group) of one namespace's ReservationRecords."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self._stop = threading.Event()
        group, version, plural = RECORDS
        custom = kubernetes.client.CustomObjectsApi(kube.api)
        lister = raw_lister(custom.list_namespaced_custom_object, group=group, version=version, namespace=namespace, plural=plural)
        self._informer = Informer(f"bench-records-{namespace}", lister, stop=self._stop)
        self._informer.add_handler(self._on_event)
        self._lock = threading.Lock()
        self.groups: dict[tuple[str, str], GroupTrace] = {}

    def start(self) -> None:
        self._informer.start()
        if not self._informer.wait_synced(60):
            raise RuntimeError("the benchmark's record watch did not sync in 60 s")

    def stop(self) -> None:
        self._stop.set()

    def _on_event(self, kind: str, record: Obj, old: Obj | None) -> None:
        now = time.time()
        run = (record.get("metadata") or {}).get("name", "")
        spec_groups = {g.get("name"): g for g in (record.get("spec") or {}).get("groups") or []}
        with self._lock:
            for entry in (record.get("status") or {}).get("groups") or []:
                name = str(entry.get("name"))
                trace = self.groups.setdefault((run, name), GroupTrace(run, name))
                spec = spec_groups.get(name) or {}
                trace.peak_cpu = str((spec.get("peak") or {}).get("cpu", ""))
                trace.tasks = list(spec.get("tasks") or [])
                state = entry.get("state")
                if state == "Reserved" and trace.reserved is None:
                    trace.reserved = now
                    trace.node = entry.get("node")
                    trace.api_reserved = parse_time(entry.get("reservedAt"))
                if state == "Released" and trace.released is None:
                    trace.released = now
                    trace.api_released = parse_time(entry.get("releasedAt"))
                    trace.api_reserved = trace.api_reserved or parse_time(entry.get("reservedAt"))
                    trace.node = trace.node or entry.get("node")

    def snapshot(self) -> list[GroupTrace]:
        with self._lock:
            return [GroupTrace(**{**g.__dict__, "tasks": list(g.tasks)}) for g in self.groups.values()]


#: The annotation a scheduler puts on an unbound WaitForFirstConsumer claim to have it provisioned on a node.
SELECTED_NODE = "volume.kubernetes.io/selected-node"


@dataclass
class ClaimTrace:
    """ClaimTrace is what one claim did, in wall-clock seconds (None: not seen).

    `selected` is when the selected-node annotation was first seen, `bound` when
    the claim was first seen Bound; `unselected` counts the times the annotation
    was seen gone or naming another node before the claim was Bound (a
    provisioner's "reschedule", or a scheduler's roll-back): selected → Bound
    then includes the new choice. `node` is the node named last.
    """

    name: str
    added: float | None = None
    selected: float | None = None
    node: str | None = None
    bound: float | None = None
    volume: str | None = None
    phase: str | None = None
    unselected: int = 0

    def observe(self, claim: Obj, now: float) -> None:
        """observe(claim, now) takes one watch event's copy of the claim, seen at `now`."""
        meta = claim.get("metadata") or {}
        node = (meta.get("annotations") or {}).get(SELECTED_NODE) or None
        if self.added is None:
            self.added = now
        if node != self.node and self.bound is None:
            if self.node is not None:
                self.unselected += 1
            self.node = node
            if node and self.selected is None:
                self.selected = now
        self.phase = (claim.get("status") or {}).get("phase")
        if self.phase == "Bound" and self.bound is None:
            self.bound = now
            self.volume = (claim.get("spec") or {}).get("volumeName")

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class ClaimTimeline:
    """ClaimTimeline keeps a ClaimTrace per claim of one namespace and label selector."""

    def __init__(self, kube: Kube, namespace: str, *, label_selector: str) -> None:
        self._stop = threading.Event()
        lister = raw_lister(kube.core.list_namespaced_persistent_volume_claim, namespace=namespace, label_selector=label_selector)
        self._informer = Informer(f"bench-claims-{namespace}", lister, stop=self._stop)
        self._informer.add_handler(self._on_event)
        self._lock = threading.Lock()
        self.claims: dict[str, ClaimTrace] = {}

    def start(self) -> None:
        self._informer.start()
        if not self._informer.wait_synced(60):
            raise RuntimeError("the benchmark's claim watch did not sync in 60 s")

    def stop(self) -> None:
        self._stop.set()

    def _on_event(self, kind: str, claim: Obj, old: Obj | None) -> None:
        now = time.time()
        name = (claim.get("metadata") or {}).get("name", "")
        with self._lock:
            trace = self.claims.setdefault(name, ClaimTrace(name))
            if kind != "DELETED":
                trace.observe(claim, now)

    def snapshot(self) -> list[ClaimTrace]:
        with self._lock:
            return [ClaimTrace(**c.__dict__) for c in self.claims.values()]


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def parent_of(stat_text: str) -> int:
    """parent_of('12 (my prog) S 7 ...') == 7: the ppid field of /proc/<pid>/stat (the name may hold spaces)."""
    return int(stat_text.rsplit(")", 1)[1].split()[1])


def descendants(pid: int, parents: dict[int, int]) -> list[int]:
    """descendants(1, {2: 1, 3: 2, 4: 9}) == [2, 3]: every process below pid, from a {pid: ppid} table."""
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return sorted(found)


def process_table(proc: str = "/proc") -> dict[int, int]:
    """process_table() is {pid: ppid} of every live process."""
    table = {}
    for entry in os.listdir(proc):
        if entry.isdigit():
            try:
                with open(f"{proc}/{entry}/stat") as handle:
                    table[int(entry)] = parent_of(handle.read())
            except (OSError, IndexError, ValueError):
                continue
    return table


def read_tree(pid: int) -> tuple[float, int, int] | None:
    """read_tree(pid) is read_proc() summed over pid and its live descendants (a user's command may be a wrapper).

    The reference and kube-scheduler are single processes, so for them it is read_proc(pid).
    """
    top = read_proc(pid)
    if top is None:
        return None
    cpu, rss, peak = top
    for child in descendants(pid, process_table()):
        found = read_proc(child)
        if found is not None:
            cpu, rss, peak = cpu + found[0], rss + found[1], peak + found[2]
    return cpu, rss, peak


def read_proc(pid: int) -> tuple[float, int, int] | None:
    """read_proc(pid) is (CPU seconds user+system, RSS bytes, peak RSS bytes) of a live process, else None.

    Children are not counted here (read_tree() adds them).
    """
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as handle:
            status = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in handle if ":" in line}
    except (OSError, IndexError):
        return None
    # fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    rss = int(status.get("VmRSS", "0 kB").split()[0]) * 1024
    peak = int(status.get("VmHWM", "0 kB").split()[0]) * 1024
    return cpu, rss, peak


class ProcSampler:
    """ProcSampler records (wall time, CPU seconds) of a pid every `every` seconds, and its peak RSS."""

    def __init__(self, pid: int, every: float = 0.25) -> None:
        self.pid = pid
        self.every = every
        self.samples: list[tuple[float, float]] = []
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"proc-{pid}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def sample(self) -> None:
        found = read_tree(self.pid)
        if found is not None:
            cpu, _, peak = found
            self.samples.append((time.time(), cpu))
            self.peak_rss = max(self.peak_rss, peak)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()
