"""group_must_have names every field of a group that differs, not only the first."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.contract.record import Record
from harness.suite.checks import group_must_have

pytestmark = pytest.mark.unit

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "contract-example.yaml"
# docs/contract-example.yaml's group "source": tasks clone, build, lint, unit-test; workspace source;
# peak 2000m CPU and 2560Mi = 2560 x 1024 x 1024 = 2684354560 bytes of memory.
TASKS = {"clone", "build", "lint", "unit-test"}
MEMORY = 2560 * 1024 * 1024


def _record() -> Record:
    return Record.from_json(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")))


def test_a_group_as_expected_passes() -> None:
    group_must_have(None, _record(), "build", tasks=TASKS, workspaces={"source"}, peak_cpu_millis=2000, peak_memory_bytes=MEMORY)  # type: ignore[arg-type]


def test_every_wrong_field_is_named_in_one_failure() -> None:
    with pytest.raises(AssertionError) as failure:
        group_must_have(None, _record(), "build", tasks=TASKS, workspaces={"source", "cache"}, peak_cpu_millis=2000, peak_memory_bytes=MEMORY // 2)  # type: ignore[arg-type]
    message = str(failure.value)
    assert "lists workspaces ['source'], expected ['cache', 'source']" in message
    assert f"reserves a peak of {MEMORY} bytes of memory, expected {MEMORY // 2}" in message
    assert "CPU" not in message and "has tasks" not in message
