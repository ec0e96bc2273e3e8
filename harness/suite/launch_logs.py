"""Each launch of the scheduler under test, its log copied next to the reports.

A scheduler the suite starts logs to the cluster's folder, one file per
process name, appended at every launch (a restart, the replicas of a failover
scenario, the session's scheduler started again after them) and wiped when
the cluster is recreated. A scenario whose cause lies only in that log (a pod
pinned to another scenario's node) could not be explained afterwards. So the
suite notes where in its log each launch began, and copies each launch's part
to `<report dir>/scheduler-logs/<process>-<n>.log` (`tkn-scheduler-gw0-2.log`:
worker gw0's scheduler, its second launch) after every scenario and at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: The folder beside --report-output's report that holds the copies.
LOGS_DIR_NAME = "scheduler-logs"


@dataclass(frozen=True)
class Launch:
    """Launch is one start of a process: the log it appends to, the log's size then, and which launch of its label it is."""

    log_file: Path
    offset: int
    label: str
    number: int

    @property
    def copy_name(self) -> str:
        """copy_name is 'tkn-scheduler-gw0-2.log' for the second launch labelled tkn-scheduler-gw0."""
        return f"{self.label}-{self.number}.log"


@dataclass(frozen=True)
class Segment:
    """Segment is a launch's part of its log: bytes [start, end) of log_file, end None for the rest of the file."""

    launch: Launch
    start: int
    end: int | None


def segments(launches: list[Launch]) -> list[Segment]:
    """segments() cuts each log at the next launch into the same log: that launch's part ends where the next begins.

    Example: launches at offsets 0 and 900 of one log give [0, 900) and [900, end of file).
    """
    cut: list[Segment] = []
    for index, launch in enumerate(launches):
        later = [other.offset for other in launches[index + 1:] if other.log_file == launch.log_file]
        cut.append(Segment(launch, launch.offset, later[0] if later else None))
    return cut


def read_segment(segment: Segment) -> bytes:
    """read_segment() is the launch's bytes; b'' once the log is gone or shorter (the cluster was recreated)."""
    try:
        with segment.launch.log_file.open("rb") as log:
            log.seek(segment.start)
            return log.read() if segment.end is None else log.read(max(0, segment.end - segment.start))
    except OSError:
        return b""


@dataclass
class LaunchLogs:
    """LaunchLogs remembers each launch of the scheduler's processes and copies their logs next to the reports."""

    #: The folder the copies go to (`<report dir>/scheduler-logs`); None copies nothing (no --report-output).
    directory: Path | None = None
    launches: list[Launch] = field(default_factory=list)

    def starting(self, log_file: Path, label: str) -> None:
        """starting() notes a launch about to begin: called before the process starts, so its first line is in its part."""
        offset = log_file.stat().st_size if log_file.is_file() else 0
        number = 1 + sum(1 for launch in self.launches if launch.label == label)
        self.launches.append(Launch(log_file, offset, label, number))

    def copy(self) -> list[Path]:
        """copy() writes every launch's part that is new or has grown since the last copy; returns the files written."""
        if self.directory is None:
            return []
        written = []
        for segment in segments(self.launches):
            target = self.directory / segment.launch.copy_name
            data = read_segment(segment)
            if target.is_file() and target.stat().st_size == len(data):
                continue  # a finished launch's part never changes; a running one's only grows
            self.directory.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written.append(target)
        return written
