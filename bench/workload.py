"""Workload: the PipelineRuns and pods the benchmark creates, built as data (pure functions).

Three PipelineRun shapes, all of whose tasks share one PVC-backed workspace
(so each run is one reservation group):

    single   one task
    chain    a -> b -> c, run one after the other
    fanout   three parallel tasks, then a join task

Two ways to get pods (docs/benchmarks.md, "Method"):

* `tekton`: the PipelineRun runs; Tekton's controller makes the pods (tasks
  run for a few seconds on KWOK). End to end, and Tekton's pod creation rate
  bounds what a scheduler can show.
* `direct`: the PipelineRun is created with `spec.status: PipelineRunPending`,
  so Tekton starts nothing but the reference can plan it and make its
  ReservationRecord; the benchmark then creates the pods Tekton would create
  first (the single task, the chain's first task, the fan-out's three parallel
  tasks) itself, with Tekton's labels, the workspace PVC mounted and the step
  request. Their steps are held (`sim.rescon.dev/hold`), so pods stay bound.
  This stresses the scheduler, not Tekton.

A *mix* says how many runs of each shape, and how many plain pods (no Tekton
labels, no group) go with them, and whether each run's workspace is a shared,
Bound claim (`tekton`) or a claim of its own from a `volumeClaimTemplate` of
the cluster's default class (`volumes`): in direct mode the benchmark then
makes the claim Tekton would make for the run (`pvc-<hash>`, no
storageClassName, so WaitForFirstConsumer: provisioned on the node chosen for
the run's first pod).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from harness.cluster.simulation import HOLD, sim_task_spec

SHAPES = ("single", "chain", "fanout")

#: Labels Tekton puts on a task pod that the reference reads (and kube-scheduler ignores).
PIPELINE_RUN_LABEL = "tekton.dev/pipelineRun"
PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"
TASK_RUN_LABEL = "tekton.dev/taskRun"
#: Marks every object of one benchmark run, so cleanup and watches select exactly them.
RUN_LABEL = "bench.rescon.dev/run"
KIND_LABEL = "bench.rescon.dev/kind"

STEP_IMAGE = "rescon.invalid/bench-step:latest"


@dataclass(frozen=True)
class Mix:
    """Mix is a workload recipe: runs per shape per `unit`, plus plain pods per unit.

    Example: Mix("tekton", {"single": 1, "chain": 1, "fanout": 1}, plain=0)
    gives, in direct mode, 1 + 1 + 3 = 5 pods per unit of three runs.
    """

    name: str
    shapes: Mapping[str, int]
    plain: int = 0
    #: Each run's workspace is a volumeClaimTemplate of the default class: a claim per run, provisioned when first used.
    claim_template: bool = False

    def direct_pods_per_unit(self) -> int:
        return sum(count * len(first_tasks(shape)) for shape, count in self.shapes.items()) + self.plain

    def units_for(self, pods: int) -> int:
        """units_for(500) is how many repetitions of the mix give at least 500 direct pods."""
        per = self.direct_pods_per_unit()
        return max(1, -(-pods // per))


TEKTON_MIX = Mix("tekton", {"single": 1, "chain": 1, "fanout": 1})
PLAIN_HEAVY_MIX = Mix("plain-heavy", {"single": 1}, plain=4)
#: The Tekton mix with a volumeClaimTemplate workspace per run (issue #35): 5 pods and 3 claims per unit.
VOLUMES_MIX = Mix("volumes", {"single": 1, "chain": 1, "fanout": 1}, claim_template=True)
MIXES = {m.name: m for m in (TEKTON_MIX, PLAIN_HEAVY_MIX, VOLUMES_MIX)}

#: The workspace every benchmark run binds, and the template claim's size.
WORKSPACE = "source"
CLAIM_SIZE = "1Gi"


def task_names(shape: str) -> list[str]:
    """task_names('fanout') == ['p0', 'p1', 'p2', 'join']."""
    if shape == "single":
        return ["t0"]
    if shape == "chain":
        return ["a", "b", "c"]
    if shape == "fanout":
        return ["p0", "p1", "p2", "join"]
    raise ValueError(f"unknown shape {shape!r}: use one of {', '.join(SHAPES)}")


def first_tasks(shape: str) -> list[str]:
    """first_tasks('chain') == ['a']: the tasks Tekton starts at once, i.e. the pods of direct mode."""
    return [t for t in task_names(shape) if t != "join"][:1] if shape == "chain" else [t for t in task_names(shape) if t != "join"]


def _run_after(shape: str, task: str) -> list[str]:
    if shape == "chain":
        order = task_names(shape)
        index = order.index(task)
        return [order[index - 1]] if index else []
    if shape == "fanout" and task == "join":
        return ["p0", "p1", "p2"]
    return []


@dataclass(frozen=True)
class TaskSize:
    """TaskSize is a task's step request and simulated behaviour."""

    cpu: str = "100m"
    memory: str = "64Mi"
    run_for: str | None = None
    hold: bool = False


