"""latencies: how long the scheduler under test took, from the moments the contract monitor saw (harness.monitor.journal).

Three latencies, each in seconds on the monitor's clock, one sample per case:

- **claim**: a group's first pod created -> the group's first claim
  (`claimGeneration` 1) seen Reserved. A later claim (after a rollback or a
  lost node) answers a fault the scenario made, not a new group, and is not
  counted.
- **release**: the monitor's read first showed the group's release due
  (harness.monitor.release_due) -> the group seen Released. The monitor reads
  a run at most every 2 s, so a release that came before such a read has no
  sample, and each sample may fall short of the truth by up to one read
  interval: the figure understates, never overstates.
- **requeue**: room freed on a node (a pod there finished or gone, a group
  Reserved there left Reserved, its record gone) -> a pod that was waiting
  for room bound to that node. A pod waited for room when the scheduler had
  marked it unschedulable before the room was freed; the sample runs from the
  last such freeing on its node before its bind.

A case whose start or end the monitor never saw (a group never Reserved, a
release never seen due, a pod never marked unschedulable) gives no sample: it
is skipped, never counted as zero.

    latencies_of([PodCreated(1.0, "p", "ns", "run", "build"), GroupReserved(1.25, run, "run", "source", ("build",), 1)])
        == Latencies(claim=(0.25,))

The samples of a session's scenarios are pooled (`Latencies.pooled`) before
harness.report.timings sums them up; they travel from an xdist worker to its
controller as plain lists (`to_wire`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from harness.monitor.journal import (
    GroupReleased,
    GroupReserved,
    Moment,
    PodBound,
    PodCreated,
    PodUnschedulable,
    ReleaseDue,
    RoomFreed,
)

#: The latencies, by the names the wire and the report use.
NAMES = ("claim", "release", "requeue")

_GroupMoment = TypeVar("_GroupMoment", GroupReserved, GroupReleased)


@dataclass(frozen=True)
class Latencies:
    """Latencies holds the samples (seconds) of each latency, in the order their cases ended."""

    claim: tuple[float, ...] = ()
    release: tuple[float, ...] = ()
    requeue: tuple[float, ...] = ()

    @classmethod
    def pooled(cls, parts: Iterable[Latencies]) -> Latencies:
        """pooled() is every part's samples together: Latencies(claim=(1.0,)) and Latencies(claim=(2.0,)) pool to claim (1.0, 2.0)."""
        claim: list[float] = []
        release: list[float] = []
        requeue: list[float] = []
        for part in parts:
            claim += part.claim
            release += part.release
            requeue += part.requeue
        return cls(tuple(claim), tuple(release), tuple(requeue))

    def to_wire(self) -> dict[str, list[float]]:
        """to_wire() is plain data, for a test report's user_properties (xdist sends them to its controller)."""
        return {"claim": list(self.claim), "release": list(self.release), "requeue": list(self.requeue)}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Latencies:
        """from_wire() reads `to_wire`'s data; a latency it lacks has no samples."""
        return cls(*(tuple(float(s) for s in data.get(name) or ()) for name in NAMES))


def claim_latencies(moments: Sequence[Moment]) -> list[float]:
    """claim_latencies() is, per group's first claim, the seconds from its first pod's creation to the claim seen Reserved.

    A group's pods are those of its run (namespace, PipelineRun name and, when
    the pod's label names it, uid) whose task is one of the group's, created no
    later than the claim. Example: pods of `build` created at 1.0 and 3.0,
    group Reserved at 1.25: 0.25.
    """
    created = [m for m in moments if isinstance(m, PodCreated)]
    samples = []
    for claim in _first_of_each(m for m in moments if isinstance(m, GroupReserved) and m.generation == 1):
        births = [pod.at for pod in created if _of_group(pod, claim) and pod.at <= claim.at]
        if births:
            samples.append(claim.at - min(births))
    return samples


def _of_group(pod: PodCreated, claim: GroupReserved) -> bool:
    """_of_group() is True for a pod of the claim's run (an earlier run of the same name has another uid) and one of its group's tasks."""
    namespace, _, uid = claim.run
    same_run = (pod.namespace, pod.pipeline_run) == (namespace, claim.pipeline_run) and pod.pipeline_run_uid in (None, uid)
    return same_run and pod.task in claim.tasks


def release_latencies(moments: Sequence[Moment]) -> list[float]:
    """release_latencies() is, per group seen Released after its release was seen due, the seconds between the two.

    Example: due at 4.25, Released at 4.5: 0.25. Released at 4.0, before any
    read showed it due: no sample.
    """
    due = {(m.run, m.group): m.at for m in reversed(moments) if isinstance(m, ReleaseDue)}  # the first one wins
    samples = []
    for released in _first_of_each(m for m in moments if isinstance(m, GroupReleased)):
        since = due.get((released.run, released.group))
        if since is not None and since <= released.at:
            samples.append(released.at - since)
    return samples


def requeue_latencies(moments: Sequence[Moment]) -> list[float]:
    """requeue_latencies() is, per pod bound after waiting for room, the seconds from the room freed on its node to its bind.

    Example: marked unschedulable at 2.0; on n1 a pod finishes at 5.0 and a
    group is Released at 6.0; bound to n1 at 6.5: 0.5 (from the last freeing).
    A room freed before the mark, or on another node, does not count.
    """
    marked = {m.uid: m.at for m in reversed(moments) if isinstance(m, PodUnschedulable)}  # the first mark wins
    freed = [m for m in moments if isinstance(m, RoomFreed)]
    samples = []
    for bound in (m for m in moments if isinstance(m, PodBound)):
        since = marked.get(bound.uid)
        if since is None or since > bound.at:
            continue
        moments_freed = [f.at for f in freed if f.node == bound.node and since <= f.at <= bound.at]
        if moments_freed:
            samples.append(bound.at - max(moments_freed))
    return samples


def latencies_of(moments: Sequence[Moment]) -> Latencies:
    """latencies_of() is one scenario's three latencies from its journal's moments."""
    return Latencies(
        claim=tuple(claim_latencies(moments)), release=tuple(release_latencies(moments)), requeue=tuple(requeue_latencies(moments)),
    )


def _first_of_each(moments: Iterable[_GroupMoment]) -> list[_GroupMoment]:
    """_first_of_each() keeps the first moment of each group (run, group): the journal notes some twice (a second claim)."""
    seen: set[tuple[Any, str]] = set()
    kept = []
    for moment in moments:
        key = (moment.run, moment.group)
        if key not in seen:
            seen.add(key)
            kept.append(moment)
    return kept
