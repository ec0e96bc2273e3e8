"""later_task_pinned_volume: a group's claim opens where the volumes of its later tasks can go.

`fetch`, the group's first pod, mounts only a template claim of the default class,
which could be provisioned anywhere. `build`, whose pod does not exist yet, also
mounts `cache`, Bound to a volume pinned to n2. The group must run on one node, so
its claim can open only on n2, and fetch's claim is provisioned there: a scheduler
that looks only at the pod in hand opens the claim where fetch fits best, and build
can then never run (its group is on one node, its volume on another).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    fillers_must_run,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario
from harness.suite.volume_checks import claim_must_be_provisioned_for, claims_must_be_bound_on

SCENARIO = Scenario(
    name="later_task_pinned_volume",
    description=(
        "a group's first task mounts only a template claim of the default class; a later task of the group also mounts a claim "
        "pinned to n2, the node no scoring prefers: the group's claim, and the template claim's volume, must go to n2"
    ),
    features=(Feature.VOLUMES, Feature.COLOCATION),
    fixtures=("later_task_pinned_volume", "filler"),
    pool=PoolSpec(count=3),
    pinned_volumes={"cache": 2},
    default_storage_class=True,
)

NAME = "later-task-pinned-volume"

# Nodes n0 < n1 < n2 (by name), 4800m each; the cache volume admits n2 only.
# Fillers: n1 2400m, n2 1200m, n0 none. fetch (480m) opens the group's claim with its peak,
# build's 1920m: a scheduler that looks only at fetch's volumes picks n0 (least-allocated,
# name order) or n1 (most-allocated: 2400 + 1920 = 4320m fits), never n2.
# On n2: 1200 + 1920 = 3120m of 4800m.
PEAK_CPU = 1920


def test_later_task_pinned_volume(run: ScenarioRun) -> None:
    n0, n1, n2 = run.node_names
    fillers_must_run(run, {n1: 2400 / 4800, n2: 1200 / 4800})

    run.apply("later_task_pinned_volume")
    fetch, node, record = task_must_hold_its_group(run, NAME, "fetch")
    assert node == n2, (
        f"fetch opened its group's claim on {node}; the group's later task build mounts a volume that admits only {n2}, "
        "so the group can run on no other node"
    )
    claim_must_be_provisioned_for(run, fetch)
    group_must_have(run, record, "fetch", tasks={"fetch", "build"}, workspaces={"cache", "source"},
                    peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0)

    run.release_pod(fetch["metadata"]["name"])
    assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
    build = task_pod_must_be_bound(run, NAME, "build")
    assert build["spec"]["nodeName"] == n2, f"build ran on {build['spec']['nodeName']}, not on {n2}, where both its volumes are"
    claims_must_be_bound_on(run, build)
    pipelinerun_must_succeed(run, NAME)
    group_must_be(run, NAME, "fetch", state=State.RELEASED, node=n2)
