"""quantity_spellings: fractional cores and decimal megabytes, read at margins where the spelling decides.

The faults it exists to catch: a hand-written quantity parser that reads a
decimal suffix as a binary one (`4294M` as 4294 Mi, 4.9% more), or drops the
fraction of a core (`2.45` as 2 cores). The group's later task is a Task
object, which Tekton keeps as written, so a scheduler that sizes it from the
Task reads these spellings (status.pipelineSpec and the pods carry canonical
forms instead). On a one-node pool:
* B (a plain pod, whole mebibytes) fits beside the group's peak with less than
  1 MiB to spare: read as mebibytes, the peak leaves no room and B waits;
* a squeeze pod asks 100m more than is left: with the cores truncated the
  node seems to have 450m more, and the squeeze over-commits it (monitor
  `node-overcommitted`).
"""

from __future__ import annotations

from decimal import Decimal

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="quantity_spellings",
    description="A group's Task asks fractional cores and decimal megabytes: B, in mebibytes, fits beside its peak with under 1 MiB to spare; a pod 100m over what is left waits",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("quantity_spellings-a", "quantity_spellings-b"),
    pool=PoolSpec(count=1),
    volumes=("qty-source",),
    # The spellings on the local cluster's 4800m / 8Gi node; the test computes them anew for the pool's node.
    values={"package_cpu": "2.45", "package_memory": "4294M", "name": "quantity-spellings-b", "cpu_request": "250m", "memory_request": "4096Mi"},
)

MI = 2**20
MEGA = 10**6


# By hand, for a node of C millicores and M bytes (4800m and 8Gi on the local cluster):
#   package asks P = (C // 2) rounded down to 100m, + 50m, spelled in cores: 2450m is "2.45";
#   and D = M // 2 rounded down to whole megabytes, spelled "<n>M": 4294000000 bytes is "4294M".
#   prepare (250m, 64Mi) then package is a chain: the peak is P CPU and D memory.
#   B asks 250m and the most whole mebibytes beside the peak: (M - D) // 1Mi, 4096Mi on local;
#   read as 4294Mi (4502585344 bytes) the peak leaves 3898Mi, and B would wait.
#   Left beside the peak and B: C - P - 250m (2100m); the squeeze asks 100m more (2200m). With "2.45"
#   read as 2 cores the node would seem to have 2550m, and the squeeze would bind.


def test_quantity_spellings(run: ScenarioRun) -> None:
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    package_millis = cpu // 2 // 100 * 100 + 50
    package_bytes = memory // 2 // MEGA * MEGA
    run.apply(
        "quantity_spellings-a",
        package_cpu=str(Decimal(package_millis) / 1000),
        package_memory=f"{package_bytes // MEGA}M",
    )
    prepare, node, record = task_must_hold_its_group(run, "quantity-spellings-a", "prepare")
    group_must_have(
        run, record, "prepare", tasks={"prepare", "package"}, workspaces={"source"},
        peak_cpu_millis=package_millis, peak_memory_bytes=package_bytes,
    )

    b_mebibytes = (memory - package_bytes) // MI
    run.apply("quantity_spellings-b", name="quantity-spellings-b", cpu_request="250m", memory_request=f"{b_mebibytes}Mi")
    b_pod = task_pod_must_be_bound(run, "quantity-spellings-b", "only")
    assert b_pod["spec"]["nodeName"] == node

    left = cpu - package_millis - 250
    run.apply("quantity_spellings-b", name="quantity-spellings-squeeze", cpu_request=f"{left + 100}m", memory_request="", run_for="1s")
    task_pod_must_stay_pending(run, "quantity-spellings-squeeze", "only")
    group_must_be(run, "quantity-spellings-a", "prepare", state=State.RESERVED, node=node)

    run.release_pod(prepare["metadata"]["name"])
    package = task_pod_must_be_bound(run, "quantity-spellings-a", "package")
    assert package["spec"]["nodeName"] == node
    pipelinerun_must_succeed(run, "quantity-spellings-a")
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, "quantity-spellings-b")
    pipelinerun_must_succeed(run, "quantity-spellings-squeeze")
