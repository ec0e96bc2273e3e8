"""Record ownership: a scheduler marks the records it creates and releases only those."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.records import SCHEDULER_ANNOTATION, created_by, record_manifest
from reference_scheduler.runtime.releaser import Releaser

pytestmark = pytest.mark.unit

RUN = {"apiVersion": "tekton.dev/v1", "metadata": {"name": "a", "namespace": "ci", "uid": "u-1"}}
GROUP = WorkspaceGroup("source", ("build",), ("source",), Resources(cpu=1000))


def releaser(scheduler_name: str) -> Releaser:
    unused: Any = None
    return Releaser(
        records=unused, pipeline_runs=unused, task_runs=unused, custom_runs=unused, nodes=unused, writer=unused, resync_seconds=5.0,
        on_released=lambda reason: None, scheduler_name=scheduler_name,
    )


def test_a_new_record_names_its_scheduler() -> None:
    record = record_manifest(RUN, (GROUP,), scheduler_name="tkn-scheduler")
    assert record["metadata"]["annotations"] == {SCHEDULER_ANNOTATION: "tkn-scheduler"}
    assert created_by(record) == "tkn-scheduler"


def test_a_scheduler_owns_only_its_own_records() -> None:
    mine = record_manifest(RUN, (GROUP,), scheduler_name="tkn-scheduler")
    theirs = record_manifest(RUN, (GROUP,), scheduler_name="bench-reference")
    unmarked = {"metadata": {"name": "a", "namespace": "ci"}}
    assert releaser("tkn-scheduler").owns(mine)
    assert not releaser("tkn-scheduler").owns(theirs)
    assert not releaser("tkn-scheduler").owns(unmarked)


class _Cache:
    """A cache of (namespace, name) -> object, as the Releaser reads an Informer."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self._objects = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objects}

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get((namespace, name))


def test_a_run_s_children_are_read_from_the_task_runs_custom_runs_and_pipeline_runs_its_references_name() -> None:
    task_run = {"metadata": {"namespace": "ci", "name": "a-fetch"}, "status": {}}
    custom_run = {"metadata": {"namespace": "ci", "name": "a-approve"}, "status": {}}
    child_pipeline_run = {"metadata": {"namespace": "ci", "name": "a-build-and-test"}, "status": {}}
    unused: Any = None
    releaser = Releaser(
        records=unused, pipeline_runs=_Cache(child_pipeline_run), task_runs=_Cache(task_run), custom_runs=_Cache(custom_run), nodes=unused,
        writer=unused,
        resync_seconds=5.0, on_released=lambda reason: None, scheduler_name="tkn-scheduler",
    )
    run = {"status": {"childReferences": [
        {"kind": "TaskRun", "pipelineTaskName": "fetch", "name": "a-fetch"},
        {"kind": "CustomRun", "pipelineTaskName": "approve", "name": "a-approve"},
        {"kind": "PipelineRun", "pipelineTaskName": "build-and-test", "name": "a-build-and-test"},
        {"kind": "TaskRun", "pipelineTaskName": "later", "name": "a-later"},
    ]}}
    children = releaser._task_runs_of("ci", run)
    assert children == {
        "a-fetch": task_run, "a-approve": {**custom_run, "kind": "CustomRun"}, "a-build-and-test": {**child_pipeline_run, "kind": "PipelineRun"},
    }, "a child not cached yet is left out"
    assert releaser._task_runs_of("other", run) == {}
    assert releaser._task_runs_of("ci", None) == {}
