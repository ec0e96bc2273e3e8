"""Metrics: throughput and latency figures from timestamps, computed the way scheduler_perf does.

Every function here is pure: it takes wall-clock timestamps (seconds, float)
and returns numbers, so the report can be recomputed from the saved JSON.

Worked example: binds at 0.1, 0.5, 1.2, 1.3, 1.9 and 2.4 s give per-second
buckets [0, 1) -> 2, [1, 2) -> 3, [2, 2.4] -> 1 (the last, partial bucket is
dropped, as scheduler_perf only counts complete intervals), so the per-second
throughput samples are [2, 3]; the average is 6 pods / (2.4 - 0.1) s = 2.6 pods/s.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """percentile([1, 2, 3, 4], 50) == 2.5: linear interpolation between closest ranks (numpy's default).

    NaN for no values, so a missing measurement never looks like zero.
    """
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = math.ceil(rank)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))


def per_second_counts(times: Iterable[float], *, start: float | None = None) -> list[int]:
    """per_second_counts([0.1, 0.5, 1.2], start=0.0) == [2]: events per complete 1-s interval from start.

    start defaults to the first event. The last interval is kept only when it is
    complete (it ends at or before the last event), so a run's ragged end does
    not drag the percentiles down.
    """
    ordered = sorted(times)
    if not ordered:
        return []
    origin = ordered[0] if start is None else start
    last = ordered[-1]
    complete = int(math.floor(last - origin))
    if complete <= 0:
        return []
    counts = [0] * complete
    for t in ordered:
        index = int(math.floor(t - origin))
        if 0 <= index < complete:
            counts[index] += 1
    return counts


@dataclass(frozen=True)
class Throughput:
    """Throughput of one run: pods bound, over how long, and per-second percentiles (pods/s)."""

    pods: int
    seconds: float
    average: float
    p50: float
    p90: float
    p99: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def throughput(bind_times: Sequence[float], *, start: float | None = None) -> Throughput:
    """throughput(bind times) is pods/s between `start` (default: the first bind) and the last bind.

    Example: see the module docstring (average 2.6, per-second samples [2, 3]).
    With a single bind the duration is zero and the average NaN.
    """
    if not bind_times:
        return Throughput(0, 0.0, math.nan, math.nan, math.nan, math.nan)
    origin = min(bind_times) if start is None else start
    seconds = max(bind_times) - origin
    average = len(bind_times) / seconds if seconds > 0 else math.nan
    samples = [float(c) for c in per_second_counts(bind_times, start=origin)]
    return Throughput(
        len(bind_times), seconds, average, percentile(samples, 50), percentile(samples, 90), percentile(samples, 99)
    )


@dataclass(frozen=True)
class Latency:
    """Latency of one run, seconds: creation to bound, over the pods that were bound."""

    count: int
    p50: float
    p90: float
    p99: float
    max: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def latency(pairs: Iterable[tuple[float | None, float | None]]) -> Latency:
    """latency([(created, bound), ...]) summarises bound - created; pairs missing either end are skipped.

    Example: latency([(0.0, 0.1), (1.0, 1.3), (2.0, None)]) counts 2 pods, p50 0.2 s.
    """
    values = [b - c for c, b in pairs if c is not None and b is not None]
    return Latency(len(values), percentile(values, 50), percentile(values, 90), percentile(values, 99), max(values, default=math.nan))


def ratio(numerator: float, denominator: float) -> float:
    """ratio(30, 60) == 0.5 (reference / kube-scheduler); NaN when either side is missing or zero."""
    if denominator == 0 or math.isnan(numerator) or math.isnan(denominator):
        return math.nan
    return numerator / denominator


def cdf(values: Sequence[float]) -> tuple[list[float], list[float]]:
    """cdf([3, 1, 2]) == ([1, 2, 3], [1/3, 2/3, 1]): the points of an empirical CDF, for plotting."""
    ordered = sorted(values)
    n = len(ordered)
    return [float(v) for v in ordered], [(i + 1) / n for i in range(n)]


@dataclass(frozen=True)
class Interval:
    """Interval is [start, end) in seconds; `end` None means still open at the end of the run."""

    start: float
    end: float | None


def cpu_seconds_used(samples: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """cpu_seconds_used(samples of (wall time, cumulative CPU s), start, end) is the CPU spent in [start, end].

    Interpolates linearly between the samples around each end, clamping to the
    first and last sample. Example: samples [(0, 0), (10, 5)] and the window
    [2, 6] give 2.0 CPU seconds.
    """
    if not samples:
        return math.nan

    def at(t: float) -> float:
        if t <= samples[0][0]:
            return samples[0][1]
        for (t0, c0), (t1, c1) in zip(samples, samples[1:]):
            if t0 <= t <= t1:
                return c0 if t1 == t0 else c0 + (c1 - c0) * (t - t0) / (t1 - t0)
        return samples[-1][1]

    return at(end) - at(start)


def wasted_reservation(
    reserved: Sequence[tuple[float, Interval]], used: Sequence[tuple[float, Interval]], *, run_end: float
) -> tuple[float, float]:
    """wasted_reservation(reserved, used, run_end) is (reserved CPU·s, reserved-but-unused CPU·s) of one group.

    `reserved` is [(peak CPU cores, interval the group was Reserved)], `used` is
    [(request CPU cores, interval the pod ran)]. Open intervals end at run_end.
    The waste is the reserved area minus the part of the pods' area that falls
    inside a reserved interval, never negative.

    Example: a 3-core peak held for 10 s (30 CPU·s) while a 0.5-core pod ran
    4 s and a 3-core pod ran 4 s inside it: 30 - 2 - 12 = 16 CPU·s wasted.
    """
    total = 0.0
    used_inside = 0.0
    for peak, interval in reserved:
        r0, r1 = interval.start, interval.end if interval.end is not None else run_end
        if r1 <= r0:
            continue
        total += peak * (r1 - r0)
        for request, pod in used:
            p0, p1 = pod.start, pod.end if pod.end is not None else run_end
            overlap = min(r1, p1) - max(r0, p0)
            if overlap > 0:
                used_inside += min(request, peak) * overlap
    return total, max(0.0, total - used_inside)
