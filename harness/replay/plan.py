"""plan: the given YAML turned into what replay applies, run by run, with what each run's line says; pure, and every bad input found here.

    inputs = classify(load_documents([Path("tekton/")]))
    plan = plan_replay(inputs, namespace="replay-1a2b3c", scheduler_name="tkn-scheduler",
                       run_for="2s", pool_selector={"rescon.dev/pool": "replay-1a2b3c"})
    plan.runs[0].base, plan.runs[0].notes  # 'build-and-test', ('result build.digest read by deploy gets "replay-placeholder"',)

A run's notes are its caveats (harness.replay.caveats: what the simulation
cannot play), then what replay chose for it (a run made for a lone Pipeline,
a stand-in ConfigMap, a reference served by the cluster resolver).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.caveats import pipeline_caveats
from harness.replay.classify import Inputs
from harness.replay.defaulting import default_run, lone_pipelines
from harness.replay.loading import Document
from harness.replay.names import base_names, written_name
from harness.replay.nodes import NodeSpec
from harness.replay.pipeline_tasks import SimulatedPipeline, simulated_pipeline
from harness.replay.placement import placement_problem, pod_template_for, task_request
from harness.replay.references import is_remote, localized, referenced_name, remote_note
from harness.replay.run_manifest import fitted_run, fitted_supporting
from harness.replay.steps import simulated_task
from harness.replay.workspace_needs import workspace_needs

Obj = dict[str, Any]


@dataclass(frozen=True)
class PlannedRun:
    """PlannedRun is one run as replay applies it (named `base`; copies rename it), where it came from and its notes."""

    base: str
    origin: str
    manifest: Obj
    notes: tuple[str, ...]
    #: Each pipeline task's simulated Task spec: what its pod is built from (placement, the judge's peaks).
    task_specs: Mapping[str, Mapping[str, Any]]
    uses_resolver: bool = False

    def named(self, name: str) -> Obj:
        """named() is the manifest under another name: one copy in one round."""
        return {**self.manifest, "metadata": {**self.manifest["metadata"], "name": name}}


@dataclass(frozen=True)
class ReplayPlan:
    """ReplayPlan is everything replay applies in its namespace, in the order it applies it, and the lines it prints first."""

    namespace: str
    tasks: Mapping[str, Obj]
    pipelines: Mapping[str, Obj]
    #: ConfigMaps, Secrets, PersistentVolumeClaims and ServiceAccounts: given, or standing in.
    supporting: tuple[Obj, ...]
    runs: tuple[PlannedRun, ...]
    skipped: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def uses_resolver(self) -> bool:
        """uses_resolver is True when some run needs Tekton's cluster resolver to answer in the namespace."""
        return any(run.uses_resolver for run in self.runs)

    @property
    def needs_default_class(self) -> bool:
        """needs_default_class is True when a claim names no class: a volumeClaimTemplate of a run, or a given PersistentVolumeClaim."""
        templates = [
            (b.get("volumeClaimTemplate") or {}).get("spec") or {}
            for run in self.runs for b in run.manifest["spec"].get("workspaces") or [] if "volumeClaimTemplate" in b
        ]
        claims = [o.get("spec") or {} for o in self.supporting if o["kind"] == "PersistentVolumeClaim"]
        return any("storageClassName" not in spec for spec in [*templates, *claims])


def _where(run: Document, name: str) -> str:
    return f"PipelineRun {name} ({run.origin})"


def _simulated_pipelines(inputs: Inputs, tasks: Mapping[str, Obj], *, namespace: str, run_for: str) -> dict[str, SimulatedPipeline]:
    return {
        name: simulated_pipeline(doc.body.get("spec") or {}, f"Pipeline {name} ({doc.origin})", tasks, namespace=namespace, run_for=run_for)
        for name, doc in inputs.pipelines.items()
    }


def _run_pipeline(run: Document, name: str, inputs: Inputs, pipelines: Mapping[str, SimulatedPipeline], tasks: Mapping[str, Obj], *,
                  namespace: str, run_for: str) -> tuple[Obj, SimulatedPipeline, Mapping[str, Any], list[str]]:
    """_run_pipeline() is the run's spec with its pipeline localized or simulated, the simulated pipeline, the pipeline as written, and notes."""
    spec = dict(run.body.get("spec") or {})
    ref, embedded = spec.get("pipelineRef"), spec.get("pipelineSpec")
    if ref:
        target = referenced_name(ref)
        if target is None or target not in pipelines:
            raise ReplayInputError(bad_input.pipeline_unresolved(_where(run, name), f"Pipeline {target or '(no name)'}"))
        simulated = pipelines[target]
        note = remote_note(ref, "the run")
        spec["pipelineRef"] = localized(ref, "pipeline", namespace)
        resolved = SimulatedPipeline(simulated.spec, simulated.task_specs, simulated.notes, simulated.uses_resolver or is_remote(ref))
        return spec, resolved, inputs.pipelines[target].body.get("spec") or {}, [note] if note else []
    if embedded:
        simulated = simulated_pipeline(embedded, _where(run, name), tasks, namespace=namespace, run_for=run_for)
        spec["pipelineSpec"] = simulated.spec
        return spec, simulated, embedded, []
    raise ReplayInputError(bad_input.run_without_pipeline(_where(run, name)))


