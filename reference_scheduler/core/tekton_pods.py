"""tekton_pods: predict the request of the pod Tekton Pipelines v1.15.0 creates for a Task.

A reservation is made before the TaskRun's pod exists, so its size has to be
predicted from the Task spec the same way Tekton's pod builder
(``pkg/pod/pod.go``) and its pod transformers, and then the API server, will
shape the pod. In order:

1. Each step's ``computeResources`` is merged over ``stepTemplate.computeResources``
   (a strategic merge: keys of ``requests`` and ``limits`` from the step win,
   the template's other keys are kept; StepAction steps get the same merge, as
   Tekton resolves them before merging).
2. ``stepSpecs`` of the TaskRun (a PipelineRun's ``taskRunSpecs[]``) are merged
   over the steps they name, ``sidecarSpecs`` over the sidecars they name.
3. A task-level ``computeResources`` replaces every step's: each step requests
   the task-level request divided by the number of steps (rounded down, like
   Tekton's integer division), or the divided limit when neither the step nor
   the task sets a request; each step's limits become the task-level limits.
4. Containers are ``step-<name>`` (or ``step-unnamed-<i>``) and ``sidecar-<name>``;
   init containers are Tekton's ``prepare``, ``place-scripts`` (when a step or
   sidecar has a script) and ``working-dir-initializer`` (when a step's
   workingDir is relative or under /workspace). Tekton gives its own
   containers no resources.
5. With a LimitRange, Tekton's transformer gives every step without a request
   the LimitRange's ``defaultRequest`` divided by the number of steps (at least
   its ``min``); then the API server copies limits to missing requests, and the
   LimitRanger admission plugin gives every remaining container, init
   containers and sidecars included, the LimitRange's ``defaultRequest``.
6. The result goes through :func:`pod_effective_request`.

What is approximated, and why it is safe or out of reach:

* config-defaults' ``default-container-resource-requirements`` is applied
  when passed as ``container_defaults`` (core.container_defaults), before
  step 5, as Tekton's transformers run; ``results-from: termination-message``
  is assumed unless ``sidecar_logs_results=True`` is passed (then the results
  sidecar, which has no resources of its own, is added when the task has
  results or a step writes artifacts).
* ``enable-kubernetes-sidecar`` (``native_sidecars=True``) turns sidecars into
  restartable init containers placed after Tekton's init containers. Since
  they come last, PodRequests gives the same total as with Tekton's sidecars
  (they add to the regular containers, and no init container starts after
  them); the predicted spec has the real shape anyway.
* Only one LimitRange is modelled. With several in a namespace, Tekton merges
  them into a "virtual" one and the admission plugin applies each in turn; pass
  the one whose defaults apply, or merge them first.
* A StepAction's script and workingDir are not known from the Task; they only
  decide whether ``place-scripts`` and ``working-dir-initializer`` exist, and
  those get the same LimitRange default as ``prepare``, which always exists, so
  the prediction does not change.
* ``spec.overhead`` is what the caller passes as ``overhead``: the
  ``overhead.podFixed`` of the RuntimeClass the task's pod template names
  (core.tekton_config). Mutating webhooks that inject containers (service
  meshes) are invisible here.
* Parameter substitution is not performed: it is not needed, since Tekton's
  types parse compute resources as Kubernetes quantities when the Task or
  PipelineRun is admitted, so a ``$(params...)`` there never reaches a run.
* Specs are read as Tekton v1 JSON (``computeResources``); a v1beta1 step's
  ``resources`` is not read (the API server converts to v1 when asked for v1).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from reference_scheduler.core.container_defaults import apply_container_defaults
from reference_scheduler.core.pod_requests import pod_effective_request
from reference_scheduler.core.resources import InvalidQuantity, Resources, amount_of, milli_units

__all__ = ["predict_task_pod_request", "predict_task_pod_spec"]

STEP_PREFIX = "step-"
SIDECAR_PREFIX = "sidecar-"
RESULTS_SIDECAR_NAME = "tekton-log-results"
TEKTON_INIT_CONTAINERS = ("prepare", "place-scripts", "working-dir-initializer")

# The resources Tekton's LimitRange transformer shares out over steps (computeresources.resourceNames);
# the API server's LimitRanger then defaults every resource the LimitRange names.
_LIMIT_RANGE_RESOURCES = ("cpu", "memory", "ephemeral-storage")
# The resources Tekton divides in whole units; it divides every other in milli-units (tasklevel).
_WHOLE_UNIT_SHARES = ("memory", "ephemeral-storage")
_MAX_NAME = 63
_ARTIFACTS_PATH_VARIABLE = "$(step.artifacts.path)"

ResourceMap = dict[str, Any]
Requirements = dict[str, ResourceMap]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _requirements(value: object) -> Requirements:
    """_requirements copies computeResources into {'requests': {...}, 'limits': {...}}, dropping empty maps.

    Why empty maps are dropped: the API server serialises Tekton objects with
    omitempty, so an empty map and a missing one are the same to Tekton.
    """
    result: Requirements = {}
    for field in ("requests", "limits"):
        amounts = {k: v for k, v in _mapping(_mapping(value).get(field)).items() if v is not None}
        if amounts:
            result[field] = amounts
    return result


def _merge(template: Requirements, override: Requirements) -> Requirements:
    """_merge overlays override on template key by key, as Tekton's strategic merge does.

    Example: _merge({'requests': {'cpu': '1', 'memory': '1Gi'}}, {'requests': {'cpu': '2'}})
    == {'requests': {'cpu': '2', 'memory': '1Gi'}}.
    """
    result: Requirements = {}
    for field in ("requests", "limits"):
        merged = {**template.get(field, {}), **override.get(field, {})}
        if merged:
            result[field] = merged
    return result


def _amount(resource: str, value: object, where: str) -> int:
    try:
        return amount_of(resource, value)
    except InvalidQuantity as err:
        raise InvalidQuantity(f"{where} {resource}: {err}") from err


def _share(resource: str, value: object, parts: int, where: str) -> str:
    """_share is Tekton's per-step share of a task-level amount: whole bytes for memory and ephemeral-storage, milli-units otherwise, rounded down.

    Example: _share('nvidia.com/gpu', '2', 3, ...) == '666m' (which the API server would refuse: extended resources are whole).
    """
    if resource in _WHOLE_UNIT_SHARES:
        return str(_amount(resource, value, where) // parts)
    try:
        return f"{milli_units(value, resource) // parts}m"
    except InvalidQuantity as err:
        raise InvalidQuantity(f"{where} {resource}: {err}") from err


def _quantity(resource: str, amount: int) -> str:
    return f"{amount}m" if resource == "cpu" else str(amount)


def _divided(amounts: ResourceMap | None, parts: int, where: str) -> ResourceMap | None:
    """_divided splits every resource's amount evenly over parts, rounding down like Tekton (computeAverageRequests).

    Example: _divided({'cpu': '1', 'memory': '1Gi', 'example.com/gpu': '2'}, 2, ...)
    == {'cpu': '500m', 'memory': '536870912', 'example.com/gpu': '1000m'}.
    """
    if not amounts or parts <= 0:
        return None
    return {name: _share(name, value, parts, where) for name, value in amounts.items()}


def _apply_task_level(steps: list[Requirements], task_level: Requirements) -> None:
    """_apply_task_level gives every step its share of the task-level computeResources (pkg/internal/computeresources/tasklevel).

    Example: task-level requests cpu 1 over 2 steps makes each step request 500m,
    whatever the steps asked for themselves.
    """
    if not task_level:
        return
    requests = task_level.get("requests")
    limits = task_level.get("limits")
    average_requests = _divided(requests, len(steps), "taskRunSpecs computeResources requests")
    average_limits = _divided(limits, len(steps), "taskRunSpecs computeResources limits")
    for step in steps:
        new_requests = average_limits if "requests" not in step and requests is None else average_requests
        step.clear()
        if new_requests:
            step["requests"] = dict(new_requests)
        if limits:
            step["limits"] = dict(limits)


def _limit_range_items(limit_range: Mapping[str, Any] | None) -> list[dict[str, ResourceMap]]:
    """_limit_range_items returns the Container items of a LimitRange after the API server's defaulting.

    The defaulting (SetDefaults_LimitRangeItem): default ← max, defaultRequest ←
    default, then defaultRequest ← min. It is a no-op on an object read back
    from the API, and lets a hand-written LimitRange behave like a stored one.
    """
    if not limit_range:
        return []
    spec = _mapping(limit_range.get("spec")) if "spec" in limit_range else limit_range
    items = []
    for item in _list(spec.get("limits")):
        if item.get("type") != "Container":
            continue
        maximum = dict(_mapping(item.get("max")))
        minimum = dict(_mapping(item.get("min")))
        default = dict(_mapping(item.get("default")))
        default_request = dict(_mapping(item.get("defaultRequest")))
        for source, target in ((maximum, default), (default, default_request), (minimum, default_request)):
            for key, value in source.items():
                target.setdefault(key, value)
        items.append({"min": minimum, "default": default, "defaultRequest": default_request})
    return items


def _default_step_request(items: list[dict[str, ResourceMap]], steps: int) -> ResourceMap | None:
    """_default_step_request is the request Tekton's LimitRange transformer gives a step without one.

    Example: defaultRequest cpu 1 and min cpu 100m over 4 steps gives {'cpu': '250m'};
    over 20 steps it gives {'cpu': '100m'} (the min wins).
    """
    result: dict[str, int] = {}
    for item in items:
        for resource in _LIMIT_RANGE_RESOURCES:
            default_request = item["defaultRequest"].get(resource)
            minimum = item["min"].get(resource)
            share = _amount(resource, default_request, "LimitRange defaultRequest") // max(steps, 1) if default_request is not None else 0
            floor = _amount(resource, minimum, "LimitRange min") if minimum is not None else 0
            best = max(result.get(resource, 0), share, floor)
            if best:
                result[resource] = best
    return {name: _quantity(name, amount) for name, amount in result.items()} or None


def _step_container_name(step: Mapping[str, Any], index: int) -> str:
    name = step.get("name")
    full = f"{STEP_PREFIX}{name}" if name else f"{STEP_PREFIX}unnamed-{index}"
    return full[:_MAX_NAME]


def _needs_working_dir_init(working_dirs: Iterator[str]) -> bool:
    for working_dir in working_dirs:
        if not working_dir:
            continue
        cleaned = posixpath.normpath(working_dir)
        if not posixpath.isabs(cleaned) or cleaned.startswith("/workspace/"):
            return True
    return False


def _references_artifacts_path(step: Mapping[str, Any]) -> bool:
    """_references_artifacts_path: whether a step writes artifacts, which makes Tekton add its results sidecar."""
    provenance = f"/tekton/steps/{STEP_PREFIX}{step.get('name') or ''}/artifacts/provenance.json"
    texts = [step.get("script") or ""]
    texts += [str(v) for v in step.get("args") or ()]
    texts += [str(v) for v in step.get("command") or ()]
    texts += [str(_mapping(e).get("value") or "") for e in step.get("env") or ()]
    return any(_ARTIFACTS_PATH_VARIABLE in text or provenance in text for text in texts)


def _container(name: str, requirements: Requirements) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    if requirements:
        container["resources"] = {field: dict(amounts) for field, amounts in requirements.items()}
    return container


def _is_zero(value: object, resource: str, where: str) -> bool:
    return value is None or _amount(resource, value, where) == 0


def predict_task_pod_spec(
    task_spec: Mapping[str, Any],
    *,
    task_run_spec: Mapping[str, Any] | None = None,
    limit_range: Mapping[str, Any] | None = None,
    sidecar_logs_results: bool = False,
    native_sidecars: bool = False,
    overhead: Mapping[str, Any] | None = None,
    container_defaults: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """predict_task_pod_spec returns the containers and init containers, with resources, of the pod Tekton will create.

    Why a spec and not just a number: it can be compared with the real pod in
    conformance tests, and pod_effective_request does the arithmetic once.

    Example: {'steps': [{'name': 'build', 'computeResources': {'requests': {'cpu': '1'}}}]}
    gives {'initContainers': [{'name': 'prepare'}],
    'containers': [{'name': 'step-build', 'resources': {'requests': {'cpu': '1'}}}]}.
    Only names and resources are filled in.
    """
    run_spec = task_run_spec or {}
    template = _requirements(_mapping(task_spec.get("stepTemplate")).get("computeResources"))
    raw_steps = _list(task_spec.get("steps"))
    steps = [_merge(template, _requirements(step.get("computeResources"))) for step in raw_steps]

    step_overrides = {o.get("name"): _requirements(o.get("computeResources")) for o in _list(run_spec.get("stepSpecs"))}
    for index, step in enumerate(raw_steps):
        if step.get("name") in step_overrides:
            steps[index] = _merge(steps[index], step_overrides[step["name"]])

    _apply_task_level(steps, _requirements(run_spec.get("computeResources")))

    step_names = [_step_container_name(step, i) for i, step in enumerate(raw_steps)]

    raw_sidecars = _list(task_spec.get("sidecars"))
    results_sidecar_needed = sidecar_logs_results and (
        bool(task_spec.get("results")) or any(_references_artifacts_path(s) for s in raw_steps)
    )
    if results_sidecar_needed:
        raw_sidecars = [*raw_sidecars, {"name": RESULTS_SIDECAR_NAME}]
    sidecar_overrides = {o.get("name"): _requirements(o.get("computeResources")) for o in _list(run_spec.get("sidecarSpecs"))}
    sidecars = []
    for sidecar in raw_sidecars:
        requirements = _requirements(sidecar.get("computeResources"))
        if sidecar.get("name") in sidecar_overrides:
            requirements = _merge(requirements, sidecar_overrides[sidecar["name"]])
        sidecars.append(_container(f"{SIDECAR_PREFIX}{sidecar.get('name', '')}"[:_MAX_NAME], requirements))

    init_containers: list[dict[str, Any]] = [{"name": "prepare"}]
    if any(s.get("script") for s in (*raw_steps, *raw_sidecars)):
        init_containers.append({"name": "place-scripts"})
    template_dir = _mapping(task_spec.get("stepTemplate")).get("workingDir") or ""
    if _needs_working_dir_init(str(step.get("workingDir") or template_dir) for step in raw_steps):
        init_containers.append({"name": "working-dir-initializer"})

    step_containers = [_container(name, requirements) for name, requirements in zip(step_names, steps)]

    # Tekton's transformers in its order: config-defaults' container resources, then the LimitRange's.
    apply_container_defaults([*init_containers, *step_containers, *sidecars], container_defaults or {})

    items = _limit_range_items(limit_range)
    if items:
        default_step_request = _default_step_request(items, len(step_containers))
        for container in step_containers:
            resources = container.setdefault("resources", {})
            requests = resources.get("requests")
            if requests is None:
                if default_step_request:
                    resources["requests"] = dict(default_step_request)
                continue
            for resource in _LIMIT_RANGE_RESOURCES:
                where = f"step {container['name']!r} request"
                if default_step_request and resource in default_step_request and _is_zero(requests.get(resource), resource, where):
                    requests[resource] = default_step_request[resource]

    for container in (*init_containers, *step_containers, *sidecars):
        _apply_api_defaults(container, items)
        if not container.get("resources"):
            container.pop("resources", None)

    if native_sidecars:
        spec: dict[str, Any] = {
            "initContainers": init_containers + [{**sidecar, "restartPolicy": "Always"} for sidecar in sidecars],
            "containers": step_containers,
        }
    else:
        spec = {"initContainers": init_containers, "containers": step_containers + sidecars}
    if overhead:
        spec["overhead"] = dict(overhead)
    return spec


def _apply_api_defaults(container: dict[str, Any], items: list[dict[str, ResourceMap]]) -> None:
    """_apply_api_defaults does what the API server does on create: limits fill missing requests, then LimitRanger defaults.

    Example: limits {'cpu': '2'} and a LimitRange defaultRequest {'cpu': '1', 'memory': '1Gi'}
    gives requests {'cpu': '2', 'memory': '1Gi'}: the limit wins for cpu.
    """
    resources = container.setdefault("resources", {})
    requests = dict(resources.get("requests") or {})
    limits = dict(resources.get("limits") or {})
    for key, value in limits.items():
        requests.setdefault(key, value)
    default_requests: ResourceMap = {}
    default_limits: ResourceMap = {}
    for item in items:
        default_requests.update(item["defaultRequest"])
        default_limits.update(item["default"])
    for key, value in default_limits.items():
        limits.setdefault(key, value)
    for key, value in default_requests.items():
        requests.setdefault(key, value)
    resources.clear()
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits


def predict_task_pod_request(
    task_spec: Mapping[str, Any],
    *,
    task_run_spec: Mapping[str, Any] | None = None,
    limit_range: Mapping[str, Any] | None = None,
    sidecar_logs_results: bool = False,
    native_sidecars: bool = False,
    overhead: Mapping[str, Any] | None = None,
    container_defaults: Mapping[str, Mapping[str, Any]] | None = None,
) -> Resources:
    """predict_task_pod_request is the effective request of the pod Tekton will create for task_spec.

    task_run_spec is a PipelineRun's ``spec.taskRunSpecs[]`` entry for the task
    (or a TaskRun's spec): its ``computeResources``, ``stepSpecs`` and
    ``sidecarSpecs`` are honoured. limit_range is the namespace's LimitRange.
    sidecar_logs_results and native_sidecars are Tekton's feature flags
    (core.tekton_config); overhead is the pod's ``spec.overhead`` (its
    RuntimeClass's ``overhead.podFixed``), added once. container_defaults is
    config-defaults' ``default-container-resource-requirements``
    (core.container_defaults).

    Example: two steps of 1 CPU and 500m plus a sidecar of 100m predict 1600m;
    with taskRunSpecs computeResources requests cpu 4 the two steps get 2 CPU
    each and the pod 4100m.
    """
    spec = predict_task_pod_spec(
        task_spec,
        task_run_spec=task_run_spec,
        limit_range=limit_range,
        sidecar_logs_results=sidecar_logs_results,
        native_sidecars=native_sidecars,
        overhead=overhead,
        container_defaults=container_defaults,
    )
    return pod_effective_request(spec)

