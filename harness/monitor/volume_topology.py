"""volume_topology: the claims a pod mounts, when a claim is Bound, and which nodes a volume's node affinity admits.

The suite's own reading of docs/contract.md section 7, Volumes, as pure
functions over plain dicts (it never borrows the scheduler's): the monitor's
volume rules (harness.monitor.invariants) ask them about objects that
harness.monitor.volume_reads has just read.

    pod_claim_names(pod)       == ('source-pvc', 'build-pod-scratch')   # a PVC volume, an ephemeral one
    is_bound(claim)            == True     # spec.volumeName set and status.phase Bound
    volume_admits(pv, node)    == False    # pv pinned by kubernetes.io/hostname In [n2], node n1
    describe_node_selector(pv['spec']['nodeAffinity']['required']) == 'kubernetes.io/hostname In [n2]'

A NodeSelector is read as kube-scheduler reads a pod's required node affinity
(`k8s.io/component-helpers/scheduling/corev1/nodeaffinity`): its terms are
ORed, a term's matchExpressions (on the node's labels) and matchFields (on
`metadata.name`, the one field) are ANDed, an empty term or an empty list of
terms matches no node, and a requirement the API would refuse (In without
values, Gt with a value that is no integer) makes its term match nothing.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

Obj = Mapping[str, Any]

#: kube's AnnSelectedNode: the node the scheduler chose for a delayed claim, where the provisioner provisions.
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
#: The one node field a NodeSelector's matchFields may name.
NODE_NAME_FIELD = "metadata.name"

#: An integer as Go's strconv.ParseInt(s, 10, 64) reads it (labels' Gt and Lt).
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64 = (-(2**63), 2**63 - 1)


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def pod_claim_names(pod: Obj, *, ephemeral: bool = True) -> tuple[str, ...]:
    """pod_claim_names() is every claim the pod mounts, in the order of its volumes, each once.

    A `persistentVolumeClaim` volume names its claim; an `ephemeral` volume's
    claim is `<pod name>-<volume name>`, as the ephemeral volume controller
    names it (left out with ephemeral=False: such a claim is the pod's own and
    goes with it, no other pod of a group mounts it). Tekton's
    volumeClaimTemplate workspaces are claims of the first kind (`pvc-<hash>`,
    made by Tekton).
    Example: volumes [{name: w, persistentVolumeClaim: {claimName: src}}, {name: scratch, ephemeral: {...}}]
    of pod `p` give ('src', 'p-scratch').
    """
    names: list[str] = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(volume, Mapping):
            continue
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim and ephemeral and volume.get("ephemeral") is not None and volume.get("name"):
            claim = f"{_meta(pod).get('name')}-{volume['name']}"
        if claim and str(claim) not in names:
            names.append(str(claim))
    return tuple(names)


def volume_name_of(claim: Obj) -> str | None:
    """volume_name_of() is the claim's `spec.volumeName`, None while it names no volume."""
    return (claim.get("spec") or {}).get("volumeName") or None


def claim_phase(claim: Obj) -> str:
    """claim_phase() is the claim's `status.phase` ('Pending' when the API has not written one yet)."""
    return str((claim.get("status") or {}).get("phase") or "Pending")


def is_bound(claim: Obj) -> bool:
    """is_bound() is True for a claim whose `spec.volumeName` is set and whose `status.phase` is Bound (the contract's *Bound*)."""
    return volume_name_of(claim) is not None and claim_phase(claim) == "Bound"


def selected_node(claim: Obj) -> str | None:
    """selected_node() is the claim's `volume.kubernetes.io/selected-node` annotation, None without one."""
    return (_meta(claim).get("annotations") or {}).get(SELECTED_NODE_ANNOTATION) or None


def required_node_selector(volume: Obj) -> Obj | None:
    """required_node_selector() is a PersistentVolume's `spec.nodeAffinity.required`, None when it has none (any node will do)."""
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    return required if isinstance(required, Mapping) else None


def _values(requirement: Obj) -> list[str]:
    return [str(v) for v in requirement.get("values") or []]


def _integer(text: str | None) -> int | None:
    if text is None or _INTEGER.fullmatch(text) is None:
        return None
    value = int(text)
    return value if _INT64[0] <= value <= _INT64[1] else None


def label_requirement_matches(requirement: Obj, labels: Mapping[str, str]) -> bool:
    """label_requirement_matches() is one matchExpressions entry against a node's labels, as `labels.Requirement` matches.

    In: the label is one of the values; NotIn: the label is absent or none of
    them; Exists / DoesNotExist: the label is there / is not (no values);
    Gt / Lt: the label and the one value are integers and compare so.
    Example: {key: zone, operator: NotIn, values: [a]} matches a node without a `zone` label.
    """
    key, operator, values = str(requirement.get("key") or ""), requirement.get("operator"), _values(requirement)
    present = key in labels
    if operator == "In":
        return bool(values) and present and labels[key] in values
    if operator == "NotIn":
        return bool(values) and (not present or labels[key] not in values)
    if operator == "Exists":
        return not values and present
    if operator == "DoesNotExist":
        return not values and not present
    if operator in ("Gt", "Lt"):
        bound = _integer(values[0]) if len(values) == 1 else None
        have = _integer(labels.get(key)) if present else None
        if bound is None or have is None:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def field_requirement_matches(requirement: Obj, node_name: str) -> bool:
    """field_requirement_matches() is one matchFields entry against the node's name: In or NotIn with exactly one value.

    A key other than `metadata.name` reads as the empty string, as a field set does.
    Example: {key: metadata.name, operator: In, values: [n1]} matches node n1 only.
    """
    values = _values(requirement)
    if len(values) != 1:
        return False
    field = node_name if requirement.get("key") == NODE_NAME_FIELD else ""
    if requirement.get("operator") == "In":
        return field == values[0]
    if requirement.get("operator") == "NotIn":
        return field != values[0]
    return False


