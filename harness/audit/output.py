"""output: an audit line as text or as one JSON object, and the summary written at exit.

    2026-12-03T11:40:02.125Z node-overcommitted started: node n holds ... [node n, pod ns/a, pod ns/b]
    {"time": "2026-12-03T11:40:02.125Z", "rule": "node-overcommitted", "change": "started", "message": "...", "objects": [...]}
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Mapping

from harness.audit.dedup import AuditLine

FORMATS = ("text", "json")


def timestamp(at: datetime) -> str:
    """timestamp(datetime(2026, 12, 3, 11, 40, 2, 125000, tzinfo=UTC)) == '2026-12-03T11:40:02.125Z'."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def as_text(line: AuditLine) -> str:
    objects = f" [{', '.join(line.objects)}]" if line.objects else ""
    return f"{timestamp(line.at)} {line.rule} {line.change.value}: {line.message}{objects}"


def as_json(line: AuditLine) -> str:
    return json.dumps(
        {"time": timestamp(line.at), "rule": line.rule, "change": line.change.value, "message": line.message, "objects": list(line.objects)},
        sort_keys=False,
    )


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
