"""Microbenchmark of one scheduling attempt's filter and score, with no cluster.

`python -m bench.microbench --nodes 1000 --pods 2000 --groups 700 [--profile out.prof]`
fills the reference's informer caches with synthetic nodes, bound pods and
ReservationRecords, then times `Cycle.schedule` for pending pods with the
claim-and-bind step replaced by a recorder. It also prints a digest of every
decision (chosen node, or the failure message), so a change to the hot path
can be checked to decide exactly as before: same digest, less time.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import random
import sys
import threading
import time
from typing import Any

from reference_scheduler.core.scoring import Strategy
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import Cycle, Outcome
from reference_scheduler.runtime.informer import Informer

Obj = dict[str, Any]


class _Events:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def unschedulable(self, pod: Obj, message: str) -> None:
        self.messages.append(f"{pod['metadata']['name']}: {message}")

    def pod_warning(self, pod: Obj, reason: str, message: str) -> None:
        self.messages.append(f"{pod['metadata']['name']}: {reason} {message}")

    def scheduled(self, pod: Obj, node: str, scheduler: str) -> None:
        pass



def offline_cycle(view: ClusterView, events: Any, *, percentage_of_nodes_to_score: int | None = None) -> Cycle:
    """offline_cycle() is a Cycle on an in-memory view, with no API client: its writes are patched in by the caller."""
    extra = {} if percentage_of_nodes_to_score is None else {"percentage_of_nodes_to_score": percentage_of_nodes_to_score}
    return Cycle(
        api=None,  # type: ignore[arg-type]
        view=view,
        records=None,  # type: ignore[arg-type]
        events=events,
        get_pipeline_run=lambda ns, name: None,
        get_task=lambda ns, name: None,
        get_limit_range=lambda ns: None,
        strategy=Strategy.LEAST_ALLOCATED,
        scheduler_name="bench-reference",
        **extra,
    )

def _informer(name: str, objects: list[Obj]) -> Informer:
    informer = Informer(name, lambda **_: {"items": []}, stop=threading.Event())
    informer._store = {((o["metadata"].get("namespace") or ""), o["metadata"]["name"]): o for o in objects}  # noqa: SLF001
    return informer


def node(i: int, *, rng: random.Random) -> Obj:
    taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.05 else []
    return {
        "metadata": {"name": f"n-{i}", "resourceVersion": str(i), "labels": {"rescon.dev/pool": "p" if rng.random() < 0.9 else "q", "kubernetes.io/hostname": f"n-{i}"}},
        "spec": {"taints": taints, "unschedulable": rng.random() < 0.01},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def pod(name: str, *, node_name: str | None, run: str | None, task: str | None, cpu: str, rv: int) -> Obj:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if run else {}
    spec: Obj = {
        "schedulerName": "bench-reference",
        "nodeSelector": {"rescon.dev/pool": "p"},
        "containers": [{"name": "step-work", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": str(rv), "labels": labels},
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def record(run: str, *, node_name: str | None, peak_cpu: str) -> Obj:
    status = {"name": "g0", "state": "Reserved" if node_name else "Pending", "holders": [], "claimGeneration": 1 if node_name else 0}
    if node_name:
        status["node"] = node_name
    return {
        "metadata": {"name": run, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"groups": [{"name": "g0", "tasks": ["a", "b", "c"], "peak": {"cpu": peak_cpu, "memory": "128Mi"}}]},
        "status": {"groups": [status]},
    }


def build(
    nodes: int, bound: int, groups: int, pending: int, seed: int, *, percentage_of_nodes_to_score: int = 100, assume: bool = False
) -> tuple[Cycle, list[Obj], list[tuple[str, str]]]:
    rng = random.Random(seed)
    node_objs = [node(i, rng=rng) for i in range(nodes)]
    pods: list[Obj] = []
    records: list[Obj] = []
    for g in range(groups):
        where = f"n-{rng.randrange(nodes)}"
        records.append(record(f"run-{g}", node_name=where, peak_cpu=f"{rng.choice([100, 300, 1500])}m"))
        pods.append(pod(f"run-{g}-a", node_name=where, run=f"run-{g}", task="a", cpu="100m", rv=len(pods)))
    while len(pods) < bound:
        pods.append(pod(f"plain-{len(pods)}", node_name=f"n-{rng.randrange(nodes)}", run=None, task=None, cpu=f"{rng.choice([50, 100, 200])}m", rv=len(pods)))
    todo = []
    for i in range(pending):
        if i % 3 == 0:
            name, run, task = f"new-{i}", f"run-{rng.randrange(groups)}", "b"
        else:
            name, run, task = f"new-{i}", None, None
        pods.append(pod(name, node_name=None, run=run, task=task, cpu="100m", rv=len(pods)))
        todo.append(("ns", name))
    view = ClusterView(pods=_informer("pods", pods), nodes=_informer("nodes", node_objs), records=_informer("records", records))
    decisions: list[tuple[str, str]] = []
    events = _Events()
    cycle = offline_cycle(view, events, percentage_of_nodes_to_score=percentage_of_nodes_to_score)

    def claim_and_bind(p: Obj, chosen: str, group: Any, grouped: bool) -> Outcome:
        decisions.append((p["metadata"]["name"], chosen))
        if assume:  # as the scheduler does before its bind: the next attempts see the pod on the node
            view.assume(p, chosen, group.key if group is not None else None)
        return Outcome.BOUND

    cycle._claim_and_bind = claim_and_bind  # type: ignore[method-assign]  # noqa: SLF001
    cycle._bench_events = events  # type: ignore[attr-defined]  # noqa: SLF001
    cycle._bench_decisions = decisions  # type: ignore[attr-defined]  # noqa: SLF001
    pods_by_key = {("ns", p["metadata"]["name"]): p for p in pods}
    return cycle, [pods_by_key[k] for k in todo], decisions


def _count_fits() -> list[int]:
    """_count_fits() counts the attempts' calls of headroom.fit from now on (each a miss of the per-node memo)."""
    from reference_scheduler.runtime import cycle as cycle_module

    counted = [0]
    fit = cycle_module.fit

    def counting(*args: Any, **kwargs: Any) -> Any:
        counted[0] += 1
        return fit(*args, **kwargs)

    cycle_module.fit = counting  # type: ignore[assignment]
    return counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.microbench", description=__doc__)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=2000, help="bound pods")
    parser.add_argument("--groups", type=int, default=700, help="Reserved groups (records)")
    parser.add_argument("--attempts", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", default=None)
    parser.add_argument(
        "--assume", action="store_true",
        help="count each chosen pod on its node for the attempts after it, as the scheduler's assume does (the nodes change, "
        "so the per-node memo misses as on a cluster); another digest than without",
    )
    parser.add_argument(
        "--percentage-of-nodes-to-score", type=int, default=100,
        help="as the scheduler's flag: 100 (the default here) filters every node, 0 is kube-scheduler's adaptive number (the scheduler's default)",
    )
    args = parser.parse_args(argv)
    cycle, todo, decisions = build(
        args.nodes, args.pods, args.groups, args.attempts, args.seed, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score, assume=args.assume
    )
    computed = _count_fits()
    profiler = cProfile.Profile() if args.profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    for p in todo:
        cycle.schedule(p)
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    elapsed = time.perf_counter() - started
    events = cycle._bench_events.messages  # type: ignore[attr-defined]  # noqa: SLF001
    digest = hashlib.sha256(repr((decisions, events)).encode()).hexdigest()[:16]
    print(
        f"nodes={args.nodes} percentage={args.percentage_of_nodes_to_score} assume={args.assume} fits computed={computed[0]} bound_pods={args.pods} groups={args.groups}: {len(todo)} attempts in {elapsed:.2f}s "
        f"= {1000 * elapsed / len(todo):.1f} ms/attempt; decisions digest {digest} ({len(decisions)} bound, {len(events)} events)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
