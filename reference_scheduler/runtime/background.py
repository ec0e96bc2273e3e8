"""Background: a few daemon threads that run submitted writes, so the scheduling loop never waits for them.

kube-scheduler binds on a goroutine per pod while its loop starts the next pod; the
reference hands its binds (and, on a single thread of its own, its active-label writes)
to a `Background` for the same reason, and so do its Events. With `threads=1` the work runs
in submission order, which the label writes need. A task that raises is logged and the
thread goes on.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Callable

log = logging.getLogger("tkn-scheduler.background")


class Background:
    """Background(name, threads) runs `submit()`ted callables on `threads` daemon threads."""

    def __init__(self, name: str, *, threads: int, max_pending: int = 0) -> None:
        self._tasks: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=max_pending)
        self._idle = threading.Condition()
        self._running = 0
        for i in range(threads):
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True).start()

    def submit(self, task: Callable[[], None]) -> bool:
        """submit() queues the task; False (and the task dropped) when `max_pending` tasks already wait."""
        with self._idle:
            self._running += 1
        try:
            self._tasks.put_nowait(task)
        except queue.Full:
            with self._idle:
                self._running -= 1
            return False
        return True

    def wait_idle(self, timeout: float) -> bool:
        """wait_idle() is True once every submitted task has finished (False after `timeout` seconds)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._running == 0, timeout)

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            try:
                task()
            except Exception:  # noqa: BLE001 - one failed write must never stop the others
                log.exception("a background write failed")
            finally:
                with self._idle:
                    self._running -= 1
                    self._idle.notify_all()
