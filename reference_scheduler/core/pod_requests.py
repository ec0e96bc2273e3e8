"""pod_requests: the resources a pod asks the scheduler for, as Kubernetes computes it.

The rules are those of kube-scheduler's NodeResourcesFit (``PodRequests`` in
``k8s.io/component-helpers/resource``), applied to each counted resource on its
own (cpu, memory, ephemeral-storage, hugepages-<size>, extended resources such
as nvidia.com/gpu; ``resource_names.counted``):

1. Regular containers run together, so their requests add up.
2. Init containers run one after another, so only the largest counts, and the
   pod needs max(sum of containers, largest init container).
3. A restartable init container (a native sidecar, ``restartPolicy: Always``)
   keeps running once started: it adds to the regular containers and to every
   init container that starts after it.
4. A pod-level request (``spec.resources.requests``) replaces the aggregate for
   the resources it names, among those pod-level resources support (v1.37:
   cpu, memory and hugepages-<size>; ``IsSupportedPodLevelResource``).
5. ``spec.overhead`` (set by the RuntimeClass admission plugin) is added last.

We may see a spec before the API server has defaulted it (a pod we predict, or a
pod template), so the API server's defaulting is applied here too, and it is a
no-op on a pod read back from the API:

* a container with a limit but no request for a resource gets request = limit
  (for an extended resource the API requires request = limit anyway);
* a pod-level cpu or memory limit with no pod-level request becomes the pod
  request when no container requests that resource (otherwise the pod-level
  request defaults to the containers' aggregate, which changes nothing); a
  pod-level hugepages limit always does, hugepages being never overcommitted
  (``defaultPodRequests``).

Example: containers of 1 CPU and 500m, a sidecar of 200m and an init container
of 2 CPU give max(1 + 0.5 + 0.2, 2 + 0) = 2 CPU, while an init container placed
after the sidecar would count as 2.2 CPU. A container requesting
``nvidia.com/gpu: 1`` beside one requesting 2 gives 3 GPUs, the same sum.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reference_scheduler.core.resource_names import counted, is_hugepages_resource_name, is_pod_level_resource
from reference_scheduler.core.resources import ZERO, InvalidQuantity, Resources, amount_of

__all__ = ["container_request", "pod_effective_request", "resource_amounts", "with_overhead"]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _defaulted_requests(resources: Mapping[str, Any]) -> dict[str, Any]:
    """_defaulted_requests: a container's requests after API defaulting (request = limit where only a limit is set)."""
    requests = {k: v for k, v in _mapping(resources.get("requests")).items() if v is not None}
    for name, limit in _mapping(resources.get("limits")).items():
        if limit is not None:
            requests.setdefault(name, limit)
    return requests


def container_request(container: Mapping[str, Any], *, kind: str = "container") -> tuple[Resources, frozenset[str]]:
    """container_request returns a container's defaulted request of every counted resource and which it sets.

    Why the second value: a pod-level limit only becomes the pod request for a
    resource that no container requests, and an explicit "0" still counts as set.

    Example: {'name': 'build', 'resources': {'limits': {'cpu': '2', 'nvidia.com/gpu': '1'}}}
    gives (Resources(cpu=2000, memory=0, other=(('nvidia.com/gpu', 1),)), frozenset({'cpu', 'nvidia.com/gpu'})).
    """
    resources = _mapping(container.get("resources"))
    requests = _defaulted_requests(resources)
    if not requests:
        return ZERO, frozenset()
    amounts = {}
    for resource, value in requests.items():
        if not counted(resource):
            continue
        try:
            amounts[resource] = amount_of(resource, value)
        except InvalidQuantity as err:
            name = container.get("name", "<unnamed>")
            field = "request" if resource in _mapping(resources.get("requests")) else "limit"
            raise InvalidQuantity(f"{kind} {name!r} {resource} {field}: {err}") from err
    return Resources.of(amounts), frozenset(amounts)


def _containers(pod_spec: Mapping[str, Any], key: str) -> Sequence[Mapping[str, Any]]:
    value = pod_spec.get(key)
    if not value:
        return ()
    return [c for c in value if isinstance(c, Mapping)]


def resource_amounts(values: Mapping[str, Any], *, keep: Callable[[str], bool], what: str) -> dict[str, int]:
    """resource_amounts reads a map of quantities, keeping the resources ``keep`` accepts; a malformed one is named by ``what.format(resource)``.

    Example: resource_amounts({'cpu': '1', 'pods': '3'}, keep=counted, what='status.allocatedResources {}') == {'cpu': 1000}.
    """
    result = {}
    for resource, value in values.items():
        if value is None or not keep(resource):
            continue
        try:
            result[resource] = amount_of(resource, value)
        except InvalidQuantity as err:
            raise InvalidQuantity(f"{what.format(resource)}: {err}") from err
    return result


def _pod_level_amounts(pod_spec: Mapping[str, Any], field: str) -> dict[str, int]:
    values = _mapping(_mapping(pod_spec.get("resources")).get(field))
    return resource_amounts(values, keep=is_pod_level_resource, what="pod-level {} " + field[:-1])


def pod_effective_request(pod_spec: Mapping[str, Any]) -> Resources:
    """pod_effective_request is the amount kube-scheduler checks against a node's free allocatable.

    Why it must be exact: a reservation sized from a smaller number would admit
    pods that then fail to fit, and a larger one wastes the node.

    Example: {'containers': [{'name': 'a', 'resources': {'requests': {'cpu': '1'}}},
    {'name': 'b', 'resources': {'limits': {'cpu': '500m', 'memory': '1Gi'}}}],
    'initContainers': [{'name': 'i', 'resources': {'requests': {'cpu': '3'}}}]}
    gives Resources(cpu=3000, memory=1073741824).

    Raises InvalidQuantity naming the container whose quantity is malformed.
    """
    present: set[str] = set()

    total = ZERO
    for container in _containers(pod_spec, "containers"):
        request, named = container_request(container)
        total += request
        present |= named

    sidecars = ZERO
    init_peak = ZERO
    for container in _containers(pod_spec, "initContainers"):
        request, named = container_request(container, kind="init container")
        present |= named
        if container.get("restartPolicy") == "Always":
            total += request
            sidecars += request
            init_peak = init_peak.max(sidecars)
        else:
            init_peak = init_peak.max(sidecars + request)
    total = total.max(init_peak)

    pod_requests = _pod_level_amounts(pod_spec, "requests")
    pod_limits = _pod_level_amounts(pod_spec, "limits")
    overhead = _mapping(pod_spec.get("overhead"))
    if not pod_requests and not pod_limits and not overhead:
        return total

    amounts = dict(total.items())
    for resource, amount in pod_requests.items():
        amounts[resource] = amount
    for resource, amount in pod_limits.items():
        if resource not in pod_requests and (resource not in present or is_hugepages_resource_name(resource)):
            amounts[resource] = amount

    return with_overhead(amounts, overhead)


def with_overhead(amounts: Mapping[str, int], overhead: Mapping[str, Any]) -> Resources:
    """with_overhead adds a pod's ``spec.overhead`` to its amounts, the last step of PodRequests.

    Example: with_overhead({'cpu': 38}, {'cpu': '593m'}) == Resources(cpu=631).
    """
    added = dict(amounts)
    for resource, amount in resource_amounts(overhead, keep=counted, what="pod overhead {}").items():
        added[resource] = added.get(resource, 0) + amount
    return Resources.of(added)

