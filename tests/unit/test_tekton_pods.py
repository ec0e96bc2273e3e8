"""Unit tests for tekton_pods: the request of the pod Tekton v1.15.0 builds for a Task."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.resources import ZERO, InvalidQuantity, Resources
from reference_scheduler.core.tekton_pods import predict_task_pod_request, predict_task_pod_spec

pytestmark = pytest.mark.unit

GI = 1024**3
MI = 1024**2


def step(name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    result: dict[str, Any] = {"name": name, "image": "busybox", **extra}
    if resources:
        result["computeResources"] = resources
    return result


def limit_range(**item: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "spec": {"limits": [{"type": "Container", **item}]}}


CASES: list[tuple[str, dict[str, Any], dict[str, Any], Resources]] = [
    ("no-resources-request-nothing", {"steps": [step("a"), step("b")]}, {}, ZERO),
    (
        "steps-add-up",
        {"steps": [step("a", {"cpu": "1", "memory": "1Gi"}), step("b", {"cpu": "500m", "memory": "256Mi"})]},
        {},
        Resources(1500, GI + 256 * MI),
    ),
    (
        "step-limits-become-requests",
        {"steps": [step("a", limits={"cpu": "2"})]},
        {},
        Resources(2000, 0),
    ),
    (
        "step-template-fills-missing-keys",
        {
            "stepTemplate": {"computeResources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
            "steps": [step("a", {"cpu": "1"}), step("b")],
        },
        {},
        Resources(1100, 128 * MI),
    ),
    (
        "step-template-limits-become-requests",
        {"stepTemplate": {"computeResources": {"limits": {"memory": "1Gi"}}}, "steps": [step("a", {"cpu": "1"})]},
        {},
        Resources(1000, GI),
    ),
    (
        "sidecars-add-to-steps",
        {"steps": [step("a", {"cpu": "1"})], "sidecars": [{"name": "db", "computeResources": {"requests": {"cpu": "300m"}}}]},
        {},
        Resources(1300, 0),
    ),
    (
        "step-template-does-not-apply-to-sidecars",
        {
            "stepTemplate": {"computeResources": {"requests": {"cpu": "1"}}},
            "steps": [step("a")],
            "sidecars": [{"name": "db"}],
        },
        {},
        Resources(1000, 0),
    ),
    (
        "step-specs-override-named-steps",
        {"steps": [step("a", {"cpu": "1", "memory": "1Gi"}), step("b", {"cpu": "1"})]},
        {"task_run_spec": {"stepSpecs": [{"name": "a", "computeResources": {"requests": {"cpu": "3"}}}]}},
        Resources(4000, GI),
    ),
    (
        "sidecar-specs-override-named-sidecars",
        {"steps": [step("a", {"cpu": "1"})], "sidecars": [{"name": "db", "computeResources": {"requests": {"cpu": "1"}}}]},
        {"task_run_spec": {"sidecarSpecs": [{"name": "db", "computeResources": {"requests": {"cpu": "2"}}}]}},
        Resources(3000, 0),
    ),
    (
        "task-level-requests-are-split-over-steps",
        {"steps": [step("a", {"cpu": "4"}), step("b"), step("c")]},
        {"task_run_spec": {"computeResources": {"requests": {"cpu": "1", "memory": "1Gi"}}}},
        Resources(999, 3 * (GI // 3)),
    ),
    (
        "task-level-limits-only-split-into-requests",
        {"steps": [step("a"), step("b")]},
        {"task_run_spec": {"computeResources": {"limits": {"cpu": "2", "memory": "2Gi"}}}},
        Resources(2000, 2 * GI),
    ),
    (
        # Tekton sets the steps' requests to the (absent) task-level requests
        # and their limits to the full task-level limits, which the API server
        # then copies into the requests.
        "task-level-limits-wipe-step-requests",
        {"steps": [step("a", {"cpu": "100m"}), step("b", {"cpu": "100m"})]},
        {"task_run_spec": {"computeResources": {"limits": {"cpu": "2"}}}},
        Resources(4000, 0),
    ),
    (
        "task-level-requests-keep-sidecars",
        {"steps": [step("a"), step("b")], "sidecars": [{"name": "db", "computeResources": {"requests": {"cpu": "100m"}}}]},
        {"task_run_spec": {"computeResources": {"requests": {"cpu": "2"}}}},
        Resources(2100, 0),
    ),
    (
        "limit-range-default-is-split-over-steps",
        {"steps": [step("a"), step("b"), step("c"), step("d")]},
        {"limit_range": limit_range(defaultRequest={"cpu": "1", "memory": "1Gi"})},
        Resources(1000, GI),
    ),
    (
        "limit-range-min-bounds-the-split",
        {"steps": [step("a"), step("b"), step("c"), step("d")]},
        {"limit_range": limit_range(defaultRequest={"cpu": "1"}, min={"cpu": "400m"})},
        Resources(1600, 0),
    ),
    (
        "limit-range-default-limit-is-the-default-request",
        {"steps": [step("a"), step("b")]},
        {"limit_range": limit_range(default={"cpu": "1"})},
        Resources(1000, 0),
    ),
    (
        "limit-range-fills-only-missing-step-requests",
        {"steps": [step("a", {"cpu": "3"}), step("b")]},
        {"limit_range": limit_range(defaultRequest={"cpu": "1", "memory": "100Mi"})},
        Resources(3500, 100 * MI),
    ),
    (
        # Tekton's transformer runs before the API server's defaulting, so a
        # step with only a limit gets the split default, not its limit.
        "limit-range-split-beats-step-limit",
        {"steps": [step("a", limits={"cpu": "3"}), step("b")]},
        {"limit_range": limit_range(defaultRequest={"cpu": "1"})},
        Resources(1000, 0),
    ),
    (
        # The admission plugin gives Tekton's prepare init container the whole
        # defaultRequest, which outweighs small steps.
        "limit-range-default-on-init-containers",
        {"steps": [step("a", {"cpu": "100m"}), step("b", {"cpu": "100m"})]},
        {"limit_range": limit_range(defaultRequest={"cpu": "1"})},
        Resources(1000, 0),
    ),
    (
        "limit-range-default-on-sidecars",
        {"steps": [step("a", {"cpu": "1"})], "sidecars": [{"name": "db"}]},
        {"limit_range": limit_range(defaultRequest={"cpu": "500m"})},
        Resources(1500, 0),
    ),
    (
        "limit-range-pod-items-are-ignored",
        {"steps": [step("a")]},
        {"limit_range": {"spec": {"limits": [{"type": "Pod", "max": {"cpu": "4"}}]}}},
        ZERO,
    ),
    (
        "results-sidecar-gets-limit-range-default",
        {"steps": [step("a", {"cpu": "1"})], "results": [{"name": "digest"}]},
        {"limit_range": limit_range(defaultRequest={"cpu": "200m"}), "sidecar_logs_results": True},
        Resources(1200, 0),
    ),
    (
        "no-results-sidecar-without-results",
        {"steps": [step("a", {"cpu": "1"})]},
        {"limit_range": limit_range(defaultRequest={"cpu": "200m"}), "sidecar_logs_results": True},
        Resources(1000, 0),
    ),
    (
        "results-sidecar-for-artifacts",
        {"steps": [step("a", {"cpu": "1"}, script="cp x $(step.artifacts.path)")]},
        {"limit_range": limit_range(defaultRequest={"cpu": "200m"}), "sidecar_logs_results": True},
        Resources(1200, 0),
    ),
    # Every resource, not only cpu and memory.
    (
        "step-template-gpu-limit-reaches-every-step",
        {"stepTemplate": {"computeResources": {"limits": {"nvidia.com/gpu": "1"}}}, "steps": [step("a", {"cpu": "1"}), step("b")]},
        {},
        Resources.of({"cpu": 1000, "nvidia.com/gpu": 2}),
    ),
    (
        "step-overrides-one-resource-of-the-template",
        {
            "stepTemplate": {"computeResources": {"requests": {"ephemeral-storage": "1Gi", "example.com/gpu": "1"}}},
            "steps": [step("a", {"example.com/gpu": "2"})],
        },
        {},
        Resources.of({"ephemeral-storage": GI, "example.com/gpu": 2}),
    ),
    (
        "step-specs-carry-hugepages",
        {"steps": [step("a", {"cpu": "1"})]},
        {"task_run_spec": {"stepSpecs": [{"name": "a", "computeResources": {"requests": {"hugepages-2Mi": "8Mi"}, "limits": {"hugepages-2Mi": "8Mi"}}}]}},
        Resources.of({"cpu": 1000, "hugepages-2Mi": 8 * MI}),
    ),
    (
        "task-level-gpu-is-shared-in-milli-units",
        {"steps": [step("a"), step("b")]},
        {"task_run_spec": {"computeResources": {"requests": {"example.com/gpu": "2", "ephemeral-storage": "3"}}}},
        Resources.of({"example.com/gpu": 2, "ephemeral-storage": 2}),
    ),
    (
        "limit-range-ephemeral-storage-default-is-split-over-steps",
        {"steps": [step("a"), step("b"), step("c"), step("d", {"cpu": "1"})]},
        {"limit_range": limit_range(defaultRequest={"ephemeral-storage": "4Gi"})},
        Resources.of({"cpu": 1000, "ephemeral-storage": 4 * GI}),
    ),
    (
        "limit-range-gpu-default-is-the-api-servers-per-container",
        {"steps": [step("a"), step("b")]},
        {"limit_range": limit_range(default={"example.com/gpu": "1"})},
        Resources.of({"example.com/gpu": 2}),
    ),
]


def test_task_level_shares_of_every_resource() -> None:
    spec = predict_task_pod_spec(
        {"steps": [step("a"), step("b"), step("c")]},
        task_run_spec={"computeResources": {"requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", "example.com/gpu": "2"}}},
    )
    requests = spec["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "333m", "memory": str(GI // 3), "ephemeral-storage": str(GI // 3), "example.com/gpu": "666m"}


@pytest.mark.parametrize(
    ("task_spec", "options", "expected"), [(t, o, e) for _, t, o, e in CASES], ids=[n for n, _, _, _ in CASES]
)
def test_predict_task_pod_request(task_spec: dict[str, Any], options: dict[str, Any], expected: Resources) -> None:
    assert predict_task_pod_request(task_spec, **options) == expected


def names(containers: list[dict[str, Any]]) -> list[str]:
    return [container["name"] for container in containers]


def test_container_names_follow_tekton() -> None:
    spec = predict_task_pod_spec({"steps": [step("build"), {"image": "x"}], "sidecars": [{"name": "db"}]})
    assert names(spec["containers"]) == ["step-build", "step-unnamed-1", "sidecar-db"]
    assert names(spec["initContainers"]) == ["prepare"]


@pytest.mark.parametrize(
    ("task_spec", "expected"),
    [
        ({"steps": [step("a", script="echo hi")]}, ["prepare", "place-scripts"]),
        ({"steps": [step("a")], "sidecars": [{"name": "s", "script": "sleep 1"}]}, ["prepare", "place-scripts"]),
        ({"steps": [step("a", workingDir="src")]}, ["prepare", "working-dir-initializer"]),
        ({"steps": [step("a", workingDir="/workspace/src")]}, ["prepare", "working-dir-initializer"]),
        ({"steps": [step("a", workingDir="/home/user")]}, ["prepare"]),
        ({"stepTemplate": {"workingDir": "out"}, "steps": [step("a")]}, ["prepare", "working-dir-initializer"]),
    ],
    ids=["step-script", "sidecar-script", "relative-working-dir", "workspace-working-dir", "absolute-working-dir", "template-working-dir"],
)
def test_tekton_init_containers(task_spec: dict[str, Any], expected: list[str]) -> None:
    assert names(predict_task_pod_spec(task_spec)["initContainers"]) == expected


def test_predicted_spec_carries_merged_resources() -> None:
    spec = predict_task_pod_spec(
        {
            "stepTemplate": {"computeResources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}},
            "steps": [step("a", {"cpu": "1"})],
        }
    )
    assert spec["containers"][0]["resources"] == {
        "requests": {"memory": "1Gi", "cpu": "1"},
        "limits": {"memory": "2Gi"},
    }


def test_limit_range_object_or_spec_are_accepted() -> None:
    task = {"steps": [step("a")]}
    full = limit_range(defaultRequest={"cpu": "1"})
    assert predict_task_pod_request(task, limit_range=full) == predict_task_pod_request(task, limit_range=full["spec"])


def test_invalid_step_quantity_names_the_container() -> None:
    with pytest.raises(InvalidQuantity, match="container 'step-build' cpu request"):
        predict_task_pod_request({"steps": [step("build", {"cpu": "much"})]})


def test_invalid_task_level_quantity_names_the_field() -> None:
    with pytest.raises(InvalidQuantity, match="taskRunSpecs computeResources requests cpu"):
        predict_task_pod_request({"steps": [step("a")]}, task_run_spec={"computeResources": {"requests": {"cpu": "?"}}})


step_requests = st.fixed_dictionaries(
    {}, optional={"cpu": st.integers(0, 4000).map(lambda m: f"{m}m"), "memory": st.integers(0, 4 * GI).map(str)}
)


@settings(max_examples=100, deadline=None)
@given(st.lists(step_requests, min_size=1, max_size=6), st.lists(step_requests, max_size=3))
def test_without_limit_range_the_request_is_the_sum_of_steps_and_sidecars(
    steps: list[dict[str, Any]], sidecars: list[dict[str, Any]]
) -> None:
    task = {
        "steps": [step(f"s{i}", r) for i, r in enumerate(steps)],
        "sidecars": [{"name": f"c{i}", "computeResources": {"requests": r}} for i, r in enumerate(sidecars)],
    }
    expected = ZERO
    for amounts in (*steps, *sidecars):
        expected += Resources.from_mapping(amounts)
    assert predict_task_pod_request(task) == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(0, 16000), st.integers(0, 16 * GI))
def test_task_level_requests_are_never_exceeded(steps: int, cpu: int, memory: int) -> None:
    task = {"steps": [step(f"s{i}", {"cpu": "8"}) for i in range(steps)]}
    run = {"computeResources": {"requests": {"cpu": f"{cpu}m", "memory": str(memory)}}}
    result = predict_task_pod_request(task, task_run_spec=run)
    assert result.cpu == steps * (cpu // steps)
    assert result.memory == steps * (memory // steps)
    assert result.fits_in(Resources(cpu, memory))
