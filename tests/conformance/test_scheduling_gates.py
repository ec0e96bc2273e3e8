"""scheduling_gates: a pod with scheduling gates is not tried until its last gate is removed, then joins its group (SchedulingGates).

The fault it exists to catch: trying a gated pod (tests/mutants/faults.py:
ignores_scheduling_gates). A queueing controller such as Kueue gates every pod of
a run it queues and removes the gates when it admits the run; until then the run
must hold nothing. The API server refuses to bind a gated pod, so a scheduler
that tries one anyway opens a claim, fails the bind and rolls the claim back,
again and again: a reservation that blocks other runs for nothing, and each
claim it opened stays counted in the group's claimGeneration, which this
scenario reads.

A MutatingAdmissionPolicy stands in for Kueue's webhook: it gates every pod
labelled kueue.x-k8s.io/queue-name in this namespace; the scenario removes each
gate as Kueue would on admission.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    gated_task_pod_must_stay_untried,
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    scheduling_gate_must_be_in_force,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_exist,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

RUN = "scheduling-gates"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GATE = "kueue.x-k8s.io/admission"

SCENARIO = Scenario(
    name="scheduling_gates",
    description=(
        "a queued run's pods are created with a scheduling gate: build's pod stays untried (its group unclaimed) while "
        "gated, then claims once the gate is removed; test, gated too, joins the group's node once ungated"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("scheduling_gates-admission", "scheduling_gates"),
    volumes=("source",),
)

# Nodes 4800m / 8Gi, empty. Peak: build (600m) then test (1200m), one after the other: max(600, 1200) = 1200m.
PEAK_CPU = 1200


def test_scheduling_gates(run: ScenarioRun) -> None:
    run.apply("scheduling_gates-admission")
    scheduling_gate_must_be_in_force(run, labels={QUEUE_LABEL: "ci"}, gate=GATE)

    run.apply("scheduling_gates")
    build = gated_task_pod_must_stay_untried(run, RUN, "build")
    run.ungate(build["metadata"]["name"])
    _, node, record = task_must_hold_its_group(run, RUN, "build")
    group_must_have(
        run, record, "build", tasks={"build", "test"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    # One claim, the one made once the gate was gone: a claim made for the gated pod and rolled back would count too.
    group_must_be(run, RUN, "build", state=State.RESERVED, node=node, claim_generation=1)

    run.release_pod(build["metadata"]["name"])
    test = task_pod_must_exist(run, RUN, "test")
    assert test["spec"].get("schedulingGates"), f"{RUN}/test's pod was created without scheduling gates: the admission policy did not apply"
    run.ungate(test["metadata"]["name"])
    test = task_pod_must_be_bound(run, RUN, "test")
    assert test["spec"]["nodeName"] == node, f"{RUN}'s test pod landed on {test['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, RUN)
    group_must_be(run, RUN, "test", state=State.RELEASED, node=node, claim_generation=1)
