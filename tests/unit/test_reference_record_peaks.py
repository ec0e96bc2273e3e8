"""A record's peak is a map: the reference writes cpu and memory always, other resources when not zero, and reads back every key."""

from __future__ import annotations

import pytest

from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.cluster_view import reservations_of
from reference_scheduler.runtime.records import record_manifest

pytestmark = pytest.mark.unit

RUN = {"metadata": {"name": "run-a", "namespace": "ci", "uid": "u-1"}}
GPU_GROUP = WorkspaceGroup("g0", ("build", "test"), ("source",), Resources.of({"cpu": 2000, "memory": 1024, "nvidia.com/gpu": 1}))
PLAIN_GROUP = WorkspaceGroup("g1", ("lint",), ("cache",), Resources(cpu=500))


def _reserved(record: dict) -> dict:  # type: ignore[type-arg]
    record["status"] = {"groups": [{"name": "g0", "state": "Reserved", "node": "n1", "claimGeneration": 1}, {"name": "g1", "state": "Reserved", "node": "n2", "claimGeneration": 1}]}
    return record


def test_the_written_peak_names_cpu_and_memory_always_and_other_resources_only_when_not_zero() -> None:
    record = record_manifest(RUN, (GPU_GROUP, PLAIN_GROUP), scheduler_name="s")
    peaks = [g["peak"] for g in record["spec"]["groups"]]
    assert peaks == [{"cpu": "2000m", "memory": "1024", "nvidia.com/gpu": "1"}, {"cpu": "500m", "memory": "0"}]


def test_reservations_read_every_resource_of_the_peak_back() -> None:
    held = reservations_of(_reserved(record_manifest(RUN, (GPU_GROUP, PLAIN_GROUP), scheduler_name="s")))
    assert [(r.group, r.node, r.peak) for r in held] == [
        (GroupKey("ci", "run-a", "g0"), "n1", GPU_GROUP.peak),
        (GroupKey("ci", "run-a", "g1"), "n2", PLAIN_GROUP.peak),
    ]


def test_an_older_record_with_cpu_and_memory_only_reads_as_before() -> None:
    record = _reserved(record_manifest(RUN, (GPU_GROUP, PLAIN_GROUP), scheduler_name="s"))
    record["spec"]["groups"][0]["peak"] = {"cpu": "2", "memory": "1Gi"}
    assert reservations_of(record)[0].peak == Resources(cpu=2000, memory=1024**3)


def test_a_peak_respelt_by_a_typed_round_trip_reads_the_same() -> None:
    record = _reserved(record_manifest(RUN, (GPU_GROUP,), scheduler_name="s"))
    record["status"]["groups"] = record["status"]["groups"][:1]
    record["spec"]["groups"][0]["peak"] = {"cpu": "2", "memory": "1Ki", "nvidia.com/gpu": "1000m"}
    assert reservations_of(record)[0].peak == GPU_GROUP.peak
