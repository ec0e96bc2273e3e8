"""quantities: the harness's own reading of Kubernetes quantities and pod requests.

The suite judges schedulers, so it never borrows their arithmetic: amounts are
integers (millicores, bytes), parsed with the `kubernetes` client's utilities
and rounded up as the API server rounds them, and a pod's request is computed
as kube-scheduler's `PodRequests` computes it (k8s.io/component-helpers/resource).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Any, Iterable, Mapping

from kubernetes.utils.quantity import parse_quantity

from harness.errors import HarnessError


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


@dataclass(frozen=True)
class Amount:
    """Amount is CPU in millicores and memory in bytes: Amount(1500, 2**30) is 1.5 CPU and 1Gi."""

    cpu: int = 0
    memory: int = 0

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: Amount) -> Amount:
        return Amount(self.cpu - other.cpu, self.memory - other.memory)

    def max(self, other: Amount) -> Amount:
        return Amount(max(self.cpu, other.cpu), max(self.memory, other.memory))

    def floor_zero(self) -> Amount:
        return Amount(max(0, self.cpu), max(0, self.memory))

    def exceeds(self, limit: Amount) -> list[str]:
        """exceeds() names each resource of self above limit: Amount(5000).exceeds(Amount(4800, 1)) == ['cpu']."""
        return [name for name, mine, cap in (("cpu", self.cpu, limit.cpu), ("memory", self.memory, limit.memory)) if mine > cap]

    def describe(self) -> str:
        return f"{self.cpu}m CPU, {self.memory / 2**20:.0f}Mi"


ZERO = Amount()


def amount_of(resources: Mapping[str, Any] | None) -> Amount:
    """amount_of({'cpu': '500m', 'memory': '1Gi'}) is the cpu and memory of a requests map (others ignored)."""
    resources = resources or {}
    return Amount(
        cpu_millis(resources["cpu"]) if "cpu" in resources else 0,
        memory_bytes(resources["memory"]) if "memory" in resources else 0,
    )


def _container_request(container: Mapping[str, Any]) -> Amount:
    resources = container.get("resources") or {}
    # The API server defaults a request from the limit; a pod read back already has it.
    return amount_of({**(resources.get("limits") or {}), **(resources.get("requests") or {})})


def pod_request(pod: Mapping[str, Any]) -> Amount:
    """pod_request() is a pod's effective request, as kube-scheduler counts it.

    Regular containers and native sidecars (init containers with
    restartPolicy Always) add up; a plain init container needs the sidecars
    started before it plus itself, and the pod needs the most of that and the
    long-running sum; a pod-level request overrides, for the resources it
    names; `spec.overhead` adds.
    """
    spec = pod.get("spec") or {}
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    overhead = amount_of(spec.get("overhead"))
    running = _sum(_container_request(c) for c in spec.get("containers") or [])
    sidecars = ZERO
    init_peak = ZERO
    for init in spec.get("initContainers") or []:
        request = _container_request(init)
        if init.get("restartPolicy") == "Always":
            sidecars = sidecars + request
            init_peak = init_peak.max(sidecars)
        else:
            init_peak = init_peak.max(sidecars + request)
    containers = (running + sidecars).max(init_peak)
    # A pod-level request replaces the containers' total only for the resources it names.
    named = amount_of(pod_level)
    return Amount(named.cpu if "cpu" in pod_level else containers.cpu, named.memory if "memory" in pod_level else containers.memory) + overhead


def _sum(amounts: Iterable[Amount]) -> Amount:
    total = ZERO
    for amount in amounts:
        total = total + amount
    return total


def node_allocatable(node: Mapping[str, Any]) -> Amount:
    """node_allocatable() is a Node object's status.allocatable cpu and memory."""
    return amount_of((node.get("status") or {}).get("allocatable"))
