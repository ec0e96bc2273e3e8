"""quantities: the harness's own reading of Kubernetes quantities and pod requests.

The suite judges schedulers, so it never borrows their arithmetic: amounts are
integers (millicores for cpu; bytes for memory, ephemeral-storage and
hugepages; counts for extended resources), parsed with the `kubernetes`
client's utilities and rounded up as the API server rounds them, and a pod's
request is computed as kube-scheduler's `PodRequests` computes it
(k8s.io/component-helpers/resource), for every resource it counts
(harness.resource_names).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Mapping

from kubernetes.utils.quantity import parse_quantity

from harness.errors import HarnessError
from harness.resource_names import CPU, MEMORY, amount_text, is_counted, is_pod_level, sort_key


#: A share's float is read back as the ratio of integers it was written as (2600 / 4800 -> 13/24) with at most this denominator.
SHARE_DENOMINATOR_LIMIT = 1_000_000


def share_of(amount: int, fraction: float) -> int:
    """share_of(1800, 2600 / 4800) == 975: floor(amount x fraction), exact, as `cpu(f)` and `memory(f)` render a share.

    A fixture writes a share as a ratio (`cpu(2600 / 4800)`) and a scenario computes
    what it expects by hand in integers (`cpu * 2600 // 4800`). Multiplied as floats the
    two part on some node sizes: 1800 * (2600 / 4800) is 974.9999999999999, so int() gave
    974 where the hand gives 975, and a correct scheduler's exact peak failed (a kind
    worker with 100m of daemons, 1800m left). The fraction is taken back to its ratio first.
    """
    return int(Fraction(fraction).limit_denominator(SHARE_DENOMINATOR_LIMIT) * amount)


def _amount(value: object, what: str) -> Decimal:
    try:
        parsed: Decimal = parse_quantity(value)  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, InvalidOperation) as err:
        raise HarnessError(f"cannot read {what} quantity {value!r}: write one such as '500m', '2' or '1Gi'") from err
    return parsed


def cpu_millis(value: object) -> int:
    """cpu_millis('1.5') == 1500; cpu_millis('0.0001') == 1 (fractions of a millicore round up)."""
    return int((_amount(value, "cpu") * 1000).to_integral_value(rounding=ROUND_CEILING))


def memory_bytes(value: object) -> int:
    """memory_bytes('1Gi') == 1073741824; fractions of a byte round up."""
    return int(_amount(value, "memory").to_integral_value(rounding=ROUND_CEILING))


def units_of(resource: str, value: object) -> int:
    """units_of() reads one resource's quantity as the suite counts it: units_of('cpu', '1.5') == 1500, units_of('example.com/gpu', '2') == 2.

    Every resource but cpu is its quantity's value rounded up (Quantity.Value()).
    """
    if resource == CPU:
        return cpu_millis(value)
    return int(_amount(value, resource).to_integral_value(rounding=ROUND_CEILING))


Others = tuple[tuple[str, int], ...]


def _others(values: Mapping[str, int]) -> Others:
    """_others() is the non-zero entries other than cpu and memory, in sort_key order: Amount's canonical form."""
    return tuple(sorted(((r, v) for r, v in values.items() if v and r not in (CPU, MEMORY)), key=lambda item: sort_key(item[0])))


