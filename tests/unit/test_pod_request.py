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
