"""native_sidecars: with Tekton's enable-kubernetes-sidecar on, a task's sidecar is a restartable init container, and still part of the peak.

Operators turn on Kubernetes' native sidecars for Tekton with feature-flags'
`enable-kubernetes-sidecar: "true"` (docs/contract.md section 6.1, step 8).
Tekton then makes each sidecar an init container `sidecar-<name>` with
`restartPolicy: Always`, after its own init containers. kube-scheduler's
PodRequests adds a restartable init container to the containers' sum, so the
pod asks for its step and its sidecar together, as with the flag off.

What Tekton v1.15 built on the local cluster with the flag on
(tests/integration/test_tekton_pod_config.py reads such a pod): init containers
`prepare`, `place-scripts` (no requests) and `sidecar-helper` (restartPolicy
Always), container `step-work`.

The fault it exists to catch: a prediction of Tekton's pod that makes the
sidecars init containers but not restartable ones (mutant
`tekton_sidecars_as_plain_init`): the largest init container then counts, not
the sum, and A's group reserves 0.4 of a node where it needs 0.7. The same
under-count comes from taking any restartable init container for one that ends
(mutant `native_sidecars_as_init`, which foreign_pod_shapes catches on a bound
pod). The flag is the whole cluster's: the scenario runs in the Tekton settings
window (harness.suite.workers.Slot), beside no run with a sidecar.
"""

from __future__ import annotations

from typing import Any

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
from harness.suite.tekton_defaults import FEATURE_FLAGS, tekton_config_set

SCENARIO = Scenario(
    name="native_sidecars",
    description=(
        "Tekton's enable-kubernetes-sidecar is on: A's later task has a 0.3 CPU step and a 0.4 CPU sidecar, made a restartable "
        "init container: its group reserves 0.7, so B (0.5) fits beside A's running pod but not beside the peak and goes to the other node"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("native_sidecars-a", "native_sidecars-filler", "native_sidecars-b"),
    volumes=("a-source", "b-source"),
    tekton_settings=("feature-flags/enable-kubernetes-sidecar",),
)

NAME = "native-sidecars-a"


def _native(pod: dict[str, Any]) -> bool:
    """A probe pod built with the flag on: its sidecar is a restartable init container."""
    return any(c["name"] == "sidecar-helper" and c.get("restartPolicy") == "Always" for c in pod["spec"].get("initContainers") or [])


# Peak, by hand (fractions of one node, as cpu()/memory() render them, each rounded down on its own):
#   small: step 0.02 CPU, no memory.
#   big:   init containers prepare, place-scripts (nothing) and sidecar-helper (Always: 0.4 CPU + 0.15 memory);
#          container step-work 0.3 CPU + 0.1 memory. The sidecar adds to the containers and no init container
#          starts after it: CPU 1440m + 1920m = 3360m, memory 858993459 + 1288490188 = 2147483647.
#   small then big is a chain: the peak is big's.
# Placement: A's node has 4800 - 96 (small) - (3360 - 96) = 1440m left; B asks 2400m, so it goes to
#   the other node (4800 - 2160 filler = 2640m left). Counting the sidecar as an init container that ends
#   gives max(1440m, 1920m) = 1920m, leaving 2880m on A's node, the emptier one.
def test_native_sidecars(run: ScenarioRun) -> None:
    with tekton_config_set(run, {"enable-kubernetes-sidecar": "true"}, config_map=FEATURE_FLAGS, probe_sidecar_cpu="10m", shows=_native):
        run.apply("native_sidecars-a")
        small, a_node, record = task_must_hold_its_group(run, NAME, "small")
        cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
        group_must_have(
            run, record, "small", tasks={"small", "big"}, workspaces={"source"},
            peak_cpu_millis=share_of(cpu, 0.3) + share_of(cpu, 0.4), peak_memory_bytes=share_of(memory, 0.1) + share_of(memory, 0.15),
        )
        b_pod = b_must_land_beside_the_filler(run, "native_sidecars", a_node=a_node, why="inside the room A's step and native sidecar need there")
        group_must_be(run, NAME, "small", state=State.RESERVED, node=a_node)
        group_must_end_on_its_node(run, NAME, held=small, next_task="big", node=a_node, others=(b_pod,))
        big = run.task_pods(NAME, "big")[0]
        assert _native(big), f"Tekton built {big['metadata']['name']} without a restartable sidecar-helper: this scenario's premise failed"
        group_must_be(run, NAME, "big", state=State.RELEASED, node=a_node)
