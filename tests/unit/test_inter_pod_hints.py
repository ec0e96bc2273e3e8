"""Queueing hints of the filters that read other pods (NodePorts, InterPodAffinity, PodTopologySpread), table by table.

Each table is one QueueingHintFn of kube-scheduler v1.37's plugins: a placed pod added
(``old`` None), relabelled, or gone (``new`` None); a node added, relabelled, retainted
or deleted.
"""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.queue_hints import (
    QUEUE,
    SKIP,
    QueueingHint,
    inter_pod_affinity_node_changed,
    inter_pod_affinity_pod_changed,
    node_ports_pod_deleted,
    topology_spread_node_changed,
    topology_spread_pod_changed,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def placed(name: str = "p", *, node: str | None = "n1", namespace: str = "ns", host_port: int | None = None, anti: Obj | None = None, **labels: str) -> Obj:
    container: Obj = {"name": "c"}
    if host_port is not None:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: Obj = {"containers": [container]}
    if node is not None:
        spec["nodeName"] = node
    if anti is not None:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}}
    return {"metadata": {"name": name, "namespace": namespace, "uid": name, "labels": labels}, "spec": spec}


def term(key: str = ZONE, namespace_selector: Any = "absent", **match: str) -> Obj:
    found: Obj = {"labelSelector": {"matchLabels": match}, "topologyKey": key}
    if namespace_selector != "absent":
        found["namespaceSelector"] = namespace_selector
    return found


def waiting(*, host_port: int | None = None, affinity: Obj | None = None, anti: Obj | None = None, spread: Obj | None = None, **labels: str) -> Obj:
    found = placed("w", node=None, host_port=host_port, **labels)
    terms: Obj = {}
    if affinity is not None:
        terms["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [affinity]}
    if anti is not None:
        terms["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}
    if terms:
        found["spec"]["affinity"] = terms
    if spread is not None:
        found["spec"]["topologySpreadConstraints"] = [spread]
    return found


def spreading(key: str = ZONE, **match: str) -> Obj:
    return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": match}}


def node(name: str = "n1", *, taints: list[Obj] | None = None, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": labels}, "spec": {"taints": taints or []}}


@pytest.mark.parametrize(
    ("pod", "deleted", "hint"),
    [
        pytest.param(waiting(host_port=8080), placed(host_port=8080), QUEUE, id="same-port-freed"),
        pytest.param(waiting(host_port=8080), placed(host_port=9090), SKIP, id="other-port-freed"),
        pytest.param(waiting(host_port=8080), placed(), SKIP, id="deleted-pod-had-no-ports"),
        pytest.param(waiting(), placed(host_port=8080), SKIP, id="waiting-pod-wants-no-port"),
        pytest.param(waiting(host_port=8080), placed(node=None, host_port=8080), SKIP, id="deleted-pod-was-not-placed"),
    ],
)
def test_node_ports_pod_deleted(pod: Obj, deleted: Obj, hint: QueueingHint) -> None:
    assert node_ports_pod_deleted(pod, deleted) is hint


AFFINE = waiting(affinity=term(app="db"))
REPELLED = waiting(anti=term(app="db"))


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(AFFINE, None, placed(app="db"), QUEUE, id="matching-pod-placed"),
        pytest.param(AFFINE, None, placed(app="web"), SKIP, id="other-pod-placed"),
        pytest.param(AFFINE, None, placed(node=None, app="db"), SKIP, id="matching-pod-not-placed"),
        pytest.param(AFFINE, None, placed(namespace="other", app="db"), SKIP, id="matching-labels-other-namespace"),
        pytest.param(
            waiting(affinity=term(namespace_selector={"matchLabels": {"team": "a"}}, app="db")),
            None,
            placed(namespace="other", app="db"),
            QUEUE,
            id="namespace-selector-may-select-it",
        ),
        pytest.param(AFFINE, placed(app="web"), placed(app="db"), QUEUE, id="relabelled-into-affinity"),
        pytest.param(AFFINE, placed(app="db"), placed(app="db", extra="x"), SKIP, id="still-matching"),
        pytest.param(AFFINE, placed(app="db"), None, SKIP, id="affine-pod-gone-helps-no-affinity"),
        pytest.param(REPELLED, placed(app="db"), placed(app="web"), QUEUE, id="relabelled-out-of-anti-affinity"),
        pytest.param(REPELLED, None, placed(app="db"), SKIP, id="repelling-pod-placed-only-hurts"),
        pytest.param(REPELLED, placed(app="db"), None, QUEUE, id="repelling-pod-gone"),
        pytest.param(REPELLED, placed(app="web"), None, SKIP, id="unrelated-pod-gone"),
        pytest.param(waiting(app="web"), placed(anti=term(HOST, app="web")), None, QUEUE, id="pod-whose-anti-affinity-rejected-it-gone"),
        pytest.param(waiting(app="db"), placed(anti=term(HOST, app="web")), None, SKIP, id="pod-whose-anti-affinity-did-not-reject-it-gone"),
        pytest.param(waiting(), None, placed(app="db"), SKIP, id="no-terms"),
    ],
)
def test_inter_pod_affinity_pod_changed(pod: Obj, old: Obj | None, new: Obj | None, hint: QueueingHint) -> None:
    assert inter_pod_affinity_pod_changed(pod, old, new) is hint


SPREAD = waiting(spread=spreading(app="web"), app="web")


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(SPREAD, None, placed(app="web"), QUEUE, id="matching-pod-placed"),
        pytest.param(SPREAD, placed(app="web"), None, QUEUE, id="matching-pod-gone"),
        pytest.param(SPREAD, None, placed(app="db"), SKIP, id="other-pod-placed"),
        pytest.param(SPREAD, None, placed(namespace="other", app="web"), SKIP, id="other-namespace"),
        pytest.param(SPREAD, None, placed(node=None, app="web"), SKIP, id="not-placed"),
        pytest.param(SPREAD, placed(app="db"), placed(app="web"), QUEUE, id="relabelled-into-the-selector"),
        pytest.param(SPREAD, placed(app="web"), placed(app="db"), QUEUE, id="relabelled-out-of-the-selector"),
        pytest.param(SPREAD, placed(app="web"), placed(app="web", extra="x"), SKIP, id="relabelled-still-matching"),
        pytest.param(SPREAD, placed(app="web"), placed(app="web"), SKIP, id="labels-unchanged"),
        pytest.param(waiting(spread={**spreading(app="web"), "whenUnsatisfiable": "ScheduleAnyway"}), None, placed(app="web"), SKIP, id="schedule-anyway-only"),
    ],
)
def test_topology_spread_pod_changed(pod: Obj, old: Obj | None, new: Obj | None, hint: QueueingHint) -> None:
    assert topology_spread_pod_changed(pod, old, new) is hint


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(AFFINE, None, node(**{ZONE: "a"}), QUEUE, id="affinity-node-added-with-the-key"),
        pytest.param(AFFINE, None, node(), SKIP, id="affinity-node-added-without-the-key"),
        pytest.param(AFFINE, node(), node(**{ZONE: "a"}), QUEUE, id="affinity-key-gained"),
        pytest.param(AFFINE, node(**{ZONE: "a"}), node(**{ZONE: "b"}), QUEUE, id="affinity-domain-moved"),
        pytest.param(AFFINE, node(**{ZONE: "a"}), node(), SKIP, id="affinity-key-lost"),
        pytest.param(AFFINE, node(**{ZONE: "a"}), node(**{ZONE: "a"}, team="x"), SKIP, id="affinity-other-label"),
        pytest.param(REPELLED, None, node(), QUEUE, id="anti-affinity-any-node-added"),
        pytest.param(REPELLED, node(**{ZONE: "a"}), node(), QUEUE, id="anti-affinity-key-lost"),
        pytest.param(REPELLED, node(**{ZONE: "a"}), node(**{ZONE: "b"}), QUEUE, id="anti-affinity-domain-moved"),
        pytest.param(REPELLED, node(), node(**{ZONE: "a"}), SKIP, id="anti-affinity-key-gained"),
        pytest.param(waiting(), None, node(**{ZONE: "a"}), SKIP, id="no-terms"),
    ],
)
def test_inter_pod_affinity_node_changed(pod: Obj, old: Obj | None, new: Obj, hint: QueueingHint) -> None:
    assert inter_pod_affinity_node_changed(pod, old, new) is hint


