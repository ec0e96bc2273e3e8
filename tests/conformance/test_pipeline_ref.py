"""pipeline_ref: a run of a Pipeline by pipelineRef, with taskRef Tasks, a volumeClaimTemplate and a matrix from the run's params.

The faults it exists to catch, each a way of reading only the embedded form
the other scenarios use:
* planning from `spec.pipelineSpec` alone: a pipelineRef run has none, so
  such a scheduler reserves nothing for it;
* counting only `persistentVolumeClaim` workspaces as co-locating: `source` is
  a `volumeClaimTemplate` (Tekton makes its PVC per run), and `fetch` uses
  nothing else, so it would fall out of the group and `compile` would bridge
  only `cache`;
* sizing the matrix from the Pipeline's default (`targets: [linux]`) instead
  of the run's params (three targets): Tekton substitutes the run's params
  into `status.pipelineSpec` (docs/contract.md section 6).
Each of those reserves less than 0.4 of A's node for the group, which makes A's
node the emptier one for B.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_go_beside_a_filler,
    group_must_be,
    group_must_have,
    matrixed_pods_must_run_on,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="pipeline_ref",
    description="A pipelineRef run of three taskRef Tasks sharing a volumeClaimTemplate and a PVC, its middle task matrixed over the run's three targets: the group reserves the fan-out, so B (0.5) goes to the other node",
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("pipeline_ref-a", "filler", "pipeline_ref-b"),
    volumes=("build-cache",),
    # Its volumeClaimTemplates name no class, as users write them: the cluster's default serves them.
    default_storage_class=True,
)


# Groups, by hand (section 4): source (volumeClaimTemplate) and cache (PVC) are co-locating, scratch
# (emptyDir) is not. fetch uses source; compile uses source and cache; publish uses cache: one group
# {fetch, compile, publish}, workspaces {cache, source}.
# Peak, by hand (fractions of one node, as cpu()/memory() render them):
#   fetch:   0.02 CPU (96m), 0.05 memory.
#   compile: 0.2 CPU (960m), 0.1 memory per target; the run's targets are [linux, darwin, windows],
#            so three TaskRuns at once: 2880m, 3 x 0.1 memory.
#   publish: 0.1 CPU, 0.35 memory.
#   A chain, so the peak is the largest stage per resource: CPU 2880m (compile), memory 0.35 (publish).
# Placement: A's node has 4800 - 96 - (2880 - 96) = 1920m left; B asks 2400m, so it goes to the other
#   node (2640m left beside a 0.45 filler). With the Pipeline's default (one target) A would reserve
#   960m and leave 3840m; with no group at all, 4704m: A's node the emptier one either way.


def test_pipeline_ref(run: ScenarioRun) -> None:
    run.apply("pipeline_ref-a")
    fetch, a_node, record = task_must_hold_its_group(run, "pipeline-ref-build", "fetch")
    cpu, memory = run.node_cpu_millis(), run.node_memory_bytes()
    group_must_have(
        run, record, "fetch", tasks={"fetch", "compile", "publish"}, workspaces={"source", "cache"},
        peak_cpu_millis=3 * share_of(cpu, 0.2), peak_memory_bytes=share_of(memory, 0.35),
    )

    deploy = b_must_go_beside_a_filler(
        run, a_node=a_node, b_fixture="pipeline_ref-b", b_run="pipeline-ref-deploy", share=0.45,
        why="inside the room pipeline-ref-build's three compile pods need there",
    )
    group_must_be(run, "pipeline-ref-build", "fetch", state=State.RESERVED, node=a_node)

    run.release_pod(fetch["metadata"]["name"])
    matrixed_pods_must_run_on(run, "pipeline-ref-build", "compile", combinations=3, node=a_node)
    publish = task_pod_must_be_bound(run, "pipeline-ref-build", "publish")
    assert publish["spec"]["nodeName"] == a_node, f"publish ran on {publish['spec']['nodeName']}, not on its group's node {a_node}"
    run.release_pod(deploy["metadata"]["name"])
    pipelinerun_must_succeed(run, "pipeline-ref-build")
    pipelinerun_must_succeed(run, "pipeline-ref-deploy")
