"""The contract's arithmetic for a TaskRun's pod (docs/contract.md section 6.1, steps 1 to 6), written out as the text says.

This is the suite's own reading of the contract, independent of the reference
scheduler (which it must not borrow: tests/integration/test_tekton_pod_shapes.py
holds Tekton and this reading to one answer, and the generative scenario holds
a scheduler's peaks to it). It covers steps with requests and limits, a
stepTemplate, sidecars, `stepSpecs` / `sidecarSpecs`, task-level
`computeResources` requests, and one LimitRange of type Container, for every
resource the contract counts (cpu, memory, ephemeral-storage, hugepages-*,
extended resources), each on its own.

Example: steps {cpu: 500m} and {} with LimitRange defaultRequest 600m / 300Mi,
min 250m / 50Mi give step defaults max(600m / 2, 250m) = 300m, 150Mi: steps
500m / 150Mi and 300m / 150Mi; prepare 600m / 300Mi; pod 800m / 300Mi.
"""

from __future__ import annotations

from typing import Any, Mapping

from harness.quantities import Amount, units_of
from harness.resource_names import CPU, EPHEMERAL_STORAGE, MEMORY, is_counted

Amounts = dict[str, int]  # resource -> millicores (cpu), bytes or a count (harness.resource_names)

#: The resources Tekton's LimitRange transformer shares among the steps (step 5,
#: `resourceNames` in pkg/internal/computeresources/transformer.go, v1.15.0); the API
#: server's LimitRanger then defaults every resource (step 6).
TEKTON_SHARED_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)
#: Tekton divides these as whole values (Quantity.Value()); every other resource as millis (MilliValue()).
WHOLE_VALUE_RESOURCES = (MEMORY, EPHEMERAL_STORAGE)
#: Tekton's own init containers (step 4): they carry no resources unless a LimitRange gives them some.
TEKTON_INIT_CONTAINERS = ("prepare", "place-scripts", "working-dir-initializer")


def _amounts(values: Mapping[str, Any] | None) -> Amounts | None:
    """_amounts({'cpu': '1', 'example.com/gpu': '1'}) == {'cpu': 1000, 'example.com/gpu': 1}; None for no map at all (Go's nil ResourceList)."""
    if not values:
        return None
    return {r: units_of(r, v) for r, v in values.items() if is_counted(r)}


def _over(base: Amounts | None, top: Amounts | None) -> Amounts | None:
    """Step 1 and 2: `top` merged over `base` key by key."""
    merged = {**(base or {}), **(top or {})}
    return merged or None


def _share(resource: str, amount: int, parts: int) -> int:
    """_share() is Tekton's even share: whole bytes for memory and ephemeral-storage, else millis rounded down, read back rounded up.

    Example: hugepages-2Mi 3Mi over 2 steps is 1572864; example.com/gpu 1 over 2 steps is 500m, counted as 1.
    """
    if resource == CPU or resource in WHOLE_VALUE_RESOURCES:
        return amount // parts
    return -(-(amount * 1000 // parts) // 1000)


def _split(total: Amounts | None, parts: int) -> Amounts | None:
    """Step 3: an even share of each resource (_share)."""
    return {r: _share(r, v, parts) for r, v in total.items()} if total else None


class _Container:
    def __init__(self, name: str, resources: Mapping[str, Any] | None) -> None:
        self.name = name
        self.requests: Amounts | None = _amounts((resources or {}).get("requests"))
        self.limits: Amounts | None = _amounts((resources or {}).get("limits"))


def contract_requests(
    task_spec: Mapping[str, Any], run_spec: Mapping[str, Any], limit_range: Mapping[str, Any] | None
) -> dict[str, Amount]:
    """contract_requests() maps each container of the pod Tekton builds to its request, as section 6.1 predicts it.

    `run_spec` is the PipelineRun's `spec.taskRunSpecs[]` entry for the task ({} for none).
    """
    template = _Container("", (task_spec.get("stepTemplate") or {}).get("computeResources"))
    steps: list[tuple[Mapping[str, Any], _Container]] = []
    for index, raw in enumerate(task_spec.get("steps") or []):
        own = _Container(f"step-{raw.get('name') or f'unnamed-{index}'}", raw.get("computeResources"))
        own.requests, own.limits = _over(template.requests, own.requests), _over(template.limits, own.limits)
        steps.append((raw, own))
    for spec in run_spec.get("stepSpecs") or []:  # step 2
        for raw, step in steps:
            if raw.get("name") == spec["name"]:
                change = _Container("", spec.get("computeResources"))
                step.requests, step.limits = _over(step.requests, change.requests), _over(step.limits, change.limits)
    task_level = _Container("", run_spec.get("computeResources"))
    if task_level.requests or task_level.limits:  # step 3
        for _, step in steps:
            step.requests = _split(task_level.limits if step.requests is None and task_level.requests is None else task_level.requests, len(steps))
            step.limits = task_level.limits
    sidecars = []
    for raw in task_spec.get("sidecars") or []:
        sidecar = _Container(f"sidecar-{raw['name']}", raw.get("computeResources"))
        for spec in run_spec.get("sidecarSpecs") or []:
            if spec["name"] == raw["name"]:
                change = _Container("", spec.get("computeResources"))
                sidecar.requests, sidecar.limits = _over(sidecar.requests, change.requests), _over(sidecar.limits, change.limits)
        sidecars.append(sidecar)
    inits = [_Container("prepare", None)]  # step 4
    if any(raw.get("script") for raw in (*(task_spec.get("steps") or []), *(task_spec.get("sidecars") or []))):
        inits.append(_Container("place-scripts", None))

    item = next((i for i in (limit_range or {}).get("spec", {}).get("limits", []) if i.get("type") == "Container"), None)
    default_request = _amounts((item or {}).get("defaultRequest")) or {}
    minimum = _amounts((item or {}).get("min")) or {}
    if item is not None:  # step 5: Tekton's transformer, steps only
        share = {r: max(default_request.get(r, 0) // len(steps), minimum.get(r, 0)) for r in TEKTON_SHARED_RESOURCES}
        share = {r: v for r, v in share.items() if v}
        for _, step in steps:
            if step.requests is None:
                step.requests = dict(share) or None
            else:
                step.requests.update({r: v for r, v in share.items() if not step.requests.get(r)})
    result: dict[str, Amount] = {}
    for container in (*inits, *(s for _, s in steps), *sidecars):  # step 6: the API server
        requests = {**(container.limits or {}), **(container.requests or {})}
        requests = {**default_request, **requests}
        result[container.name] = Amount.of(requests)
    return result


def contract_pod_request(containers: Mapping[str, Amount]) -> Amount:
    """contract_pod_request: the sum of the containers against the largest init container (no native sidecars here)."""
    running, init = Amount(), Amount()
    for name, amount in containers.items():
        if name in TEKTON_INIT_CONTAINERS:
            init = init.max(amount)
        else:
            running = running + amount
    return running.max(init)