def pipeline_run(
    name: str,
    shape: str,
    *,
    pvc: str,
    scheduler_name: str,
    pool_selector: Mapping[str, str],
    run_label: str,
    pending: bool,
    sizes: Mapping[str, TaskSize] | None = None,
    default_size: TaskSize = TaskSize(),
    claim_template: bool = False,
) -> dict[str, Any]:
    """pipeline_run('r-0', 'chain', pvc='ws-0', ...) is a PipelineRun of that shape on one workspace.

    pending=True creates it as `PipelineRunPending` (direct mode: Tekton starts
    nothing). `sizes` overrides the size of single tasks by name. With
    claim_template=True the workspace is a volumeClaimTemplate with no
    storageClassName (the default class) instead of the claim `pvc`.
    """
    tasks = []
    for task in task_names(shape):
        size = (sizes or {}).get(task, default_size)
        entry: dict[str, Any] = {
            "name": task,
            "workspaces": [{"name": "w", "workspace": WORKSPACE}],
            "taskSpec": sim_task_spec(cpu=size.cpu, memory=size.memory, run_for=size.run_for, hold=size.hold),
        }
        after = _run_after(shape, task)
        if after:
            entry["runAfter"] = after
        tasks.append(entry)
    spec: dict[str, Any] = {
        "pipelineSpec": {"workspaces": [{"name": WORKSPACE}], "tasks": tasks},
        "workspaces": [{"name": WORKSPACE, "volumeClaimTemplate": {"spec": claim_spec()}} if claim_template
                       else {"name": WORKSPACE, "persistentVolumeClaim": {"claimName": pvc}}],
        "taskRunTemplate": {"podTemplate": {"schedulerName": scheduler_name, "nodeSelector": dict(pool_selector)}},
        "timeouts": {"pipeline": "1h"},
    }
    if pending:
        spec["status"] = "PipelineRunPending"
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"name": name, "labels": {RUN_LABEL: run_label, KIND_LABEL: shape}},
        "spec": spec,
    }


def task_pod(
    run: str,
    task: str,
    *,
    pvc: str | None,
    scheduler_name: str,
    pool_selector: Mapping[str, str],
    run_label: str,
    size: TaskSize = TaskSize(),
) -> dict[str, Any]:
    """task_pod('r-0', 'a', ...) is the pod Tekton would make for task a of run r-0 (direct mode).

    With run=='' it is a plain pod: no Tekton labels, no workspace.
    """
    tekton = bool(run)
    name = f"{run}-{task}-pod" if tekton else task
    labels = {RUN_LABEL: run_label, KIND_LABEL: "task" if tekton else "plain"}
    if tekton:
        labels.update({PIPELINE_RUN_LABEL: run, PIPELINE_TASK_LABEL: task, TASK_RUN_LABEL: f"{run}-{task}"})
    container: dict[str, Any] = {
        "name": "step-work",
        "image": STEP_IMAGE,
        "command": ["true"],
        "resources": {"requests": {"cpu": size.cpu, "memory": size.memory}},
    }
    spec: dict[str, Any] = {
        "schedulerName": scheduler_name,
        "nodeSelector": dict(pool_selector),
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "containers": [container],
    }
    if pvc:
        spec["volumes"] = [{"name": "ws-source", "persistentVolumeClaim": {"claimName": pvc}}]
        container["volumeMounts"] = [{"name": "ws-source", "mountPath": "/workspace/source"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels, "annotations": {HOLD: "true"}},
        "spec": spec,
    }


