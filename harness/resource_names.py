"""resource_names: which resources the contract counts, and how the suite writes their amounts.

kube-scheduler's NodeResourcesFit counts cpu, memory, ephemeral-storage and
every "scalar" resource: hugepages-<size> and any name with a '/' (extended
resources such as `example.com/gpu`, and kubernetes.io/-prefixed ones)
(pkg/scheduler/util.IsScalarResourceName, v1.37). The contract counts the
same set, each resource on its own (docs/contract.md section 7); `pods` is a
node's pod count, not something a pod requests, so it is not among them.

Amounts are integers: millicores for cpu, and for every other resource the
quantity's value rounded up (bytes for memory, ephemeral-storage and
hugepages; a count for extended resources), as the scheduler's
`Quantity.MilliValue()` and `Quantity.Value()` read them.

    is_counted("example.com/gpu") is True; is_counted("pods") is False
    amount_text("ephemeral-storage", 6 * 2**30) == "ephemeral-storage 6Gi"
"""

from __future__ import annotations

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
HUGEPAGES_PREFIX = "hugepages-"
#: The native resources kubernetes.io/ stands for when a name has no prefix; an extended resource never uses it.
NATIVE_PREFIX = "kubernetes.io/"
#: A ResourceQuota's "requests." prefix: never a container's resource (v1helper.IsExtendedResourceName).
QUOTA_REQUESTS_PREFIX = "requests."

#: Pod-level requests may name these (and hugepages-*); other names there are ignored
#: (component-helpers/resource.IsSupportedPodLevelResource, v1.37).
POD_LEVEL_RESOURCES = (CPU, MEMORY)


def is_hugepages(name: str) -> bool:
    """is_hugepages("hugepages-2Mi") is True."""
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended(name: str) -> bool:
    """is_extended("example.com/gpu") is True; "kubernetes.io/foo" and "memory" are native, not extended.

    A node's extended resources are what a device plugin or a PATCH of the
    node's status advertise; a kubelet keeps them across its status updates.
    """
    return "/" in name and NATIVE_PREFIX not in name and not name.startswith(QUOTA_REQUESTS_PREFIX)


def is_counted(name: str) -> bool:
    """is_counted() is True for every resource a pod's request is held against a node's allocatable."""
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_hugepages(name) or "/" in name


def is_pod_level(name: str) -> bool:
    """is_pod_level() is True for the resources a pod-level request replaces the containers' sum of."""
    return name in POD_LEVEL_RESOURCES or is_hugepages(name)


def is_bytes(name: str) -> bool:
    """is_bytes() is True for resources measured in bytes: memory, ephemeral-storage, hugepages-*."""
    return name in (MEMORY, EPHEMERAL_STORAGE) or is_hugepages(name)


def bytes_text(amount: int) -> str:
    """bytes_text(2**33) == "8Gi", bytes_text(768 * 2**20) == "768Mi", bytes_text(1000) == "1000"."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount and amount % size == 0:
            return f"{amount // size}{unit}"
    return str(amount)


def amount_text(name: str, amount: int) -> str:
    """amount_text() writes one resource's amount for a message: "cpu 1500m", "hugepages-2Mi 512Mi", "example.com/gpu 2"."""
    if name == CPU:
        return f"cpu {amount}m"
    return f"{name} {bytes_text(amount) if is_bytes(name) else amount}"


def sort_key(name: str) -> tuple[int, str]:
    """sort_key() orders resources as messages list them: cpu, memory, ephemeral-storage, hugepages, then extended by name."""
    rank = {CPU: 0, MEMORY: 1, EPHEMERAL_STORAGE: 2}.get(name, 3 if is_hugepages(name) else 4)
    return rank, name
