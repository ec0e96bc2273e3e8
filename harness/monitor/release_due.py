"""release_due: since when each Reserved group's release has been due, as the monitor has seen it, and which groups are late.

docs/contract.md section 8: a group MUST be Released once a release
condition holds, and SHOULD end promptly after that; the suite bounds
"promptly" with `release_late` (harness.timeouts), and the monitor's rule
`release-late` fails a group still Reserved longer than that after its
release was due.

*Since when* is what the monitor has seen, never a guess and never a sleep:
the first read of the run (harness.monitor.release_reads: its PipelineRun
and TaskRuns) whose answer made a release due (release_truth's `due`) stamps
the group with the monitor's clock as that answer arrived. The condition may
have held before (between two reads), never after, so the monitor's count of
the lateness can fall short of the truth by up to one read interval, never
exceed it. Tekton's timestamps (a TaskRun's `completionTime`, the run's) are
not used: they come from another clock than the monitor's, and a skipped
task has none.

Which runs are read, so that the API's load stays bounded: only a run with a
group that is Reserved, not yet seen due, and whose watched PipelineRun says
a release may be due (release_truth.release_may_be_due); each such run at
most every READ_EVERY_SECONDS, and the caller reads one run per pass (the
monitor and the auditor pass at most every 0.25 s: four runs a second at
most, two requests each). Once a group is seen due, its run is not read for
it again: every due reason is monotone (a done task stays done).

Nothing here calls the API; every function takes `now` (seconds on the
caller's monotonic clock), so the unit tests drive it with a fake clock.

    clock = ReleaseClock(limit=15.0)
    clock.next_read(records, pipeline_runs, now=3.0)        -> (record, ('source',)) or None
    clock.observe(record, {'source': frozenset({TASKS_DONE})}, now=3.1)
    clock.late(records, now=18.2)                           -> [Late(record, 'source', Due(3.1, {TASKS_DONE}))]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from harness.contract.record import Record, ReleaseReason, State
from harness.monitor.release_truth import release_may_be_due

Obj = Mapping[str, Any]
#: (namespace, record name, PipelineRun uid): one incarnation of a run's record.
RunKey = tuple[str, str, str]
#: (namespace, record name, PipelineRun uid, group).
GroupKey = tuple[str, str, str, str]

#: How often, at most, one run whose release may be due is read again.
READ_EVERY_SECONDS = 2.0


def run_key(record: Record) -> RunKey:
    return record.namespace, record.name, record.pipeline_run_uid


@dataclass(frozen=True)
class Due:
    """Due is when the monitor first saw a group's release due (its clock, seconds) and the reasons that were due then."""

    since: float
    reasons: frozenset[ReleaseReason]


@dataclass(frozen=True)
class Late:
    """Late is a group Reserved for longer than the limit after its release was seen due."""

    record: Record
    group: str
    due: Due


@dataclass
class ReleaseClock:
    """ReleaseClock remembers since when each group's release has been due, and when each run was last read.

    `limit` is `release_late`. A group is forgotten once it is Released or
    its record is gone (another uid is another incarnation).
    """

    limit: float
    every: float = READ_EVERY_SECONDS
    due: dict[GroupKey, Due] = field(default_factory=dict)
    read_at: dict[RunKey, float] = field(default_factory=dict)

    def settle(self, records: Iterable[Record]) -> None:
        """settle() forgets the groups Released since, and the records gone."""
        kept: set[GroupKey] = set()
        runs: set[RunKey] = set()
        for record in records:
            runs.add(run_key(record))
            kept.update((*run_key(record), s.name) for s in record.statuses if s.state is not State.RELEASED)
        self.due = {key: due for key, due in self.due.items() if key in kept}
        self.read_at = {key: at for key, at in self.read_at.items() if key in runs}

    def waiting(self, record: Record) -> tuple[str, ...]:
        """waiting() is the record's Reserved groups whose release the monitor has not seen due yet."""
        return tuple(s.name for s in record.statuses if s.state is State.RESERVED and (*run_key(record), s.name) not in self.due)

    def next_read(self, records: Iterable[Record], pipeline_runs: Mapping[tuple[str, str], Obj], *, now: float) -> tuple[Record, tuple[str, ...]] | None:
        """next_read() is the run to read now and its groups to ask about, or None.

        Of the records with a Reserved group not yet seen due whose watched
        PipelineRun (`pipeline_runs`, by namespace and name) says a release
        may be due, and not read within `every`: the one read longest ago
        (never read first).
        Example: a run whose group's last task is still running is read every
        2 s until its TaskRun shows it done, then no more.
        """
        candidates: list[tuple[float, str, Record, tuple[str, ...]]] = []
        for record in records:
            last = self.read_at.get(run_key(record))
            if last is not None and now - last < self.every:
                continue
            run = pipeline_runs.get((record.namespace, record.pipeline_run))
            groups = tuple(
                g for g in self.waiting(record)
                if release_may_be_due(run, record.group(g).tasks, record_uid=record.pipeline_run_uid)
            )
            if groups:
                candidates.append((-1.0 if last is None else last, record.key, record, groups))
        if not candidates:
            return None
        _, _, record, groups = min(candidates, key=lambda c: (c[0], c[1]))
        return record, groups

    def observe(self, record: Record, due: Mapping[str, frozenset[ReleaseReason]], *, now: float) -> None:
        """observe() takes a read's answer that arrived at `now` (what was due, by group; {} for a read that failed)."""
        self.read_at[run_key(record)] = now
        for group, reasons in due.items():
            if reasons:
                self.due.setdefault((*run_key(record), group), Due(now, frozenset(reasons)))

    def late(self, records: Iterable[Record], *, now: float) -> list[Late]:
        """late() is each group that is Reserved in `records` more than `limit` after its release was seen due."""
        found = []
        for record in records:
            for status in record.statuses:
                due = self.due.get((*run_key(record), status.name))
                if status.state is State.RESERVED and due is not None and now - due.since > self.limit:
                    found.append(Late(record, status.name, due))
        return found

    def running(self) -> bool:
        """running() is True while some group's release is seen due and not yet settled: a timer that may run out."""
        return bool(self.due)
