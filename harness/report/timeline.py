"""timeline: one picture per scenario of which pod ran where, and what was reserved around it.

A scenario's story is told by two kinds of observation: pod snapshots
(name, node, phase) and ReservationRecord snapshots (each group's state,
node and peak). ``TimelineRecorder`` turns a time-ordered sequence of those
snapshots into ``PodInterval``s and ``ReservationBand``s; ``render_timeline``
draws them as one lane per node, time on the x axis, pods as bars coloured by
their final phase and labelled with their request (CPU and memory), and
reservations as translucent bands behind them. Under each node's bars two
strips show what the pods bound there request, CPU and memory, against the
node's allocatable. ``timeline_layout`` places all of it as plain data;
harness.report.timeline_svg writes that as SVG text.

Example::

    recorder = TimelineRecorder(origin=time.monotonic())
    # a sampler thread, every 0.25 s:
    recorder.observe_pods(time.monotonic(), core.list_namespaced_pod(ns).to_dict()["items"])
    recorder.observe_records(time.monotonic(), records_json)
    # after the scenario:
    recorder.finish(time.monotonic())  # the scenario's end, whatever happened last
    render_timeline(recorder.intervals(), recorder.bands(), nodes, out / "timeline.svg",
                    title="retry-same-node", until=recorder.ended)

The recorder is pure bookkeeping guarded by a lock: it makes no API call
(the caller fetches) and can be fed from any thread. Its times are seconds
from ``origin``; everything downstream reads them as seconds from the
scenario's start.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any

from kubernetes.utils.quantity import parse_quantity

from harness.errors import HarnessError
from harness.quantities import ZERO, Amount, pod_request, units_of
from harness.resource_names import amount_text, is_counted

UNSCHEDULED_LANE = "unscheduled"
"""UNSCHEDULED_LANE is the lane of pods not (yet) bound to a node."""

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
"""TERMINAL_PHASES end a pod's interval: the pod holds nothing on its node any more."""

RESERVED = "Reserved"
"""RESERVED is the group state a band is drawn for (docs/contract.md); any other state ends the band."""

PHASE_COLOURS: Mapping[str, str] = {
    "Pending": "#cfcfcf",
    "Running": "#8fb8e8",
    "Succeeded": "#93d493",
    "Failed": "#f09090",
    "Unknown": "#cdaae0",
}
"""PHASE_COLOURS fill pod bars by final phase; light enough that black labels stay readable."""

BAND_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
"""BAND_COLOURS colour reservation bands, one per record/group in order of first appearance."""

# Layout, in pixels at DPI: lanes are at least LANE_MIN_PX tall and grow by ROW_PX per extra row.
DPI = 100
WIDTH_PX = 1200
LANE_MIN_PX = 150
ROW_PX = 24
TOP_PX = 80
BOTTOM_PX = 55
LEFT_PX = 190
RIGHT_PX = 30
FONT_SIZE = 8  # in points, as matplotlib drew it: FONT_SIZE * DPI / 72 px
CHAR_PX = 6.6  # a DejaVu Sans character at FONT_SIZE, on average
LABEL_PAD_PX = 10


#: The colour of the line marking a contract violation.
VIOLATION_COLOUR = "#d62728"

#: The load strips: row units each strip takes at the foot of a node's lane, and their fills.
STRIP_UNITS = 1.0
STRIP_COLOUR = "#7f7f7f"
OVER_COLOUR = "#d62728"


@dataclass(frozen=True)
class PodInterval:
    """PodInterval is a stretch of time a pod spent on one node (or, with ``node`` None, waiting for one).

    ``end`` is None while the interval is still open; ``phase`` is the last
    phase seen in it; ``request`` is the pod's effective request as last seen
    (kube-scheduler's PodRequests: harness.quantities.pod_request), None when
    the snapshot had no containers to read it from. Example:
    ``PodInterval("run-1-build-pod", "node-a", 1.0, 4.0, "Succeeded", Amount(500, 2**30))``.
    """

    pod: str
    node: str | None
    start: float
    end: float | None
    phase: str
    request: Amount | None = None

    @property
    def label(self) -> str:
        """label is what the picture writes on the bar: ``"run-1-build-pod 500m, 1Gi"`` (``", example.com/gpu 1"`` after it for each other resource), or the name alone."""
        if self.request is None:
            return self.pod
        return f"{self.pod} {self.request.cpu}m, {memory_text(self.request.memory)}{others_text(self.request.others)}"


