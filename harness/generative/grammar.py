"""grammar: small PipelineRuns drawn from the Tekton features the contract reads, replayable from one seed.

    batches = draw_batches(seed=7, budget=4, context=DrawContext(...), pvc_slots=(("s0-a", "s0-b"), ...))

Each run is drawn from `random.Random`, seeded once per session, so the seed
alone replays every run and every batch (`--rescon-generative-seed N`). A run has:

* 2 to 5 DAG tasks, each after a random subset of the earlier ones
  (`runAfter`), the last one sometimes only through a result
  (`$(tasks.x.results.out)`, `onError: continue`: the simulated step writes
  no result, so Tekton skips it); 0 to 2 finally tasks;
* 1 to 3 pipeline workspaces, each bound to a pre-bound PVC (the scenario's
  `pvcs`), a `volumeClaimTemplate` of the scenario's storage class, an
  `emptyDir`, a ConfigMap, a Secret or a projected volume of both (the
  ConfigMap and Secret are drawn with the run); tasks bind 0 to 2 of them,
  and an embedded taskSpec sometimes uses one only by `$(workspaces.x.path)`
  (Tekton propagates it);
* tasks embedded (`taskSpec`) or referred to (`taskRef` to a Task drawn with
  the run), the pipeline embedded or referred to (`pipelineRef`);
* per task (harness.cluster.simulation.sim_task_spec plays it on KWOK and
  kind): the work step's requests (or none), extra steps, a stepTemplate, a
  sidecar, a matrix of 2 or 3 values (sometimes from the run's params,
  sometimes with an `include`; their TaskRuns often end in any order), one or two retries (every attempt but the
  last fails), a param, a `when` expression on a run param that is false (Tekton
  skips the task; the tasks after it still run), a failure for good in a run
  with finally tasks (every attempt exits 1: Tekton starts no new DAG task,
  runs finally, and the run ends Failed), each workspace bound the long
  way (`{name: w0, workspace: source}`) or the short way (`{name: source}`,
  the task's workspace named as the pipeline's), and how its quantities are
  spelt (`480m` and bytes, `0.48` and `500M`, or `480m` and `512Mi`);
* sometimes created PipelineRunPending, with a `timeouts.pipeline`, and started
  by the scenario once another run of its batch has a pod bound (a queueing
  controller admitting it): its start comes well after its creation.

Before some batches one pod no scheduler placed is pinned to each pool node,
in a shape whose effective request is more than its containers' (a RuntimeClass
overhead, a native sidecar, a larger init container, a pod-level request, or
held Terminating: harness.generative.foreign_pods); the batch's runs are then
sized for what the foreign pods leave of a node. Before some batches, too,
another reservation scheduler holds a Reserved group on one pool node, all of
it residual (harness.generative.foreign_reservations); the batch's runs are
sized for what that leaves as well.

Every session's first run is a *release trap* (`draw_shape(trap=True)`): a
group of two tasks, one of which its `when` expression skips, has every task
done while the run goes on for RUN_ON_AFTER_GROUPS with a task in no group
(`publish`, after every other task, no finally). Its group's release is due
long before the run ends, for longer than `release_late`: a scheduler that
holds it until the run is over fails the monitor's `release-late` in every
session, not only when a draw happens to make that state.

Sizes are fractions of a pool node. A run's demand D (every group's peak plus
every pod outside a group, harness.generative.peaks: the most it can hold at
once) is then scaled to between 60% and 100% of its share of the pool: in a
batch of k runs on `POOL_NODES` = 2 nodes, each run's CPU demand is at most
`cpu_share(k)` = 2 / (k + 1) of a node (1, 2/3, 1/2) and its memory demand at
most 1 / k of a node's memory. That makes the pool tight (a batch asks for up
to 1.5 nodes' CPU) and still keeps a correct scheduler from deadlock: when a
group or pod x of one run waits, the others hold at most S - x in all (S the
batch's summed demand), so the emptier node holds at most (S - x) / 2, and
(S - x) / 2 + x <= 1 node because S + x <= S + max D <= (k + 1) * cpu_share(k)
= 2 nodes. Memory never decides: the batch's memory demand fits in one node.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping, Sequence

import yaml

from harness.cluster.simulation import sim_task_spec
from harness.generative import peaks
from harness.generative.foreign_pods import SHAPE_ANNOTATION, draw_foreign_pods, load, with_overhead
from harness.generative.foreign_reservations import ForeignReservation, draw_foreign_reservation
from harness.monitor.expected_groups import expected_groups
from harness.quantities import Amount, pod_request, share_of

Obj = dict[str, Any]

#: A batch is at most this many runs at once, on a pool of this many nodes (the deadlock argument above).
MAX_BATCH = 3
POOL_NODES = 2
#: How full a run's demand is drawn, as a part of its share (below).
FILL = (0.6, 1.0)


def cpu_share(batch: int) -> float:
    """cpu_share(3) == 0.5: the most CPU (nodes) one run of a batch of that size may demand (module docstring)."""
    return POOL_NODES / (batch + 1)


def memory_share(batch: int) -> float:
    """memory_share(3) == 1/3: the most memory (nodes) one run of a batch of that size may demand."""
    return 1 / batch

DAG_NAMES = ("fetch", "build", "lint", "test", "package", "scan")
#: The release trap's last task, in no group: it runs on after every group is done.
TRAP_TASK = "publish"
#: How long the trap's last task runs: longer than `release_late` (15 s) plus the monitor's read interval (2 s) and a
#: release's own few seconds, so a group held to the run's end is late by the monitor's count before the run ends.
RUN_ON_AFTER_GROUPS = "25s"
#: The run param every `when` expression reads; the run passes "no", so a guarded task is skipped.
GATE_PARAM = "deploy"
#: The exit codes of a task that fails for good: the last entry repeats, so every attempt, retries included, exits 1.
FAIL_FOR_GOOD = "1"
#: How often a matrixed task's combinations end in any order: each pod's steps end between 1 s and this.
OUT_OF_ORDER_CHANCE = 0.6
OUT_OF_ORDER_UNTIL = "5s"
#: How often a run with finally tasks has a DAG task that fails for good, and how often a run is created pending.
FAILURE_CHANCE = 0.3
PENDING_CHANCE = 0.2
#: A pending run's `timeouts.pipeline`: counted from its start, far more than a drawn run takes even on a loaded machine.
PENDING_RUN_TIMEOUT = "10m"
FINALLY_NAMES = ("report", "notify")
WORKSPACE_NAMES = ("source", "cache", "output")
BINDING_KINDS = ("persistentVolumeClaim", "volumeClaimTemplate", "emptyDir", "configMap", "secret", "projected")
CPU_FRACTIONS = (0.02, 0.03, 0.05, 0.08, 0.1, 0.12, 0.15)
MEMORY_FRACTIONS = (0.005, 0.01, 0.02, 0.03, 0.05)
MATRIX_VALUES = ("linux", "darwin", "windows", "arm64")


@dataclass(frozen=True)
class DrawContext:
    """DrawContext is what a drawn run needs from its scenario: scheduler, pool, node size, storage class."""

    scheduler_name: str
    pool_selector: Mapping[str, str]
    node_cpu_millis: int
    node_memory_bytes: int
    #: None: a volumeClaimTemplate names no class, and the cluster's default serves it.
    storage_class: str | None
    #: The pool's nodes, for the foreign pods of a batch (harness.generative.foreign_pods); none: no foreign pods.
    nodes: tuple[str, ...] = ()
    #: The session's RuntimeClass with an overhead, for foreign pods of that shape; None: no such shape.
    runtime_class: str | None = None
    #: Some batches find another reservation scheduler's Reserved group on a node (harness.generative.foreign_reservations):
    #: only where the scheduler under test publishes records, and so must count others'.
    foreign_reservations: bool = False

    def cpu(self, fraction: float, spelling: str = "plain") -> str:
        """cpu(0.25) on a 4800m node is '1200m'; spelt "decimal", '1.2' (whole cores, exactly the same amount)."""
        millis = share_of(self.node_cpu_millis, fraction)
        if spelling == "decimal":
            return format(Decimal(millis).scaleb(-3).normalize(), "f")
        return f"{millis}m"

    def memory(self, fraction: float, spelling: str = "plain") -> str:
        """memory(0.5) on an 8Gi node is '4294967296'; spelt "decimal", '4294M' (rounded down); "binary", '4096Mi'."""
        amount = share_of(self.node_memory_bytes, fraction)
        if spelling == "decimal":
            return f"{amount // 10**6}M"
        if spelling == "binary":
            return f"{amount // 2**20}Mi"
        return str(amount)


#: How a task's quantities are written: millicores and bytes; cores and decimal megabytes; millicores and mebibytes.
#: Each is exact (the amounts the suite computes are the amounts written), so only a scheduler that misreads a
#: spelling (`1.5` as 1 core, `500M` as 500Mi) gets a different peak.
SPELLINGS = ("plain", "decimal", "binary")


Requests = tuple[float | None, float | None]  # (cpu, memory) fractions; None: not set


@dataclass
class TaskShape:
    """TaskShape is one drawn pipeline task, sizes as fractions of a node (scaled when rendered)."""

    name: str
    is_finally: bool = False
    run_after: list[str] = field(default_factory=list)
    #: The task whose result `out` this task takes as a param (a dependency through results only).
    result_from: str | None = None
    produces: bool = False
    by_ref: bool = False
    work: Requests = (None, None)
    extra_steps: list[Requests] = field(default_factory=list)
    step_template: Requests | None = None
    sidecar: Requests | None = None
    matrix: list[str] = field(default_factory=list)
    matrix_from_run: bool = False
    include: str | None = None
    retries: int = 0
    param: str | None = None
    #: Guarded by `when: $(params.deploy) in [yes]`, false in every run: Tekton skips it.
    skipped: bool = False
    #: Every attempt exits 1: the task fails for good, and its run ends Failed once finally is done.
    fails: bool = False
    #: How long its work step runs.
    run_for: str = "1s"
    #: Set: each pod's steps end at a random moment between run_for and this (a matrix's combinations end in any order).
    run_until: str | None = None
    #: Pipeline workspaces bound, as task workspaces w0, w1... (or by their own name, the short way: `short`).
    bindings: list[str] = field(default_factory=list)
    #: Of `bindings`, those written the short way: `{name: source}`, the task's workspace named as the pipeline's.
    short: set[str] = field(default_factory=set)
    #: A pipeline workspace an embedded taskSpec's step refers to without binding it (propagated by Tekton).
    implicit: str | None = None
    #: How its quantities are written (SPELLINGS).
    spelling: str = "plain"


@dataclass
class RunShape:
    name: str
    tasks: list[TaskShape]
    workspaces: dict[str, str]  # pipeline workspace -> binding kind
    by_ref: bool
    pvcs: dict[str, str]  # pipeline workspace -> claim name, for persistentVolumeClaim bindings
    #: Created PipelineRunPending; the scenario starts it.
    pending: bool = False


@dataclass(frozen=True)
class DrawnRun:
    """DrawnRun is one drawn PipelineRun with every object it needs, in the order to create them."""

    name: str
    index: int
    docs: tuple[Obj, ...]
    #: The run as Tekton resolves it (an embedded pipelineSpec, params substituted): what the expectations read
    #: before the cluster has resolved it.
    resolved: Obj
    #: One line per drawn feature, for the log.
    features: tuple[str, ...]
    scale: float
    #: Created PipelineRunPending: the scenario starts it once another run of its batch has a pod bound.
    pending: bool = False
    #: A task of it fails for good, so the run ends Succeeded False, reason Failed.
    fails: bool = False
    #: Another scheduler's Reserved group the batch finds on a node (the batch's first run carries it).
    foreign_reservation: ForeignReservation | None = None
    #: Tekton makes a pod for it as soon as it starts: a DAG task with no dependency that no `when` skips.
    #: (A run whose every task is skipped, or waits on one, may never have a pod.)
    starts_a_pod: bool = True

    @property
    def pipeline_run(self) -> Obj:
        return next(d for d in self.docs if d["kind"] == "PipelineRun")

    @property
    def tasks(self) -> dict[str, Obj]:
        """tasks are the Task objects drawn with the run, by name (for its taskRefs)."""
        return {d["metadata"]["name"]: d for d in self.docs if d["kind"] == "Task"}

    def demand(self) -> Amount:
        groups = expected_groups(self.resolved) or ()
        return peaks.run_demand(groups, self.resolved, self.tasks)

    def yaml(self) -> str:
        return yaml.safe_dump_all(list(self.docs), sort_keys=False)


def _requests_of(rng: random.Random, *, may_be_empty: bool) -> Requests:
    cpu = rng.choice(CPU_FRACTIONS) if rng.random() < 0.85 else None
    memory = rng.choice(MEMORY_FRACTIONS) if rng.random() < 0.7 else None
    if cpu is None and memory is None and not may_be_empty:
        cpu = rng.choice(CPU_FRACTIONS)
    return cpu, memory


def draw_shape(rng: random.Random, name: str, *, pvc_names: Sequence[str], templates_left: int, trap: bool = False) -> RunShape:
    """draw_shape() draws one run's structure and sizes from the grammar; with trap=True, a release trap (module docstring)."""
    # Workspaces and how the run binds them.
    workspaces: dict[str, str] = {}
    pvcs: dict[str, str] = {}
    free_pvcs = list(pvc_names)
    for number, ws in enumerate(WORKSPACE_NAMES[: rng.randint(1, 3)]):
        kinds = [k for k in BINDING_KINDS if (k != "persistentVolumeClaim" or free_pvcs) and (k != "volumeClaimTemplate" or templates_left > 0)]
        if trap and number == 0:
            # The trap's group needs a volume on one node.
            kinds = [k for k in kinds if k in ("persistentVolumeClaim", "volumeClaimTemplate")] or kinds
        # Co-locating bindings are what groups are made of: draw them more often than the rest, the first most.
        weights = [(12 if number == 0 else 3) if k in ("persistentVolumeClaim", "volumeClaimTemplate") else 1 for k in kinds]
        kind = rng.choices(kinds, weights)[0]
        workspaces[ws] = kind
        if kind == "persistentVolumeClaim":
            pvcs[ws] = free_pvcs.pop(0)
        if kind == "volumeClaimTemplate":
            templates_left -= 1
    # The DAG: each task after a random subset of the earlier ones.
    dag_names = list(DAG_NAMES)
    rng.shuffle(dag_names)
    tasks = [TaskShape(n) for n in dag_names[: rng.randint(2, 5)]]
    for i, task in enumerate(tasks):
        task.run_after = [t.name for t in tasks[:i] if rng.random() < 0.45]
    # Not in a trap: Tekton skips a result's consumer (the simulated step writes no result), and with it every task
    # after it, the trap's last task among them.
    if not trap and rng.random() < 0.3:
        # The last task depends on an earlier one through its result only (nothing runs after it to be skipped).
        last = tasks[-1]
        producer = rng.choice(tasks[:-1])
        producer.produces = True
        last.result_from = producer.name
        last.run_after = [a for a in last.run_after if a != producer.name]
    tasks += [TaskShape(n, is_finally=True) for n in FINALLY_NAMES[: 0 if trap else rng.choice((0, 0, 1, 2))]]
    matrix_from_run_drawn = False
    for task in tasks:
        task.by_ref = rng.random() < 0.4
        task.work = _requests_of(rng, may_be_empty=True)
        task.extra_steps = [_requests_of(rng, may_be_empty=True) if rng.random() < 0.7 else (None, None) for _ in range(rng.choice((0, 0, 1, 2)))]
        if rng.random() < 0.3:
            task.step_template = _requests_of(rng, may_be_empty=False)
        if rng.random() < 0.25:
            task.sidecar = _requests_of(rng, may_be_empty=False)
        if not task.produces and task.result_from is None and rng.random() < 0.25:
            task.matrix = rng.sample(MATRIX_VALUES, rng.choice((2, 3)))
            if not matrix_from_run_drawn and rng.random() < 0.4:
                task.matrix_from_run = matrix_from_run_drawn = True
            elif rng.random() < 0.3:
                # An include that matches a value adds nothing; a new value adds one combination.
                task.include = rng.choice([*task.matrix, *(v for v in MATRIX_VALUES if v not in task.matrix)])
            if rng.random() < OUT_OF_ORDER_CHANCE:
                task.run_until = OUT_OF_ORDER_UNTIL
        # Tekton refuses retries beside `onError: continue`, which a result's consumer has.
        if rng.random() < 0.2 and task.result_from is None:
            task.retries = rng.choice((1, 1, 2))
        if rng.random() < 0.3:
            task.param = rng.choice(("fast", "full"))
        task.bindings = rng.sample(list(workspaces), min(rng.choice((0, 1, 1, 1, 2, 2)), len(workspaces)))
        unbound = [w for w in workspaces if w not in task.bindings]
        if not task.by_ref and unbound and rng.random() < 0.15:
            task.implicit = rng.choice(unbound)
        task.spelling = rng.choice(SPELLINGS)
    _draw_skips(rng, tasks, workspaces, trap=trap)
    for task in tasks:
        task.short = {ws for ws in task.bindings if rng.random() < 0.3}
    if any(t.is_finally for t in tasks) and rng.random() < FAILURE_CHANCE:
        # A task no result links and no guard skips: its failure stops the DAG and finally still runs.
        candidates = [t for t in tasks if not t.is_finally and not t.skipped and not t.produces and t.result_from is None]
        if candidates:
            rng.choice(candidates).fails = True
    pending = not trap and rng.random() < PENDING_CHANCE
    return RunShape(name, tasks, workspaces, rng.random() < 0.35, pvcs, pending)


