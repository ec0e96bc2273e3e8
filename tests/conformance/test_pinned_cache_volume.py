"""pinned_cache_volume: every run that uses a cache volume pinned to one node goes to that node, or waits for it.

The shared cache is a claim Bound to a node-local volume (its `nodeAffinity` admits
n1 only), reused run after run, as teams keep a dependency cache. A kubelet mounts
it on n1 and nowhere else ("volume node affinity conflict"), so each run's group
must open its claim on n1, though fillers make n1 the choice of no scoring; and
when n1 has no room for a second run's peak, that run waits for n1, never going
to an emptier node where its pod could never start.
"""

from __future__ import annotations

from typing import Any

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    fillers_must_run,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario
from harness.suite.volume_checks import claims_must_be_bound_on

SCENARIO = Scenario(
    name="pinned_cache_volume",
    description=(
        "two runs share a cache claim whose volume admits only n1, the node no scoring prefers: the first run's group goes to n1; "
        "the second, whose peak does not fit on n1 beside the first's, waits for n1 though two nodes have room, then runs there"
    ),
    features=(Feature.VOLUMES, Feature.COLOCATION),
    fixtures=("pinned_cache_volume", "filler"),
    pool=PoolSpec(count=3),
    pinned_volumes={"cache": 1},
)

R0 = "pinned-cache-volume-r0"
R1 = "pinned-cache-volume-r1"

# Nodes n0 < n1 < n2 (by name), 4800m each; the cache volume admits n1 only.
# Fillers: n1 1200m, n2 2400m, n0 none. For a group's first pod (need: the peak, 2400m), a
# scheduler blind to the volume picks n0 (least-allocated, name order) or n2 (most-allocated:
# 2400 + 2400 = 4800 fits), never n1.
# Each run: restore 480m, then build 2400m: peak 2400m.
# r0 on n1: 1200 + 2400 = 3600m of 4800m. r1 then needs 2400m more on n1: 6000m > 4800m, so r1
# waits, while n0 (0m) and n2 (2400m + 2400m = 4800m) would hold it. Once r0 is done, n1 holds
# 1200 + 2400 = 3600m again, with r1.
PEAK_CPU = 2400

Obj = dict[str, Any]


def test_pinned_cache_volume(run: ScenarioRun) -> None:
    n0, n1, n2 = run.node_names
    fillers_must_run(run, {n1: 1200 / 4800, n2: 2400 / 4800})

    run.apply("pinned_cache_volume", name=R0)
    restore, node, record = task_must_hold_its_group(run, R0, "restore")
    assert node == n1, f"r0's restore landed on {node}; its cache volume admits only {n1}, where the kubelet can mount it"
    claims_must_be_bound_on(run, restore)
    group_must_have(run, record, "restore", tasks={"restore", "build"}, workspaces={"cache"},
                    peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0)

    run.apply("pinned_cache_volume", name=R1)
    task_pod_must_stay_pending(run, R1, "restore")
    run_must_end_on(run, R0, restore, n1)

    waiting, node, _ = task_must_hold_its_group(run, R1, "restore")
    assert node == n1, f"r1's restore landed on {node} once r0 was done; its cache volume admits only {n1}"
    claims_must_be_bound_on(run, waiting)
    run_must_end_on(run, R1, waiting, n1)


def run_must_end_on(run: ScenarioRun, name: str, restore: Obj, node: str) -> None:
    """run_must_end_on() lets the run's held restore finish; its build must run on `node`, and the group end Released there."""
    run.release_pod(restore["metadata"]["name"])
    assert pod_must_be_finished(run, restore["metadata"]["name"]) == "Succeeded"
    build = task_pod_must_be_bound(run, name, "build")
    assert build["spec"]["nodeName"] == node, f"{name}'s build ran on {build['spec']['nodeName']}, not on {node}, its group's and its volume's node"
    claims_must_be_bound_on(run, build)
    run.release_pod(build["metadata"]["name"])
    pipelinerun_must_succeed(run, name)
    group_must_be(run, name, "restore", state=State.RELEASED, node=node)
