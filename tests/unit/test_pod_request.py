"""harness.quantities.pod_request: a pod's effective request as kube-scheduler's PodRequests computes it, for the monitor's count of a node."""

from __future__ import annotations

from typing import Any

import pytest

from harness.quantities import Amount, pod_request

pytestmark = pytest.mark.unit

Mi = 1 << 20


def _container(name: str, cpu: str | None = None, memory: str | None = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return {"name": name, **({"resources": {"requests": requests}} if requests else {}), **extra}


def _pod(**spec: Any) -> dict[str, Any]:
    return {"spec": spec}


@pytest.mark.parametrize(
    "spec, expected",
    [
        pytest.param({"containers": [_container("a", "200m", "64Mi"), _container("b", "100m")]}, Amount(300, 64 * Mi), id="containers-add-up"),
        pytest.param(
            {"containers": [_container("a", "200m")], "initContainers": [_container("migrate", "1000m")]}, Amount(1000, 0), id="init-takes-the-most"
        ),
        pytest.param(
            {"containers": [_container("a", "200m")], "initContainers": [_container("proxy", "600m", restartPolicy="Always")]},
            Amount(800, 0),
            id="native-sidecar-adds",
        ),
        pytest.param(
            {
                "containers": [_container("a", "200m")],
                "initContainers": [_container("proxy", "300m", restartPolicy="Always"), _container("migrate", "1000m")],
            },
            Amount(1300, 0),
            id="init-after-a-sidecar-runs-beside-it",
        ),
        pytest.param(
            {"containers": [_container("a", "200m", "64Mi")], "resources": {"requests": {"cpu": "1000m"}}},
            Amount(1000, 64 * Mi),
            id="pod-level-replaces-only-what-it-names",
        ),
        pytest.param(
            {"containers": [_container("a", "200m")], "overhead": {"cpu": "600m", "memory": "32Mi"}}, Amount(800, 32 * Mi), id="overhead-adds"
        ),
        pytest.param(
            {"containers": [_container("a", "200m")], "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}, "overhead": {"cpu": "100m"}},
            Amount(1100, 1024 * Mi),
            id="pod-level-then-overhead",
        ),
    ],
)
def test_the_effective_request_of_every_pod_shape(spec: dict[str, Any], expected: Amount) -> None:
    assert pod_request(_pod(**spec)) == expected


GPU = "example.com/gpu"
Gi = 1 << 30


def _with(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, **({"resources": resources} if resources else {}), **extra}


@pytest.mark.parametrize(
    "spec, expected",
    [
        pytest.param(
            {"containers": [_with("a", {"cpu": "1", GPU: "1"}, {GPU: "1"}), _with("b", {GPU: "2"}, {GPU: "2"})]},
            Amount.of({"cpu": 1000, GPU: 3}),
            id="extended-resources-add-up",
        ),
        pytest.param(
            {"containers": [_with("a", limits={"ephemeral-storage": "6Gi", "hugepages-2Mi": "4Mi"})]},
            Amount.of({"ephemeral-storage": 6 * Gi, "hugepages-2Mi": 4 * Mi}),
            id="a-limit-alone-is-the-request-for-every-resource",
        ),
        pytest.param(
            {"containers": [_with("a", {"ephemeral-storage": "1Gi"}, {"ephemeral-storage": "4Gi"})]},
            Amount.of({"ephemeral-storage": Gi}),
            id="a-request-beats-its-limit",
        ),
        pytest.param(
            {"containers": [_with("a", {GPU: "1"})], "initContainers": [_with("warm", {GPU: "2", "cpu": "100m"})]},
            Amount.of({"cpu": 100, GPU: 2}),
            id="init-takes-the-most-per-resource",
        ),
        pytest.param(
            {"containers": [_with("a", {GPU: "1"})], "initContainers": [_with("agent", {GPU: "1"}, restartPolicy="Always")]},
            Amount.of({GPU: 2}),
            id="native-sidecar-adds-its-gpu",
        ),
        pytest.param(
            {"containers": [_with("a", {"cpu": "1", "hugepages-2Mi": "2Mi", "ephemeral-storage": "1Gi"})],
             "resources": {"requests": {"hugepages-2Mi": "8Mi", "ephemeral-storage": "9Gi"}}},
            Amount.of({"cpu": 1000, "hugepages-2Mi": 8 * Mi, "ephemeral-storage": Gi}),
            id="pod-level-replaces-hugepages-but-not-ephemeral-storage",
        ),
        pytest.param(
            {"containers": [_with("a", {"cpu": "1", "pods": "3", "storage": "1Gi"})]},
            Amount(1000, 0),
            id="names-no-node-counts-are-left-out",
        ),
        pytest.param({"containers": [_with("a", {GPU: "1"})], "overhead": {GPU: "1"}}, Amount.of({GPU: 2}), id="overhead-adds-every-resource"),
    ],
)
def test_the_effective_request_of_other_resources(spec: dict[str, Any], expected: Amount) -> None:
    assert pod_request(_pod(**spec)) == expected
