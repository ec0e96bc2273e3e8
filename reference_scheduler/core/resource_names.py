"""resource_names: which resource names kube-scheduler's NodeResourcesFit counts, and how.

kube-scheduler's ``framework.Resource`` holds MilliCPU, Memory,
EphemeralStorage, AllowedPodNumber and ScalarResources; ``Resource.Add`` puts a
name in ScalarResources when ``IsScalarResourceName`` says so (extended
resources, hugepages, ``kubernetes.io/``-prefixed native names, attachable
volumes) and drops every other name. These predicates are the same tests, by
the same names, as in ``pkg/apis/core/v1/helper`` and ``pkg/scheduler/util``.

``pods`` is a count, not an amount: it is never part of a request or a peak.

Examples: ``is_extended_resource_name("nvidia.com/gpu")`` is True,
``is_extended_resource_name("kubernetes.io/foo")`` is False (native), and
``counted("hugepages-2Mi")`` is True while ``counted("pods")`` is False.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "counted",
    "is_byte_resource",
    "is_extended_resource_name",
    "is_hugepages_resource_name",
    "is_pod_level_resource",
    "is_scalar_resource_name",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
HUGEPAGES_PREFIX = "hugepages-"
_NATIVE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"

# IsQualifiedName: an optional DNS-subdomain prefix and "/", then a name of at most 63 characters.
_QUALIFIED_NAME = re.compile(
    r"(?:(?=.{1,253}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(?=.{1,63}$)([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
)


def _is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """is_extended_resource_name is IsExtendedResourceName: a domain-prefixed name outside kubernetes.io.

    Example: "example.com/gpu" and "nvidia.com/gpu" are; "cpu", "kubernetes.io/x" and "requests.a.io/b" are not.
    """
    if _is_native(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    # The quota name "requests.<name>" must still be a qualified name, as the helper checks.
    return _QUALIFIED_NAME.fullmatch(_REQUESTS_PREFIX + name) is not None


def is_hugepages_resource_name(name: str) -> bool:
    """is_hugepages_resource_name: "hugepages-2Mi", "hugepages-1Gi"."""
    return name.startswith(HUGEPAGES_PREFIX)


def is_scalar_resource_name(name: str) -> bool:
    """is_scalar_resource_name is kube-scheduler's IsScalarResourceName: what Resource.ScalarResources may hold."""
    return (
        is_extended_resource_name(name)
        or is_hugepages_resource_name(name)
        or _NATIVE_PREFIX in name
        or name.startswith(_ATTACHABLE_VOLUMES_PREFIX)
    )


@functools.lru_cache(maxsize=4096)
def counted(name: str) -> bool:
    """counted says whether NodeResourcesFit counts a resource name as an amount (cpu, memory, ephemeral-storage, scalars).

    Cached: the same few names are asked about for every pod of every attempt.
    """
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource_name(name)


def is_byte_resource(name: str) -> bool:
    """is_byte_resource: memory, ephemeral-storage and hugepages are amounts of bytes (shown as "256Mi")."""
    return name in (MEMORY, EPHEMERAL_STORAGE) or is_hugepages_resource_name(name)


def is_pod_level_resource(name: str) -> bool:
    """is_pod_level_resource is IsSupportedPodLevelResource (v1.37): cpu, memory and hugepages-<size>.

    A pod-level ``spec.resources`` entry for any other resource is ignored (the API server refuses it).
    """
    return name in (CPU, MEMORY) or is_hugepages_resource_name(name)
