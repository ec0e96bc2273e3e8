"""plain_pods_beside: plain pods share the pool with a reservation; pods of every scheduler count, reserved room is kept.

Faults it exists to catch: a scheduler that counts only its own pods against a
node, so a pod bound by nodeName (or by another scheduler) is invisible
(tests/mutants/faults.py: ignores_foreign_pods); and one that lets plain pods
into a group's reserved peak. Four plain pods arrive where only three fit: the
room either fault sees holds all four, so it must over-commit a node, whatever
it scores, and the contract monitor sees it.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    plain_pods_must_bind,
    pod_must_be_bound,
    pod_must_be_running,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="plain_pods_beside",
    description=(
        "a's group reserves 3600m on X, a 2400m pod bound by nodeName fills half of Y: of four 1200m plain pods "
        "one lands on X and two on Y; the fourth waits until a's group is done, then lands on X"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("plain_pods_beside", "filler", "plain"),
    pool=PoolSpec(count=2),
    volumes=("source",),
)

# Nodes 4800m. a's group: small (600m) then big (3600m): peak max(600, 3600) = 3600m; memory 0.
# While small runs on X, X holds small + the residual: 600 + (3600 - 600) = 3600m, so 4800 - 3600 = 1200m free.
# Y holds the 2400m nodeName pod: 4800 - 2400 = 2400m free.
# Four plain pods of 1200m: X takes 1200 / 1200 = 1, Y takes 2400 / 1200 = 2; the fourth fits nowhere.
#   Blind to the nodeName pod, Y looks 4800m free: room for 1 + 4 = 5 >= 4 pods, and >= 3 of them on Y: 3 x 1200 + 2400 = 6000m > 4800m.
#   Blind to the reservation, X looks 4800 - 600 = 4200m free: room for 3 + 2 = 5, and >= 2 on X: 600 + 2 x 1200 + 3000 = 6000m > 4800m.
# Once a's group is released (big done), X holds one plain pod: 4800 - 1200 = 3600m free, and the fourth lands there.
PEAK_CPU = 3600
PLAIN = tuple(f"plain-pods-beside-plain-{i}" for i in range(4))


def test_plain_pods_beside(run: ScenarioRun) -> None:
    run.apply("plain_pods_beside")
    small, x, record = task_must_hold_its_group(run, "plain-pods-beside", "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    y = next(n for n in run.node_names if n != x)
    run.apply("filler", name="plain-pods-beside-foreign", node=y, share=2400 / 4800)
    pod_must_be_running(run, "plain-pods-beside-foreign")

    for name in PLAIN:
        run.apply("plain", name=name, share=1200 / 4800)
    bound = plain_pods_must_bind(run, PLAIN, count=3)
    on_nodes = sorted(p["spec"]["nodeName"] for p in bound)
    assert on_nodes == sorted([x, y, y]), f"three plain pods should take the 1200m free on {x} and the 2400m free on {y}, one and two: they are on {on_nodes}"
    unbound = [name for name in PLAIN if name not in {p["metadata"]["name"] for p in bound}]
    assert len(unbound) == 1, f"only three of the plain pods fit, yet {len(PLAIN) - len(unbound)} are bound: {on_nodes}"
    waiting = unbound[0]
    group_must_be(run, "plain-pods-beside", "small", state=State.RESERVED, node=x)

    group_must_end_on_its_node(run, "plain-pods-beside", held=small, next_task="big", node=x)
    group_must_be(run, "plain-pods-beside", "big", state=State.RELEASED, node=x)
    fourth = pod_must_be_bound(run, waiting)
    assert fourth["spec"]["nodeName"] == x, f"{waiting} landed on {fourth['spec']['nodeName']}: only {x} has room once a's group is released"
