"""Pods the suite pins to a pool's nodes (fillers, blockers) get a name per node, whatever the nodes are called."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.suite.checks import pinned_pod_name

pytestmark = pytest.mark.unit


@dataclass
class _Run:
    node_names: tuple[str, ...]

    def named(self, name: str) -> str:
        return f"zonal-volume-{name}"


def test_kind_workers_whose_names_end_alike_get_pods_of_their_own() -> None:
    # A three-node pool on kind that drew rescon-worker2 and rescon-worker12: once both "filler-2", a 422 on the second.
    run = _Run(("rescon-worker5", "rescon-worker2", "rescon-worker12"))
    names = [pinned_pod_name(run, "filler", node) for node in run.node_names]  # type: ignore[arg-type]
    assert names == ["zonal-volume-filler-0", "zonal-volume-filler-1", "zonal-volume-filler-2"]


def test_the_name_follows_the_nodes_place_in_the_pool() -> None:
    run = _Run(("n0", "n1", "n2"))
    assert pinned_pod_name(run, "blocker", "n1") == "zonal-volume-blocker-1"  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        pinned_pod_name(run, "blocker", "a-node-of-another-pool")  # type: ignore[arg-type]
