"""ClusterProvider: what the suite needs of a cluster, whichever kind it is.

- `local`: etcd + kube-apiserver + KWOK + Tekton built from pinned modules (harness.cluster.local);
- `kind`: kind v1.37 with Tekton's release manifest (harness.cluster.kind);
- `existing`: any kubeconfig, with Tekton already installed (harness.cluster.existing).

Scenarios size their pods as fractions of a pool node's allocatable, so the
same fixture holds on KWOK nodes (made to measure) and on kind workers (as
they are).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from harness.cluster.node_pools import NodePool
from harness.kube import Kube


class ClusterProvider(Protocol):
    """ClusterProvider brings a cluster up, hands out node pools, and cleans up what it made."""

    #: "local", "kind" or "existing".
    kind: str
    #: Whether pools are nodes made for the scenario (local) or shared workers (kind, existing).
    exclusive_pools: bool

    def up(self) -> Kube:
        """up() returns a client of a ready cluster with Tekton running, creating it if needed."""
        ...

    def attach(self) -> Kube:
        """attach() is an xdist worker's client of the cluster its session's controller brought up with up(); it creates nothing."""
        ...

    def down(self) -> None:
        """down() removes what up() created; for `existing`, only what the suite created."""
        ...

    def logs_dir(self) -> Path | None:
        """logs_dir() holds the components' logs, attached to reports on failure (None if not ours)."""
        ...

    def add_node_pool(
        self,
        kube: Kube,
        name: str,
        *,
        count: int,
        cpu: str = "4",
        memory: str = "8Gi",
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
    ) -> NodePool:
        """add_node_pool() gives the scenario `count` nodes selected by `pool.selector`.

        On `local` the nodes are created with exactly cpu/memory/pods; on `kind`
        the pool is made of labelled workers and the sizes are theirs.
        """
        ...

    def remove_node_pool(self, kube: Kube, pool: NodePool) -> None:
        ...

    def create_test_namespace(self, kube: Kube, name: str) -> str:
        """create_test_namespace() makes a labelled namespace, usable once its ServiceAccount exists."""
        ...

    def delete_test_namespace(self, kube: Kube, name: str) -> None:
        """delete_test_namespace() deletes a namespace this provider made, and its volumes."""
        ...
