"""wait_for: the one polling loop of the harness, built on tenacity.

Every wait names the TimeoutConfig field that bounds it, and every poll that is
not yet satisfied says why (NotYet("pod x is Pending on no node")), so a timeout
reports the last reason instead of a bare "timed out".
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Callable, Iterator, TypeVar

import tenacity

from harness.errors import HarnessError
from harness.timeouts import TimeoutConfig

T = TypeVar("T")

log = logging.getLogger("rescon.wait")

#: The first poll interval; it grows to POLL_MAX_SECONDS.
POLL_MIN_SECONDS = 0.1
POLL_MAX_SECONDS = 1.0


#: Called after every wait with (what, timeout name, seconds it took, its limit): the soak's margins.
WaitObserver = Callable[[str, str, float, float], None]
_observers: list[WaitObserver] = []


@contextlib.contextmanager
def observed(observer: WaitObserver) -> Iterator[None]:
    """observed(cb) calls cb(what, timeout, seconds, limit) after each wait_for while the block runs."""
    _observers.append(observer)
    try:
        yield
    finally:
        _observers.remove(observer)


def _tell(what: str, timeout: str, seconds: float, limit: float) -> None:
    for observer in list(_observers):
        observer(what, timeout, seconds, limit)


class NotYet(Exception):
    """NotYet is raised by a poll whose condition does not hold yet; its message says why."""


class WaitTimeout(HarnessError, AssertionError):
    """A bounded wait ran out; the message names the timeout and the last reason.

    Also an AssertionError: in a scenario, running out of time is a verdict on
    the scheduler, and reports (Allure's "failed", not "broken") say so.
    """


def wait_for(
    poll: Callable[[], T],
    *,
    what: str,
    timeout: str,
    timeouts: TimeoutConfig,
    hint: str = "",
) -> T:
    """wait_for(poll, what='pod a bound', timeout='pod_scheduled', timeouts=cfg) returns poll()'s value.

    poll raises NotYet while the condition does not hold; any other exception
    propagates at once. After `timeouts.<timeout>` seconds, WaitTimeout says
    what was awaited, for how long, the last NotYet reason and `hint`.
    """
    seconds = float(getattr(timeouts, timeout))
    last_reason = ["never polled"]

    def remember(state: tenacity.RetryCallState) -> None:
        if state.outcome is not None and state.outcome.failed:
            last_reason[0] = str(state.outcome.exception())
            log.debug("waiting for %s: %s", what, last_reason[0])

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_delay(seconds),
        wait=tenacity.wait_exponential(multiplier=POLL_MIN_SECONDS, max=POLL_MAX_SECONDS),
        retry=tenacity.retry_if_exception_type(NotYet),
        after=remember,
        reraise=False,
    )
    started = time.monotonic()
    try:
        value = retrying(poll)
    except tenacity.RetryError:
        _tell(what, timeout, time.monotonic() - started, seconds)
        suffix = f"; {hint}" if hint else ""
        raise WaitTimeout(
            f"timed out after {seconds:g}s ({timeout}) waiting for {what}: {last_reason[0]}{suffix}"
        ) from None
    _tell(what, timeout, time.monotonic() - started, seconds)
    return value


class Broken(HarnessError, AssertionError):
    """A condition that had to keep holding stopped holding; the message says when and why."""


def hold_for(
    check: Callable[[], None],
    *,
    what: str,
    duration: str,
    timeouts: TimeoutConfig,
) -> None:
    """hold_for(check, what='held pod stays Running', duration='task_stays_running', timeouts=cfg).

    The "consistently" of wait_for's "eventually": check() is polled every
    POLL_MAX_SECONDS for `timeouts.<duration>` seconds and must pass every
    time; the first NotYet ends the watch with Broken, naming the reason and
    how long the condition held. Waiting out the whole duration is the point.
    """
    seconds = float(getattr(timeouts, duration))
    started = time.monotonic()
    while True:
        try:
            check()
        except NotYet as reason:
            held = time.monotonic() - started
            raise Broken(f"{what} stopped holding after {held:.1f}s of {seconds:g}s ({duration}): {reason}") from None
        remaining = seconds - (time.monotonic() - started)
        if remaining <= 0:
            return
        time.sleep(min(POLL_MAX_SECONDS, remaining))
