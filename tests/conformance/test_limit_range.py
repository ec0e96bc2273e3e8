"""limit_range: a LimitRange's defaultRequest counts as Tekton and the API server apply it.

The faults it exists to catch: giving every step the LimitRange's whole
defaultRequest, as the API server's LimitRanger would if Tekton did not act
first; and sparing Tekton's init containers the LimitRanger's default
(held-out fault `held_limit_range_spares_tekton_init`): C's one small step
then looks like its pod's request, where the init containers' 0.2 CPU each is. Tekton's LimitRange transformer (pkg/internal/computeresources)
divides defaultRequest across the pod's step containers and gives it only to
steps without a request; the LimitRanger admission plugin then gives the
whole defaultRequest to every container still without one: sidecars and
Tekton's own init containers. kube-scheduler counts the largest init
container against the sum of the others (PodRequests).

What Tekton v1.15 built on the local cluster (big's pod, read once while
writing this scenario): big's containers
`step-work` 2400m (its own) and `step-work-2` 480m (960m / 2, Tekton's
transformer); init containers `prepare` and `place-scripts` 960m each (the
LimitRanger). small's pod: `step-work` 96m, init containers 960m each. B's
pod: `step-work` 1680m, init containers 960m each. No overhead, no pod-level
resources.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    limit_range_must_be_in_force,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="limit_range",
    description="With a LimitRange defaultRequest of 0.2 CPU, A's later task (a 0.5 step and a step without a request) asks 0.6 (Tekton splits the default across the steps), not 0.7, so B (0.35) fits beside A on the only node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("limit_range-limits", "limit_range-a", "limit_range-b", "limit_range-c"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source", "c-source"),
)


# Peak, by hand (fractions of one node, as cpu() renders them; the LimitRange has no memory
#   default and no task requests memory, so the memory peak is 0):
#   LimitRange defaultRequest: 0.2 CPU = 960m.
#   small: step work asks 0.02 CPU (96m), keeps it. Init containers prepare and place-scripts
#          get the whole 960m each from the LimitRanger. Pod: max(96, 960) = 960m.
#   big:   step work asks 0.5 CPU (2400m), keeps it; step work-2 asks nothing: Tekton gives it
#          960m / 2 steps = 480m. Containers: 2400 + 480 = 2880m; init containers 960m each.
#          Pod: max(2880, 960) = 2880m.
#   small then big is a chain: the peak is max(960, 2880) = 2880m.
# Placement: B's pod asks max(1680, 960) = 1680m. The node (4800m) has
#   4800 - 960 (small's pod) - (2880 - 960) (A's residual) = 1920m left: B fits.
#   Giving work-2 the whole default (big 3360m) leaves 4800 - 960 - 2400 = 1440m: B would wait.

def test_limit_range(run: ScenarioRun) -> None:
    run.apply("limit_range-limits")
    limit_range_must_be_in_force(run, cpu=share_of(run.node_cpu_millis(), 0.2))
    run.apply("limit_range-a")
    small, node, record = task_must_hold_its_group(run, "limit-range-a", "small")
    cpu = run.node_cpu_millis()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=max(share_of(cpu, 0.5) + share_of(cpu, 0.2) // 2, share_of(cpu, 0.2)), peak_memory_bytes=0,
    )

    run.apply("limit_range-b")
    b_pod = task_pod_must_be_bound(run, "limit-range-b", "only")
    assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
    group_must_be(run, "limit-range-b", "only", state=State.RESERVED, node=node)

    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, "limit-range-a", "big")
    assert big["spec"]["nodeName"] == node, f"A's big task ran on {big['spec']['nodeName']}, not on its group's node {node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "limit-range-a")
    pipelinerun_must_succeed(run, "limit-range-b")

    # C: a task whose pod Tekton's init containers size (0.2 each from the LimitRanger), not its 0.02 step.
    run.apply("limit_range-c")
    only, _, c_record = task_must_hold_its_group(run, "limit-range-c", "only")
    group_must_have(run, c_record, "only", tasks={"only"}, workspaces={"source"}, peak_cpu_millis=max(share_of(cpu, 0.02), share_of(cpu, 0.2)), peak_memory_bytes=0)
    run.release_pod(only["metadata"]["name"])
    pipelinerun_must_succeed(run, "limit-range-c")
