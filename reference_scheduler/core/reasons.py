"""Why a pod does not fit a node: reasons as records, messages as constants.

Each reason is a small frozen record with the numbers an operator needs, a
``message()`` for the one node it was computed for, and a ``summary()`` that is
the same for every node failing the same way, so that ``fit_error_message`` can
count nodes per summary the way kube-scheduler's FitError does
("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.").

The message templates are module constants: tests and users format them instead
of copying the text, so a wording change is made in one place.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Mapping, Sequence, TypeAlias

from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.resource_names import is_byte_resource


class ReasonCode(StrEnum):
    """ReasonCode is the machine-readable kind of a reason, for metrics labels and logs.

    Example: ``InsufficientResource("cpu", ...).code == ReasonCode.INSUFFICIENT_RESOURCE``
    and ``ReasonCode.INSUFFICIENT_RESOURCE == "InsufficientResource"``.
    """

    INSUFFICIENT_RESOURCE = "InsufficientResource"
    TOO_MANY_PODS = "TooManyPods"
    NODE_NAME_MISMATCH = "NodeNameMismatch"
    NODE_UNSCHEDULABLE = "NodeUnschedulable"
    UNTOLERATED_TAINT = "UntoleratedTaint"
    NODE_SELECTOR_MISMATCH = "NodeSelectorMismatch"
    NODE_AFFINITY_MISMATCH = "NodeAffinityMismatch"
    GROUP_RESERVED_ON_ANOTHER_NODE = "GroupReservedOnAnotherNode"
    GROUP_PEAK_EXCEEDS_NODE = "GroupPeakExceedsNode"
    VOLUME_CLAIM_NOT_FOUND = "VolumeClaimNotFound"
    VOLUME_CLAIM_BEING_DELETED = "VolumeClaimBeingDeleted"
    UNBOUND_IMMEDIATE_CLAIMS = "UnboundImmediateClaims"
    BOUND_VOLUME_NOT_FOUND = "BoundVolumeNotFound"
    VOLUME_NODE_AFFINITY_CONFLICT = "VolumeNodeAffinityConflict"
    SELECTED_NODE_MISMATCH = "SelectedNodeMismatch"
    ALLOWED_TOPOLOGY_MISMATCH = "AllowedTopologyMismatch"
    NODE_PORTS_CONFLICT = "NodePortsConflict"
    POD_AFFINITY_RULES_NOT_MATCH = "PodAffinityRulesNotMatch"
    POD_ANTI_AFFINITY_RULES_NOT_MATCH = "PodAntiAffinityRulesNotMatch"
    EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH = "ExistingPodsAntiAffinityRulesNotMatch"
    TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH = "TopologySpreadConstraintsNotMatch"
    TOPOLOGY_SPREAD_MISSING_LABEL = "TopologySpreadMissingLabel"


# Message templates. Format them with str.format and the record's fields
# (quantities already formatted with format_amount).

INSUFFICIENT_RESOURCE_SUMMARY = "Insufficient {resource}"
INSUFFICIENT_RESOURCE_MESSAGE = (
    "Insufficient {resource}: requires {requested}, available {available} "
    "(allocatable {allocatable}, pods {used_by_pods}, reserved by other groups {reserved_by_others})"
)

TOO_MANY_PODS_SUMMARY = "Too many pods"
TOO_MANY_PODS_MESSAGE = "Too many pods: {bound} bound, node allows {allowed}"

NODE_NAME_MISMATCH_SUMMARY = "node(s) didn't match the requested node name"
NODE_NAME_MISMATCH_MESSAGE = "node {node} didn't match the requested node name {requested}"

NODE_UNSCHEDULABLE_SUMMARY = "node(s) were unschedulable"
NODE_UNSCHEDULABLE_MESSAGE = (
    "node was unschedulable (cordoned) and the pod does not tolerate "
    "node.kubernetes.io/unschedulable:NoSchedule"
)

UNTOLERATED_TAINT_SUMMARY = "node(s) had untolerated taint {{{key}: {value}}}"
UNTOLERATED_TAINT_MESSAGE = "node had untolerated taint {key}={value}:{effect}"

NODE_SELECTOR_MISMATCH_SUMMARY = "node(s) didn't match Pod's node affinity/selector"
NODE_SELECTOR_MISMATCH_MESSAGE = "node didn't match Pod's nodeSelector: wants {key}={wanted}, node has {actual}"

NODE_AFFINITY_MISMATCH_SUMMARY = NODE_SELECTOR_MISMATCH_SUMMARY
NODE_AFFINITY_MISMATCH_MESSAGE = (
    "node didn't match any of the Pod's {terms} required node affinity term(s)"
)

GROUP_RESERVED_ON_ANOTHER_NODE_SUMMARY = "node(s) didn't match the group's reserved node"
GROUP_RESERVED_ON_ANOTHER_NODE_MESSAGE = "group {group} is reserved on node {reserved_node}"

GROUP_PEAK_EXCEEDS_NODE_SUMMARY = "node(s) smaller than group {group}'s {resource} peak {peak}"
GROUP_PEAK_EXCEEDS_NODE_MESSAGE = (
    "group {group}'s {resource} peak {peak} exceeds the node's allocatable {allocatable}: no claim can hold it here, "
    "even on an empty node (docs/contract.md section 7, a group no node can hold)"
)

# Volumes (core/volume_binding.py). The summaries are kube-scheduler's VolumeBinding strings where
# it has one (its PreFilter messages name the claim), so existing greps keep working.

VOLUME_CLAIM_NOT_FOUND_MESSAGE = 'persistentvolumeclaim "{claim}" not found'
VOLUME_CLAIM_BEING_DELETED_MESSAGE = 'persistentvolumeclaim "{claim}" is being deleted'

UNBOUND_IMMEDIATE_CLAIMS_SUMMARY = "pod has unbound immediate PersistentVolumeClaims"
UNBOUND_IMMEDIATE_CLAIMS_MESSAGE = (
    "pod has unbound immediate PersistentVolumeClaims: {claims} (bound by the PV controller, not on a node the scheduler picks)"
)

BOUND_VOLUME_NOT_FOUND_SUMMARY = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
BOUND_VOLUME_NOT_FOUND_MESSAGE = 'persistentvolumeclaim "{claim}" is bound to persistentvolume "{volume}", which does not exist'

VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY = "node(s) had volume node affinity conflict"
VOLUME_NODE_AFFINITY_CONFLICT_MESSAGE = (
    'node is not admitted by the node affinity of persistentvolume "{volume}" (the volume of persistentvolumeclaim "{claim}")'
)

SELECTED_NODE_MISMATCH_SUMMARY = "node(s) did not match the claim's selected node"
SELECTED_NODE_MISMATCH_MESSAGE = 'persistentvolumeclaim "{claim}" is being provisioned on node {selected_node}'

ALLOWED_TOPOLOGY_MISMATCH_SUMMARY = "node(s) didn't match the storage class's allowed topologies"
ALLOWED_TOPOLOGY_MISMATCH_MESSAGE = (
    'node is not in the allowedTopologies of storageclass "{storage_class}" (the class of persistentvolumeclaim "{claim}")'
)

# Filters that read the pods already placed (core/node_ports.py, core/inter_pod_affinity.py,
# core/topology_spread.py). The summaries are kube-scheduler's ErrReason strings, word for word
# (nodeports.ErrReason, interpodaffinity.ErrReason*, podtopologyspread.ErrReason*), so a message
# reads and greps the same whichever scheduler wrote it; the messages add what the node lacked.

NODE_PORTS_CONFLICT_SUMMARY = "node(s) didn't have free ports for the requested pod ports"
NODE_PORTS_CONFLICT_MESSAGE = "host port(s) {ports} requested by the pod are already bound on the node"

POD_AFFINITY_RULES_NOT_MATCH_SUMMARY = "node(s) didn't match pod affinity rules"
POD_AFFINITY_RULES_NOT_MATCH_MESSAGE = (
    "no pod matching all of the pod's {terms} required pod affinity term(s) runs in the node's topology domain(s)"
)
POD_AFFINITY_MISSING_TOPOLOGY_KEY_MESSAGE = "node has no label {topology_key}, the topologyKey of a required pod affinity term"

POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY = "node(s) didn't match pod anti-affinity rules"
POD_ANTI_AFFINITY_RULES_NOT_MATCH_MESSAGE = (
    "a pod that the pod's required anti-affinity rejects runs in the node's topology domain {topology_key}={value}"
)

EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY = "node(s) didn't satisfy existing pods anti-affinity rules"
EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_MESSAGE = (
    "a pod in the node's topology domain {topology_key}={value} has required anti-affinity against this pod"
)

TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY = "node(s) didn't match pod topology spread constraints"
TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_MESSAGE = (
    "placing the pod in {topology_key}={value} makes the skew {skew} ({matching} matching pod(s) there + {self_match} "
    "- global minimum {minimum}), more than maxSkew {max_skew}"
)

TOPOLOGY_SPREAD_MISSING_LABEL_SUMMARY = TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY + " (missing required label)"
TOPOLOGY_SPREAD_MISSING_LABEL_MESSAGE = "node has no label {topology_key}, the topologyKey of a DoNotSchedule spread constraint"

FIT_ERROR_MESSAGE = "0/{total} nodes are available: {reasons}."
"""FIT_ERROR_MESSAGE is the pod-level message, as kube-scheduler words it, so existing greps keep working."""


_KI = 1024
_MEMORY_UNITS = (("Ti", _KI**4), ("Gi", _KI**3), ("Mi", _KI**2), ("Ki", _KI))


def format_amount(resource: str, amount: int) -> str:
    """format_amount renders an integer amount the way an operator reads it in a manifest.

    CPU is always millicores, so numbers in one message compare at a glance;
    bytes (memory, ephemeral-storage, hugepages) use the largest binary unit
    that divides them exactly, else bytes; extended resources are counts.

    Example: ``format_amount("cpu", 2000) == "2000m"``,
    ``format_amount("memory", 268435456) == "256Mi"``,
    ``format_amount("memory", 1000) == "1000"``, ``format_amount("cpu", -200) == "-200m"``,
    ``format_amount("hugepages-2Mi", 4194304) == "4Mi"``, ``format_amount("nvidia.com/gpu", 2) == "2"``.
    """
    if resource == "cpu":
        return f"{amount}m"
    if amount != 0 and is_byte_resource(resource):
        for suffix, size in _MEMORY_UNITS:
            if amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)


@dataclass(frozen=True)
class InsufficientResource:
    """InsufficientResource says a resource's request exceeds what the node has left for it.

    Like kube-scheduler's ``noderesources.InsufficientResource`` but with the
    node-level breakdown this scheduler adds: ``available`` is exactly
    ``allocatable - used_by_pods - reserved_by_others`` (it may be negative on
    an over-committed node). ``requested`` is the pod's request, or the group's
    peak when the pod opens a reservation. ``reserved_by_others`` counts only
    the unused part of other groups' reservations, so each pod is counted once.

    Example: node allocatable 4800m; group A reserved 3800m and runs a 200m pod
    (its unused reservation is 3600m); group B asks for its 2000m peak::

        >>> InsufficientResource("cpu", 2000, 1000, 4800, 200, 3600).message()
        'Insufficient cpu: requires 2000m, available 1000m (allocatable 4800m, pods 200m, reserved by other groups 3600m)'
    """

    resource: str
    requested: int
    available: int
    allocatable: int
    used_by_pods: int
    reserved_by_others: int

    code = ReasonCode.INSUFFICIENT_RESOURCE

    def summary(self) -> str:
        return INSUFFICIENT_RESOURCE_SUMMARY.format(resource=self.resource)

    def message(self) -> str:
        def fmt(amount: int) -> str:
            return format_amount(self.resource, amount)

        return INSUFFICIENT_RESOURCE_MESSAGE.format(
            resource=self.resource,
            requested=fmt(self.requested),
            available=fmt(self.available),
            allocatable=fmt(self.allocatable),
            used_by_pods=fmt(self.used_by_pods),
            reserved_by_others=fmt(self.reserved_by_others),
        )


@dataclass(frozen=True)
class TooManyPods:
    """TooManyPods says the node already runs as many pods as ``status.allocatable.pods`` allows.

    Example: ``TooManyPods(allowed=110, bound=110).message() == "Too many pods: 110 bound, node allows 110"``.
    """

    allowed: int
    bound: int

    code = ReasonCode.TOO_MANY_PODS

    def summary(self) -> str:
        return TOO_MANY_PODS_SUMMARY

    def message(self) -> str:
        return TOO_MANY_PODS_MESSAGE.format(allowed=self.allowed, bound=self.bound)


@dataclass(frozen=True)
class NodeNameMismatch:
    """NodeNameMismatch says the pod's ``spec.nodeName`` names another node.

    Example: ``NodeNameMismatch(requested="n2", node="n1").message()
    == "node n1 didn't match the requested node name n2"``.
    """

    requested: str
    node: str

    code = ReasonCode.NODE_NAME_MISMATCH

    def summary(self) -> str:
        return NODE_NAME_MISMATCH_SUMMARY

    def message(self) -> str:
        return NODE_NAME_MISMATCH_MESSAGE.format(requested=self.requested, node=self.node)


@dataclass(frozen=True)
class NodeUnschedulable:
    """NodeUnschedulable says the node is cordoned (``spec.unschedulable``) and the pod does not tolerate it.

    Example: ``NodeUnschedulable().summary() == "node(s) were unschedulable"``.
    """

    code = ReasonCode.NODE_UNSCHEDULABLE

    def summary(self) -> str:
        return NODE_UNSCHEDULABLE_SUMMARY

    def message(self) -> str:
        return NODE_UNSCHEDULABLE_MESSAGE


@dataclass(frozen=True)
class UntoleratedTaint:
    """UntoleratedTaint names the first NoSchedule/NoExecute taint the pod does not tolerate.

    Example: ``UntoleratedTaint("gpu", "true", "NoSchedule").message()
    == "node had untolerated taint gpu=true:NoSchedule"``; its summary is
    ``"node(s) had untolerated taint {gpu: true}"`` as kube-scheduler prints it.
    """

    key: str
    value: str
    effect: str

    code = ReasonCode.UNTOLERATED_TAINT

    def summary(self) -> str:
        return UNTOLERATED_TAINT_SUMMARY.format(key=self.key, value=self.value)

    def message(self) -> str:
        return UNTOLERATED_TAINT_MESSAGE.format(key=self.key, value=self.value, effect=self.effect)


@dataclass(frozen=True)
class NodeSelectorMismatch:
    """NodeSelectorMismatch names the first ``spec.nodeSelector`` entry the node's labels do not satisfy.

    ``actual`` is the node's value for the key, or None when the label is absent.

    Example: ``NodeSelectorMismatch("pool", "ci", None).message()
    == "node didn't match Pod's nodeSelector: wants pool=ci, node has no label pool"``.
    """

    key: str
    wanted: str
    actual: str | None

    code = ReasonCode.NODE_SELECTOR_MISMATCH

    def summary(self) -> str:
        return NODE_SELECTOR_MISMATCH_SUMMARY

    def message(self) -> str:
        actual = f"no label {self.key}" if self.actual is None else f"{self.key}={self.actual}"
        return NODE_SELECTOR_MISMATCH_MESSAGE.format(key=self.key, wanted=self.wanted, actual=actual)


@dataclass(frozen=True)
class NodeAffinityMismatch:
    """NodeAffinityMismatch says no term of the pod's required node affinity matches the node.

    ``terms`` is how many nodeSelectorTerms the pod has (they are ORed).

    Example: ``NodeAffinityMismatch(terms=2).message()
    == "node didn't match any of the Pod's 2 required node affinity term(s)"``.
    """

    terms: int

    code = ReasonCode.NODE_AFFINITY_MISMATCH

    def summary(self) -> str:
        return NODE_AFFINITY_MISMATCH_SUMMARY

    def message(self) -> str:
        return NODE_AFFINITY_MISMATCH_MESSAGE.format(terms=self.terms)


@dataclass(frozen=True)
class GroupReservedOnAnotherNode:
    """GroupReservedOnAnotherNode says the pod's group already holds a reservation elsewhere.

    Once a group is placed, only its node is eligible, so its tasks keep
    sharing the workspace; every other node gets this reason.

    Example: ``GroupReservedOnAnotherNode(GroupKey("ci", "run-1", "g0"), "n2").message()
    == "group ci/run-1/g0 is reserved on node n2"``.
    """

    group: GroupKey
    reserved_node: str

    code = ReasonCode.GROUP_RESERVED_ON_ANOTHER_NODE

    def summary(self) -> str:
        return GROUP_RESERVED_ON_ANOTHER_NODE_SUMMARY

    def message(self) -> str:
        return GROUP_RESERVED_ON_ANOTHER_NODE_MESSAGE.format(
            group=self.group, reserved_node=self.reserved_node
        )


@dataclass(frozen=True)
class GroupPeakExceedsNode:
    """GroupPeakExceedsNode says a group's peak is larger than the node's whole allocatable: it can never be reserved there.

    Reported instead of InsufficientResource for the pod that would open the
    claim, so that a group no node can hold says so (docs/contract.md section 7)
    rather than look like a node that is merely full for now.

    Example: ``GroupPeakExceedsNode(GroupKey("ci", "tests", "g0"), "cpu", 5760, 4800).message()
    == "group ci/tests/g0's cpu peak 5760m exceeds the node's allocatable 4800m: no claim can hold it here, even on an empty node
    (docs/contract.md section 7, a group no node can hold)"``.
    """

    group: GroupKey
    resource: str
    peak: int
    allocatable: int

    code = ReasonCode.GROUP_PEAK_EXCEEDS_NODE

    def summary(self) -> str:
        return GROUP_PEAK_EXCEEDS_NODE_SUMMARY.format(group=self.group, resource=self.resource, peak=format_amount(self.resource, self.peak))

    def message(self) -> str:
        return GROUP_PEAK_EXCEEDS_NODE_MESSAGE.format(
            group=self.group,
            resource=self.resource,
            peak=format_amount(self.resource, self.peak),
            allocatable=format_amount(self.resource, self.allocatable),
        )


@dataclass(frozen=True)
class VolumeClaimNotFound:
    """VolumeClaimNotFound says a claim the pod (or its group) mounts does not exist; no node can take the pod.

    An ephemeral volume's claim is created after its pod, so the pod waits for it.

    Example: ``VolumeClaimNotFound("cache").message() == 'persistentvolumeclaim "cache" not found'``,
    kube-scheduler's words; the summary is the same text.
    """

    claim: str

    code = ReasonCode.VOLUME_CLAIM_NOT_FOUND

    def summary(self) -> str:
        return self.message()

    def message(self) -> str:
        return VOLUME_CLAIM_NOT_FOUND_MESSAGE.format(claim=self.claim)


@dataclass(frozen=True)
class VolumeClaimBeingDeleted:
    """VolumeClaimBeingDeleted says a claim the pod (or its group) mounts has a deletionTimestamp; no node can take the pod.

    Example: ``VolumeClaimBeingDeleted("cache").message() == 'persistentvolumeclaim "cache" is being deleted'``.
    """

    claim: str

    code = ReasonCode.VOLUME_CLAIM_BEING_DELETED

    def summary(self) -> str:
        return self.message()

    def message(self) -> str:
        return VOLUME_CLAIM_BEING_DELETED_MESSAGE.format(claim=self.claim)


@dataclass(frozen=True)
class UnboundImmediateClaims:
    """UnboundImmediateClaims names the claims not yet Bound whose class binds them at once (Immediate, or no class object).

    The PV controller binds those without the scheduler, so the pod waits for it on every node.

    Example: ``UnboundImmediateClaims(("data",)).summary() == "pod has unbound immediate PersistentVolumeClaims"``
    (kube-scheduler's string); the message adds ``: data``.
    """

    claims: tuple[str, ...]

    code = ReasonCode.UNBOUND_IMMEDIATE_CLAIMS

    def summary(self) -> str:
        return UNBOUND_IMMEDIATE_CLAIMS_SUMMARY

    def message(self) -> str:
        return UNBOUND_IMMEDIATE_CLAIMS_MESSAGE.format(claims=", ".join(self.claims))


@dataclass(frozen=True)
class BoundVolumeNotFound:
    """BoundVolumeNotFound says a Bound claim's PersistentVolume does not exist (deleted, or not seen yet).

    Example: ``BoundVolumeNotFound("cache", "pv-1").message()
    == 'persistentvolumeclaim "cache" is bound to persistentvolume "pv-1", which does not exist'``.
    """

    claim: str
    volume: str

    code = ReasonCode.BOUND_VOLUME_NOT_FOUND

    def summary(self) -> str:
        return BOUND_VOLUME_NOT_FOUND_SUMMARY

    def message(self) -> str:
        return BOUND_VOLUME_NOT_FOUND_MESSAGE.format(claim=self.claim, volume=self.volume)


@dataclass(frozen=True)
class VolumeNodeAffinityConflict:
    """VolumeNodeAffinityConflict says the node is outside the node affinity of a claim's PersistentVolume.

    The kubelet could never mount the volume there. The summary is
    kube-scheduler's string; the message names the volume and its claim, so
    two volumes pinned to two nodes read as the conflict they are.

    Example: ``VolumeNodeAffinityConflict("cache", "pv-1").summary() == "node(s) had volume node affinity conflict"``.
    """

    claim: str
    volume: str

    code = ReasonCode.VOLUME_NODE_AFFINITY_CONFLICT

    def summary(self) -> str:
        return VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY

    def message(self) -> str:
        return VOLUME_NODE_AFFINITY_CONFLICT_MESSAGE.format(claim=self.claim, volume=self.volume)


@dataclass(frozen=True)
class SelectedNodeMismatch:
    """SelectedNodeMismatch says an unbound WaitForFirstConsumer claim is already being provisioned on another node.

    Its ``volume.kubernetes.io/selected-node`` annotation names that node; only it passes.

    Example: ``SelectedNodeMismatch("src", "n2").message() == 'persistentvolumeclaim "src" is being provisioned on node n2'``.
    """

    claim: str
    selected_node: str

    code = ReasonCode.SELECTED_NODE_MISMATCH

    def summary(self) -> str:
        return SELECTED_NODE_MISMATCH_SUMMARY

    def message(self) -> str:
        return SELECTED_NODE_MISMATCH_MESSAGE.format(claim=self.claim, selected_node=self.selected_node)


@dataclass(frozen=True)
class AllowedTopologyMismatch:
    """AllowedTopologyMismatch says the node is outside the allowedTopologies of an unbound claim's StorageClass.

    The provisioner could not make the volume there.

    Example: ``AllowedTopologyMismatch("src", "zonal").summary()
    == "node(s) didn't match the storage class's allowed topologies"``.
    """

    claim: str
    storage_class: str

    code = ReasonCode.ALLOWED_TOPOLOGY_MISMATCH

    def summary(self) -> str:
        return ALLOWED_TOPOLOGY_MISMATCH_SUMMARY

    def message(self) -> str:
        return ALLOWED_TOPOLOGY_MISMATCH_MESSAGE.format(claim=self.claim, storage_class=self.storage_class)


def format_host_port(port: tuple[str, str, int]) -> str:
    """format_host_port renders a host port (hostIP, protocol, port) as an operator reads it.

    Example: ``format_host_port(("0.0.0.0", "TCP", 8080)) == "8080/TCP on 0.0.0.0"``.
    """
    ip, protocol, number = port
    return f"{number}/{protocol} on {ip}"


@dataclass(frozen=True)
class NodePortsConflict:
    """NodePortsConflict names the host ports the pod asks for that the node's pods already bind (NodePorts).

    Example: ``NodePortsConflict((("0.0.0.0", "TCP", 8080),)).message()
    == "host port(s) 8080/TCP on 0.0.0.0 requested by the pod are already bound on the node"``;
    the summary is kube-scheduler's "node(s) didn't have free ports for the requested pod ports".
    """

    ports: tuple[tuple[str, str, int], ...]

    code = ReasonCode.NODE_PORTS_CONFLICT

    def summary(self) -> str:
        return NODE_PORTS_CONFLICT_SUMMARY

    def message(self) -> str:
        return NODE_PORTS_CONFLICT_MESSAGE.format(ports=", ".join(format_host_port(p) for p in self.ports))


@dataclass(frozen=True)
class PodAffinityRulesNotMatch:
    """PodAffinityRulesNotMatch says the pod's required pod affinity is not met on the node (InterPodAffinity).

    ``terms`` is how many required affinity terms the pod has (one existing pod
    must match them all, in the node's domain of each term's topologyKey);
    ``missing_topology_key`` names a topologyKey the node has no label for, when
    that is why.

    Example: ``PodAffinityRulesNotMatch(terms=1).message()
    == "no pod matching all of the pod's 1 required pod affinity term(s) runs in the node's topology domain(s)"``;
    ``PodAffinityRulesNotMatch(1, "topology.kubernetes.io/zone").message()
    == "node has no label topology.kubernetes.io/zone, the topologyKey of a required pod affinity term"``.
    """

    terms: int
    missing_topology_key: str | None = None

    code = ReasonCode.POD_AFFINITY_RULES_NOT_MATCH

    def summary(self) -> str:
        return POD_AFFINITY_RULES_NOT_MATCH_SUMMARY

    def message(self) -> str:
        if self.missing_topology_key is not None:
            return POD_AFFINITY_MISSING_TOPOLOGY_KEY_MESSAGE.format(topology_key=self.missing_topology_key)
        return POD_AFFINITY_RULES_NOT_MATCH_MESSAGE.format(terms=self.terms)


@dataclass(frozen=True)
class PodAntiAffinityRulesNotMatch:
    """PodAntiAffinityRulesNotMatch says a pod the pod's required anti-affinity rejects is in the node's domain.

    Example: ``PodAntiAffinityRulesNotMatch("kubernetes.io/hostname", "n1").message()
    == "a pod that the pod's required anti-affinity rejects runs in the node's topology domain kubernetes.io/hostname=n1"``.
    """

    topology_key: str
    value: str

    code = ReasonCode.POD_ANTI_AFFINITY_RULES_NOT_MATCH

    def summary(self) -> str:
        return POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY

    def message(self) -> str:
        return POD_ANTI_AFFINITY_RULES_NOT_MATCH_MESSAGE.format(topology_key=self.topology_key, value=self.value)


@dataclass(frozen=True)
class ExistingPodsAntiAffinityRulesNotMatch:
    """ExistingPodsAntiAffinityRulesNotMatch says a pod already in the node's domain rejects this pod by its anti-affinity.

    Anti-affinity is symmetric in kube-scheduler: a placed pod's required
    anti-affinity keeps matching pods out of its domain, whatever they ask.

    Example: ``ExistingPodsAntiAffinityRulesNotMatch("topology.kubernetes.io/zone", "a").summary()
    == "node(s) didn't satisfy existing pods anti-affinity rules"``.
    """

    topology_key: str
    value: str

    code = ReasonCode.EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH

    def summary(self) -> str:
        return EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY

    def message(self) -> str:
        return EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_MESSAGE.format(topology_key=self.topology_key, value=self.value)


@dataclass(frozen=True)
class TopologySpreadConstraintsNotMatch:
    """TopologySpreadConstraintsNotMatch says placing the pod on the node would skew a DoNotSchedule constraint past maxSkew.

    ``skew = matching + self_match - minimum``: the matching pods already in the
    node's domain, plus 1 when the pod matches its own selector, less the
    global minimum over the eligible domains (0 while fewer than minDomains).

    Example: zone ``a`` holds 2 matching pods, zone ``b`` none, maxSkew 1::

        >>> TopologySpreadConstraintsNotMatch("topology.kubernetes.io/zone", "a", 2, 1, 0, 1).message()
        'placing the pod in topology.kubernetes.io/zone=a makes the skew 3 (2 matching pod(s) there + 1 - global minimum 0), more than maxSkew 1'
    """

    topology_key: str
    value: str
    matching: int
    self_match: int
    minimum: int
    max_skew: int

    code = ReasonCode.TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH

    @property
    def skew(self) -> int:
        return self.matching + self.self_match - self.minimum

    def summary(self) -> str:
        return TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY

    def message(self) -> str:
        return TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_MESSAGE.format(
            topology_key=self.topology_key,
            value=self.value,
            skew=self.skew,
            matching=self.matching,
            self_match=self.self_match,
            minimum=self.minimum,
            max_skew=self.max_skew,
        )


@dataclass(frozen=True)
class TopologySpreadMissingLabel:
    """TopologySpreadMissingLabel says the node lacks the topologyKey label of one of the pod's DoNotSchedule constraints.

    Example: ``TopologySpreadMissingLabel("topology.kubernetes.io/zone").summary()
    == "node(s) didn't match pod topology spread constraints (missing required label)"``.
    """

    topology_key: str

    code = ReasonCode.TOPOLOGY_SPREAD_MISSING_LABEL

    def summary(self) -> str:
        return TOPOLOGY_SPREAD_MISSING_LABEL_SUMMARY

    def message(self) -> str:
        return TOPOLOGY_SPREAD_MISSING_LABEL_MESSAGE.format(topology_key=self.topology_key)


Reason: TypeAlias = (
    InsufficientResource
    | TooManyPods
    | NodeNameMismatch
    | NodeUnschedulable
    | UntoleratedTaint
    | NodeSelectorMismatch
    | NodeAffinityMismatch
    | GroupReservedOnAnotherNode
    | GroupPeakExceedsNode
    | VolumeClaimNotFound
    | VolumeClaimBeingDeleted
    | UnboundImmediateClaims
    | BoundVolumeNotFound
    | VolumeNodeAffinityConflict
    | SelectedNodeMismatch
    | AllowedTopologyMismatch
    | NodePortsConflict
    | PodAffinityRulesNotMatch
    | PodAntiAffinityRulesNotMatch
    | ExistingPodsAntiAffinityRulesNotMatch
    | TopologySpreadConstraintsNotMatch
    | TopologySpreadMissingLabel
)
"""Reason is any record explaining why one node rejected one pod."""


def fit_error_message(total_nodes: int, reasons_by_node: Mapping[str, Sequence[Reason]]) -> str:
    """fit_error_message is the pod-level FailedScheduling text: how many nodes failed, and why.

    Nodes are counted per distinct summary (a node with two reasons counts
    under both), and the histogram is sorted by its text, as kube-scheduler does,
    so the message is stable from one attempt to the next.

    Example: three nodes, one short of CPU, two cordoned::

        >>> fit_error_message(3, {
        ...     "n1": [InsufficientResource("cpu", 2000, 1000, 4800, 200, 3600)],
        ...     "n2": [NodeUnschedulable()],
        ...     "n3": [NodeUnschedulable()],
        ... })
        '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.'
    """
    histogram: Counter[str] = Counter()
    for reasons in reasons_by_node.values():
        histogram.update({reason.summary() for reason in reasons})
    parts = sorted(f"{count} {summary}" for summary, count in histogram.items())
    return FIT_ERROR_MESSAGE.format(total=total_nodes, reasons=", ".join(parts))


def unresolvable_error_message(total_nodes: int, reasons: Sequence[Reason]) -> str:
    """unresolvable_error_message is the pod-level text for reasons that hold on every node alike.

    kube-scheduler words a PreFilter failure (a claim missing, an unbound
    immediate claim) this way: no count per node, only the reason, which
    names the claim; walking the nodes would say nothing more.

    Example::

        >>> unresolvable_error_message(3, [VolumeClaimNotFound("cache")])
        '0/3 nodes are available: persistentvolumeclaim "cache" not found.'
    """
    return FIT_ERROR_MESSAGE.format(total=total_nodes, reasons="; ".join(reason.message() for reason in reasons))
