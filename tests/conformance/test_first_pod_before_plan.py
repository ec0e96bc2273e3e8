"""first_pod_before_plan: a pod whose PipelineRun has no plan yet is kept Pending, and bound under its group's claim once the plan appears.

docs/contract.md section 2, "The first pod before the plan": Tekton can create
a run's first pod before it writes the run's status.pipelineSpec; such a pod
MUST NOT be bound (no record can exist for it yet), and MUST be tried again
when the plan appears, without waiting for a periodic resync. On a busy
cluster the window is a few milliseconds; here it is held open on purpose:
the run is created PipelineRunPending (Tekton writes no status.pipelineSpec
and creates no TaskRun), and the first pod is made by hand with Tekton's
labels (section 7: a pod is a PipelineRun's when it carries
tekton.dev/pipelineRun). A ResourceQuota then keeps Tekton's own pods out once
the run starts, so that only the run's update can wake the parked pod.

Faults it exists to catch (tests/mutants/faults.py): `binds_before_plan`
binds the pod at once as a plain pod, and `parked_pod_waits_for_resync`
parks it but tries it again only at its 60 s flush.

Features: ReservationRecords. The rule is about the record (it must exist
before a group's first pod is bound), so a placement-only implementation,
which publishes none, is not judged on it; what it is judged on, that a
group's pods share a node, the colocation scenarios check.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    group_must_stay,
    pipelinerun_must_be_resolved,
    pod_creation_must_be_denied,
    pod_must_be_bound,
    pod_must_wait_for_plan,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="first_pod_before_plan",
    description=(
        "A pod of a PipelineRun that has no status.pipelineSpec yet (the run is PipelineRunPending) is not bound "
        "outside a claim; once the run starts, the pod is bound within parked_pod_scheduled, under its group's Reserved claim"
    ),
    features=(Feature.RESERVATION_RECORDS,),
    fixtures=("first_pod_before_plan", "first_pod_before_plan-pod", "first_pod_before_plan-quota"),
    volumes=("source",),
)

POD = "first-pod-before-plan-clone-by-hand"

# The group's peak, by hand from the fixture (on a 4800m node): clone 600m and lint 300m have no
# runAfter between them, so they may run at once: 600 + 300 = 900m; build (720m) runs after both,
# alone. Peak = max(900, 720) = 900m. No step asks for memory: 0.
CLONE, LINT, BUILD = 600 / 4800, 300 / 4800, 720 / 4800


def test_first_pod_before_plan(run: ScenarioRun) -> None:
    run.apply("first_pod_before_plan")
    run.apply("first_pod_before_plan-pod")
    run.apply("first_pod_before_plan-quota")
    pod_creation_must_be_denied(run)
    pod_must_wait_for_plan(run, POD, pipeline_run="first-pod-before-plan", task="clone")

    run.start_pending("first-pod-before-plan")
    pipelinerun_must_be_resolved(run, "first-pod-before-plan")
    pod = pod_must_be_bound(run, POD, timeout="parked_pod_scheduled")
    node = pod["spec"]["nodeName"]

    record = group_must_be(run, "first-pod-before-plan", "clone", state=State.RESERVED, node=node)
    group_must_stay(run, "first-pod-before-plan", "clone", node=node, holders=(pod,))
    cpu = run.node_cpu_millis()
    group_must_have(
        run, record, "clone", tasks={"clone", "lint", "build"}, workspaces={"source"},
        peak_cpu_millis=max(share_of(cpu, CLONE) + share_of(cpu, LINT), share_of(cpu, BUILD)), peak_memory_bytes=0,
    )
