"""finished_pods_free_room: Succeeded and Failed pods hold no room; a node full of finished pods still admits.

Fault it exists to catch: a scheduler that keeps counting a pod's requests
after it has finished (tests/mutants/faults.py: counts_finished_pods), so a
node whose pods are all done looks full. The only node with room is the one
full of finished pods (the other is truly full), so such a scheduler leaves the
pods Pending, whatever it scores.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pod_must_be_running,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.checks import pod_must_be_bound, pods_must_be_finished
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

SCENARIO = Scenario(
    name="finished_pods_free_room",
    description=(
        "n0 holds 4800m of finished pods (two Succeeded, one Failed), n1 a running 4000m filler: "
        "a 1200m plain pod and then a group's 2400m claim both land on n0"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "plain", "finished_pods_free_room"),
    pool=PoolSpec(count=2),
    volumes=("source",),
)

# Nodes 4800m. n0: three 1600m fillers that end by themselves, two Succeeded (exit 0) and one
# Failed (exit 1): 3 x 1600 = 4800m, all of n0 if finished pods counted. n1: a held 4000m
# filler, so n1 has 4800 - 4000 = 800m free, too little for either pod below.
#   the plain pod (1200m): n0 has 4800 - 0 = 4800m free (finished pods count nothing): it fits only there;
#   g's claim (peak 2400m, one task): n0 has 4800 - 1200 (the plain pod) = 3600m free: only there.
# Counting the finished pods, n0 would have 4800 - 4800 = 0m free and nothing could be placed.
PEAK_CPU = 2400


def test_finished_pods_free_room(run: ScenarioRun) -> None:
    n0, n1 = run.node_names
    finished = (("finished-pods-free-room-done-0", "0"), ("finished-pods-free-room-done-1", "0"), ("finished-pods-free-room-failed-2", "1"))
    for name, exit_code in finished:
        run.apply("filler", name=name, node=n0, share=1600 / 4800, ends=exit_code)
    run.apply("filler", name="finished-pods-free-room-full", node=n1, share=4000 / 4800)
    pods_must_be_finished(run, tuple(name for name, _ in finished))
    phases = {name: (run.pod(name).get("status") or {}).get("phase") for name, _ in finished}
    assert list(phases.values()) == ["Succeeded", "Succeeded", "Failed"], f"the fillers on {n0} ended {phases}"
    pod_must_be_running(run, "finished-pods-free-room-full")

    run.apply("plain", name="finished-pods-free-room-plain", share=1200 / 4800)
    plain = pod_must_be_bound(run, "finished-pods-free-room-plain")
    assert plain["spec"]["nodeName"] == n0, f"the plain pod landed on {plain['spec']['nodeName']}, where only 800m is free: only {n0} fits"

    run.apply("finished_pods_free_room")
    _, node, record = task_must_hold_its_group(run, "finished-pods-free-room", "only")
    assert node == n0, f"g's claim went to {node}, where only 800m is free for its 2400m peak: only {n0} fits"
    group_must_have(
        run, record, "only", tasks={"only"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )
    group_must_be(run, "finished-pods-free-room", "only", state=State.RESERVED, node=n0)
