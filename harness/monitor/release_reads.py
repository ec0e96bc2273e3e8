"""release_reads: the fresh reads behind a release verdict, shared by the suite's monitor and rescon audit.

Both read the record's PipelineRun (get) and its TaskRuns, CustomRuns and child
PipelineRuns (list by the run's label) at once and ask release_truth what holds for each group asked about:
when a group turns Released (`release-reason-untrue`: which reasons were
true), and, while a group is Reserved and its release may be due, to learn
since when it is (`release-late`, harness.monitor.release_due). A
PipelineRun already deleted reads as None: "deleted" is then true, and due.

    read_true_reasons(kube, record, ("build",)) == {ReleaseReason.TASKS_DONE}
    read_release_truths(kube, record, {"source": ("build",)}) == {"source": ReleaseTruth(...)}
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Mapping

import kubernetes

from harness.contract import record as contract
from harness.kube import Kube, json_object
from harness.monitor.invariants import PIPELINE_RUN_LABEL
from harness.monitor.release_truth import CHILD_PIPELINE_RUN_KIND, CUSTOM_RUN_KIND, ReleaseTruth, release_truth

TEKTON = ("tekton.dev", "v1")
TEKTON_BETA = ("tekton.dev", "v1beta1")
#: Where the child runs of a task with no TaskRun are, by kind: a custom task's CustomRun, a child pipeline's PipelineRun.
CHILD_RUN_APIS = {CUSTOM_RUN_KIND: (TEKTON_BETA, "customruns"), CHILD_PIPELINE_RUN_KIND: (TEKTON, "pipelineruns")}
#: The client's timeout on each read, in seconds (connect, read): a hung connection must not stall the
#: monitor's evaluator or the auditor's loop; the read then fails, is logged, and that moment goes unjudged.
READ_TIMEOUT_SECONDS = 10.0
_TIMEOUT = (READ_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS)


def read_release_truths(kube: Kube, record: contract.Record, groups: Mapping[str, tuple[str, ...]]) -> dict[str, ReleaseTruth]:
    """read_release_truths() reads the record's PipelineRun and its TaskRuns now, once, and returns what holds for each group (name: its tasks)."""
    custom = kube.custom
    try:
        pipeline_run: dict[str, Any] | None = json_object(custom.get_namespaced_custom_object(
            *TEKTON, record.namespace, "pipelineruns", record.pipeline_run, _request_timeout=_TIMEOUT,
        ))
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise
        pipeline_run = None
    selector = f"{PIPELINE_RUN_LABEL}={record.pipeline_run}"
    listing = json_object(custom.list_namespaced_custom_object(
        *TEKTON, record.namespace, "taskruns", label_selector=selector, _request_timeout=_TIMEOUT,
    ))
    children = list(listing.get("items") or [])
    # Custom tasks' CustomRuns and child pipelines' PipelineRuns (docs/contract.md section 8): read only for a
    # run that lists one, their kind said.
    for kind, (api, plural) in CHILD_RUN_APIS.items():
        if _lists_child_of_kind(pipeline_run, kind):
            others = json_object(custom.list_namespaced_custom_object(*api, record.namespace, plural, label_selector=selector, _request_timeout=_TIMEOUT))
            children += [{**c, "kind": kind} for c in others.get("items") or []]
    task_runs, now = children, datetime.now(UTC)
    return {
        group: release_truth(pipeline_run, task_runs, group_tasks=tasks, record_uid=record.pipeline_run_uid, now=now)
        for group, tasks in groups.items()
    }


def _lists_child_of_kind(pipeline_run: Mapping[str, Any] | None, kind: str) -> bool:
    """_lists_child_of_kind() is True when the run's status.childReferences names a child of `kind` (a gone run has none to read)."""
    children = ((pipeline_run or {}).get("status") or {}).get("childReferences") or []
    return any(child.get("kind") == kind for child in children)


def read_true_reasons(kube: Kube, record: contract.Record, tasks: tuple[str, ...]) -> set[contract.ReleaseReason]:
    """read_true_reasons() reads the record's PipelineRun and its TaskRuns now and returns the release reasons that hold for these tasks."""
    return set(read_release_truths(kube, record, {"": tasks})[""].reasons)
