"""PlacedPods and the three filters that read other pods, run together once per attempt."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.inter_pod_checks import InterPodChecks, inter_pod_checks, inter_pod_failures
from reference_scheduler.core.placed_pods import PlacedPods, node_index, placed_pods
from reference_scheduler.core.reasons import (
    ExistingPodsAntiAffinityRulesNotMatch,
    NodePortsConflict,
    PodAntiAffinityRulesNotMatch,
    TopologySpreadMissingLabel,
    fit_error_message,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, zone: str | None = None) -> Obj:
    return {"metadata": {"name": name, "labels": {HOST: name, **({ZONE: zone} if zone else {})}}}


def pod(name: str, *, host_port: int | None = None, anti: str | None = None, spread: str | None = None, **labels: str) -> Obj:
    container: Obj = {"name": "c"}
    if host_port is not None:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: Obj = {"containers": [container]}
    if anti is not None:
        term = {"labelSelector": {"matchLabels": {"app": anti}}, "topologyKey": HOST}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if spread is not None:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": spread, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
        ]
    return {"metadata": {"name": name, "namespace": "ns", "uid": name, "labels": labels}, "spec": spec}


NODES = {"n1": node("n1", "a"), "n2": node("n2", "b"), "n3": node("n3")}
WEB = pod("web", host_port=8080, app="web")
DB = pod("db", anti="web", app="db")


class TestPlacedPods:
    def test_the_indexes_hold_only_what_a_filter_reads(self) -> None:
        placed = placed_pods({"n1": [WEB, DB], "n2": [pod("plain")], "n3": []})
        assert set(placed.by_node) == {"n1", "n2"}
        assert placed.used_ports == {"n1": frozenset({("0.0.0.0", "TCP", 8080)})}
        assert placed.with_anti_affinity == {"n1": (DB,)}
        assert placed.ports_on("n2") == frozenset()

    def test_with_pods_and_without_return_new_snapshots(self) -> None:
        empty = PlacedPods()
        one = empty.with_pods("n1", [WEB])
        two = one.with_pods("n1", [DB])
        assert empty.by_node == {} and one.by_node == {"n1": (WEB,)} and two.by_node == {"n1": (WEB, DB)}
        assert two.without("web", "n1") == placed_pods({"n1": [DB]})
        assert two.without("web", "n2") is two  # not there: the same snapshot
        assert one.without("web", "n1") == PlacedPods()
        assert empty.with_pods("n1", []) is empty

    def test_node_index(self) -> None:
        assert node_index([WEB]) == ((WEB,), frozenset({("0.0.0.0", "TCP", 8080)}), ())


def checks_for(incoming: Obj, placed: PlacedPods) -> InterPodChecks | None:
    return inter_pod_checks(incoming, nodes=NODES, placed=placed, namespace_labels={"ns": {}})


def test_a_plain_pod_that_no_placed_pod_rejects_costs_no_node_anything() -> None:
    placed = placed_pods({"n1": [WEB, pod("db2", anti="other", app="db")]})
    assert checks_for(pod("plain", app="plain"), placed) is None


def test_each_filter_gives_at_most_one_reason_and_all_three_run() -> None:
    placed = placed_pods({"n1": [WEB, DB]})
    incoming = pod("web2", host_port=8080, anti="db", spread=ZONE, app="web")
    checks = checks_for(incoming, placed)
    assert checks is not None and checks.ports == (("0.0.0.0", "TCP", 8080),)
    failures = {name: inter_pod_failures(checks, n, placed) for name, n in NODES.items()}
    assert failures["n1"] == (
        NodePortsConflict((("0.0.0.0", "TCP", 8080),)),
        # zone a: 1 web pod + itself - the minimum 0 (zone b) = 2 > 1
        failures["n1"][1],
        PodAntiAffinityRulesNotMatch(HOST, "n1"),
    )
    assert failures["n2"] == ()
    assert failures["n3"] == (TopologySpreadMissingLabel(ZONE),)
    message = fit_error_message(3, {n: list(f) for n, f in failures.items() if f})
    assert message == (
        "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match pod anti-affinity rules, "
        "1 node(s) didn't match pod topology spread constraints, 1 node(s) didn't match pod topology spread constraints (missing required label)."
    )


def test_a_placed_pods_anti_affinity_rejects_a_pod_without_terms() -> None:
    placed = placed_pods({"n1": [DB]})
    checks = checks_for(pod("web2", app="web"), placed)
    assert checks is not None and checks.ports == () and checks.spread is None and checks.affinity is not None
    assert inter_pod_failures(checks, NODES["n1"], placed) == (ExistingPodsAntiAffinityRulesNotMatch(HOST, "n1"),)
    assert inter_pod_failures(checks, NODES["n2"], placed) == ()
