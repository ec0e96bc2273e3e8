"""foreign_pods: pods no reservation scheduler placed, drawn onto a batch's nodes in every shape Kubernetes counts.

A node's other pods count with their effective request (docs/contract.md
section 7, Headroom), and that is not their containers' requests when the pod
has a RuntimeClass overhead, a native sidecar, an init container larger than
its containers or a pod-level request; a pod being deleted counts until it is
gone. Before some batches the grammar pins one such pod to each pool node
with `spec.nodeName`, as a DaemonSet's are, each taking a drawn part of the
node (FOREIGN_FRACTIONS) in a drawn shape (SHAPES). The runs of that batch
are then sized for nodes that much smaller, so the grammar's deadlock
argument still holds; a scheduler that counts a shape short over-commits a
node of a tight pool, and the contract monitor (which counts every shape:
harness.quantities.pod_request) says so.

    pods = draw_foreign_pods(rng, nodes=('p-0', 'p-1'), prefix='generative-03', context=context)
    load(pods) == 0.12   # the largest part of a node they take

A `terminating` pod carries the suite's finalizer: the scenario deletes it
once it runs and lets it go after the batch, so it is Terminating, and
counting, for the whole batch.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Protocol, Sequence

from harness.cluster.namespaces import HOLD_TERMINATING_FINALIZER
from harness.cluster.simulation import HOLD
from harness.quantities import pod_request, share_of

Obj = dict[str, Any]

SHAPES = ("plain", "overhead", "sidecar", "init", "pod-level", "terminating")
#: How much of a node one foreign pod takes in all, drawn per node.
FOREIGN_FRACTIONS = (0.05, 0.08, 0.1, 0.12, 0.15)
#: The overhead of the session's RuntimeClass (`runtime_class_manifest`), a part of a node.
OVERHEAD_FRACTION = 0.04
#: How often a batch gets foreign pods.
FOREIGN_CHANCE = 0.5
IMAGE = "busybox:1.37"
#: The annotation that tells apart the foreign pods of a drawn run's objects.
SHAPE_ANNOTATION = "rescon.dev/generative-foreign-shape"


class Sizes(Protocol):
    @property
    def runtime_class(self) -> str | None: ...

    def cpu(self, fraction: float, spelling: str = "plain") -> str: ...


def _container(name: str, cpu: str, **extra: Any) -> Obj:
    return {"name": name, "image": IMAGE, "command": ["sleep", "3600"], "resources": {"requests": {"cpu": cpu}}, **extra}


def foreign_pod(name: str, node: str, shape: str, fraction: float, sizes: Sizes) -> Obj:
    """foreign_pod() is a held pod on `node` whose effective request is `fraction` of a node's CPU (rounded down), taken the `shape` way."""
    spec: Obj = {"nodeName": node, "restartPolicy": "Never"}
    metadata: Obj = {"name": name, "annotations": {HOLD: "true", SHAPE_ANNOTATION: shape}}
    if shape == "overhead":
        spec["runtimeClassName"] = sizes.runtime_class
        spec["containers"] = [_container("app", sizes.cpu(fraction - OVERHEAD_FRACTION))]
    elif shape == "sidecar":
        spec["initContainers"] = [_container("proxy", sizes.cpu(fraction * 3 / 4), restartPolicy="Always")]
        spec["containers"] = [_container("app", sizes.cpu(fraction / 4))]
    elif shape == "init":
        spec["initContainers"] = [{**_container("migrate", sizes.cpu(fraction)), "command": ["true"]}]
        spec["containers"] = [_container("app", sizes.cpu(fraction / 4))]
    elif shape == "pod-level":
        spec["resources"] = {"requests": {"cpu": sizes.cpu(fraction)}}
        spec["containers"] = [_container("app", sizes.cpu(fraction / 4))]
    else:
        spec["containers"] = [_container("app", sizes.cpu(fraction))]
    if shape == "terminating":
        metadata["finalizers"] = [HOLD_TERMINATING_FINALIZER]
        # On kind it ignores SIGTERM for its grace period, so it runs while the scenario holds it.
        spec["terminationGracePeriodSeconds"] = 600
        spec["containers"][0]["command"] = ["sh", "-c", "trap '' TERM; while true; do sleep 1; done"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def draw_foreign_pods(rng: random.Random, *, nodes: Sequence[str], prefix: str, sizes: Sizes) -> list[Obj]:
    """draw_foreign_pods() is, for some batches (FOREIGN_CHANCE), one drawn pod on each node; none without nodes."""
    if not nodes or rng.random() >= FOREIGN_CHANCE:
        return []
    shapes = [s for s in SHAPES if s != "overhead" or sizes.runtime_class is not None]
    pods = []
    for number, node in enumerate(nodes):
        shape = rng.choice(shapes)
        fraction = rng.choice([f for f in FOREIGN_FRACTIONS if shape != "overhead" or f > OVERHEAD_FRACTION])
        pods.append(foreign_pod(f"{prefix}-foreign-{number}", node, shape, fraction, sizes))
    return pods


def load(pods: Sequence[Obj], node_cpu_millis: int, held: Mapping[str, int] | None = None) -> float:
    """load() is the largest part of one node's CPU the pods take on any node (0 without pods), by their drawn shapes' arithmetic.

    `held` adds millicores by node that something else takes there (another scheduler's Reserved group).
    """
    taken: dict[str, int] = dict(held or {})
    for pod in pods:
        request = pod_request(with_overhead(pod, node_cpu_millis)).cpu
        taken[pod["spec"]["nodeName"]] = taken.get(pod["spec"]["nodeName"], 0) + request
    return max(taken.values(), default=0) / node_cpu_millis


def with_overhead(pod: Obj, node_cpu_millis: int) -> Obj:
    """with_overhead() is the pod as the API server stores it: a RuntimeClass pod gets the session class's overhead."""
    if not pod["spec"].get("runtimeClassName"):
        return pod
    overhead = {"cpu": f"{share_of(node_cpu_millis, OVERHEAD_FRACTION)}m"}
    return {**pod, "spec": {**pod["spec"], "overhead": overhead}}


def runtime_class_manifest(name: str, node_cpu_millis: int) -> Obj:
    """runtime_class_manifest() is the session's RuntimeClass, whose pods carry OVERHEAD_FRACTION of a node's CPU as overhead."""
    return {
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "runc",
        "overhead": {"podFixed": {"cpu": f"{share_of(node_cpu_millis, OVERHEAD_FRACTION)}m"}},
    }


def is_foreign(doc: Obj) -> bool:
    return doc.get("kind") == "Pod" and SHAPE_ANNOTATION in ((doc.get("metadata") or {}).get("annotations") or {})