@dataclass(frozen=True)
class ReservationBand:
    """ReservationBand is a stretch of time a record's group was Reserved on one node.

    ``state`` is the state that ended it (``Released``, ``Pending``), or
    ``Reserved`` while open or when the record vanished. ``peak_cpu_millis``
    is the group's peak CPU in millicores; ``peak_others`` the peak's resources
    other than cpu and memory, e.g. ``(("example.com/gpu", 1),)``.
    """

    record: str
    group: str
    node: str
    start: float
    end: float | None
    state: str
    peak_cpu_millis: int
    peak_others: tuple[tuple[str, int], ...] = ()

    @property
    def label(self) -> str:
        """label is what the picture writes on the band, e.g. ``"run-1/source peak=3800m"``, ``"run-1/source peak=3800m, example.com/gpu 1"``."""
        return f"{self.record}/{self.group} peak={self.peak_cpu_millis}m{others_text(self.peak_others)}"


@dataclass(frozen=True)
class NodeCapacity:
    """NodeCapacity is a node's allocatable CPU (millicores) and memory (bytes), written under its lane's name.

    It is also the full height of the lane's two load strips: the pods bound
    there request that much at most, or the node is over-committed.
    """

    node: str
    cpu_millis: int
    memory_bytes: int = 0
    #: The node's other allocatable resources that are not 0, e.g. (("example.com/gpu", 2),).
    others: tuple[tuple[str, int], ...] = ()

    @property
    def label(self) -> str:
        """label is ``"4800m cpu, 8Gi"`` (memory left out when unknown), then the node's other resources: ``", ephemeral-storage 90Gi, example.com/gpu 2"``."""
        if not self.memory_bytes:
            return f"{self.cpu_millis}m cpu{others_text(self.others)}"
        return f"{self.cpu_millis}m cpu, {memory_text(self.memory_bytes)}{others_text(self.others)}"


def others_text(others: Sequence[tuple[str, int]]) -> str:
    """others_text((("example.com/gpu", 1),)) == ", example.com/gpu 1"; '' for none, so a label without them reads as before."""
    return "".join(f", {amount_text(name, amount)}" for name, amount in others)


def peak_others_of(peak: Any) -> tuple[tuple[str, int], ...]:
    """peak_others_of() reads a record's raw `peak` map into its resources other than cpu and memory; an unreadable entry is left out (the picture is for humans)."""
    values: dict[str, int] = {}
    for name, quantity in (peak.items() if isinstance(peak, Mapping) else ()):
        if name in ("cpu", "memory") or not is_counted(str(name)):
            continue
        try:
            values[str(name)] = units_of(str(name), quantity)
        except HarnessError:
            continue
    return Amount.of(values).others


def memory_text(amount: int) -> str:
    """memory_text writes bytes as the picture's labels do: whole Gi or Mi when exact, else Mi with one decimal.

    Example: ``memory_text(2**33) == "8Gi"``, ``memory_text(768 * 2**20) == "768Mi"``,
    ``memory_text(1536 * 2**20) == "1536Mi"``, ``memory_text(1000) == "0.0Mi"``.
    """
    if amount and amount % 2**30 == 0:
        return f"{amount // 2**30}Gi"
    if amount % 2**20 == 0:
        return f"{amount // 2**20}Mi"
    return f"{amount / 2**20:.1f}Mi"


def load_steps(pods: Sequence[PodInterval], node: str, until: float) -> list[tuple[float, Amount]]:
    """load_steps is the sum of the requests of the pods bound to ``node``, as (from this time on, total) steps.

    A pod counts from its bind to its end (a terminal phase or its deletion);
    an open interval runs to ``until``; a pod whose request is unknown counts
    nothing. The last step is at the latest end, with the total that remains.
    Example: a 500m pod on node-a over [1, 4] and a 1000m one over [2, 3] give
    ``[(1, 500m), (2, 1500m), (3, 500m), (4, 0)]``.
    """
    spans = [(i.start, i.end if i.end is not None else until, i.request or ZERO) for i in pods if i.node == node]
    times = sorted({t for start, end, _ in spans for t in (start, end)})
    steps: list[tuple[float, Amount]] = []
    for t in times:
        total = ZERO
        for start, end, request in spans:
            if start <= t < end:
                total = total + request
        if not steps or steps[-1][1] != total:
            steps.append((t, total))
    return steps


