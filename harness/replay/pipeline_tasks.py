"""pipeline_tasks: a pipeline's tasks as replay runs them, each simulated or pointed at the simulated Task it names.

    * an embedded taskSpec is simulated in place (harness.replay.steps);
    * a taskRef names a Task of the given files, plainly or through a resolver
      (harness.replay.references): the reference is localized, the Task is
      simulated once for every run that names it;
    * a custom task becomes a simulated task with no requests, declaring the
      params and workspaces its entry passes (its pod counts 0, as the
      contract counts a custom task, and it keeps its place in its group);
    * a task that runs a Pipeline is left as written.

`task_specs` maps each pipeline task's name to the simulated Task spec its pod
is built from: what placement and the judge's peaks read.

    >>> pipeline = {"tasks": [{"name": "wait", "taskRef": {"apiVersion": "example.dev/v1", "kind": "Wait"},
    ...     "params": [{"name": "seconds", "value": "30"}], "workspaces": [{"name": "src", "workspace": "source"}]}]}
    >>> spec = simulated_pipeline(pipeline, "Pipeline ci", {}, namespace="ns", run_for="2s").spec
    >>> stand_in = spec["tasks"][0]["taskSpec"]
    >>> stand_in["params"], stand_in["workspaces"], "computeResources" in stand_in["steps"][0]
    ([{'name': 'seconds', 'type': 'string'}], [{'name': 'src'}], False)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.references import is_custom_task, is_remote, localized, referenced_name, remote_note, runs_a_pipeline
from harness.replay.steps import simulated_embedded

Obj = dict[str, Any]

#: The step a custom task's stand-in runs.
STAND_IN_STEP = "custom-task"


@dataclass(frozen=True)
class SimulatedPipeline:
    """SimulatedPipeline is a pipeline spec as replay applies it, what each task's pod is built from, and what to say about it."""

    spec: Obj
    task_specs: Mapping[str, Mapping[str, Any]]
    notes: tuple[str, ...]
    uses_resolver: bool


def _param_type(value: Any) -> Obj:
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object", "properties": {key: {"type": "string"} for key in sorted(value)}}
    return {"type": "string"}


def custom_stand_in(entry: Mapping[str, Any], *, run_for: str) -> Obj:
    """custom_stand_in() is a custom task's entry with an embedded taskSpec of one simulated step with no requests instead of its reference."""
    declared = {str(p["name"]): _param_type(p.get("value")) for p in (entry.get("params") or [])}
    declared.update({str(p["name"]): {"type": "string"} for p in ((entry.get("matrix") or {}).get("params") or [])})
    spec: Obj = {}
    if declared:
        spec["params"] = [{"name": name, **kind} for name, kind in declared.items()]
    bindings = entry.get("workspaces") or []
    if bindings:
        spec["workspaces"] = [{"name": b["name"]} for b in bindings]
    spec["steps"] = [{"name": STAND_IN_STEP}]
    stand_in = {k: copy.deepcopy(v) for k, v in entry.items() if k not in ("taskRef", "taskSpec")}
    stand_in["taskSpec"] = simulated_embedded(spec, run_for=run_for)
    return stand_in


def simulated_pipeline(
    spec: Mapping[str, Any], where: str, tasks: Mapping[str, Mapping[str, Any]], *, namespace: str, run_for: str
) -> SimulatedPipeline:
    """simulated_pipeline() rewrites every task of a pipeline spec; `tasks` are the simulated Task objects by name, `where` names the pipeline in errors."""
    rewritten = copy.deepcopy(dict(spec))
    task_specs: dict[str, Mapping[str, Any]] = {}
    notes: list[str] = []
    uses_resolver = False
    for key in ("tasks", "finally"):
        entries = []
        for entry in spec.get(key) or []:
            name = str(entry.get("name"))
            if runs_a_pipeline(entry):
                entries.append(copy.deepcopy(dict(entry)))
            elif is_custom_task(entry):
                stand_in = custom_stand_in(entry, run_for=run_for)
                task_specs[name] = stand_in["taskSpec"]
                entries.append(stand_in)
            elif entry.get("taskSpec"):
                simulated = {**copy.deepcopy(dict(entry)), "taskSpec": simulated_embedded(entry["taskSpec"], run_for=run_for)}
                task_specs[name] = simulated["taskSpec"]
                entries.append(simulated)
            elif entry.get("taskRef"):
                ref = entry["taskRef"]
                target = referenced_name(ref)
                if target is None or target not in tasks:
                    raise ReplayInputError(bad_input.task_unresolved(where, name, f"Task {target or '(no name)'}"))
                task_specs[name] = tasks[target]["spec"]
                entries.append({**copy.deepcopy(dict(entry)), "taskRef": localized(ref, "task", namespace)})
                uses_resolver = uses_resolver or is_remote(ref)
                note = remote_note(ref, f"task {name}")
                if note:
                    notes.append(note)
            else:
                raise ReplayInputError(bad_input.task_without_spec(where, name))
        if key in rewritten:
            rewritten[key] = entries
    return SimulatedPipeline(rewritten, task_specs, tuple(notes), uses_resolver)
