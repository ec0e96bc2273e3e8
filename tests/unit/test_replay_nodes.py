"""rescon replay's nodes: `--nodes FILE` read as the user's cluster has them, `--pool` shorthand, and pods that have nowhere to go."""

from __future__ import annotations

import pytest

from harness.cluster.node_pools import KWOK_NODE_ANNOTATION, POOL_LABEL, NodeShape
from harness.quantities import Amount
from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.nodes import NodeSpec, nodes_from_text, pool_nodes, worker_shapes
from harness.replay.placement import admits, placement_problem, pod_template_for, tolerates

pytestmark = pytest.mark.unit

# Trimmed from `kubectl get nodes -o yaml` on a two-worker cluster: status and metadata as the API server returns them.
NODES_YAML = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: ci-worker-a
    uid: 0f3c
    resourceVersion: "9912"
    annotations: {node.alpha.kubernetes.io/ttl: "0", volumes.kubernetes.io/controller-managed-attach-detach: "true"}
    labels:
      kubernetes.io/hostname: ci-worker-a
      kubernetes.io/os: linux
      topology.kubernetes.io/zone: europe-west1-b
      node-role.kubernetes.io/ci: ""
      workload: builds
  spec:
    podCIDR: 10.244.1.0/24
    taints:
    - {key: workload, value: builds, effect: NoSchedule}
    - {key: node.kubernetes.io/not-ready, effect: NoSchedule}
  status:
    capacity: {cpu: "8", memory: 32882796Ki, pods: "110", ephemeral-storage: 101203Mi, nvidia.com/gpu: "1"}
    allocatable: {cpu: 7910m, memory: 29393516Ki, pods: "110", ephemeral-storage: "93263458773", nvidia.com/gpu: "1"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata:
    name: ci-worker-b
    labels: {kubernetes.io/hostname: ci-worker-b, topology.kubernetes.io/zone: europe-west1-c}
  spec: {unschedulable: true}
  status:
    allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
"""


def test_a_nodes_file_keeps_names_labels_taints_cordons_and_resources() -> None:
    a, b = nodes_from_text(NODES_YAML, "nodes.yaml")
    assert a.name == "ci-worker-a" and a.labels["topology.kubernetes.io/zone"] == "europe-west1-b"
    assert a.taints == ({"key": "workload", "value": "builds", "effect": "NoSchedule"},)  # not-ready is the old node's state
    assert a.allocatable["cpu"] == "7910m" and a.capacity["cpu"] == "8"
    assert a.size() == Amount.of({"cpu": 7910, "memory": 29393516 * 1024, "ephemeral-storage": 93263458773, "nvidia.com/gpu": 1})
    assert (b.name, b.unschedulable, b.capacity) == ("ci-worker-b", True, {"cpu": "4", "memory": "16Gi", "pods": "110"})


def test_each_node_becomes_a_kwok_node_of_the_pool_with_its_own_labels() -> None:
    a, _ = nodes_from_text(NODES_YAML, "nodes.yaml")
    manifest = a.manifest("replay-1a2b3c")
    assert manifest["metadata"]["name"] == "ci-worker-a"
    assert manifest["metadata"]["labels"] == {
        "kubernetes.io/hostname": "ci-worker-a", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok",
        "topology.kubernetes.io/zone": "europe-west1-b", "node-role.kubernetes.io/ci": "", "workload": "builds", POOL_LABEL: "replay-1a2b3c",
    }
    assert manifest["metadata"]["annotations"][KWOK_NODE_ANNOTATION] == "fake"
    assert manifest["spec"] == {"taints": [{"key": "workload", "value": "builds", "effect": "NoSchedule"}]}
    assert manifest["status"]["allocatable"]["nvidia.com/gpu"] == "1"


def test_a_file_with_no_node_or_another_kind_is_refused() -> None:
    with pytest.raises(ReplayInputError) as empty:
        nodes_from_text("apiVersion: v1\nkind: List\nitems: []\n", "nodes.yaml")
    assert str(empty.value) == "nodes.yaml holds no Node: give the output of `kubectl get nodes -o yaml` from your cluster"
    with pytest.raises(ReplayInputError) as pod:
        nodes_from_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "nodes.yaml")
    assert str(pod.value) == bad_input.not_a_node("nodes.yaml#1", "Pod")


def test_a_node_without_resources_or_listed_twice_is_refused() -> None:
    with pytest.raises(ReplayInputError) as bare:
        nodes_from_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "nodes.yaml")
    assert str(bare.value) == bad_input.node_without_size("nodes.yaml", "n")
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '1'}}\n"
    with pytest.raises(ReplayInputError) as twice:
        nodes_from_text(node + "---\n" + node, "nodes.yaml")
    assert str(twice.value) == bad_input.node_defined_twice("nodes.yaml", "n")


def test_the_pool_shorthand_makes_kubelet_sized_nodes() -> None:
    nodes = pool_nodes("2x4cpu8Gi+1x500mcpu1536Mi", "replay-x")
    assert [n.name for n in nodes] == ["replay-x-0", "replay-x-1", "replay-x-2"]
    # allocatable exactly as given; capacity 200m and 512Mi more, as a kubelet's reservations make it.
    assert nodes[0].size() == Amount(4000, 8 * 2**30, (("ephemeral-storage", 90 * 2**30),))
    assert (nodes[2].capacity["cpu"], nodes[2].capacity["memory"]) == ("700m", str(2048 * 2**20))


@pytest.mark.parametrize("text", ["4x4", "0x4cpu8Gi", "4cpu8Gi", "2x4cpu8Gb", "2xcpu8Gi", "2x4cpu8Gi+"])
def test_a_pool_that_is_not_one_shows_the_form(text: str) -> None:
    with pytest.raises(ReplayInputError) as err:
        pool_nodes(text, "p")
    assert str(err.value) == bad_input.bad_pool(text)


def test_workers_of_kind_take_labels_taints_cordons_and_extended_resources_only() -> None:
    a, b = nodes_from_text(NODES_YAML, "nodes.yaml")
    assert worker_shapes([a, b]) == [
        NodeShape(0, taints=(("workload", "builds", "NoSchedule"),),
                  labels=(("topology.kubernetes.io/zone", "europe-west1-b"), ("workload", "builds")), resources=(("nvidia.com/gpu", "1"),)),
        NodeShape(1, cordoned=True, labels=(("topology.kubernetes.io/zone", "europe-west1-c"),)),
    ]


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, True),
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
        ({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, {"key": "k", "effect": "NoSchedule"}, False),
    ],
    ids=["empty-key-exists", "key-exists", "key-equal-value", "other-value", "other-effect"],
)
def test_tolerations_follow_kubernetes(toleration: dict[str, str], taint: dict[str, str], expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


def test_a_task_template_overrides_the_runs_field_by_field() -> None:
    spec = {"taskRunTemplate": {"podTemplate": {"nodeSelector": {"a": "1"}, "tolerations": [{"operator": "Exists"}]}},
            "taskRunSpecs": [{"pipelineTaskName": "gpu", "podTemplate": {"nodeSelector": {"gpu": "yes"}}}]}
    assert pod_template_for(spec, "gpu") == {"nodeSelector": {"gpu": "yes"}, "tolerations": [{"operator": "Exists"}]}
    assert pod_template_for(spec, "lint") == {"nodeSelector": {"a": "1"}, "tolerations": [{"operator": "Exists"}]}


def test_a_pod_with_nowhere_to_go_is_named() -> None:
    a, b = nodes_from_text(NODES_YAML, "nodes.yaml")
    builds = {"nodeSelector": {"workload": "builds"}, "tolerations": [{"key": "workload", "operator": "Exists"}]}
    assert admits(a, builds) and not admits(b, {})  # b is cordoned
    assert placement_problem("compile", Amount(7910, 2**30), builds, [a, b]) is None
    assert placement_problem("compile", Amount(7911, 2**30), builds, [a, b]) == (
        "task compile asks 7911m CPU, 1024Mi, more than any node that admits it allocates (ci-worker-a: 7910m CPU, 28705Mi, "
        "ephemeral-storage 93263458773, nvidia.com/gpu 1)")
    assert placement_problem("lint", Amount(100), {"nodeSelector": {"workload": "builds", POOL_LABEL: "p"}}, [a, b], ignore_labels=(POOL_LABEL,)) == (
        "no node admits task lint's pod (nodeSelector {'workload': 'builds'}, 0 tolerations; nodes' taints and cordons)")


def test_a_node_spec_reads_its_allocatable_as_the_suite_counts_it() -> None:
    assert NodeSpec("n", {"cpu": "1.5", "memory": "1Gi", "pods": "110"}, {}).size() == Amount(1500, 2**30)
