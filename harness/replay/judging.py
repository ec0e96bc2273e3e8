"""judging: one replayed run's verdict, from its ended PipelineRun, its pods, its record and the contract monitor's violations.

As the generative scenario judges a drawn run, with the suite's own reading of
the contract, never the scheduler's:

* every pod of a group ran on one node (docs/contract.md section 4), the node
  its record names;
* the record's groups are the suite's (harness.monitor.expected_groups) and
  each group's peak is the suite's (harness.generative.peaks), exact; a task
  whose Task came by reference is read from the simulated Task replay applied,
  and a matrix that fans out over a result counts one combination (section 6);
* the monitor saw no rule broken while the run went (harness.replay.attribution).

Verdicts: `passed` (it succeeded and nothing is wrong), `failed` (something
is wrong, or it did not end within `replay_run_done`), `error` (it ended
Failed and nothing the suite checks is wrong: Tekton refused it, or a
simulated run failed as written; no verdict on the scheduler).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness import runs
from harness.contract.record import Record
from harness.errors import HarnessError
from harness.generative.peaks import expected_peaks
from harness.monitor.expected_groups import ExpectedGroup, expected_groups
from harness.quantities import Amount
from harness.report.outcomes import Outcome

Obj = dict[str, Any]


@dataclass(frozen=True)
class RunResult:
    """RunResult is one replayed run's verdict: `problems` make it fail, `notes` only inform."""

    name: str
    origin: str
    outcome: Outcome
    seconds: float
    groups: int = 0
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def _fans_out_over_results(matrix: Mapping[str, Any] | None) -> bool:
    return bool(matrix) and "$(tasks." in json.dumps(matrix)


def judged_copy(pipeline_run: Mapping[str, Any], task_specs: Mapping[str, Mapping[str, Any]]) -> Obj:
    """judged_copy() is the ended run as the peaks read it: each referenced Task inlined, each fan-out over a result one combination.

    A pipeline task replay has no spec for (one that runs a Pipeline) gets none: Tekton gives it no pod.
    """
    judged = copy.deepcopy(dict(pipeline_run))
    spec = (judged.get("status") or {}).get("pipelineSpec") or (judged.get("spec") or {}).get("pipelineSpec") or {}
    for entry in [*(spec.get("tasks") or []), *(spec.get("finally") or [])]:
        if not entry.get("taskSpec"):
            entry.pop("taskRef", None)
            entry["taskSpec"] = copy.deepcopy(dict(task_specs.get(str(entry.get("name")), {})))
        if _fans_out_over_results(entry.get("matrix")):
            entry.pop("matrix")
    return judged


def group_nodes(groups: Sequence[ExpectedGroup], pods: Sequence[Mapping[str, Any]]) -> tuple[dict[frozenset[str], str | None], list[str]]:
    """group_nodes() is the one node each group's pods ran on (None when none was bound), and a problem for each group split over nodes."""
    nodes: dict[frozenset[str], str | None] = {}
    problems = []
    for group in groups:
        placed = {
            str(pod["metadata"]["name"]): (pod.get("spec") or {}).get("nodeName")
            for pod in pods
            if ((pod.get("metadata") or {}).get("labels") or {}).get(runs.PIPELINE_TASK_LABEL) in group.tasks
        }
        bound = sorted({str(node) for node in placed.values() if node})
        if len(bound) > 1:
            problems.append(f"group {sorted(group.tasks)} ran on {', '.join(bound)} (docs/contract.md section 4): {placed}")
        nodes[group.tasks] = bound[0] if len(bound) == 1 else None
    return nodes, problems


def record_problems(
    record: Record | None, groups: Sequence[ExpectedGroup], peaks: Mapping[frozenset[str], Amount] | None, nodes: Mapping[frozenset[str], str | None]
) -> list[str]:
    """record_problems() holds the record to the suite's groups, peaks (None: not judged) and the nodes the groups' pods ran on."""
    if record is None:
        ran = sorted(sorted(tasks) for tasks, node in nodes.items() if node is not None)
        return [f"groups {ran} ran pods but the run has no ReservationRecord (docs/contract.md section 2)"] if ran else []
    found = {(frozenset(g.tasks), frozenset(g.workspaces)) for g in record.groups}
    wanted = {(g.tasks, g.workspaces) for g in groups}
    if found != wanted:
        return [
            f"record {record.key} has groups {sorted((sorted(t), sorted(w)) for t, w in found)}, "
            f"the suite reads {sorted((sorted(t), sorted(w)) for t, w in wanted)} (docs/contract.md section 4)"
        ]
    problems = []
    for spec in record.groups:
        peak = peaks.get(frozenset(spec.tasks)) if peaks is not None else None
        if peak is not None and spec.peak != peak:
            problems.append(f"group {spec.name} {sorted(spec.tasks)} reserves {spec.peak.describe()}, the suite computes {peak.describe()} (docs/contract.md section 6)")
        node = nodes.get(frozenset(spec.tasks))
        if node is not None and record.status_of(spec.name).node != node:
            problems.append(f"group {spec.name}'s pods ran on {node}, but its record names node {record.status_of(spec.name).node}")
    return problems


def unbound_pods(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """unbound_pods() are the names of the pods no scheduler bound."""
    return sorted(str(p["metadata"]["name"]) for p in pods if not (p.get("spec") or {}).get("nodeName"))


def refused(pipeline_run: Mapping[str, Any]) -> bool:
    """refused() is True for a run that ended Failed before Tekton made a single TaskRun: no scheduler had a say."""
    condition = runs.succeeded(pipeline_run) or {}
    return condition.get("status") == "False" and not (pipeline_run.get("status") or {}).get("childReferences")


def judge_run(
    name: str,
    origin: str,
    *,
    ended: Mapping[str, Any] | None,
    seconds: float,
    pods: Sequence[Mapping[str, Any]],
    record: Record | None,
    checks_records: bool,
    task_specs: Mapping[str, Mapping[str, Any]],
    violations: Sequence[str] = (),
    unfinished: str = "",
) -> RunResult:
    """judge_run() is the run's verdict; `ended` None means it did not end in time, and `unfinished` says how it stood."""
    problems = list(violations)
    if ended is None:
        waiting = unbound_pods(pods)
        head = [unfinished or "did not end in time"] + ([f"pods never bound: {', '.join(waiting)}"] if waiting else [])
        return RunResult(name, origin, Outcome.FAILED, seconds, problems=tuple(head + problems))
    if refused(ended):
        return RunResult(name, origin, Outcome.ERROR, seconds, problems=(f"Tekton refused it before any TaskRun: {runs.describe(ended)}", *problems))
    groups = expected_groups(ended) or ()
    nodes, split = group_nodes(groups, pods)
    problems += split
    notes: list[str] = []
    peaks: dict[frozenset[str], Amount] | None
    try:
        peaks = expected_peaks(groups, judged_copy(ended, task_specs))
    except HarnessError as err:
        peaks = None
        notes.append(f"peaks not judged: {err}")
    if checks_records:
        problems += record_problems(record, groups, peaks, nodes)
    condition = runs.succeeded(ended) or {}
    if problems:
        outcome = Outcome.FAILED
    elif condition.get("status") == "True":
        outcome = Outcome.PASSED
    else:
        outcome = Outcome.ERROR
        problems.append(f"it ended {runs.describe(ended)}, and nothing the suite checks went wrong: no verdict on the scheduler")
    return RunResult(name, origin, outcome, seconds, len(groups), tuple(problems), tuple(notes))
