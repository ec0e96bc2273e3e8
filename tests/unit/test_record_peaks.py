"""A record's peak as a map of every resource (issue #34): the model reads each in its unit and refuses what the contract rules out.

These are model checks only: the CRD that admits peak keys other than cpu and
memory comes with the contract change, and test_contract_record.py holds the
CRD and the model to the same records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.contract import ContractViolation, Record
from harness.quantities import Amount

pytestmark = pytest.mark.unit

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "contract-example.yaml"
GPU = "example.com/gpu"


def with_peak(peak: dict[str, Any]) -> dict[str, Any]:
    """The contract's example record with group source's peak replaced."""
    obj: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    next(g for g in obj["spec"]["groups"] if g["name"] == "source")["peak"] = peak
    return obj


def test_a_record_with_only_cpu_and_memory_reads_as_before() -> None:
    group = Record.from_json(with_peak({"cpu": "2000m", "memory": "2560Mi"})).group("source")
    assert (group.peak_cpu_millis, group.peak_memory_bytes, group.peak_others) == (2000, 2560 * 2**20, ())
    assert group.peak == Amount(2000, 2560 * 2**20)


def test_every_resource_is_read_in_its_unit() -> None:
    peak = {"cpu": "1.5", "memory": "1Gi", "ephemeral-storage": "6Gi", "hugepages-2Mi": "512Mi", GPU: "2"}
    group = Record.from_json(with_peak(peak)).group("source")
    assert group.peak.as_dict() == {"cpu": 1500, "memory": 2**30, "ephemeral-storage": 6 * 2**30, "hugepages-2Mi": 512 * 2**20, GPU: 2}
    assert group.peak.get("hugepages-1Gi") == 0


def test_spellings_of_one_amount_read_alike() -> None:
    one = Record.from_json(with_peak({"cpu": "1", "memory": "0", GPU: "2", "ephemeral-storage": "1G"})).group("source")
    other = Record.from_json(with_peak({"cpu": "1000m", "memory": "0", GPU: "2e0", "ephemeral-storage": "1000000000"})).group("source")
    assert one == other


@pytest.mark.parametrize(
    "peak, field",
    [
        pytest.param({"cpu": "1", "memory": "1Gi", "gpu": "1"}, "spec.groups[source].peak.gpu", id="an-unqualified-extended-name"),
        pytest.param({"cpu": "1", "memory": "1Gi", "pods": "3"}, "spec.groups[source].peak.pods", id="pods-is-no-request"),
        pytest.param({"cpu": "1", "memory": "1Gi", GPU: "0"}, f"spec.groups[source].peak[{GPU}]", id="a-zero-other-resource"),
        pytest.param({"cpu": "1", "memory": "1Gi", GPU: "one"}, f"spec.groups[source].peak[{GPU}]", id="not-a-quantity"),
        pytest.param({"cpu": "1", GPU: "1"}, "spec.groups[source].peak.memory", id="memory-is-always-written"),
        pytest.param({"memory": "1Gi", GPU: "1"}, "spec.groups[source].peak.cpu", id="cpu-is-always-written"),
    ],
)
def test_a_peak_the_contract_rules_out_is_refused_naming_the_field(peak: dict[str, Any], field: str) -> None:
    with pytest.raises(ContractViolation) as raised:
        Record.from_json(with_peak(peak))
    assert raised.value.field == field


def test_zero_cpu_and_memory_are_written_and_read() -> None:
    assert Record.from_json(with_peak({"cpu": "0", "memory": "0", GPU: "1"})).group("source").peak == Amount.of({GPU: 1})


def test_a_foreign_record_can_hold_other_resources() -> None:
    from harness.suite.foreign_records import foreign_record

    run = {"metadata": {"name": "x-other", "uid": "u-1"}}
    holder = {"metadata": {"uid": "p-1"}}
    obj = foreign_record(run, scheduler="other", group="source", task="only", peak_cpu_millis=480, node="p-0", holders=(holder,),
                         peak_others={GPU: "1"})
    obj["metadata"]["namespace"] = "ns"
    assert Record.from_json(obj).group("source").peak == Amount.of({"cpu": 480, GPU: 1})
