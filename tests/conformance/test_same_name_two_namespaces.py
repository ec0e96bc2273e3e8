"""same_name_two_namespaces: two PipelineRuns of one name, in two namespaces at once, are two runs.

The fault it exists to catch: finding a run's pods or its record by the
`tekton.dev/pipelineRun` label (the run's name) alone, across every namespace,
although a group's pods are those in the PipelineRun's own namespace
(docs/contract.md section 7, Headroom). Such a scheduler takes the second
namespace's first pod for a pod of the first namespace's group, which is
Reserved already: it joins that claim on the first run's node, inside the peak
reserved there, and its own run never gets a record or a claim of its own.
Under `pytest -n 2` the same fault used to fail whichever unrelated scenarios
happened to share a PipelineRun name; now each scenario names its runs after
itself, and this one alone shares a name, on purpose and every time.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be,
    group_must_have,
    group_status_now,
    pipelinerun_must_succeed,
    task_must_hold_its_group,
    task_pod_must_be_bound,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="same_name_two_namespaces",
    description=(
        "the same PipelineRun in two namespaces at once: the second one's first pod gets a claim of its own on the other node, "
        "not a place in the first one's Reserved group; each record holds its own pods only"
    ),
    features=(Feature.COLOCATION,),
    fixtures=("same_name_two_namespaces",),
    volumes=("source",),
    extra_namespaces=("other",),
)

#: The one name both PipelineRuns have.
RUN = "same-name-two-namespaces"

# By hand, on two nodes of 4800m: the group {small, big} has peak max(240m, 3360m) = 3360m, memory 0
# (small 0.05 and big 0.7 of a node's CPU, run one after the other).
# Here, small runs on node N and the group is Reserved there: N has 4800 - 240 - (3360 - 240) = 1440m left.
# There, small opens its own group's claim, which needs 3360m: only the other node has it (4800m).
# Taken for here's group, there's small joins the claim on N inside the reserved 3360m, and binds there.


def test_same_name_two_namespaces(run: ScenarioRun) -> None:
    there = run.in_namespace("other")
    run.apply("same_name_two_namespaces")
    small, node, record = task_must_hold_its_group(run, RUN, "small")
    group_must_have(
        run, record, "small", tasks={"small", "big"}, workspaces={"source"},
        peak_cpu_millis=share_of(run.node_cpu_millis(), 0.7), peak_memory_bytes=0,
    )

    there.apply("same_name_two_namespaces")
    their_small = task_pod_must_be_bound(there, RUN, "small")
    other = next(n for n in run.node_names if n != node)
    assert their_small["spec"]["nodeName"] == other, (
        f"{there.namespace}/{RUN}'s small landed on {their_small['spec']['nodeName']}, where {run.namespace}/{RUN} reserved its peak: "
        f"a PipelineRun of the same name in another namespace is another run, whose claim fits only on {other}"
    )
    group_must_be(there, RUN, "small", state=State.RESERVED, node=other)
    if run.checks_records:
        _, _, status = group_status_now(run, RUN, "small")
        assert set(status.holders) == {small["metadata"]["uid"]}, (
            f"{run.namespace}/{RUN}'s group holds {sorted(status.holders)}: only its own small pod {small['metadata']['uid']} is its holder"
        )

    # Each run ends on its own node; the first one's end releases only its own group.
    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, RUN, "big")
    assert big["spec"]["nodeName"] == node, f"{run.namespace}/{RUN}'s big ran on {big['spec']['nodeName']}, not on its group's node {node}"
    pipelinerun_must_succeed(run, RUN)
    group_must_be(run, RUN, "big", state=State.RELEASED, node=node)
    group_must_be(there, RUN, "small", state=State.RESERVED, node=other)

    there.release_pod(their_small["metadata"]["name"])
    their_big = task_pod_must_be_bound(there, RUN, "big")
    assert their_big["spec"]["nodeName"] == other, f"{there.namespace}/{RUN}'s big ran on {their_big['spec']['nodeName']}, not on its group's node {other}"
    pipelinerun_must_succeed(there, RUN)
    group_must_be(there, RUN, "big", state=State.RELEASED, node=other)
