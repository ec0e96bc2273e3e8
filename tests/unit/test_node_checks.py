"""Node checks over raw pod and node JSON, case by case."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.node_checks import (
    NODE_CHECKS,
    allocatable_pods,
    node_affinity_mismatch,
    node_selector_matches,
    node_check_failures,
    node_name_mismatch,
    node_selector_mismatch,
    node_unschedulable,
    tolerates,
    too_many_pods,
    untolerated_taint,
)
from reference_scheduler.core.reasons import (
    NodeAffinityMismatch,
    NodeNameMismatch,
    NodeSelectorMismatch,
    NodeUnschedulable,
    TooManyPods,
    UntoleratedTaint,
)

pytestmark = pytest.mark.unit


def node(
    name: str = "n1",
    *,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    pods: str | None = "110",
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints is not None:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    allocatable: dict[str, str] = {"cpu": "4", "memory": "8Gi"}
    if pods is not None:
        allocatable["pods"] = pods
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec, "status": {"allocatable": allocatable}}


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [{"name": "c"}], **spec}}


def required_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    requirement: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        requirement["values"] = list(values)
    return requirement


# --- spec.nodeName -----------------------------------------------------------


@pytest.mark.parametrize(
    ("node_name", "node_obj", "expected"),
    [
        pytest.param(None, node("n1"), None, id="no-node-name-any-node"),
        pytest.param("n1", node("n1"), None, id="node-name-matches"),
        pytest.param("n2", node("n1"), NodeNameMismatch(requested="n2", node="n1"), id="node-name-differs"),
    ],
)
def test_node_name(node_name: str | None, node_obj: dict[str, Any], expected: NodeNameMismatch | None) -> None:
    spec = {"nodeName": node_name} if node_name else {}
    assert node_name_mismatch(pod(**spec), node_obj) == expected


# --- tolerations ---------------------------------------------------------------

GPU_NO_SCHEDULE = {"key": "gpu", "value": "true", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        pytest.param({"key": "gpu", "operator": "Equal", "value": "true"}, GPU_NO_SCHEDULE, True, id="equal-same-value"),
        pytest.param({"key": "gpu", "value": "true"}, GPU_NO_SCHEDULE, True, id="operator-defaults-to-equal"),
        pytest.param({"key": "gpu", "operator": "Equal", "value": "no"}, GPU_NO_SCHEDULE, False, id="equal-other-value"),
        pytest.param({"key": "gpu", "operator": "Exists"}, GPU_NO_SCHEDULE, True, id="exists-ignores-value"),
        pytest.param({"operator": "Exists"}, GPU_NO_SCHEDULE, True, id="empty-key-exists-tolerates-all"),
        pytest.param({"key": "tpu", "operator": "Exists"}, GPU_NO_SCHEDULE, False, id="other-key"),
        pytest.param(
            {"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, GPU_NO_SCHEDULE, False, id="other-effect"
        ),
        pytest.param(
            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}, GPU_NO_SCHEDULE, True, id="same-effect"
        ),
        pytest.param({"key": "gpu", "operator": "Exists", "effect": ""}, GPU_NO_SCHEDULE, True, id="empty-effect-all"),
        pytest.param(
            {"key": "gpu", "operator": "Equal"}, {"key": "gpu", "effect": "NoSchedule"}, True, id="equal-both-empty"
        ),
        pytest.param({"key": "gpu", "operator": "Lt", "value": "1"}, GPU_NO_SCHEDULE, False, id="unknown-operator"),
    ],
)
def test_tolerates(toleration: dict[str, str], taint: dict[str, str], expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


@pytest.mark.parametrize(
    ("tolerations", "taints", "expected"),
    [
        pytest.param([], [], None, id="no-taints"),
        pytest.param([], [GPU_NO_SCHEDULE], UntoleratedTaint("gpu", "true", "NoSchedule"), id="no-schedule-untolerated"),
        pytest.param(
            [],
            [{"key": "evict", "effect": "NoExecute"}],
            UntoleratedTaint("evict", "", "NoExecute"),
            id="no-execute-untolerated",
        ),
        pytest.param([], [{"key": "soft", "effect": "PreferNoSchedule"}], None, id="prefer-no-schedule-ignored"),
        pytest.param([{"key": "gpu", "operator": "Exists"}], [GPU_NO_SCHEDULE], None, id="tolerated"),
        pytest.param(
            [{"key": "gpu", "operator": "Exists"}],
            [GPU_NO_SCHEDULE, {"key": "ssd", "value": "x", "effect": "NoSchedule"}],
            UntoleratedTaint("ssd", "x", "NoSchedule"),
            id="second-taint-untolerated",
        ),
        pytest.param([{"operator": "Exists"}], [GPU_NO_SCHEDULE, {"key": "x", "effect": "NoExecute"}], None, id="wildcard"),
    ],
)
def test_untolerated_taint(
    tolerations: list[dict[str, str]], taints: list[dict[str, str]], expected: UntoleratedTaint | None
) -> None:
    assert untolerated_taint(pod(tolerations=tolerations), node(taints=taints)) == expected


# --- cordon --------------------------------------------------------------------

CORDON_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("tolerations", "unschedulable", "expected"),
    [
        pytest.param([], False, None, id="schedulable-node"),
        pytest.param([], True, NodeUnschedulable(), id="cordoned-node"),
        pytest.param([CORDON_TOLERATION], True, None, id="cordon-tolerated"),
        pytest.param([{"operator": "Exists"}], True, None, id="cordon-tolerated-by-wildcard"),
        pytest.param(
            [{**CORDON_TOLERATION, "effect": "NoExecute"}], True, NodeUnschedulable(), id="cordon-wrong-effect"
        ),
    ],
)
def test_node_unschedulable(
    tolerations: list[dict[str, str]], unschedulable: bool, expected: NodeUnschedulable | None
) -> None:
    assert node_unschedulable(pod(tolerations=tolerations), node(unschedulable=unschedulable)) == expected


# --- nodeSelector --------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param(None, {}, None, id="no-selector"),
        pytest.param({"pool": "ci"}, {"pool": "ci", "zone": "a"}, None, id="selector-matches"),
        pytest.param({"pool": "ci"}, {}, NodeSelectorMismatch("pool", "ci", None), id="label-absent"),
        pytest.param({"pool": "ci"}, {"pool": "batch"}, NodeSelectorMismatch("pool", "ci", "batch"), id="label-differs"),
        pytest.param({"pool": "ci"}, {"pool": "CI"}, NodeSelectorMismatch("pool", "ci", "CI"), id="case-sensitive"),
        pytest.param(
            {"pool": "ci", "zone": "a"}, {"pool": "ci"}, NodeSelectorMismatch("zone", "a", None), id="every-key-needed"
        ),
    ],
)
def test_node_selector(
    selector: dict[str, str] | None, labels: dict[str, str], expected: NodeSelectorMismatch | None
) -> None:
    spec = {"nodeSelector": selector} if selector is not None else {}
    assert node_selector_mismatch(pod(**spec), node(labels=labels)) == expected


# --- required node affinity ---------------------------------------------------

LABELS = {"pool": "ci", "cores": "16", "zone": "a"}


@pytest.mark.parametrize(
    ("terms", "matches"),
    [
        pytest.param([{"matchExpressions": [expr("pool", "In", "ci", "batch")]}], True, id="in-matches"),
        pytest.param([{"matchExpressions": [expr("pool", "In", "batch")]}], False, id="in-other-value"),
        pytest.param([{"matchExpressions": [expr("gpu", "In", "x")]}], False, id="in-label-absent"),
        pytest.param([{"matchExpressions": [expr("pool", "In")]}], False, id="in-without-values-invalid"),
        pytest.param([{"matchExpressions": [expr("pool", "NotIn", "batch")]}], True, id="notin-other-value"),
        pytest.param([{"matchExpressions": [expr("pool", "NotIn", "ci")]}], False, id="notin-same-value"),
        pytest.param([{"matchExpressions": [expr("gpu", "NotIn", "x")]}], True, id="notin-label-absent"),
        pytest.param([{"matchExpressions": [expr("pool", "NotIn")]}], False, id="notin-without-values-invalid"),
        pytest.param([{"matchExpressions": [expr("zone", "Exists")]}], True, id="exists"),
        pytest.param([{"matchExpressions": [expr("gpu", "Exists")]}], False, id="exists-absent"),
        pytest.param([{"matchExpressions": [expr("zone", "Exists", "a")]}], False, id="exists-with-values-invalid"),
        pytest.param([{"matchExpressions": [expr("gpu", "DoesNotExist")]}], True, id="does-not-exist"),
        pytest.param([{"matchExpressions": [expr("zone", "DoesNotExist")]}], False, id="does-not-exist-present"),
        pytest.param([{"matchExpressions": [expr("cores", "Gt", "8")]}], True, id="gt-greater"),
        pytest.param([{"matchExpressions": [expr("cores", "Gt", "16")]}], False, id="gt-equal"),
        pytest.param([{"matchExpressions": [expr("cores", "Lt", "32")]}], True, id="lt-smaller"),
        pytest.param([{"matchExpressions": [expr("cores", "Lt", "-1")]}], False, id="lt-negative-bound"),
        pytest.param([{"matchExpressions": [expr("pool", "Gt", "1")]}], False, id="gt-label-not-integer"),
        pytest.param([{"matchExpressions": [expr("cores", "Gt", "1_0")]}], False, id="gt-bound-not-go-integer"),
        pytest.param([{"matchExpressions": [expr("cores", "Gt", "1", "2")]}], False, id="gt-two-values-invalid"),
        pytest.param([{"matchExpressions": [expr("gpu", "Lt", "3")]}], False, id="lt-label-absent"),
        pytest.param([{"matchExpressions": [expr("pool", "Like", "ci")]}], False, id="unknown-operator"),
        pytest.param(
            [{"matchExpressions": [expr("pool", "In", "ci"), expr("zone", "In", "b")]}],
            False,
            id="expressions-are-anded",
        ),
        pytest.param(
            [{"matchExpressions": [expr("zone", "In", "b")]}, {"matchExpressions": [expr("pool", "In", "ci")]}],
            True,
            id="terms-are-ored",
        ),
        pytest.param([{"matchFields": [expr("metadata.name", "In", "n1")]}], True, id="fields-name-in"),
        pytest.param([{"matchFields": [expr("metadata.name", "In", "n2")]}], False, id="fields-name-in-other"),
        pytest.param([{"matchFields": [expr("metadata.name", "NotIn", "n2")]}], True, id="fields-name-notin"),
        pytest.param([{"matchFields": [expr("metadata.name", "In", "n1", "n2")]}], False, id="fields-two-values-invalid"),
        pytest.param([{"matchFields": [expr("metadata.uid", "In", "n1")]}], False, id="fields-other-key-invalid"),
        pytest.param([{"matchFields": [expr("metadata.name", "Exists")]}], False, id="fields-exists-invalid"),
        pytest.param(
            [{"matchExpressions": [expr("pool", "In", "ci")], "matchFields": [expr("metadata.name", "In", "n2")]}],
            False,
            id="fields-and-expressions-anded",
        ),
        pytest.param([{}], False, id="empty-term-matches-nothing"),
        pytest.param([], False, id="no-terms-matches-nothing"),
    ],
)
def test_required_node_affinity(terms: list[dict[str, Any]], matches: bool) -> None:
    reason = node_affinity_mismatch(pod(affinity=required_affinity(*terms)), node("n1", labels=LABELS))
    assert reason == (None if matches else NodeAffinityMismatch(terms=len(terms)))


def test_node_selector_matches_is_the_one_matcher_for_pods_and_volumes() -> None:
    # A PV's spec.nodeAffinity.required is a NodeSelector too (core/volume_binding.py uses this).
    ci_or_n9 = {"nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "ci")]}, {"matchFields": [expr("metadata.name", "In", "n9")]}]}
    assert node_selector_matches(ci_or_n9, node("n1", labels=LABELS))
    assert node_selector_matches(ci_or_n9, node("n9"))
    assert not node_selector_matches(ci_or_n9, node("n2"))
    assert not node_selector_matches({"nodeSelectorTerms": []}, node("n1", labels=LABELS))
    assert not node_selector_matches({}, node("n1", labels=LABELS))


def test_preferred_affinity_and_no_affinity_never_reject() -> None:
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}}
    assert node_affinity_mismatch(pod(affinity=preferred), node()) is None
    assert node_affinity_mismatch(pod(), node()) is None


# --- pod count -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "allowed"),
    [
        pytest.param("110", 110, id="plain-integer"),
        pytest.param("1k", 1000, id="suffixed-quantity"),
        pytest.param(None, 0, id="absent-admits-none"),
        pytest.param("lots", 0, id="unparsable-admits-none"),
    ],
)
def test_allocatable_pods(pods: str | None, allowed: int) -> None:
    assert allocatable_pods(node(pods=pods)) == allowed


@pytest.mark.parametrize(
    ("bound", "expected"),
    [
        pytest.param(109, None, id="one-slot-left"),
        pytest.param(110, TooManyPods(allowed=110, bound=110), id="full"),
    ],
)
def test_too_many_pods(bound: int, expected: TooManyPods | None) -> None:
    assert too_many_pods(node(pods="110"), bound) == expected


# --- all checks ----------------------------------------------------------------


def test_all_reasons_are_reported() -> None:
    failures = node_check_failures(pod(nodeSelector={"pool": "ci"}), node(unschedulable=True))
    assert failures == [NodeUnschedulable(), NodeSelectorMismatch("pool", "ci", None)]


def test_a_plain_pod_passes_a_plain_node() -> None:
    assert node_check_failures(pod(), node()) == []
    assert len(NODE_CHECKS) == 5


def test_tolerate_garbage_without_crashing() -> None:
    weird_pod = {"spec": {"tolerations": "nope", "nodeSelector": ["x"], "affinity": {"nodeAffinity": 3}}}
    weird_node = {"metadata": None, "spec": {"taints": [None, 7]}}
    assert node_check_failures(weird_pod, weird_node) == []


def test_node_allocatable_reads_every_counted_resource_and_not_pods() -> None:
    from reference_scheduler.core.node_checks import node_allocatable
    from reference_scheduler.core.resources import Resources

    node = {
        "status": {
            "capacity": {"cpu": "5", "nvidia.com/gpu": "4"},
            "allocatable": {"cpu": "4800m", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi", "hugepages-2Mi": "0", "nvidia.com/gpu": "2"},
        }
    }
    assert node_allocatable(node) == Resources.of({"cpu": 4800, "memory": 8 * 1024**3, "ephemeral-storage": 100 * 1024**3, "nvidia.com/gpu": 2})
    assert node_allocatable(node).get("example.com/gpu") == 0
