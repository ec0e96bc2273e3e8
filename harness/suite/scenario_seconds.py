"""scenario_seconds: how long each scenario took in a past run, so that a parallel session hands out the longest first.

Under `pytest -n N` the session ends when its last worker does: a 56 s scenario
handed out near the end keeps one worker busy while the others idle. Handed
out longest first (one at a time, `--maxschedchunk 1`), the short ones fill
the gaps at the end. The seconds only order the scenarios: a stale or missing
figure makes a session slower, never changes a verdict.

The figures live beside the scenario modules, in `scenario_seconds.json`:

    {"measured": "make e2e at 039c716, 5 workers", "seconds": {"idle_group_restart": 55.8, ...}}

keyed by the module's name without `test_` (`test_idle_group_restart.py` is
`idle_group_restart`). `make scenario-seconds` writes it anew from the JUnit
file of the last `make e2e`:

    python -m harness.suite.scenario_seconds reports/junit.xml tests/conformance "make e2e at 039c716"
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from harness.errors import HarnessError

T = TypeVar("T")

FILE_NAME = "scenario_seconds.json"


def module_key(stem: str) -> str:
    """module_key('test_idle_group_restart') == 'idle_group_restart'."""
    return stem.removeprefix("test_")


def read(directory: Path) -> dict[str, float]:
    """read() is the figures in `directory`'s scenario_seconds.json; none when the file is missing."""
    path = directory / FILE_NAME
    if not path.is_file():
        return {}
    try:
        seconds = json.loads(path.read_text(encoding="utf-8"))["seconds"]
        return {str(name): float(value) for name, value in seconds.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise HarnessError(f"{path} is not a scenario_seconds file ({err}): write it anew with `make scenario-seconds` or delete it") from err


def from_junit(path: Path) -> dict[str, float]:
    """from_junit() is each scenario's seconds in a JUnit file, skipped ones left out; a scenario run N times keeps its longest."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        raise HarnessError(f"cannot read JUnit file {path} ({err}): run `make e2e` first") from err
    seconds: dict[str, float] = {}
    for case in root.iter("testcase"):
        if case.find("skipped") is not None:
            continue
        key = module_key(str(case.get("classname", "")).rsplit(".", 1)[-1])
        seconds[key] = max(seconds.get(key, 0.0), float(case.get("time") or 0.0))
    return seconds


def write(directory: Path, seconds: dict[str, float], *, measured: str) -> Path:
    path = directory / FILE_NAME
    body = {"measured": measured, "seconds": {name: round(value, 1) for name, value in sorted(seconds.items())}}
    path.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    return path


def longest_first(items: Sequence[T], *, key_of: Callable[[T], str], seconds: dict[str, float]) -> list[T]:
    """longest_first() orders `items` by their past seconds, longest first; one with no figure yet comes first of all.

    A new scenario may be long: starting it early costs nothing if it is not.
    Ties keep the order they came in.
    Example: longest_first(['a', 'b', 'new'], key_of=str, seconds={'a': 5, 'b': 9}) == ['new', 'b', 'a'].
    """
    def expected(item: T) -> float:
        return seconds.get(key_of(item), float("inf"))

    return sorted(items, key=expected, reverse=True)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m harness.suite.scenario_seconds JUNIT_XML SCENARIO_DIR MEASURED_AT", file=sys.stderr)
        return 2
    try:
        seconds = from_junit(Path(argv[0]))
    except HarnessError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if not seconds:
        print(f"error: {argv[0]} has no scenario that ran: run `make e2e` first", file=sys.stderr)
        return 1
    path = write(Path(argv[1]), seconds, measured=argv[2])
    print(f"{path}: {len(seconds)} scenarios, {sum(seconds.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
