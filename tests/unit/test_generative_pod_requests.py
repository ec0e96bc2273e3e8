"""harness.generative.pod_requests beyond CPU and memory: section 6.1's steps for every resource a task requests."""

from __future__ import annotations

import pytest

from harness.generative.pod_requests import contract_pod_request, contract_requests
from harness.quantities import Amount

pytestmark = pytest.mark.unit

GPU = "example.com/gpu"


def test_other_resources_follow_section_6_1_like_cpu() -> None:
    """A GPU limit alone is the request; the LimitRange's ephemeral-storage default is shared among the steps as Tekton shares it."""
    task = {"steps": [
        {"name": "train", "computeResources": {"limits": {GPU: "1"}, "requests": {"cpu": "1"}}},
        {"name": "report", "computeResources": {"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}}},
    ]}
    limit_range = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"ephemeral-storage": "4Gi", "hugepages-2Mi": "2Mi"}}]}}
    containers = contract_requests(task, {}, limit_range)
    # Tekton shares ephemeral-storage (not hugepages) among the 2 steps; the API server then defaults hugepages on every container.
    assert containers["step-train"] == Amount.of({"cpu": 1000, GPU: 1, "ephemeral-storage": 2 << 30, "hugepages-2Mi": 2 << 20})
    assert containers["step-report"] == Amount.of({"cpu": 100, "ephemeral-storage": 1 << 30, "hugepages-2Mi": 2 << 20})
    assert containers["prepare"] == Amount.of({"ephemeral-storage": 4 << 30, "hugepages-2Mi": 2 << 20})
    assert contract_pod_request(containers) == Amount.of({"cpu": 1100, GPU: 1, "ephemeral-storage": 4 << 30, "hugepages-2Mi": 4 << 20})


def test_a_task_level_request_is_shared_as_tekton_shares_it() -> None:
    """Tekton divides by the steps in millis for resources other than memory and ephemeral-storage: half a GPU, counted as 1."""
    task = {"steps": [{"name": "a"}, {"name": "b"}]}
    run_spec = {"computeResources": {"requests": {"cpu": "1", GPU: "1", "ephemeral-storage": "3"}}}
    containers = contract_requests(task, run_spec, None)
    assert containers["step-a"] == containers["step-b"] == Amount.of({"cpu": 500, GPU: 1, "ephemeral-storage": 1})


def test_names_no_node_counts_are_left_out() -> None:
    task = {"steps": [{"name": "a", "computeResources": {"requests": {"cpu": "1", "pods": "2"}}}]}
    assert contract_requests(task, {}, None)["step-a"] == Amount(1000, 0)
