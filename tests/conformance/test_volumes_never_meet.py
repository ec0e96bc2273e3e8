"""volumes_never_meet: a pod whose volumes admit no common node stays Pending, and says so.

`merge` mounts two claims Bound to volumes pinned to two different nodes: the
kubelet of neither node can mount both. The pod must never be bound, and its
`PodScheduled` condition must say why (`False`, reason `Unschedulable`), as
kube-scheduler says it: a silent wait is a CI job that hangs until its timeout
with nothing to read.
"""

from __future__ import annotations

from harness.suite.checks import pod_must_be_unschedulable, task_pod_must_stay_pending
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="volumes_never_meet",
    description=(
        "a task mounts two claims whose volumes are pinned to two different nodes: its pod is never bound, "
        "and its PodScheduled condition is False with reason Unschedulable"
    ),
    features=(Feature.VOLUMES,),
    fixtures=("volumes_never_meet",),
    pinned_volumes={"left": 0, "right": 1},
)

NAME = "volumes-never-meet"


def test_volumes_never_meet(run: ScenarioRun) -> None:
    run.apply("volumes_never_meet")
    pod = task_pod_must_stay_pending(run, NAME, "merge")
    pod_must_be_unschedulable(run, pod["metadata"]["name"], why="no node admits all its volumes")
    run.cancel(NAME)