def cpu_millis(quantity: str | int | float | None) -> int:
    """cpu_millis reads a CPU quantity into millicores, rounded up; None or empty is 0.

    Example: ``cpu_millis("3800m") == 3800``, ``cpu_millis("1.5") == 1500``, ``cpu_millis("2") == 2000``.
    """
    if quantity is None or quantity == "":
        return 0
    cores: Decimal = parse_quantity(quantity)  # type: ignore[no-untyped-call]
    return int((cores * 1000).to_integral_value(rounding=ROUND_CEILING))


def _get(obj: Any, *keys: str) -> Any:
    """_get walks nested mappings, returning None at the first missing or non-mapping step."""
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


@dataclass
class _OpenPod:
    uid: str
    node: str | None
    start: float
    phase: str
    request: Amount | None = None


@dataclass
class _OpenBand:
    node: str
    start: float
    peak_cpu_millis: int
    peak_others: tuple[tuple[str, int], ...] = ()


class TimelineRecorder:
    """TimelineRecorder turns snapshots of pods and ReservationRecords into intervals and bands.

    Each ``observe_*`` call is a *complete* snapshot of the objects of
    interest at time ``t``: a pod or record missing from it is gone, and its
    open interval or band ends at ``t``. Snapshots must come in time order
    per kind; a late one (older than the last of its kind) is dropped and the
    call returns False, so a sampler thread racing a final observation from
    the test cannot rewrite history.

    Example: a pod first seen bound to node-a at t=1 and Succeeded at t=4 is
    ``PodInterval(pod, "node-a", 1, 4, "Succeeded")``; seen unbound at t=0
    before that, it also gets ``PodInterval(pod, None, 0, 1, "Pending")``.
    """

    def __init__(self, origin: float = 0.0) -> None:
        self.origin = origin
        self._lock = threading.Lock()
        self._last_pods: float | None = None
        self._last_records: float | None = None
        self._open_pods: dict[str, _OpenPod] = {}
        self._finished_pods: dict[str, str] = {}  # name -> uid of pods whose terminal phase is recorded
        self._pod_intervals: list[PodInterval] = []
        self._open_bands: dict[tuple[str, str], _OpenBand] = {}
        self._bands: list[ReservationBand] = []
        self._ended: float | None = None

    def finish(self, t: float) -> None:
        """finish marks the scenario's end at ``t``: the picture runs to it, not to the last change it saw."""
        with self._lock:
            self._ended = t - self.origin

    @property
    def ended(self) -> float | None:
        """ended is the scenario's end (from ``origin``) once ``finish`` was called, else the latest snapshot."""
        with self._lock:
            if self._ended is not None:
                return self._ended
        return self.latest

    @property
    def latest(self) -> float | None:
        """latest is the time of the last snapshot of either kind (from ``origin``), None before any."""
        with self._lock:
            times = [t for t in (self._last_pods, self._last_records) if t is not None]
            return max(times) if times else None

    def observe_pods(self, t: float, pods: Sequence[Mapping[str, Any]]) -> bool:
        """observe_pods records a snapshot of pod JSON (metadata.name/uid, spec.nodeName, status.phase)."""
        now = t - self.origin
        with self._lock:
            if self._last_pods is not None and now < self._last_pods:
                return False
            self._last_pods = now
            seen: set[str] = set()
            for pod in pods:
                name = _get(pod, "metadata", "name")
                if not isinstance(name, str) or not name:
                    continue
                seen.add(name)
                self._observe_pod(
                    now,
                    name,
                    uid=str(_get(pod, "metadata", "uid") or ""),
                    node=_get(pod, "spec", "nodeName") or None,
                    phase=str(_get(pod, "status", "phase") or "Pending"),
                    request=_request_of(pod),
                )
            for name in [n for n in self._open_pods if n not in seen]:
                self._close_pod(name, now)
            return True

    def _observe_pod(self, now: float, name: str, *, uid: str, node: str | None, phase: str, request: Amount | None) -> None:
        current = self._open_pods.get(name)
        if current is not None and uid and current.uid and uid != current.uid:
            self._close_pod(name, now)  # deleted and recreated between two snapshots
            current = None
        if current is None:
            finished_uid = self._finished_pods.get(name)
            if finished_uid is not None:
                if phase in TERMINAL_PHASES and (not uid or not finished_uid or uid == finished_uid):
                    return  # the same finished pod, seen again
                del self._finished_pods[name]  # a new pod under an old name
            current = self._open_pods[name] = _OpenPod(uid=uid, node=node, start=now, phase=phase)
        elif node != current.node:
            # Bound (a pod's node never changes otherwise): the wait ends, the run begins.
            self._close_pod(name, now)
            current = self._open_pods[name] = _OpenPod(uid=uid or current.uid, node=node, start=now, phase=phase)
        current.phase = phase
        if request is not None:
            current.request = request
        if phase in TERMINAL_PHASES:
            self._close_pod(name, now)
            self._finished_pods[name] = uid

    def _close_pod(self, name: str, now: float) -> None:
        current = self._open_pods.pop(name)
        self._pod_intervals.append(PodInterval(name, current.node, current.start, now, current.phase, current.request))

    def observe_records(self, t: float, records: Sequence[Mapping[str, Any]]) -> bool:
        """observe_records records a snapshot of ReservationRecord JSON.

        It reads metadata.name, spec.groups[].{name, peak.cpu} and
        status.groups[].{name, state, node}. A group's band opens when it is
        first seen Reserved on a node and closes when it leaves Reserved, moves
        to another node, or disappears.
        """
        now = t - self.origin
        with self._lock:
            if self._last_records is not None and now < self._last_records:
                return False
            self._last_records = now
            reserved: dict[tuple[str, str], tuple[str, int, tuple[tuple[str, int], ...]]] = {}
            ended: dict[tuple[str, str], str] = {}
            for record in records:
                name = _get(record, "metadata", "name")
                if not isinstance(name, str) or not name:
                    continue
                peaks = {
                    str(_get(g, "name")): (cpu_millis(_get(g, "peak", "cpu")), peak_others_of(_get(g, "peak")))
                    for g in _get(record, "spec", "groups") or ()
                    if _get(g, "name")
                }
                for group in _get(record, "status", "groups") or ():
                    group_name, state, node = _get(group, "name"), _get(group, "state"), _get(group, "node")
                    if not group_name:
                        continue
                    key = (name, str(group_name))
                    if state == RESERVED and node:
                        peak, others = peaks.get(str(group_name), (0, ()))
                        reserved[key] = (str(node), peak, others)
                    else:
                        ended[key] = str(state or "Pending")
            for key in list(self._open_bands):
                if key not in reserved or reserved[key][0] != self._open_bands[key].node:
                    self._close_band(key, now, ended.get(key, RESERVED))
            for key, (node, peak, others) in reserved.items():
                band = self._open_bands.get(key)
                if band is None:
                    self._open_bands[key] = _OpenBand(node=node, start=now, peak_cpu_millis=peak, peak_others=others)
                else:
                    band.peak_cpu_millis, band.peak_others = peak, others
            return True

    def _close_band(self, key: tuple[str, str], now: float, state: str) -> None:
        band = self._open_bands.pop(key)
        self._bands.append(ReservationBand(key[0], key[1], band.node, band.start, now, state, band.peak_cpu_millis, band.peak_others))

    def intervals(self) -> list[PodInterval]:
        """intervals is every pod interval so far, open ones with ``end`` None, ordered by start then pod."""
        with self._lock:
            result = list(self._pod_intervals) + [
                PodInterval(name, p.node, p.start, None, p.phase, p.request) for name, p in self._open_pods.items()
            ]
        return sorted(result, key=lambda i: (i.start, i.pod))

    def bands(self) -> list[ReservationBand]:
        """bands is every reservation band so far, open ones with ``end`` None, ordered by start then name."""
        with self._lock:
            result = list(self._bands) + [
                ReservationBand(record, group, b.node, b.start, None, RESERVED, b.peak_cpu_millis, b.peak_others)
                for (record, group), b in self._open_bands.items()
            ]
        return sorted(result, key=lambda b: (b.start, b.record, b.group))


