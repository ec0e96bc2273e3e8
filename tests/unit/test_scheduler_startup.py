"""Scheduler startup: a stop request while the caches fill ends the wait, so SIGTERM never hangs a replica."""

from __future__ import annotations

import threading
import time

import kubernetes
import pytest

from reference_scheduler.runtime import scheduler as scheduler_module
from reference_scheduler.runtime.scheduler import Scheduler

pytestmark = pytest.mark.unit


class NeverSynced:
    name = "reservationrecords"

    def start(self) -> None:
        pass

    def wait_synced(self, timeout: float) -> bool:
        time.sleep(timeout)
        return False


def test_a_stop_request_ends_the_wait_for_caches_that_never_sync() -> None:
    scheduler = Scheduler(kubernetes.client.ApiClient(), scheduler_name="t")
    scheduler.informers = [NeverSynced()]  # type: ignore[list-item]
    waiting = threading.Thread(target=scheduler.start_informers)
    waiting.start()
    scheduler.stop_event.set()
    waiting.join(timeout=10 * scheduler_module.SYNC_POLL_SECONDS)
    assert not waiting.is_alive(), f"start_informers() still waits after the stop request (it gives up after {scheduler_module.CACHE_SYNC_SECONDS:g}s)"


def test_caches_that_never_sync_fail_in_one_line_naming_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler_module, "CACHE_SYNC_SECONDS", 0.3)
    scheduler = Scheduler(kubernetes.client.ApiClient(), scheduler_name="t")
    scheduler.informers = [NeverSynced()]  # type: ignore[list-item]
    with pytest.raises(RuntimeError, match=r"^the reservationrecords cache did not sync in 0.3s: check the API server and the scheduler's RBAC$"):
        scheduler.start_informers()
