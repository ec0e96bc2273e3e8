"""Resize: which requests a lingering pod should give back once its TaskRun is done.

A TaskRun can be terminal while its pod still runs (a sidecar that has not
stopped yet). Its containers' requests then hold node room that nothing will
use; lowering them to a small floor returns it. The group's reservation is
untouched: its peak is about the tasks still to come, not this pod.

Lowering never raises a request, never removes one (so a Burstable pod stays
Burstable), and skips a container whose requests equal its limits (a
Guaranteed pod cannot change QoS class in place).
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.core.resources import Resources, cpu_millis, memory_bytes

Json = Mapping[str, Any]


def _lowered(container: Json, floor: Resources) -> dict[str, str] | None:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    if requests and limits and all(str(requests.get(k)) == str(limits.get(k)) for k in ("cpu", "memory") if k in limits):
        return None  # Guaranteed: lowering would change the pod's QoS class, which in-place resize refuses
    changed: dict[str, str] = {}
    cpu = requests.get("cpu")
    if cpu is not None and cpu_millis(cpu) > floor.cpu:
        changed["cpu"] = f"{floor.cpu}m"
    memory = requests.get("memory")
    if memory is not None and memory_bytes(memory) > floor.memory:
        changed["memory"] = str(floor.memory)
    return changed or None


def resize_patch(pod: Json, floor: Resources) -> dict[str, Any] | None:
    """resize_patch(pod, floor) is the strategic-merge patch for pods/resize, or None when nothing drops.

    Example: a pod whose step requests 2 CPU and whose sidecar requests 10m, with
    a floor of 10m, gets {"spec": {"containers": [{"name": "step-work",
    "resources": {"requests": {"cpu": "10m"}}}]}}.
    """
    containers = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        changed = _lowered(container, floor)
        if changed:
            containers.append({"name": container["name"], "resources": {"requests": changed}})
    return {"spec": {"containers": containers}} if containers else None
