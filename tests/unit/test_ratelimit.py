"""The client-side token bucket: --qps/--burst as client-go applies them, tested on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.runtime.ratelimit import TokenBucket, limit_requests

pytestmark = pytest.mark.unit


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def bucket(qps: float, burst: int, clock: FakeClock) -> TokenBucket:
    return TokenBucket(qps, burst, clock=clock, sleep=clock.sleep)


def test_burst_passes_at_once_then_one_per_interval() -> None:
    clock = FakeClock()
    limiter = bucket(50, 100, clock)
    assert [limiter.delay() for _ in range(100)] == [0.0] * 100
    # The 101st and 102nd reserve the next tokens: 1/50 s and 2/50 s away (reservations queue up).
    assert limiter.delay() == pytest.approx(0.02)
    assert limiter.delay() == pytest.approx(0.04)


def test_refills_at_qps_up_to_burst() -> None:
    clock = FakeClock()
    limiter = bucket(10, 5, clock)
    for _ in range(5):
        limiter.delay()
    clock.now += 0.3  # 3 tokens back
    assert [limiter.delay() for _ in range(3)] == [0.0] * 3
    assert limiter.delay() == pytest.approx(0.1)
    clock.now += 100.0  # a long quiet: never more than burst
    assert [limiter.delay() for _ in range(5)] == [0.0] * 5
    assert limiter.delay() > 0


def test_sustained_rate_is_qps() -> None:
    # 1000 requests through wait(): the last passes at (1000 - burst) / qps seconds.
    clock = FakeClock()
    limiter = bucket(50, 100, clock)
    for _ in range(1000):
        limiter.wait()
    assert clock.now == pytest.approx((1000 - 100) / 50)


def test_refuses_a_bucket_that_limits_nothing() -> None:
    with pytest.raises(ValueError):
        TokenBucket(0, 10)
    with pytest.raises(ValueError):
        TokenBucket(5, 0)


class FakeRest:
    def __init__(self, clock: FakeClock) -> None:
        self.calls: list[tuple[str, float]] = []
        self._clock = clock

    def request(self, method: str, url: str, **kwargs: Any) -> str:
        self.calls.append((method, self._clock.now))
        return "ok"


class FakeApi:
    def __init__(self, clock: FakeClock) -> None:
        self.rest_client = FakeRest(clock)


def test_limit_requests_waits_and_counts_every_request() -> None:
    clock = FakeClock()
    api = FakeApi(clock)
    calls = api.rest_client.calls
    seen: list[str] = []
    limit_requests(api, bucket(2, 2, clock), seen.append)
    limit_requests(api, bucket(2, 2, clock), seen.append)  # installed once: no second bucket, no double count
    for method in ("GET", "post", "PUT"):
        assert api.rest_client.request(method, "/x") == "ok"
    assert [m for m, _ in calls] == ["GET", "post", "PUT"]
    assert [t for _, t in calls] == [0.0, 0.0, pytest.approx(0.5)]
    assert seen == ["GET", "POST", "PUT"]
