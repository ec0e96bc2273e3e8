"""attribution: the contract monitor's violations, handed to the runs they concern.

A violation names its objects ("pod ns/build-c1-compile-pod", "record
ns/build-c1", "node w1"). A pod belongs to the run its `tekton.dev/pipelineRun`
label names (read from the monitor's own view of the pods, since Tekton may
shorten a long run's pod names), a record to the run of its name. A violation
that names no run's object (a node alone) concerns every run of the round:
they all shared the pool.

    >>> attributed(["node-overcommitted at 4.2s: node w1 ... [node w1, pod ns/a-x-pod, pod ns/b-y-pod]"],
    ...            [("node w1", "pod ns/a-x-pod", "pod ns/b-y-pod")], {"ns/a-x-pod": "a", "ns/b-y-pod": "b"}, ["a", "b", "c"])
    {'a': ['node-overcommitted at 4.2s: node w1 ... [node w1, pod ns/a-x-pod, pod ns/b-y-pod]'], 'b': ['node-overcommitted at 4.2s: node w1 ... [node w1, pod ns/a-x-pod, pod ns/b-y-pod]'], 'c': []}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness import runs

#: An object as a violation names it: "pod ns/name" or "record ns/name" (also inside "group g of record ns/name").
_NAMED = re.compile(r"\b(pod|record) ([^\s/,\]]+)/([^\s,\]]+)")


def pod_runs(pods: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """pod_runs() maps "namespace/pod" to the PipelineRun its label names, for every task pod among `pods`."""
    found = {}
    for pod in pods:
        metadata = pod.get("metadata") or {}
        run = (metadata.get("labels") or {}).get(runs.PIPELINERUN_LABEL)
        if run:
            found[f"{metadata.get('namespace')}/{metadata.get('name')}"] = str(run)
    return found


def runs_named(objects: Iterable[str], pods: Mapping[str, str], run_names: Sequence[str]) -> set[str]:
    """runs_named() are the runs whose pods or records the objects name."""
    named: set[str] = set()
    for text in objects:
        for kind, namespace, name in _NAMED.findall(text):
            run = pods.get(f"{namespace}/{name}") if kind == "pod" else name
            if run in run_names:
                named.add(str(run))
    return named


def attributed(
    violations: Sequence[str], objects: Sequence[Sequence[str]], pods: Mapping[str, str], run_names: Sequence[str]
) -> dict[str, list[str]]:
    """attributed() maps every run to the violations that concern it; `objects[i]` are the objects of `violations[i]`."""
    by_run: dict[str, list[str]] = {name: [] for name in run_names}
    for text, named_objects in zip(violations, objects):
        concerned = runs_named(named_objects, pods, run_names) or set(run_names)
        for name in run_names:
            if name in concerned:
                by_run[name].append(text)
    return by_run