@dataclass(frozen=True)
class Amount:
    """Amount is an amount of every counted resource: Amount(1500, 2**30) is 1.5 CPU and 1Gi.

    cpu is in millicores and memory in bytes; `others` holds every other
    resource with a non-zero amount, sorted (use Amount.of to build one from a
    map), e.g. Amount.of({'cpu': 1000, 'example.com/gpu': 1}). A resource an
    Amount does not name is 0, so a node that does not advertise a resource has
    0 of it. Arithmetic is per resource, each on its own.
    """

    cpu: int = 0
    memory: int = 0
    others: Others = ()

    @staticmethod
    def of(values: Mapping[str, int]) -> Amount:
        """of({'cpu': 500, 'ephemeral-storage': 2**30}) is the Amount of a map of resource to units."""
        return Amount(values.get(CPU, 0), values.get(MEMORY, 0), _others(values))

    def get(self, resource: str) -> int:
        """get('example.com/gpu') is that resource's amount, 0 when the Amount does not name it."""
        if resource == CPU:
            return self.cpu
        if resource == MEMORY:
            return self.memory
        return next((v for r, v in self.others if r == resource), 0)

    def as_dict(self) -> dict[str, int]:
        """as_dict() is {'cpu': ..., 'memory': ..., and each other resource}: cpu and memory always, others when non-zero."""
        return {CPU: self.cpu, MEMORY: self.memory, **dict(self.others)}

    def resources(self) -> Iterator[str]:
        """resources() is cpu, memory and each other resource the Amount names."""
        yield CPU
        yield MEMORY
        yield from (r for r, _ in self.others)

    def _combine(self, other: Amount, op: Callable[[int, int], int]) -> Amount:
        if not self.others and not other.others:  # the common case (cpu and memory only) stays cheap
            return Amount(op(self.cpu, other.cpu), op(self.memory, other.memory))
        mine, theirs = dict(self.others), dict(other.others)
        merged = {r: op(mine.get(r, 0), theirs.get(r, 0)) for r in {*mine, *theirs}}
        return Amount(op(self.cpu, other.cpu), op(self.memory, other.memory), _others(merged))

    def __add__(self, other: Amount) -> Amount:
        return self._combine(other, int.__add__)

    def __sub__(self, other: Amount) -> Amount:
        return self._combine(other, int.__sub__)

    def max(self, other: Amount) -> Amount:
        return self._combine(other, max)

    def times(self, count: int) -> Amount:
        """times(3) is this amount for 3 pods: Amount(500, 0).times(3) == Amount(1500, 0)."""
        return Amount(self.cpu * count, self.memory * count, tuple((r, v * count) for r, v in self.others if v * count))

    def floor_zero(self) -> Amount:
        if not self.others:
            return Amount(max(0, self.cpu), max(0, self.memory))
        return Amount(max(0, self.cpu), max(0, self.memory), tuple((r, v) for r, v in self.others if v > 0))

    def exceeds(self, limit: Amount) -> list[str]:
        """exceeds() names each resource of self above limit: Amount(5000).exceeds(Amount(4800, 1)) == ['cpu'].

        A resource limit does not name is 0 there: Amount.of({'example.com/gpu': 1}).exceeds(Amount(4800, 1)) == ['example.com/gpu'].
        """
        over = [name for name, mine, cap in ((CPU, self.cpu, limit.cpu), (MEMORY, self.memory, limit.memory)) if mine > cap]
        if not self.others and not limit.others:
            return over
        names = sorted({r for r, _ in (*self.others, *limit.others)}, key=sort_key)
        return over + [name for name in names if self.get(name) > limit.get(name)]

    def describe(self) -> str:
        """describe() is "1500m CPU, 1024Mi" and then each other resource: "..., example.com/gpu 2"."""
        head = f"{self.cpu}m CPU, {self.memory / 2**20:.0f}Mi"
        return ", ".join([head, *(amount_text(r, v) for r, v in self.others)])


ZERO = Amount()


def amount_of(resources: Mapping[str, Any] | None) -> Amount:
    """amount_of({'cpu': '500m', 'memory': '1Gi', 'example.com/gpu': '1'}) is every counted resource of a requests map.

    Names the contract does not count (`pods`) are left out.
    """
    if not resources:
        return ZERO
    cpu = cpu_millis(resources[CPU]) if CPU in resources else 0
    memory = memory_bytes(resources[MEMORY]) if MEMORY in resources else 0
    if len(resources) == (CPU in resources) + (MEMORY in resources):
        return Amount(cpu, memory)
    others = {r: units_of(r, v) for r, v in resources.items() if r not in (CPU, MEMORY) and is_counted(r)}
    return Amount(cpu, memory, _others(others))


def _container_request(container: Mapping[str, Any]) -> Amount:
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits"), resources.get("requests")
    # The API server defaults a request from the limit, per resource; a pod read back already has it.
    return amount_of({**limits, **(requests or {})} if limits else requests)


def _containers_total(spec: Mapping[str, Any], request_of: Callable[[str, Mapping[str, Any]], Amount]) -> Amount:
    """_containers_total() is the containers' aggregate, each container weighed by request_of(kind, container).

    Regular containers and native sidecars (init containers with restartPolicy
    Always) add up; a plain init container needs the sidecars started before
    it plus itself; the pod needs the most of that and the long-running sum.
    """
    running = sum_of(request_of("containers", c) for c in spec.get("containers") or [])
    sidecars = ZERO
    init_peak = ZERO
    for init in spec.get("initContainers") or []:
        request = request_of("initContainers", init)
        if init.get("restartPolicy") == "Always":
            sidecars = sidecars + request
            init_peak = init_peak.max(sidecars)
        else:
            init_peak = init_peak.max(sidecars + request)
    return (running + sidecars).max(init_peak)


def _spec_weight(kind: str, container: Mapping[str, Any]) -> Amount:
    return _container_request(container)


