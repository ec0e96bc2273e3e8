"""PendingSiblings: a run's pending pods indexed from pod events, taken from active only, given back untried."""

from __future__ import annotations

from typing import Any

import pytest

from bench import microbench
from reference_scheduler.runtime.queue import SchedulingQueue
from reference_scheduler.runtime.siblings import PendingSiblings

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


def _pod(name: str, task: str, *, node: str | None = None) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": {"tekton.dev/pipelineRun": "run-a", "tekton.dev/pipelineTask": task}},
        "spec": {"schedulerName": "s", **({"nodeName": node} if node else {})},
    }


def _pending(pod: Obj) -> bool:
    return not pod["spec"].get("nodeName")


def test_take_hands_out_the_runs_waiting_pods_of_the_groups_tasks_once() -> None:
    first, b, c, bound = _pod("p1", "a"), _pod("p2", "b"), _pod("p3", "c"), _pod("p4", "b", node="n1")
    pods = microbench._informer("pods", [first, b, c, bound])  # noqa: SLF001
    queue = SchedulingQueue()
    started: dict[tuple[str, str], float] = {}
    siblings = PendingSiblings(queue=queue, pods=pods, is_ours_pending=_pending, attempt_started=started)
    for pod in (first, b, c, bound):
        siblings.on_pod("ADDED", pod, None)
        if _pending(pod):
            queue.add(("ns", pod["metadata"]["name"]))
    assert queue.pop(timeout=0) == ("ns", "p1")
    taken = siblings.take(first, frozenset({"a", "b"}))
    assert [p["metadata"]["name"] for p in taken] == ["p2"]  # not itself, not task c, not the bound p4
    assert ("ns", "p2") in started
    assert siblings.take(first, frozenset({"a", "b"})) == []  # in flight now
    siblings.give_back(b)
    assert ("ns", "p2") not in started
    assert queue.pop(timeout=0) == ("ns", "p2")


def test_a_pod_that_leaves_pending_leaves_the_index() -> None:
    first, b = _pod("p1", "a"), _pod("p2", "b")
    pods = microbench._informer("pods", [first, b])  # noqa: SLF001
    queue = SchedulingQueue()
    siblings = PendingSiblings(queue=queue, pods=pods, is_ours_pending=_pending, attempt_started={})
    siblings.on_pod("ADDED", b, None)
    queue.add(("ns", "p2"))
    siblings.on_pod("DELETED", b, None)
    assert siblings.take(first, frozenset({"b"})) == []
