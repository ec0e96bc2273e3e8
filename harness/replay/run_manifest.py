"""run_manifest: a PipelineRun and the objects beside it, as written but fit to be created in the replay's namespace.

What stays as written: the run's labels, annotations, params, workspaces,
timeouts and pod template, its schedulerName included (task pods reach the
scheduler under test through Tekton's config-defaults, as operators route
them; a run that names another scheduler keeps it, and its line says so).
What changes:

* metadata keeps name, labels and annotations (an exported object's uid,
  namespace, status and the like go); a `generateName` run gets its base name
  (harness.replay.names);
* `spec.status: PipelineRunPending` goes: nothing would start the run;
* the pool's label joins the nodeSelector of the run's pod template and of
  every `taskRunSpecs[]` pod template that has one, so the pods stay on the
  replay's nodes whatever else they select;
* a claim's `volumeName` goes: the volume it was bound to is not here.

    >>> run = {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": {"generateName": "build-", "uid": "u"},
    ...        "spec": {"status": "PipelineRunPending", "taskRunTemplate": {"podTemplate": {"nodeSelector": {"disk": "ssd"}}}}}
    >>> fitted, notes = fitted_run(run, "build", {"rescon.dev/pool": "replay-x"}, scheduler_name="tkn-scheduler")
    >>> fitted["metadata"], fitted["spec"], notes
    ({'name': 'build'}, {'taskRunTemplate': {'podTemplate': {'nodeSelector': {'disk': 'ssd', 'rescon.dev/pool': 'replay-x'}}}}, ['written PipelineRunPending: started at once'])
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

Obj = dict[str, Any]

#: The metadata a created object keeps.
KEPT_METADATA = ("name", "labels", "annotations")
PENDING = "PipelineRunPending"


def clean_metadata(metadata: Mapping[str, Any]) -> Obj:
    """clean_metadata() keeps name, labels and annotations."""
    return {key: copy.deepcopy(metadata[key]) for key in KEPT_METADATA if metadata.get(key)}


def fitted_supporting(obj: Mapping[str, Any]) -> Obj:
    """fitted_supporting() is a given ConfigMap, Secret or PersistentVolumeClaim as replay creates it: no status, no bound volume."""
    fitted = {key: copy.deepcopy(value) for key, value in obj.items() if key not in ("metadata", "status")}
    fitted["metadata"] = clean_metadata(obj.get("metadata") or {})
    if obj.get("kind") == "PersistentVolumeClaim":
        fitted["spec"] = {k: v for k, v in (fitted.get("spec") or {}).items() if k != "volumeName"}
    return fitted


def _pinned(pod_template: Mapping[str, Any], selector: Mapping[str, str]) -> Obj:
    return {**pod_template, "nodeSelector": {**(pod_template.get("nodeSelector") or {}), **selector}}


def fitted_run(run: Mapping[str, Any], base: str, pool_selector: Mapping[str, str], *, scheduler_name: str) -> tuple[Obj, list[str]]:
    """fitted_run() is the run with its base name, started, and kept to the pool; and the notes that say what changed."""
    spec = copy.deepcopy(dict(run.get("spec") or {}))
    notes: list[str] = []
    if spec.pop("status", None) == PENDING:
        notes.append(f"written {PENDING}: started at once")
    template = spec.setdefault("taskRunTemplate", {})
    template["podTemplate"] = _pinned(template.get("podTemplate") or {}, pool_selector)
    for entry in spec.get("taskRunSpecs") or []:
        if (entry.get("podTemplate") or {}).get("nodeSelector"):
            entry["podTemplate"] = _pinned(entry["podTemplate"], pool_selector)
    named = [template["podTemplate"].get("schedulerName")] + [(e.get("podTemplate") or {}).get("schedulerName") for e in spec.get("taskRunSpecs") or []]
    for other in dict.fromkeys(n for n in named if n and n != scheduler_name):
        notes.append(f"its pod template names schedulerName {other}, not {scheduler_name}: kept, so those pods go to {other}")
    metadata = {**clean_metadata(run.get("metadata") or {}), "name": base}
    return {"apiVersion": run["apiVersion"], "kind": run["kind"], "metadata": metadata, "spec": spec}, notes