TAINT = [{"key": "k", "value": "v", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("pod", "old", "new", "hint"),
    [
        pytest.param(SPREAD, None, node(**{ZONE: "a"}), QUEUE, id="node-with-the-key-added"),
        pytest.param(SPREAD, None, node(), SKIP, id="node-without-the-key-added"),
        pytest.param(SPREAD, node(**{ZONE: "a"}), None, QUEUE, id="node-with-the-key-deleted"),
        pytest.param(SPREAD, node(), None, SKIP, id="node-without-the-key-deleted"),
        pytest.param(SPREAD, node(), node(**{ZONE: "a"}), QUEUE, id="key-gained"),
        pytest.param(SPREAD, node(**{ZONE: "a"}), node(), QUEUE, id="key-lost"),
        pytest.param(SPREAD, node(**{ZONE: "a"}), node(**{ZONE: "b"}), QUEUE, id="domain-moved"),
        pytest.param(SPREAD, node(**{ZONE: "a"}), node(**{ZONE: "a"}, taints=TAINT), QUEUE, id="retainted"),
        pytest.param(SPREAD, node(), node(taints=TAINT), SKIP, id="retainted-without-the-key"),
        pytest.param(SPREAD, node(**{ZONE: "a"}), node(**{ZONE: "a"}, team="x"), SKIP, id="other-label"),
        pytest.param(waiting(), None, node(**{ZONE: "a"}), SKIP, id="no-constraints"),
    ],
)
def test_topology_spread_node_changed(pod: Obj, old: Obj | None, new: Obj | None, hint: QueueingHint) -> None:
    assert topology_spread_node_changed(pod, old, new) is hint
