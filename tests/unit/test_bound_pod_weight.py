"""What a bound pod weighs with its status: the reference (bound_pod_request) and the harness (pod_request), each against hand-computed values.

Both must count a bound pod as kube-scheduler v1.37 and the kubelet do
(PodRequests with UseStatusResources), or the kubelet refuses the pods bound
beside it. The overhead case is the one measured on kind (v1.37.2): a running
pod of 38m with a RuntimeClass overhead of 593m weighs 1224m, since the
kubelet's pod-level status already holds the overhead and PodRequests adds it
again (kubernetes/kubernetes#139627).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.audit.slim import slim_pod
from harness.quantities import pod_request
from reference_scheduler.core.bound_pod_requests import bound_pod_request

pytestmark = pytest.mark.unit

Mi = 2**20
OVERHEAD_MEMORY = 786604288

SMALL_WITH_OVERHEAD_SPEC: dict[str, Any] = {
    "overhead": {"cpu": "593m", "memory": str(OVERHEAD_MEMORY)},
    "containers": [{"name": "step-work", "resources": {"requests": {"cpu": "38m"}}}],
    "initContainers": [{"name": "prepare"}, {"name": "place-scripts"}],
}

STEP_AND_SIDE_SPEC: dict[str, Any] = {
    "containers": [
        {"name": "step", "resources": {"requests": {"cpu": "10m"}}},
        {"name": "side", "resources": {"requests": {"cpu": "100m", "example.com/gpu": "1"}, "limits": {"example.com/gpu": "1"}}},
    ]
}

CASES: dict[str, tuple[dict[str, Any], tuple[int, int, int]]] = {
    # (pod, (cpu millis, memory bytes, example.com/gpu))
    "no status: the spec": ({"spec": SMALL_WITH_OVERHEAD_SPEC}, (631, OVERHEAD_MEMORY, 0)),
    "pending, scheduled condition only: the spec": (
        {"spec": SMALL_WITH_OVERHEAD_SPEC, "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}},
        (631, OVERHEAD_MEMORY, 0),
    ),
    # kind, v1.37.2: pod-level allocated and actuated 631m / the overhead's memory, then the overhead again.
    "running with the kubelet's pod-level status: the overhead twice": (
        {
            "spec": SMALL_WITH_OVERHEAD_SPEC,
            "status": {
                "phase": "Running",
                "allocatedResources": {"cpu": "631m", "memory": str(OVERHEAD_MEMORY)},
                "resources": {"requests": {"cpu": "631m", "memory": str(OVERHEAD_MEMORY)}, "limits": {"memory": "9007199254740988Ki"}},
                "containerStatuses": [{"name": "step-work", "allocatedResources": {"cpu": "38m"}, "resources": {"requests": {"cpu": "38m"}}}],
            },
        },
        (38 + 593 + 593, 2 * OVERHEAD_MEMORY, 0),
    ),
    # Only one of the two pod-level values: the per-container values decide (KWOK writes containers' resources only).
    "pod-level allocation alone: per container": (
        {
            "spec": SMALL_WITH_OVERHEAD_SPEC,
            "status": {"allocatedResources": {"cpu": "631m"}, "containerStatuses": [{"name": "step-work", "resources": {"requests": {"cpu": "38m"}}}]},
        },
        (631, OVERHEAD_MEMORY, 0),
    ),
    # The step lowered in place to 10m, the kubelet still holding 300m: 300m + the side's 100m.
    "lowered, not yet allocated: the allocation": (
        {"spec": STEP_AND_SIDE_SPEC, "status": {"containerStatuses": [
            {"name": "step", "allocatedResources": {"cpu": "300m"}}, {"name": "side", "allocatedResources": {"cpu": "100m"}},
        ]}},
        (400, 0, 1),
    ),
    "lowered and allocated, still running at 300m: what runs": (
        {"spec": STEP_AND_SIDE_SPEC, "status": {"containerStatuses": [
            {"name": "step", "allocatedResources": {"cpu": "10m"}, "resources": {"requests": {"cpu": "300m"}}},
        ]}},
        (400, 0, 1),
    ),
    "lowered and actuated: the spec": (
        {"spec": STEP_AND_SIDE_SPEC, "status": {"containerStatuses": [
            {"name": "step", "allocatedResources": {"cpu": "10m"}, "resources": {"requests": {"cpu": "10m"}}},
        ]}},
        (110, 0, 1),
    ),
    # Raised to 10m -> 900m but Deferred: the spec already counts (max of spec, allocated, actuated).
    "raised, deferred: the spec": (
        {"spec": {"containers": [{"name": "step", "resources": {"requests": {"cpu": "900m"}}}]}, "status": {
            "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}],
            "containerStatuses": [{"name": "step", "allocatedResources": {"cpu": "10m"}, "resources": {"requests": {"cpu": "10m"}}}],
        }},
        (900, 0, 0),
    ),
    # Raised but Infeasible: the spec is left out, what the kubelet holds counts.
    "raised, infeasible: what the kubelet holds": (
        {"spec": {"containers": [{"name": "step", "resources": {"requests": {"cpu": "900m"}}}]}, "status": {
            "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
            "containerStatuses": [{"name": "step", "allocatedResources": {"cpu": "10m"}, "resources": {"requests": {"cpu": "10m"}}}],
        }},
        (10, 0, 0),
    ),
    # A pod-level request of 1 CPU, status 1200m (it holds the 200m overhead): 1200m, plus the overhead.
    "pod-level request with pod-level status": (
        {"spec": {"resources": {"requests": {"cpu": "1"}}, "overhead": {"cpu": "200m"},
                  "containers": [{"name": "c", "resources": {"requests": {"cpu": "300m"}}}]},
         "status": {"allocatedResources": {"cpu": "1200m"}, "resources": {"requests": {"cpu": "1200m"}}}},
        (1400, 0, 0),
    ),
    # An init container's allocation counts as an init container: max(running 100m, init 500m).
    "init container allocation": (
        {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
                  "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "200m"}}}]},
         "status": {"initContainerStatuses": [{"name": "i", "allocatedResources": {"cpu": "500m"}}]}},
        (500, 0, 0),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_reference_weighs_a_bound_pod_as_kube_scheduler_does(case: str) -> None:
    pod, (cpu, memory, gpus) = CASES[case]
    weight = bound_pod_request(pod)
    assert (weight.cpu, weight.memory, weight.get("example.com/gpu")) == (cpu, memory, gpus)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_harness_weighs_a_bound_pod_as_kube_scheduler_does(case: str) -> None:
    pod, (cpu, memory, gpus) = CASES[case]
    weight = pod_request(pod)
    assert (weight.cpu, weight.memory, weight.get("example.com/gpu")) == (cpu, memory, gpus)



@pytest.mark.parametrize("case", sorted(CASES))
def test_the_auditors_slim_pod_keeps_the_weight(case: str) -> None:
    pod, (cpu, memory, gpus) = CASES[case]
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, **pod}
    weight = pod_request(slim_pod(pod))
    assert (weight.cpu, weight.memory, weight.get("example.com/gpu")) == (cpu, memory, gpus)