def claim_spec() -> dict[str, Any]:
    """claim_spec() is the template's claim spec: 1Gi ReadWriteOnce and no storageClassName, so the cluster's default class serves it."""
    return {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": CLAIM_SIZE}}}


def template_claim_name(run: str, workspace: str = WORKSPACE) -> str:
    """template_claim_name('r-0') is the claim Tekton makes for run r-0's volumeClaimTemplate: 'pvc-' and 10 hex digits.

    Tekton hashes the workspace's name with the PipelineRun's uid
    (pkg/reconciler/volumeclaim: sha256, the first 10 hex digits); the
    benchmark makes the claim before it knows the uid, so it hashes the name.
    """
    return "pvc-" + hashlib.sha256((workspace + run).encode()).hexdigest()[:10]


def template_claim(run: str, *, run_label: str, workspace: str = WORKSPACE) -> dict[str, Any]:
    """template_claim('r-0', run_label=...) is the claim Tekton would make for run r-0's volumeClaimTemplate.

    Labelled with the benchmark's run label, so the claim watch and the cleanup
    select exactly the run's claims; no ownerReference (the PipelineRun's uid is
    not known yet), so the benchmark deletes the claims itself.
    """
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": template_claim_name(run, workspace), "labels": {RUN_LABEL: run_label, PIPELINE_RUN_LABEL: run}},
        "spec": claim_spec(),
    }


@dataclass(frozen=True)
class DirectWorkload:
    """DirectWorkload is everything one direct-mode run creates: pending PipelineRuns, claims (volumes mix only) and pods."""

    pipeline_runs: tuple[dict[str, Any], ...]
    pods: tuple[dict[str, Any], ...]
    claims: tuple[dict[str, Any], ...] = ()

    def claim_of_run(self) -> dict[str, str]:
        """claim_of_run() is {PipelineRun name: its template claim's name} (empty for a mix of shared claims)."""
        return {claim["metadata"]["labels"][PIPELINE_RUN_LABEL]: claim["metadata"]["name"] for claim in self.claims}


def direct_workload(
    mix: Mix,
    pods: int,
    *,
    prefix: str,
    pvcs: list[str],
    scheduler_name: str,
    pool_selector: Mapping[str, str],
    run_label: str,
) -> DirectWorkload:
    """direct_workload(TEKTON_MIX, 500, ...) has at least 500 pods, interleaving the shapes and plain pods.

    Runs use the PVCs round-robin (the reference groups by PipelineRun, so
    sharing a claim between runs does not merge their groups); with a mix of
    volumeClaimTemplates each run gets a claim of its own instead, and only the
    runs whose pods are kept get one.
    """
    runs: list[dict[str, Any]] = []
    created: list[dict[str, Any]] = []
    claims: dict[str, dict[str, Any]] = {}
    common = {"scheduler_name": scheduler_name, "pool_selector": pool_selector, "run_label": run_label}
    for unit in range(mix.units_for(pods)):
        for shape, count in mix.shapes.items():
            for k in range(count):
                name = f"{prefix}-{shape}-{unit}-{k}"
                if mix.claim_template:
                    claims[name] = template_claim(name, run_label=run_label)
                    pvc = claims[name]["metadata"]["name"]
                else:
                    pvc = pvcs[len(runs) % len(pvcs)]
                runs.append(pipeline_run(name, shape, pvc=pvc, pending=True, claim_template=mix.claim_template, **common))
                for task in first_tasks(shape):
                    created.append(task_pod(name, task, pvc=pvc, **common))
        for k in range(mix.plain):
            created.append(task_pod("", f"{prefix}-plain-{unit}-{k}", pvc=None, **common))
    kept = created[:pods]
    used = {pod["metadata"]["labels"].get(PIPELINE_RUN_LABEL) for pod in kept}
    return DirectWorkload(tuple(runs), tuple(kept), tuple(claim for run, claim in claims.items() if run in used))


