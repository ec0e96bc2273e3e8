"""SchedulingQueue: which pod to try next, modelled on kube-scheduler's three queues.

- active: pods ready to be tried, oldest first;
- backoff: pods that failed recently and wait out an exponential backoff;
  a pod that a cluster event moved there is tried at once when no pod is
  active (kube-scheduler's SchedulerPopFromBackoffQ): its room may have just
  been freed, and an idle scheduler gains nothing by waiting. A pod backing
  off after an error or a conflict waits its backoff out;
- unschedulable: pods that failed and wait for a cluster event that could help
  (a hint says Queue); they are also flushed after UNSCHEDULABLE_FLUSH_SECONDS
  so that a missed event never strands a pod.

Keys are (namespace, name). A pod is in at most one queue; `done()` must follow
every `pop()`, so an event that arrives while the pod is being tried moves it
back to active instead of being lost.

Only a pod still being decided (popped, not yet `binding()` nor `done()`) has the
events weighed for it while in flight: the event's mark matters only to a try that
ends unschedulable, and a try past its decision (claimed, assumed, bound by a worker)
ends bound or backs off, never parked. A sibling taken along with a claim
(`take()`) is placed with it or given back untried, so no event is weighed for it
either. Weighing every in-flight pod cost a hint per pod bound but not yet confirmed
on every event, which at QPS 50 is the whole backlog.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

PodKey = tuple[str, str]

INITIAL_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0
UNSCHEDULABLE_FLUSH_SECONDS = 60.0


@dataclass
class _Entry:
    attempts: int = 0
    added_at: float = field(default_factory=time.monotonic)
    #: When its last try ended: the backoff counts from there, as in kube-scheduler.
    last_tried: float | None = None


class SchedulingQueue:
    """SchedulingQueue is thread-safe: informer threads add and move, the scheduling loop pops."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._entries: dict[PodKey, _Entry] = {}
        self._active: list[tuple[float, int, PodKey]] = []
        self._active_keys: set[PodKey] = set()
        self._backoff: dict[PodKey, float] = {}
        #: Pods in backoff because an event (or the periodic flush) moved them: poppable while active is empty.
        self._moved_by_event: set[PodKey] = set()
        self._unschedulable: dict[PodKey, float] = {}
        self._in_flight: set[PodKey] = set()
        #: Popped pods whose try can still end unschedulable: the only ones events are weighed for in flight.
        self._deciding: set[PodKey] = set()
        self._moved_while_in_flight: set[PodKey] = set()
        self._seq = itertools.count()
        self._closed = False

    # --- producers ---

    def add(self, key: PodKey) -> None:
        """add() queues a new or changed pending pod for an immediate try."""
        with self._cond:
            if key in self._in_flight:
                self._moved_while_in_flight.add(key)
                return
            entry = self._entries.setdefault(key, _Entry())
            self._leave_backoff(key)
            self._unschedulable.pop(key, None)
            self._push_active(key, entry)

    def forget(self, key: PodKey) -> None:
        """forget() drops a pod that was bound, deleted or is no longer ours."""
        with self._cond:
            self._entries.pop(key, None)
            self._leave_backoff(key)
            self._unschedulable.pop(key, None)
            self._active_keys.discard(key)
            self._moved_while_in_flight.discard(key)

    def move_unschedulable(self, should_move: Callable[[PodKey], bool]) -> int:
        """move_unschedulable() moves the unschedulable pods a cluster event may help to backoff/active.

        `should_move` runs without the lock (a hint may read caches and check
        nodes); a pod that left the set meanwhile is left where it is now.
        """
        with self._cond:
            parked = list(self._unschedulable)
            deciding = list(self._deciding)
        chosen = [key for key in parked if should_move(key)]
        retried = [key for key in deciding if should_move(key)]
        with self._cond:
            for key in retried:
                if key in self._in_flight:
                    self._moved_while_in_flight.add(key)
                else:
                    chosen.append(key)  # its try ended while the hint ran: it may be parked now
            moved = [key for key in chosen if self._unschedulable.pop(key, None) is not None]
            for key in moved:
                self._requeue_after_backoff(key, moved_by_event=True)
            if moved:
                self._cond.notify_all()
            return len(moved)

    def waiting_for_events(self) -> bool:
        """waiting_for_events() is True while an event may move a pod: one is parked unschedulable or being decided.

        When False, a hint has nothing to move and need not be asked: a pod popped later
        reads caches that already hold the event (informers update their store first).
        """
        with self._cond:
            return bool(self._unschedulable or self._deciding)

    # --- consumer ---

    def pop(self, timeout: float) -> PodKey | None:
        """pop() returns the next pod to try, or None after timeout (or when closed)."""
        deadline = self._clock() + timeout
        with self._cond:
            while not self._closed:
                self._promote_due()
                if not self._active_keys:
                    self._promote_one_moved_by_event()
                while self._active:
                    _, _, key = heapq.heappop(self._active)
                    if key in self._active_keys:
                        self._active_keys.discard(key)
                        self._in_flight.add(key)
                        self._deciding.add(key)
                        self._entries.setdefault(key, _Entry()).attempts += 1
                        return key
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return None
                self._cond.wait(min(remaining, self._next_due_in()))
            return None

    def take(self, key: PodKey) -> bool:
        """take() pops this very pod if it waits in active (a sibling placed with its group's claim); False otherwise.

        Pods in backoff or parked unschedulable are not taken: they wait for a reason.
        `done()` (or `give_back()`) must follow, as after `pop()`.
        """
        with self._cond:
            if key not in self._active_keys:
                return False
            self._active_keys.discard(key)  # its heap entry is skipped by pop()
            self._in_flight.add(key)
            self._entries.setdefault(key, _Entry()).attempts += 1
            return True

    def give_back(self, key: PodKey) -> None:
        """give_back() returns a taken pod to active, untried: it was not placed after all."""
        with self._cond:
            self._in_flight.discard(key)
            self._moved_while_in_flight.discard(key)
            entry = self._entries.get(key)
            if entry is None:
                return  # forgotten meanwhile (deleted, or no longer ours)
            entry.attempts = max(0, entry.attempts - 1)
            self._push_active(key, entry)

    def binding(self, key: PodKey) -> None:
        """binding() says the pod's try is past its decision: it ends bound or backs off (`done()` follows), never unschedulable.

        From now on no event is weighed for it (see the module docstring): whether an event
        could have helped it matters only to a try that ends unschedulable.
        """
        with self._cond:
            self._deciding.discard(key)

    def done(self, key: PodKey, *, unschedulable: bool, retry_soon: bool = False) -> None:
        """done() ends a try: unschedulable pods wait for an event; `retry_soon` (a conflict) backs off."""
        with self._cond:
            self._in_flight.discard(key)
            self._deciding.discard(key)
            moved = key in self._moved_while_in_flight
            self._moved_while_in_flight.discard(key)
            if key not in self._entries:
                return
            self._entries[key].last_tried = self._clock()
            if not unschedulable and not retry_soon:
                self._entries.pop(key, None)
                return
            if retry_soon or moved:
                self._requeue_after_backoff(key, moved_by_event=moved and not retry_soon)
            else:
                self._unschedulable[key] = self._clock()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # --- introspection (metrics, tests) ---

    def lengths(self) -> dict[str, int]:
        with self._cond:
            return {
                "active": len(self._active_keys),
                "backoff": len(self._backoff),
                "unschedulable": len(self._unschedulable),
            }

    # --- internals (hold the lock) ---

    def _push_active(self, key: PodKey, entry: _Entry) -> None:
        if key in self._active_keys:
            return
        self._active_keys.add(key)
        heapq.heappush(self._active, (entry.added_at, next(self._seq), key))
        self._cond.notify_all()

    def _requeue_after_backoff(self, key: PodKey, *, moved_by_event: bool) -> None:
        # A pod parked longer than its backoff goes straight to active: the wait already served it.
        entry = self._entries.setdefault(key, _Entry())
        delay = min(MAX_BACKOFF_SECONDS, INITIAL_BACKOFF_SECONDS * (2 ** max(0, entry.attempts - 1)))
        now = self._clock()
        due = (entry.last_tried if entry.last_tried is not None else now) + delay
        if due <= now:
            self._push_active(key, entry)
        else:
            self._backoff[key] = due
            if moved_by_event:
                self._moved_by_event.add(key)
            self._cond.notify_all()

    def _leave_backoff(self, key: PodKey) -> None:
        self._backoff.pop(key, None)
        self._moved_by_event.discard(key)

    def _promote_due(self) -> None:
        now = self._clock()
        for key, due in list(self._backoff.items()):
            if due <= now:
                self._leave_backoff(key)
                self._push_active(key, self._entries.setdefault(key, _Entry()))
        for key, since in list(self._unschedulable.items()):
            if now - since >= UNSCHEDULABLE_FLUSH_SECONDS:
                del self._unschedulable[key]
                self._requeue_after_backoff(key, moved_by_event=True)

    def _promote_one_moved_by_event(self) -> None:
        # The queue is otherwise idle: the event-moved pod due soonest is tried now.
        if not self._moved_by_event:
            return
        key = min(self._moved_by_event, key=lambda k: (self._backoff[k], k))
        self._leave_backoff(key)
        self._push_active(key, self._entries.setdefault(key, _Entry()))

    def _next_due_in(self) -> float:
        now = self._clock()
        candidates = [due - now for due in self._backoff.values()]
        candidates += [since + UNSCHEDULABLE_FLUSH_SECONDS - now for since in self._unschedulable.values()]
        return max(0.05, min(candidates, default=1.0))
