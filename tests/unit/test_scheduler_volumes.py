"""The scheduler's volume wiring: the caches it keeps, binds that leave their worker to wait, and claim events that move parked pods."""

from __future__ import annotations

from typing import Any, Callable

import kubernetes
import pytest

from reference_scheduler.runtime.cycle import Outcome
from reference_scheduler.runtime.scheduler import Scheduler

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class Inline:
    """A Background that runs each task at once, on the caller's thread."""

    def submit(self, task: Callable[[], None]) -> bool:
        task()
        return True


def scheduler() -> Scheduler:
    found = Scheduler(kubernetes.client.ApiClient(), scheduler_name="s")
    found.binds = Inline()  # type: ignore[assignment]
    return found


def pending(name: str, claim: str) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": "1"},
        "spec": {"schedulerName": "s", "containers": [], "volumes": [{"name": "ws", "persistentVolumeClaim": {"claimName": claim}}]},
        "status": {"phase": "Pending"},
    }


def claim(name: str, *, bound: bool) -> Obj:
    spec = {"storageClassName": "fast", **({"volumeName": f"pv-{name}"} if bound else {})}
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": "2" if bound else "1"}, "spec": spec, "status": {"phase": "Bound" if bound else "Pending"}}


def test_the_scheduler_keeps_claims_volumes_and_classes_cached() -> None:
    names = {informer.name for informer in scheduler().informers}
    assert {"persistentvolumeclaims", "persistentvolumes", "storageclasses"} <= names


def test_a_bind_waiting_for_its_volumes_stays_in_flight_until_it_resumes(monkeypatch: pytest.MonkeyPatch) -> None:
    found = scheduler()
    finished: list[Outcome] = []
    monkeypatch.setattr(found, "_finish", lambda key, outcome, result: finished.append(outcome))
    pod = pending("p", "src")
    found._bind_later(pod, lambda: Outcome.BINDING)  # noqa: SLF001 - annotated, now waiting off the worker
    assert finished == []
    found._bind_later(pod, lambda: Outcome.BOUND)  # noqa: SLF001 - the volumes came: the bind resumed on a worker
    assert finished == [Outcome.BOUND]


def test_an_immediate_claim_bound_moves_its_parked_pod_at_once_and_wakes_the_volume_waits() -> None:
    found = scheduler()
    parked, other = pending("p", "data"), pending("q", "other")
    for pod in (parked, other):
        found.pods._store[("ns", pod["metadata"]["name"])] = pod  # noqa: SLF001
        found.queue.add(("ns", pod["metadata"]["name"]))
        key = found.queue.pop(timeout=0)
        assert key is not None
        found.queue.done(key, unschedulable=True)
    assert found.queue.lengths()["unschedulable"] == 2
    notified: list[bool] = []
    found.volume_binder.waits.notify = lambda: notified.append(True)  # type: ignore[method-assign]
    found.claims._store[("ns", "data")] = claim("data", bound=True)  # noqa: SLF001
    found.claims._emit("MODIFIED", claim("data", bound=True), claim("data", bound=False))  # noqa: SLF001
    assert notified == [True]
    assert found.queue.lengths()["unschedulable"] == 1  # p moved, q (another claim) still parked

