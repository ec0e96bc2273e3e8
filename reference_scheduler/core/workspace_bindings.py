"""workspace_bindings: which of a PipelineRun's workspaces tie their tasks to one node (docs/contract.md section 4).

A workspace is co-locating when the PipelineRun binds it to a volume that is
attached on one node: a `persistentVolumeClaim`, or a `volumeClaimTemplate`
(Tekton makes one PVC per run from it). `emptyDir`, `configMap`, `secret`,
`projected` and `csi` bindings give each pod its own copy wherever it runs,
so tasks sharing only those are free to run on different nodes.

Example: bindings source → persistentVolumeClaim, cache → volumeClaimTemplate,
scratch → emptyDir give {'cache', 'source'}.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["CO_LOCATING_BINDINGS", "co_locating_workspaces"]

#: The binding kinds whose volume is attached on one node.
CO_LOCATING_BINDINGS = ("persistentVolumeClaim", "volumeClaimTemplate")


def co_locating_workspaces(pipeline_run_spec: Mapping[str, Any]) -> frozenset[str]:
    """co_locating_workspaces() are the names of the run's `spec.workspaces` bound to a PVC or a volumeClaimTemplate.

    An entry with no name, or bound to anything else, is left out: a workspace
    the run does not bind at all (an optional one) ties nothing either.
    """
    names = set()
    for binding in pipeline_run_spec.get("workspaces") or ():
        if not isinstance(binding, Mapping) or not binding.get("name"):
            continue
        if any(binding.get(kind) is not None for kind in CO_LOCATING_BINDINGS):
            names.add(str(binding["name"]))
    return frozenset(names)
