"""child_pipeline: a task that runs a Pipeline holds its parent's group until its child PipelineRun is done; the child's tasks reserve in the child's record.

Tekton v1.15 runs pipelines in pipelines at feature-flags' `enable-api-fields:
"alpha"`: a pipeline task with a `pipelineSpec` (or `pipelineRef`) gets no
TaskRun; Tekton makes a child PipelineRun, owned by the run, labelled with the
run's name and the task's, and binds the task's workspaces to the run's
volumes. docs/contract.md section 4 groups such a task by its workspaces,
section 6 counts it as no request (its pods are the child's, planned in the
child's own record), and section 8 takes it as done when its child
PipelineRun's `Succeeded` is True or False.

Here A's group is `fetch` (1000/4800 of the only node, held) and then
`build-and-test`, whose child runs `build` (2400, held) and then `test` (1200,
held) on the same volume; `publish`, in no group and held, runs after the
child. B (2000m), applied once build runs, waits through the child's tasks:
A's group holds its 1000m residual beside build's 2400m, then beside test's
1200m and the child group's 1200m residual.
When the child PipelineRun succeeds, both groups must be Released while publish
still runs, and B binds into their room.

The faults it exists to catch: looking for a TaskRun of every group task
(mutant `child_pipeline_runs_never_done`): no TaskRun ever comes for
`build-and-test`, so the parent's group is held until the run ends, which
`publish` keeps from happening (the monitor's `release-late` fires, and B never
binds); and refusing to plan a run with a child pipeline (mutant
`child_pipelines_unplanned`, what the reference did before): the parent gets
no record, its group no reservation.

The flag is the whole cluster's: the scenario runs in the Tekton settings window
(harness.suite.workers.Slot). A probe TaskRun with
Tekton's hermetic execution-mode annotation tells when the controller has the
flag: only at "alpha" does it give the pod's steps TEKTON_HERMETIC.
"""

from __future__ import annotations

from typing import Any

from harness.contract.record import State
from harness.suite.checks import (
    child_run_must_exist,
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    pod_must_be_finished,
    task_must_hold_its_group,
    task_pod_must_be_bound,
    task_pod_must_exist,
    task_pod_must_stay_pending,
    taskrun_must_be_done,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario
from harness.suite.tekton_defaults import FEATURE_FLAGS, tekton_config_set

SCENARIO = Scenario(
    name="child_pipeline",
    description=(
        "A's group is fetch (1000m, held) and build-and-test, which runs a Pipeline (build 2400m, then test 1200m, held) on the same "
        "workspace; publish runs after it in no group. B (2000m) waits through the child's tasks; once the child PipelineRun "
        "succeeds both groups are Released while publish still runs, and B binds"
    ),
    features=(Feature.RELEASE,),
    fixtures=("child_pipeline-a", "graceful_stop-b"),
    pool=PoolSpec(count=1),
    volumes=("a-source", "b-source"),
    tekton_settings=("feature-flags/enable-api-fields",),
)
A = "child-pipeline-a"
#: Tekton's execution-mode annotation: at enable-api-fields "alpha" only, the pod's steps get TEKTON_HERMETIC.
HERMETIC = {"experimental.tekton.dev/execution-mode": "hermetic"}


def _hermetic(pod: dict[str, Any]) -> bool:
    """A probe pod built at enable-api-fields: alpha."""
    return any(e.get("name") == "TEKTON_HERMETIC" for c in pod["spec"]["containers"] for e in c.get("env") or [])


def _child_pipeline_probe(prefix: str) -> dict[str, Any]:
    """A PipelineRun with a child pipeline, dry-run only: Tekton's webhook admits it once it reads enable-api-fields alpha."""
    child = {"tasks": [{"name": "inner", "taskSpec": {"steps": [{"name": "s", "image": "busybox:1.37", "command": ["true"]}]}}]}
    return {
        "apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": {"generateName": f"{prefix}-"},
        "spec": {"pipelineSpec": {"tasks": [{"name": "outer", "pipelineSpec": child}]}},
    }


# Peaks, by hand (fractions of the node's CPU, as cpu() renders them, rounded down):
#   A's group: fetch 1000/4800, then build-and-test with no pod of its own: 1000/4800.
#   The child's group: build 2400/4800, then test 1200/4800 (runAfter: one at a time): 2400/4800.
# While build runs: A's residual 1000 + build's 2400 leave 1400/4800, less than B's 2000/4800; while test
#   runs: 1000 + test's 1200 + the child group's residual 2400 - 1200 leave 1400/4800 again.
# Taking build-and-test for done once fetch ends would release A's group: 2400/4800 left, and B binds.
def test_child_pipeline(run: ScenarioRun) -> None:
    b = run.named("b")
    cpu = run.node_cpu_millis()
    with tekton_config_set(
        run, {"enable-api-fields": "alpha"}, config_map=FEATURE_FLAGS, probe_annotations=HERMETIC, shows=_hermetic,
        admits=_child_pipeline_probe(run.named("admits")),
    ):
        run.apply("child_pipeline-a")
        fetch, node, record = task_must_hold_its_group(run, A, "fetch")
        group_must_have(run, record, "fetch", tasks={"fetch", "build-and-test"}, workspaces={"source"}, peak_cpu_millis=cpu * 1000 // 4800, peak_memory_bytes=0)

        # fetch ends; Tekton makes the child PipelineRun, whose build opens the child's own group on the volume's node.
        run.release_pod(fetch["metadata"]["name"])
        assert pod_must_be_finished(run, fetch["metadata"]["name"]) == "Succeeded"
        taskrun_must_be_done(run, A, "fetch")
        child = str(child_run_must_exist(run, A, "build-and-test", kind="PipelineRun")["metadata"]["name"])
        build, build_node, child_record = task_must_hold_its_group(run, child, "build")
        assert build_node == node, f"the child's build is on {build_node}, but its volume's group is on {node}"
        group_must_have(run, child_record, "build", tasks={"build", "test"}, workspaces={"source"}, peak_cpu_millis=cpu * 2400 // 4800, peak_memory_bytes=0)
        group_must_be(run, A, "fetch", state=State.RESERVED, node=node)
        run.apply("graceful_stop-b", name=b)
        # B waits beside build from here; held once, beside test: a B bound beside build is bound there too. Every
        # fault that frees B's room beside build (A's group released, its residual not counted) frees it beside test,
        # where the child group's residual counts as well.
        task_pod_must_exist(run, b, "only")

        # build, then test end: the child PipelineRun succeeds, and with it the parent's task; publish still runs (held).
        run.release_pod(build["metadata"]["name"])
        test = task_pod_must_be_bound(run, child, "test")
        assert test["spec"]["nodeName"] == node, f"the child's test is on {test['spec']['nodeName']}, but its group is on {node}"
        task_pod_must_stay_pending(run, b, "only")
        run.release_pod(test["metadata"]["name"])
        pipelinerun_must_succeed(run, child)
        group_must_be(run, child, "build", state=State.RELEASED, node=node)
        group_must_be(run, A, "fetch", state=State.RELEASED, node=node)
        b_pod = task_pod_must_be_bound(run, b, "only")
        assert b_pod["spec"]["nodeName"] == node, f"B is on {b_pod['spec']['nodeName']}, but the pool's only node is {node}"
        publish = task_pod_must_be_bound(run, A, "publish")
        run.release_pod(publish["metadata"]["name"])
        run.release_pod(b_pod["metadata"]["name"])
        pipelinerun_must_succeed(run, A)
        pipelinerun_must_succeed(run, b)