def _may_be_skipped(task: TaskShape) -> bool:
    """A task whose result another reads, or which reads one, is never guarded: a skip would then skip its consumer too."""
    return not task.is_finally and not task.produces and task.result_from is None


def _draw_skips(rng: random.Random, tasks: list[TaskShape], workspaces: Mapping[str, str], *, trap: bool) -> None:
    """_draw_skips() guards some tasks with a false `when`; a trap also gets its skipped group member and its last task."""
    for task in tasks:
        if _may_be_skipped(task) and rng.random() < 0.12:
            task.skipped, task.retries = True, 0
    if not trap:
        return
    # The trap's group: two DAG tasks on the first workspace (co-locating), the later one skipped.
    first = next(iter(workspaces))
    kept, skipped = tasks[0], tasks[-1]
    for task in (kept, skipped):
        if first not in task.bindings:
            task.bindings = [first, *task.bindings][:2]
    kept.skipped = False
    skipped.skipped, skipped.retries = True, 0
    last = TaskShape(TRAP_TASK, run_after=[t.name for t in tasks], work=_requests_of(rng, may_be_empty=False), run_for=RUN_ON_AFTER_GROUPS)
    last.bindings = [ws for ws, kind in workspaces.items() if kind not in ("persistentVolumeClaim", "volumeClaimTemplate")][:1]
    last.spelling = rng.choice(SPELLINGS)
    tasks.append(last)


