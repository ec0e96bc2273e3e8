"""tekton_config_defaults: runs routed and sized by Tekton's config-defaults, as operators configure a cluster.

Operators send task pods to a second scheduler with config-defaults'
`default-pod-template` (`schedulerName`), so PipelineRuns name no scheduler,
and give containers resources cluster-wide with
`default-container-resource-requirements`. Here A's big task's step asks for
nothing: the `prefix-step` entry gives it its size (docs/contract.md section
6.1, step 4), and the group must reserve that size while A's small task runs.

The fault it exists to catch: a scheduler that predicts pods without Tekton's
container defaults (mutant `ignores_container_defaults`) reserves A's peak as
its small task only, and puts B on A's node, where A's big task will not fit
beside it.
"""

from __future__ import annotations

from typing import Any

import yaml

from harness.contract.record import State
from harness.suite.checks import (
    b_must_land_beside_the_filler,
    group_must_be,
    group_must_end_on_its_node,
    group_must_have,
    task_must_hold_its_group,
)
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario
from harness.suite.tekton_defaults import tekton_config_set

SCENARIO = Scenario(
    name="tekton_config_defaults",
    description=(
        "config-defaults name the scheduler (default-pod-template) and size every step that asks for nothing "
        "(default-container-resource-requirements, prefix-step 3800/4800 of a node); runs name neither: A's group "
        "reserves its bare big task's defaulted size, so B goes to the other node"
    ),
    features=(Feature.PEAK_RESERVATION,),
    fixtures=("tekton_config_defaults-a", "tekton_config_defaults-filler", "tekton_config_defaults-b"),
    volumes=("a-source", "b-source"),
    tekton_settings=("config-defaults/default-pod-template", "config-defaults/default-container-resource-requirements"),
)

NAME = "tekton-config-defaults-a"


def test_tekton_config_defaults(run: ScenarioRun) -> None:
    # By hand: the big task's one step (bare) gets the prefix-step entry, 3800/4800 of a node; the small task's step
    # asks 200/4800 itself and keeps it; no entry gives memory, and Tekton's own containers stay bare. The tasks
    # run one after the other: the peak is the big task's.
    big_millis = run.node_cpu_millis() * 3800 // 4800
    scheduler = run.context.scheduler_name
    values = {
        "default-pod-template": yaml.safe_dump({"schedulerName": scheduler}),
        "default-container-resource-requirements": yaml.safe_dump({"prefix-step": {"requests": {"cpu": f"{big_millis}m"}}}),
    }

    def shows(pod: dict[str, Any]) -> bool:
        step = next((c for c in pod["spec"]["containers"] if c["name"] == "step-work"), {})
        return pod["spec"].get("schedulerName") == scheduler and ((step.get("resources") or {}).get("requests") or {}).get("cpu") == f"{big_millis}m"

    with tekton_config_set(run, values, shows=shows):
        run.apply("tekton_config_defaults-a")
        small, a_node, record = task_must_hold_its_group(run, NAME, "small")
        group_must_have(run, record, "small", tasks={"small", "big"}, workspaces={"source"}, peak_cpu_millis=big_millis, peak_memory_bytes=0)
        b_pod = b_must_land_beside_the_filler(run, "tekton_config_defaults", a_node=a_node, why="inside the peak A's defaulted big task reserved there")
        group_must_be(run, NAME, "small", state=State.RESERVED, node=a_node)
        group_must_end_on_its_node(run, NAME, held=small, next_task="big", node=a_node, others=(b_pod,))
        group_must_be(run, NAME, "big", state=State.RELEASED, node=a_node)
