"""long_generated_names: a run the server names (generateName) whose TaskRun and pod names Tekton shortens past 63 characters.

`tkn pipeline start` and Tekton Triggers create runs with `generateName`, and
teams give tasks long names. Tekton names a task's TaskRun `<run>-<task>` and
its pod `<TaskRun>-pod`, shortened to 63 characters with an md5 hash when
longer (knative's kmeta.ChildName), so the names no longer hold the task's.

The fault it exists to catch: telling a pod's pipeline task from its name
(strip `<run>-` and `-pod`) instead of Tekton's labels (docs/contract.md
section 7). Every other scenario's names are short enough for that to work;
here it finds no task, places the group's pods as plain pods with no record,
and B takes the room the integration tests need.
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

SCENARIO = Scenario(
    name="long_generated_names",
    description=(
        "a run named by the server (generateName) whose TaskRun and pod names Tekton shortens with a hash past 63 characters: "
        "its group is found by Tekton's labels, reserves 0.6, and B goes to the other node"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("long_generated_names-a", "filler", "long_generated_names-b"),
    default_storage_class=True,
)

CHECKOUT, TESTS = "checkout-the-monorepo", "integration-tests-against-staging"
B = "long-generated-names-deploy"

# Group, by hand (section 4): both tasks use `source`, a volumeClaimTemplate: one group {CHECKOUT, TESTS}.
# Peak, by hand: a chain, so the larger task per resource: CPU 0.6 (TESTS), memory 0.1 (both).
# Placement: A's node has 0.4 left; B asks 0.5, so it goes to the other node (0.55 left beside a 0.45 filler).
# With no group (the pods taken for plain pods), A's node has 0.95 left: the emptier one.


def test_long_generated_names(run: ScenarioRun) -> None:
    created = run.apply("long_generated_names-a")
    a = next(str(doc["metadata"]["name"]) for doc in created if doc["kind"] == "PipelineRun")
    checkout, a_node, record = task_must_hold_its_group(run, a, CHECKOUT)
    assert len(checkout["metadata"]["name"]) <= 63 and CHECKOUT not in checkout["metadata"]["name"], (
        f"pod {checkout['metadata']['name']} still holds its task's name: Tekton did not shorten it, so the scenario tests nothing"
    )
    group_must_have(
        run, record, CHECKOUT, tasks={CHECKOUT, TESTS}, workspaces={"source"},
        peak_cpu_millis=share_of(run.node_cpu_millis(), 0.6), peak_memory_bytes=share_of(run.node_memory_bytes(), 0.1),
    )

    deploy = b_must_go_beside_a_filler(
        run, a_node=a_node, b_fixture="long_generated_names-b", b_run=B, share=0.45, why=f"inside the room {a}'s {TESTS} needs there"
    )
    group_must_be(run, a, CHECKOUT, state=State.RESERVED, node=a_node)

    run.release_pod(checkout["metadata"]["name"])
    tests = task_pod_must_be_bound(run, a, TESTS)
    assert tests["spec"]["nodeName"] == a_node, f"{TESTS} ran on {tests['spec']['nodeName']}, not on its group's node {a_node}"
    run.release_pod(deploy["metadata"]["name"])
    pipelinerun_must_succeed(run, a)
    pipelinerun_must_succeed(run, B)
