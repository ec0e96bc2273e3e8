"""emptydir_scratch: tasks that share only emptyDir, ConfigMap, Secret and projected workspaces are plain pods.

The fault it exists to catch: grouping tasks by every workspace they share,
whatever the PipelineRun binds it to. An `emptyDir` (each pod's own scratch
space), a ConfigMap, a Secret or a projected volume is made on whichever node
the pod runs, so nothing ties `build` to `fetch`'s node (docs/contract.md
section 4). A scheduler that groups them pins `build` to a node that has no
room for it: fetch's node is filled (a filler pinned by nodeName) while fetch
runs, and `build` must go to the empty other node. Grouped, the record lists a
group the suite does not expect (monitor `groups-differ`), the reserved peak
over-commits fetch's node beside the filler, and `build` waits for room that
never comes.

CSI workspaces are left out: they need a CSI driver on every kind node
(docs/coverage.md says so); the reference's rule for them is unit-tested.
"""

from __future__ import annotations

from harness.suite.checks import (
    pipelinerun_must_succeed,
    pod_must_be_finished,
    pod_must_be_running,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="emptydir_scratch",
    description="Two sequential tasks share only an emptyDir, a ConfigMap, a Secret and a projected workspace: no group, so the second task goes to the empty node when the first one's node is full",
    features=(Feature.COLOCATION,),
    fixtures=("emptydir_scratch", "filler"),
)


# By hand: no workspace of the run is a persistentVolumeClaim or a volumeClaimTemplate, so there is
# no group (section 4) and no reservation. fetch (0.1 CPU) runs on one node; the filler takes 0.8
# of that node beside it. Once fetch is done that node has 0.2 free, build asks 0.3: build must
# bind on the other, empty node.


def test_emptydir_scratch(run: ScenarioRun) -> None:
    run.apply("emptydir_scratch")

    fetch = task_pod_must_be_bound(run, "emptydir-scratch", "fetch")
    fetch_node = fetch["spec"]["nodeName"]
    other = next(n for n in run.node_names if n != fetch_node)
    run.apply("filler", name="emptydir-scratch-filler", node=fetch_node, share=0.8)
    pod_must_be_running(run, "emptydir-scratch-filler")
    run.release_pod(fetch["metadata"]["name"])
    assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"

    build = task_pod_must_be_bound(run, "emptydir-scratch", "build")
    assert build["spec"]["nodeName"] == other, (
        f"build ran on {build['spec']['nodeName']} beside the filler, not on the empty {other}: "
        "tasks sharing only emptyDir, ConfigMap, Secret or projected workspaces form no group (docs/contract.md section 4)"
    )
    pipelinerun_must_succeed(run, "emptydir-scratch")
    if run.checks_records:
        record = run.record("emptydir-scratch")
        assert record is None or not record.groups, (
            f"record {run.namespace}/emptydir-scratch has groups {[sorted(g.tasks) for g in record.groups]}: "
            "a run with no persistentVolumeClaim or volumeClaimTemplate workspace has none (docs/contract.md section 4)"
        )
