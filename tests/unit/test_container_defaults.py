"""config-defaults' default-container-resource-requirements, as Tekton v1.15's transformer applies them.

Expected values are read off Tekton's rules by hand (pkg/internal/defaultresourcerequirements/transformer.go):
named entries, then `prefix-` entries, then `default`; Tekton's own containers take an entry whatever they have.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.container_defaults import apply_container_defaults, container_defaults_of
from reference_scheduler.core.resources import Resources
from reference_scheduler.core.tekton_pods import predict_task_pod_request, predict_task_pod_spec

pytestmark = pytest.mark.unit

Mi = 1024 * 1024


def _config(text: str) -> dict[str, Any]:
    return {"data": {"default-container-resource-requirements": text}}


def _named(spec: dict[str, Any]) -> dict[str, Any]:
    return {c["name"]: c.get("resources") for c in [*spec["initContainers"], *spec["containers"]]}


@pytest.mark.parametrize(
    ("config_map", "expected"),
    [
        (None, {}),
        ({"data": {}}, {}),
        (_config("default: {requests: {cpu: 250m}}"), {"default": {"requests": {"cpu": "250m"}}}),
        (_config("prepare: {limits: {memory: 64Mi}}\nempty: {}"), {"prepare": {"limits": {"memory": "64Mi"}}}),
        (_config("[not, a, mapping]"), {}),
        (_config("default: {requests: {cpu: 250m"), {}),  # Tekton refuses the ConfigMap: its defaults stay
    ],
)
def test_the_entries_are_read_as_tekton_reads_them(config_map: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    assert container_defaults_of(config_map) == expected


def test_default_fills_bare_containers_and_overrides_tektons_own() -> None:
    containers = [
        {"name": "prepare", "resources": {"requests": {"cpu": "1m"}}},
        {"name": "step-build", "resources": {"requests": {"cpu": "2"}}},
        {"name": "step-test"},
        {"name": "sidecar-db"},
    ]
    apply_container_defaults(containers, {"default": {"requests": {"cpu": "100m"}}})
    assert [c.get("resources") for c in containers] == [
        {"requests": {"cpu": "100m"}},  # Tekton's own: replaced
        {"requests": {"cpu": "2"}},  # a step with resources keeps them
        {"requests": {"cpu": "100m"}},
        {"requests": {"cpu": "100m"}},
    ]


def test_named_and_prefixed_entries_win_over_default_and_replace_whole_resources() -> None:
    containers = [
        {"name": "prepare"},
        {"name": "place-scripts", "resources": {"limits": {"cpu": "1"}}},
        {"name": "step-build"},
        {"name": "step-test", "resources": {"limits": {"memory": "1Gi"}}},
        {"name": "sidecar-db"},
    ]
    defaults = {
        "place-scripts": {"requests": {"cpu": "50m"}},
        "prefix-step": {"requests": {"cpu": "1", "memory": "256Mi"}},
        "default": {"requests": {"cpu": "100m"}},
    }
    apply_container_defaults(containers, defaults)
    assert [c.get("resources") for c in containers] == [
        {"requests": {"cpu": "100m"}},
        {"requests": {"cpu": "50m"}},  # named: its limit is gone with the rest of its resources
        {"requests": {"cpu": "1", "memory": "256Mi"}},
        {"limits": {"memory": "1Gi"}},  # not bare, not Tekton's own: untouched by every entry
        {"requests": {"cpu": "100m"}},
    ]


def test_a_named_match_on_tektons_own_container_is_not_overridden_by_a_prefix_or_default() -> None:
    containers = [{"name": "working-dir-initializer"}]
    apply_container_defaults(
        containers,
        {"working-dir-initializer": {"requests": {"cpu": "10m"}}, "prefix-working": {"requests": {"cpu": "20m"}}, "default": {"requests": {"cpu": "30m"}}},
    )
    assert containers[0]["resources"] == {"requests": {"cpu": "10m"}}


def test_the_prediction_applies_them_before_the_limit_range() -> None:
    task = {
        "steps": [{"name": "build", "computeResources": {"requests": {"cpu": "500m"}}}, {"name": "test"}],
        "sidecars": [{"name": "db"}],
    }
    defaults = container_defaults_of(_config("prefix-sidecar: {requests: {cpu: 300m, memory: 64Mi}}\ndefault: {requests: {cpu: 200m, memory: 32Mi}}"))
    spec = predict_task_pod_spec(task, container_defaults=defaults)
    assert _named(spec) == {
        "prepare": {"requests": {"cpu": "200m", "memory": "32Mi"}},
        "step-build": {"requests": {"cpu": "500m"}},
        "step-test": {"requests": {"cpu": "200m", "memory": "32Mi"}},
        "sidecar-db": {"requests": {"cpu": "300m", "memory": "64Mi"}},
    }
    # Containers: 500 + 200 + 300 = 1000m CPU, 32 + 64 = 96Mi; prepare (200m, 32Mi) runs alone first.
    assert predict_task_pod_request(task, container_defaults=defaults) == Resources(1000, 96 * Mi)
    # A LimitRange's transformer then fills only what is still missing, step-build's memory: its defaultRequest
    # divided by the two steps, 64Mi. Memory: 64 + 32 + 64 = 160Mi.
    limit_range = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "1", "memory": "128Mi"}}]}}
    with_range = predict_task_pod_request(task, container_defaults=defaults, limit_range=limit_range)
    assert with_range == Resources(1000, (64 + 32 + 64) * Mi)
    assert predict_task_pod_request(task) == Resources(500, 0)
