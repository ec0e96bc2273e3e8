"""timeline_sampler: a TimelineRecorder fed from a thread of its own, every few seconds, while a `with` block runs.

The scenarios' timeline (harness.suite.session) and the replay's pictures
(harness.replay.pictures) read different things the same way: pods and
records, now and then, into one recorder; once more when the block ends, so
the picture spans all of it. A subclass says what a sample reads (`read()`).
A failed read is skipped: a missed sample only coarsens the picture, which is
for reading only and never decides a verdict.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Sequence

from harness.report.timeline import TimelineRecorder

log = logging.getLogger("rescon.timeline")

Obj = dict[str, Any]


class TimelineSampler:
    """TimelineSampler records `read()`'s pods and records every `seconds` between __enter__ and __exit__."""

    def __init__(self, *, seconds: float, name: str) -> None:
        self.recorder = TimelineRecorder()
        self.started = time.monotonic()
        self._seconds = seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def __enter__(self) -> TimelineSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        # A read under way when the block ends is let finish (a slow LIST on a busy machine), within bounds.
        self._thread.join(timeout=max(5.0, self._seconds * 5))
        self.sample()
        self.recorder.finish(self.now())  # the picture spans the whole block

    def now(self) -> float:
        return time.monotonic() - self.started

    def read(self) -> tuple[Sequence[Obj], Sequence[Obj]]:
        """read() is (pods, records) as they are now."""
        raise NotImplementedError

    def observed(self, pods: Sequence[Obj]) -> None:
        """observed() sees each sample's pods before the recorder does; nothing by default."""

    def sample(self) -> None:
        """sample() records what read() returns now; a failed read is skipped."""
        try:
            pods, records = self.read()
        except Exception as err:  # noqa: BLE001 - a missed sample only coarsens the picture
            log.debug("timeline sample failed: %s", err)
            return
        t = self.now()
        self.observed(pods)
        self.recorder.observe_pods(t, pods)
        self.recorder.observe_records(t, records)

    def _loop(self) -> None:
        while not self._stop.wait(self._seconds):
            self.sample()
