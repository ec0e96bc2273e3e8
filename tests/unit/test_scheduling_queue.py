"""SchedulingQueue: ordering, backoff, unschedulable moves, and events during a try."""

from __future__ import annotations

import pytest

from reference_scheduler.runtime.queue import INITIAL_BACKOFF_SECONDS, UNSCHEDULABLE_FLUSH_SECONDS, SchedulingQueue

pytestmark = pytest.mark.unit


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_pops_oldest_first() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    clock.now += 1
    queue.add(("ns", "b"))
    assert queue.pop(0) == ("ns", "a")
    assert queue.pop(0) == ("ns", "b")
    assert queue.pop(0) is None


def test_unschedulable_pod_waits_for_an_event() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    assert key is not None
    queue.done(key, unschedulable=True)
    assert queue.pop(0) is None
    assert queue.lengths()["unschedulable"] == 1
    assert queue.move_unschedulable(lambda k: False) == 0
    assert queue.move_unschedulable(lambda k: k == ("ns", "a")) == 1
    clock.now += INITIAL_BACKOFF_SECONDS
    assert queue.pop(0) == ("ns", "a")


def test_unschedulable_pods_are_flushed_eventually() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    queue.done(queue.pop(0) or ("", ""), unschedulable=True)
    clock.now += UNSCHEDULABLE_FLUSH_SECONDS - 0.01
    assert queue.pop(0) is None
    clock.now += 0.01
    assert queue.pop(0) == ("ns", "a")  # its backoff ran out long ago: straight to active


def test_event_during_a_try_is_not_lost() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    assert key == ("ns", "a")
    queue.move_unschedulable(lambda k: True)  # a node was added while we were filtering
    queue.done(key, unschedulable=True)
    assert queue.lengths()["unschedulable"] == 0
    clock.now += INITIAL_BACKOFF_SECONDS
    assert queue.pop(0) == ("ns", "a")


def test_backoff_grows_and_is_capped() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    waits = []
    for _ in range(7):
        assert key == ("ns", "a")
        queue.done(key, unschedulable=False, retry_soon=True)
        waited = 0.0
        while (key := queue.pop(0)) is None:
            clock.now += 0.5
            waited += 0.5
        waits.append(waited)
    assert waits == sorted(waits)
    assert waits[0] == INITIAL_BACKOFF_SECONDS
    assert waits[-1] == 10.0


def test_success_forgets_the_pod() -> None:
    queue = SchedulingQueue(FakeClock())
    queue.add(("ns", "a"))
    key = queue.pop(0)
    assert key is not None
    queue.done(key, unschedulable=False)
    assert queue.lengths() == {"active": 0, "backoff": 0, "unschedulable": 0}


def test_a_try_that_ends_while_a_hint_runs_is_still_moved() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    assert key == ("ns", "a")

    def hint(candidate: tuple[str, str]) -> bool:
        queue.done(candidate, unschedulable=True)  # the loop finishes the try meanwhile: the hint runs unlocked
        return True

    assert queue.move_unschedulable(hint) == 1
    assert queue.lengths()["unschedulable"] == 0
    clock.now += INITIAL_BACKOFF_SECONDS
    assert queue.pop(0) == ("ns", "a")


def test_a_pod_parked_longer_than_its_backoff_is_tried_as_soon_as_it_is_moved() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    queue.done(queue.pop(0) or ("", ""), unschedulable=True)
    clock.now += 5 * INITIAL_BACKOFF_SECONDS  # parked, waiting for an event, longer than its backoff
    assert queue.move_unschedulable(lambda k: True) == 1
    assert queue.pop(0) == ("ns", "a")


def test_the_backoff_counts_from_the_end_of_the_last_try() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    clock.now += 3.0  # a slow try: the backoff starts when it ends
    queue.done(key or ("", ""), unschedulable=False, retry_soon=True)
    clock.now += INITIAL_BACKOFF_SECONDS / 2
    assert queue.pop(0) is None  # half its backoff left
    clock.now += INITIAL_BACKOFF_SECONDS / 2
    assert queue.pop(0) == ("ns", "a")


def test_an_event_moved_pod_is_tried_at_once_when_nothing_else_is_active() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    queue.done(queue.pop(0) or ("", ""), unschedulable=True)
    clock.now += INITIAL_BACKOFF_SECONDS / 10  # its backoff has barely started
    assert queue.move_unschedulable(lambda k: True) == 1
    assert queue.lengths()["backoff"] == 1
    assert queue.pop(0) == ("ns", "a")  # the queue is idle: the freed room is tried now
    assert queue.lengths() == {"active": 0, "backoff": 0, "unschedulable": 0}


