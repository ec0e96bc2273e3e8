"""another_schedulers_reservation: a group another reservation scheduler holds on a node counts there, for as long as its record does.

The fault it exists to catch: counting only one's own records. Two
reservation schedulers may serve one cluster under different schedulerNames
(docs/contract.md section 2, Several schedulers), and each MUST count every
Reserved group on a node, whoever reserved it (section 7, Headroom: the sum is
over every Reserved group H on the node). Here the other scheduler's run has
claimed the pool's only node for a group of 2880/4800 of its CPU whose pod has
not started, so all of it is residual; B's group needs 2400, and only 1920 are
left. A scheduler that reads only its own records finds the node empty and
binds B into the other run's room (tests/mutants/faults.py:
ignores_other_schedulers_records). The other run is then deleted, its record
goes with it (garbage collection, its ownerReference), and B must bind. The
record is held for the whole window: nobody serves the other schedulerName.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    pipelinerun_must_list_task,
    pipelinerun_must_succeed,
    task_pod_must_be_bound,
    task_pod_must_exist,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.foreign_records import foreign_record
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="another_schedulers_reservation",
    description=(
        "Another reservation scheduler holds 2880 of the only node's 4800 for a group whose pod has not started: B's group (2400) "
        "waits until that run, and with it its record, is deleted"
    ),
    features=(Feature.PEAK_RESERVATION, Feature.RESERVATION_RECORDS),
    fixtures=("another_schedulers_reservation-other", "another_schedulers_reservation-b"),
    pool=PoolSpec(count=1),
    volumes=("other-source", "b-source"),
    # A schedulerName nobody serves here: the other scheduler's pods stay Pending.
    values={"other_scheduler": "rescon-another-scheduler"},
)
OTHER_SCHEDULER = SCENARIO.values["other_scheduler"]
OTHER = "another-schedulers-reservation-other"
B = "another-schedulers-reservation-b"


def test_another_schedulers_reservation(run: ScenarioRun) -> None:
    (node,) = run.node_names
    run.apply("another_schedulers_reservation-other")
    other_pod = task_pod_must_exist(run, OTHER, "only")
    pipelinerun_must_list_task(run, OTHER, "only")
    # By hand: the other group's peak 2880 is all residual (its pod is on no node): 4800 - 2880 = 1920 left; B needs 2400.
    run.create_foreign_record(foreign_record(
        run.pipeline_run(OTHER), scheduler=OTHER_SCHEDULER, group="source", task="only",
        peak_cpu_millis=run.node_cpu_millis() * 2880 // 4800, node=node, holders=(other_pod,),
    ))

    run.apply("another_schedulers_reservation-b")
    task_pod_must_stay_pending(run, B, "only")

    # The other run is deleted; its record goes with it, and its room with the record.
    run.delete_pipeline_run(OTHER)
    b_pod = task_pod_must_be_bound(run, B, "only")
    assert b_pod["spec"]["nodeName"] == node, f"B ran on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    group_must_be(run, B, "only", state=State.RESERVED, node=node)
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, B)
