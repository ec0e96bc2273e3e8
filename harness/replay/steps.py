"""steps: a Task's steps rewritten to the simulation vocabulary (harness.cluster.simulation), its requests kept to the letter.

Replay judges a scheduler on the user's pipelines, not on their builds, so
every step becomes a simulated one: the image is STEP_IMAGE, the first step
plays the annotations (STEP_SCRIPT reads them from a downward-API volume on
kind; KWOK's Stages read them on the local cluster), the others run `true`.
What decides placement is kept exactly as written:

* each step's and sidecar's `computeResources` (requests and limits), and the
  `stepTemplate`'s, so the pods' requests and the groups' peaks are the user's;
* every workspace a step, sidecar or stepTemplate refers to (`$(workspaces.x...)`
  in a script, command, args, env or params): a reference in a field that goes
  is kept as an env value, since Tekton binds an embedded task's referenced
  workspaces (docs/contract.md section 4) and so it changes the groups;
* a sidecar's ports (a hostPort decides where the pod may go), the Task's
  params, results and workspaces, its emptyDir, persistentVolumeClaim and
  ephemeral volumes.

The Task's annotations get `sim.rescon.dev/run-for` (unless it has one) and a
placeholder value for every result it declares (PLACEHOLDER; an array result
one element, an object result PLACEHOLDER for each property), so a later task
that reads a result finds one. `hold` is dropped: nothing would release it.

    >>> step = {"name": "compile", "image": "golang:1.26", "script": "cd $(workspaces.src.path) && make",
    ...         "computeResources": {"requests": {"cpu": "1500m", "memory": "2Gi"}}}
    >>> simulated = simulated_steps([step])[0]
    >>> simulated["computeResources"], simulated["env"]
    ({'requests': {'cpu': '1500m', 'memory': '2Gi'}}, [{'name': 'RESCON_WORKSPACE_1', 'value': '$(workspaces.src.path)'}])
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.cluster.simulation import HOLD, IDLE_SIDECAR_COMMAND, PODINFO_DIR, RELEASE, RESULT, RUN_FOR, STEP_IMAGE, STEP_SCRIPT
from harness.monitor.expected_groups import referenced_workspaces

Obj = dict[str, Any]

#: The value every declared result gets: a later task that reads it reads this.
PLACEHOLDER = "replay-placeholder"
#: The downward-API volume through which a real step reads its pod's annotations (kind); a name no user picks.
PODINFO_VOLUME = "rescon-replay-podinfo"
#: What replay keeps of a step, a sidecar and a stepTemplate: what decides placement, and harmless fields that shape the run.
STEP_FIELDS = ("name", "computeResources", "workingDir", "onError", "timeout")
SIDECAR_FIELDS = ("name", "computeResources", "workingDir", "ports")
TEMPLATE_FIELDS = ("computeResources", "workingDir")
#: The Task's own fields that stay as written.
TASK_FIELDS = ("description", "displayName", "params", "results", "workspaces")
#: Volumes that stay: they need nothing that the given files may not hold (a Secret, a ConfigMap).
KEPT_VOLUME_SOURCES = ("emptyDir", "persistentVolumeClaim", "ephemeral")


def placeholder_value(result: Mapping[str, Any]) -> str:
    """placeholder_value() is what a declared result's simulated step writes, as the annotation holds it.

    >>> placeholder_value({"name": "digest"}), placeholder_value({"name": "shards", "type": "array"})
    ('replay-placeholder', '["replay-placeholder"]')
    >>> placeholder_value({"name": "image", "type": "object", "properties": {"url": {}, "digest": {}}})
    '{"digest":"replay-placeholder","url":"replay-placeholder"}'
    """
    kind = result.get("type") or "string"
    if kind == "array":
        return json.dumps([PLACEHOLDER], separators=(",", ":"))
    if kind == "object":
        return json.dumps({key: PLACEHOLDER for key in sorted(result.get("properties") or {})}, separators=(",", ":"))
    return PLACEHOLDER


def simulation_annotations(spec: Mapping[str, Any], existing: Mapping[str, str], *, run_for: str) -> dict[str, str]:
    """simulation_annotations() are the annotations that make the Task's pod play a simulated run: `existing` with run-for and the results.

    A run-for already there (a Task written for the simulator) stays; hold and release go.
    """
    annotations = {k: v for k, v in existing.items() if k not in (HOLD, RELEASE)}
    annotations.setdefault(RUN_FOR, run_for)
    for result in spec.get("results") or []:
        annotations[RESULT + str(result["name"])] = placeholder_value(result)
    return annotations


def workspace_env(container: Mapping[str, Any], where: str) -> list[Obj]:
    """workspace_env() keeps every workspace `container` refers to as an env value, one variable each, in name order.

    `where` is the container's place in a Task spec: 'steps', 'sidecars' or 'stepTemplate'.
    """
    spec = {where: container} if where == "stepTemplate" else {where: [container]}
    return [
        {"name": f"RESCON_WORKSPACE_{index}", "value": f"$(workspaces.{name}.path)"}
        for index, name in enumerate(sorted(referenced_workspaces(spec)), start=1)
    ]


def _kept(container: Mapping[str, Any], fields: Sequence[str]) -> Obj:
    return {key: copy.deepcopy(container[key]) for key in fields if key in container}


def _mounts(container: Mapping[str, Any], volumes: frozenset[str]) -> list[Obj]:
    """_mounts() are the container's mounts of the volumes that stay, none at the podinfo path."""
    return [dict(m) for m in container.get("volumeMounts") or [] if m.get("name") in volumes and m.get("mountPath") != PODINFO_DIR]


