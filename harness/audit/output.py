"""output: an audit line as text or as one JSON object, and the summary written at exit.

    2026-12-03T11:40:02.125Z node-overcommitted started: node n holds ... [node n, pod ns/a, pod ns/b]
        room on node n (docs/contract.md section 7, Headroom): over on cpu
        cpu: 4801m counted > 4800m allocatable, 1m over
          ...
    {"time": "2026-12-03T11:40:02.125Z", "rule": "node-overcommitted", "change": "started", "message": "...", "objects": [...],
     "arithmetic": {"node": "n", "over": ["cpu"], ...}}
"""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime
from typing import Any, Mapping

from harness.audit.dedup import AuditLine
from harness.monitor.room import room_data
from harness.monitor.room_text import room_table

FORMATS = ("text", "json")


def timestamp(at: datetime) -> str:
    """timestamp(datetime(2026, 12, 3, 11, 40, 2, 125000, tzinfo=UTC)) == '2026-12-03T11:40:02.125Z'."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


#: How far the arithmetic's block is indented under its line in text output.
BLOCK_INDENT = "    "


def as_text(line: AuditLine) -> str:
    """as_text() is the line, and under it, indented, the node's arithmetic when the rule is about room."""
    objects = f" [{', '.join(line.objects)}]" if line.objects else ""
    text = f"{timestamp(line.at)} {line.rule} {line.change.value}: {line.message}{objects}"
    return text if line.room is None else text + "\n" + textwrap.indent(room_table(line.room), BLOCK_INDENT)


def as_json(line: AuditLine) -> str:
    """as_json() is the line as one JSON object; a rule about room adds `arithmetic`, the node's terms as data (room_data)."""
    data: dict[str, Any] = {"time": timestamp(line.at), "rule": line.rule, "change": line.change.value, "message": line.message, "objects": list(line.objects)}
    if line.room is not None:
        data["arithmetic"] = room_data(line.room)
    return json.dumps(data, sort_keys=False)


def render(line: AuditLine, output_format: str) -> str:
    """render() is the line in `output_format` (text or json)."""
    return as_json(line) if output_format == "json" else as_text(line)


def summary(*, seconds: float, counts: Mapping[str, int], active: Mapping[str, int], events: int, restarts: int) -> str:
    """summary() is the one line written on stderr at exit: how long, how many violations per rule, how many still in force."""
    total = sum(counts.values())
    per_rule = ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items())) or "none"
    still = ", ".join(f"{rule} {n}" for rule, n in sorted(active.items())) or "none"
    return (
        f"rescon audit: stopped after {seconds:.1f}s: {total} violation(s) ({per_rule}); still in force: {still}; "
        f"{events} events, {restarts} watch restart(s)"
    )
