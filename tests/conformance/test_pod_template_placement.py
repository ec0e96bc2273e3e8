"""pod_template_placement: tolerations and node constraints a PipelineRun gives some tasks by podTemplate.

Faults it exists to catch: a scheduler that places a task's pod without its
tolerations (the group's tasks may go to the tainted dedicated node only by
them: tests/mutants/faults.py ignores_tolerations), or without the constraints
its own podTemplate adds (the group's claim must open on the node that fetch's
taskRunSpecs nodeSelector names: ignores_node_selector), or that ignores taints
(pods that tolerate nothing must stay off that node: ignores_taints).

Tekton users give some tasks their own pod template
(`spec.taskRunSpecs[].podTemplate`) beside the run's
(`spec.taskRunTemplate.podTemplate`), and Tekton merges the two field by field
(`MergePodTemplateWithDefault`): a field the task sets replaces the run's. So
fetch gets its own nodeSelector and tolerations and the run's schedulerName;
build its own tolerations and affinity and the run's nodeSelector; report, and
run B, only the run's template.
"""

from __future__ import annotations

from harness.cluster.node_pools import NodeShape
from harness.contract.record import State
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_running,
    pods_must_be_gone,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario

DEDICATED = ("rescon.dev/lane", "dedicated")
TAINT = ("rescon.dev/dedicated", "ci", "NoSchedule")

SCENARIO = Scenario(
    name="pod_template_placement",
    description=(
        "a run's group tolerates and selects a tainted dedicated node through taskRunSpecs[].podTemplate, merged over the "
        "run's taskRunTemplate.podTemplate: its claim opens there and its tasks run there, although the other node is the "
        "emptier and first by name; the run's plain task and another run's group, which tolerate nothing, never go there, "
        "even when it is the only node with room"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("filler", "pod_template_placement-a", "pod_template_placement-b"),
    pool=PoolSpec(count=2, shapes=(NodeShape(1, taints=(TAINT,), labels=(DEDICATED,)),)),
    volumes=("a-source", "b-source"),
)


# Nodes 4800m: n0 `shared` (untainted, unlabelled), n1 `dedicated` (tainted rescon.dev/dedicated=ci:NoSchedule,
# labelled rescon.dev/lane=dedicated). No pod requests memory.
# A's group: fetch (600m) then build (2400m): peak max(600, 2400) = 2400m; memory 0. report (600m) is no group's.
# 1. A 1200m filler on dedicated. fetch's claim (2400m) fits on either node; only its podTemplate's nodeSelector
#    (lane=dedicated) and toleration send it to dedicated. Without the nodeSelector, shared (empty) scores best
#    least-allocated and comes first by name; without the toleration, no node is left for it.
# 2. A 4000m filler on shared leaves 800m there. B's claim (1200m) fits only on dedicated:
#    4800 - 1200 (filler) - 600 (fetch) - (2400 - 600) (A's residual) = 1200m; but B does not tolerate the taint: it waits.
# 3. fetch done: build (2400m) joins the claim on dedicated. A's group is Released once build is done; report
#    (600m) fits on shared (800m free) and must go there, although dedicated has 4800 - 1200 = 3600m free.
# 4. The shared filler goes: B's claim opens on shared.
PEAK_CPU = 2400


def test_pod_template_placement(run: ScenarioRun) -> None:
    shared, dedicated = run.node_names
    run.apply("filler", name=run.named("dedicated-filler"), node=dedicated, share=1200 / 4800)
    pod_must_be_running(run, run.named("dedicated-filler"))

    run.apply("pod_template_placement-a")
    fetch, node, record = task_must_hold_its_group(run, run.named("a"), "fetch")
    assert node == dedicated, (
        f"A's fetch opened its group's claim on {node}: its podTemplate (taskRunSpecs) selects rescon.dev/lane=dedicated "
        f"and tolerates that node's taint, so only {dedicated} will do"
    )
    group_must_have(
        run, record, "fetch", tasks={"fetch", "build"}, workspaces={"source"},
        peak_cpu_millis=run.node_cpu_millis() * PEAK_CPU // 4800, peak_memory_bytes=0,
    )

    run.apply("filler", name=run.named("shared-filler"), node=shared, share=4000 / 4800)
    pod_must_be_running(run, run.named("shared-filler"))
    run.apply("pod_template_placement-b")
    task_pod_must_stay_pending(run, run.named("b"), "only")

    run.release_pod(fetch["metadata"]["name"])
    build = task_pod_must_be_bound(run, run.named("a"), "build")
    assert build["spec"]["nodeName"] == dedicated, f"A's build ran on {build['spec']['nodeName']}, not on its group's node {dedicated}"
    report = task_pod_must_be_bound(run, run.named("a"), "report")
    assert report["spec"]["nodeName"] == shared, (
        f"A's report, whose pod template (the run's) tolerates nothing, ran on {report['spec']['nodeName']}, "
        f"which is tainted rescon.dev/dedicated=ci:NoSchedule"
    )
    pipelinerun_must_succeed(run, run.named("a"))
    group_must_be(run, run.named("a"), "build", state=State.RELEASED, node=dedicated)

    run.delete({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": run.named("shared-filler")}})
    pods_must_be_gone(run, (run.named("shared-filler"),))
    b_pod = task_pod_must_be_bound(run, run.named("b"), "only")
    assert b_pod["spec"]["nodeName"] == shared, f"B, which tolerates nothing, ran on the tainted {b_pod['spec']['nodeName']}"
    group_must_be(run, run.named("b"), "only", state=State.RESERVED, node=shared)
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, run.named("b"))
