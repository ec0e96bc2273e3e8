"""colocation: two sequential tasks sharing a workspace land on one node, reserved at the larger task's size.

Before `build` is placed, a filler of half a node's CPU goes on fetch's node:
with fetch finished, a scheduler that does not remember the group sees two
nodes, one half full and one empty, and least-allocated scoring sends build to
the empty one every time (without the filler it split the group or not by a
random tie-break, so the stock scheduler's verdict changed from run to run).

build binds no workspace: its step's env names `$(workspaces.source.path)`,
so Tekton binds `source` to it by name and its pod mounts the volume
(docs/contract.md section 4, implicit bindings). A scheduler that finds such
references in scripts alone (held-out fault
`held_implicit_workspaces_in_scripts_only`) leaves build out of the group
(the monitor's `groups-differ`).
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    group_node_must_look_worse,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="colocation",
    description="Two sequential tasks that share a workspace land on the same node, though a filler makes the first task's node the worse-looking one when the second is placed; the group's peak is the larger task; the group is Released after the run",
    features=(Feature.COLOCATION,),
    fixtures=("colocation", "filler"),
    volumes=("source",),
)


# Memory peak, by hand: fetch asks for 0.25 of a node's memory, build for 0.1; they never overlap.
# Room on fetch's node for build: filler 0.5 + the group's CPU peak 0.3 = 0.8 of a node.

def test_colocation(run: ScenarioRun) -> None:
    run.apply("colocation")

    fetch = task_pod_must_be_bound(run, "colocation", "fetch")
    group_node_must_look_worse(run, fetch["spec"]["nodeName"])
    run.release_pod(fetch["metadata"]["name"])
    assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
    build = task_pod_must_be_bound(run, "colocation", "build")
    assert build["spec"]["nodeName"] == fetch["spec"]["nodeName"], (
        f"build ran on {build['spec']['nodeName']}, fetch on {fetch['spec']['nodeName']}: the group was split"
    )

    pipelinerun_must_succeed(run, "colocation")
    record = group_must_be(run, "colocation", "build", state=State.RELEASED, node=fetch["spec"]["nodeName"])
    group_must_have(run, record, "build", tasks={"fetch", "build"}, workspaces={"source"}, peak_cpu_millis=share_of(run.node_cpu_millis(), 0.3), peak_memory_bytes=share_of(run.node_memory_bytes(), 0.25))
