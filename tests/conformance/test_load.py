"""load: fifty PipelineRuns of four shapes at once, 200 task pods, into a pool where reservations decide who waits.

Faults it exists to catch: whatever breaks only under load. A scheduler whose
cache lags its own binds, whose claims race each other, or whose releases get
lost when many come at once over-commits a node, splits a group, leaks a
reservation or leaves a run waiting forever. The contract monitor watches every
state of the burst (node-overcommitted, group-split, every state-machine rule);
at the end every run has succeeded and every group is Released.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import group_must_be, group_must_have, pipelinerun_must_succeed
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

RUNS = tuple(f"load-l{i:02d}" for i in range(50))

SCENARIO = Scenario(
    name="load",
    description=(
        "fifty PipelineRuns of four shapes (200 task pods, group peaks 1200-1800m) created at once on six 4800m nodes, "
        "which hold about twelve reservations at a time: no node over-committed, no group split, all fifty finish, none left Reserved"
    ),
    features=(Feature.LOAD,),
    fixtures=("load",),
    pool=PoolSpec(count=6),
    volumes=tuple(f"{name}-source" for name in RUNS),
    # Two hundred pods in a minute load Tekton and the API server for everyone: it runs alone.
    exclusive=True,
)

# Nodes 4800m. By shape (i % 4), from the fixture, the group's tasks and its peak (CPU; memory 0):
#   chain s1 300 -> s2 900 -> s3 1800 -> s4 300:   max(300, 900, 1800, 300) = 1800m
#   fan   p 200 -> (x 900 || y 900) -> d 200:     max(200, 900 + 900, 200) = 1800m
#   side  a 600 -> b 1200 -> d 600 (c 400m has no workspace: not in the group): max(600, 1200, 600) = 1200m
#   wide  (w1 || w2 || w3, 600 each) -> w4 1200:  max(600 + 600 + 600, 1200) = 1800m
# Two 1800m claims fit on a node (3600 <= 4800), three do not (5400 > 4800): six nodes hold about
# twelve of the fifty groups at once, so most runs wait for another's release.
SHAPES = (
    ("s1", {"s1", "s2", "s3", "s4"}, 1800),
    ("p", {"p", "x", "y", "d"}, 1800),
    ("a", {"a", "b", "d"}, 1200),
    ("w1", {"w1", "w2", "w3", "w4"}, 1800),
)


def test_load(run: ScenarioRun) -> None:
    run.apply("load")
    for name in RUNS:
        pipelinerun_must_succeed(run, name)
    for i, name in enumerate(RUNS):
        first, tasks, peak = SHAPES[i % 4]
        nodes = {p["spec"].get("nodeName") for task in tasks for p in run.task_pods(name, task)}
        assert len(nodes) == 1, f"{name}'s group ran on {sorted(str(n) for n in nodes)}: a group's pods share one node"
        record = group_must_be(run, name, first, state=State.RELEASED, node=nodes.pop())
        group_must_have(
            run, record, first, tasks=tasks, workspaces={"source"},
            peak_cpu_millis=run.node_cpu_millis() * peak // 4800, peak_memory_bytes=0,
        )