def _request_of(pod: Mapping[str, Any]) -> Amount | None:
    """_request_of is the pod's effective request, None when the snapshot has no containers or an unreadable quantity."""
    if not _get(pod, "spec", "containers"):
        return None
    try:
        return pod_request(pod)
    except HarnessError:
        return None


# --- layout: where each thing goes, in seconds across and row units down, as plain data ---


#: A pod bar's height, in row units: a little under its row, so stacked bars stay two.
BAR_UNITS = 0.78


def _pack(extents: Sequence[tuple[float, float]], gap: float = 0.0) -> list[int]:
    """_pack gives each (start, end) extent the lowest row where it overlaps nothing; returns the rows in input order.

    Extents in one row are at least ``gap`` apart, so neighbouring bars stay
    visibly two. Example: ``_pack([(0, 2), (1, 3), (2, 4)]) == [0, 1, 0]``.
    """
    row_ends: list[float] = []
    rows = [0] * len(extents)
    for index in sorted(range(len(extents)), key=lambda i: extents[i]):
        start, end = extents[index]
        for row, row_end in enumerate(row_ends):
            if row_end + gap <= start:
                rows[index] = row
                row_ends[row] = end
                break
        else:
            rows[index] = len(row_ends)
            row_ends.append(end)
    return rows


