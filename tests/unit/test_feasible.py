"""Filtering that stops once enough nodes are feasible, and per-node memos shared across PipelineRuns."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench import microbench
from reference_scheduler.core.feasible import feasible_nodes_to_find
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import Cycle, Outcome

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        pytest.param(0, 50, 50, id="small-cluster-whole"),
        pytest.param(0, 99, 99, id="just-below-the-minimum"),
        pytest.param(0, 1000, 420, id="adaptive-1000-is-42-percent"),
        pytest.param(0, 5000, 500, id="adaptive-5000-is-10-percent"),
        pytest.param(0, 10000, 500, id="adaptive-floor-5-percent"),
        pytest.param(5, 1000, 100, id="at-least-100"),
        pytest.param(100, 5000, 5000, id="hundred-is-every-node"),
        pytest.param(30, 1000, 300, id="fixed-percentage"),
    ],
)
def test_feasible_nodes_to_find_as_kube_scheduler(percentage: int, nodes: int, expected: int) -> None:
    assert feasible_nodes_to_find(percentage, nodes) == expected


def _cycle(nodes: list[Obj], pods: list[Obj], records: list[Obj], percentage: int) -> tuple[Cycle, list[tuple[str, str]], microbench._Events]:
    inform = microbench._informer  # noqa: SLF001
    view = ClusterView(pods=inform("pods", pods), nodes=inform("nodes", nodes), records=inform("records", records))
    events = microbench._Events()  # noqa: SLF001
    cycle = microbench.offline_cycle(view, events, percentage_of_nodes_to_score=percentage)
    chosen: list[tuple[str, str]] = []

    def claim_and_bind(p: Obj, node: str, group: Any, grouped: bool) -> Outcome:
        chosen.append((p["metadata"]["name"], node))
        return Outcome.BOUND

    cycle._claim_and_bind = claim_and_bind  # type: ignore[method-assign]  # noqa: SLF001
    return cycle, chosen, events


def test_adaptive_filtering_stops_at_enough_feasible_nodes_and_rotates() -> None:
    rng = random.Random(1)
    nodes = [{**microbench.node(i, rng=rng), "spec": {"taints": [], "unschedulable": False}} for i in range(300)]
    for n in nodes:
        n["metadata"]["labels"]["rescon.dev/pool"] = "p"
    pod = microbench.pod("x", node_name=None, run=None, task=None, cpu="100m", rv=1)
    cycle, chosen, _ = _cycle(nodes, [pod], [], percentage=0)
    assert cycle.schedule(pod) is Outcome.BOUND
    # 300 nodes: 50 - 300 // 125 = 48 %, 144 nodes; all are feasible, so the walk stopped there
    # and the next attempt starts at node 144.
    assert cycle._next_start_node == 144  # noqa: SLF001
    assert int(chosen[0][1].removeprefix("n-")) < 144
    cycle.schedule(pod)
    assert cycle._next_start_node == 288  # noqa: SLF001


def test_a_pod_that_fits_nowhere_gets_the_same_message_whatever_the_percentage() -> None:
    rng = random.Random(2)
    nodes = [microbench.node(i, rng=rng) for i in range(300)]
    pod = microbench.pod("big", node_name=None, run=None, task=None, cpu="5", rv=1)  # 5 CPU > 4 on every node
    messages = []
    for percentage in (0, 10, 100):
        cycle, chosen, events = _cycle(nodes, [pod], [], percentage)
        assert cycle.schedule(pod) is Outcome.UNSCHEDULABLE and chosen == []
        messages.append(events.messages)
    assert messages[0] == messages[1] == messages[2] != [[]]


def test_memos_shared_across_pipeline_runs_decide_as_a_fresh_cycle() -> None:
    # Pending groups of many runs, plain pods, and pods bound as the attempts go: a long-lived
    # Cycle (memo entries shared between runs whose group has nothing on a node) must choose
    # and report exactly what a Cycle built from scratch for each attempt chooses.
    rng = random.Random(7)
    nodes = [microbench.node(i, rng=rng) for i in range(60)]
    records = [microbench.record(f"run-{g}", node_name=None, peak_cpu=f"{rng.choice([300, 1500, 3000])}m") for g in range(40)]
    bound = [microbench.pod(f"plain-{i}", node_name=f"n-{rng.randrange(60)}", run=None, task=None, cpu="500m", rv=i) for i in range(150)]
    todo = []
    for i in range(60):
        run = f"run-{i % 40}" if i % 4 else None
        todo.append(microbench.pod(f"new-{i}", node_name=None, run=run, task="a" if run else None, cpu="200m", rv=1000 + i))
    live, live_chosen, live_events = _cycle(nodes, bound + todo, records, percentage=100)
    placed = 0
    for pod in todo:
        pods_now = list(live._view._pods._store.values())  # noqa: SLF001
        fresh, fresh_chosen, fresh_events = _cycle(nodes, pods_now, records, percentage=100)
        before, events_before = len(live_chosen), len(live_events.messages)
        live.schedule(pod)
        fresh.schedule(pod)
        assert live_chosen[before:] == fresh_chosen
        assert live_events.messages[events_before:] == fresh_events.messages
        if fresh_chosen:  # the pod is bound: the pod informer shows it (its record stays Pending)
            placed += 1
            node = fresh_chosen[0][1]
            bound_pod = {**pod, "spec": {**pod["spec"], "nodeName": node}, "status": {"phase": "Running"}}
            bound_pod["metadata"] = {**pod["metadata"], "resourceVersion": str(5000 + placed)}
            informer = live._view._pods  # noqa: SLF001
            key = ("ns", pod["metadata"]["name"])
            old = informer._store.get(key)  # noqa: SLF001
            informer._store[key] = bound_pod  # noqa: SLF001
            informer._emit("MODIFIED", bound_pod, old)  # noqa: SLF001
    assert placed >= 40  # the comparison covered real choices
