"""Scheduling gates: a gated pod is never queued nor tried; the update that removes its last gate queues it."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest

from reference_scheduler.core.queue_hints import QUEUE, SKIP, QueueingHint
from reference_scheduler.core.scheduling_gates import (
    SCHEDULING_GATED_REASON,
    is_gated,
    scheduling_gates,
    scheduling_gates_removed,
    waiting_for_gates_message,
)
from reference_scheduler.runtime.scheduler import Scheduler

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


def pod(name: str = "p", *gates: str, run: str | None = None, task: str = "a", version: str = "1") -> Obj:
    spec: Obj = {"schedulerName": "s", "containers": [{"name": "c"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if run else {}
    return {"metadata": {"name": name, "namespace": "ns", "uid": name, "resourceVersion": version, "labels": labels}, "spec": spec, "status": {"phase": "Pending"}}


@pytest.mark.parametrize(
    ("given", "gates"),
    [
        pytest.param(pod(), (), id="no-gates"),
        pytest.param(pod("p", "quota"), ("quota",), id="one-gate"),
        pytest.param(pod("p", "a", "b"), ("a", "b"), id="two-gates-in-order"),
        pytest.param({"spec": {"schedulingGates": []}}, (), id="empty-list"),
    ],
)
def test_scheduling_gates(given: Obj, gates: tuple[str, ...]) -> None:
    assert scheduling_gates(given) == gates
    assert is_gated(given) is bool(gates)


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        pytest.param(pod("p", "a"), pod("p"), QUEUE, id="last-gate-removed"),
        pytest.param(pod("p", "a", "b"), pod("p", "b"), SKIP, id="one-of-two-removed"),
        pytest.param(pod("p", "a"), pod("p", "a"), SKIP, id="still-gated"),
        pytest.param(pod("p"), pod("p"), SKIP, id="never-gated"),
    ],
)
def test_scheduling_gates_removed(old: Obj, new: Obj, hint: QueueingHint) -> None:
    assert scheduling_gates_removed(old, new) is hint


def test_the_words_are_kube_schedulers_and_the_api_servers() -> None:
    assert waiting_for_gates_message(pod("p", "a", "b")) == "waiting for scheduling gates: [a b]"
    assert SCHEDULING_GATED_REASON == "SchedulingGated"


def scheduler(*pods: Obj) -> Scheduler:
    found = Scheduler(kubernetes.client.ApiClient(), scheduler_name="s")
    for each in pods:
        found.pods._store[("ns", each["metadata"]["name"])] = each  # noqa: SLF001
    return found


def active(found: Scheduler) -> int:
    return found.queue.lengths()["active"]


class TestTheScheduler:
    def test_a_gated_pod_is_not_queued_and_the_update_that_ungates_it_queues_it(self) -> None:
        gated = pod("p", "quota")
        found = scheduler(gated)
        found.pods._emit("ADDED", gated, None)  # noqa: SLF001
        assert active(found) == 0
        relabelled = {**gated, "metadata": {**gated["metadata"], "labels": {"x": "y"}, "resourceVersion": "2"}}
        found.pods._emit("MODIFIED", relabelled, gated)  # noqa: SLF001
        assert active(found) == 0
        ungated = pod("p", version="3")
        found.pods._store[("ns", "p")] = ungated  # noqa: SLF001
        found.pods._emit("MODIFIED", ungated, relabelled)  # noqa: SLF001
        assert active(found) == 1

    def test_an_attempt_on_a_pod_gated_since_it_was_queued_forgets_it_untried(self, monkeypatch: pytest.MonkeyPatch) -> None:
        found = scheduler(pod("p", "quota"))
        tried: list[Obj] = []
        monkeypatch.setattr(found.cycle, "schedule", lambda p: tried.append(p))
        found.queue.add(("ns", "p"))
        key = found.queue.pop(timeout=0)
        assert key == ("ns", "p")
        found._schedule_one(key)  # noqa: SLF001
        assert tried == [] and found.queue.lengths() == {"active": 0, "backoff": 0, "unschedulable": 0}

    def test_run_queues_the_ungated_pending_pods_only(self) -> None:
        found = scheduler(pod("free"), pod("held", "quota"))
        assert [p["metadata"]["name"] for p in found.pods.list(found._is_ours_to_try)] == ["free"]  # noqa: SLF001

    def test_a_gated_pod_is_never_taken_along_with_its_groups_claim(self) -> None:
        first, gated, free = pod("a", run="r"), pod("b", "quota", run="r", task="b"), pod("c", run="r", task="b")
        found = scheduler(first, gated, free)
        for each in (first, gated, free):
            found.pods._emit("ADDED", each, None)  # noqa: SLF001
        assert [p["metadata"]["name"] for p in found.siblings.take(first, frozenset({"b"}))] == ["c"]
