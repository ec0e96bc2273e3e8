"""classify: the documents sorted into what replay runs (Tasks, Pipelines, PipelineRuns), what their workspaces need, and what it leaves alone.

A repository's `tekton/` folder holds more than runs: Triggers, a
kustomization, TaskRuns kept for debugging. Those are Tekton's own or its
tooling's, so replay skips them with a line each; anything else that is not
Tekton is refused (bad_input.not_tekton), as is Tekton of another API version
than v1.

    >>> from harness.replay.loading import Document
    >>> inputs = classify([Document("a.yaml#1", {"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": "build"}}),
    ...                    Document("a.yaml#2", {"apiVersion": "triggers.tekton.dev/v1beta1", "kind": "EventListener", "metadata": {"name": "el"}})])
    >>> sorted(inputs.tasks), inputs.skipped
    (['build'], ('skipped a.yaml#2, EventListener el: Tekton Triggers start runs from events; replay applies the runs itself',))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.replay import bad_input
from harness.replay.bad_input import SUPPORTING_KINDS, ReplayInputError
from harness.replay.loading import Document

TEKTON_GROUP = "tekton.dev"
TEKTON_V1 = "tekton.dev/v1"
TASK, PIPELINE, PIPELINE_RUN = "Task", "Pipeline", "PipelineRun"

#: Tekton kinds that replay reads but does not run, with why.
SKIPPED_KINDS = {
    "TaskRun": "replay runs PipelineRuns; put its Task in a Pipeline to replay it",
    "StepAction": "the steps that use it are simulated",
    "CustomRun": "replay runs PipelineRuns",
}
#: API groups of Tekton's tooling, with why replay leaves their objects alone.
SKIPPED_GROUPS = {
    "triggers.tekton.dev": "Tekton Triggers start runs from events; replay applies the runs itself",
    "kustomize.config.k8s.io": "a kustomization; replay reads the YAML as written",
}


@dataclass(frozen=True)
class Inputs:
    """Inputs is the given YAML sorted: Tasks and Pipelines by name, PipelineRuns in the order given, supporting objects, skip notes."""

    tasks: Mapping[str, Document]
    pipelines: Mapping[str, Document]
    pipeline_runs: tuple[Document, ...]
    #: PersistentVolumeClaims, ConfigMaps and Secrets, which runs' workspaces may name.
    supporting: tuple[Document, ...]
    #: One line for each document left alone.
    skipped: tuple[str, ...]

    def claims(self) -> frozenset[str]:
        """claims() are the names of the PersistentVolumeClaims given."""
        return frozenset(d.name for d in self.supporting if d.kind == "PersistentVolumeClaim")


def _group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def skip_reason(document: Document) -> str | None:
    """skip_reason() says why replay leaves a document alone, None for one it uses or refuses."""
    group = _group(document.api_version)
    if group in SKIPPED_GROUPS:
        return SKIPPED_GROUPS[group]
    if group == TEKTON_GROUP and document.kind in SKIPPED_KINDS:
        return SKIPPED_KINDS[document.kind]
    return None


def classify(documents: Sequence[Document]) -> Inputs:
    """classify() sorts the documents; anything it cannot use is refused with the fix (ReplayInputError)."""
    tasks: dict[str, Document] = {}
    pipelines: dict[str, Document] = {}
    runs: list[Document] = []
    supporting: list[Document] = []
    supporting_seen: dict[tuple[str, str], Document] = {}  # a claim and a ConfigMap may share a name
    skipped: list[str] = []
    for document in documents:
        reason = skip_reason(document)
        if reason is not None:
            skipped.append(f"skipped {document.origin}, {document.kind} {document.name}: {reason}")
            continue
        kind, group = document.kind, _group(document.api_version)
        if group == TEKTON_GROUP and kind in (TASK, PIPELINE, PIPELINE_RUN):
            if document.api_version != TEKTON_V1:
                raise ReplayInputError(bad_input.old_tekton_version(document.origin, kind, document.api_version))
            if kind == PIPELINE_RUN:
                runs.append(document)
            else:
                _add_named(tasks if kind == TASK else pipelines, document)
        elif document.api_version == "v1" and kind in SUPPORTING_KINDS:
            _add_named(supporting_seen, document, key=(kind, document.name))
            supporting.append(document)
        else:
            raise ReplayInputError(bad_input.not_tekton(document.origin, document.api_version, kind))
    return Inputs(tasks, pipelines, tuple(runs), tuple(supporting), tuple(skipped))


def _add_named(into: dict[Any, Document], document: Document, *, key: Any = None) -> None:
    if not document.name:
        raise ReplayInputError(bad_input.no_name(document.origin, document.kind))
    key = document.name if key is None else key
    if key in into:
        raise ReplayInputError(bad_input.defined_twice(document.kind, document.name, into[key].origin, document.origin))
    into[key] = document
