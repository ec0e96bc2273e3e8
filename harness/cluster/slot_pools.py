"""Node pools on clusters whose nodes the suite does not make: kind workers and existing clusters.

A cluster offers nodes to the suite by labelling them `rescon.dev/pool-slot=<n>`
(kind-config.yaml does it for kind's two workers). A pool claims free slot
nodes by adding the pool label `rescon.dev/pool=<pool>`, so `pool.selector`
targets them exactly as on the local cluster; removing the pool removes the
label again and leaves the nodes as they were.

A pool's size is what the suite may use of its nodes: their allocatable less
the requests of the pods the suite did not create (daemons such as a CNI's or
CoreDNS), so a scenario's fractions and hand-computed headroom hold on any
cluster. A slot is handed out only once no pod of an earlier scenario (a test
namespace's) is left on it: a pod still terminating there would hold room the
next scenario counts on.

Scenarios that run side by side (`pytest -n N`) claim slots one worker at a
time: the controller names a lock file (CLAIM_LOCK_ENV), and a claim holds it
from choosing its nodes to labelling them, so two workers never label one
node. A pool that finds too few slots free then waits for the other workers'
scenarios to give theirs back (timeout pool_slots_free) rather than failing;
a plain session, whose slots nobody else holds, fails at once.

`choose_slots()` and `usable_size()` decide (pure); `claim_slot_pool()` and
`release_slot_pool()` do the I/O.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import kubernetes

from harness.cluster.namespaces import TEST_NAMESPACE_LABEL
from harness.cluster.node_pools import POOL_LABEL, NodePool
from harness.errors import HarnessError
from harness.kube import Kube, json_object, present
from harness.quantities import ZERO, Amount, amount_of, pod_request
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig
from harness.waits import NotYet, wait_for

POOL_SLOT_LABEL = "rescon.dev/pool-slot"

#: Set by the xdist controller (harness.suite.session.ControllerCluster) for its workers: the file whose
#: flock makes one worker's claim of slot nodes whole (choose, wait for leftovers, label) before another's.
CLAIM_LOCK_ENV = "RESCON_SLOT_CLAIM_LOCK"


class SlotsTaken(HarnessError):
    """SlotsTaken: the cluster offers enough slot nodes, but too few are free now (other pools hold them)."""


@dataclass(frozen=True)
class SlotNode:
    """SlotNode is a node offered to the suite: its slot, the pool holding it (if any), and its allocatable."""

    name: str
    slot: str
    pool: str | None = None
    usable: bool = True
    allocatable: Mapping[str, str] = field(default_factory=dict)


def slot_node(node: kubernetes.client.V1Node) -> SlotNode:
    """slot_node() reads what choose_slots() needs from a Node: usable means Ready and not cordoned."""
    meta = present(node.metadata)
    labels = meta.labels or {}
    conditions = {c.type: c.status for c in ((node.status.conditions if node.status else None) or [])}
    usable = conditions.get("Ready") == "True" and not (node.spec and node.spec.unschedulable)
    return SlotNode(
        name=present(meta.name),
        slot=labels.get(POOL_SLOT_LABEL, ""),
        pool=labels.get(POOL_LABEL),
        usable=usable,
        allocatable=dict((node.status.allocatable if node.status else None) or {}),
    )


def _slot_order(node: SlotNode) -> tuple[int, str]:
    return (int(node.slot), node.name) if node.slot.isdigit() else (1 << 30, node.slot + node.name)


def choose_slots(nodes: Iterable[SlotNode], count: int, pool: str) -> list[SlotNode]:
    """choose_slots(nodes, 2, 'peak') is the two lowest free, usable slots, or a HarnessError naming the fix.

    Example: slots 0 (held by pool 'a'), 1 and 2 free -> [slot 1, slot 2]. Too few
    free of enough offered is SlotsTaken (a concurrent session waits for them).
    """
    offered = list(nodes)
    if not offered:
        raise HarnessError(
            f"no node is labelled {POOL_SLOT_LABEL}: label each node the suite may use, "
            f"e.g. 'kubectl label node <node> {POOL_SLOT_LABEL}=0' (one number per node)"
        )
    free = sorted((n for n in offered if n.pool is None and n.usable), key=_slot_order)
    if len(free) < count:
        held = sorted(f"{n.name} (pool {n.pool})" for n in offered if n.pool is not None)
        unusable = sorted(n.name for n in offered if n.pool is None and not n.usable)
        error = SlotsTaken if len(offered) >= count else HarnessError
        raise error(
            f"node pool {pool!r} needs {count} free node(s) labelled {POOL_SLOT_LABEL} but {len(free)} of {len(offered)} are free"
            f" (held: {', '.join(held) or 'none'}; not Ready or cordoned: {', '.join(unusable) or 'none'}): "
            f"label more nodes {POOL_SLOT_LABEL}=<n> or remove leftover pools with "
            f"'kubectl label nodes -l {POOL_LABEL} {POOL_LABEL}-'"
        )
    return free[:count]


Pod = Mapping[str, Any]


def is_terminal(pod: Pod) -> bool:
    return ((pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed")


def foreign_requests(pods: Iterable[Pod], test_namespaces: set[str]) -> Amount:
    """foreign_requests() adds up the requests of the live pods the suite did not create.

    Example: CoreDNS (100m, 70Mi) and a scenario's pod on a node -> Amount(100, 70Mi):
    the scenario's pod is in a test namespace, and terminal pods hold nothing.
    """
    total = ZERO
    for pod in pods:
        if pod["metadata"]["namespace"] not in test_namespaces and not is_terminal(pod):
            total = total + pod_request(pod)
    return total


def foreign_pod_count(pods: Iterable[Pod], test_namespaces: set[str]) -> int:
    """foreign_pod_count() counts the live pods the suite did not create: each takes one of the node's pod slots.

    Example: kube-proxy, a Tekton webhook and a scenario's pod on a node -> 2.
    """
    return sum(1 for pod in pods if pod["metadata"]["namespace"] not in test_namespaces and not is_terminal(pod))


def kubelet_max_pods(wanted: int, allocatable_pods: int, daemons: int) -> int | None:
    """kubelet_max_pods(3, 110, 1) == 4: the kubelet limit that leaves a pool exactly `wanted` pod slots.

    The kubelet's `pods` allocatable counts every pod on the node, daemons too, so a
    pool that asks for fewer slots than the node has left gets `wanted + daemons`.
    None means the node's own limit already leaves `wanted` or fewer: nothing to change
    (a pool of the default 110 on a real node keeps the kubelet's limit).
    """
    if wanted >= allocatable_pods - daemons:
        return None
    return wanted + daemons


def usable_size(nodes: Sequence[SlotNode], daemons: Mapping[str, Amount]) -> Amount:
    """usable_size() is the least, over the pool's nodes, of allocatable less daemons' requests.

    Example: workers of 4000m with daemons of 100m and 0m -> 3900m: a fixture sized
    for 3900m fits on both, and a headroom the scenario computes from it is exact.
    """
    sizes = [(amount_of(n.allocatable) - daemons.get(n.name, ZERO)).floor_zero() for n in nodes]
    return Amount(min(s.cpu for s in sizes), min(s.memory for s in sizes))


def leftover_pods(pods: Iterable[Pod], test_namespaces: set[str]) -> list[str]:
    """leftover_pods() names the pods of test namespaces still on a node (terminating ones too)."""
    return sorted(f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods if p["metadata"]["namespace"] in test_namespaces)


def _pods_on(kube: Kube, node: str) -> list[Pod]:
    response: Any = kube.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}", _preload_content=False)
    listing = json_object(json.loads(response.data))
    return list(listing.get("items") or [])


def _test_namespaces(kube: Kube) -> set[str]:
    return {present(n.metadata).name or "" for n in kube.core.list_namespace(label_selector=f"{TEST_NAMESPACE_LABEL}=true").items}


@contextlib.contextmanager
def claim_turn(timeouts: TimeoutConfig) -> Iterator[bool]:
    """claim_turn() holds the workers' slot-claim lock and yields True when scenarios run side by side; else yields False.

    Taken by polling (timeout pool_slots_free), so a worker never waits unbounded
    behind one that is itself waiting for slots.
    """
    path = os.environ.get(CLAIM_LOCK_ENV)
    if not path:
        yield False
        return
    with open(path, "a+", encoding="utf-8") as handle:

        def taken() -> None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise NotYet("another worker is claiming slot nodes") from None

        wait_for(taken, what="the other workers' claims of slot nodes", timeout="pool_slots_free", timeouts=timeouts)
        yield True  # closing the file lets go of the flock


def _free_slots(kube: Kube, count: int, pool: str, *, wait: bool, timeouts: TimeoutConfig) -> list[SlotNode]:
    """_free_slots() chooses the pool's nodes; with `wait` it waits while other pools hold too many (SlotsTaken)."""

    def chosen() -> list[SlotNode]:
        offered = [slot_node(n) for n in kube.core.list_node(label_selector=POOL_SLOT_LABEL).items]
        try:
            return choose_slots(offered, count, pool)
        except SlotsTaken as err:
            if not wait:
                raise
            raise NotYet(str(err)) from None

    return wait_for(chosen, what=f"{count} free slot node(s) for pool {pool!r}", timeout="pool_slots_free", timeouts=timeouts)


def claim_slot_pool(
    kube: Kube,
    name: str,
    *,
    count: int,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    timeouts: TimeoutConfig = DEFAULT_TIMEOUTS,
    current_namespace: str | None = None,
    pods: int | None = None,
    limit_pods: Callable[[str, int | None], None] | None = None,
) -> NodePool:
    """claim_slot_pool(kube, 'peak', count=2) labels two free slot nodes `rescon.dev/pool=peak`.

    It waits (timeout namespace_deleted) until the chosen nodes hold no pod of
    an earlier scenario, then sizes the pool by what the daemons leave: CPU and
    memory less their requests, pod slots less their number. A pool that asks
    for fewer pod slots (`pods`) than a node has left gets them through
    `limit_pods(node, max_pods)` (kind sets the kubelet's maxPods), when given.
    A claim that fails after that gives each node it limited its own maxPods
    back (`limit_pods(node, None)`) before it lets the nodes go.
    """
    if taints:
        raise HarnessError(
            f"node pool {name!r} asks for taints, which the suite only puts on nodes it makes: run this scenario with --cluster local"
        )
    extra = dict(labels or {})
    with claim_turn(timeouts) as concurrent:
        chosen = _free_slots(kube, count, name, wait=concurrent, timeouts=timeouts)

        def previous_pods_gone() -> None:
            earlier = _test_namespaces(kube) - {current_namespace}
            left = [pod for node in chosen for pod in leftover_pods(_pods_on(kube, node.name), earlier)]
            if left:
                raise NotYet(f"{len(left)} pod(s) of earlier scenarios are still on the pool's nodes: {', '.join(left[:5])}")

        wait_for(previous_pods_gone, what=f"the nodes of pool {name!r} to be free of earlier scenarios' pods", timeout="namespace_deleted", timeouts=timeouts)
        # Labelled before the turn ends: the label is what keeps the next worker's claim off these nodes.
        for node in chosen:
            kube.core.patch_node(node.name, {"metadata": {"labels": {**extra, POOL_LABEL: name}}})
    limited: list[str] = []
    try:
        tests = _test_namespaces(kube)
        on_nodes = {node.name: _pods_on(kube, node.name) for node in chosen}
        daemons = {name: foreign_requests(pods, tests) for name, pods in on_nodes.items()}
        size = usable_size(chosen, daemons)
        daemon_pods = {name: foreign_pod_count(listed, tests) for name, listed in on_nodes.items()}
        slots = min(int(n.allocatable.get("pods", "0")) - daemon_pods[n.name] for n in chosen)
        if pods is not None and limit_pods is not None:
            for node in chosen:
                max_pods = kubelet_max_pods(pods, int(node.allocatable.get("pods", "0")), daemon_pods[node.name])
                if max_pods is not None:
                    limited.append(node.name)  # noted first: a limit that failed half-way is undone too
                    limit_pods(node.name, max_pods)
            slots = min(slots, pods)
    except BaseException:
        try:
            if limit_pods is not None:
                for node_name in limited:
                    limit_pods(node_name, None)
        finally:
            release_slot_pool(kube, name, extra=extra)
        raise
    return NodePool(
        name,
        tuple(n.name for n in chosen),
        cpu=f"{size.cpu}m",
        memory=str(size.memory),
        pods=slots,
        labels=extra,
    )


def release_slot_pool(kube: Kube, pool: NodePool | str, *, extra: Mapping[str, str] | None = None) -> None:
    """release_slot_pool() removes the pool label (and the pool's extra labels) from its nodes; idempotent."""
    name = pool if isinstance(pool, str) else pool.name
    extra = dict(extra or {}) if isinstance(pool, str) else dict(pool.labels)
    removal: dict[str, None] = {key: None for key in (*extra, POOL_LABEL)}
    for node in kube.core.list_node(label_selector=f"{POOL_LABEL}={name}").items:
        kube.core.patch_node(present(present(node.metadata).name), {"metadata": {"labels": removal}})