def _fraction(value: float | None, scale: float) -> float | None:
    return None if value is None else value * scale


def _requests_map(requests: Requests, scale: float, context: DrawContext, spelling: str = "plain") -> dict[str, str]:
    cpu, memory = _fraction(requests[0], scale), _fraction(requests[1], scale)
    return {
        **({"cpu": context.cpu(cpu, spelling)} if cpu is not None else {}),
        **({"memory": context.memory(memory, spelling)} if memory is not None else {}),
    }


def _task_spec(task: TaskShape, scale: float, context: DrawContext) -> Obj:
    work = _requests_map(task.work, scale, context, task.spelling)
    spec = sim_task_spec(
        cpu=work.get("cpu"),
        memory=work.get("memory"),
        run_for=task.run_for,
        run_until=task.run_until,
        exit_codes=FAIL_FOR_GOOD if task.fails else ",".join(["1"] * task.retries + ["0"]) if task.retries else None,
        sidecar_cpu=_requests_map(task.sidecar, scale, context, task.spelling).get("cpu") if task.sidecar else None,
        sidecar_memory=_requests_map(task.sidecar, scale, context, task.spelling).get("memory") if task.sidecar else None,
        extra_steps=[_requests_map(s, scale, context, task.spelling) for s in task.extra_steps],
        step_template=_requests_map(task.step_template, scale, context, task.spelling) if task.step_template else None,
        params=[*(["m"] if task.matrix else []), *(["mode"] if task.param else []), *(["upstream"] if task.result_from else [])],
        results=["out"] if task.produces else [],
        workspaces=tuple(_task_workspace(task, i) for i in range(len(task.bindings))),
    )
    if task.implicit:
        spec["steps"][0]["env"] = [{"name": "IMPLICIT_DIR", "value": f"$(workspaces.{task.implicit}.path)"}]
    return spec


