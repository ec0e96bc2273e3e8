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

FIT_ERROR_MESSAGE = "0/{total} nodes are available: {reasons}."
"""FIT_ERROR_MESSAGE is the pod-level message, as kube-scheduler words it, so existing greps keep working."""


_KI = 1024
_MEMORY_UNITS = (("Ti", _KI**4), ("Gi", _KI**3), ("Mi", _KI**2), ("Ki", _KI))


def format_amount(resource: str, amount: int) -> str:
    """format_amount renders an integer amount the way an operator reads it in a manifest.

    CPU is always millicores, so numbers in one message compare at a glance;
    memory uses the largest binary unit that divides it exactly, else bytes.

    Example: ``format_amount("cpu", 2000) == "2000m"``,
    ``format_amount("memory", 268435456) == "256Mi"``,
    ``format_amount("memory", 1000) == "1000"``, ``format_amount("cpu", -200) == "-200m"``.
    """
    if resource == "cpu":
        return f"{amount}m"
    if resource == "memory" and amount != 0:
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


Reason: TypeAlias = (
    InsufficientResource
    | TooManyPods
    | NodeNameMismatch
    | NodeUnschedulable
    | UntoleratedTaint
    | NodeSelectorMismatch
    | NodeAffinityMismatch
    | GroupReservedOnAnotherNode
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
