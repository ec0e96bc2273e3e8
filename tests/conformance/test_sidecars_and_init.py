"""sidecars_and_init: a task's sidecar is part of its pod's request, so part of the group's peak.

The fault it exists to catch: predicting a task's request from its steps
alone. Tekton makes each sidecar a container of the task's pod, and
kube-scheduler's PodRequests adds it to the steps.

What Tekton v1.15 built on the local cluster (big's pod, read once while
writing this scenario): the feature flag `enable-kubernetes-sidecar` is
"false" there, so the sidecar is a regular container: containers
`step-work` (1440m, 858993459) and `sidecar-helper` (1920m, 1288490188);
init containers `prepare` and `place-scripts` with no resources, no
restartPolicy; no overhead, no pod-level resources. The largest init
container therefore adds nothing.
A Task has no init containers of its own to declare, and with native sidecars
off Tekton's pod has no restartable init container either: sidecars are the
only init/sidecar input this cluster can exercise.
"""

from __future__ import annotations

from harness.contract.record import State
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
    name="sidecars_and_init",
    description="A's later task has a 0.3 CPU step and a 0.4 CPU sidecar: its group reserves 0.7, so B (0.5) fits beside A's running pod but not beside the peak and goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("sidecars_and_init-a", "sidecars_and_init-filler", "sidecars_and_init-b"),
    volumes=("a-source", "b-source"),
)


# Peak, by hand (fractions of one node, as cpu()/memory() render them, each rounded down on its own):
#   small: step 0.02 CPU, no memory.
#   big:   step 0.3 CPU + 0.1 memory, sidecar 0.4 CPU + 0.15 memory; containers add up:
#          CPU 1440m + 1920m = 3360m, memory int(8Gi*0.1) + int(8Gi*0.15) = 858993459 + 1288490188 = 2147483647.
#   Init containers (prepare, place-scripts) request nothing. small then big is a chain: the peak is big's.
# Placement: A's node has 4800 - 96 (small) - (3360 - 96) = 1440m left; B asks 2400m, so it goes to
#   the other node (4800 - 2160 filler = 2640m left). Without the sidecar A would reserve 1440m,
#   leaving 3360m on A's node, the emptier one.

def test_sidecars_and_init(run: ScenarioRun) -> None:
    run.apply("sidecars_and_init-a")
    small, a_node, record = task_must_hold_its_group(run, "sidecars-and-init-a", "small")
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(cpu, 0.3) + share_of(cpu, 0.4), peak_memory_bytes=share_of(memory, 0.1) + share_of(memory, 0.15),
    )

    b_pod = b_must_land_beside_the_filler(run, "sidecars_and_init", a_node=a_node, why="inside the room A's step and sidecar need there")
    group_must_be(run, "sidecars-and-init-a", "small", state=State.RESERVED, node=a_node)
    group_must_end_on_its_node(run, "sidecars-and-init-a", held=small, next_task="big", node=a_node, others=(b_pod,))