def _task_workspace(task: TaskShape, index: int) -> str:
    """_task_workspace() is the name the task gives its index-th binding: the pipeline's own when written the short way."""
    ws = task.bindings[index]
    return ws if ws in task.short else f"w{index}"


def _binding(run: RunShape, ws: str, context: DrawContext) -> Obj:
    kind = run.workspaces[ws]
    if kind == "persistentVolumeClaim":
        return {"name": ws, "persistentVolumeClaim": {"claimName": run.pvcs[ws]}}
    if kind == "volumeClaimTemplate":
        claim: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        if context.storage_class is not None:
            claim["storageClassName"] = context.storage_class
        return {"name": ws, "volumeClaimTemplate": {"spec": claim}}
    if kind == "emptyDir":
        return {"name": ws, "emptyDir": {}}
    if kind == "configMap":
        return {"name": ws, "configMap": {"name": f"{run.name}-settings"}}
    if kind == "secret":
        return {"name": ws, "secret": {"secretName": f"{run.name}-creds"}}
    return {"name": ws, "projected": {"sources": [{"configMap": {"name": f"{run.name}-settings"}}, {"secret": {"name": f"{run.name}-creds"}}]}}


def render(run: RunShape, index: int, scale: float, context: DrawContext) -> DrawnRun:
    """render() turns a drawn shape into the objects a Tekton user applies, sizes scaled by `scale`."""
    docs: list[Obj] = []
    kinds = set(run.workspaces.values())
    if kinds & {"configMap", "projected"}:
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{run.name}-settings"}, "data": {"mode": "generative"}})
    if kinds & {"secret", "projected"}:
        docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"{run.name}-creds"}, "stringData": {"token": "not-a-secret"}})
    pipeline_params: list[Obj] = []
    run_params: list[Obj] = []
    entries: dict[bool, list[Obj]] = {False: [], True: []}
    resolved_entries: dict[bool, list[Obj]] = {False: [], True: []}
    features: list[str] = [f"workspace {ws}: {kind}" for ws, kind in run.workspaces.items()]
    for task in run.tasks:
        spec = _task_spec(task, scale, context)
        entry: Obj = {"name": task.name}
        if task.run_after:
            entry["runAfter"] = list(task.run_after)
        if task.result_from:
            entry["onError"] = "continue"
        params = [
            *([{"name": "mode", "value": task.param}] if task.param else []),
            *([{"name": "upstream", "value": f"$(tasks.{task.result_from}.results.out)"}] if task.result_from else []),
        ]
        if params:
            entry["params"] = params
        if task.retries:
            entry["retries"] = task.retries
        if task.skipped:
            entry["when"] = [{"input": f"$(params.{GATE_PARAM})", "operator": "in", "values": ["yes"]}]
        if task.bindings:
            entry["workspaces"] = [
                {"name": ws} if ws in task.short else {"name": _task_workspace(task, i), "workspace": ws} for i, ws in enumerate(task.bindings)
            ]
        resolved_matrix: Obj | None = None
        if task.matrix:
            resolved_matrix = {"params": [{"name": "m", "value": list(task.matrix)}]}
            if task.include:
                resolved_matrix["include"] = [{"name": "extra", "params": [{"name": "m", "value": task.include}]}]
            matrix = copy.deepcopy(resolved_matrix)
            if task.matrix_from_run:
                param = f"{task.name}-targets"
                pipeline_params.append({"name": param, "type": "array", "default": [task.matrix[0]]})
                run_params.append({"name": param, "value": list(task.matrix)})
                matrix["params"][0]["value"] = f"$(params.{param}[*])"
            entry["matrix"] = matrix
        if task.by_ref:
            task_name = f"{run.name}-{task.name}"
            annotations = spec.pop("metadata")["annotations"]
            docs.append({"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": task_name, "annotations": annotations}, "spec": spec})
            entry["taskRef"] = {"name": task_name}
        else:
            entry["taskSpec"] = spec
        entries[task.is_finally].append(entry)
        resolved = copy.deepcopy(entry)
        if task.skipped:
            resolved["when"] = [{"input": "no", "operator": "in", "values": ["yes"]}]
        if resolved_matrix is not None:
            resolved["matrix"] = resolved_matrix
        resolved_entries[task.is_finally].append(resolved)
        features.append(_describe(task))
    if any(task.skipped for task in run.tasks):
        pipeline_params.append({"name": GATE_PARAM, "type": "string", "default": "yes"})
        run_params.append({"name": GATE_PARAM, "value": "no"})
    pipeline_spec: Obj = {"workspaces": [{"name": ws} for ws in run.workspaces]}
    if pipeline_params:
        pipeline_spec["params"] = pipeline_params
    pipeline_spec["tasks"] = entries[False]
    if entries[True]:
        pipeline_spec["finally"] = entries[True]
    resolved_spec: Obj = {**pipeline_spec, "tasks": resolved_entries[False], **({"finally": resolved_entries[True]} if resolved_entries[True] else {})}
    resolved_spec.pop("params", None)
    run_spec: Obj = {
        "taskRunTemplate": {"podTemplate": {"schedulerName": context.scheduler_name, "nodeSelector": dict(context.pool_selector)}},
    }
    if run.by_ref:
        docs.append({"apiVersion": "tekton.dev/v1", "kind": "Pipeline", "metadata": {"name": f"{run.name}-pipeline"}, "spec": pipeline_spec})
        run_spec["pipelineRef"] = {"name": f"{run.name}-pipeline"}
        features.insert(0, "pipelineRef")
    else:
        run_spec["pipelineSpec"] = pipeline_spec
    if run_params:
        run_spec["params"] = run_params
    if run.pending:
        run_spec["status"] = "PipelineRunPending"
        run_spec["timeouts"] = {"pipeline": PENDING_RUN_TIMEOUT}
        features.insert(0, f"created PipelineRunPending, timeouts.pipeline {PENDING_RUN_TIMEOUT}, started once another run of its batch has a pod bound")
    run_spec["workspaces"] = [_binding(run, ws, context) for ws in run.workspaces]
    pipeline_run: Obj = {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": {"name": run.name}, "spec": run_spec}
    docs.append(pipeline_run)
    resolved_run = copy.deepcopy(pipeline_run)
    resolved_run["spec"].pop("pipelineRef", None)
    resolved_run["spec"]["pipelineSpec"] = resolved_spec
    starts_a_pod = any(not t.is_finally and not t.run_after and t.result_from is None and not t.skipped for t in run.tasks)
    return DrawnRun(
        run.name, index, tuple(docs), resolved_run, tuple(features), scale, run.pending, any(t.fails for t in run.tasks), starts_a_pod=starts_a_pod,
    )


def _describe(task: TaskShape) -> str:
    words = ["finally" if task.is_finally else "task", task.name, "taskRef" if task.by_ref else "taskSpec"]
    if task.run_after:
        words.append(f"after {','.join(task.run_after)}")
    if task.result_from:
        words.append(f"result of {task.result_from}")
    words += [w for w, on in (
        (f"{len(task.extra_steps) + 1} steps", bool(task.extra_steps)), ("stepTemplate", bool(task.step_template)),
        ("sidecar", bool(task.sidecar)), (f"matrix x{len(task.matrix)}", bool(task.matrix)),
        ("from the run's params", task.matrix_from_run), (f"include {task.include}", bool(task.include)),
        (f"retries {task.retries}", bool(task.retries)), ("param", bool(task.param)), ("skipped by when", task.skipped),
        ("fails for good", task.fails), (f"combinations end in any order within {task.run_until}", bool(task.run_until)),
        (f"runs {task.run_for}", task.run_for != "1s"),
    ) if on]
    if task.bindings:
        words.append(f"binds {','.join(ws + (' short' if ws in task.short else '') for ws in task.bindings)}")
    if task.implicit:
        words.append(f"uses {task.implicit} implicitly")
    if task.spelling != "plain":
        words.append(f"{task.spelling} quantities")
    return " ".join(words)


def draw_run(
    rng: random.Random, index: int, context: DrawContext, *, pvc_names: Sequence[str], templates_left: int, batch: int = MAX_BATCH,
    room: float = 1.0,
) -> DrawnRun:
    """draw_run() draws one run and scales its sizes to fill FILL of its share in a batch of `batch` runs; run 0 is a release trap.

    `room` is the part of each node the batch's foreign pods leave (1.0: none): the share is of that.
    """
    shape = draw_shape(rng, f"generative-{index:02d}", pvc_names=pvc_names, templates_left=templates_left, trap=index == 0)
    cpu_cap = context.node_cpu_millis * cpu_share(batch) * room
    memory_cap = context.node_memory_bytes * memory_share(batch)
    demand = render(shape, index, 1.0, context).demand()
    fill = rng.uniform(*FILL)
    ratios = [cap / amount for cap, amount in ((cpu_cap, demand.cpu), (memory_cap, demand.memory)) if amount]
    scale = fill * min(ratios) if ratios else 1.0
    while True:
        # Each request is rounded down to a whole millicore or byte after scaling, which can leave the scaled
        # demand a little over its cap: shrink until it fits.
        drawn = render(shape, index, scale, context)
        demand = drawn.demand()
        if demand.cpu <= cpu_cap and demand.memory <= memory_cap:
            return drawn
        scale *= 0.95


def _foreign_words(pod: Obj, context: DrawContext) -> str:
    taken = pod_request(with_overhead(pod, context.node_cpu_millis)).cpu
    return f"{pod['metadata']['annotations'][SHAPE_ANNOTATION]}, {taken}m in all"


def templates_used(drawn: DrawnRun) -> int:
    return sum(1 for b in drawn.pipeline_run["spec"]["workspaces"] if "volumeClaimTemplate" in b)


def draw_batches(
    seed: int, budget: int, context: DrawContext, *, pvc_slots: Sequence[Sequence[str]], claim_templates: int
) -> list[list[DrawnRun]]:
    """draw_batches() draws `budget` runs in batches of 2 or 3 (1 when the budget is 1), all from one seed.

    Slot i of a batch binds its PVC workspaces to pvc_slots[i] (the batches run
    one after another, so a slot's claims are free again); all runs together
    bind at most `claim_templates` volumeClaimTemplates (one spare volume each).
    """
    if len(pvc_slots) < MAX_BATCH:
        raise ValueError(f"draw_batches needs {MAX_BATCH} PVC slots, got {len(pvc_slots)}")
    rng = random.Random(seed)
    batches: list[list[DrawnRun]] = []
    index = 0
    templates_left = claim_templates
    while index < budget:
        left = budget - index
        # Parts of 2 or 3 that never leave a run alone: 4 is 2 + 2, 5 is 2 + 3 or 3 + 2.
        size = left if left <= MAX_BATCH else 2 if left == 4 else rng.choice((2, 3))
        batch = []
        foreign = draw_foreign_pods(rng, nodes=context.nodes, prefix=f"generative-{index:02d}", sizes=context)
        reservation = (
            draw_foreign_reservation(rng, nodes=context.nodes, name=f"generative-{index:02d}-other", sizes=context) if context.foreign_reservations else None
        )
        room = 1.0 - load(foreign, context.node_cpu_millis, held=reservation.taken if reservation else None)
        for slot in range(size):
            drawn = draw_run(rng, index, context, pvc_names=pvc_slots[slot], templates_left=templates_left, batch=size, room=room)
            templates_left -= templates_used(drawn)
            batch.append(drawn)
            index += 1
        if foreign:
            # The batch's first run carries them: created before its PipelineRun, judged with the batch.
            described = tuple(f"foreign pod on {p['spec']['nodeName']}: {_foreign_words(p, context)}" for p in foreign)
            batch[0] = dataclasses.replace(batch[0], docs=(*foreign, *batch[0].docs), features=(*described, *batch[0].features))
        if reservation:
            batch[0] = dataclasses.replace(batch[0], foreign_reservation=reservation, features=(reservation.describe(), *batch[0].features))
        batches.append(batch)
    return batches
