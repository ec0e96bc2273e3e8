"""volume_reads: the fresh reads behind the volume rules, shared by the suite's monitor and rescon audit.

Claims and PersistentVolumes are not watched: they are read (GET) when a rule
needs them, at two moments, after the moment was seen:

- a pod of the judged scheduler first seen bound: each claim it mounts, and
  with records each claim of its group; then the PersistentVolume of each
  Bound one; then the record. `pod-volume-node-conflict` and
  `pod-bound-before-claim` are judged on the claims, `group-volume-node-conflict`
  on the record read last;
- a group first seen Reserved: each claim of the group, their volumes, then
  the record again.

Claims are read before the record: a claim only goes from unbound to Bound,
keeps its volume, and a volume's node affinity never changes, so what the
claim read shows still held when the record was read. A correct scheduler
made every claim of a pod Bound before binding it, so a read after the bind
can never wrongly flag it, whichever way a race between watch streams went.

A claim, volume, node or record that is gone (404) is not judged. Any other
failed read raises; the monitor and the auditor log it and go on.

    judge_bind(kube, world, pod, with_reservations=True) == [Finding('pod-bound-before-claim', ...)]
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import kubernetes

from harness.contract import record as contract
from harness.kube import Kube, json_object
from harness.monitor import invariants as rules
from harness.monitor import rulebook
from harness.monitor.volume_topology import is_bound, pod_claim_names, volume_name_of

Obj = dict[str, Any]

#: The client's timeout on each read, in seconds (connect, read): a hung connection must not stall the
#: monitor's evaluator or the auditor's loop; the read then fails, is logged, and that moment goes unjudged.
READ_TIMEOUT_SECONDS = 10.0
_TIMEOUT = (READ_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS)


@dataclass(frozen=True)
class VolumeReads:
    """VolumeReads is what one read found: the claims that exist (by name, one namespace) and the volumes of the Bound ones (by name)."""

    claims: dict[str, Obj] = field(default_factory=dict)
    volumes: dict[str, Obj] = field(default_factory=dict)


def _absent_if_gone(read: Callable[[], Any]) -> Any | None:
    """_absent_if_gone() is the answer of `read`, or None when the API says 404."""
    try:
        return read()
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return None
        raise


def _json(response: Any) -> Obj | None:
    """_json() is the body of a call made with _preload_content=False, or None for a call that found nothing."""
    if response is None:
        return None
    data: Obj = json.loads(response.data)
    return data


def read_volumes(kube: Kube, namespace: str, claims: Iterable[str]) -> VolumeReads:
    """read_volumes() reads each claim now, then the PersistentVolume of each Bound one; what is gone is left out."""
    core = kube.core
    found: dict[str, Obj] = {}
    for name in dict.fromkeys(claims):
        claim = _json(_absent_if_gone(lambda: core.read_namespaced_persistent_volume_claim(name, namespace, _preload_content=False, _request_timeout=_TIMEOUT)))
        if claim is not None:
            found[name] = claim
    volumes: dict[str, Obj] = {}
    for claim in found.values():
        volume_name = volume_name_of(claim)
        if not is_bound(claim) or volume_name is None or volume_name in volumes:
            continue
        volume = _json(_absent_if_gone(lambda: core.read_persistent_volume(volume_name, _preload_content=False, _request_timeout=_TIMEOUT)))
        if volume is not None:
            volumes[volume_name] = volume
    return VolumeReads(found, volumes)


def read_record(kube: Kube, namespace: str, name: str) -> contract.Record | None:
    """read_record() is the record as it is now; None when it is gone or the contract refuses it (record-invalid says so from the watch)."""
    obj = _absent_if_gone(lambda: kube.custom.get_namespaced_custom_object(contract.GROUP, contract.VERSION, namespace, contract.PLURAL, name, _request_timeout=_TIMEOUT))
    if obj is None:
        return None
    try:
        return contract.Record.from_json(json_object(obj))
    except contract.ContractViolation:
        return None


def node_named(kube: Kube, world: rules.World, name: str | None) -> Obj | None:
    """node_named() is the node as the world holds it, else as the API has it now, else None (gone)."""
    if not name:
        return None
    held = world.nodes.get(name)
    if held is not None:
        return dict(held)
    return _json(_absent_if_gone(lambda: kube.core.read_node(name, _preload_content=False, _request_timeout=_TIMEOUT)))


def _nodes_of(kube: Kube, world: rules.World, record: contract.Record, groups: Iterable[str]) -> dict[str, Obj]:
    nodes: dict[str, Obj] = {}
    for status in record.statuses:
        if status.name in groups and status.node and status.node not in nodes:
            node = node_named(kube, world, status.node)
            if node is not None:
                nodes[status.node] = node
    return nodes


def judge_bind(kube: Kube, world: rules.World, pod: rules.Obj, *, with_reservations: bool) -> list[rules.Finding]:
    """judge_bind() reads what a pod just seen bound mounts (and its group's claims) and asks the volume rules.

    `world` holds the pod already; a pod that mounts no claim costs no read.
    """
    meta = pod.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    names = list(pod_claim_names(pod))
    if not names:  # a group's pod mounts its workspace's claim: one that mounts none is in no group
        return []
    owner = rules.task_of(pod)
    spec: contract.Record | None = None
    group: contract.GroupSpec | None = None
    if with_reservations and owner is not None:
        spec = world.records.get(owner[:2]) or read_record(kube, *owner[:2])
        group = spec.group_of_task(owner[2]) if spec is not None else None
    pipeline_run = world.pipeline_runs.get(owner[:2]) if owner is not None else None
    if spec is not None and group is not None:
        names += [n for n in rules.group_claims(spec, group.name, pipeline_run, world.pods.values()) if n not in names]
    reads = read_volumes(kube, namespace, names)
    node = node_named(kube, world, rules.node_of(pod))
    found = rulebook.bind_volume_findings(pod, node, reads.claims, reads.volumes)
    if spec is not None and group is not None:
        fresh = read_record(kube, spec.namespace, spec.name)
        if fresh is not None:
            nodes = _nodes_of(kube, world, fresh, [group.name])
            found += rulebook.group_volume_findings(fresh, [group.name], pipeline_run, world.pods.values(), nodes, reads.claims, reads.volumes)
    return found


def judge_claims(kube: Kube, world: rules.World, record: contract.Record, groups: Iterable[str]) -> list[rules.Finding]:
    """judge_claims() reads the claims of groups just seen Reserved, then the record, and asks group-volume-node-conflict.

    A group with no claim to read (a volumeClaimTemplate workspace whose
    pods are not bound yet) costs no read: its pods' binds are judged.
    """
    groups = [g for g in groups if g in {s.name for s in record.groups}]
    pipeline_run = world.pipeline_runs.get((record.namespace, record.pipeline_run))
    names: list[str] = []
    for group in groups:
        names += [n for n in rules.group_claims(record, group, pipeline_run, world.pods.values()) if n not in names]
    if not names:
        return []
    reads = read_volumes(kube, record.namespace, names)
    fresh = read_record(kube, record.namespace, record.name)
    if fresh is None:
        return []
    nodes = _nodes_of(kube, world, fresh, groups)
    return rulebook.group_volume_findings(fresh, groups, pipeline_run, world.pods.values(), nodes, reads.claims, reads.volumes)
