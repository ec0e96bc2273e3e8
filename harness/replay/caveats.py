"""caveats: what a run does that replay's simulation cannot, each said in a few words for the run's line.

A simulated step writes PLACEHOLDER for every result, so whatever reads a
result reads that: a later task's params, a `when` expression (which then
decides as the placeholder makes it), a matrix that fans out over an array
result (one combination). A custom task has no controller here and runs as a
simulated task with no requests; a pipeline task that runs a Pipeline needs
Tekton's alpha API fields. None of these stops a replay; each is named.

    >>> pipeline = {"tasks": [{"name": "build"},
    ...     {"name": "deploy", "params": [{"name": "image", "value": "$(tasks.build.results.digest)"}],
    ...      "when": [{"input": "$(tasks.build.results.changed)", "operator": "in", "values": ["true"]}]}]}
    >>> pipeline_caveats(pipeline)
    ['result build.digest read by deploy gets "replay-placeholder"', 'when of deploy reads build.changed: the placeholder decides it']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from harness.replay.references import is_custom_task, referenced_name, runs_a_pipeline
from harness.replay.steps import PLACEHOLDER

#: A result reference as Tekton reads it: `$(tasks.build.results.digest)`, `...results.shards[*])`, `...results.image.url)`.
RESULT_READ = re.compile(r"\$\(tasks\.([^.)\s]+)\.results\.([^.)\s\[]+)")


def _entries(pipeline_spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [*(pipeline_spec.get("tasks") or []), *(pipeline_spec.get("finally") or [])]


def results_read(part: Any) -> list[tuple[str, str]]:
    """results_read() are the (task, result) pairs a part of a pipeline task reads, in order of appearance, each once.

    >>> results_read([{"value": "$(tasks.a.results.x) $(tasks.b.results.list[*]) $(tasks.a.results.x)"}])
    [('a', 'x'), ('b', 'list')]
    """
    found = RESULT_READ.findall(json.dumps(part)) if part else []
    return list(dict.fromkeys(found))


def _step_actions(entry: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """_step_actions() are the entry's steps that use a StepAction, its embedded taskSpec's or its referenced Task's."""
    spec = entry.get("taskSpec") or tasks.get(referenced_name(entry.get("taskRef") or {}) or "", {})
    steps = spec.get("steps") or []
    return [f"{step.get('name') or 'unnamed'} ({(step.get('ref') or {}).get('name') or 'remote'})" for step in steps if step.get("ref")]


def pipeline_caveats(pipeline_spec: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]] = {}) -> list[str]:
    """pipeline_caveats() is every caveat of one pipeline's tasks, in the pipeline's order; `tasks` maps a Task's name to its spec."""
    readers: dict[tuple[str, str], list[str]] = {}
    notes: list[str] = []
    for entry in _entries(pipeline_spec):
        name = str(entry.get("name"))
        for read in results_read([entry.get("params"), entry.get("matrix"), (entry.get("taskSpec") or {}).get("steps")]):
            readers.setdefault(read, []).append(name)
        for task, result in results_read(entry.get("when")):
            notes.append(f"when of {name} reads {task}.{result}: the placeholder decides it")
        for task, result in results_read(entry.get("matrix")):
            notes.append(f"matrix of {name} fans out over {task}.{result}: one combination, from the placeholder")
        if is_custom_task(entry):
            target = entry.get("taskRef") or entry.get("taskSpec") or {}
            notes.append(f"{name} is a custom task ({target.get('apiVersion')} {target.get('kind')}): it runs as a simulated task with no requests")
        if runs_a_pipeline(entry):
            notes.append(f"{name} runs a Pipeline: Tekton runs that only with enable-api-fields alpha; left as written")
        for step in _step_actions(entry, tasks):
            notes.append(f"{name}'s step {step} uses a StepAction: simulated like any step")
    result_notes = [f"result {task}.{result} read by {', '.join(names)} gets \"{PLACEHOLDER}\"" for (task, result), names in readers.items()]
    return result_notes + notes