def _requirements(term: Obj, part: str) -> list[Obj]:
    return [r for r in term.get(part) or [] if isinstance(r, Mapping)]


def term_matches(term: Obj, node: Obj) -> bool:
    """term_matches() is one NodeSelectorTerm: every matchExpressions and matchFields entry matches; an empty term matches nothing."""
    expressions, fields = _requirements(term, "matchExpressions"), _requirements(term, "matchFields")
    if not expressions and not fields:
        return False
    labels = {str(k): str(v) for k, v in (_meta(node).get("labels") or {}).items()}
    name = str(_meta(node).get("name") or "")
    return all(label_requirement_matches(r, labels) for r in expressions) and all(field_requirement_matches(r, name) for r in fields)


def node_selector_admits(selector: Obj | None, node: Obj) -> bool:
    """node_selector_admits() is a NodeSelector against a node: some term matches. None (no selector) admits every node."""
    if selector is None:
        return True
    return any(term_matches(term, node) for term in selector.get("nodeSelectorTerms") or [] if isinstance(term, Mapping))


def volume_admits(volume: Obj, node: Obj) -> bool:
    """volume_admits() is True when the PersistentVolume's required node affinity admits the node (no affinity admits all).

    Example: a local PV with required term `kubernetes.io/hostname In [n2]`
    admits the node labelled `kubernetes.io/hostname: n2`, and no other.

    Only the node's labels are read, as kube-scheduler and the kubelet read a
    volume's affinity (CheckNodeAffinity in k8s.io/component-helpers/storage/volume
    builds a node of labels alone): a matchFields term on `metadata.name` meets an
    empty name there, so `metadata.name In [n2]` admits no node at all.
    """
    labels_only = {"metadata": {"labels": dict(_meta(node).get("labels") or {})}}
    return node_selector_admits(required_node_selector(volume), labels_only)


def _describe_requirement(requirement: Obj) -> str:
    operator, values = str(requirement.get("operator")), _values(requirement)
    return f"{requirement.get('key')} {operator}" + (f" [{', '.join(values)}]" if values or operator in ("In", "NotIn") else "")


def describe_node_selector(selector: Obj | None) -> str:
    """describe_node_selector() is a NodeSelector in one line: terms joined by ' or ', a term's requirements by ' and '.

    Example: 'kubernetes.io/hostname In [n2]'; '(zone In [a]) or (metadata.name In [n3])'; 'no terms (matches no node)'.
    """
    if selector is None:
        return "none (any node)"
    terms = [t for t in selector.get("nodeSelectorTerms") or [] if isinstance(t, Mapping)]
    described = [
        " and ".join(_describe_requirement(r) for r in _requirements(t, "matchExpressions") + _requirements(t, "matchFields")) or "an empty term"
        for t in terms
    ]
    if not described:
        return "no terms (matches no node)"
    return described[0] if len(described) == 1 else " or ".join(f"({d})" for d in described)


def describe_node_for(selector: Obj | None, node: Obj) -> str:
    """describe_node_for() is what the node shows of the keys the selector reads: 'kubernetes.io/hostname=n1', 'no label zone'.

    Example: for 'kubernetes.io/hostname In [n2]' and node n1: 'node n1 has kubernetes.io/hostname=n1'.
    """
    name = str(_meta(node).get("name") or "")
    labels = _meta(node).get("labels") or {}
    keys: list[str] = []
    for term in (selector or {}).get("nodeSelectorTerms") or []:
        if not isinstance(term, Mapping):
            continue
        keys += [str(r.get("key")) for r in _requirements(term, "matchExpressions") + _requirements(term, "matchFields")]
    shown = []
    for key in dict.fromkeys(keys):
        if key == NODE_NAME_FIELD:
            shown.append(f"{NODE_NAME_FIELD}={name}")
        elif key in labels:
            shown.append(f"{key}={labels[key]}")
        else:
            shown.append(f"no label {key}")
    return f"node {name} has " + (", ".join(shown) if shown else "nothing the affinity reads")


def workspace_claim_names(pipeline_run: Obj, workspaces: Iterable[str]) -> dict[str, str]:
    """workspace_claim_names() is, for each of these PipelineRun workspaces bound to a `persistentVolumeClaim`, its claim name.

    Example: spec.workspaces [{name: source, persistentVolumeClaim: {claimName: src}}, {name: cache, volumeClaimTemplate: {...}}]
    and workspaces ['source', 'cache'] give {'source': 'src'}: a template's claim
    is Tekton's to name, and the pods that mount it name it.
    """
    wanted = set(workspaces)
    found: dict[str, str] = {}
    for binding in (pipeline_run.get("spec") or {}).get("workspaces") or []:
        if not isinstance(binding, Mapping) or binding.get("name") not in wanted:
            continue
        claim = (binding.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            found[str(binding["name"])] = str(claim)
    return found
