"""NodePorts: a pod's host ports against the ports its node's pods already bind (kube-scheduler's HostPortInfo rules)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.node_ports import HostPort, host_ports, node_ports_conflict, port_conflicts, used_host_ports
from reference_scheduler.core.reasons import NODE_PORTS_CONFLICT_SUMMARY, NodePortsConflict

pytestmark = pytest.mark.unit


def port(host_port: int, *, ip: str | None = None, protocol: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"containerPort": 80, "hostPort": host_port}
    if ip is not None:
        found["hostIP"] = ip
    if protocol is not None:
        found["protocol"] = protocol
    return found


def pod(*ports: dict[str, Any], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "ports": list(ports)}]}
    if init is not None:
        spec["initContainers"] = init
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "p"}, "spec": spec}


@pytest.mark.parametrize(
    ("given_pod", "ports"),
    [
        pytest.param(pod(port(8080)), (("0.0.0.0", "TCP", 8080),), id="defaults-all-ips-tcp"),
        pytest.param(pod(port(53, ip="10.0.0.1", protocol="UDP")), (("10.0.0.1", "UDP", 53),), id="ip-and-protocol-kept"),
        pytest.param(pod({"containerPort": 80}), (), id="container-port-without-host-port"),
        pytest.param(pod(port(0)), (), id="host-port-zero-is-none"),
        pytest.param({"spec": {}}, (), id="no-containers"),
        pytest.param({}, (), id="no-spec"),
        pytest.param(
            pod(port(8080), init=[{"name": "prepare", "ports": [port(9000)]}]),
            (("0.0.0.0", "TCP", 8080),),
            id="plain-init-container-not-counted",
        ),
        pytest.param(
            pod(port(8080), init=[{"name": "proxy", "restartPolicy": "Always", "ports": [port(9000)]}]),
            (("0.0.0.0", "TCP", 9000), ("0.0.0.0", "TCP", 8080)),
            id="native-sidecar-counted",
        ),
    ],
)
def test_host_ports(given_pod: dict[str, Any], ports: tuple[HostPort, ...]) -> None:
    assert host_ports(given_pod) == ports


@pytest.mark.parametrize(
    ("wanted", "used", "conflicts"),
    [
        pytest.param(("0.0.0.0", "TCP", 80), {("0.0.0.0", "TCP", 80)}, True, id="all-vs-all"),
        pytest.param(("0.0.0.0", "TCP", 80), {("10.0.0.1", "TCP", 80)}, True, id="all-vs-specific"),
        pytest.param(("10.0.0.2", "TCP", 80), {("0.0.0.0", "TCP", 80)}, True, id="specific-vs-all"),
        pytest.param(("10.0.0.1", "TCP", 80), {("10.0.0.1", "TCP", 80)}, True, id="same-ip"),
        pytest.param(("10.0.0.2", "TCP", 80), {("10.0.0.1", "TCP", 80)}, False, id="other-ip"),
        pytest.param(("0.0.0.0", "UDP", 80), {("0.0.0.0", "TCP", 80)}, False, id="other-protocol"),
        pytest.param(("0.0.0.0", "TCP", 81), {("0.0.0.0", "TCP", 80)}, False, id="other-port"),
        pytest.param(("0.0.0.0", "TCP", 80), set(), False, id="nothing-used"),
    ],
)
def test_port_conflicts(wanted: HostPort, used: set[HostPort], conflicts: bool) -> None:
    assert port_conflicts(wanted, used) is conflicts


def test_the_filter_names_the_conflicting_ports_with_kube_schedulers_summary() -> None:
    on_node = [pod(port(8080, ip="10.0.0.1")), pod(port(53, protocol="UDP"))]
    wanted = host_ports(pod(port(8080), port(53), port(9090)))
    failure = node_ports_conflict(wanted, used_host_ports(on_node))
    assert failure == NodePortsConflict((("0.0.0.0", "TCP", 8080),))
    assert failure.summary() == NODE_PORTS_CONFLICT_SUMMARY == "node(s) didn't have free ports for the requested pod ports"
    assert node_ports_conflict(host_ports(pod(port(9090))), used_host_ports(on_node)) is None
    assert node_ports_conflict((), used_host_ports(on_node)) is None


_IPS = st.sampled_from(["", "0.0.0.0", "10.0.0.1", "10.0.0.2"])
_PROTOCOLS = st.sampled_from(["", "TCP", "UDP", "SCTP"])
_PORTS = st.integers(min_value=1, max_value=3)


def _sanitized(ip: str, protocol: str, number: int) -> HostPort:
    return (ip or "0.0.0.0", protocol or "TCP", number)


@given(
    wanted=st.tuples(_IPS, _PROTOCOLS, _PORTS),
    used=st.lists(st.tuples(_IPS, _PROTOCOLS, _PORTS), max_size=4),
)
def test_a_conflict_is_a_shared_protocol_and_port_on_overlapping_addresses(
    wanted: tuple[str, str, int], used: list[tuple[str, str, int]]
) -> None:
    # Brute force over the raw pods: two bindings overlap when their protocols and ports are
    # equal and their addresses are equal or either is every address.
    on_node = [pod(port(n, ip=ip or None, protocol=protocol or None)) for ip, protocol, n in used]
    incoming = _sanitized(*wanted)

    def overlaps(other: HostPort) -> bool:
        return other[1:] == incoming[1:] and (other[0] == incoming[0] or "0.0.0.0" in (other[0], incoming[0]))

    expected = any(overlaps(_sanitized(*u)) for u in used)
    assert port_conflicts(incoming, used_host_ports(on_node)) is expected
