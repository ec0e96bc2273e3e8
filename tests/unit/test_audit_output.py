"""rescon audit's lines: text for people, one JSON object per line for machines, and the exit summary."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from harness.audit.dedup import AuditLine, Change
from harness.audit.output import as_json, as_text, render, summary, timestamp

pytestmark = pytest.mark.unit

LINE = AuditLine(datetime(2026, 12, 3, 11, 40, 2, 125999, tzinfo=UTC), "node-overcommitted", Change.STARTED, "node a holds 5000m CPU", ("node a", "pod ns/x"))


def test_timestamps_are_utc_with_milliseconds() -> None:
    assert timestamp(LINE.at) == "2026-12-03T11:40:02.125Z"


def test_a_text_line_names_time_rule_change_message_and_objects() -> None:
    assert as_text(LINE) == "2026-12-03T11:40:02.125Z node-overcommitted started: node a holds 5000m CPU [node a, pod ns/x]"
    assert as_text(AuditLine(LINE.at, "record-invalid", Change.CLEARED, "no longer found: bad")) == "2026-12-03T11:40:02.125Z record-invalid cleared: no longer found: bad"


def test_a_json_line_is_one_object_with_the_same_fields() -> None:
    text = as_json(LINE)
    assert "\n" not in text
    assert json.loads(text) == {
        "time": "2026-12-03T11:40:02.125Z", "rule": "node-overcommitted", "change": "started",
        "message": "node a holds 5000m CPU", "objects": ["node a", "pod ns/x"],
    }
    assert render(LINE, "json") == text and render(LINE, "text") == as_text(LINE)


def test_the_summary_counts_per_rule_and_what_is_still_in_force() -> None:
    text = summary(seconds=12.34, counts={"node-overcommitted": 2, "group-split": 1}, active={"node-overcommitted": 1}, events=10, restarts=3)
    assert text == (
        "rescon audit: stopped after 12.3s: 3 violation(s) (group-split 1, node-overcommitted 2); "
        "still in force: node-overcommitted 1; 10 events, 3 watch restart(s)"
    )
    assert "0 violation(s) (none); still in force: none" in summary(seconds=1, counts={}, active={}, events=0, restarts=0)
