"""partition: split a pipeline's tasks into workspace groups, each to be reserved on one node.

Tasks that share a PipelineRun workspace must run on the node where its volume
is attached (a ReadWriteOnce PVC), so sharing is transitive: if build and test
share "source" and test and report share "cache", all three share a node.
Groups are the connected components of "shares a workspace", finally tasks
included.

Tasks bound to no (co-locating) workspace form no group: nothing ties them to a
node, so they are scheduled as plain pods, wherever they fit.

Example: clone {source}, build {source, cache}, lint {} and notify {cache}
(finally) give one group "cache" with tasks (build, clone, notify) and
workspaces (cache, source); lint is a plain pod.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass

from reference_scheduler.core.peaks import group_peak
from reference_scheduler.core.pipeline_graph import PipelineGraph
from reference_scheduler.core.resources import Resources

__all__ = ["WorkspaceGroup", "group_name", "partition_into_groups"]

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_MAX_LABEL = 63
_HASH_LENGTH = 8


@dataclass(frozen=True)
class WorkspaceGroup:
    """WorkspaceGroup is a set of tasks that must share a node, and the most they need there at once.

    Example: WorkspaceGroup(name='source', tasks=('build', 'clone', 'test'),
    workspaces=('source',), peak=Resources(cpu=6000, memory=...)).
    """

    name: str
    tasks: tuple[str, ...]
    workspaces: tuple[str, ...]
    peak: Resources


def group_name(workspace: str) -> str:
    """group_name makes a workspace name usable as a DNS-1123 label (object names, label values).

    A valid label is kept as it is; anything else is lowercased, other
    characters become '-', and an 8-hex digest of the original is appended so
    that distinct workspaces ('Src' and 'src', 'a_b' and 'a-b') keep distinct
    names.

    Example: group_name('source') == 'source'; group_name('My_Cache') == 'my-cache-' + 8 hex digits.
    """
    if len(workspace) <= _MAX_LABEL and _LABEL.match(workspace):
        return workspace
    digest = hashlib.sha256(workspace.encode()).hexdigest()[:_HASH_LENGTH]
    base = re.sub(r"[^a-z0-9-]+", "-", workspace.lower()).strip("-")
    base = base[: _MAX_LABEL - _HASH_LENGTH - 1].strip("-")
    return f"{base}-{digest}" if base else f"ws-{digest}"


def partition_into_groups(
    graph: PipelineGraph, *, co_locating: Collection[str] | None = None
) -> tuple[WorkspaceGroup, ...]:
    """partition_into_groups returns the workspace groups of graph, ordered by name.

    co_locating, when given, limits grouping to those PipelineRun workspaces
    (e.g. the ones bound to a PVC or volumeClaimTemplate); an emptyDir,
    ConfigMap or Secret workspace does not tie tasks to a node. None means every
    workspace counts.

    Example: tasks a {w1}, b {w1, w2}, c {w2}, d {w3}, e {} give groups
    'w1' (a, b, c; w1, w2) and 'w3' (d; w3).
    """
    parent: dict[str, str] = {}

    def find(item: str) -> str:
        root = item
        while parent[root] != root:
            root = parent[root]
        while parent[item] != root:
            parent[item], item = root, parent[item]
        return root

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    # Workspaces and tasks share one union-find, keyed apart by a prefix.
    for node in graph:
        bound = node.workspaces if co_locating is None else node.workspaces & frozenset(co_locating)
        if not bound:
            continue
        task_key = f"t:{node.name}"
        parent.setdefault(task_key, task_key)
        for workspace in bound:
            key = f"w:{workspace}"
            parent.setdefault(key, key)
            union(task_key, key)

    members: dict[str, tuple[list[str], list[str]]] = {}
    for key in parent:
        task_names, workspace_names = members.setdefault(find(key), ([], []))
        (task_names if key.startswith("t:") else workspace_names).append(key[2:])

    groups = []
    for task_names, workspace_names in members.values():
        ordered_tasks = tuple(sorted(task_names))
        ordered_workspaces = tuple(sorted(workspace_names))
        groups.append(
            WorkspaceGroup(
                name=group_name(ordered_workspaces[0]),
                tasks=ordered_tasks,
                workspaces=ordered_workspaces,
                peak=group_peak(graph, ordered_tasks),
            )
        )
    groups.sort(key=lambda group: group.name)
    names = [group.name for group in groups]
    if len(set(names)) != len(names):
        raise ValueError(f"workspace groups share a name in {names}: rename the workspaces so they differ in letters or digits")
    return tuple(groups)
