"""cluster_nodes: the replay's node pool on the cluster: the user's nodes made as KWOK nodes (local), or workers shaped like them (kind, existing).

On the local cluster each NodeSpec becomes a KWOK node of the pool, with its
own name, labels, taints and resource lists, as harness.cluster.node_pools
makes a scenario's pool; removing the pool deletes them. A kind or existing
cluster's workers are its own: the provider hands out as many as the specs
(its slot pool), and replay puts on each the labels, taints, cordon and
extended resources of the node it stands for (harness.replay.nodes.worker_shapes),
then reads them back, so that placement is judged on the nodes as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import kubernetes

from harness.cluster import node_pools
from harness.cluster.node_pools import NodePool, NodeUndo, shape_pool_nodes, unshape_pool_nodes, wait_schedulable
from harness.errors import HarnessError
from harness.kube import Kube
from harness.replay.nodes import NodeSpec, node_spec, worker_shapes
from harness.timeouts import TimeoutConfig


@dataclass
class ReplayPool:
    """ReplayPool is the pool the runs go to: its NodePool, the nodes as placement reads them, and what to undo on shared workers."""

    pool: NodePool
    nodes: list[NodeSpec]
    undo: list[NodeUndo] = field(default_factory=list)


def _node_pool(name: str, specs: Sequence[NodeSpec]) -> NodePool:
    """_node_pool() is the NodePool of the specs; its size fields are the first node's, for reading only."""
    first = specs[0].allocatable
    return NodePool(name, tuple(s.name for s in specs), str(first.get("cpu", "0")), str(first.get("memory", "0")), int(first.get("pods", "110")))


def make_kwok_nodes(kube: Kube, name: str, specs: Sequence[NodeSpec], *, timeouts: TimeoutConfig) -> ReplayPool:
    """make_kwok_nodes() creates one KWOK node per spec, all of pool `name`, and returns once they take pods."""
    for spec in specs:
        try:
            kube.core.create_node(kubernetes.client.V1Node.model_validate(spec.manifest(name)))
        except kubernetes.client.ApiException as err:
            if err.status == 409:
                raise HarnessError(
                    f"node {spec.name} already exists on this cluster: delete it (kubectl delete node {spec.name}) or rename it in the nodes file"
                ) from err
            raise
    own_taints = {str(t.get("key")) for s in specs for t in s.taints}
    wait_schedulable(kube, [s.name for s in specs], own_taints, what=f"the replay's {len(specs)} nodes", timeouts=timeouts)
    return ReplayPool(_node_pool(name, specs), list(specs))


def shape_workers(cluster: Any, kube: Kube, name: str, specs: Sequence[NodeSpec]) -> ReplayPool:
    """shape_workers() takes as many of the provider's workers as specs and shapes each like its spec; the NodeSpecs returned are the workers'."""
    pool = cluster.add_node_pool(kube, name, count=len(specs))
    replay_pool = ReplayPool(pool, [])
    try:
        replay_pool.undo = shape_pool_nodes(kube, pool, worker_shapes(specs))
        for node in pool.nodes:
            body = kube.api.sanitize_for_serialization(kube.core.read_node(node))  # type: ignore[no-untyped-call]
            replay_pool.nodes.append(node_spec(body, f"node {node}"))
    except BaseException:
        remove_pool(cluster, kube, replay_pool)
        raise
    return replay_pool


def make_pool(cluster: Any, kube: Kube, name: str, specs: Sequence[NodeSpec], *, timeouts: TimeoutConfig) -> ReplayPool:
    """make_pool() is the replay's pool on whatever cluster it runs: nodes of its own where pools are (local), shaped workers elsewhere."""
    if cluster.exclusive_pools:
        try:
            return make_kwok_nodes(kube, name, specs, timeouts=timeouts)
        except BaseException:
            node_pools.remove_node_pool(kube, name)  # the nodes made before the failure
            raise
    return shape_workers(cluster, kube, name, specs)


def remove_pool(cluster: Any, kube: Kube, replay_pool: ReplayPool) -> None:
    """remove_pool() undoes make_pool(): the shapes come off shared workers first, then the provider takes the pool back."""
    unshape_pool_nodes(kube, replay_pool.undo)
    cluster.remove_node_pool(kube, replay_pool.pool)
