"""Unit tests for pod_requests.pod_effective_request."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.pod_requests import container_request, pod_effective_request
from reference_scheduler.core.resources import ZERO, InvalidQuantity, Resources

pytestmark = pytest.mark.unit

GI = 1024**3
MI = 1024**2


def c(name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "resources": resources, **extra}


def sidecar(name: str, requests: dict[str, Any]) -> dict[str, Any]:
    return c(name, requests, restartPolicy="Always")


CASES: list[tuple[str, dict[str, Any], Resources]] = [
    ("empty-spec", {}, ZERO),
    ("containers-without-resources", {"containers": [{"name": "a"}, {"name": "b"}]}, ZERO),
    (
        "regular-containers-add-up",
        {"containers": [c("a", {"cpu": "1", "memory": "1Gi"}), c("b", {"cpu": "500m", "memory": "512Mi"})]},
        Resources(1500, GI + 512 * MI),
    ),
    (
        "largest-init-container-wins-per-resource",
        {
            "containers": [c("a", {"cpu": "1", "memory": "1Gi"})],
            "initContainers": [c("i1", {"cpu": "3"}), c("i2", {"memory": "2Gi"})],
        },
        Resources(3000, 2 * GI),
    ),
    (
        "small-init-containers-change-nothing",
        {"containers": [c("a", {"cpu": "2"})], "initContainers": [c("i", {"cpu": "1"})]},
        Resources(2000, 0),
    ),
    (
        "sidecar-adds-to-containers",
        {"containers": [c("a", {"cpu": "1"})], "initContainers": [sidecar("s", {"cpu": "200m"})]},
        Resources(1200, 0),
    ),
    (
        "sidecar-adds-to-later-init-containers",
        {
            "containers": [c("a", {"cpu": "1"})],
            "initContainers": [sidecar("s", {"cpu": "200m"}), c("i", {"cpu": "2"})],
        },
        Resources(2200, 0),
    ),
    (
        "sidecar-does-not-add-to-earlier-init-containers",
        {
            "containers": [c("a", {"cpu": "1"})],
            "initContainers": [c("i", {"cpu": "2"}), sidecar("s", {"cpu": "200m"})],
        },
        Resources(2000, 0),
    ),
    (
        "sidecars-accumulate",
        {
            "containers": [c("a", {"cpu": "100m"})],
            "initContainers": [sidecar("s1", {"cpu": "1"}), sidecar("s2", {"cpu": "1"}), c("i", {"cpu": "1500m"})],
        },
        Resources(3500, 0),
    ),
    (
        "limits-without-requests-become-requests",
        {"containers": [c("a", limits={"cpu": "2", "memory": "1Gi"})]},
        Resources(2000, GI),
    ),
    (
        "limit-fills-only-the-missing-request",
        {"containers": [c("a", {"cpu": "500m"}, {"cpu": "2", "memory": "1Gi"})]},
        Resources(500, GI),
    ),
    ("explicit-zero-request-is-kept", {"containers": [c("a", {"cpu": "0"}, {"cpu": "2"})]}, Resources(0, 0)),
    (
        "init-container-limits-become-requests",
        {"containers": [c("a", {"cpu": "1"})], "initContainers": [c("i", limits={"cpu": "4"})]},
        Resources(4000, 0),
    ),
    (
        "overhead-is-added",
        {"containers": [c("a", {"cpu": "1"})], "overhead": {"cpu": "250m", "memory": "120Mi"}},
        Resources(1250, 120 * MI),
    ),
    (
        "pod-level-requests-win",
        {"containers": [c("a", {"cpu": "1", "memory": "1Gi"})], "resources": {"requests": {"cpu": "3"}}},
        Resources(3000, GI),
    ),
    (
        "pod-level-requests-plus-overhead",
        {"containers": [c("a", {"cpu": "1"})], "resources": {"requests": {"cpu": "3"}}, "overhead": {"cpu": "100m"}},
        Resources(3100, 0),
    ),
    (
        "pod-level-limit-is-the-request-when-no-container-requests",
        {"containers": [{"name": "a"}], "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
        Resources(2000, GI),
    ),
    (
        "pod-level-limit-leaves-container-requests-alone",
        {"containers": [c("a", {"cpu": "500m"})], "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
        Resources(500, GI),
    ),
    (
        "numbers-are-quantities",
        {"containers": [c("a", {"cpu": 2, "memory": 1024})]},
        Resources(2000, 1024),
    ),
    (
        "every-counted-resource-is-summed",
        {"containers": [c("a", {"cpu": "1", "nvidia.com/gpu": "1", "ephemeral-storage": "1Gi"}), c("b", {"nvidia.com/gpu": "2"})]},
        Resources.of({"cpu": 1000, "nvidia.com/gpu": 3, "ephemeral-storage": GI}),
    ),
    (
        "pods-and-uncounted-names-are-not-resources",
        {"containers": [c("a", {"cpu": "1", "pods": "1", "requests.example.com/gpu": "1", "storage": "1Gi"})]},
        Resources(1000, 0),
    ),
    (
        "extended-limit-alone-is-the-request",
        {"containers": [c("a", limits={"example.com/gpu": "2"})]},
        Resources.of({"example.com/gpu": 2}),
    ),
    (
        "largest-init-container-per-resource",
        {
            "containers": [c("a", {"cpu": "1", "example.com/gpu": "1"})],
            "initContainers": [c("i", {"cpu": "500m", "example.com/gpu": "2", "hugepages-2Mi": "4Mi"})],
        },
        Resources.of({"cpu": 1000, "example.com/gpu": 2, "hugepages-2Mi": 4 * 1024**2}),
    ),
    (
        "sidecar-gpu-adds-to-containers-and-later-init-containers",
        {
            "containers": [c("a", {"example.com/gpu": "1"})],
            "initContainers": [c("s", {"example.com/gpu": "1"}, restartPolicy="Always"), c("i", {"example.com/gpu": "2"})],
        },
        Resources.of({"example.com/gpu": 3}),
    ),
    (
        "pod-level-hugepages-replace-the-aggregate",
        {"containers": [c("a", {"hugepages-2Mi": "4Mi"})], "resources": {"requests": {"hugepages-2Mi": "8Mi"}}},
        Resources.of({"hugepages-2Mi": 8 * 1024**2}),
    ),
    (
        "pod-level-hugepages-limit-is-the-request-even-beside-containers",
        {"containers": [c("a", {"hugepages-2Mi": "4Mi"})], "resources": {"limits": {"hugepages-2Mi": "8Mi"}}},
        Resources.of({"hugepages-2Mi": 8 * 1024**2}),
    ),
    (
        "pod-level-ephemeral-storage-and-gpu-are-not-pod-level-resources",
        {
            "containers": [c("a", {"ephemeral-storage": "1Gi", "example.com/gpu": "1"})],
            "resources": {"requests": {"ephemeral-storage": "5Gi", "example.com/gpu": "4"}},
        },
        Resources.of({"ephemeral-storage": GI, "example.com/gpu": 1}),
    ),
    (
        "overhead-adds-every-resource",
        {"containers": [c("a", {"cpu": "1"})], "overhead": {"cpu": "250m", "ephemeral-storage": "1Gi"}},
        Resources.of({"cpu": 1250, "ephemeral-storage": GI}),
    ),
    (
        "a-zero-extended-request-is-nothing",
        {"containers": [c("a", {"cpu": "1", "example.com/gpu": "0"})]},
        Resources(1000, 0),
    ),
]


def test_a_bad_extended_quantity_names_container_resource_and_field() -> None:
    with pytest.raises(InvalidQuantity, match=r"^container 'a' example.com/gpu limit: invalid example.com/gpu quantity 'two'"):
        pod_effective_request({"containers": [c("a", limits={"example.com/gpu": "two"})]})


@pytest.mark.parametrize(("spec", "expected"), [(s, e) for _, s, e in CASES], ids=[n for n, _, _ in CASES])
def test_pod_effective_request(spec: dict[str, Any], expected: Resources) -> None:
    assert pod_effective_request(spec) == expected


def test_container_request_says_which_resources_are_set() -> None:
    assert container_request(c("a", {"cpu": "0"}, {"memory": "1Gi"})) == (Resources(0, GI), frozenset({"cpu", "memory"}))
    assert container_request({"name": "b"}) == (ZERO, frozenset())


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"containers": [c("build", {"cpu": "lots"})]}, ["container 'build'", "cpu request", "'lots'"]),
        ({"initContainers": [c("prep", limits={"memory": "1Q"})]}, ["init container 'prep'", "memory limit"]),
        ({"containers": [c("neg", {"cpu": "-1"})]}, ["container 'neg'", "negative"]),
        ({"overhead": {"cpu": "x"}}, ["overhead"]),
        ({"resources": {"requests": {"memory": "?"}}}, ["pod-level memory request"]),
    ],
    ids=["bad-container-request", "bad-init-limit", "negative-request", "bad-overhead", "bad-pod-level-request"],
)
def test_invalid_quantities_name_where(spec: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(InvalidQuantity) as raised:
        pod_effective_request(spec)
    message = str(raised.value)
    assert "\n" not in message
    for word in words:
        assert word in message


# A pod's life, phase by phase: init container i runs with the sidecars started
# before it; then every sidecar runs with every regular container. The effective
# request is the largest phase, per resource. This is the definition; the
# module computes it the way Kubernetes does, in one pass.
def simulated_request(spec: dict[str, Any]) -> Resources:
    def req(container: dict[str, Any]) -> Resources:
        return container_request(container)[0]

    peak = ZERO
    started_sidecars = ZERO
    for init in spec.get("initContainers", []):
        if init.get("restartPolicy") == "Always":
            started_sidecars += req(init)
            peak = peak.max(started_sidecars)
        else:
            peak = peak.max(started_sidecars + req(init))
    main = started_sidecars
    for container in spec.get("containers", []):
        main += req(container)
    return peak.max(main)


amounts = st.fixed_dictionaries(
    {},
    optional={
        "cpu": st.integers(0, 8000).map(lambda m: f"{m}m"),
        "memory": st.integers(0, 8 * GI).map(str),
    },
)


@st.composite
def containers(draw: st.DrawFn, prefix: str, init: bool) -> dict[str, Any]:
    container: dict[str, Any] = {"name": f"{prefix}{draw(st.integers(0, 10**6))}"}
    resources = {}
    if draw(st.booleans()):
        resources["requests"] = draw(amounts)
    if draw(st.booleans()):
        resources["limits"] = draw(amounts)
    container["resources"] = resources
    if init and draw(st.booleans()):
        container["restartPolicy"] = "Always"
    return container


pod_specs = st.fixed_dictionaries(
    {
        "containers": st.lists(containers("c", False), min_size=1, max_size=4),
        "initContainers": st.lists(containers("i", True), max_size=5),
    }
)


@settings(max_examples=150, deadline=None)
@given(pod_specs)
def test_matches_the_phase_by_phase_definition(spec: dict[str, Any]) -> None:
    assert pod_effective_request(spec) == simulated_request(spec)


@settings(max_examples=100, deadline=None)
@given(pod_specs)
def test_bounded_by_largest_container_and_sum_of_all(spec: dict[str, Any]) -> None:
    every = [container_request(x)[0] for x in (*spec["containers"], *spec["initContainers"])]
    result = pod_effective_request(spec)
    for request in every:
        assert request.fits_in(result)
    total = ZERO
    for request in every:
        total += request
    assert result.fits_in(total)