def test_an_event_moved_pod_waits_behind_active_pods() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    queue.done(queue.pop(0) or ("", ""), unschedulable=True)
    queue.move_unschedulable(lambda k: True)
    queue.add(("ns", "b"))
    queue.add(("ns", "c"))
    assert queue.pop(0) == ("ns", "b")
    assert queue.pop(0) == ("ns", "c")
    assert queue.pop(0) == ("ns", "a")


def test_a_pod_backing_off_after_an_error_waits_even_when_idle() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    queue.done(queue.pop(0) or ("", ""), unschedulable=False, retry_soon=True)
    assert queue.pop(0) is None
    clock.now += INITIAL_BACKOFF_SECONDS
    assert queue.pop(0) == ("ns", "a")


def test_an_event_during_a_try_makes_the_pod_poppable_when_idle() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    queue.move_unschedulable(lambda k: True)  # room freed while it was being tried
    queue.done(key or ("", ""), unschedulable=True)
    assert queue.pop(0) == ("ns", "a")


def test_idle_pops_take_the_event_moved_pod_due_soonest() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    for name in ("a", "b"):
        queue.add(("ns", name))
    first, second = queue.pop(0), queue.pop(0)
    queue.done(second or ("", ""), unschedulable=True)  # b ends its try first
    clock.now += 0.1
    queue.done(first or ("", ""), unschedulable=True)
    queue.move_unschedulable(lambda k: True)
    assert queue.pop(0) == ("ns", "b")
    assert queue.pop(0) == ("ns", "a")


def test_forget_drops_an_event_moved_pod_from_backoff() -> None:
    queue = SchedulingQueue(FakeClock())
    queue.add(("ns", "a"))
    queue.done(queue.pop(0) or ("", ""), unschedulable=True)
    queue.move_unschedulable(lambda k: True)
    queue.forget(("ns", "a"))
    assert queue.pop(0) is None
    assert queue.lengths() == {"active": 0, "backoff": 0, "unschedulable": 0}


def test_take_pops_only_an_active_pod_and_give_back_returns_it_untried() -> None:
    q = SchedulingQueue(FakeClock())
    q.add(("ns", "a"))
    q.add(("ns", "b"))
    assert q.take(("ns", "b"))
    assert not q.take(("ns", "b"))  # in flight now
    assert q.pop(timeout=0) == ("ns", "a")  # b is not popped twice
    assert q.pop(timeout=0) is None
    q.give_back(("ns", "b"))
    assert q.pop(timeout=0) == ("ns", "b")
    q.done(("ns", "b"), unschedulable=True)
    assert not q.take(("ns", "b"))  # parked unschedulable: it waits for an event, not for a sibling


def test_events_are_weighed_only_for_the_pod_being_decided() -> None:
    queue = SchedulingQueue(FakeClock())
    for name in ("a", "b", "c"):
        queue.add(("ns", name))
    deciding, binding = queue.pop(0), queue.pop(0)
    assert deciding is not None and binding is not None
    queue.binding(binding)  # claimed and assumed: a worker binds it
    assert queue.take(("ns", "c"))  # a sibling taken along with a claim
    weighed: list[tuple[str, str]] = []
    queue.move_unschedulable(lambda k: weighed.append(k) or True)
    assert weighed == [deciding]


def test_a_pod_past_its_decision_backs_off_after_a_failed_bind_as_before() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "a"))
    key = queue.pop(0)
    assert key is not None
    queue.binding(key)
    queue.move_unschedulable(lambda k: True)  # no longer weighed: it cannot end unschedulable
    queue.done(key, unschedulable=False, retry_soon=True)
    assert queue.pop(0) is None  # its backoff, not the event, decides when it is tried again
    clock.now += INITIAL_BACKOFF_SECONDS
    assert queue.pop(0) == ("ns", "a")


def test_events_wait_for_a_parked_pod_or_one_being_decided() -> None:
    queue = SchedulingQueue(FakeClock())
    queue.add(("ns", "a"))
    assert not queue.waiting_for_events()  # only active: its try will read the caches as they are
    key = queue.pop(0)
    assert key is not None and queue.waiting_for_events()
    queue.binding(key)
    assert not queue.waiting_for_events()
    queue.done(key, unschedulable=False, retry_soon=True)
    queue.add(("ns", "b"))
    parked = queue.pop(0)
    assert parked == ("ns", "b")
    queue.done(parked, unschedulable=True)
    assert queue.waiting_for_events()
