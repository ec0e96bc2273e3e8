"""container_defaults: Tekton's `default-container-resource-requirements`, as its pod transformer applies them.

An operator may give task pods' containers resources cluster-wide, in Tekton's
`config-defaults` ConfigMap (Tekton v1.15.0: `pkg/apis/config/default.go`), as
YAML keyed by container name:

    default-container-resource-requirements: |
      place-scripts: {requests: {cpu: 50m}}
      prefix-sidecar: {requests: {cpu: 100m}}
      default: {requests: {cpu: 250m, memory: 128Mi}}

Tekton's transformer (`pkg/internal/defaultresourcerequirements/transformer.go`)
runs on the built pod before the LimitRange transformer, in three passes over
init containers and containers alike, each *replacing* a container's whole
resources:

1. a key naming a container exactly applies to it when it has no resources, or
   when it is one of Tekton's own (`prepare`, `place-scripts`,
   `working-dir-initializer`, `sidecar-tekton-log-results`), whatever it has;
2. a `prefix-<p>` key applies to containers named `<p>-...` on the same terms,
   except Tekton's own containers already matched by name;
3. the `default` key applies to every container that still has no resources,
   and to Tekton's own containers no earlier key matched.

Pure functions over plain mappings; the runtime reads the ConfigMap from its cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

__all__ = ["CONFIG_DEFAULTS_CONFIGMAP", "apply_container_defaults", "container_defaults_of"]

#: The ConfigMap Tekton reads its defaults from (in Tekton's namespace).
CONFIG_DEFAULTS_CONFIGMAP = "config-defaults"
#: Its key for the containers' resources.
CONTAINER_DEFAULTS_KEY = "default-container-resource-requirements"
DEFAULT_ENTRY = "default"
PREFIX_ENTRY = "prefix-"
#: Tekton's own containers (pkg/pod/pod.go, IsInternalContainer): named entries and `default` override what they have.
INTERNAL_CONTAINERS = frozenset({"prepare", "place-scripts", "working-dir-initializer", "sidecar-tekton-log-results"})

Requirements = dict[str, dict[str, Any]]


def _requirements(value: object) -> Requirements:
    if not isinstance(value, Mapping):
        return {}
    found: Requirements = {}
    for part in ("requests", "limits"):
        amounts = value.get(part)
        if isinstance(amounts, Mapping) and amounts:
            found[part] = {str(k): v for k, v in amounts.items()}
    return found


def container_defaults_of(config_map: Mapping[str, Any] | None) -> dict[str, Requirements]:
    """container_defaults_of(the config-defaults ConfigMap) is its `default-container-resource-requirements`, by entry; {} when unset.

    YAML that does not parse to a mapping makes Tekton refuse the whole
    ConfigMap (it keeps its defaults), so it reads as {} here too. Entries with
    no requests or limits are dropped: Tekton skips them.

    Example: container_defaults_of({'data': {'default-container-resource-requirements':
    'default: {requests: {cpu: 250m}}'}}) == {'default': {'requests': {'cpu': '250m'}}}.
    """
    data = (config_map or {}).get("data") if isinstance(config_map, Mapping) else None
    text = data.get(CONTAINER_DEFAULTS_KEY) if isinstance(data, Mapping) else None
    if not text:
        return {}
    try:
        parsed = yaml.safe_load(str(text))
    except yaml.YAMLError:
        return {}
    if not isinstance(parsed, Mapping):
        return {}
    entries = {str(name): _requirements(value) for name, value in parsed.items()}
    return {name: requirements for name, requirements in entries.items() if requirements}


def _bare(container: Mapping[str, Any]) -> bool:
    resources = container.get("resources") or {}
    return not resources.get("requests") and not resources.get("limits")


def _set(container: dict[str, Any], requirements: Mapping[str, Any]) -> None:
    container["resources"] = {part: dict(amounts) for part, amounts in requirements.items()}


def apply_container_defaults(containers: Sequence[dict[str, Any]], defaults: Mapping[str, Mapping[str, Any]]) -> None:
    """apply_container_defaults() gives the pod's containers (init containers first, then the others) Tekton's defaults, in place.

    Example: with {'prefix-step': {'requests': {'cpu': '1'}}, 'default': {'requests': {'cpu': '100m'}}},
    a bare `step-build` gets cpu 1, a `step-test` requesting 2 keeps it, a bare
    `sidecar-db` and `prepare` get 100m.
    """
    if not defaults:
        return
    matched: set[int] = set()  # Tekton's own containers given a named or prefixed entry
    for name, requirements in defaults.items():
        if name == DEFAULT_ENTRY or name.startswith(PREFIX_ENTRY):
            continue
        for index, container in enumerate(containers):
            internal = container.get("name") in INTERNAL_CONTAINERS
            if container.get("name") == name and (_bare(container) or internal):
                _set(container, requirements)
                if internal:
                    matched.add(index)
    for name, requirements in defaults.items():
        if not name.startswith(PREFIX_ENTRY):
            continue
        prefix = name.removeprefix(PREFIX_ENTRY) + "-"
        for index, container in enumerate(containers):
            internal = container.get("name") in INTERNAL_CONTAINERS
            if str(container.get("name") or "").startswith(prefix) and (_bare(container) or (internal and index not in matched)):
                _set(container, requirements)
                if internal:
                    matched.add(index)
    fallback = defaults.get(DEFAULT_ENTRY)
    if fallback:
        for index, container in enumerate(containers):
            internal = container.get("name") in INTERNAL_CONTAINERS
            if _bare(container) or (internal and index not in matched):
                _set(container, fallback)