def _label_seconds(text: str, seconds_per_px: float) -> float:
    return (len(text) * CHAR_PX + LABEL_PAD_PX) * seconds_per_px


@dataclass(frozen=True)
class Lane:
    """Lane is one node's stretch of the plot: from ``top`` down ``units`` row units, ``label`` its lines in the left margin."""

    name: str
    top: float
    units: float
    label: tuple[str, ...]


@dataclass(frozen=True)
class BandBox:
    """BandBox is a reservation band across its lane, from ``start`` for ``width`` seconds, its label centred on ``label_y``."""

    band: ReservationBand
    colour: str
    start: float
    width: float
    top: float
    height: float
    label_y: float


@dataclass(frozen=True)
class PodBar:
    """PodBar is a pod's bar, from ``start`` for ``width`` seconds, ``BAR_UNITS`` tall around ``centre``."""

    interval: PodInterval
    colour: str
    start: float
    width: float
    centre: float


@dataclass(frozen=True)
class StripStep:
    """StripStep is a stretch of a load strip filled to ``share`` of its height (at most 1), ``over`` the allocatable or not."""

    start: float
    end: float
    share: float
    over: bool


@dataclass(frozen=True)
class LoadStrip:
    """LoadStrip is one resource's strip at a lane's foot, from ``top`` to ``base`` (row units), with its steps and its text.

    A strip whose allocatable is unknown (0) keeps its two lines and has no steps and no text.
    """

    top: float
    base: float
    steps: tuple[StripStep, ...]
    text: str
    over: bool


@dataclass(frozen=True)
class TimelineLayout:
    """TimelineLayout is everything the picture draws, placed: x in seconds over [``t_start``, ``x_max``], y in row units down from the plot's top.

    ``t_end`` is where open intervals and the load strips stop; a pixel across
    is ``seconds_per_px`` seconds and a row unit is ``ROW_PX`` pixels down.
    """

    t_start: float
    t_end: float
    x_max: float
    seconds_per_px: float
    total_units: float
    lanes: tuple[Lane, ...]
    bands: tuple[BandBox, ...]
    pods: tuple[PodBar, ...]
    strips: tuple[LoadStrip, ...]
    marks: tuple[tuple[float, str], ...]
    #: Whether any node's allocatable is known: the legend then explains the strips.
    has_capacity: bool

    @property
    def height_px(self) -> float:
        """height_px is the whole picture's height: the plot's rows and the margins above and below."""
        return TOP_PX + BOTTOM_PX + self.total_units * ROW_PX


