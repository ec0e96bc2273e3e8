"""retry_returns_home: a retry goes back to its group's node even when every other node is the better choice.

Fault it exists to catch: the scheduler forgets the group's node once the
group's pods have finished (tests/mutants/faults.py:
forgets_finished_group_node). In the retry gap the group's only pod has
Failed; fillers then make every other node the better choice under
least-allocated scoring, most-allocated scoring and name order, so only the
remembered claim sends the retry home. (retry_hold passes such a scheduler
whenever the group's node also happens to be the emptiest or first by name.)
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    claim_must_be_forced_onto_the_last_node,
    every_other_node_must_look_better,
    group_must_be,
    group_must_have,
    group_must_stay,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="retry_returns_home",
    description=(
        "blockers force the group's claim onto the last node; after its first attempt fails, fillers make the other nodes "
        "the better choice under every scoring and name order: the retry must still land on the claim's node"
    ),
    features=(Feature.RETRY_HOLD,),
    fixtures=("filler", "retry_returns_home"),
    pool=PoolSpec(count=3),
    volumes=("source",),
)

# Nodes n0 < n1 < n2 (by name), 4800m / 8Gi; no pod requests memory (each counts 200Mi in scoring).
# Opening: 4000m blockers on n0 and n1 leave 800m there, less than the 1200m peak: the first
# attempt can only open the claim on n2. Then the blockers go, n1 gets a 3000m filler, n2 a
# 1200m one, and the first attempt fails. The retry (1200m), placed as if it had no group,
# scores least-allocated | most-allocated (the integer average of CPU and memory):
#   n0: cpu 1200/4800 -> 75 | 25, memory 200Mi/8192Mi -> 97 | 2:                            86 | 13
#   n1: cpu 4200/4800 -> 12 | 87, memory 400Mi -> 95 | 4:                                     53 | 45
#   n2: cpu 1200 filler + 1200 the group's residual + 1200 = 3600 -> 25 | 75, memory 400Mi:  60 | 39
#       (without the residual: 2400 -> 50 | 50:                                               72 | 27)
# n2 wins nothing; under the claim the retry fits there: 1200 + 1200 = 2400m of 4800m.
# Peak: one task, 1200m (a retry adds no concurrency); memory 0.
PEAK_CPU = 1200


def test_retry_returns_home(run: ScenarioRun) -> None:
    n2 = claim_must_be_forced_onto_the_last_node(run)

    run.apply("retry_returns_home")
    first, node, record = task_must_hold_its_group(run, "retry-returns-home", "flaky")
    assert node == n2, f"the first attempt opened its claim on {node}, where only 800m is free for the 1200m peak: only {n2} fits"
    group_must_have(
        run, record, "flaky", tasks={"flaky"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )

    every_other_node_must_look_better(run)

    run.release_pod(first["metadata"]["name"])
    assert pod_must_be_finished(run, first["metadata"]["name"]) == "Failed"
    retry = task_pod_must_be_bound(run, "retry-returns-home", "flaky", attempt=1)
    assert retry["spec"]["nodeName"] == n2, (
        f"the retry landed on {retry['spec']['nodeName']}, not on its group's node {n2}: "
        "the claim outlives the group's failed pod, whatever scoring says"
    )
    group_must_stay(run, "retry-returns-home", "flaky", node=n2, holders=(first, retry))
    run.release_pod(retry["metadata"]["name"])
    pipelinerun_must_succeed(run, "retry-returns-home")
    group_must_be(run, "retry-returns-home", "flaky", state=State.RELEASED, node=n2)
