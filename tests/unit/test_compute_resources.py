"""compute_resources, sim_task_spec(resources=...) and the filler: other resources asked for as users write them."""

from __future__ import annotations

import pytest

from harness.cluster.compute_resources import compute_resources, needs_equal_limit, page_size_problem
from harness.cluster.simulation import sim_task_spec
from harness.errors import HarnessError
from harness.quantities import Amount, pod_request
from harness.suite.manifests import RenderContext, render

pytestmark = pytest.mark.unit

GPU = "example.com/gpu"


def test_gpus_and_hugepages_get_equal_limits_and_ephemeral_storage_none() -> None:
    assert compute_resources(cpu="500m", memory="1Gi", others={GPU: "1", "ephemeral-storage": "6Gi", "hugepages-2Mi": "4Mi"}) == {
        "requests": {"cpu": "500m", "memory": "1Gi", GPU: "1", "ephemeral-storage": "6Gi", "hugepages-2Mi": "4Mi"},
        "limits": {GPU: "1", "hugepages-2Mi": "4Mi"},
    }


def test_cpu_and_memory_alone_are_requests_as_before() -> None:
    assert compute_resources(cpu="480m") == {"requests": {"cpu": "480m"}}
    assert compute_resources() == {}


@pytest.mark.parametrize(
    "others, cpu, message",
    [
        pytest.param({"hugepages-2Mi": "4Mi"}, None, "hugepages need a cpu or memory request", id="hugepages-alone"),
        pytest.param({"hugepages-2Mi": "3Mi"}, "1", "not a whole number of 2Mi pages", id="part-of-a-page"),
        pytest.param({"cpu": "1"}, None, "pass cpu and memory as their own arguments", id="cpu-among-others"),
        pytest.param({"gpu": "1"}, "1", "a name with '/'", id="unqualified-gpu"),
    ],
)
def test_shapes_the_api_server_refuses_fail_here(others: dict[str, str], cpu: str | None, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        compute_resources(cpu=cpu, others=others)


@pytest.mark.parametrize(
    "resource, equal",
    [("cpu", False), ("memory", False), ("ephemeral-storage", False), ("hugepages-1Gi", True), (GPU, True), ("kubernetes.io/x", False)],
)
def test_which_resources_need_an_equal_limit(resource: str, equal: bool) -> None:
    assert needs_equal_limit(resource) is equal


def test_whole_pages_pass() -> None:
    assert page_size_problem("hugepages-1Gi", "2Gi") == "" and page_size_problem(GPU, "3") == ""


def test_a_simulated_task_asks_for_a_gpu_on_its_first_step() -> None:
    spec = sim_task_spec(cpu="480m", resources={GPU: "1", "ephemeral-storage": "6Gi"})
    work = spec["steps"][0]
    assert work["computeResources"] == {"requests": {"cpu": "480m", GPU: "1", "ephemeral-storage": "6Gi"}, "limits": {GPU: "1"}}
    pod = {"spec": {"containers": [{"name": "step-work", "resources": work["computeResources"]}]}}
    assert pod_request(pod) == Amount.of({"cpu": 480, GPU: 1, "ephemeral-storage": 6 << 30})


def test_the_filler_renders_other_resources_and_stays_as_it_was_without() -> None:
    context = RenderContext("ns", "tkn-scheduler", {}, 4800, 8 << 30)
    plain = render("filler", RenderContext(**{**context.__dict__, "extra": {"name": "f", "node": "n1"}}))
    assert plain[0]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1200m"}}
    gpu = render("filler", RenderContext(**{**context.__dict__, "extra": {"name": "f", "node": "n1", "resources": {GPU: "1"}}}))
    assert gpu[0]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1200m", GPU: "1"}, "limits": {GPU: "1"}}
