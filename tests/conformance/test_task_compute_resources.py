"""task_compute_resources: task-level computeResources replace the steps' own and are divided across them.

The fault it exists to catch: predicting from the steps' own requests when the
PipelineRun gives the task task-level computeResources (taskRunSpecs[]), or
counting the task-level request once per step. Tekton
(pkg/internal/computeresources/tasklevel) gives each step the task-level
request divided by the number of steps, in place of its own.

What Tekton v1.15 builds (big's pod, checked by the scenario itself): containers
`step-work`, `step-work-2` and `step-work-3` with a third of the task-level
request each, rounded down to the millicore and the byte
(`computeAverageRequests` in pkg/internal/computeresources/tasklevel), their own
240m gone; init containers `prepare` and `place-scripts` with no resources; no
overhead, no pod-level resources. Rounding each share up instead predicts a
peak a few bytes too large, which the record shows. Task-level computeResources are a beta field, enabled on the local
cluster (`enable-api-fields: beta`).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import cpu_millis, memory_bytes
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="task_compute_resources",
    description="A's later task has two 0.05 CPU steps but task-level computeResources of 0.625 CPU and 1/4 memory: its pod asks 0.625, so B (0.5) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("task_compute_resources-a", "task_compute_resources-filler", "task_compute_resources-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   small: one step of 0.02 CPU (96m), no memory.
#   big:   steps work, work-2 and work-3 ask 0.05 CPU (240m) each, but taskRunSpecs gives big
#          task-level requests of 0.625 CPU (3000m) and 0.25 memory (2147483648 bytes on an 8 GiB node).
#          Tekton gives each of the 3 steps 3000m // 3 = 1000m and 2147483648 // 3 = 715827882 bytes,
#          replacing their own 240m: the pod asks 3000m and 2147483646 bytes (rounding up: 2147483649).
#   small then big is a chain, so the peak is big's: 3000m, 2147483646 bytes.
# Placement: A's node has 4800 - 96 - (3000 - 96) = 1800m left; B asks 2400m, so it goes to the
#   other node (2640m left beside the filler). From the steps' own requests A would reserve 480m
#   and leave 4320m on its node, the emptier one.


def test_task_compute_resources(run: ScenarioRun) -> None:
    run.apply("task_compute_resources-a")
    small, a_node, record = task_must_hold_its_group(run, "task-compute-resources-a", "small")
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=3 * (share_of(cpu, 0.625) // 3), peak_memory_bytes=3 * (share_of(memory, 0.25) // 3),
    )

    b_pod = b_must_land_beside_the_filler(run, "task_compute_resources", a_node=a_node, why="inside the room A's task-level request needs there")
    group_must_be(run, "task-compute-resources-a", "small", state=State.RESERVED, node=a_node)
    # big's pod as bound: a scheduler with Resize lowers a finished task's requests in place.
    big = group_must_end_on_its_node(run, "task-compute-resources-a", held=small, next_task="big", node=a_node, others=(b_pod,))
    shares = {c["name"]: (cpu_millis(c["resources"]["requests"]["cpu"]), memory_bytes(c["resources"]["requests"]["memory"])) for c in big["spec"]["containers"]}
    assert shares == dict.fromkeys(("step-work", "step-work-2", "step-work-3"), (share_of(cpu, 0.625) // 3, share_of(memory, 0.25) // 3)), (
        f"Tekton built {big['metadata']['name']} with step requests {shares}: this scenario's premise (each share rounded down) failed"
    )
