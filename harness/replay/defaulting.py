"""defaulting: a PipelineRun for each Pipeline that no given run names, as `tkn pipeline start --use-param-defaults` would start it.

Params with a default keep it (the run passes none). A param without one gets
PLACEHOLDER (an array param one element, an object param PLACEHOLDER for each
property), and each workspace the Pipeline declares, unless optional, is bound
to a volumeClaimTemplate of the default class: the binding teams write for a
source workspace, and the one that makes tasks share a node. The run's line
names each placeholder and binding.

    >>> from harness.replay.loading import Document
    >>> pipeline = Document("ci.yaml#2", {"apiVersion": "tekton.dev/v1", "kind": "Pipeline", "metadata": {"name": "ci"},
    ...     "spec": {"params": [{"name": "revision", "default": "main"}, {"name": "repo"}], "workspaces": [{"name": "source"}]}})
    >>> run, notes = default_run(pipeline)
    >>> run["metadata"]["name"], run["spec"]["params"], notes
    ('ci-run', [{'name': 'repo', 'value': 'replay-placeholder'}], ['made for Pipeline ci, which no given run names', 'param repo has no default: "replay-placeholder"', 'workspace source bound to a 1Gi volumeClaimTemplate of the default class'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.replay.classify import PIPELINE_RUN, TEKTON_V1
from harness.replay.loading import Document
from harness.replay.references import referenced_name
from harness.replay.steps import PLACEHOLDER

#: The size of each volumeClaimTemplate a made run binds: small, since nothing is written to it.
VOLUME_REQUEST = "1Gi"


def placeholder_param(param: Mapping[str, Any]) -> Any:
    """placeholder_param() is the value a param without a default gets, of its type.

    >>> placeholder_param({"name": "xs", "type": "array"})
    ['replay-placeholder']
    """
    kind = param.get("type") or "string"
    if kind == "array":
        return [PLACEHOLDER]
    if kind == "object":
        return {key: PLACEHOLDER for key in sorted(param.get("properties") or {})}
    return PLACEHOLDER


def volume_claim_template() -> dict[str, Any]:
    """volume_claim_template() is a binding to a new claim of the default class, as users write it."""
    return {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": VOLUME_REQUEST}}}}}


def default_run(pipeline: Document) -> tuple[dict[str, Any], list[str]]:
    """default_run() is a PipelineRun of the Pipeline with its default params, and the notes that say what replay chose."""
    spec = pipeline.body.get("spec") or {}
    notes = [f"made for Pipeline {pipeline.name}, which no given run names"]
    params = []
    for param in spec.get("params") or []:
        if "default" not in param:
            value = placeholder_param(param)
            params.append({"name": param["name"], "value": value})
            notes.append(f"param {param['name']} has no default: \"{PLACEHOLDER}\"")
    workspaces = []
    for workspace in spec.get("workspaces") or []:
        if not workspace.get("optional"):
            workspaces.append({"name": workspace["name"], **volume_claim_template()})
            notes.append(f"workspace {workspace['name']} bound to a {VOLUME_REQUEST} volumeClaimTemplate of the default class")
    run_spec: dict[str, Any] = {"pipelineRef": {"name": pipeline.name}}
    if params:
        run_spec["params"] = params
    if workspaces:
        run_spec["workspaces"] = workspaces
    run = {"apiVersion": TEKTON_V1, "kind": PIPELINE_RUN, "metadata": {"name": f"{pipeline.name}-run"}, "spec": run_spec}
    return run, notes


def named_pipelines(runs: Sequence[Document]) -> frozenset[str]:
    """named_pipelines() are the Pipelines the runs name, plainly or through a resolver."""
    names = (referenced_name((run.body.get("spec") or {}).get("pipelineRef") or {}) for run in runs)
    return frozenset(name for name in names if name)


def lone_pipelines(pipelines: Mapping[str, Document], runs: Sequence[Document]) -> list[Document]:
    """lone_pipelines() are the Pipelines no run names, in name order: each gets a run of its own."""
    named = named_pipelines(runs)
    return [pipelines[name] for name in sorted(pipelines) if name not in named]
