"""Pool checks: the helpers of the pool-shape scenarios (plain pods, shaped nodes, a load watch).

Kept apart from harness/suite/checks.py while that module is being reworked;
they follow its conventions: `*_must_*` waits with a named timeout and says,
at every poll, what it still waits for.

* shaped_pool(run) cordons, taints and labels the pool's nodes as the
  scenario's PoolSpec.shapes say, and puts them back afterwards;
* pod_must_be_bound is the plain-pod twin of task_pod_must_be_bound;
  pods_must_be_finished / pods_must_be_gone wait for fillers
  that end on their own or that the scenario deleted;
* LoadWatch samples pods (and records) while a scenario runs and remembers
  every node found holding more than its allocatable (section 7's formula:
  the requests of every non-terminal pod bound there, plus each Reserved
  group's residual there) in two samples in a row, and every group whose
  pods sit on two nodes. Pods and records are two reads, not one snapshot: a
  release and a new claim between them can look like an over-commit for one
  sample; a real over-commit lasts as long as its pods run.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

from harness.cluster.node_pools import shape_pool_nodes, unshape_pool_nodes
from harness.contract import record as contract
from harness.quantities import ZERO, Amount, node_allocatable, pod_request
from harness.suite.run import PIPELINE_RUN_LABEL, PIPELINE_TASK_LABEL, ScenarioRun
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]

TERMINAL_PHASES = ("Succeeded", "Failed")


@contextlib.contextmanager
def shaped_pool(run: ScenarioRun) -> Iterator[tuple[str, ...]]:
    """shaped_pool(run) applies the scenario's node shapes for the block and yields the pool's node names."""
    undo = shape_pool_nodes(run.kube, run.pool, run.scenario.pool.shapes)
    try:
        yield run.node_names
    finally:
        unshape_pool_nodes(run.kube, undo)


def _describe(pod: Obj) -> str:
    node = (pod.get("spec") or {}).get("nodeName") or "no node"
    phase = (pod.get("status") or {}).get("phase") or "no phase"
    return f"{pod['metadata']['name']} is {phase} on {node}"


def pod_must_be_bound(run: ScenarioRun, name: str) -> Obj:
    """pod_must_be_bound() waits for a plain pod of the scenario to have a node; it returns the pod."""
    run.scheduler.check_alive()

    def poll() -> Obj:
        pod = run.pod(name)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise NotYet(_describe(pod))
        return pod

    return wait_for(poll, what=f"plain pod {name} to be bound", timeout="pod_scheduled", timeouts=run.timeouts)


def pods_must_be_finished(run: ScenarioRun, names: tuple[str, ...]) -> None:
    """pods_must_be_finished() waits until every named pod is Succeeded or Failed (fillers that end on their own)."""

    def poll() -> None:
        pending = [_describe(p) for p in (run.pod(n) for n in names) if (p.get("status") or {}).get("phase") not in TERMINAL_PHASES]
        if pending:
            raise NotYet(", ".join(pending))

    wait_for(poll, what=f"{', '.join(names)} to finish", timeout="taskrun_done", timeouts=run.timeouts)


# --- the load watch ------------------------------------------------------------


@dataclass(frozen=True)
class Overcommit:
    """Overcommit is one observation of a node holding more than its allocatable."""

    at: float
    node: str
    held: Amount
    allocatable: Amount
    pods: tuple[str, ...]
    residuals: tuple[str, ...]

    def describe(self) -> str:
        return (
            f"at {self.at:.1f}s {self.node} held {self.held.describe()} of {self.allocatable.describe()}: "
            f"pods {list(self.pods)}, residuals {list(self.residuals)}"
        )


def node_loads(nodes: dict[str, Amount], pods: list[Obj], records: list[contract.Record]) -> dict[str, tuple[Amount, list[str], list[str]]]:
    """node_loads() is what each node holds by section 7: its non-terminal pods' requests plus Reserved groups' residuals.

    Example: a 4800m node with A Reserved there (peak 3800m) and A's 200m pod
    running holds 200m + (3800m - 200m) = 3800m.
    """
    loads: dict[str, tuple[Amount, list[str], list[str]]] = {n: (ZERO, [], []) for n in nodes}
    group_pods: dict[tuple[str, str], Amount] = {}  # (pipelineRun, task) -> requests on the group's node
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in loads or (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
            continue
        request = pod_request(pod)
        held, names, residuals = loads[node]
        loads[node] = (held + request, names + [f"{pod['metadata']['name']} {request.cpu}m"], residuals)
        labels = pod["metadata"].get("labels") or {}
        if PIPELINE_RUN_LABEL in labels:
            key = (labels[PIPELINE_RUN_LABEL], f"{node}/{labels.get(PIPELINE_TASK_LABEL)}")
            group_pods[key] = group_pods.get(key, ZERO) + request
    for record in records:
        for group in record.groups:
            status = record.status_of(group.name)
            if status.state != contract.State.RESERVED or status.node not in loads:
                continue
            node = status.node
            used = ZERO
            for task in group.tasks:
                used = used + group_pods.get((record.name, f"{node}/{task}"), ZERO)
            residual = (Amount(group.peak_cpu_millis, group.peak_memory_bytes) - used).floor_zero()
            held, names, residuals = loads[node]
            loads[node] = (held + residual, names, residuals + [f"{record.key}/{group.name} {residual.cpu}m"])
    return loads


def _node_json(run: ScenarioRun, name: str) -> Obj:
    import json

    response: Any = run.kube.core.read_node(name, _preload_content=False)
    node: Obj = json.loads(response.data)
    return node


@dataclass
class LoadWatch:
    """LoadWatch samples the scenario's pods and records in a thread; use it as a context manager.

    Only the scenario's own namespace is counted, which is all there is on its
    pool (the pool is the scenario's alone).
    """

    run: ScenarioRun
    interval: float = 0.2
    overcommits: list[Overcommit] = field(default_factory=list)
    split_groups: list[str] = field(default_factory=list)
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _errors: list[str] = field(default_factory=list)
    _over_before: dict[str, Overcommit] = field(default_factory=dict)

    def __enter__(self) -> LoadWatch:
        import time

        self._started = time.monotonic()
        self._allocatable = {n: node_allocatable(_node_json(self.run, n)) for n in self.run.node_names}
        self._thread = threading.Thread(target=self._loop, name="load-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        import time

        try:
            pods = self.run.pods()
            records = [contract.Record.from_json(r) for r in self.run.records()] if self.run.checks_records else []
        except Exception as err:  # noqa: BLE001 - a failed read is reported at the end, never silently
            self._errors.append(str(err)[:200])
            return
        self.samples += 1
        at = time.monotonic() - self._started
        over = {}
        for node, (held, names, residuals) in node_loads(self._allocatable, pods, records).items():
            if held.exceeds(self._allocatable[node]):
                over[node] = Overcommit(at, node, held, self._allocatable[node], tuple(names), tuple(residuals))
        self.overcommits.extend(o for node, o in over.items() if node in self._over_before)
        self._over_before = over
        for record in records:
            for group in record.groups:
                run_name = record.name
                nodes = {
                    (p.get("spec") or {}).get("nodeName")
                    for p in pods
                    if (p["metadata"].get("labels") or {}).get(PIPELINE_RUN_LABEL) == run_name
                    and (p["metadata"].get("labels") or {}).get(PIPELINE_TASK_LABEL) in group.tasks
                    and (p.get("spec") or {}).get("nodeName")
                }
                if len(nodes) > 1:
                    self.split_groups.append(f"at {at:.1f}s {record.key}/{group.name} has pods on {sorted(str(n) for n in nodes)}")

    def must_be_clean(self) -> None:
        """must_be_clean() fails naming the first over-commit or split group seen, if any."""
        assert self.samples > 0, f"the load watch took no sample ({self._errors[:1]})"
        assert not self.overcommits, (
            f"{len(self.overcommits)} observation(s) of an over-committed node; first: {self.overcommits[0].describe()}"
        )
        assert not self.split_groups, f"a group's pods on two nodes; first: {self.split_groups[0]}"


def pods_must_be_gone(run: ScenarioRun, names: tuple[str, ...]) -> None:
    """pods_must_be_gone() waits until none of the named pods exists any more (after the scenario deleted them)."""

    def poll() -> None:
        left = sorted({p["metadata"]["name"] for p in run.pods()} & set(names))
        if left:
            raise NotYet(f"{left} still exist")

    wait_for(poll, what=f"{', '.join(names)} to be deleted", timeout="pod_scheduled", timeouts=run.timeouts)