def simulated_steps(steps: Sequence[Mapping[str, Any]], volumes: frozenset[str] = frozenset()) -> list[Obj]:
    """simulated_steps() rewrites a Task's steps: the first plays the annotations, the others run `true`; `volumes` are those that stay."""
    rewritten: list[Obj] = []
    for index, step in enumerate(steps):
        simulated = _kept(step, STEP_FIELDS)
        simulated["image"] = STEP_IMAGE
        mounts = _mounts(step, volumes)
        if index == 0:
            simulated["script"] = STEP_SCRIPT
            mounts.append({"name": PODINFO_VOLUME, "mountPath": PODINFO_DIR})
        else:
            simulated["command"] = ["true"]
        env = workspace_env(step, "steps")
        if env:
            simulated["env"] = env
        if mounts:
            simulated["volumeMounts"] = mounts
        rewritten.append(simulated)
    return rewritten


def simulated_sidecars(sidecars: Sequence[Mapping[str, Any]], volumes: frozenset[str] = frozenset()) -> list[Obj]:
    """simulated_sidecars() rewrites a Task's sidecars into ones that idle until Tekton stops them, ports and requests kept."""
    rewritten: list[Obj] = []
    for sidecar in sidecars:
        simulated = _kept(sidecar, SIDECAR_FIELDS)
        simulated["image"] = STEP_IMAGE
        simulated["command"] = list(IDLE_SIDECAR_COMMAND)
        env = workspace_env(sidecar, "sidecars")
        if env:
            simulated["env"] = env
        mounts = _mounts(sidecar, volumes)
        if mounts:
            simulated["volumeMounts"] = mounts
        rewritten.append(simulated)
    return rewritten


def simulated_template(template: Mapping[str, Any]) -> Obj:
    """simulated_template() is a stepTemplate with its requests and its workspace references; the rest (image, env, command) goes."""
    simulated = _kept(template, TEMPLATE_FIELDS)
    env = workspace_env(template, "stepTemplate")
    if env:
        simulated["env"] = env
    return simulated


def kept_volumes(volumes: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """kept_volumes() are a Task's volumes that stay: emptyDir, persistentVolumeClaim and ephemeral ones."""
    return [copy.deepcopy(dict(v)) for v in volumes if any(source in v for source in KEPT_VOLUME_SOURCES)]


def simulated_task_spec(spec: Mapping[str, Any]) -> Obj:
    """simulated_task_spec() is a Task's spec with every step and sidecar simulated; its annotations are simulation_annotations()'."""
    volumes = kept_volumes(spec.get("volumes") or [])
    names = frozenset(str(v.get("name")) for v in volumes)
    simulated = _kept(spec, TASK_FIELDS)
    if spec.get("stepTemplate"):
        simulated["stepTemplate"] = simulated_template(spec["stepTemplate"])
    simulated["steps"] = simulated_steps(spec.get("steps") or [], names)
    if spec.get("sidecars"):
        simulated["sidecars"] = simulated_sidecars(spec["sidecars"], names)
    podinfo = {"name": PODINFO_VOLUME, "downwardAPI": {"items": [{"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}}]}}
    simulated["volumes"] = [*volumes, podinfo]
    return simulated


def simulated_task(task: Mapping[str, Any], *, run_for: str) -> Obj:
    """simulated_task() is a Task object simulated: its name and labels kept, its annotations simulation_annotations()'."""
    metadata = task.get("metadata") or {}
    spec = task.get("spec") or {}
    kept_metadata: Obj = {"name": metadata["name"]}
    if metadata.get("labels"):
        kept_metadata["labels"] = dict(metadata["labels"])
    kept_metadata["annotations"] = simulation_annotations(spec, metadata.get("annotations") or {}, run_for=run_for)
    return {"apiVersion": task["apiVersion"], "kind": task["kind"], "metadata": kept_metadata, "spec": simulated_task_spec(spec)}


def simulated_embedded(task_spec: Mapping[str, Any], *, run_for: str) -> Obj:
    """simulated_embedded() is a pipeline task's embedded taskSpec simulated, the annotations in its own `metadata` (Tekton copies them to the pod)."""
    metadata = dict(task_spec.get("metadata") or {})
    metadata["annotations"] = simulation_annotations(task_spec, metadata.get("annotations") or {}, run_for=run_for)
    return {"metadata": metadata, **simulated_task_spec(task_spec)}
