"""bound_pod_requests: what a pod already on a node weighs, read with its status as kube-scheduler v1.37 reads it.

A pod the scheduler is placing weighs its spec (``pod_effective_request``). A
pod already bound weighs more than its spec may say: kube-scheduler's node
cache and the kubelet's admission both count it by ``PodRequests`` with
``UseStatusResources`` (``k8s.io/component-helpers/resource``, v0.37), which per
resource takes the most of

* the spec's aggregate of its containers (none while a resize is Infeasible),
* what the kubelet allocated (``status.allocatedResources``),
* what the kubelet actuated (``status.resources.requests``),

where both status values are the pod-level ones when the kubelet wrote both
(v1.36+, ``InPlacePodLevelResourcesVerticalScaling``), else each container's
``allocatedResources`` and ``resources.requests`` (falling back to the spec).
A pod-level request is treated the same way; ``spec.overhead`` is then added.

The kubelet's pod-level values already include the RuntimeClass overhead, so
v1.37 counts a running pod's overhead twice (kubernetes/kubernetes#139627).
Measured on kind (v1.37.2): a running pod of 38m with an overhead of 593m
weighs 1224m, and kube-scheduler binds a 776m pod beside it on a 2000m node
but not a 780m one. A scheduler that counts it once binds pods the kubelet
then refuses (OutOfcpu); so the reference counts it as they do.

Example: a pod lowered in place from 300m to 10m whose container still reports
``allocatedResources: {cpu: 300m}`` weighs 300m until the kubelet allocates the
new value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reference_scheduler.core.pod_requests import pod_effective_request, resource_amounts, with_overhead
from reference_scheduler.core.resource_names import counted, is_pod_level_resource
from reference_scheduler.core.resources import Resources

__all__ = ["bound_pod_request"]

#: The pod condition the kubelet sets when it cannot (Infeasible) or cannot yet (Deferred) resize a pod.
RESIZE_PENDING = "PodResizePending"
INFEASIBLE = "Infeasible"

#: One container's replacement requests, from its spec and status; None keeps the spec's.
_ContainerRead = Callable[[Mapping[str, Any], Mapping[str, Any], bool], Mapping[str, Any] | None]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> Sequence[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def resize_infeasible(status: Mapping[str, Any]) -> bool:
    """resize_infeasible: the kubelet said it can never apply the pod's resize (PodResizePending, reason Infeasible)."""
    return any(
        condition.get("type") == RESIZE_PENDING and condition.get("reason") == INFEASIBLE
        for condition in _list(status.get("conditions"))
    )


def _allocated(container: Mapping[str, Any], status: Mapping[str, Any], infeasible: bool) -> Mapping[str, Any] | None:
    """containerAllocatedRequests: the allocation, else the spec (nothing while Infeasible)."""
    allocated = _mapping(status.get("allocatedResources"))
    if allocated:
        return allocated
    return {} if infeasible else None


def _actuated(container: Mapping[str, Any], status: Mapping[str, Any], infeasible: bool) -> Mapping[str, Any] | None:
    """containerActuatedRequests: what runs, else the allocation, else the spec (nothing while Infeasible)."""
    actuated = _mapping(_mapping(status.get("resources")).get("requests"))
    if actuated:
        return actuated
    return _allocated(container, status, infeasible)