def plan_replay(inputs: Inputs, *, namespace: str, scheduler_name: str, run_for: str, pool_selector: Mapping[str, str]) -> ReplayPlan:
    """plan_replay() plans every given run, and one for each Pipeline no run names; ReplayInputError names the first bad input."""
    made = [default_run(pipeline) for pipeline in lone_pipelines(inputs.pipelines, inputs.pipeline_runs)]
    made_docs = [Document(f"{p.origin} (run made for it)", body) for p, (body, _) in zip(lone_pipelines(inputs.pipelines, inputs.pipeline_runs), made)]
    documents = [*inputs.pipeline_runs, *made_docs]
    made_notes: list[list[str]] = [[] for _ in inputs.pipeline_runs] + [notes for _, notes in made]
    if not documents:
        raise ReplayInputError(bad_input.nothing_to_run(", ".join(sorted({d.origin.split("#")[0] for d in inputs.tasks.values()})) or "the paths given"))
    tasks = {name: simulated_task(doc.body, run_for=run_for) for name, doc in inputs.tasks.items()}
    written_specs = {name: doc.body.get("spec") or {} for name, doc in inputs.tasks.items()}
    pipelines = _simulated_pipelines(inputs, tasks, namespace=namespace, run_for=run_for)
    given = frozenset((d.kind, d.name) for d in inputs.supporting)
    supporting: dict[tuple[str, str], Obj] = {(d.kind, d.name): fitted_supporting(d.body) for d in inputs.supporting}
    planned: list[PlannedRun] = []
    bases = base_names([written_name(doc.body.get("metadata") or {}) for doc in documents])
    for doc, base, chosen in zip(documents, bases, made_notes):
        spec, simulated, written, ref_notes = _run_pipeline(doc, base, inputs, pipelines, tasks, namespace=namespace, run_for=run_for)
        manifest, fit_notes = fitted_run({**doc.body, "spec": spec}, base, pool_selector, scheduler_name=scheduler_name)
        needs = workspace_needs(manifest, _where(doc, base), claims=inputs.claims(), given=given)
        for obj in needs.objects:
            supporting.setdefault((obj["kind"], obj["metadata"]["name"]), obj)
        notes = [*pipeline_caveats(written, written_specs), *chosen, *ref_notes, *simulated.notes, *fit_notes, *needs.notes]
        planned.append(PlannedRun(base, doc.origin, manifest, tuple(notes), simulated.task_specs, simulated.uses_resolver))
    return ReplayPlan(
        namespace=namespace,
        tasks=tasks,
        pipelines={name: _pipeline_object(inputs.pipelines[name], p) for name, p in pipelines.items()},
        supporting=tuple(supporting.values()),
        runs=tuple(planned),
        skipped=inputs.skipped,
    )


def _pipeline_object(doc: Document, simulated: SimulatedPipeline) -> Obj:
    metadata = doc.body.get("metadata") or {}
    kept = {key: metadata[key] for key in ("name", "labels", "annotations") if metadata.get(key)}
    return {"apiVersion": doc.api_version, "kind": doc.kind, "metadata": kept, "spec": simulated.spec}


def placement_problems(run: PlannedRun, nodes: Sequence[NodeSpec], *, pool_labels: Sequence[str] = ()) -> list[str]:
    """placement_problems() are the run's tasks whose pods no node can take (harness.replay.placement), one line each."""
    spec = run.manifest["spec"]
    problems = []
    for task, task_spec in run.task_specs.items():
        problem = placement_problem(task, task_request(task_spec, spec, task), pod_template_for(spec, task), nodes, ignore_labels=pool_labels)
        if problem:
            problems.append(problem)
    return problems


def require_placeable(runs: Sequence[PlannedRun], nodes: Sequence[NodeSpec], *, pool_labels: Sequence[str] = ()) -> None:
    """require_placeable() refuses a plan with a task no node can take: the nodes given do not fit the pipelines given."""
    for run in runs:
        problems = placement_problems(run, nodes, pool_labels=pool_labels)
        if problems:
            raise ReplayInputError(bad_input.unplaceable(f"PipelineRun {run.base} ({run.origin})", problems[0]))