def timeline_layout(
    pods: Sequence[PodInterval],
    bands: Sequence[ReservationBand],
    nodes: Sequence[NodeCapacity],
    *,
    until: float | None = None,
    marks: Sequence[tuple[float, str]] = (),
) -> TimelineLayout:
    """timeline_layout places what ``render_timeline`` draws (its docstring says what and how); it draws nothing."""
    times = [0.0] + [t for i in pods for t in (i.start, i.end) if t is not None] + [t for t, _ in marks]
    times += [t for b in bands for t in (b.start, b.end) if t is not None]
    t_end = until if until is not None else max(times)
    t_start = min(times)
    if t_end - t_start <= 0:
        t_end = t_start + 1.0
    axes_px = WIDTH_PX - LEFT_PX - RIGHT_PX
    # A label may run past its bar: widen the axis so the longest one, on the latest start, still fits.
    # With f the label's share of the axis width, that start must lie in the first (1 - f) of it.
    longest = max([len(i.label) for i in pods] + [len(b.label) for b in bands] + [0])
    label_share = min(0.6, (longest * CHAR_PX + LABEL_PAD_PX) / axes_px)
    t_last_start = max([i.start for i in pods] + [b.start for b in bands] + [t_start])
    x_max = max(t_start + (t_end - t_start) * 1.04, t_start + (t_last_start - t_start) / (1 - label_share))
    seconds_per_px = (x_max - t_start) / axes_px
    min_width = 3 * seconds_per_px

    capacity = {n.node: n for n in nodes}
    lanes: list[str] = list(dict.fromkeys(n.node for n in nodes))
    extra = {i.node for i in pods if i.node is not None} | {b.node for b in bands}
    lanes += sorted(extra - set(lanes))
    if any(i.node is None for i in pods):
        lanes.append(UNSCHEDULED_LANE)

    def lane_of_pod(i: PodInterval) -> str:
        return i.node if i.node is not None else UNSCHEDULED_LANE

    def extent(start: float, end: float | None, label: str) -> tuple[float, float]:
        stop = max(end if end is not None else t_end, start + min_width)
        return start, max(stop, start + _label_seconds(label, seconds_per_px))

    band_colour: dict[tuple[str, str], str] = {}
    for b in sorted(bands, key=lambda b: (b.start, b.record, b.group)):
        band_colour.setdefault((b.record, b.group), BAND_COLOURS[len(band_colour) % len(BAND_COLOURS)])

    # Per lane: band label rows on top, then pod rows. Heights are in row units (ROW_PX each).
    lane_pods = {lane: [i for i in pods if lane_of_pod(i) == lane] for lane in lanes}
    lane_bands = {lane: [b for b in bands if b.node == lane] for lane in lanes}
    gap = 4 * seconds_per_px
    pod_rows = {lane: _pack([extent(i.start, i.end, i.label) for i in lane_pods[lane]], gap) for lane in lanes}
    band_rows = {lane: _pack([extent(b.start, b.end, b.label) for b in lane_bands[lane]], gap) for lane in lanes}
    min_units = LANE_MIN_PX / ROW_PX
    placed_lanes: list[Lane] = []
    boxes: list[BandBox] = []
    bars: list[PodBar] = []
    strips: list[LoadStrip] = []
    top = 0.0
    for lane in lanes:
        n_band_rows = max(band_rows[lane], default=-1) + 1
        used = n_band_rows + max(pod_rows[lane], default=-1) + 1 + (2 * STRIP_UNITS if lane in capacity else 0.0)
        units = max(min_units, used + 1.0)
        placed_lanes.append(Lane(lane, top, units, _lane_label(lane, capacity.get(lane))))
        for b, row in zip(lane_bands[lane], band_rows[lane], strict=True):
            end = b.end if b.end is not None else t_end
            boxes.append(BandBox(b, band_colour[(b.record, b.group)], b.start, max(end - b.start, min_width), top + 0.1, units - 0.2, top + 0.5 + row + 0.5))
        for i, row in zip(lane_pods[lane], pod_rows[lane], strict=True):
            end = i.end if i.end is not None else t_end
            colour = PHASE_COLOURS.get(i.phase, PHASE_COLOURS["Unknown"])
            bars.append(PodBar(i, colour, i.start, max(end - i.start, min_width), top + 0.5 + n_band_rows + row + 0.5))
        if lane in capacity:
            strips += _load_strips(load_steps(pods, lane, t_end), capacity[lane], top + units, t_end)
        top += units
    return TimelineLayout(
        t_start=t_start, t_end=t_end, x_max=x_max, seconds_per_px=seconds_per_px, total_units=max(top, min_units),
        lanes=tuple(placed_lanes), bands=tuple(boxes), pods=tuple(bars), strips=tuple(strips),
        marks=tuple(marks), has_capacity=bool(capacity),
    )