def tekton_runs(
    mix: Mix,
    runs: int,
    *,
    prefix: str,
    pvcs: list[str],
    scheduler_name: str,
    pool_selector: Mapping[str, str],
    run_label: str,
    run_for: str = "2s",
) -> list[dict[str, Any]]:
    """tekton_runs(TEKTON_MIX, 30, ...) is 30 PipelineRuns that Tekton runs, the shapes interleaved."""
    order = [shape for shape, count in mix.shapes.items() for _ in range(count)]
    return [
        pipeline_run(
            f"{prefix}-{order[i % len(order)]}-{i}",
            order[i % len(order)],
            pvc=pvcs[i % len(pvcs)],
            scheduler_name=scheduler_name,
            pool_selector=pool_selector,
            run_label=run_label,
            pending=False,
            default_size=TaskSize(run_for=run_for),
        )
        for i in range(runs)
    ]


def contention_runs(
    runs: int,
    *,
    prefix: str,
    pvcs: list[str],
    scheduler_name: str,
    pool_selector: Mapping[str, str],
    run_label: str,
    node_cpu_millis: int,
) -> list[dict[str, Any]]:
    """contention_runs(8, ..., node_cpu_millis=4000) are chains whose later task needs most of a node.

    Each run is a chain: `a` (1/8 of a node, 3 s) then `b` (5/8 of a node, 3 s), sharing
    the workspace, so the group's peak is b. Two runs' `a` fit on one node
    together, but their two `b` do not: a scheduler that does not hold b's room
    from the moment a lands lets the other run's a (and then its b) take it.
    """
    small = TaskSize(cpu=f"{node_cpu_millis // 8}m", run_for="3s")
    big = TaskSize(cpu=f"{node_cpu_millis * 5 // 8}m", run_for="3s")
    out = []
    for i in range(runs):
        run = pipeline_run(
            f"{prefix}-{i}",
            "chain",
            pvc=pvcs[i % len(pvcs)],
            scheduler_name=scheduler_name,
            pool_selector=pool_selector,
            run_label=run_label,
            pending=False,
            sizes={"a": small, "b": big},
        )
        tasks = run["spec"]["pipelineSpec"]["tasks"]
        run["spec"]["pipelineSpec"]["tasks"] = [t for t in tasks if t["name"] in ("a", "b")]
        out.append(run)
    return out


#: The reason Tekton's controller gives a PipelineRun created with `spec.status: PipelineRunPending`.
PENDING_REASON = "PipelineRunPending"


def tekton_marked_pending(run: Mapping[str, Any]) -> bool:
    """tekton_marked_pending(run) is True once Tekton's controller has reconciled a pending run (Succeeded Unknown, PipelineRunPending)."""
    for condition in (run.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Succeeded":
            return condition.get("status") == "Unknown" and condition.get("reason") == PENDING_REASON
    return False


def resolved_status_patch(run: Mapping[str, Any]) -> dict[str, Any]:
    """resolved_status_patch(run) is the merge patch of its status that Tekton makes when it starts the run: status.pipelineSpec.

    Tekton resolves `spec.pipelineRef` or copies `spec.pipelineSpec` into
    `status.pipelineSpec` (contract section 4 plans from there); the
    benchmark's runs embed their pipeline, so the resolved plan is that spec.
    """
    spec = (run.get("spec") or {}).get("pipelineSpec")
    if not spec:
        raise ValueError(f"PipelineRun {(run.get('metadata') or {}).get('name')} embeds no pipelineSpec to resolve")
    return {"status": {"pipelineSpec": spec}}


def has_resolved_plan(run: Mapping[str, Any]) -> bool:
    """has_resolved_plan(run) is True when status.pipelineSpec names at least one task."""
    return bool(((run.get("status") or {}).get("pipelineSpec") or {}).get("tasks"))
