"""NodeShape.resources: a pool node given GPUs, hugepages or disk, by a status patch its provider keeps, and put back after."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cluster.node_pools import (
    KWOK_NODE_ANNOTATION,
    NodePool,
    NodeShape,
    is_kubelet_node,
    resources_patch,
    resources_restore,
    shape_pool_nodes,
    shape_resource_problem,
    unshape_pool_nodes,
)
from harness.errors import HarnessError

pytestmark = pytest.mark.unit

GPU = "example.com/gpu"


class FakeCore:
    def __init__(self, *, kwok: bool) -> None:
        from kubernetes.client import V1Node, V1NodeSpec, V1NodeStatus, V1ObjectMeta

        annotations = {KWOK_NODE_ANNOTATION: "fake"} if kwok else {}
        status = V1NodeStatus(capacity={"cpu": "5", "ephemeral-storage": "100Gi"}, allocatable={"cpu": "4800m", "ephemeral-storage": "90Gi"})
        self.nodes = {n: V1Node(metadata=V1ObjectMeta(name=n, annotations=annotations), spec=V1NodeSpec(), status=status) for n in ("p-0", "p-1")}
        self.patches: list[tuple[str, str, dict[str, Any]]] = []

    def read_node(self, name: str) -> Any:
        return self.nodes[name]

    def patch_node(self, name: str, body: dict[str, Any]) -> None:
        self.patches.append(("node", name, body))

    def patch_node_status(self, name: str, body: dict[str, Any]) -> None:
        self.patches.append(("status", name, body))


class FakeKube:
    def __init__(self, *, kwok: bool) -> None:
        from kubernetes.client import ApiClient

        self.core = FakeCore(kwok=kwok)
        self.api = ApiClient()


POOL = NodePool("p", ("p-0", "p-1"), "4800m", "8Gi", 110)


def test_a_kwok_node_gets_gpus_hugepages_and_disk_and_the_undo_puts_back_what_was_there() -> None:
    kube: Any = FakeKube(kwok=True)
    shape = NodeShape(1, resources=((GPU, "2"), ("hugepages-2Mi", "512Mi"), ("ephemeral-storage", "20Gi")))
    undo = shape_pool_nodes(kube, POOL, (shape,))
    values = {GPU: "2", "hugepages-2Mi": "512Mi", "ephemeral-storage": "20Gi"}
    assert kube.core.patches[1] == ("status", "p-1", {"status": {"capacity": values, "allocatable": values}})
    unshape_pool_nodes(kube, undo)
    kind, name, body = kube.core.patches[2]
    assert (kind, name) == ("status", "p-1")
    assert body == {"status": {
        "capacity": {GPU: None, "hugepages-2Mi": None, "ephemeral-storage": "100Gi"},
        "allocatable": {GPU: None, "hugepages-2Mi": None, "ephemeral-storage": "90Gi"},
    }}
    assert kube.core.patches[3][0] == "node" and "status" not in kube.core.patches[3][2]


def test_a_kubelet_node_takes_extended_resources_and_refuses_the_rest_before_changing_anything() -> None:
    kube: Any = FakeKube(kwok=False)
    shape_pool_nodes(kube, POOL, (NodeShape(0, resources=((GPU, "1"),)),))
    assert kube.core.patches[-1] == ("status", "p-0", resources_patch(((GPU, "1"),)))
    refused: Any = FakeKube(kwok=False)
    with pytest.raises(HarnessError, match="a kubelet rewrites ephemeral-storage at its next status update"):
        shape_pool_nodes(refused, POOL, (NodeShape(0, cordoned=True), NodeShape(1, resources=(("ephemeral-storage", "20Gi"),))))
    assert refused.core.patches == []


def test_a_shape_without_resources_patches_no_status() -> None:
    kube: Any = FakeKube(kwok=True)
    unshape_pool_nodes(kube, shape_pool_nodes(kube, POOL, (NodeShape(0, cordoned=True),)))
    assert [kind for kind, _, _ in kube.core.patches] == ["node", "node"]


@pytest.mark.parametrize(
    "resource, quantity, kubelet, problem",
    [
        pytest.param(GPU, "2", True, "", id="gpu-on-kind"),
        pytest.param(GPU, "2", False, "", id="gpu-on-kwok"),
        pytest.param("hugepages-2Mi", "512Mi", False, "", id="hugepages-on-kwok"),
        pytest.param("hugepages-2Mi", "512Mi", True, "a kubelet rewrites hugepages-2Mi", id="hugepages-on-kind"),
        pytest.param("kubernetes.io/batteries", "1", True, "a kubelet rewrites", id="prefixed-native-on-kind"),
        pytest.param("cpu", "8", False, "cpu is the pool's size", id="cpu-is-the-pools"),
        pytest.param("memory", "8Gi", False, "memory is the pool's size", id="memory-is-the-pools"),
        pytest.param("pods", "3", False, "pods is no resource", id="pods"),
        pytest.param(GPU, "two", False, "cannot read", id="not-a-quantity"),
    ],
)
def test_which_resources_each_provider_keeps(resource: str, quantity: str, kubelet: bool, problem: str) -> None:
    found = shape_resource_problem(resource, quantity, kubelet=kubelet)
    assert (problem in found and bool(found)) if problem else found == ""


def test_a_restore_removes_what_was_not_there_and_keeps_the_old_values() -> None:
    status = {"capacity": {GPU: "4"}, "allocatable": {GPU: "3"}}
    assert resources_restore(status, ((GPU, "1"), ("vendor.io/fpga", "1"))) == {
        "status": {"capacity": {GPU: "4", "vendor.io/fpga": None}, "allocatable": {GPU: "3", "vendor.io/fpga": None}}
    }


def test_kwok_nodes_are_known_by_their_annotation() -> None:
    assert not is_kubelet_node({KWOK_NODE_ANNOTATION: "fake"})
    assert is_kubelet_node({}) and is_kubelet_node(None)
