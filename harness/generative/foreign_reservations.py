"""foreign_reservations: another reservation scheduler's Reserved group on one of a batch's nodes, for the whole batch.

Two reservation schedulers may serve one cluster, each under its own
schedulerName, and each MUST count every Reserved group on a node, whoever
reserved it (docs/contract.md section 2, Several schedulers; section 7,
Headroom). Before some batches (CHANCE) the grammar plays the other scheduler:
a PipelineRun whose pods ask for OTHER_SCHEDULER, which nobody serves (its one
pod stays Pending), and the record that scheduler would have written once it
had claimed a pool node for the run's group (harness.suite.foreign_records):
Reserved there, its peak a drawn part of the node (FRACTIONS), all of it
residual since its pod is on no node. The batch's runs are sized for what it
leaves, as for foreign pods, so the grammar's deadlock argument still holds; a
scheduler that counts only its own records over-commits that node, and the
contract monitor (which counts every Reserved group's residual) says so. The
scenario deletes the run after the batch, and its record goes with it (the
record's ownerReference).

Drawn only where the cluster's default class serves volumeClaimTemplates
(DrawContext.storage_class None): the run's claim then waits for a consumer
that never comes and takes no volume, where a spare volume of the suite's own
class would be bound and spent.

    reservation = draw_foreign_reservation(rng, nodes=('p-0', 'p-1'), name='generative-03-other', context=context)
    reservation.taken == {'p-1': 576}   # millicores of that node's CPU
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence

from harness.cluster.simulation import sim_task_spec
from harness.quantities import share_of

Obj = dict[str, Any]

#: The schedulerName of the other reservation scheduler the grammar plays: nobody serves it.
OTHER_SCHEDULER = "rescon-generative-other"
#: How often a batch finds another scheduler's Reserved group on one of its nodes.
CHANCE = 0.3
#: The part of its node's CPU the other group's peak takes.
FRACTIONS = (0.1, 0.15, 0.2)
#: The other run's one task and the workspace its group is made of.
TASK = "only"
WORKSPACE = "source"


class Sizes(Protocol):
    @property
    def pool_selector(self) -> Mapping[str, str]: ...

    @property
    def node_cpu_millis(self) -> int: ...

    @property
    def storage_class(self) -> str | None: ...


@dataclass(frozen=True)
class ForeignReservation:
    """ForeignReservation is the other scheduler's run, and the node and CPU its Reserved group holds."""

    node: str
    cpu_millis: int
    pipeline_run: Obj

    @property
    def name(self) -> str:
        return str(self.pipeline_run["metadata"]["name"])

    @property
    def taken(self) -> dict[str, int]:
        """taken is the millicores the group holds, by node (one node)."""
        return {self.node: self.cpu_millis}

    def describe(self) -> str:
        return f"another scheduler's ({OTHER_SCHEDULER}) Reserved group on {self.node}: {self.cpu_millis}m, its pod on no node"


def other_run(name: str, cpu_millis: int, sizes: Sizes) -> Obj:
    """other_run() is the other scheduler's PipelineRun: one task on a volumeClaimTemplate workspace, its pods asking for OTHER_SCHEDULER."""
    task_spec = sim_task_spec(cpu=f"{cpu_millis}m", hold=True, workspaces=(WORKSPACE,))
    claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"name": name},
        "spec": {
            "taskRunTemplate": {"podTemplate": {"schedulerName": OTHER_SCHEDULER, "nodeSelector": dict(sizes.pool_selector)}},
            "workspaces": [{"name": WORKSPACE, "volumeClaimTemplate": {"spec": claim}}],
            "pipelineSpec": {
                "workspaces": [{"name": WORKSPACE}],
                "tasks": [{"name": TASK, "workspaces": [{"name": WORKSPACE}], "taskSpec": task_spec}],
            },
        },
    }


def draw_foreign_reservation(rng: random.Random, *, nodes: Sequence[str], name: str, sizes: Sizes) -> ForeignReservation | None:
    """draw_foreign_reservation() is, for some batches (CHANCE), the other scheduler's group on one drawn node; None otherwise."""
    if not nodes or sizes.storage_class is not None or rng.random() >= CHANCE:
        return None
    node = rng.choice(list(nodes))
    cpu_millis = share_of(sizes.node_cpu_millis, rng.choice(FRACTIONS))
    return ForeignReservation(node, cpu_millis, other_run(name, cpu_millis, sizes))
