"""InterPodAffinity: required pod affinity and anti-affinity, and placed pods' anti-affinity, per node.

The cluster of these cases: n1 and n2 in zone a, n3 in zone b, n4 without a zone
label; every node labelled with its hostname. The reasons are kube-scheduler v1.37's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.inter_pod_affinity import (
    has_required_anti_affinity,
    inter_pod_affinity_failure,
    inter_pod_affinity_state,
    required_affinity_terms,
    required_anti_affinity_terms,
    with_selected_namespaces,
)
from reference_scheduler.core.label_selectors import NOTHING
from reference_scheduler.core.reasons import (
    EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    POD_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    ExistingPodsAntiAffinityRulesNotMatch,
    PodAffinityRulesNotMatch,
    PodAntiAffinityRulesNotMatch,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name: str, zone: str | None = None) -> Obj:
    labels = {HOST: name, **({ZONE: zone} if zone is not None else {})}
    return {"metadata": {"name": name, "labels": labels}}


NODES = {n["metadata"]["name"]: n for n in (node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4"))}


def term(key: str = ZONE, namespaces: list[str] | None = None, namespace_selector: Any = "absent", **match_labels: str) -> Obj:
    found: Obj = {"labelSelector": {"matchLabels": match_labels}, "topologyKey": key}
    if namespaces is not None:
        found["namespaces"] = namespaces
    if namespace_selector != "absent":
        found["namespaceSelector"] = namespace_selector
    return found


def pod(name: str, *, namespace: str = "ns", affinity: Sequence[Obj] = (), anti: Sequence[Obj] = (), **labels: str) -> Obj:
    spec: Obj = {"containers": [{"name": "c"}]}
    pod_affinity: Obj = {}
    if affinity:
        pod_affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity)}
    if anti:
        pod_affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)}
    if pod_affinity:
        spec["affinity"] = pod_affinity
    return {"metadata": {"name": name, "namespace": namespace, "uid": name, "labels": labels}, "spec": spec}


def verdicts(
    incoming: Obj, placed: Mapping[str, Sequence[Obj]], *, namespaces: Mapping[str, Mapping[str, str]] | None = None, nodes: Mapping[str, Obj] = NODES
) -> dict[str, Any]:
    state = inter_pod_affinity_state(
        incoming,
        nodes=nodes,
        pods_by_node=placed,
        anti_affinity_pods_by_node={n: [p for p in pods if has_required_anti_affinity(p)] for n, pods in placed.items()},
        namespace_labels=namespaces or {"ns": {}},
    )
    if state is None:
        return {name: None for name in NODES}
    return {name: inter_pod_affinity_failure(state, n) for name, n in NODES.items()}


AFFINE = PodAffinityRulesNotMatch(1)
DB = pod("db", app="db")


@pytest.mark.parametrize(
    ("incoming", "placed", "expected"),
    [
        pytest.param(
            pod("web", affinity=[term(app="db")]),
            {"n1": [DB]},
            {"n1": None, "n2": None, "n3": AFFINE, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="affinity-zone-any-node-of-the-domain",
        ),
        pytest.param(
            pod("web", affinity=[term(HOST, app="db")]),
            {"n1": [DB]},
            {"n1": None, "n2": AFFINE, "n3": AFFINE, "n4": AFFINE},
            id="affinity-hostname-only-that-node",
        ),
        pytest.param(
            pod("web", affinity=[term(app="db"), term(HOST, tier="cache")]),
            {"n1": [DB, pod("cache", tier="cache")]},
            {n: PodAffinityRulesNotMatch(2) for n in ("n1", "n2", "n3")} | {"n4": PodAffinityRulesNotMatch(2, ZONE)},
            id="affinity-one-pod-must-match-every-term",
        ),
        pytest.param(
            pod("web", affinity=[term(app="db"), term(HOST, tier="cache")]),
            {"n1": [pod("both", app="db", tier="cache")]},
            {"n1": None, "n2": PodAffinityRulesNotMatch(2), "n3": PodAffinityRulesNotMatch(2), "n4": PodAffinityRulesNotMatch(2, ZONE)},
            id="affinity-every-term-in-its-own-domain",
        ),
        pytest.param(
            pod("web", affinity=[term(app="web")], app="web"),
            {},
            {"n1": None, "n2": None, "n3": None, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="self-affinity-first-pod-goes-anywhere-with-the-key",
        ),
        pytest.param(
            pod("web", affinity=[term(app="web")], app="web"),
            {"n3": [pod("web-0", app="web")]},
            {"n1": AFFINE, "n2": AFFINE, "n3": None, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="self-affinity-once-a-match-exists-follows-it",
        ),
        pytest.param(
            pod("web", affinity=[term(app="web")], app="web"),
            {"n4": [pod("web-0", app="web")]},
            {"n1": None, "n2": None, "n3": None, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="self-affinity-a-match-on-a-node-without-the-key-counts-nowhere",
        ),
        pytest.param(
            pod("web", affinity=[term(app="db")], app="web"),
            {},
            {"n1": AFFINE, "n2": AFFINE, "n3": AFFINE, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="affinity-to-pods-that-do-not-exist-and-not-itself",
        ),
        pytest.param(
            pod("web", anti=[term(app="db")]),
            {"n1": [DB]},
            {"n1": PodAntiAffinityRulesNotMatch(ZONE, "a"), "n2": PodAntiAffinityRulesNotMatch(ZONE, "a"), "n3": None, "n4": None},
            id="anti-affinity-zone-keeps-the-domain-and-passes-a-node-without-the-key",
        ),
        pytest.param(
            pod("web", anti=[term(HOST, app="db")]),
            {"n1": [DB]},
            {"n1": PodAntiAffinityRulesNotMatch(HOST, "n1"), "n2": None, "n3": None, "n4": None},
            id="anti-affinity-hostname",
        ),
        pytest.param(
            pod("web", app="web"),
            {"n1": [pod("db", anti=[term(HOST, app="web")], app="db")]},
            {"n1": ExistingPodsAntiAffinityRulesNotMatch(HOST, "n1"), "n2": None, "n3": None, "n4": None},
            id="existing-anti-affinity-is-symmetric",
        ),
        pytest.param(
            pod("web", app="web"),
            {"n1": [pod("db", anti=[term(ZONE, app="web")], app="db")]},
            {"n1": ExistingPodsAntiAffinityRulesNotMatch(ZONE, "a"), "n2": ExistingPodsAntiAffinityRulesNotMatch(ZONE, "a"), "n3": None, "n4": None},
            id="existing-anti-affinity-zone",
        ),
        pytest.param(
            pod("web", app="web"),
            {"n1": [pod("db", namespace="other", anti=[term(HOST, app="web")], app="db")]},
            {n: None for n in NODES},
            id="existing-anti-affinity-means-its-own-namespace",
        ),
        pytest.param(
            pod("web", app="web"),
            {"n1": [pod("db", namespace="other", anti=[term(HOST, namespace_selector={"matchLabels": {"team": "a"}}, app="web")], app="db")]},
            {"n1": ExistingPodsAntiAffinityRulesNotMatch(HOST, "n1"), "n2": None, "n3": None, "n4": None},
            id="existing-anti-affinity-selects-the-incoming-pods-namespace-by-its-labels",
        ),
        pytest.param(
            pod("web", affinity=[term(namespaces=["other"], app="db")]),
            {"n1": [DB], "n3": [pod("db2", namespace="other", app="db")]},
            {"n1": AFFINE, "n2": AFFINE, "n3": None, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="affinity-namespaces-listed-replace-the-own",
        ),
        pytest.param(
            pod("web", affinity=[term(namespace_selector={}, app="db")]),
            {"n3": [pod("db2", namespace="third", app="db")]},
            {"n1": AFFINE, "n2": AFFINE, "n3": None, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="affinity-empty-namespace-selector-means-every-namespace",
        ),
        pytest.param(
            pod("web", affinity=[term(namespace_selector={"matchLabels": {"team": "a"}}, app="db")]),
            {"n1": [pod("db1", namespace="third", app="db")], "n3": [pod("db2", namespace="other", app="db")]},
            {"n1": AFFINE, "n2": AFFINE, "n3": None, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="affinity-namespace-selector-by-labels",
        ),
        pytest.param(
            pod("web", affinity=[{"topologyKey": ZONE}], app="web"),
            {"n1": [DB]},
            {"n1": AFFINE, "n2": AFFINE, "n3": AFFINE, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="null-label-selector-selects-no-pod-not-even-itself",
        ),
        pytest.param(
            pod("web", affinity=[{**term(app="db"), "matchLabelKeys": ["rev"]}], rev="2"),
            {"n1": [pod("db", app="db", rev="1")]},
            {"n1": None, "n2": None, "n3": AFFINE, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="match-label-keys-are-the-api-servers-to-merge",
        ),
        pytest.param(
            pod("web", affinity=[term(app="db")]),
            {"gone": [DB]},
            {"n1": AFFINE, "n2": AFFINE, "n3": AFFINE, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="pods-on-a-node-not-listed-do-not-count",
        ),
        pytest.param(
            pod("web", affinity=[term(app="db")], anti=[term(HOST, app="db")]),
            {"n1": [DB]},
            {"n1": PodAntiAffinityRulesNotMatch(HOST, "n1"), "n2": None, "n3": AFFINE, "n4": PodAffinityRulesNotMatch(1, ZONE)},
            id="near-but-not-on-the-same-node",
        ),
    ],
)
def test_filter(incoming: Obj, placed: dict[str, list[Obj]], expected: dict[str, Any]) -> None:
    namespaces = {"ns": {"team": "a"}, "other": {"team": "a"}, "third": {"team": "b"}}
    assert verdicts(incoming, placed, namespaces=namespaces) == expected


def test_the_reasons_read_as_kube_scheduler_writes_them() -> None:
    assert AFFINE.summary() == POD_AFFINITY_RULES_NOT_MATCH_SUMMARY == "node(s) didn't match pod affinity rules"
    assert PodAntiAffinityRulesNotMatch(ZONE, "a").summary() == POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY == "node(s) didn't match pod anti-affinity rules"
    assert (
        ExistingPodsAntiAffinityRulesNotMatch(ZONE, "a").summary()
        == EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY
        == "node(s) didn't satisfy existing pods anti-affinity rules"
    )


def test_a_pod_without_terms_that_no_placed_pod_rejects_is_skipped() -> None:
    placed = {"n1": [DB, pod("db2", anti=[term(HOST, app="other")], app="db")]}
    assert verdicts(pod("web", app="web"), placed) == {n: None for n in NODES}
    state = inter_pod_affinity_state(
        pod("web", app="web"), nodes=NODES, pods_by_node=placed, anti_affinity_pods_by_node={"n1": [placed["n1"][1]]}, namespace_labels={}
    )
    assert state is None


def test_only_the_pods_with_anti_affinity_are_read_for_a_pod_without_terms() -> None:
    # pods_by_node is not walked at all: a pod there that would reject it is not seen
    # unless it is also listed among the anti-affinity pods (ClusterView keeps both).
    rejecting = pod("db", anti=[term(HOST, app="web")], app="db")
    state = inter_pod_affinity_state(pod("web", app="web"), nodes=NODES, pods_by_node={"n1": [rejecting]}, anti_affinity_pods_by_node={}, namespace_labels={})
    assert state is None


def test_terms_parse_namespaces_and_selectors() -> None:
    owner = pod("web", namespace="ci", affinity=[term(app="db"), term(namespaces=["x"], app="db"), term(namespace_selector=None, app="db")])
    own, listed, null_selector = required_affinity_terms(owner)
    assert own.namespaces == frozenset({"ci"}) and own.namespace_selector is NOTHING
    assert listed.namespaces == frozenset({"x"})
    assert null_selector.namespaces == frozenset({"ci"}) and null_selector.namespace_selector is NOTHING
    assert required_anti_affinity_terms(owner) == ()
    assert not has_required_anti_affinity(owner)
    assert has_required_anti_affinity(pod("db", anti=[term(app="x")]))


def test_a_namespace_selector_is_resolved_into_names_once() -> None:
    selected = term(namespaces=["tools"], namespace_selector={"matchLabels": {"team": "a"}}, app="db")
    (resolved,) = required_affinity_terms(pod("web", namespace="ci", affinity=[selected]))
    merged = with_selected_namespaces(resolved, {"a1": {"team": "a"}, "b1": {"team": "b"}, "ci": {}})
    assert merged.namespaces == frozenset({"tools", "a1"}) and merged.namespace_selector is NOTHING
    (every,) = required_affinity_terms(pod("web", affinity=[term(namespace_selector={}, app="db")]))
    assert with_selected_namespaces(every, {"a1": {}}) is every  # {} selects every namespace: left as it is


# --- a brute-force reading of the same rules, over random clusters -------------------------

_KEYS = (ZONE, HOST)
_LABELS = st.fixed_dictionaries({}, optional={"app": st.sampled_from(["a", "b"]), "tier": st.sampled_from(["x", "y"])})


def _random_term(draw: Any) -> Obj:
    return {"labelSelector": {"matchLabels": draw(_LABELS)}, "topologyKey": draw(st.sampled_from(_KEYS))}


@st.composite
def clusters(draw: Any) -> tuple[Obj, dict[str, list[Obj]]]:
    placed: dict[str, list[Obj]] = {}
    for index in range(draw(st.integers(min_value=0, max_value=6))):
        anti = [_random_term(draw) for _ in range(draw(st.integers(min_value=0, max_value=1)))]
        placed.setdefault(draw(st.sampled_from(sorted(NODES))), []).append(pod(f"p{index}", anti=anti, **draw(_LABELS)))
    affinity = [_random_term(draw) for _ in range(draw(st.integers(min_value=0, max_value=2)))]
    anti = [_random_term(draw) for _ in range(draw(st.integers(min_value=0, max_value=2)))]
    return pod("incoming", affinity=affinity, anti=anti, **draw(_LABELS)), placed


def _selects(raw_term: Obj, candidate: Obj) -> bool:
    wanted = raw_term["labelSelector"]["matchLabels"]
    return all(candidate["metadata"]["labels"].get(k) == v for k, v in wanted.items())


def _expected(incoming: Obj, placed: dict[str, list[Obj]]) -> dict[str, str | None]:
    """Per node: which rule fails first, read as the definitions say, node by node (no counts)."""
    affinity = (incoming["spec"].get("affinity") or {}).get("podAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    anti = (incoming["spec"].get("affinity") or {}).get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
    everywhere = [(NODES[n], p) for n, pods in placed.items() for p in pods]

    def same_domain(a: Obj, b: Obj, key: str) -> bool:
        return key in a["metadata"]["labels"] and a["metadata"]["labels"].get(key) == b["metadata"]["labels"].get(key)

    result: dict[str, str | None] = {}
    for name, candidate in NODES.items():
        labels = candidate["metadata"]["labels"]
        outcome: str | None = None
        if affinity:
            full = [(m, p) for m, p in everywhere if all(_selects(t, p) for t in affinity)]
            counted = [(m, p) for m, p in full if any(t["topologyKey"] in m["metadata"]["labels"] for t in affinity)]
            satisfied = all(any(same_domain(m, candidate, t["topologyKey"]) for m, _ in full) for t in affinity)
            first = not counted and all(_selects(t, incoming) for t in affinity)
            if any(t["topologyKey"] not in labels for t in affinity) or not (satisfied or first):
                outcome = "affinity"
        if outcome is None and any(_selects(t, p) and same_domain(m, candidate, t["topologyKey"]) for t in anti for m, p in everywhere):
            outcome = "anti-affinity"
        if outcome is None and any(
            _selects(t, incoming) and same_domain(m, candidate, t["topologyKey"])
            for m, p in everywhere
            for t in (p["spec"].get("affinity") or {}).get("podAntiAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", [])
        ):
            outcome = "existing"
        result[name] = outcome
    return result


_KINDS = {PodAffinityRulesNotMatch: "affinity", PodAntiAffinityRulesNotMatch: "anti-affinity", ExistingPodsAntiAffinityRulesNotMatch: "existing"}


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_the_counts_decide_as_the_definitions_read_node_by_node(cluster: tuple[Obj, dict[str, list[Obj]]]) -> None:
    incoming, placed = cluster
    found = {name: None if reason is None else _KINDS[type(reason)] for name, reason in verdicts(incoming, placed).items()}
    assert found == _expected(incoming, placed)
