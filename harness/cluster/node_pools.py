"""Node pools: each scenario owns a set of nodes with exact allocatable and a unique label.

On the local cluster a pool is made of KWOK nodes created for it; removing the
pool deletes them. Sizes are exact, so a scenario can say "B fits next to A's
running pod but not next to A's reserved peak" and mean it to the millicore.

The size is the nodes' `allocatable`. Their `capacity` is larger, as a real
kubelet reports it (capacity less system-reserved, kube-reserved and the
eviction threshold is allocatable): a scheduler that sizes nodes by capacity
finds room that is not there.

Besides cpu, memory and pods, every KWOK pool node advertises what a real
kubelet does: `ephemeral-storage` (EPHEMERAL_STORAGE_*) and `hugepages-1Gi`
and `hugepages-2Mi` of "0" (a kubelet lists each page size the kernel offers,
with no pages pre-allocated). A NodeShape may give one node more, e.g. GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import kubernetes

from harness.errors import HarnessError
from harness.kube import Kube, present
from harness.quantities import cpu_millis, memory_bytes, units_of
from harness.resource_names import CPU, MEMORY, is_counted, is_extended
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

POOL_LABEL = "rescon.dev/pool"
#: KWOK recognises its nodes by this annotation (the local cluster manages all nodes anyway).
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"


@dataclass(frozen=True)
class NodePool:
    """NodePool is a named set of nodes; `selector` is the nodeSelector that targets exactly them."""

    name: str
    nodes: tuple[str, ...]
    cpu: str
    memory: str
    pods: int
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def selector(self) -> dict[str, str]:
        return {POOL_LABEL: self.name}


#: What a pool node keeps back from its pods, as a kubelet's system-reserved and kube-reserved (with the
#: memory eviction threshold) do on a small real node: capacity is allocatable plus this.
RESERVED_CPU_MILLIS = 200
RESERVED_MEMORY_BYTES = 512 * 2**20

#: A pool node's root disk: 100Gi, a common default boot disk (and about what a kind node on a
#: laptop shows, its host's disk). Allocatable is 90Gi: the kubelet's default hard eviction
#: threshold `nodefs.available<10%` is kept back, so capacity is larger here too. (kind turns
#: that threshold off, so a kind node shows allocatable equal to capacity.)
EPHEMERAL_STORAGE_CAPACITY = "100Gi"
EPHEMERAL_STORAGE_ALLOCATABLE = "90Gi"
#: The huge page sizes an x86-64 kubelet lists; "0": none pre-allocated, as on nearly every node.
HUGEPAGES = {"hugepages-1Gi": "0", "hugepages-2Mi": "0"}


def kubelet_capacity(cpu: str, memory: str, pods: int) -> dict[str, str]:
    """kubelet_capacity('4800m', '8Gi', 110) is {'cpu': '5000m', 'memory': '9126805504', 'pods': '110', 'ephemeral-storage': '100Gi', ...}.

    It is the capacity a kubelet reports beside an allocatable of cpu/memory/pods:
    200m CPU and 512Mi of memory more (RESERVED_*); the pod count is the same, as
    a kubelet's maxPods is both; ephemeral-storage is the whole disk and the
    hugepages sizes are listed with none.
    """
    return {
        "cpu": f"{cpu_millis(cpu) + RESERVED_CPU_MILLIS}m",
        "memory": str(memory_bytes(memory) + RESERVED_MEMORY_BYTES),
        "pods": str(pods),
        "ephemeral-storage": EPHEMERAL_STORAGE_CAPACITY,
        **HUGEPAGES,
    }


def kubelet_allocatable(cpu: str, memory: str, pods: int) -> dict[str, str]:
    """kubelet_allocatable('4800m', '8Gi', 110) is exactly cpu/memory/pods, with the ephemeral-storage and hugepages a kubelet adds."""
    return {"cpu": cpu, "memory": memory, "pods": str(pods), "ephemeral-storage": EPHEMERAL_STORAGE_ALLOCATABLE, **HUGEPAGES}


def node_manifest(
    name: str, *, pool: str, cpu: str, memory: str, pods: int, labels: Mapping[str, str], taints: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """node_manifest() is a KWOK node whose allocatable is exactly cpu/memory/pods and whose capacity is larger.

    Example: cpu='4800m', memory='8Gi' gives allocatable 4800m / 8Gi and capacity
    5000m / 8704Mi (kubelet_capacity()), so only a scheduler that reads
    allocatable, as kube-scheduler does, sees the room the scenario means. Both
    also list ephemeral-storage and hugepages as a kubelet does (kubelet_allocatable()).
    """
    return kwok_node_manifest(
        name, pool=pool, labels=labels, taints=taints,
        capacity=kubelet_capacity(cpu, memory, pods), allocatable=kubelet_allocatable(cpu, memory, pods),
    )


def kwok_node_manifest(
    name: str,
    *,
    pool: str,
    labels: Mapping[str, str],
    taints: Sequence[Mapping[str, Any]],
    capacity: Mapping[str, str],
    allocatable: Mapping[str, str],
    unschedulable: bool = False,
) -> dict[str, Any]:
    """kwok_node_manifest() is a KWOK node of the pool with exactly these resource lists; KWOK keeps them as they are.

    Its labels are `labels` over the ones a kubelet sets (hostname, os, arch),
    and the pool's: `rescon replay` gives a user's nodes their own labels,
    a scenario's pool nodes get the defaults.
    """
    kubelet_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"}
    spec: dict[str, Any] = {"taints": [dict(t) for t in taints]} if taints else {}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {**kubelet_labels, **labels, POOL_LABEL: pool},
            "annotations": {KWOK_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": spec,
        "status": {"capacity": dict(capacity), "allocatable": dict(allocatable)},
    }


def add_node_pool(
    kube: Kube,
    name: str,
    *,
    count: int,
    cpu: str,
    memory: str,
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    timeouts: TimeoutConfig,
) -> NodePool:
    """add_node_pool(kube, 'peak', count=2, cpu='4', memory='8Gi') creates nodes peak-0 and peak-1, Ready and schedulable."""
    if count < 1:
        raise HarnessError(f"node pool {name!r} needs count >= 1")
    names = tuple(f"{name}-{i}" for i in range(count))
    for node in names:
        manifest = node_manifest(node, pool=name, cpu=cpu, memory=memory, pods=pods, labels=labels or {}, taints=taints)
        try:
            kube.core.create_node(kubernetes.client.V1Node.model_validate(manifest))
        except kubernetes.client.ApiException as err:
            if err.status == 409:
                raise HarnessError(f"node {node} already exists: remove pool {name!r} first (rescon cluster down resets everything)") from err
            raise

    wait_schedulable(kube, names, {str(t.get("key")) for t in taints}, what=f"node pool {name}", timeouts=timeouts)
    return NodePool(name, names, cpu, memory, pods, dict(labels or {}))


def wait_schedulable(kube: Kube, names: Sequence[str], own_taints: set[str], *, what: str, timeouts: TimeoutConfig) -> None:
    """wait_schedulable() returns once every named node is Ready and rid of the lifecycle taints it was not made with (nodes_ready)."""
    def all_ready() -> None:
        for node in names:
            current = kube.core.read_node(node)
            status, spec = present(current.status), current.spec
            ready = {c.type: c.status for c in (status.conditions or [])}.get("Ready")
            waiting = not_yet_schedulable(ready, [t.key for t in (spec.taints if spec is not None else None) or []], own_taints)
            if waiting:
                raise NotYet(f"node {node} {waiting}")

    wait_for(all_ready, what=what, timeout="nodes_ready", timeouts=timeouts, hint="is the kwok-controller running?")


def registered_again(node: Mapping[str, Any]) -> dict[str, Any]:
    """registered_again() is the Node a lost node's kubelet registers when it comes back: its name, labels, taints and resources, no state.

    Example: a lost `pool-1` with labels {kubernetes.io/hostname: pool-1, ...},
    allocatable 4 CPUs, and the lifecycle controller's not-ready taint gives
    a manifest of the same name, labels and allocatable, without that taint,
    status or uid.
    """
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    taints = [dict(t) for t in spec.get("taints") or [] if t.get("key") not in LIFECYCLE_TAINTS]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": metadata["name"], "labels": dict(metadata.get("labels") or {}), "annotations": dict(metadata.get("annotations") or {})},
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": dict(status.get("capacity") or {}), "allocatable": dict(status.get("allocatable") or {})},
    }


def register_again(kube: Kube, node: Mapping[str, Any], *, timeouts: TimeoutConfig) -> None:
    """register_again() creates a lost node anew (registered_again()) and returns once it is Ready and schedulable."""
    manifest = registered_again(node)
    kube.core.create_node(kubernetes.client.V1Node.model_validate(manifest))
    own_taints = {str(t.get("key")) for t in (manifest["spec"].get("taints") or [])}
    wait_schedulable(kube, (manifest["metadata"]["name"],), own_taints, what=f"node {manifest['metadata']['name']} to register again", timeouts=timeouts)


#: Taints the node lifecycle controller puts on a node that is not (or not yet) Ready.
LIFECYCLE_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def not_yet_schedulable(ready: str | None, taint_keys: Sequence[str], own_taints: set[str] | frozenset[str] = frozenset()) -> str:
    """not_yet_schedulable() says why a new pool node cannot take pods yet; '' once it can.

    Ready=True is not enough: the node lifecycle controller puts `node.kubernetes.io/not-ready`
    on a node created before its Ready condition, and takes it off only after it has seen
    Ready=True (on the local cluster 1.3 s after, measured once). A scenario that counts on
    every node of its pool from its first placement must not meet that window.

    Example: not_yet_schedulable('True', ['node.kubernetes.io/not-ready']) ==
    'still has the taint node.kubernetes.io/not-ready (Ready=True)'; with [] it is ''.
    """
    if ready != "True":
        return f"is not Ready (Ready={ready})"
    lingering = [key for key in taint_keys if key in LIFECYCLE_TAINTS and key not in own_taints]
    return f"still has the taint {', '.join(lingering)} (Ready=True)" if lingering else ""


@dataclass(frozen=True)
class NodeShape:
    """NodeShape is how one node of a pool differs from the rest; `index` is its place in `NodePool.nodes`.

    NodeShape(0, cordoned=True) cordons `<pool>-0` as `kubectl cordon` does;
    NodeShape(1, taints=(("rescon.dev/dedicated", "other", "NoSchedule"),)) taints `<pool>-1`;
    NodeShape(2, labels=(("rescon.dev/lane", "away"),)) labels `<pool>-2`;
    NodeShape(3, resources=(("example.com/gpu", "2"),)) gives `<pool>-3` two GPUs. A pool with no
    shapes is as before: every node alike, schedulable, untainted, with no GPUs.

    `resources` set the node's capacity and allocatable of each named resource
    to the quantity given (a PATCH of the node's status, as a device plugin
    or Kubernetes' "advertise extended resources for a node" task does). Which
    resources can be shaped depends on who writes the node's status:

    * KWOK nodes (`local`): any counted resource but cpu and memory, e.g.
      `(("example.com/gpu", "2"), ("hugepages-2Mi", "512Mi"), ("ephemeral-storage", "20Gi"))`;
      KWOK's heartbeat writes back the resource lists it reads, keys it does not know included.
    * kubelet nodes (`kind`, `existing`): extended resources only (a name with
      '/' outside kubernetes.io). A kubelet keeps those across its status
      updates, with allocatable equal to capacity, but rewrites cpu, memory,
      ephemeral-storage and every hugepages size its machine has at its next
      update, so shaping those is refused with a HarnessError.

    cpu and memory are the pool's (PoolSpec), the same on every node, so a
    scenario's fractions (run.node_cpu_millis()) hold: a shape never changes them.
    """

    index: int
    cordoned: bool = False
    #: (key, value, effect) each.
    taints: tuple[tuple[str, str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    #: (resource name, quantity) each: the node's capacity and allocatable of that resource.
    resources: tuple[tuple[str, str], ...] = ()


#: What shape_pool_nodes() changed on one node, so that unshape_pool_nodes() can put it back: the
#: node's name and a patch of its metadata and spec, with a "status" entry (a patch of the status
#: subresource) when the shape gave it resources.
NodeUndo = tuple[str, dict[str, Any]]


def shape_resource_problem(resource: str, quantity: str, *, kubelet: bool) -> str:
    """shape_resource_problem() says why a NodeShape cannot give a node this resource; '' when it can.

    Example: shape_resource_problem('ephemeral-storage', '20Gi', kubelet=True) ==
    "a kubelet rewrites ephemeral-storage at its next status update: on kind and existing clusters
    shape extended resources only (a name with '/', e.g. example.com/gpu)".
    """
    if resource in (CPU, MEMORY):
        return f"{resource} is the pool's size, the same on every node: set PoolSpec.{resource} instead"
    if not is_counted(resource):
        return f"{resource} is no resource a pod's request is held against: use ephemeral-storage, hugepages-<size> or a name with '/'"
    if kubelet and not is_extended(resource):
        return (f"a kubelet rewrites {resource} at its next status update: on kind and existing clusters "
                "shape extended resources only (a name with '/', e.g. example.com/gpu)")
    try:
        units_of(resource, quantity)
    except HarnessError as err:
        return str(err)
    return ""


def resources_patch(resources: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """resources_patch((("example.com/gpu", "2"),)) is the status patch that sets capacity and allocatable of each to its quantity."""
    values = {name: quantity for name, quantity in resources}
    return {"status": {"capacity": dict(values), "allocatable": dict(values)}}


def resources_restore(status: Mapping[str, Any], resources: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """resources_restore() is the status patch that puts back what resources_patch() changed: old values, None (remove) where there were none."""
    capacity, allocatable = status.get("capacity") or {}, status.get("allocatable") or {}
    return {"status": {
        "capacity": {name: capacity.get(name) for name, _ in resources},
        "allocatable": {name: allocatable.get(name) for name, _ in resources},
    }}


def is_kubelet_node(annotations: Mapping[str, str] | None) -> bool:
    """is_kubelet_node() is False for a KWOK node (KWOK_NODE_ANNOTATION), True for one a kubelet keeps the status of."""
    return KWOK_NODE_ANNOTATION not in (annotations or {})


def shape_pool_nodes(kube: Kube, pool: NodePool, shapes: Sequence[NodeShape]) -> list[NodeUndo]:
    """shape_pool_nodes() cordons, taints, labels and sizes the pool's nodes as `shapes` say; it returns the undo.

    Shapes are applied to live nodes (a patch, and a status patch for
    resources), so they work on every provider; on `local` the pool's nodes
    are deleted afterwards anyway, elsewhere unshape_pool_nodes() restores
    what was there. A resource the node's provider cannot keep fails before
    anything is changed (NodeShape).
    """
    for shape in shapes:
        if not 0 <= shape.index < len(pool.nodes):
            raise HarnessError(f"node shape {shape} names node {shape.index} of pool {pool.name}, which has {len(pool.nodes)}")
    read = [(shape, pool.nodes[shape.index], kube.core.read_node(pool.nodes[shape.index])) for shape in shapes]
    for shape, node, current in read:
        kubelet = is_kubelet_node(present(current.metadata).annotations)
        for resource, quantity in shape.resources:
            problem = shape_resource_problem(resource, quantity, kubelet=kubelet)
            if problem:
                raise HarnessError(f"node shape of {node} ({'kubelet' if kubelet else 'KWOK'} node) cannot set {resource}={quantity}: {problem}")
    undo: list[NodeUndo] = []
    for shape, node, current in read:
        meta, spec = present(current.metadata), present(current.spec)
        old_labels = meta.labels or {}
        old_taints: list[dict[str, Any]] = [kube.api.sanitize_for_serialization(t) for t in (spec.taints or [])]  # type: ignore[no-untyped-call]
        taints = old_taints + [{"key": k, "value": v, "effect": e} for k, v, e in shape.taints]
        patch: dict[str, Any] = {"metadata": {"labels": dict(shape.labels)}, "spec": {"taints": taints}}
        if shape.cordoned:
            patch["spec"]["unschedulable"] = True
        restore: dict[str, Any] = {
            "metadata": {"labels": {k: old_labels.get(k) for k, _ in shape.labels}},
            "spec": {"taints": old_taints, "unschedulable": spec.unschedulable},
        }
        kube.core.patch_node(node, patch)
        if shape.resources:
            status = kube.api.sanitize_for_serialization(current.status) or {}  # type: ignore[no-untyped-call]
            restore.update(resources_restore(status, shape.resources))
            kube.core.patch_node_status(node, resources_patch(shape.resources))
        undo.append((node, restore))
    return undo


def unshape_pool_nodes(kube: Kube, undo: Sequence[NodeUndo]) -> None:
    """unshape_pool_nodes() puts back what shape_pool_nodes() changed; a node already gone is fine."""
    for node, restore in reversed(undo):
        try:
            if "status" in restore:
                kube.core.patch_node_status(node, {"status": restore["status"]})
            kube.core.patch_node(node, {k: v for k, v in restore.items() if k != "status"})
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise


def remove_node_pool(kube: Kube, pool: NodePool | str) -> None:
    """remove_node_pool() deletes the pool's nodes; idempotent."""
    name = pool if isinstance(pool, str) else pool.name
    kube.core.delete_collection_node(label_selector=f"{POOL_LABEL}={name}")
