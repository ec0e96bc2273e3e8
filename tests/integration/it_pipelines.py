"""PipelineRuns for the integration tests, built as data from the simulation vocabulary.

Tasks are `harness.cluster.simulation.sim_task_spec` specs (the same the
conformance fixtures use): their behaviour is chosen by keyword (`hold=True`,
`exit_codes="1,0"`, `linger=True`, `run_for="2s"`), which becomes the
annotations Tekton copies to the pod.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from harness.cluster.node_pools import NodePool
from harness.cluster.simulation import sim_task_spec

#: The pipeline-task workspace name every task binds its PipelineRun workspace to.
TASK_WORKSPACE = "w"


def task(
    name: str,
    *,
    cpu: str = "100m",
    run_after: Sequence[str] = (),
    retries: int = 0,
    workspace: str | None = None,
    **behaviour: Any,
) -> dict[str, Any]:
    """task('write', workspace='source', hold=True) is a pipeline task playing that behaviour."""
    entry: dict[str, Any] = {
        "name": name,
        "taskSpec": sim_task_spec(cpu=cpu, workspaces=(TASK_WORKSPACE,) if workspace else (), **behaviour),
    }
    if workspace:
        entry["workspaces"] = [{"name": TASK_WORKSPACE, "workspace": workspace}]
    if run_after:
        entry["runAfter"] = list(run_after)
    if retries:
        entry["retries"] = retries
    return entry


def pipeline_run(
    prefix: str,
    tasks: Sequence[Mapping[str, Any]],
    *,
    pool: NodePool,
    claims: Mapping[str, str] | None = None,
    scheduler_name: str | None = None,
    fixed_name: bool = False,
) -> dict[str, Any]:
    """pipeline_run('share', [...], pool=p, claims={'source': 'source'}) targets the pool's nodes only.

    `claims` maps each pipeline workspace to the PVC that backs it;
    `scheduler_name` selects a scheduler other than the default; with
    `fixed_name` the run is named `prefix` instead of a generated name.
    """
    claims = dict(claims or {})
    pod_template: dict[str, Any] = {"nodeSelector": dict(pool.selector)}
    if scheduler_name:
        pod_template["schedulerName"] = scheduler_name
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"name": prefix} if fixed_name else {"generateName": f"{prefix}-"},
        "spec": {
            "pipelineSpec": {"workspaces": [{"name": w} for w in claims], "tasks": [dict(t) for t in tasks]},
            "workspaces": [{"name": w, "persistentVolumeClaim": {"claimName": c}} for w, c in claims.items()],
            "taskRunTemplate": {"podTemplate": pod_template},
        },
    }
