"""release_reads: the fresh reads behind a release verdict, shared by the suite's monitor and rescon audit.

When a group turns Released, both read the record's PipelineRun (get) and its
TaskRuns (list by the run's label) at once and ask release_truth which release
reasons hold. A PipelineRun already deleted reads as None: "deleted" is then
one of the true reasons.

    read_true_reasons(kube, record, ("build",)) == {ReleaseReason.TASKS_DONE}
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import kubernetes

from harness.contract import record as contract
from harness.kube import Kube, json_object
from harness.monitor.invariants import PIPELINE_RUN_LABEL
from harness.monitor.release_truth import true_reasons

TEKTON = ("tekton.dev", "v1")


def read_true_reasons(kube: Kube, record: contract.Record, tasks: tuple[str, ...]) -> set[contract.ReleaseReason]:
    """read_true_reasons() reads the record's PipelineRun and its TaskRuns now and returns the release reasons that hold."""
    custom = kube.custom
    try:
        pipeline_run: dict[str, Any] | None = json_object(
            custom.get_namespaced_custom_object(*TEKTON, record.namespace, "pipelineruns", record.pipeline_run)
        )
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise
        pipeline_run = None
    listing = json_object(custom.list_namespaced_custom_object(
        *TEKTON, record.namespace, "taskruns", label_selector=f"{PIPELINE_RUN_LABEL}={record.pipeline_run}"
    ))
    return true_reasons(pipeline_run, listing.get("items") or [], group_tasks=tasks, record_uid=record.pipeline_run_uid, now=datetime.now(UTC))
