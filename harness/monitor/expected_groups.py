"""expected_groups: the workspace groups a PipelineRun has, read by the suite itself (docs/contract.md section 4).

A workspace is co-locating when the PipelineRun binds it to a
persistentVolumeClaim or a volumeClaimTemplate. A task uses a workspace its
pipeline-task entry binds (`workspace`, or the entry's `name` when that is
omitted), and, for an embedded taskSpec, every workspace its steps, sidecars
or stepTemplate refer to as `$(workspaces.<name>...)` that the entry does not
bind: Tekton binds those to the PipelineRun workspace of that name
(propagation, `propagateWorkspaces` in pkg/reconciler/pipelinerun/pipelinerun.go
with `FindWorkspacesUsedByTask` in pkg/workspace/apply.go, v1.15.0). Groups are the connected components of "uses the same co-locating
workspace"; finally tasks count like any other.

    expected_groups(pipeline_run) == (ExpectedGroup(tasks={'build', 'test'}, workspaces={'source'}),)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

#: The bindings that attach a workspace's volume to one node.
CO_LOCATING_BINDINGS = ("persistentVolumeClaim", "volumeClaimTemplate")


@dataclass(frozen=True)
class ExpectedGroup:
    """ExpectedGroup is one group as the contract defines it: its pipeline tasks and its co-locating workspaces."""

    tasks: frozenset[str]
    workspaces: frozenset[str]


def pipeline_spec_of(pipeline_run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """pipeline_spec_of() is the resolved `status.pipelineSpec`, else an embedded `spec.pipelineSpec`, else None."""
    resolved = (pipeline_run.get("status") or {}).get("pipelineSpec")
    if resolved:
        return dict(resolved)
    embedded = (pipeline_run.get("spec") or {}).get("pipelineSpec")
    return dict(embedded) if embedded else None


def co_locating_workspaces(pipeline_run: Mapping[str, Any]) -> frozenset[str]:
    """co_locating_workspaces() are the PipelineRun's workspace bindings backed by a volume on one node."""
    bindings = (pipeline_run.get("spec") or {}).get("workspaces") or []
    return frozenset(b["name"] for b in bindings if b.get("name") and any(b.get(kind) is not None for kind in CO_LOCATING_BINDINGS))


#: A reference to a workspace in a step's text, as Tekton's substitution reads it: `$(workspaces.src.path)`,
#: `$(workspaces["src"].path)`, `$(workspaces['src'].path)`; the name is the first dotted component.
_WORKSPACE_REFERENCE = re.compile(r"""\$\(workspaces(?:\.([^.)]+)[^)]*|\["([^"]*)"\][^)]*|\['([^']*)'\][^)]*)\)""")


def _texts(container: Mapping[str, Any], *, script: bool, params: bool) -> Iterator[str]:
    """_texts are the fields of a step, sidecar or stepTemplate where Tekton looks for workspace references."""
    if script:
        yield str(container.get("script") or "")
    yield from (str(v) for v in container.get("args") or [])
    yield from (str(v) for v in container.get("command") or [])
    yield str(container.get("workingDir") or "")
    yield from (str((e or {}).get("value") or "") for e in container.get("env") or [])
    if params:
        for param in container.get("params") or []:
            value = (param or {}).get("value")
            if isinstance(value, list):
                yield from (str(v) for v in value)
            elif isinstance(value, dict):
                yield from (str(v) for v in value.values())
            elif value is not None:
                yield str(value)


def referenced_workspaces(task_spec: Mapping[str, Any]) -> frozenset[str]:
    """referenced_workspaces() are the workspaces an embedded taskSpec's steps, sidecars and stepTemplate refer to.

    Example: a step with script 'cd $(workspaces.source.path)' refers to {'source'}.
    Tekton reads a step's script, args, command, workingDir, env values and
    params; a sidecar's the same but params; a stepTemplate's args, command,
    workingDir and env values.
    """
    texts = [
        *(t for step in task_spec.get("steps") or [] for t in _texts(step, script=True, params=True)),
        *(t for sidecar in task_spec.get("sidecars") or [] for t in _texts(sidecar, script=True, params=False)),
        *_texts(task_spec.get("stepTemplate") or {}, script=False, params=False),
    ]
    return frozenset(next(g for g in match.groups() if g is not None) for text in texts for match in _WORKSPACE_REFERENCE.finditer(text))


def workspaces_used(task: Mapping[str, Any]) -> frozenset[str]:
    """workspaces_used() are the pipeline workspaces a pipeline task uses, bound or propagated.

    workspaces_used({'workspaces': [{'name': 'w', 'workspace': 'source'}]}) == {'source'};
    an entry binding nothing whose embedded taskSpec has a step with env value
    '$(workspaces.cache.path)' uses {'cache'}.
    """
    bindings = [b for b in task.get("workspaces") or [] if b.get("workspace") or b.get("name")]
    bound = frozenset(str(b.get("workspace") or b.get("name")) for b in bindings)
    task_spec = task.get("taskSpec")
    if not task_spec:
        return bound
    bound_names = {str(b.get("name")) for b in bindings}
    return bound | (referenced_workspaces(task_spec) - bound_names)


def expected_groups(pipeline_run: Mapping[str, Any]) -> tuple[ExpectedGroup, ...] | None:
    """expected_groups() is the PipelineRun's groups, smallest task first; None while its spec is unknown."""
    spec = pipeline_spec_of(pipeline_run)
    if spec is None:
        return None
    co_locating = co_locating_workspaces(pipeline_run)
    uses: dict[str, frozenset[str]] = {}
    for task in [*(spec.get("tasks") or []), *(spec.get("finally") or [])]:
        used = workspaces_used(task) & co_locating
        if used and task.get("name"):
            uses[str(task["name"])] = used
    # Union-find over workspaces: tasks join the workspaces they use into one component.
    parent: dict[str, str] = {w: w for used in uses.values() for w in used}

    def root(w: str) -> str:
        while parent[w] != w:
            parent[w] = parent[parent[w]]
            w = parent[w]
        return w

    for used in uses.values():
        first, *rest = sorted(used)
        for other in rest:
            parent[root(other)] = root(first)
    components: dict[str, tuple[set[str], set[str]]] = {}
    for task, used in uses.items():
        tasks, workspaces = components.setdefault(root(next(iter(used))), (set(), set()))
        tasks.add(task)
        workspaces.update(used)
    groups = (ExpectedGroup(frozenset(t), frozenset(w)) for t, w in components.values())
    return tuple(sorted(groups, key=lambda g: min(g.tasks)))


def group_of(groups: tuple[ExpectedGroup, ...], task: str) -> ExpectedGroup | None:
    """group_of() is the expected group holding `task`, or None for a task in no group."""
    return next((g for g in groups if task in g.tasks), None)
