"""The suite's own reading of volume topology: a pod's claims, a Bound claim, and a volume's node affinity against a node."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.monitor import volume_topology as vt

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": {HOSTNAME: name, **labels}}}


def expr(key: str, operator: str, *values: str) -> Obj:
    return {"key": key, "operator": operator, "values": list(values)}


def term(*expressions: Obj, fields: tuple[Obj, ...] = ()) -> Obj:
    found: Obj = {}
    if expressions:
        found["matchExpressions"] = list(expressions)
    if fields:
        found["matchFields"] = list(fields)
    return found


def selector(*terms: Obj) -> Obj:
    return {"nodeSelectorTerms": list(terms)}


def pinned_volume(*terms: Obj) -> Obj:
    return {"metadata": {"name": "pv"}, "spec": {"nodeAffinity": {"required": selector(*terms)}}}


# --- a pod's claims ---


@pytest.mark.parametrize(
    ("volumes", "claims"),
    [
        ([], ()),
        ([{"name": "w", "persistentVolumeClaim": {"claimName": "src"}}], ("src",)),
        ([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], ("p-scratch",)),
        ([{"name": "a", "persistentVolumeClaim": {"claimName": "src"}}, {"name": "b", "persistentVolumeClaim": {"claimName": "src", "readOnly": True}}], ("src",)),
        ([{"name": "e", "emptyDir": {}}, {"name": "c", "configMap": {"name": "x"}}, {"name": "w", "persistentVolumeClaim": {"claimName": "pvc-1a2b"}}], ("pvc-1a2b",)),
        ([{"name": "tools", "csi": {"driver": "d"}}, "not a volume"], ()),
    ],
    ids=["no-volumes", "a-persistent-volume-claim", "an-ephemeral-volume-is-pod-name-dash-volume-name",
         "one-claim-mounted-twice-counts-once", "only-claims-count", "csi-and-junk-are-no-claims"],
)
def test_pod_claim_names(volumes: list[Any], claims: tuple[str, ...]) -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"volumes": volumes}}
    assert vt.pod_claim_names(pod) == claims


def test_a_pods_shared_claims_leave_its_ephemeral_ones_out() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"volumes": [
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}, {"name": "w", "persistentVolumeClaim": {"claimName": "src"}}]}}
    assert vt.pod_claim_names(pod) == ("p-scratch", "src")
    assert vt.pod_claim_names(pod, ephemeral=False) == ("src",)


# --- Bound ---


@pytest.mark.parametrize(
    ("spec", "status", "bound", "phase"),
    [
        ({"volumeName": "pv"}, {"phase": "Bound"}, True, "Bound"),
        ({"volumeName": "pv"}, {"phase": "Pending"}, False, "Pending"),
        ({}, {"phase": "Bound"}, False, "Bound"),
        ({}, {}, False, "Pending"),
        ({"volumeName": "pv"}, {"phase": "Lost"}, False, "Lost"),
    ],
    ids=["volume-name-and-phase-bound", "pre-bound-not-yet-bound", "phase-without-a-volume", "new-claim-without-status", "lost"],
)
def test_a_claim_is_bound_with_a_volume_name_and_phase_bound(spec: Obj, status: Obj, bound: bool, phase: str) -> None:
    claim = {"metadata": {"name": "c"}, "spec": spec, "status": status}
    assert vt.is_bound(claim) is bound
    assert vt.claim_phase(claim) == phase


def test_the_selected_node_annotation() -> None:
    assert vt.selected_node({"metadata": {"annotations": {vt.SELECTED_NODE_ANNOTATION: "n1"}}}) == "n1"
    assert vt.selected_node({"metadata": {}}) is None


# --- node affinity ---


@pytest.mark.parametrize(
    ("requirement", "labels", "matches"),
    [
        (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
        (expr("zone", "In", "a"), {"zone": "c"}, False),
        (expr("zone", "In", "a"), {}, False),
        (expr("zone", "In"), {"zone": ""}, False),
        (expr("zone", "NotIn", "a"), {"zone": "c"}, True),
        (expr("zone", "NotIn", "a"), {}, True),
        (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
        (expr("zone", "NotIn"), {}, False),
        (expr("disk", "Exists"), {"disk": ""}, True),
        (expr("disk", "Exists"), {}, False),
        (expr("disk", "Exists", "x"), {"disk": "x"}, False),
        (expr("disk", "DoesNotExist"), {}, True),
        (expr("disk", "DoesNotExist"), {"disk": "ssd"}, False),
        (expr("cores", "Gt", "4"), {"cores": "8"}, True),
        (expr("cores", "Gt", "8"), {"cores": "8"}, False),
        (expr("cores", "Lt", "8"), {"cores": "+4"}, True),
        (expr("cores", "Lt", "8"), {"cores": "-9"}, True),
        (expr("cores", "Gt", "4"), {"cores": "eight"}, False),
        (expr("cores", "Gt", "4"), {"cores": "1_000"}, False),
        (expr("cores", "Gt", "4"), {}, False),
        (expr("cores", "Gt", "4", "5"), {"cores": "8"}, False),
        (expr("cores", "Gt", "99999999999999999999"), {"cores": "8"}, False),
        (expr("zone", "Matches", "a"), {"zone": "a"}, False),
    ],
    ids=[
        "in-one-of-the-values", "in-another-value", "in-without-the-label", "in-without-values-is-refused",
        "notin-another-value", "notin-without-the-label", "notin-the-value", "notin-without-values-is-refused",
        "exists-even-empty", "exists-absent", "exists-with-values-is-refused", "doesnotexist-absent", "doesnotexist-present",
        "gt-greater", "gt-equal", "lt-signed-less", "lt-negative", "gt-not-an-integer", "gt-underscores-are-no-go-integer",
        "gt-without-the-label", "gt-two-values-is-refused", "gt-beyond-int64-is-refused", "unknown-operator",
    ],
)
def test_a_label_requirement(requirement: Obj, labels: dict[str, str], matches: bool) -> None:
    assert vt.label_requirement_matches(requirement, labels) is matches


@pytest.mark.parametrize(
    ("requirement", "matches"),
    [
        (expr("metadata.name", "In", "n1"), True),
        (expr("metadata.name", "In", "n2"), False),
        (expr("metadata.name", "NotIn", "n2"), True),
        (expr("metadata.name", "NotIn", "n1"), False),
        (expr("metadata.name", "In", "n1", "n2"), False),
        (expr("metadata.name", "Exists"), False),
        (expr("spec.unschedulable", "In", "n1"), False),
        (expr("spec.unschedulable", "NotIn", "n1"), True),
    ],
    ids=["in-its-name", "in-another-name", "notin-another-name", "notin-its-name", "two-values-is-refused",
         "exists-is-no-field-operator", "another-field-reads-empty-in", "another-field-reads-empty-notin"],
)
def test_a_field_requirement_reads_the_node_name(requirement: Obj, matches: bool) -> None:
    assert vt.field_requirement_matches(requirement, "n1") is matches


@pytest.mark.parametrize(
    ("volume", "admits"),
    [
        ({"metadata": {"name": "pv"}, "spec": {}}, True),
        ({"metadata": {"name": "pv"}, "spec": {"nodeAffinity": {}}}, True),
        (pinned_volume(term(expr(HOSTNAME, "In", "n1"))), True),
        (pinned_volume(term(expr(HOSTNAME, "In", "n2"))), False),
        (pinned_volume(term(expr(HOSTNAME, "In", "n2")), term(expr("zone", "In", "a"))), True),
        (pinned_volume(term(expr("zone", "In", "a"), expr("disk", "In", "hdd"))), False),
        # kube reads a volume's affinity against the node's labels alone (its name is empty there):
        (pinned_volume(term(expr("zone", "In", "a"), fields=(expr("metadata.name", "In", "n1"),))), False),
        (pinned_volume(term(fields=(expr("metadata.name", "NotIn", "n1"),))), True),
        (pinned_volume(term()), False),
        (pinned_volume(), False),
    ],
    ids=["no-affinity", "no-required-affinity", "pinned-to-its-hostname", "pinned-to-another-hostname",
         "terms-are-ored", "a-terms-expressions-are-anded", "a-field-on-the-name-admits-no-node", "notin-its-own-name-admits-it-too",
         "an-empty-term-matches-nothing", "no-terms-match-nothing"],
)
def test_a_volume_admits_a_node_as_its_required_affinity_says(volume: Obj, admits: bool) -> None:
    assert vt.volume_admits(volume, node("n1", zone="a", disk="ssd")) is admits


def test_an_affinity_is_described_with_what_the_node_shows_of_it() -> None:
    required = selector(term(expr(HOSTNAME, "In", "n2")), term(expr("zone", "Exists"), fields=(expr("metadata.name", "In", "n3"),)))
    assert vt.describe_node_selector(required) == f"({HOSTNAME} In [n2]) or (zone Exists and metadata.name In [n3])"
    assert vt.describe_node_for(required, node("n1")) == f"node n1 has {HOSTNAME}=n1, no label zone, metadata.name=n1"
    assert vt.describe_node_selector(selector(term(expr(HOSTNAME, "In", "n2")))) == f"{HOSTNAME} In [n2]"
    assert vt.describe_node_selector(selector()) == "no terms (matches no node)"
    assert vt.describe_node_selector(None) == "none (any node)"


def test_workspace_claim_names_are_the_persistent_volume_claim_bindings_asked_for() -> None:
    run = {"spec": {"workspaces": [
        {"name": "source", "persistentVolumeClaim": {"claimName": "src"}},
        {"name": "cache", "volumeClaimTemplate": {"spec": {}}},
        {"name": "other", "persistentVolumeClaim": {"claimName": "elsewhere"}},
        {"name": "config", "configMap": {"name": "c"}},
    ]}}
    assert vt.workspace_claim_names(run, ["source", "cache", "config"]) == {"source": "src"}
    assert vt.workspace_claim_names({"spec": {}}, ["source"]) == {}


# --- properties: how terms and requirements combine ---

KEYS = ("zone", "disk", "cores")
VALUES = ("a", "b", "1", "7", "-3")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
requirement_st = st.builds(
    lambda key, operator, values: {"key": key, "operator": operator, "values": values},
    st.sampled_from(KEYS), st.sampled_from(OPERATORS), st.lists(st.sampled_from(VALUES), max_size=2),
)
field_st = st.builds(
    lambda operator, name: {"key": "metadata.name", "operator": operator, "values": [name]},
    st.sampled_from(("In", "NotIn")), st.sampled_from(("n1", "n2")),
)
term_st = st.builds(
    lambda expressions, fields: term(*expressions, fields=tuple(fields)),
    st.lists(requirement_st, max_size=3), st.lists(field_st, max_size=1),
)


def labelled(name: str, labels: dict[str, str]) -> Obj:
    return {"metadata": {"name": name, "labels": labels}}


@given(st.lists(term_st, max_size=3), labels_st, st.sampled_from(("n1", "n2")))
def test_terms_are_ored(terms: list[Obj], labels: dict[str, str], name: str) -> None:
    target = labelled(name, labels)
    assert vt.node_selector_admits(selector(*terms), target) == any(vt.node_selector_admits(selector(t), target) for t in terms)


@given(st.lists(requirement_st, min_size=1, max_size=4), labels_st)
def test_a_terms_requirements_are_anded(requirements: list[Obj], labels: dict[str, str]) -> None:
    target = labelled("n1", labels)
    assert vt.term_matches(term(*requirements), target) == all(vt.term_matches(term(r), target) for r in requirements)


@given(requirement_st, labels_st, st.sampled_from(VALUES))
def test_a_label_the_requirement_does_not_name_changes_nothing(requirement: Obj, labels: dict[str, str], value: str) -> None:
    before = vt.label_requirement_matches(requirement, labels)
    assert vt.label_requirement_matches(requirement, {**labels, "unrelated": value}) == before


@given(st.sampled_from(KEYS), st.lists(st.sampled_from(VALUES), min_size=1, max_size=3), labels_st)
def test_notin_is_in_negated_when_the_label_is_there_and_true_when_it_is_not(key: str, values: list[str], labels: dict[str, str]) -> None:
    is_in = vt.label_requirement_matches(expr(key, "In", *values), labels)
    not_in = vt.label_requirement_matches(expr(key, "NotIn", *values), labels)
    assert not_in == (not is_in if key in labels else True)
    assert vt.label_requirement_matches(expr(key, "Exists"), labels) != vt.label_requirement_matches(expr(key, "DoesNotExist"), labels)


@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
def test_gt_and_lt_compare_integers(have: int, bound: int) -> None:
    labels = {"cores": str(have)}
    assert vt.label_requirement_matches(expr("cores", "Gt", str(bound)), labels) == (have > bound)
    assert vt.label_requirement_matches(expr("cores", "Lt", str(bound)), labels) == (have < bound)
