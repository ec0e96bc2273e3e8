"""foreign_records_untouched: a scheduler writes only the records it created, never another scheduler's.

The fault it exists to catch: a releaser that releases every record whose
PipelineRun is over, whoever made it (docs/contract.md section 2, "Several
schedulers"): it would hide the other scheduler's faults and free room that
scheduler still counts on. The suite publishes a record for a PipelineRun of
another schedulerName, cancels that run, and runs one of the scheduler's own.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_stay,
    pipelinerun_must_list_task,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
    task_pod_must_exist,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.foreign_records import foreign_record
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="foreign_records_untouched",
    description="Another scheduler's record (Reserved, its PipelineRun then cancelled) stays exactly as that scheduler wrote it while the scheduler under test runs and releases a group of its own",
    features=(Feature.RESERVATION_RECORDS, Feature.RELEASE),
    fixtures=("foreign_records_untouched-other", "foreign_records_untouched-mine"),
    volumes=("other-source", "mine-source"),
    # A schedulerName nobody serves here: the other scheduler's pods stay Pending.
    values={"other_scheduler": "rescon-another-scheduler"},
)
OTHER_SCHEDULER = SCENARIO.values["other_scheduler"]


def test_foreign_records_untouched(run: ScenarioRun) -> None:
    run.apply("foreign_records_untouched-other")
    pod = task_pod_must_exist(run, "foreign-records-untouched-other", "only")
    pipelinerun_must_list_task(run, "foreign-records-untouched-other", "only")
    written = run.create_foreign_record(foreign_record(
        run.pipeline_run("foreign-records-untouched-other"), scheduler=OTHER_SCHEDULER, group="source", task="only",
        peak_cpu_millis=run.node_cpu_millis() // 10, node=run.node_names[0], holders=(pod,),
    ))

    run.apply("foreign_records_untouched-mine")
    mine = task_pod_must_be_bound(run, "foreign-records-untouched-mine", "only")
    group_must_be(run, "foreign-records-untouched-mine", "only", state=State.RESERVED, node=mine["spec"]["nodeName"])
    # Cancelled while the scheduler under test is busy in this namespace: a releaser that releases
    # every record whose run is over meets the other scheduler's record now, not at a resync.
    run.cancel("foreign-records-untouched-other")
    taskrun_must_be_done(run, "foreign-records-untouched-other", "only")
    run.release_pod(mine["metadata"]["name"])
    pipelinerun_must_succeed(run, "foreign-records-untouched-mine")
    group_must_be(run, "foreign-records-untouched-mine", "only", state=State.RELEASED, node=mine["spec"]["nodeName"])

    group_must_stay(run, "foreign-records-untouched-other", "only", node=run.node_names[0], holders=(pod,))
    now = run.record_json("foreign-records-untouched-other")
    assert now is not None, "another scheduler's record was deleted by the scheduler under test"
    assert now["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"], (
        f"another scheduler's record was written by the scheduler under test: {now.get('metadata', {}).get('managedFields', [{}])[-1].get('manager')} "
        f"changed it to {now.get('status')}"
    )
