"""PodTopologySpread: DoNotSchedule constraints per node, and the skew against a brute-force count.

The cluster of these cases: n1 and n2 in zone a, n3 in zone b, n4 without a zone
label; every node labelled with its hostname. The reasons are kube-scheduler v1.37's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_scheduler.core.reasons import (
    TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY,
    TOPOLOGY_SPREAD_MISSING_LABEL_SUMMARY,
    TopologySpreadConstraintsNotMatch,
    TopologySpreadMissingLabel,
)
from reference_scheduler.core.topology_spread import (
    hard_spread_constraints,
    matching_pods,
    topology_spread_failure,
    topology_spread_state,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
UNTOLERATED = [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}]


def node(name: str, zone: str | None = None, *, taints: list[Obj] | None = None, **labels: str) -> Obj:
    found = {HOST: name, **({ZONE: zone} if zone is not None else {}), **labels}
    return {"metadata": {"name": name, "labels": found}, "spec": {"taints": taints or []}}


NODES = {n["metadata"]["name"]: n for n in (node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4"))}


def constraint(key: str = ZONE, max_skew: int = 1, *, when: str = "DoNotSchedule", selector: Any = "web", **extra: Any) -> Obj:
    found: Obj = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}
    if selector == "web":
        found["labelSelector"] = {"matchLabels": {"app": "web"}}
    elif selector is not None:
        found["labelSelector"] = selector
    return found


def pod(name: str, *constraints: Obj, namespace: str = "ns", deleting: bool = False, spec: Obj | None = None, **labels: str) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": name, "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": list(constraints), **(spec or {})}}


def web(name: str, *constraints: Obj, **kwargs: Any) -> Obj:
    return pod(name, *constraints, app="web", **kwargs)


def verdicts(incoming: Obj, placed: Mapping[str, Sequence[Obj]], nodes: Mapping[str, Obj] = NODES) -> dict[str, Any]:
    state = topology_spread_state(incoming, nodes=nodes, pods_by_node=placed)
    if state is None:
        return {name: None for name in nodes}
    return {name: topology_spread_failure(state, n) for name, n in nodes.items()}


def skewed(value: str, matching: int, self_match: int, minimum: int, max_skew: int = 1, key: str = ZONE) -> TopologySpreadConstraintsNotMatch:
    return TopologySpreadConstraintsNotMatch(key, value, matching, self_match, minimum, max_skew)


MISSING = TopologySpreadMissingLabel(ZONE)


@pytest.mark.parametrize(
    ("incoming", "placed", "expected"),
    [
        pytest.param(
            web("new", constraint()),
            {"n1": [web("w1"), web("w2")]},
            {"n1": skewed("a", 2, 1, 0), "n2": skewed("a", 2, 1, 0), "n3": None, "n4": MISSING},
            id="worked-example",
        ),
        pytest.param(
            web("new", constraint(max_skew=3)),
            {"n1": [web("w1"), web("w2")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="within-max-skew",
        ),
        pytest.param(
            pod("new", constraint(), app="db"),
            {"n1": [web("w1"), web("w2")]},
            {"n1": skewed("a", 2, 0, 0), "n2": skewed("a", 2, 0, 0), "n3": None, "n4": MISSING},
            id="a-pod-outside-its-own-selector-adds-nothing",
        ),
        pytest.param(
            web("new", constraint()),
            {"n1": [web("w1", namespace="other"), web("w2", deleting=True)]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="other-namespaces-and-terminating-pods-do-not-count",
        ),
        pytest.param(
            web("new", constraint(selector={})),
            {"n1": [web("w1"), web("w2")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="empty-selector-counts-nothing",
        ),
        pytest.param(
            web("new", constraint(selector={}, max_skew=1), constraint(HOST, selector={})),
            {},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="empty-selector-still-matches-the-pod-itself",
        ),
        pytest.param(
            web("new", constraint(selector=None)),
            {"n1": [web("w1"), web("w2")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="null-selector-selects-nothing",
        ),
        pytest.param(
            web("new", constraint(minDomains=3)),
            {"n1": [web("w1")], "n3": [web("w2")]},
            {"n1": skewed("a", 1, 1, 0), "n2": skewed("a", 1, 1, 0), "n3": skewed("b", 1, 1, 0), "n4": MISSING},
            id="fewer-domains-than-min-domains-makes-the-minimum-zero",
        ),
        pytest.param(
            web("new", constraint(minDomains=2)),
            {"n1": [web("w1")], "n3": [web("w2")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="enough-domains",
        ),
        pytest.param(
            web("new", constraint(), spec={"nodeSelector": {"disk": "ssd"}}),
            {"n2": [web("w1"), web("w2")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="node-affinity-policy-honor-leaves-out-nodes-the-pod-cannot-go-to",
        ),
        pytest.param(
            web("new", constraint(nodeAffinityPolicy="Ignore"), spec={"nodeSelector": {"disk": "ssd"}}),
            {"n2": [web("w1"), web("w2")]},
            {"n1": skewed("a", 2, 1, 0), "n2": skewed("a", 2, 1, 0), "n3": None, "n4": MISSING},
            id="node-affinity-policy-ignore-counts-them",
        ),
        pytest.param(
            web("new", constraint(HOST)),
            {"n1": [web("w1")], "n2": [web("w2")], "n3": [web("w3")], "n4": [web("w4")]},
            {"n1": None, "n2": None, "n3": None, "n4": None},
            id="hostname-spread-even",
        ),
        pytest.param(
            web("new", constraint(HOST)),
            {"n1": [web("w1"), web("w2")], "n2": [web("w3")]},
            {"n1": skewed("n1", 2, 1, 0, key=HOST), "n2": skewed("n2", 1, 1, 0, key=HOST), "n3": None, "n4": None},
            id="hostname-spread-an-empty-node-is-the-minimum",
        ),
        pytest.param(
            web("new", constraint(HOST), constraint()),
            {"n1": [web("w1")]},
            {"n1": skewed("n1", 1, 1, 0, key=HOST), "n2": skewed("a", 1, 1, 0), "n3": None, "n4": MISSING},
            id="every-constraint-in-order",
        ),
        pytest.param(
            web("new", constraint(HOST), constraint()),
            {"n4": [web("w1"), web("w2"), web("w3")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="a-node-without-every-key-counts-for-no-constraint",
        ),
        pytest.param(
            web("new", constraint(matchLabelKeys=["rev"]), rev="2"),
            {"n1": [web("w1", rev="1"), web("w2", rev="1")]},
            {"n1": None, "n2": None, "n3": None, "n4": MISSING},
            id="match-label-keys-count-only-the-same-revision",
        ),
        pytest.param(
            web("new", constraint(matchLabelKeys=["rev"]), rev="2"),
            {"n1": [web("w1", rev="2"), web("w2", rev="2")]},
            {"n1": skewed("a", 2, 1, 0), "n2": skewed("a", 2, 1, 0), "n3": None, "n4": MISSING},
            id="match-label-keys-same-revision-counts",
        ),
        pytest.param(
            web("new", constraint(when="ScheduleAnyway")),
            {"n1": [web("w1"), web("w2"), web("w3")]},
            {"n1": None, "n2": None, "n3": None, "n4": None},
            id="schedule-anyway-only-scores",
        ),
    ],
)
def test_filter(incoming: Obj, placed: dict[str, list[Obj]], expected: dict[str, Any]) -> None:
    nodes = {**NODES, "n1": node("n1", "a", disk="ssd"), "n3": node("n3", "b", disk="ssd")}
    assert verdicts(incoming, placed, nodes) == expected


def test_node_taints_policy_honor_leaves_out_untolerated_nodes() -> None:
    nodes = {**NODES, "n3": node("n3", "b", taints=UNTOLERATED)}
    placed = {"n1": [web("w1")]}
    # Ignore (the default): zone b is a domain with 0, so zone a's 1 + 1 - 0 > 1.
    assert verdicts(web("new", constraint()), placed, nodes)["n1"] == skewed("a", 1, 1, 0)
    # Honor: the tainted node is no domain; zone a alone is the minimum, 1 + 1 - 1 = 1.
    assert verdicts(web("new", constraint(nodeTaintsPolicy="Honor")), placed, nodes)["n1"] is None
    tolerating = web("new", constraint(nodeTaintsPolicy="Honor"), spec={"tolerations": [{"key": "dedicated", "operator": "Exists"}]})
    assert verdicts(tolerating, placed, nodes)["n1"] == skewed("a", 1, 1, 0)


def test_the_reasons_read_as_kube_scheduler_writes_them() -> None:
    assert skewed("a", 1, 1, 0).summary() == TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY == "node(s) didn't match pod topology spread constraints"
    assert MISSING.summary() == TOPOLOGY_SPREAD_MISSING_LABEL_SUMMARY == "node(s) didn't match pod topology spread constraints (missing required label)"


def test_constraints_parse_with_kube_schedulers_defaults() -> None:
    (only,) = hard_spread_constraints(web("new", constraint(when="ScheduleAnyway"), constraint(max_skew=2)))
    assert (only.max_skew, only.topology_key, only.min_domains, only.node_affinity_policy, only.node_taints_policy) == (2, ZONE, 1, "Honor", "Ignore")
    assert hard_spread_constraints({"spec": {}}) == ()
    assert topology_spread_state(web("new"), nodes=NODES, pods_by_node={}) is None


def test_matching_pods_counts_one_namespace_and_skips_terminating_pods() -> None:
    (spread,) = hard_spread_constraints(web("new", constraint()))
    pods = [web("a"), web("b", namespace="other"), web("c", deleting=True), pod("d", app="db")]
    assert matching_pods(pods, spread.selector, "ns") == 1


# --- the skew against a brute-force count ----------------------------------------------------

_ZONES = st.sampled_from(["a", "b", "c", None])


@st.composite
def clusters(draw: Any) -> tuple[Obj, dict[str, Obj], dict[str, list[Obj]]]:
    nodes = {f"m{i}": node(f"m{i}", draw(_ZONES)) for i in range(draw(st.integers(min_value=1, max_value=5)))}
    placed: dict[str, list[Obj]] = {}
    for index in range(draw(st.integers(min_value=0, max_value=8))):
        labels = {"app": draw(st.sampled_from(["web", "db"]))}
        where = draw(st.sampled_from(sorted(nodes)))
        placed.setdefault(where, []).append(pod(f"p{index}", namespace=draw(st.sampled_from(["ns", "ns", "other"])), **labels))
    spread = constraint(max_skew=draw(st.integers(min_value=1, max_value=2)), minDomains=draw(st.integers(min_value=1, max_value=3)))
    incoming = pod("new", spread, app=draw(st.sampled_from(["web", "db"])))
    return incoming, nodes, placed


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_the_skew_is_the_domains_count_plus_self_less_the_least_domain(cluster: tuple[Obj, dict[str, Obj], dict[str, list[Obj]]]) -> None:
    incoming, nodes, placed = cluster
    (spread,) = incoming["spec"]["topologySpreadConstraints"]
    zoned = {name: n["metadata"]["labels"][ZONE] for name, n in nodes.items() if ZONE in n["metadata"]["labels"]}
    # Count every domain from scratch: the web pods of namespace ns on the nodes of that zone.
    counts = {zone: 0 for zone in zoned.values()}
    for name, pods in placed.items():
        if name in zoned:
            counts[zoned[name]] += sum(1 for p in pods if p["metadata"]["namespace"] == "ns" and p["metadata"]["labels"]["app"] == "web")
    minimum = min(counts.values()) if len(counts) >= spread["minDomains"] else 0
    self_match = 1 if incoming["metadata"]["labels"]["app"] == "web" else 0
    for name, reason in verdicts(incoming, placed, nodes).items():
        if name not in zoned:
            assert reason == TopologySpreadMissingLabel(ZONE)
            continue
        skew = counts[zoned[name]] + self_match - minimum
        assert (reason is None) == (skew <= spread["maxSkew"]), (name, counts, minimum, reason)
        if reason is not None:
            assert isinstance(reason, TopologySpreadConstraintsNotMatch) and reason.skew == skew
