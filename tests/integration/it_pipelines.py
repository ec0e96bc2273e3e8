"""PipelineRuns for the integration tests, built as data: tasks that play the simulation vocabulary.

Every step names its command, so Tekton never looks an image up in a
registry; images are placeholders that nothing pulls on KWOK nodes.
Simulation annotations go on the embedded taskSpec's metadata, which Tekton
copies to the TaskRun and its pod (harness.cluster.simulation).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.cluster.node_pools import NodePool

IMAGE = "rescon.invalid/step:latest"
STEP_REQUESTS = {"cpu": "100m", "memory": "64Mi"}


def task(
    name: str,
    *,
    annotations: Mapping[str, str] | None = None,
    run_after: Sequence[str] = (),
    retries: int = 0,
    workspace: str | None = None,
    sidecar: bool = False,
) -> dict[str, Any]:
    """task('write', workspace='source') is a pipeline task with one step (and optionally a sidecar)."""
    spec: dict[str, Any] = {
        "metadata": {"annotations": dict(annotations or {})},
        "steps": [{"name": "work", "image": IMAGE, "command": ["true"], "computeResources": {"requests": STEP_REQUESTS}}],
    }
    entry: dict[str, Any] = {"name": name, "taskSpec": spec}
    if workspace:
        spec["workspaces"] = [{"name": "shared"}]
        entry["workspaces"] = [{"name": "shared", "workspace": workspace}]
    if sidecar:
        spec["sidecars"] = [{"name": "linger", "image": IMAGE, "command": ["sleep", "3600"]}]
    if run_after:
        entry["runAfter"] = list(run_after)
    if retries:
        entry["retries"] = retries
    return entry


def pipeline_run(prefix: str, tasks: Sequence[Mapping[str, Any]], *, pool: NodePool, claims: Mapping[str, str] | None = None) -> dict[str, Any]:
    """pipeline_run('share', [...], pool=p, claims={'source': 'source'}) targets the pool's nodes only.

    `claims` maps each pipeline workspace to the PVC that backs it.
    """
    claims = dict(claims or {})
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"generateName": f"{prefix}-"},
        "spec": {
            "pipelineSpec": {"workspaces": [{"name": w} for w in claims], "tasks": [dict(t) for t in tasks]},
            "workspaces": [{"name": w, "persistentVolumeClaim": {"claimName": c}} for w, c in claims.items()],
            "taskRunTemplate": {"podTemplate": {"nodeSelector": dict(pool.selector)}},
        },
    }
