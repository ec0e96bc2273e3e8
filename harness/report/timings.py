"""timings: the ConformanceReport's `timings` block, how fast the implementation was over a whole session.

Figures for a reader comparing schedulers, never part of a verdict: no result
reads them. Each latency (claim, release, requeue; harness.monitor.latencies
defines them) is summed up over every sample of the session, every scenario
and every xdist worker pooled first, as::

    timings:
      claimSeconds: {count: 41, p50: 0.112, p99: 0.53, max: 0.53}
      releaseSeconds: {count: 9, p50: 0.204, p99: 1.377, max: 1.377}
      requeueSeconds: {count: 0, p50: null, p99: null, max: null}

A latency with no sample has count 0 and no figures (null), never zeros.

**Percentiles are nearest-rank**: of n samples sorted ascending, the p-th
percentile is the sample at rank ceil(p/100 * n), counting from 1. It is
always a sample that was measured, never an interpolation: of
[0.1, 0.2, 0.3, 0.4], p50 is 0.2 (rank 2); p99 is 0.4 (rank ceil(3.96) = 4);
of fewer than 100 samples p99 is the largest.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SECONDS_DECIMALS = 3
"""SECONDS_DECIMALS: figures are kept to the millisecond, so a report reads back equal to itself."""


def nearest_rank(samples: Sequence[float], percent: float) -> float:
    """nearest_rank([0.4, 0.1, 0.3, 0.2], 50) == 0.2: the sample at rank ceil(percent/100 * n) of the sorted samples.

    ValueError for no samples or a percent outside (0, 100].
    """
    if not samples:
        raise ValueError("nearest_rank needs at least one sample")
    if not 0 < percent <= 100:
        raise ValueError(f"percent {percent} is not in (0, 100]")
    ordered = sorted(samples)
    rank = math.ceil(percent / 100 * len(ordered))
    return ordered[max(rank, 1) - 1]


@dataclass(frozen=True)
class LatencySummary:
    """LatencySummary is one latency over a session: how many samples, their p50 and p99 (nearest-rank) and largest, in seconds.

    Example: ``LatencySummary.of([0.3, 0.1, 0.2])`` is ``LatencySummary(3, 0.2, 0.3, 0.3)``;
    ``LatencySummary.of([])`` is ``LatencySummary(0, None, None, None)``.
    """

    count: int
    p50: float | None = None
    p99: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, samples: Iterable[float]) -> LatencySummary:
        values = list(samples)
        if not values:
            return cls(0)
        return cls(
            len(values),
            round(nearest_rank(values, 50), SECONDS_DECIMALS),
            round(nearest_rank(values, 99), SECONDS_DECIMALS),
            round(max(values), SECONDS_DECIMALS),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"count": self.count, "p50": self.p50, "p99": self.p99, "max": self.max}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LatencySummary:
        def figure(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return cls(int(data["count"]), figure("p50"), figure("p99"), figure("max"))

    def describe(self) -> str:
        """describe() is one line for a reader: "p50 0.112s, p99 0.530s, max 0.530s (41 samples)", or "no sample"."""
        if self.count == 0 or self.p50 is None or self.p99 is None or self.max is None:
            return "no sample"
        return f"p50 {self.p50:.3f}s, p99 {self.p99:.3f}s, max {self.max:.3f}s ({self.count} sample{'s' if self.count != 1 else ''})"


@dataclass(frozen=True)
class Timings:
    """Timings is the `timings` block: the claim, release and requeue latencies of a session."""

    claim: LatencySummary
    release: LatencySummary
    requeue: LatencySummary

    @classmethod
    def of(cls, *, claim: Iterable[float], release: Iterable[float], requeue: Iterable[float]) -> Timings:
        """of() sums up a session's pooled samples of each latency."""
        return cls(LatencySummary.of(claim), LatencySummary.of(release), LatencySummary.of(requeue))

    def by_name(self) -> dict[str, LatencySummary]:
        """by_name() is {"claim": ..., "release": ..., "requeue": ...}, in that order."""
        return {"claim": self.claim, "release": self.release, "requeue": self.requeue}

    def to_dict(self) -> dict[str, Any]:
        """to_dict() is the `timings:` mapping, one `<name>Seconds` entry per latency."""
        return {f"{name}Seconds": summary.to_dict() for name, summary in self.by_name().items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Timings:
        return cls(*(LatencySummary.from_dict(data[f"{name}Seconds"]) for name in ("claim", "release", "requeue")))
