"""names: the name of every PipelineRun replay creates, one per run, copy (`--copies`) and round (`--repeat`).

A run keeps its `metadata.name`; one written with `generateName` (as
`tkn pipeline start` and Triggers make them) goes by that prefix. Two runs
that would share a base are told apart by -2, -3, ... in the order given.
An instance adds `-r<round>` when there is more than one round and `-c<copy>`
when there is more than one copy, both counted from 1, and stays within
MAX_RUN_NAME: Tekton writes the run's name into label values, which hold 63
characters, so a long base is cut, never the suffix.

    >>> base_names([written_name({"name": "build"}), written_name({"name": "build"}), written_name({"generateName": "deploy-"})])
    ['build', 'build-2', 'deploy']
    >>> instance_name("build", copy=2, round=1, copies=3, rounds=1)
    'build-c2'
    >>> instance_name("nightly-release", copy=1, round=3, copies=2, rounds=5)
    'nightly-release-r3-c1'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError

#: The longest name a PipelineRun may have here: a label value's limit.
MAX_RUN_NAME = 63
#: The base of a run with neither a name nor a generateName.
UNNAMED = "run"


def written_name(metadata: Mapping[str, Any]) -> str:
    """written_name({'generateName': 'build-'}) == 'build': the name a run goes by before it is made unique."""
    name = str(metadata.get("name") or "").strip()
    if name:
        return name
    return str(metadata.get("generateName") or "").strip().rstrip("-.") or UNNAMED


def base_names(written: Sequence[str]) -> list[str]:
    """base_names() makes the written names unique: a repeated one gets -2, -3, ..., never a name another run was written with."""
    taken = set(written)
    seen: set[str] = set()
    bases = []
    for name in written:
        base, number = name, 1
        while base in seen or (base != name and base in taken):
            number += 1
            base = f"{name}-{number}"
        seen.add(base)
        bases.append(base)
    return bases


def instance_name(base: str, *, copy: int, round: int, copies: int, rounds: int) -> str:
    """instance_name() is the name of one copy of a run in one round, at most MAX_RUN_NAME long."""
    suffix = (f"-r{round}" if rounds > 1 else "") + (f"-c{copy}" if copies > 1 else "")
    return base[: MAX_RUN_NAME - len(suffix)].rstrip("-.") + suffix


def instance_names(bases: Iterable[str], *, copies: int, round: int, rounds: int) -> list[str]:
    """instance_names() are one round's names, run by run and copy by copy; two alike are bad input (rename a run)."""
    names = [instance_name(base, copy=c, round=round, copies=copies, rounds=rounds) for base in bases for c in range(1, copies + 1)]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ReplayInputError(bad_input.names_collide(repeated[0]))
    return names