def _lane_label(lane: str, capacity: NodeCapacity | None) -> tuple[str, ...]:
    """_lane_label is the lines left of a lane: its node's name wrapped at hyphens, then its allocatable when known."""
    if lane == UNSCHEDULED_LANE:
        return (UNSCHEDULED_LANE,)
    name = tuple(_wrapped(lane).split("\n"))
    return name if capacity is None else (*name, "allocatable", capacity.label)


def _load_strips(steps: Sequence[tuple[float, Amount]], node: NodeCapacity, bottom: float, t_end: float) -> tuple[LoadStrip, LoadStrip]:
    """_load_strips places the CPU strip (upper) and the memory strip (lower) that end at ``bottom``.

    Each strip's full height is the node's allocatable of its resource (a
    thin black line at its top); the fill is the pods' summed request, capped
    at the strip, and red where it goes past the allocatable.
    """
    if not steps or steps[-1][0] < t_end:
        steps = [*steps, (t_end, steps[-1][1] if steps else ZERO)]
    kinds: tuple[tuple[str, int, list[int], Callable[[int], str]], ...] = (
        ("cpu", node.cpu_millis, [a.cpu for _, a in steps], _cpu_text),
        ("memory", node.memory_bytes, [a.memory for _, a in steps], memory_text),
    )
    strips: list[LoadStrip] = []
    for index, (name, allocatable, values, text) in enumerate(kinds):
        base = bottom - 0.1 - (1 - index) * STRIP_UNITS  # cpu above memory
        top = base - STRIP_UNITS * 0.8
        if allocatable <= 0:
            strips.append(LoadStrip(top, base, (), "", over=False))
            continue
        filled = tuple(
            StripStep(start, end, min(value / allocatable, 1.0), value > allocatable)
            for (start, _), (end, _), value in zip(steps, steps[1:], values, strict=False)
            if value > 0 and end > start
        )
        peak = max(values, default=0)
        label = f"{name} requested: at most {text(peak)} of {text(allocatable)} allocatable"
        strips.append(LoadStrip(top, base, filled, label, over=peak > allocatable))
    return strips[0], strips[1]


def render_timeline(
    pods: Sequence[PodInterval],
    bands: Sequence[ReservationBand],
    nodes: Sequence[NodeCapacity],
    path: Path | str,
    *,
    title: str,
    until: float | None = None,
    marks: Sequence[tuple[float, str]] = (),
) -> Path:
    """render_timeline draws the scenario's timeline as an SVG at ``path`` (which must end in .svg), and returns its path.

    One lane per node (``nodes`` first, in order, then any other node the
    pods or bands name, then ``UNSCHEDULED_LANE`` if a pod waited for one);
    time on the x axis in seconds from the scenario's start. Pods are bars
    labelled with their name and request (``PodInterval.label``) and filled
    by final phase; reservations are translucent bands across their lane
    labelled ``record/group peak=3800m``. A node of ``nodes`` has its
    allocatable under its name and, at the foot of its lane, two strips (CPU,
    then memory) whose full height is that allocatable, filled with the sum of
    the requests of the pods bound there (``load_steps``), red above it.
    Open intervals (``end`` None) run to ``until`` (default: the latest time
    seen) with a dashed edge. Each of ``marks`` (time, label) is a red
    vertical line: where the contract monitor saw a rule broken. Rows inside a lane are packed so that no two
    labels overlap; a lane is at least 150 px tall and grows with its rows.

    The SVG is written as text (harness.report.timeline_svg), its labels
    ``<text>`` a browser sets and a reader can search: a few milliseconds of
    CPU a picture, safe to call from any thread.
    """
    target = Path(path)
    if target.suffix != ".svg":
        raise HarnessError(f"timeline pictures are SVG: give a path ending in .svg, not {str(path)!r}")
    # Imported here: timeline_svg reads this module's colours and geometry, so it cannot be imported at the top.
    from harness.report.timeline_svg import timeline_svg

    svg = timeline_svg(timeline_layout(pods, bands, nodes, until=until, marks=marks), title=title)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(svg, encoding="utf-8")
    return target


def _cpu_text(millis: int) -> str:
    return f"{millis}m"


def _wrapped(lane: str, width: int = 22) -> str:
    """Long node names break at hyphens so the lane label fits the left margin."""
    import textwrap

    return "\n".join(textwrap.wrap(lane, width)) or lane
