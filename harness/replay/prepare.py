"""prepare: everything `rescon replay` decides before it touches a cluster, so that bad input is refused at once (exit code 2).

The nodes (a file or the pool shorthand), the YAML and its plan, and every
round's names: `prepare(paths=[Path("tekton")], ..., copies=2, rounds=1)` gives
one round of two copies of every run. Where replay makes the nodes itself
(local), a pod that no node takes is refused here too; elsewhere it is checked
once the provider has handed out its workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.cluster.node_pools import POOL_LABEL
from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.classify import classify
from harness.replay.loading import load_documents
from harness.replay.names import instance_names
from harness.replay.nodes import NodeSpec, nodes_from_text, pool_nodes
from harness.replay.plan import PlannedRun, ReplayPlan, plan_replay, require_placeable

#: The providers whose nodes replay makes to measure, so that placement can be judged before the cluster is up.
MADE_TO_MEASURE = ("local",)


@dataclass(frozen=True)
class Prepared:
    """Prepared is a replay decided: the plan, the nodes, and each round's runs with their names."""

    plan: ReplayPlan
    nodes: tuple[NodeSpec, ...]
    instances: tuple[tuple[tuple[PlannedRun, str], ...], ...]


def read_nodes(nodes_file: Path | None, pool: str, prefix: str) -> list[NodeSpec]:
    """read_nodes() is the nodes of --nodes FILE, else of --pool (nodes named <prefix>-<n>)."""
    if nodes_file is None:
        return pool_nodes(pool, prefix)
    if not nodes_file.is_file():
        raise ReplayInputError(bad_input.no_such_path(str(nodes_file)))
    return nodes_from_text(nodes_file.read_text(encoding="utf-8"), str(nodes_file))


def prepare(
    *, paths: Sequence[Path], nodes_file: Path | None, pool: str, copies: int, rounds: int, run_for: str,
    scheduler_name: str, cluster: str, namespace: str,
) -> Prepared:
    """prepare() reads the nodes and the YAML, plans every run, names every copy of every round, and checks placement where it can."""
    nodes = read_nodes(nodes_file, pool, namespace)
    plan = plan_replay(classify(load_documents(paths, leave_out=[nodes_file] if nodes_file else [])), namespace=namespace, scheduler_name=scheduler_name, run_for=run_for,
                       pool_selector={POOL_LABEL: namespace})
    if cluster in MADE_TO_MEASURE:
        require_placeable(plan.runs, nodes, pool_labels=(POOL_LABEL,))
    bases = [run.base for run in plan.runs]
    instances = tuple(
        tuple(zip([run for run in plan.runs for _ in range(copies)], instance_names(bases, copies=copies, round=r, rounds=rounds)))
        for r in range(1, rounds + 1)
    )
    return Prepared(plan, tuple(nodes), instances)
