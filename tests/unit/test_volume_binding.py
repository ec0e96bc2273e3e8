"""Volume binding, the filter half: which claims a pod (and its group) has, and which nodes they admit (volume spec V1, V3, V6)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.node_checks import node_affinity_mismatch
from reference_scheduler.core.reasons import (
    ALLOWED_TOPOLOGY_MISMATCH_SUMMARY,
    SELECTED_NODE_MISMATCH_SUMMARY,
    UNBOUND_IMMEDIATE_CLAIMS_SUMMARY,
    VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY,
    AllowedTopologyMismatch,
    BoundVolumeNotFound,
    SelectedNodeMismatch,
    UnboundImmediateClaims,
    VolumeClaimBeingDeleted,
    VolumeClaimNotFound,
    VolumeNodeAffinityConflict,
    fit_error_message,
    unresolvable_error_message,
)
from reference_scheduler.core.volume_binding import (
    NO_VOLUMES,
    SELECTED_NODE_ANNOTATION,
    ClaimKind,
    VolumeLookups,
    allowed_topologies_admit,
    claims_to_provision,
    classify,
    group_claim_names,
    is_bound,
    passes_every_node,
    pod_claim_names,
    pv_admits_node,
    storage_class_name,
    volume_constraints,
    volume_failures,
    workspace_claim_names,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"


# --- objects -------------------------------------------------------------------


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": {HOSTNAME: name, **labels}}}


def pinned_to(*hosts: str) -> Obj:
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": list(hosts)}]}]}}


def volume(name: str, *, affinity: Obj | None = None, claim: str | None = None) -> Obj:
    spec: Obj = {}
    if affinity is not None:
        spec["nodeAffinity"] = affinity
    if claim is not None:
        spec["claimRef"] = {"namespace": "ns", "name": claim}
    return {"metadata": {"name": name}, "spec": spec}


def claim(
    name: str,
    *,
    storage_class: str | None = "standard",
    bound_to: str | None = None,
    pre_bound_to: str | None = None,
    selected: str | None = None,
    deleting: bool = False,
) -> Obj:
    meta: Obj = {"name": name, "namespace": "ns", "resourceVersion": "1"}
    if selected is not None:
        meta["annotations"] = {SELECTED_NODE_ANNOTATION: selected}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T10:00:00Z"
    spec: Obj = {}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if bound_to or pre_bound_to:
        spec["volumeName"] = bound_to or pre_bound_to
    return {"metadata": meta, "spec": spec, "status": {"phase": "Bound" if bound_to else "Pending"}}


def storage_class(name: str, mode: str | None = "WaitForFirstConsumer", *, allowed: list[Obj] | None = None) -> Obj:
    found: Obj = {"metadata": {"name": name}}
    if mode is not None:
        found["volumeBindingMode"] = mode
    if allowed is not None:
        found["allowedTopologies"] = allowed
    return found


def zones(*values: str) -> list[Obj]:
    return [{"matchLabelExpressions": [{"key": "zone", "values": list(values)}]}]


CLASSES = {
    "standard": storage_class("standard"),
    "fast": storage_class("fast", "Immediate"),
    "defaulted": storage_class("defaulted", None),
    "zonal": storage_class("zonal", allowed=zones("a")),
}


def lookups(*claims: Obj, volumes: tuple[Obj, ...] = (), classes: dict[str, Obj] = CLASSES) -> VolumeLookups:
    by_key = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in claims}
    by_name = {v["metadata"]["name"]: v for v in volumes}
    return VolumeLookups(lambda ns, name: by_key.get((ns, name)), by_name.get, classes.get)


def pod(name: str = "p", *volumes: Obj) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"volumes": list(volumes)}}


def pvc_volume(volume_name: str, claim_name: str) -> Obj:
    return {"name": volume_name, "persistentVolumeClaim": {"claimName": claim_name}}


def run(*bindings: Obj) -> Obj:
    return {"metadata": {"name": "r", "namespace": "ns"}, "spec": {"workspaces": list(bindings)}}


def failures_by_node(constraints: Any, *nodes: Obj) -> dict[str, tuple[Any, ...]]:
    return {n["metadata"]["name"]: volume_failures(constraints, n) for n in nodes}


# --- whose claims --------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec_volumes", "claims"),
    [
        pytest.param([], (), id="no-volumes"),
        pytest.param([{"name": "tools", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}], (), id="no-claim-volumes"),
        pytest.param([pvc_volume("ws-source", "pvc-1a2b")], ("pvc-1a2b",), id="workspace-claim"),
        pytest.param([{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}], ("p-scratch",), id="ephemeral-claim"),
        pytest.param([pvc_volume("a", "x"), pvc_volume("b", "x"), pvc_volume("c", "y")], ("x", "y"), id="each-claim-once-in-order"),
        pytest.param([{"name": "a", "persistentVolumeClaim": {}}], (), id="claim-without-a-name-skipped"),
    ],
)
def test_pod_claim_names(spec_volumes: list[Obj], claims: tuple[str, ...]) -> None:
    assert pod_claim_names(pod("p", *spec_volumes)) == claims


def test_a_pod_without_spec_volumes_has_no_claims() -> None:
    assert pod_claim_names({"metadata": {"name": "p"}, "spec": {}}) == ()
    assert pod_claim_names({}) == ()


def test_workspace_claims_are_the_runs_pvc_bindings_of_the_groups_workspaces() -> None:
    pipeline_run = run(
        {"name": "cache", "persistentVolumeClaim": {"claimName": "team-cache"}},
        {"name": "source", "volumeClaimTemplate": {"spec": {}}},
        {"name": "other", "persistentVolumeClaim": {"claimName": "not-ours"}},
        {"name": "scratch", "emptyDir": {}},
    )
    assert workspace_claim_names(pipeline_run, {"cache", "source"}) == ("team-cache",)
    assert workspace_claim_names(pipeline_run, set()) == ()
    assert workspace_claim_names(None, {"cache"}) == ()


def test_group_claims_are_the_pods_own_then_its_groups_workspace_claims() -> None:
    # later_task_pinned_volume: fetch mounts only the template claim; build (no pod yet) also mounts `cache`.
    fetch = pod("fetch", pvc_volume("ws-output", "pvc-1a2b"))
    pipeline_run = run({"name": "source", "volumeClaimTemplate": {}}, {"name": "cache", "persistentVolumeClaim": {"claimName": "team-cache"}})
    assert group_claim_names(fetch, pipeline_run, {"cache", "source"}) == ("pvc-1a2b", "team-cache")
    assert group_claim_names(pod("build", pvc_volume("c", "team-cache")), pipeline_run, {"cache"}) == ("team-cache",)
    assert group_claim_names(fetch, None, {"cache"}) == ("pvc-1a2b",)


# --- one claim -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("found", "kind"),
    [
        pytest.param(None, ClaimKind.MISSING, id="missing"),
        pytest.param(claim("c", deleting=True, bound_to="pv-1"), ClaimKind.DELETING, id="deleting-even-if-bound"),
        pytest.param(claim("c", bound_to="pv-1"), ClaimKind.BOUND, id="bound"),
        pytest.param(claim("c", pre_bound_to="pv-1", storage_class="fast"), ClaimKind.IMMEDIATE, id="pre-bound-not-yet-bound"),
        pytest.param(claim("c"), ClaimKind.DELAYED, id="wait-for-first-consumer"),
        pytest.param(claim("c", storage_class="fast"), ClaimKind.IMMEDIATE, id="immediate-class"),
        pytest.param(claim("c", storage_class="defaulted"), ClaimKind.IMMEDIATE, id="class-without-a-mode-is-immediate"),
        pytest.param(claim("c", storage_class=""), ClaimKind.IMMEDIATE, id="empty-class-is-immediate"),
        pytest.param(claim("c", storage_class=None), ClaimKind.IMMEDIATE, id="no-class-is-immediate"),
        pytest.param(claim("c", storage_class="nowhere"), ClaimKind.IMMEDIATE, id="class-object-missing-is-immediate"),
    ],
)
def test_classify(found: Obj | None, kind: ClaimKind) -> None:
    assert classify(found, lookups()) is kind


def test_bound_needs_both_the_volume_name_and_the_phase() -> None:
    assert is_bound(claim("c", bound_to="pv-1"))
    assert not is_bound(claim("c", pre_bound_to="pv-1"))
    assert not is_bound({"spec": {}, "status": {"phase": "Bound"}})


def test_the_legacy_class_annotation_wins_over_the_field() -> None:
    legacy = claim("c", storage_class="fast")
    legacy["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "standard"}
    assert storage_class_name(legacy) == "standard"
    assert classify(legacy, lookups()) is ClaimKind.DELAYED


# --- the node affinity matcher -------------------------------------------------


@pytest.mark.parametrize(
    ("affinity", "target", "admits"),
    [
        pytest.param(None, node("n1"), True, id="no-affinity-admits-every-node"),
        pytest.param({}, node("n1"), True, id="no-required-admits-every-node"),
        pytest.param(pinned_to("n1"), node("n1"), True, id="hostname-in"),
        pytest.param(pinned_to("n1"), node("n2"), False, id="hostname-not-in"),
        pytest.param(pinned_to("n1", "n2"), node("n2"), True, id="one-of-several-values"),
        pytest.param({"required": {"nodeSelectorTerms": []}}, node("n1"), False, id="no-terms-admits-no-node"),
        pytest.param({"required": {"nodeSelectorTerms": [{}]}}, node("n1"), False, id="empty-term-admits-no-node"),
        pytest.param(
            {"required": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
            {"metadata": {"name": "n1", "labels": {}}},
            False,
            id="match-fields-on-the-name-meet-an-empty-name-as-in-kube",
        ),
        pytest.param(
            {"required": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n1"]}]}]}},
            node("n1"),
            False,
            id="match-fields-other-than-name-admit-nothing",
        ),
        pytest.param(
            {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}, {"key": "disk", "operator": "Exists"}]},
            ]}},
            node("n1", zone="a"),
            False,
            id="expressions-in-a-term-are-anded",
        ),
        pytest.param(
            {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
                {"matchExpressions": [{"key": "disk", "operator": "Exists"}]},
            ]}},
            node("n1", disk="ssd"),
            True,
            id="terms-are-ored",
        ),
    ],
)  # fmt: skip
def test_pv_admits_node(affinity: Obj | None, target: Obj, admits: bool) -> None:
    assert pv_admits_node(volume("pv-1", affinity=affinity), target) is admits


_KEYS = st.sampled_from(["zone", "disk", HOSTNAME])
_VALUES = st.lists(st.sampled_from(["a", "b", "n1", "n2", "3"]), max_size=2)
_EXPRESSION = st.fixed_dictionaries(
    {"key": _KEYS, "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]), "values": _VALUES}
)
_FIELD = st.fixed_dictionaries({"key": st.just("metadata.name"), "operator": st.sampled_from(["In", "NotIn"]), "values": _VALUES})
_TERM = st.fixed_dictionaries({}, optional={"matchExpressions": st.lists(_EXPRESSION, max_size=2), "matchFields": st.lists(_FIELD, max_size=1)})
_NODE = st.builds(
    lambda name, labels: {"metadata": {"name": name, "labels": labels}},
    st.sampled_from(["n1", "n2"]),
    st.dictionaries(_KEYS, st.sampled_from(["a", "b", "n1", "3"]), max_size=3),
)


@settings(max_examples=300, deadline=None)
@given(terms=st.lists(_TERM, max_size=3), target=_NODE)
def test_a_volume_and_a_pod_with_the_same_node_selector_admit_the_same_nodes(terms: list[Obj], target: Obj) -> None:
    # One matcher for both (core.node_checks.node_selector_matches), so they can never drift apart; a volume's
    # is read against the node's labels alone (kube's CheckNodeAffinity), as a pod's against a node with no name.
    selector = {"nodeSelectorTerms": terms}
    a_pod = {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}}}
    nameless = {"metadata": {"name": "", "labels": target["metadata"]["labels"]}}
    assert pv_admits_node(volume("pv", affinity={"required": selector}), target) is (node_affinity_mismatch(a_pod, nameless) is None)


@pytest.mark.parametrize(
    ("allowed", "target", "admits"),
    [
        pytest.param(None, node("n1"), True, id="no-allowed-topologies"),
        pytest.param([], node("n1"), True, id="empty-allowed-topologies"),
        pytest.param(zones("a"), node("n1", zone="a"), True, id="label-in-values"),
        pytest.param(zones("a"), node("n1", zone="b"), False, id="label-not-in-values"),
        pytest.param(zones("a"), node("n1"), False, id="label-missing"),
        pytest.param([*zones("b"), *zones("a")], node("n1", zone="a"), True, id="terms-are-ored"),
        pytest.param(
            [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}, {"key": "disk", "values": ["ssd"]}]}],
            node("n1", zone="a"),
            False,
            id="expressions-are-anded",
        ),
        pytest.param([{"matchLabelExpressions": []}], node("n1"), False, id="empty-term-admits-nothing"),
    ],
)
def test_allowed_topologies_admit(allowed: list[Obj] | None, target: Obj, admits: bool) -> None:
    assert allowed_topologies_admit(storage_class("sc", allowed=allowed), target) is admits


# --- V1: the rules, per node -----------------------------------------------------

N1, N2, N3 = node("n1", zone="a"), node("n2", zone="b"), node("n3", zone="a")


def test_v1a_a_missing_claim_or_one_being_deleted_fails_every_node_and_names_it() -> None:
    found = volume_constraints("ns", ("gone", "going"), lookups(claim("going", deleting=True)))
    assert found.unresolvable == (VolumeClaimNotFound("gone"), VolumeClaimBeingDeleted("going"))
    assert failures_by_node(found, N1, N2) == {"n1": found.unresolvable, "n2": found.unresolvable}
    assert unresolvable_error_message(2, found.unresolvable) == (
        '0/2 nodes are available: persistentvolumeclaim "gone" not found; persistentvolumeclaim "going" is being deleted.'
    )


def test_v1b_a_bound_claims_volume_admits_only_its_nodes() -> None:
    found = volume_constraints("ns", ("cache",), lookups(claim("cache", bound_to="pv-1"), volumes=(volume("pv-1", affinity=pinned_to("n1")),)))
    assert failures_by_node(found, N1, N2) == {"n1": (), "n2": (VolumeNodeAffinityConflict("cache", "pv-1"),)}
    assert VolumeNodeAffinityConflict("cache", "pv-1").summary() == VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY == "node(s) had volume node affinity conflict"


def test_v1b_a_bound_claim_whose_volume_does_not_exist_fails_every_node() -> None:
    found = volume_constraints("ns", ("cache",), lookups(claim("cache", bound_to="pv-gone")))
    assert found.unresolvable == (BoundVolumeNotFound("cache", "pv-gone"),)
    assert volume_failures(found, N1) == found.unresolvable


def test_v1c_a_selected_claim_admits_only_its_selected_node() -> None:
    found = volume_constraints("ns", ("src",), lookups(claim("src", selected="n2")))
    assert failures_by_node(found, N1, N2) == {"n1": (SelectedNodeMismatch("src", "n2"),), "n2": ()}
    assert SelectedNodeMismatch("src", "n2").summary() == SELECTED_NODE_MISMATCH_SUMMARY


def test_v1c_an_unselected_delayed_claim_goes_where_its_classs_topologies_allow() -> None:
    found = volume_constraints("ns", ("src",), lookups(claim("src", storage_class="zonal")))
    assert failures_by_node(found, N1, N2, N3) == {"n1": (), "n2": (AllowedTopologyMismatch("src", "zonal"),), "n3": ()}
    assert AllowedTopologyMismatch("src", "zonal").summary() == ALLOWED_TOPOLOGY_MISMATCH_SUMMARY
    # Without allowed topologies a delayed claim admits every node.
    free = volume_constraints("ns", ("src",), lookups(claim("src")))
    assert failures_by_node(free, N1, N2) == {"n1": (), "n2": ()}


def test_v1c_a_selected_node_wins_over_the_classs_topologies() -> None:
    found = volume_constraints("ns", ("src",), lookups(claim("src", storage_class="zonal", selected="n2")))
    assert failures_by_node(found, N1, N2) == {"n1": (SelectedNodeMismatch("src", "n2"),), "n2": ()}


def test_v1d_an_unbound_immediate_claim_makes_the_pod_wait_everywhere() -> None:
    found = volume_constraints(
        "ns", ("data", "legacy", "src"), lookups(claim("data", storage_class="fast"), claim("legacy", storage_class=""), claim("src"))
    )
    assert found.unresolvable == (UnboundImmediateClaims(("data", "legacy")),)
    assert volume_failures(found, N1) == found.unresolvable
    assert found.unresolvable[0].summary() == UNBOUND_IMMEDIATE_CLAIMS_SUMMARY == "pod has unbound immediate PersistentVolumeClaims"


def test_a_delayed_claim_pre_bound_to_a_volume_is_held_to_that_volumes_node() -> None:
    found = volume_constraints("ns", ("src",), lookups(claim("src", pre_bound_to="pv-1"), volumes=(volume("pv-1", affinity=pinned_to("n2")),)))
    assert failures_by_node(found, N1, N2) == {"n1": (VolumeNodeAffinityConflict("src", "pv-1"),), "n2": ()}


def test_claims_in_another_namespace_are_not_the_pods() -> None:
    elsewhere = claim("cache", bound_to="pv-1")
    elsewhere["metadata"]["namespace"] = "other"
    assert volume_constraints("ns", ("cache",), lookups(elsewhere)).unresolvable == (VolumeClaimNotFound("cache"),)


def test_without_the_caches_a_claim_is_never_found() -> None:
    assert volume_constraints("ns", ("c",), NO_VOLUMES).unresolvable == (VolumeClaimNotFound("c"),)


# --- V3: a group's first pod is held to the group's claims ------------------------


def test_v3_a_later_tasks_pinned_claim_forces_the_groups_first_pod_onto_its_node() -> None:
    fetch = pod("fetch", pvc_volume("ws-output", "pvc-1a2b"))
    pipeline_run = run({"name": "source", "volumeClaimTemplate": {}}, {"name": "cache", "persistentVolumeClaim": {"claimName": "team-cache"}})
    found_in = lookups(claim("pvc-1a2b"), claim("team-cache", bound_to="pv-x"), volumes=(volume("pv-x", affinity=pinned_to("n2")),))
    alone = volume_constraints("ns", pod_claim_names(fetch), found_in)
    assert failures_by_node(alone, N1, N2) == {"n1": (), "n2": ()}  # fetch's own claim goes anywhere
    grouped = volume_constraints("ns", group_claim_names(fetch, pipeline_run, {"cache", "source"}), found_in)
    assert failures_by_node(grouped, N1, N2) == {"n1": (VolumeNodeAffinityConflict("team-cache", "pv-x"),), "n2": ()}


# --- V6: volumes that can never meet ---------------------------------------------------


def test_v6_two_volumes_pinned_to_two_nodes_fail_every_node_naming_each_conflict() -> None:
    found = volume_constraints(
        "ns",
        ("a", "b"),
        lookups(
            claim("a", bound_to="pv-a"),
            claim("b", bound_to="pv-b"),
            volumes=(volume("pv-a", affinity=pinned_to("n1")), volume("pv-b", affinity=pinned_to("n2"))),
        ),
    )
    by_node = failures_by_node(found, N1, N2, N3)
    assert by_node == {
        "n1": (VolumeNodeAffinityConflict("b", "pv-b"),),
        "n2": (VolumeNodeAffinityConflict("a", "pv-a"),),
        "n3": (VolumeNodeAffinityConflict("a", "pv-a"), VolumeNodeAffinityConflict("b", "pv-b")),
    }
    assert fit_error_message(3, by_node) == "0/3 nodes are available: 3 node(s) had volume node affinity conflict."
    assert 'persistentvolume "pv-b"' in by_node["n1"][0].message() and '"b"' in by_node["n1"][0].message()


# --- V2: what the bind provisions --------------------------------------------------------


def test_claims_to_provision_are_the_unbound_delayed_claims() -> None:
    found_in = lookups(
        claim("src"),
        claim("selected", selected="n1"),
        claim("cache", bound_to="pv-1"),
        claim("data", storage_class="fast"),
        claim("going", deleting=True),
        volumes=(volume("pv-1"),),
    )
    assert claims_to_provision("ns", ("src", "selected", "cache", "data", "going", "gone"), found_in) == ("src", "selected")
    assert claims_to_provision("ns", (), found_in) == ()


def test_only_volumes_no_node_can_fail_pass_every_node_unasked() -> None:
    everywhere = volume_constraints("ns", ("cache",), lookups(claim("cache", bound_to="pv-1"), volumes=(volume("pv-1"),)))
    assert passes_every_node(everywhere) and failures_by_node(everywhere, N1, N2) == {"n1": (), "n2": ()}
    pinned = volume_constraints("ns", ("cache",), lookups(claim("cache", bound_to="pv-1"), volumes=(volume("pv-1", affinity=pinned_to("n1")),)))
    selected = volume_constraints("ns", ("src",), lookups(claim("src", selected="n2")))
    zonal = volume_constraints("ns", ("src",), lookups(claim("src", storage_class="zonal")))
    gone = volume_constraints("ns", ("gone",), lookups())
    assert not any(passes_every_node(c) for c in (pinned, selected, zonal, gone))
