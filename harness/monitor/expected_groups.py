"""expected_groups: the workspace groups a PipelineRun has, read by the suite itself (docs/contract.md section 4).

A workspace is co-locating when the PipelineRun binds it to a
persistentVolumeClaim or a volumeClaimTemplate. A task uses a workspace its
pipeline-task entry binds (`workspace`, or the entry's `name` when that is
omitted). Groups are the connected components of "uses the same co-locating
workspace"; finally tasks count like any other.

    expected_groups(pipeline_run) == (ExpectedGroup(tasks={'build', 'test'}, workspaces={'source'}),)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

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


def workspaces_used(task: Mapping[str, Any]) -> frozenset[str]:
    """workspaces_used({'workspaces': [{'name': 'w', 'workspace': 'source'}]}) == {'source'}."""
    return frozenset(str(b.get("workspace") or b.get("name")) for b in task.get("workspaces") or [] if b.get("workspace") or b.get("name"))


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
