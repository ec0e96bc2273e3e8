"""own_run_two_groups: a run's second group is admitted only into the room its first group does not hold.

docs/contract.md section 7 subtracts, for a claim of group G, the residual of
every other Reserved group H on the node: H of another PipelineRun, or of G's
own. A run with two workspaces has two groups, each reserved for its own peak;
the run's own first group holds its room against the second as against anyone.

Here A's group `source` (small 200/4800, held, then big 3000/4800) is Reserved
on the pool's only node first: `cache`'s task `other` (2400/4800) starts only
after `gate`, a tiny task the suite holds until then. Beside small's 200m and
source's 2800m residual, 1800m are left: `other` must wait, through small and
through big, and bind once `source` is Released. A third group, `later`,
waits behind `gate-2`, held until source and cache are both Released: the
record then has a Pending group and no Reserved one, and must lose its
`rescon.dev/active` label (section 9).

The fault it exists to catch: taking "the other groups" for "the other runs'
groups" (held-out fault `held_own_run_groups_hold_nothing`, which no scenario
caught when it was measured): `other` then binds beside small into the room
big needs, and the node holds 200 + 2800 + 2400 = 5400m of 4800m
(`node-overcommitted`); and labelling a record active while a group is
Pending (held-out fault `held_active_label_while_pending`).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    record_must_lose_its_active_label,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="own_run_two_groups",
    description=(
        "A has two groups on one node: source (small 200m, held, then big 3000m) is Reserved first; cache's other (2400m) "
        "fits beside small but not beside source's peak, so it waits until source is Released"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("own_run_two_groups-a",),
    pool=PoolSpec(count=1),
    volumes=("a-source", "a-cache", "a-later"),
)
A = "own-run-two-groups-a"

# Peaks, by hand (fractions of the node's CPU, as cpu() renders them, rounded down; no memory is asked):
#   source: small 200/4800, then big 3000/4800 (runAfter): 3000/4800.
#   cache:  other 2400/4800 alone: 2400/4800.
# While small runs: 4800 - 200 (small) - 2800 (source's residual) = 1800/4800 left, less than other's 2400.
# While big runs: 4800 - 3000 (big; source's residual 0) = 1800/4800 again. After source is Released: 4800.


def test_own_run_two_groups(run: ScenarioRun) -> None:
    cpu = run.node_cpu_millis()
    run.apply("own_run_two_groups-a")
    small, node, record = task_must_hold_its_group(run, A, "small")
    group_must_have(run, record, "small", tasks={"small", "big"}, workspaces={"source"}, peak_cpu_millis=cpu * 3000 // 4800, peak_memory_bytes=0)
    group_must_have(run, record, "other", tasks={"other"}, workspaces={"cache"}, peak_cpu_millis=cpu * 2400 // 4800, peak_memory_bytes=0)
    group_must_have(run, record, "tail", tasks={"tail"}, workspaces={"later"}, peak_cpu_millis=share_of(cpu, 0.01), peak_memory_bytes=0)

    # Only now may cache's task be created: source's claim is made, and holds its peak.
    gate = task_pod_must_be_bound(run, A, "gate")
    run.release_pod(gate["metadata"]["name"])
    task_pod_must_stay_pending(run, A, "other")
    group_must_be(run, A, "other", state=State.PENDING)

    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, A, "big")
    assert big["spec"]["nodeName"] == node, f"big is on {big['spec']['nodeName']}, but its group is on {node}"
    task_pod_must_stay_pending(run, A, "other")

    run.release_pod(big["metadata"]["name"])
    group_must_be(run, A, "small", state=State.RELEASED, node=node)
    other = task_pod_must_be_bound(run, A, "other")
    assert other["spec"]["nodeName"] == node, f"other is on {other['spec']['nodeName']}, but the pool's only node is {node}"
    group_must_be(run, A, "other", state=State.RESERVED, node=node)
    run.release_pod(other["metadata"]["name"])

    # source and cache Released, later Pending behind gate-2: no group holds anything, the record is not active.
    group_must_be(run, A, "other", state=State.RELEASED, node=node)
    group_must_be(run, A, "tail", state=State.PENDING)
    record_must_lose_its_active_label(run, A)
    gate_2 = task_pod_must_be_bound(run, A, "gate-2")
    run.release_pod(gate_2["metadata"]["name"])
    tail = task_pod_must_be_bound(run, A, "tail")
    run.release_pod(tail["metadata"]["name"])
    pipelinerun_must_succeed(run, A)
