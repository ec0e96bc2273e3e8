"""NodePorts: a pod's host ports must be free on the node, as kube-scheduler's NodePorts filter checks.

A container port with a ``hostPort`` binds that port on the node itself, so two
pods asking for the same one cannot share a node. kube-scheduler collects a pod's
host ports once (PreFilter: ``util.GetHostPorts``) and checks them against the
ports the node's pods already use (``NodeInfo.UsedPorts``, ``HostPortInfo.CheckConflict``
in ``k8s.io/kube-scheduler/framework``). This module does the same over the raw
pod JSON:

* the ports counted are those with ``hostPort > 0`` of every container and of
  every *restartable* init container (``restartPolicy: Always``, a native
  sidecar, which runs as long as the pod does); a plain init container has
  ended before the pod's containers start, so kube-scheduler does not count its
  ports, and neither does this;
* an empty ``hostIP`` is ``0.0.0.0`` and an empty ``protocol`` is ``TCP``;
* ``0.0.0.0`` conflicts with the same protocol and port on any IP, and any IP
  conflicts with the same IP or with ``0.0.0.0``.

Worked example: pod A on n1 binds ``8080/TCP`` on ``10.0.0.1``. Pod B asking
``8080/TCP`` with no hostIP (``0.0.0.0``) conflicts; B asking ``8080/TCP`` on
``10.0.0.2`` or ``8080/UDP`` on ``0.0.0.0`` does not.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypeAlias

from reference_scheduler.core.reasons import NodePortsConflict

HostPort: TypeAlias = tuple[str, str, int]
"""HostPort is one bound host port: (hostIP, protocol, port), with kube-scheduler's defaults applied."""

BIND_ALL_HOST_IP = "0.0.0.0"
"""BIND_ALL_HOST_IP is what an empty hostIP means (kube-scheduler's ``DefaultBindAllHostIP``): every address of the node."""

DEFAULT_PROTOCOL = "TCP"
"""DEFAULT_PROTOCOL is what an empty protocol means, as the API server defaults it."""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _port_number(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return 0


def _ports_of(container: Any) -> Iterable[HostPort]:
    if not isinstance(container, Mapping):
        return
    for port in _list(container.get("ports")):
        if not isinstance(port, Mapping):
            continue
        number = _port_number(port.get("hostPort"))
        if number <= 0:
            continue
        yield (str(port.get("hostIP") or BIND_ALL_HOST_IP), str(port.get("protocol") or DEFAULT_PROTOCOL), number)


def host_ports(pod: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """host_ports lists the host ports a pod binds on its node (restartable init containers first, then containers).

    Example: a pod whose container asks ``{"containerPort": 80, "hostPort": 8080}``
    and whose plain init container asks ``hostPort: 9000`` binds
    ``(("0.0.0.0", "TCP", 8080),)``: the init container is done before the pod runs.
    A pod without host ports gives ``()``, and the filter is skipped for it.
    """
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return ()
    found: list[HostPort] = []
    for container in _list(spec.get("initContainers")):
        if isinstance(container, Mapping) and container.get("restartPolicy") == "Always":
            found.extend(_ports_of(container))
    for container in _list(spec.get("containers")):
        found.extend(_ports_of(container))
    return tuple(found)


def port_conflicts(wanted: HostPort, used: Collection[HostPort]) -> bool:
    """port_conflicts says whether one wanted host port collides with the ports already used on a node.

    ``0.0.0.0`` takes the protocol and port on every address, so it collides with
    any used entry of the same protocol and port; a specific IP collides with the
    same IP or with ``0.0.0.0``.

    Example: ``port_conflicts(("10.0.0.2", "TCP", 80), {("0.0.0.0", "TCP", 80)})`` is True;
    ``port_conflicts(("10.0.0.2", "TCP", 80), {("10.0.0.1", "TCP", 80)})`` is False.
    """
    ip, protocol, port = wanted
    if port <= 0:
        return False
    if ip == BIND_ALL_HOST_IP:
        return any(p == protocol and n == port for _, p, n in used)
    return (BIND_ALL_HOST_IP, protocol, port) in used or (ip, protocol, port) in used


def used_host_ports(pods: Iterable[Mapping[str, Any]]) -> frozenset[HostPort]:
    """used_host_ports is every host port the given pods (those on one node) bind: kube-scheduler's ``UsedPorts``.

    Example: two pods binding ``8080/TCP`` and ``53/UDP`` give
    ``frozenset({("0.0.0.0", "TCP", 8080), ("0.0.0.0", "UDP", 53)})``.
    """
    return frozenset(port for pod in pods for port in host_ports(pod))


def node_ports_conflict(wanted: Iterable[HostPort], used: Collection[HostPort]) -> NodePortsConflict | None:
    """node_ports_conflict is the NodePorts filter: the pod's wanted host ports that the node's pods already use.

    None when every wanted port is free (or the pod wants none). The record
    names each conflicting port, so the per-node message says which one.

    Example: wanted ``[("0.0.0.0", "TCP", 8080)]`` on a node whose pods use
    ``{("10.0.0.1", "TCP", 8080)}`` gives ``NodePortsConflict((("0.0.0.0", "TCP", 8080),))``,
    whose summary is kube-scheduler's "node(s) didn't have free ports for the requested pod ports".
    """
    if not used:
        return None
    conflicting = tuple(port for port in wanted if port_conflicts(port, used))
    return NodePortsConflict(conflicting) if conflicting else None
