"""Client-side rate limiting: `--qps` / `--burst` as client-go's token bucket applies them.

client-go gives every clientset a token bucket (`flowcontrol.NewTokenBucketRateLimiter(qps, burst)`,
golang.org/x/time/rate underneath): the bucket holds at most `burst` tokens, refills at
`qps` per second, starts full, and every request takes one token, waiting for it when the
bucket is empty. A scheduler that makes three requests per pod at QPS 50 therefore binds
at most about 17 pods per second once its burst is spent, whatever the API server could do.

The Python client has no such limiter (its pool size only bounds concurrent requests), so
`limit_requests()` wraps an ApiClient's REST client with a `TokenBucket`. Watches are one
request each, as in client-go (only the start of a watch takes a token).

Why not a library: the well-kept token-bucket packages either only answer "conform or not"
without a wait (and read the time themselves), or wait with their own `time.sleep` on a
millisecond clock among storage backends we do not need; the wait below is the few lines of
x/time/rate's `reserveN` that client-go relies on, with the clock and the sleep injected so
the unit tests run without sleeping.

Worked example: qps=50, burst=100. 100 requests at t=0 pass at once; the 101st waits 20 ms,
the 102nd 40 ms (each reserves its token in turn); after 1 s of quiet, 50 pass at once again.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable


class TokenBucket:
    """TokenBucket lets `qps` requests per second through on average and `burst` at once.

    `delay()` reserves one token and returns how long its caller must wait before using it
    (0.0 when a token is there): reservations made while the bucket is empty queue up, each
    1/qps after the previous one, as x/time/rate's Reserve does. `wait()` reserves and sleeps.
    """

    def __init__(
        self,
        qps: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, not qps={qps} burst={burst}")
        self.qps = float(qps)
        self.burst = burst
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()

    def delay(self) -> float:
        """delay() takes one token and is the seconds until it is really there (never negative)."""
        with self._lock:
            now = self._clock()
            elapsed = max(0.0, now - self._last)
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def wait(self) -> None:
        """wait() returns once this caller may make its request."""
        seconds = self.delay()
        if seconds > 0:
            self._sleep(seconds)


def limit_requests(api: Any, bucket: TokenBucket | None, on_request: Callable[[str], None] | None = None) -> None:
    """limit_requests(api, bucket) makes every request of the ApiClient `api` wait for a token first.

    `on_request(method)`, if given, is called for each request (upper-case HTTP method), for
    the API-requests metric. The wrapper is installed once per client.
    """
    rest = api.rest_client
    if getattr(rest, "_rescon_limited", False):
        return
    original = rest.request

    def request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if bucket is not None:
            bucket.wait()
        if on_request is not None:
            on_request(method.upper())
        return original(method, url, *args, **kwargs)

    rest.request = request
    rest._rescon_limited = True  # noqa: SLF001 - a marker on the object we wrapped
