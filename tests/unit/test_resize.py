"""resize_patch: lower lingering pods' requests to the floor, never up, never changing QoS."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.resize import resize_patch
from reference_scheduler.core.resources import Resources, cpu_millis

pytestmark = pytest.mark.unit

FLOOR = Resources(cpu=10, memory=16 << 20)


def _pod(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"containers": list(containers)}}


def test_step_and_sidecar_above_the_floor_drop_to_it() -> None:
    pod = _pod(
        {"name": "step-work", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
        {"name": "sidecar-linger", "resources": {"requests": {"cpu": "100m"}}},
    )
    assert resize_patch(pod, FLOOR) == {
        "spec": {
            "containers": [
                {"name": "step-work", "resources": {"requests": {"cpu": "10m", "memory": str(16 << 20)}}},
                {"name": "sidecar-linger", "resources": {"requests": {"cpu": "10m"}}},
            ]
        }
    }


def test_nothing_to_do_at_or_below_the_floor() -> None:
    assert resize_patch(_pod({"name": "c", "resources": {"requests": {"cpu": "5m"}}}), FLOOR) is None
    assert resize_patch(_pod({"name": "c"}), FLOOR) is None


def test_guaranteed_containers_are_left_alone() -> None:
    pod = _pod({"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}})
    assert resize_patch(pod, FLOOR) is None


@given(st.integers(min_value=0, max_value=64_000))
def test_a_request_is_never_raised(millis: int) -> None:
    patch = resize_patch(_pod({"name": "c", "resources": {"requests": {"cpu": f"{millis}m"}}}), FLOOR)
    if patch is None:
        assert millis <= FLOOR.cpu
    else:
        new = cpu_millis(patch["spec"]["containers"][0]["resources"]["requests"]["cpu"])
        assert new == FLOOR.cpu < millis
