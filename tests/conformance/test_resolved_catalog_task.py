"""resolved_catalog_task: a Pipeline and a catalog Task fetched through Tekton's cluster resolver, sharing a volumeClaimTemplate with two embedded tasks.

Catalog Tasks reach a cluster through resolvers (ClusterTasks are gone in
Tekton v1): the run names its Pipeline and its `scan` Task only by resolver
params, never by a `name` a scheduler could look up. Tekton resolves every
task before it creates the first TaskRun, and keeps each answer in a
ResolutionRequest owned by the run (docs/contract.md section 6, "Tasks fetched
through a resolver").

The fault it exists to catch: skipping a task whose Task came through a
resolver. Such a scheduler either cannot plan the run at all (no record: the
run's pods go as plain pods, and nothing keeps `scan` beside its volume) or
plans a group whose peak leaves `scan` out (0.1 of a node instead of 0.6).
Either way it leaves room on A's node that `scan` will need, and B, applied
while `fetch` holds, takes it.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    b_must_go_beside_a_filler,
    group_must_be,
    group_must_have,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario
from harness.suite.volume_checks import claim_must_be_provisioned_for, claims_must_be_bound_on

SCENARIO = Scenario(
    name="resolved_catalog_task",
    description=(
        "a run whose Pipeline and catalog Task come through the cluster resolver: the group reserves the resolved Task's 0.6, "
        "so B (0.5) goes to the other node, and scan runs beside its volume"
    ),
    features=(Feature.PEAK_RESERVATION, Feature.VOLUMES),
    fixtures=("resolved_catalog_task-a", "filler", "resolved_catalog_task-b"),
    # Its volumeClaimTemplates name no class, as users write them: the cluster's default serves them.
    default_storage_class=True,
    uses_cluster_resolver=True,
)

A = "resolved-catalog-task-scan"
B = "resolved-catalog-task-deploy"

# Groups, by hand (section 4): fetch, scan and report all use `source`, a volumeClaimTemplate: one group
# {fetch, scan, report}, workspaces {source}.
# Peak, by hand (fractions of one node, as cpu()/memory() render them): a chain, so the largest task per
# resource: CPU 0.6 (scan, the resolved Task), memory 0.3 (report).
# Placement: A's node has 1 - 0.6 = 0.4 left; B asks 0.5, so it goes to the other node (0.55 left beside a 0.45
# filler). Without scan, the peak is 0.1 and A's node has 0.9 left; with no record, 0.95: the emptier one either way.


def test_resolved_catalog_task(run: ScenarioRun) -> None:
    run.apply("resolved_catalog_task-a")
    fetch, a_node, record = task_must_hold_its_group(run, A, "fetch")
    claim_must_be_provisioned_for(run, fetch)
    group_must_have(
        run, record, "fetch", tasks={"fetch", "scan", "report"}, workspaces={"source"},
        peak_cpu_millis=share_of(run.node_cpu_millis(), 0.6), peak_memory_bytes=share_of(run.node_memory_bytes(), 0.3),
    )

    deploy = b_must_go_beside_a_filler(
        run, a_node=a_node, b_fixture="resolved_catalog_task-b", b_run=B, share=0.45, why=f"inside the room {A}'s resolved Task scan needs there"
    )
    group_must_be(run, A, "fetch", state=State.RESERVED, node=a_node)

    run.release_pod(fetch["metadata"]["name"])
    for task in ("scan", "report"):
        pod = task_pod_must_be_bound(run, A, task)
        assert pod["spec"]["nodeName"] == a_node, f"{task} ran on {pod['spec']['nodeName']}, not on its group's node {a_node}"
        claims_must_be_bound_on(run, pod)
    run.release_pod(deploy["metadata"]["name"])
    pipelinerun_must_succeed(run, A)
    pipelinerun_must_succeed(run, B)
