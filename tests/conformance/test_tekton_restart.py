"""tekton_restart: Tekton's controller is restarted mid-run, in a retry gap: the claim holds while Tekton is away, and the retry returns to it.

The fault it exists to catch: judging a task done from its pod rather than
from its TaskRun (mutant `taskrun_done_from_pod`). While the controller is
stopped nobody writes TaskRun status: the first attempt's pod has Failed, the
TaskRun still says Running, and the retry comes only once the controller is
back. A scheduler that reads the finished pod as the end of the task releases
the group in the outage (docs/contract.md section 8: judged from TaskRun
status, never from pods alone) and its retry lands wherever it scores best.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_generation_of,
    group_must_be,
    group_must_stay,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    pod_must_be_running,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_not_exist,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="tekton_restart",
    description="Tekton's controller is stopped while a group's 1200m task runs its first attempt, which then fails: the group stays Reserved through the outage; once the controller is back the retry lands on the group's node, beside a filler that makes the other node the emptier, under the same claim",
    features=(Feature.RESILIENCE,),
    fixtures=("tekton_restart", "filler"),
    volumes=("source",),
    restarts=("tekton-controller",),
)


def test_tekton_restart(run: ScenarioRun) -> None:
    run.apply("tekton_restart")
    first, node, record = task_must_hold_its_group(run, "tekton-restart", "flaky")
    generation = claim_generation_of(record, "flaky")
    # 3000m on the group's node: 1200m (the first attempt) + 3000m = 4200m of 4800m. In the gap the node
    # holds 3000m + 1200m (the residual: 1200m peak - nothing running), and the retry (1200m) fits in
    # 4800m - 3000m = 1800m; a scheduler that let the group go finds the empty node the better one.
    run.apply("filler", name="tekton-restart-filler", node=node, share=3000 / 4800)
    pod_must_be_running(run, "tekton-restart-filler")

    def outage() -> None:
        run.release_pod(first["metadata"]["name"])
        assert pod_must_be_finished(run, first["metadata"]["name"]) == "Failed"
        group_must_stay(run, "tekton-restart", "flaky", node=node, holders=(first,))
        task_pod_must_not_exist(run, "tekton-restart", "flaky", attempt=1)

    run.restart_component("tekton-controller", while_down=outage)
    # The first pod after the restart: Tekton first reconciles the TaskRun it missed.
    retry = task_pod_must_be_bound(run, "tekton-restart", "flaky", attempt=1, timeout="component_recovery")
    assert retry["spec"]["nodeName"] == node, f"the retry ran on {retry['spec']['nodeName']}, not on its group's node {node}"
    group_must_be(run, "tekton-restart", "flaky", state=State.RESERVED, node=node, claim_generation=generation)
    run.release_pod(retry["metadata"]["name"])
    pipelinerun_must_succeed(run, "tekton-restart")
    group_must_be(run, "tekton-restart", "flaky", state=State.RELEASED, node=node)