def _bare(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec without pod-level resources and overhead: what the containers alone ask."""
    return {key: value for key, value in spec.items() if key not in ("resources", "overhead")}


def _containers_read(spec: Mapping[str, Any], status: Mapping[str, Any], read: _ContainerRead, infeasible: bool) -> Resources:
    """The containers' aggregate with each container's requests replaced by what ``read`` takes from its status."""
    statuses = {
        "containers": {s.get("name"): s for s in _list(status.get("containerStatuses"))},
        "initContainers": {s.get("name"): s for s in _list(status.get("initContainerStatuses"))},
    }
    rewritten = _bare(spec)
    for key, by_name in statuses.items():
        containers = []
        for container in _list(spec.get(key)):
            requests = read(container, by_name.get(container.get("name")) or {}, infeasible)
            containers.append(container if requests is None else {**container, "resources": {"requests": dict(requests)}})
        rewritten[key] = containers
    return pod_effective_request(rewritten)


def _pod_level(values: Mapping[str, Any], field: str) -> Resources:
    return Resources.of(resource_amounts(values, keep=counted, what=field + " {}"))


def _containers_weight(spec: Mapping[str, Any], status: Mapping[str, Any], infeasible: bool) -> Resources:
    """AggregateContainerRequests with status: the most of the spec's, the allocated and the actuated aggregate."""
    pod_allocated = _mapping(status.get("allocatedResources"))
    pod_actuated = _mapping(_mapping(status.get("resources")).get("requests"))
    if pod_allocated and pod_actuated:
        allocated = _pod_level(pod_allocated, "status.allocatedResources")
        actuated = _pod_level(pod_actuated, "status.resources.requests")
    else:
        allocated = _containers_read(spec, status, _allocated, infeasible)
        actuated = _containers_read(spec, status, _actuated, infeasible)
    weight = allocated.max(actuated)
    return weight if infeasible else weight.max(pod_effective_request(_bare(spec)))


def _pod_level_weight(spec: Mapping[str, Any], status: Mapping[str, Any], infeasible: bool) -> dict[str, int]:
    """The pod-level requests that replace the aggregate, read with the pod-level status (effectivePodLevelResources)."""
    requests = _mapping(_mapping(spec.get("resources")).get("requests"))
    if not any(is_pod_level_resource(resource) for resource in requests):
        return {}
    weight = Resources() if infeasible else _pod_level(requests, "pod-level request")
    if "resources" in status:
        weight = weight.max(_pod_level(_mapping(_mapping(status.get("resources")).get("requests")), "status.resources.requests"))
        weight = weight.max(_pod_level(_mapping(status.get("allocatedResources")), "status.allocatedResources"))
    return {resource: amount for resource, amount in weight.items() if is_pod_level_resource(resource) and resource in requests}


def bound_pod_request(pod: Mapping[str, Any]) -> Resources:
    """bound_pod_request is what a bound pod weighs on its node for kube-scheduler and the kubelet (v1.37).

    Example: a running pod with one 38m container and an overhead of 593m, whose
    status the kubelet wrote as ``allocatedResources: {cpu: 631m}`` and
    ``resources: {requests: {cpu: 631m}}``, weighs 631m + 593m = 1224m (its
    spec says 631m); a pod with no status weighs its spec.
    """
    spec = _mapping(pod.get("spec"))
    status = _mapping(pod.get("status"))
    if not status or _status_repeats_spec(spec, status):
        return pod_effective_request(spec)
    infeasible = resize_infeasible(status)
    amounts = dict(_containers_weight(spec, status, infeasible).items())
    amounts.update(_pod_level_weight(spec, status, infeasible))
    return with_overhead(amounts, _mapping(spec.get("overhead")))


def _status_repeats_spec(spec: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """The status can change nothing: no pod-level values, no Infeasible resize, and every container's allocated and
    actuated requests, where given, are its spec's as written (KWOK's pods, a kubelet's before any resize); the spec
    then decides, without reading the status three ways on the scheduler's hot path."""
    if status.get("allocatedResources") or status.get("resources") or resize_infeasible(status):
        return False
    for part, statuses in (("containers", "containerStatuses"), ("initContainers", "initContainerStatuses")):
        requests = {c.get("name"): _mapping(c.get("resources")).get("requests") for c in _list(spec.get(part))}
        for container in _list(status.get(statuses)):
            written = requests.get(container.get("name"))
            allocated = container.get("allocatedResources")
            actuated = _mapping(container.get("resources")).get("requests")
            if (allocated and allocated != written) or (actuated and actuated != written):
                return False
    return True
