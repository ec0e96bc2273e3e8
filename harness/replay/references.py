"""references: which Task or Pipeline a `taskRef` / `pipelineRef` names, and the form that reference takes in the replay's namespace.

A reference names its target three ways: by `name` (the object in the run's
namespace), through a resolver by params (`resolver: cluster` with `name`,
`kind` and `namespace`; `hub` and `bundles` with `name`; `git` with
`pathInRepo`; `http` with `url`), or not at all (an embedded spec). Replay
answers each from the files it was given: a plain name stays as written; the
cluster resolver is pointed at the replay's namespace, where replay applies the
files' Tasks and Pipelines; any other resolver, which an offline cluster cannot
reach, is served the same way by the cluster resolver (and the run's line says
so). A target the files do not hold is bad input.

A custom task (a `taskRef` or `taskSpec` with an `apiVersion` and a `kind`
other than Tekton's Task) names a controller, not a Task.

    >>> remote_name({"resolver": "git", "params": [{"name": "pathInRepo", "value": "task/git-clone/0.9/git-clone.yaml"}]})
    'git-clone'
    >>> cluster_ref("task", "git-clone", "replay-1a2b3c")["params"][2]
    {'name': 'namespace', 'value': 'replay-1a2b3c'}
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

#: The resolver replay serves every remote reference with: it reads Tasks and Pipelines from a namespace of the cluster.
CLUSTER_RESOLVER = "cluster"
#: The Task kinds Tekton runs as a pod; any other `kind` with an `apiVersion` is a custom task.
TASK_KINDS = ("Task", "ClusterTask")
#: The params that name a remote object's file, for resolvers with no `name` param.
PATH_PARAMS = ("pathInRepo", "url")


def params_of(ref: Mapping[str, Any]) -> dict[str, Any]:
    """params_of({'params': [{'name': 'name', 'value': 'x'}]}) == {'name': 'x'}."""
    return {str(p.get("name")): p.get("value") for p in ref.get("params") or [] if p.get("name")}


def is_remote(ref: Mapping[str, Any]) -> bool:
    """is_remote() is True for a reference through a resolver."""
    return bool(ref.get("resolver"))


def remote_name(ref: Mapping[str, Any]) -> str | None:
    """remote_name() is the name a resolver reference's target goes by: its `name` param, else its file's name without the extension."""
    params = params_of(ref)
    if params.get("name"):
        return str(params["name"])
    for key in PATH_PARAMS:
        if params.get(key):
            return PurePosixPath(str(params[key]).split("?", 1)[0]).stem
    return None


def referenced_name(ref: Mapping[str, Any]) -> str | None:
    """referenced_name() is the name of the Task or Pipeline a reference names, plain or remote; None when it names none."""
    return remote_name(ref) if is_remote(ref) else (str(ref["name"]) if ref.get("name") else None)


def is_custom_task(entry: Mapping[str, Any]) -> bool:
    """is_custom_task() is True for a pipeline task Tekton runs as a CustomRun (docs/contract.md section 6: it gets no pod).

    >>> is_custom_task({"taskRef": {"apiVersion": "example.dev/v1", "kind": "Wait"}})
    True
    >>> is_custom_task({"taskRef": {"name": "build"}})
    False
    """
    for key in ("taskRef", "taskSpec"):
        target = entry.get(key) or {}
        if target.get("apiVersion") and target.get("kind") and target.get("kind") not in TASK_KINDS:
            return True
    return False


def runs_a_pipeline(entry: Mapping[str, Any]) -> bool:
    """runs_a_pipeline() is True for a pipeline task that runs a Pipeline (pipelines in pipelines, an alpha feature)."""
    return bool(entry.get("pipelineRef") or entry.get("pipelineSpec"))


def cluster_ref(kind: str, name: str, namespace: str) -> dict[str, Any]:
    """cluster_ref('task', 'git-clone', ns) asks the cluster resolver for Task git-clone in namespace ns."""
    return {
        "resolver": CLUSTER_RESOLVER,
        "params": [{"name": "kind", "value": kind}, {"name": "name", "value": name}, {"name": "namespace", "value": namespace}],
    }


def localized(ref: Mapping[str, Any], kind: str, namespace: str) -> dict[str, Any]:
    """localized() is the reference as it stands in the replay's namespace: a plain name as written, a remote one through the cluster resolver.

    `kind` is the cluster resolver's: 'task' or 'pipeline'.
    """
    if not is_remote(ref):
        return dict(ref)
    name = remote_name(ref)
    assert name is not None, "resolve the reference (referenced_name) before localizing it"
    return cluster_ref(kind, name, namespace)


def remote_note(ref: Mapping[str, Any], what: str) -> str | None:
    """remote_note() is the line a run gets for a reference another resolver than the cluster's would have fetched; None otherwise.

    >>> remote_note({"resolver": "hub", "params": [{"name": "name", "value": "git-clone"}]}, "task fetch")
    'task fetch: Task git-clone through the hub resolver is served by the cluster resolver from the given files'
    """
    resolver = ref.get("resolver")
    if not resolver or resolver == CLUSTER_RESOLVER:
        return None
    kind = str(params_of(ref).get("kind") or "")
    noun = "Pipeline" if kind == "pipeline" or what == "the run" else "Task"
    return f"{what}: {noun} {remote_name(ref)} through the {resolver} resolver is served by the cluster resolver from the given files"
