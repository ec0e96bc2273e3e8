"""resize: a pod that lingers after its TaskRun is done gives its requests back; the group's reservation does not change."""

from __future__ import annotations

from harness.contract.record import State
from harness.quantities import share_of
from harness.suite.checks import group_must_be, group_must_have, pod_requests_must_drop_to, task_pod_must_be_bound, taskrun_must_be_done
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="resize",
    description="After a TaskRun is terminal but its pod lingers (a sidecar), the pod's requests drop to the floor; the record's peak and Reserved state do not change",
    features=(Feature.RESIZE,),
    fixtures=("resize",),
    volumes=("source",),
)


# No task of this fixture requests memory, and Tekton's own init containers request none: the memory peak is 0.

def test_resize(run: ScenarioRun) -> None:
    run.apply("resize")
    pod = task_pod_must_be_bound(run, "resize", "linger")
    node = pod["spec"]["nodeName"]
    peak = share_of(run.node_cpu_millis(), 0.4)
    record = group_must_be(run, "resize", "linger", state=State.RESERVED, node=node)
    group_must_have(run, record, "linger", tasks={"linger", "later"}, workspaces={"source"}, peak_cpu_millis=peak, peak_memory_bytes=0)

    taskrun_must_be_done(run, "resize", "linger")
    pod_requests_must_drop_to(run, pod["metadata"]["name"], cpu_millis=run.resize_floor_cpu_millis)

    record = group_must_be(run, "resize", "linger", state=State.RESERVED, node=node)
    group_must_have(run, record, "linger", tasks={"linger", "later"}, workspaces={"source"}, peak_cpu_millis=peak, peak_memory_bytes=0)
