"""group_fits_no_node: a group whose peak no node can hold is refused, visibly, and holds nothing.

A test fan-out over one workspace (four shards of 0.3 of a node, started at
once) has a peak of 1.2 nodes. No claim can ever hold it (docs/contract.md
section 7, "A group no node can hold"): its first pod stays Pending, marked
Unschedulable so that the run's owner reads why at once rather than at the
run's timeout, and the group reserves nothing, so two runs of 0.9 still fill
both nodes.

The faults it exists to catch: scheduling such a group without a reservation
(its pods as plain pods: checkout is bound, and the shards would later starve
each other on a node other runs fill), or reserving what fits (the whole of
one node): then only one of the two 0.9 runs finds room.
"""

from __future__ import annotations

from harness.contract.record import State
from harness.suite.checks import (
    group_status_now,
    pod_must_be_unschedulable,
    task_pod_must_be_bound,
    task_pod_must_stay_pending,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="group_fits_no_node",
    description=(
        "a group of four 0.3 test shards over one workspace (peak 1.2 nodes) fits no node: its first pod stays Pending, marked "
        "Unschedulable, the group stays Pending, and two runs of 0.9 still fill both nodes"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("group_fits_no_node-a", "group_fits_no_node-b"),
    default_storage_class=True,
)

A = "group-fits-no-node-tests"

# Peak, by hand: checkout (0.05) then four shards of 0.3 at once: 1.2 nodes of CPU > 1 node. No node, empty or
# not, can hold it. Two runs of 0.9 can only both run if each has a node of its own, with nothing reserved on it.


def test_group_fits_no_node(run: ScenarioRun) -> None:
    run.apply("group_fits_no_node-a")
    checkout = task_pod_must_stay_pending(run, A, "checkout")
    pod_must_be_unschedulable(run, checkout["metadata"]["name"], why="its group's peak (1.2 nodes of CPU) fits no node")
    if run.checks_records and run.records():
        # A record is not required here (nothing is bound), but one that exists must hold nothing.
        _, group, status = group_status_now(run, A, "checkout")
        assert status.state is State.PENDING, f"group {group.name} of {A} is {status.state.value} on {status.node}, though its peak fits no node"

    nodes = set()
    for name in ("group-fits-no-node-build-1", "group-fits-no-node-build-2"):
        run.apply("group_fits_no_node-b", name=name)
        nodes.add(task_pod_must_be_bound(run, name, "only")["spec"]["nodeName"])
    assert nodes == set(run.node_names), f"the two 0.9 runs share {nodes}: {A}, which fits no node, holds room somewhere"
    task_pod_must_stay_pending(run, A, "checkout")