def _resize_infeasible(status: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible" for c in status.get("conditions") or [])


def _status_weights(spec: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[Amount, Amount]:
    """_status_weights() is (allocated, actuated): the kubelet's pod-level values when it wrote both, else per container.

    Per container (containerAllocatedRequests, containerActuatedRequests): the
    allocation, else the spec; what runs, else the allocation, else the spec.
    While a resize is Infeasible a container with no status value weighs nothing.
    """
    pod_allocated = status.get("allocatedResources")
    pod_actuated = (status.get("resources") or {}).get("requests")
    if pod_allocated and pod_actuated:
        return amount_of(pod_allocated), amount_of(pod_actuated)
    infeasible = _resize_infeasible(status)
    by_kind = {
        "containers": {s.get("name"): s for s in status.get("containerStatuses") or []},
        "initContainers": {s.get("name"): s for s in status.get("initContainerStatuses") or []},
    }

    def allocated(kind: str, container: Mapping[str, Any]) -> Amount:
        value = (by_kind[kind].get(container.get("name")) or {}).get("allocatedResources")
        if value:
            return amount_of(value)
        return ZERO if infeasible else _container_request(container)

    def actuated(kind: str, container: Mapping[str, Any]) -> Amount:
        value = ((by_kind[kind].get(container.get("name")) or {}).get("resources") or {}).get("requests")
        return amount_of(value) if value else allocated(kind, container)

    return _containers_total(spec, allocated), _containers_total(spec, actuated)


def _status_repeats_spec(spec: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """_status_repeats_spec() is True when the status can change nothing: no pod-level values, and each container's
    allocated and actuated requests, where given, are its spec's requests as written (KWOK's pods, a kubelet's before
    any resize). Then the weight is the spec's; the monitor weighs every pod at every state, so this saves its time.
    """
    if status.get("allocatedResources") or status.get("resources") or status.get("conditions") and _resize_infeasible(status):
        return False
    for part, statuses in (("containers", "containerStatuses"), ("initContainers", "initContainerStatuses")):
        requests = {c.get("name"): (c.get("resources") or {}).get("requests") for c in spec.get(part) or []}
        for container in status.get(statuses) or []:
            spec_requests = requests.get(container.get("name"))
            allocated = container.get("allocatedResources")
            actuated = (container.get("resources") or {}).get("requests")
            if (allocated and allocated != spec_requests) or (actuated and actuated != spec_requests):
                return False
    return True


def pod_request(pod: Mapping[str, Any]) -> Amount:
    """pod_request() is what a pod weighs, as kube-scheduler v1.37 and the kubelet count it, for every counted resource.

    From the spec (PodRequests): the containers' aggregate (_containers_total);
    a pod-level request replaces it for the resources it names that pod-level
    requests support (cpu, memory, hugepages-*); `spec.overhead` adds.

    A pod read back with a status weighs, per resource, the most of the spec's
    aggregate, what the kubelet allocated and what it actuated (PodRequests
    with UseStatusResources; _status_weights), the spec's left out while a
    resize is Infeasible; a pod-level request likewise takes the most of itself
    and the pod-level status values. The kubelet's pod-level values already hold
    the overhead, which is then added again: v1.37 counts a running pod's
    overhead twice (kubernetes/kubernetes#139627), and a scheduler must count
    the same or the kubelet refuses the pods it binds beside it. E.g. a running
    pod of 38m with an overhead of 593m, status 631m allocated and actuated,
    weighs 1224m.
    """
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    infeasible = _resize_infeasible(status)
    containers = ZERO if infeasible else _containers_total(spec, _spec_weight)
    if status and not _status_repeats_spec(spec, status):
        allocated, actuated = _status_weights(spec, status)
        containers = containers.max(allocated).max(actuated)
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    named = {r: units_of(r, v) for r, v in pod_level.items() if is_pod_level(r)}
    if named and "resources" in status:
        from_status = amount_of((status.get("resources") or {}).get("requests")).max(amount_of(status.get("allocatedResources")))
        named = {r: max(0 if infeasible else v, from_status.get(r)) for r, v in named.items()}
    if named:
        # A pod-level request replaces the containers' total only for the resources it names.
        containers = Amount.of({**containers.as_dict(), **named})
    return containers + amount_of(spec.get("overhead"))


def sum_of(amounts: Iterable[Amount]) -> Amount:
    """sum_of([Amount(200), Amount(1000)]) == Amount(1200): the amounts added, per resource; ZERO for none."""
    total = ZERO
    for amount in amounts:
        total = total + amount
    return total


def node_allocatable(node: Mapping[str, Any]) -> Amount:
    """node_allocatable() is a Node object's status.allocatable of every counted resource; one it does not advertise is 0."""
    return amount_of((node.get("status") or {}).get("allocatable"))
