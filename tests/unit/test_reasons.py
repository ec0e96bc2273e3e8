"""Reason records: the messages operators read and grep for."""

from __future__ import annotations

import pytest

from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.reasons import (
    EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    FIT_ERROR_MESSAGE,
    NODE_PORTS_CONFLICT_SUMMARY,
    POD_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY,
    TOPOLOGY_SPREAD_MISSING_LABEL_SUMMARY,
    ExistingPodsAntiAffinityRulesNotMatch,
    NodePortsConflict,
    PodAffinityRulesNotMatch,
    PodAntiAffinityRulesNotMatch,
    TopologySpreadConstraintsNotMatch,
    TopologySpreadMissingLabel,
    GROUP_RESERVED_ON_ANOTHER_NODE_MESSAGE,
    INSUFFICIENT_RESOURCE_SUMMARY,
    NODE_SELECTOR_MISMATCH_SUMMARY,
    NODE_UNSCHEDULABLE_MESSAGE,
    NODE_UNSCHEDULABLE_SUMMARY,
    TOO_MANY_PODS_MESSAGE,
    UNBOUND_IMMEDIATE_CLAIMS_SUMMARY,
    VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY,
    AllowedTopologyMismatch,
    BoundVolumeNotFound,
    UNTOLERATED_TAINT_SUMMARY,
    GroupReservedOnAnotherNode,
    InsufficientResource,
    NodeAffinityMismatch,
    NodeNameMismatch,
    NodeSelectorMismatch,
    NodeUnschedulable,
    Reason,
    ReasonCode,
    SelectedNodeMismatch,
    TooManyPods,
    UnboundImmediateClaims,
    UntoleratedTaint,
    VolumeClaimBeingDeleted,
    VolumeClaimNotFound,
    VolumeNodeAffinityConflict,
    fit_error_message,
    format_amount,
    unresolvable_error_message,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        pytest.param("cpu", 2000, "2000m", id="cpu-in-millicores"),
        pytest.param("cpu", 0, "0m", id="cpu-zero"),
        pytest.param("cpu", -200, "-200m", id="cpu-negative-when-overcommitted"),
        pytest.param("memory", 256 * 1024**2, "256Mi", id="memory-mebibytes"),
        pytest.param("memory", 3 * 1024**3, "3Gi", id="memory-gibibytes"),
        pytest.param("memory", 1536 * 1024**2, "1536Mi", id="memory-largest-exact-unit"),
        pytest.param("memory", 1000, "1000", id="memory-odd-bytes"),
        pytest.param("memory", 0, "0", id="memory-zero"),
        pytest.param("memory", -(1024**3), "-1Gi", id="memory-negative"),
    ],
)
def test_format_amount(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text


def test_insufficient_resource_seed_message() -> None:
    reason = InsufficientResource("cpu", 2000, 1000, 4800, 200, 3600)
    assert reason.message() == (
        "Insufficient cpu: requires 2000m, available 1000m "
        "(allocatable 4800m, pods 200m, reserved by other groups 3600m)"
    )
    assert reason.summary() == INSUFFICIENT_RESOURCE_SUMMARY.format(resource="cpu") == "Insufficient cpu"
    assert reason.code == ReasonCode.INSUFFICIENT_RESOURCE == "InsufficientResource"


@pytest.mark.parametrize(
    ("reason", "message", "code"),
    [
        pytest.param(
            TooManyPods(allowed=110, bound=110),
            TOO_MANY_PODS_MESSAGE.format(allowed=110, bound=110),
            ReasonCode.TOO_MANY_PODS,
            id="too-many-pods",
        ),
        pytest.param(
            NodeNameMismatch(requested="n2", node="n1"),
            "node n1 didn't match the requested node name n2",
            ReasonCode.NODE_NAME_MISMATCH,
            id="node-name-mismatch",
        ),
        pytest.param(NodeUnschedulable(), NODE_UNSCHEDULABLE_MESSAGE, ReasonCode.NODE_UNSCHEDULABLE, id="cordoned"),
        pytest.param(
            UntoleratedTaint("gpu", "true", "NoSchedule"),
            "node had untolerated taint gpu=true:NoSchedule",
            ReasonCode.UNTOLERATED_TAINT,
            id="untolerated-taint",
        ),
        pytest.param(
            NodeSelectorMismatch("pool", "ci", None),
            "node didn't match Pod's nodeSelector: wants pool=ci, node has no label pool",
            ReasonCode.NODE_SELECTOR_MISMATCH,
            id="node-selector-label-absent",
        ),
        pytest.param(
            NodeSelectorMismatch("pool", "ci", "batch"),
            "node didn't match Pod's nodeSelector: wants pool=ci, node has pool=batch",
            ReasonCode.NODE_SELECTOR_MISMATCH,
            id="node-selector-label-differs",
        ),
        pytest.param(
            NodeAffinityMismatch(terms=2),
            "node didn't match any of the Pod's 2 required node affinity term(s)",
            ReasonCode.NODE_AFFINITY_MISMATCH,
            id="node-affinity-mismatch",
        ),
        pytest.param(
            GroupReservedOnAnotherNode(GroupKey("ci", "run-1", "g0"), "n2"),
            GROUP_RESERVED_ON_ANOTHER_NODE_MESSAGE.format(group="ci/run-1/g0", reserved_node="n2"),
            ReasonCode.GROUP_RESERVED_ON_ANOTHER_NODE,
            id="group-reserved-on-another-node",
        ),
        pytest.param(VolumeClaimNotFound("cache"), 'persistentvolumeclaim "cache" not found', ReasonCode.VOLUME_CLAIM_NOT_FOUND, id="claim-not-found"),
        pytest.param(
            VolumeClaimBeingDeleted("cache"), 'persistentvolumeclaim "cache" is being deleted', ReasonCode.VOLUME_CLAIM_BEING_DELETED, id="claim-being-deleted"
        ),
        pytest.param(
            UnboundImmediateClaims(("a", "b")),
            "pod has unbound immediate PersistentVolumeClaims: a, b (bound by the PV controller, not on a node the scheduler picks)",
            ReasonCode.UNBOUND_IMMEDIATE_CLAIMS,
            id="unbound-immediate-claims",
        ),
        pytest.param(
            BoundVolumeNotFound("cache", "pv-1"),
            'persistentvolumeclaim "cache" is bound to persistentvolume "pv-1", which does not exist',
            ReasonCode.BOUND_VOLUME_NOT_FOUND,
            id="bound-volume-not-found",
        ),
        pytest.param(
            VolumeNodeAffinityConflict("cache", "pv-1"),
            'node is not admitted by the node affinity of persistentvolume "pv-1" (the volume of persistentvolumeclaim "cache")',
            ReasonCode.VOLUME_NODE_AFFINITY_CONFLICT,
            id="volume-node-affinity-conflict",
        ),
        pytest.param(
            SelectedNodeMismatch("src", "n2"),
            'persistentvolumeclaim "src" is being provisioned on node n2',
            ReasonCode.SELECTED_NODE_MISMATCH,
            id="selected-node-mismatch",
        ),
        pytest.param(
            AllowedTopologyMismatch("src", "zonal"),
            'node is not in the allowedTopologies of storageclass "zonal" (the class of persistentvolumeclaim "src")',
            ReasonCode.ALLOWED_TOPOLOGY_MISMATCH,
            id="allowed-topology-mismatch",
        ),
    ],
)
def test_messages_and_codes(reason: Reason, message: str, code: ReasonCode) -> None:
    assert reason.message() == message
    assert reason.code == code


def test_taint_summary_reads_like_kube_scheduler() -> None:
    reason = UntoleratedTaint("gpu", "true", "NoExecute")
    assert reason.summary() == UNTOLERATED_TAINT_SUMMARY.format(key="gpu", value="true")
    assert reason.summary() == "node(s) had untolerated taint {gpu: true}"


def test_selector_and_affinity_share_a_summary() -> None:
    assert NodeSelectorMismatch("a", "b", None).summary() == NodeAffinityMismatch(1).summary()
    assert NodeAffinityMismatch(1).summary() == NODE_SELECTOR_MISMATCH_SUMMARY


def test_fit_error_message_counts_nodes_per_summary_sorted() -> None:
    message = fit_error_message(
        4,
        {
            "n1": [InsufficientResource("cpu", 2000, 1000, 4800, 200, 3600)],
            "n2": [NodeUnschedulable()],
            "n3": [NodeUnschedulable(), InsufficientResource("cpu", 2000, 0, 4800, 4800, 0)],
            "n4": [NodeSelectorMismatch("pool", "ci", None), NodeAffinityMismatch(1)],
        },
    )
    assert message == (
        "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        f"2 Insufficient cpu, 2 {NODE_UNSCHEDULABLE_SUMMARY}."
    )
    assert message == FIT_ERROR_MESSAGE.format(
        total=4,
        reasons="1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu, 2 node(s) were unschedulable",
    )


def test_volume_summaries_are_kube_schedulers_strings() -> None:
    # Users and monitors grep for these (volume spec V1).
    assert VolumeNodeAffinityConflict("c", "pv").summary() == VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY == "node(s) had volume node affinity conflict"
    assert UnboundImmediateClaims(("c",)).summary() == UNBOUND_IMMEDIATE_CLAIMS_SUMMARY == "pod has unbound immediate PersistentVolumeClaims"
    assert BoundVolumeNotFound("c", "pv").summary() == "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
    assert SelectedNodeMismatch("c", "n1").summary() == "node(s) did not match the claim's selected node"
    assert AllowedTopologyMismatch("c", "sc").summary() == "node(s) didn't match the storage class's allowed topologies"
    # A claim's own reasons are the same on every node: the summary names the claim.
    assert VolumeClaimNotFound("c").summary() == VolumeClaimNotFound("c").message()


def test_unresolvable_error_message_is_kube_schedulers_prefilter_shape() -> None:
    assert unresolvable_error_message(3, [VolumeClaimNotFound("c")]) == '0/3 nodes are available: persistentvolumeclaim "c" not found.'
    assert unresolvable_error_message(1, [VolumeClaimNotFound("a"), VolumeClaimBeingDeleted("b")]) == (
        '0/1 nodes are available: persistentvolumeclaim "a" not found; persistentvolumeclaim "b" is being deleted.'
    )


def test_reasons_are_hashable_records() -> None:
    assert len({NodeUnschedulable(), NodeUnschedulable(), TooManyPods(1, 1)}) == 2


# --- the filters that read other pods: kube-scheduler v1.37's ErrReason strings, word for word ---


@pytest.mark.parametrize(
    ("reason", "summary", "message", "code"),
    [
        pytest.param(
            NodePortsConflict((("0.0.0.0", "TCP", 8080), ("10.0.0.1", "UDP", 53))),
            "node(s) didn't have free ports for the requested pod ports",  # nodeports.ErrReason
            "host port(s) 8080/TCP on 0.0.0.0, 53/UDP on 10.0.0.1 requested by the pod are already bound on the node",
            ReasonCode.NODE_PORTS_CONFLICT,
            id="node-ports",
        ),
        pytest.param(
            PodAffinityRulesNotMatch(terms=2),
            "node(s) didn't match pod affinity rules",  # interpodaffinity.ErrReasonAffinityRulesNotMatch
            "no pod matching all of the pod's 2 required pod affinity term(s) runs in the node's topology domain(s)",
            ReasonCode.POD_AFFINITY_RULES_NOT_MATCH,
            id="pod-affinity",
        ),
        pytest.param(
            PodAffinityRulesNotMatch(1, "topology.kubernetes.io/zone"),
            "node(s) didn't match pod affinity rules",
            "node has no label topology.kubernetes.io/zone, the topologyKey of a required pod affinity term",
            ReasonCode.POD_AFFINITY_RULES_NOT_MATCH,
            id="pod-affinity-missing-topology-key",
        ),
        pytest.param(
            PodAntiAffinityRulesNotMatch("kubernetes.io/hostname", "n1"),
            "node(s) didn't match pod anti-affinity rules",  # interpodaffinity.ErrReasonAntiAffinityRulesNotMatch
            "a pod that the pod's required anti-affinity rejects runs in the node's topology domain kubernetes.io/hostname=n1",
            ReasonCode.POD_ANTI_AFFINITY_RULES_NOT_MATCH,
            id="pod-anti-affinity",
        ),
        pytest.param(
            ExistingPodsAntiAffinityRulesNotMatch("topology.kubernetes.io/zone", "a"),
            "node(s) didn't satisfy existing pods anti-affinity rules",  # interpodaffinity.ErrReasonExistingAntiAffinityRulesNotMatch
            "a pod in the node's topology domain topology.kubernetes.io/zone=a has required anti-affinity against this pod",
            ReasonCode.EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH,
            id="existing-pods-anti-affinity",
        ),
        pytest.param(
            TopologySpreadConstraintsNotMatch("topology.kubernetes.io/zone", "a", 2, 1, 0, 1),
            "node(s) didn't match pod topology spread constraints",  # podtopologyspread.ErrReasonConstraintsNotMatch
            "placing the pod in topology.kubernetes.io/zone=a makes the skew 3 (2 matching pod(s) there + 1 - global minimum 0), more than maxSkew 1",
            ReasonCode.TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH,
            id="topology-spread",
        ),
        pytest.param(
            TopologySpreadMissingLabel("topology.kubernetes.io/zone"),
            "node(s) didn't match pod topology spread constraints (missing required label)",  # podtopologyspread.ErrReasonNodeLabelNotMatch
            "node has no label topology.kubernetes.io/zone, the topologyKey of a DoNotSchedule spread constraint",
            ReasonCode.TOPOLOGY_SPREAD_MISSING_LABEL,
            id="topology-spread-missing-label",
        ),
    ],
)
def test_inter_pod_reasons(reason: Reason, summary: str, message: str, code: ReasonCode) -> None:
    assert (reason.summary(), reason.message(), reason.code) == (summary, message, code)


def test_inter_pod_summaries_are_the_module_constants() -> None:
    assert NodePortsConflict(()).summary() == NODE_PORTS_CONFLICT_SUMMARY
    assert PodAffinityRulesNotMatch(1).summary() == POD_AFFINITY_RULES_NOT_MATCH_SUMMARY
    assert PodAntiAffinityRulesNotMatch("k", "v").summary() == POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY
    assert ExistingPodsAntiAffinityRulesNotMatch("k", "v").summary() == EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY
    assert TopologySpreadConstraintsNotMatch("k", "v", 0, 0, 0, 1).summary() == TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY
    assert TopologySpreadMissingLabel("k").summary() == TOPOLOGY_SPREAD_MISSING_LABEL_SUMMARY


def test_a_fit_error_counts_the_new_reasons_like_any_other() -> None:
    message = fit_error_message(
        3,
        {
            "n1": [NodePortsConflict((("0.0.0.0", "TCP", 80),)), InsufficientResource("cpu", 2000, 1000, 4800, 200, 3600)],
            "n2": [PodAntiAffinityRulesNotMatch("kubernetes.io/hostname", "n2")],
            "n3": [TopologySpreadMissingLabel("zone")],
        },
    )
    assert message == (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't have free ports for the requested pod ports, "
        "1 node(s) didn't match pod anti-affinity rules, 1 node(s) didn't match pod topology spread constraints (missing required label)."
    )


@pytest.mark.parametrize(
    ("resource", "amount", "shown"),
    [("ephemeral-storage", 10 * 1024**3, "10Gi"), ("hugepages-2Mi", 4 * 1024**2, "4Mi"), ("nvidia.com/gpu", 2, "2"), ("example.com/gpu", 1024, "1024")],
)
def test_bytes_read_in_binary_units_and_devices_as_counts(resource: str, amount: int, shown: str) -> None:
    from reference_scheduler.core.reasons import format_amount

    assert format_amount(resource, amount) == shown
