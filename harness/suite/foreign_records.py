"""foreign_records: the ReservationRecord another reservation scheduler would publish for its own PipelineRun.

Two reservation schedulers may serve one cluster, each under its own
schedulerName (docs/contract.md section 2, Several schedulers). The suite
plays the other one: it runs a PipelineRun under a schedulerName nobody
serves (its pods stay Pending) and publishes, with
ScenarioRun.create_foreign_record, the record that scheduler would have
written once it had claimed a node for the run's group.

    record = foreign_record(run.pipeline_run('x-other'), scheduler='rescon-another-scheduler',
                            group='source', task='only', peak_cpu_millis=480, node='p-0', holders=(pod,))

`peak_others` adds other resources to the peak, as quantity strings:
`peak_others={'example.com/gpu': '1'}` makes the other scheduler hold a GPU too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Mapping, Sequence

from harness.contract import record as contract

Obj = dict[str, Any]


def foreign_record(
    pipeline_run: Mapping[str, Any], *, scheduler: str, group: str, task: str, peak_cpu_millis: int, node: str,
    holders: Sequence[Mapping[str, Any]], peak_others: Mapping[str, str] | None = None,
) -> Obj:
    """foreign_record() is a record of one group, Reserved on `node` with `holders`, as `scheduler` writes it: owned by its run, labelled active."""
    name, uid = pipeline_run["metadata"]["name"], pipeline_run["metadata"]["uid"]
    return {
        "apiVersion": contract.API_VERSION,
        "kind": contract.KIND,
        "metadata": {
            "name": name,
            "labels": {contract.ACTIVE_LABEL: contract.ACTIVE_VALUE},
            "annotations": {"rescon.dev/scheduler-name": scheduler},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": name, "uid": uid, "controller": True}],
        },
        "spec": {
            "pipelineRun": {"name": name, "uid": uid},
            "groups": [{
                "name": group, "tasks": [task], "workspaces": [group],
                "peak": {"cpu": f"{peak_cpu_millis}m", "memory": "0", **(peak_others or {})},
            }],
        },
        "status": {
            "reservedGroups": 1,
            "groups": [{
                "name": group, "state": "Reserved", "node": node, "holders": [h["metadata"]["uid"] for h in holders],
                "claimGeneration": 1, "reservedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }],
        },
    }
