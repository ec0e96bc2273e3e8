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


GPU = "example.com/gpu"


def _with_peak(**others: str) -> Record:
    obj = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    obj["spec"]["groups"][0]["peak"].update(others)
    return Record.from_json(obj)


def _must_have(record: Record, peak_other: dict[str, int | str] | None) -> None:
    group_must_have(None, record, "build", tasks=TASKS, workspaces={"source"}, peak_cpu_millis=2000, peak_memory_bytes=MEMORY,  # type: ignore[arg-type]
                    peak_other=peak_other)


def test_other_resources_of_the_peak_as_expected_pass() -> None:
    _must_have(_with_peak(**{GPU: "1", "ephemeral-storage": "6Gi"}), {GPU: 1, "ephemeral-storage": "6Gi"})
    _must_have(_with_peak(**{"ephemeral-storage": "6442450944"}), {"ephemeral-storage": 6 << 30})


def test_a_record_that_leaves_a_requested_resource_out_fails() -> None:
    with pytest.raises(AssertionError) as failure:
        _must_have(_record(), {GPU: 1})
    assert f"reserves no {GPU}, expected {GPU} 1: a peak names every resource its group's pods request" in str(failure.value)


def test_a_record_that_names_a_resource_nobody_requests_fails() -> None:
    with pytest.raises(AssertionError) as failure:
        _must_have(_with_peak(**{"hugepages-2Mi": "4Mi"}), None)
    assert "reserves a peak of hugepages-2Mi 4Mi, expected none: no pod of the group requests hugepages-2Mi" in str(failure.value)


def test_a_wrong_amount_of_another_resource_is_named_beside_the_rest() -> None:
    with pytest.raises(AssertionError) as failure:
        _must_have(_with_peak(**{GPU: "3", "ephemeral-storage": "1Gi"}), {GPU: 2})
    message = str(failure.value)
    assert f"reserves a peak of {GPU} 3, expected {GPU} 2" in message
    assert "reserves a peak of ephemeral-storage 1Gi, expected none" in message
