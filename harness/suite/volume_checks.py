"""Volume checks: the `*_must_*` helpers of the Volumes scenarios, over claims, volumes and nodes as the API holds them.

A pod's claims are its `persistentVolumeClaim` volumes (Tekton mounts a
workspace bound to a PVC or a volumeClaimTemplate that way). Under the
contract (docs/contract.md, volumes) a pod is bound only once each of its
claims is Bound to a volume that admits the pod's node, so these checks read
the claims *after* the pod is bound and wait for nothing: whatever they find
was there when the scheduler bound the pod, or never will be.
"""

from __future__ import annotations

from typing import Any

import kubernetes

from harness.errors import HarnessError
from harness.kube import decoded
from harness.suite.run import ScenarioRun
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]

#: The annotation a scheduler sets on a WaitForFirstConsumer claim: provision it on this node.
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def claim_names_of(pod: Obj) -> list[str]:
    """claim_names_of(pod) is the claims the pod mounts: `spec.volumes[].persistentVolumeClaim.claimName`, in order."""
    volumes = (pod.get("spec") or {}).get("volumes") or []
    return [v["persistentVolumeClaim"]["claimName"] for v in volumes if (v.get("persistentVolumeClaim") or {}).get("claimName")]


def _term_admits(term: Obj, labels: dict[str, str], name: str) -> bool:
    """_term_admits() is one NodeSelectorTerm: every matchExpression and matchField holds for the node."""
    for expression in term.get("matchExpressions") or []:
        if not _requirement_holds(expression, labels.get(expression["key"])):
            return False
    for field in term.get("matchFields") or []:
        if not _requirement_holds(field, name if field.get("key") == "metadata.name" else None):
            return False
    return True


def _requirement_holds(requirement: Obj, value: str | None) -> bool:
    operator, values = requirement.get("operator"), requirement.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt") and value is not None and values:
        try:
            return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
        except ValueError:
            return False
    return False


def volume_admits(volume: Obj, node: Obj) -> bool:
    """volume_admits(pv, node): the PV's `spec.nodeAffinity.required` admits the node (terms ORed); no affinity admits every node.

    Example: a PV with `kubernetes.io/hostname In [pool-x-1]` admits pool-x-1 and no other node.
    """
    required = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if not required:
        return True
    labels = (node.get("metadata") or {}).get("labels") or {}
    name = (node.get("metadata") or {}).get("name") or ""
    return any(_term_admits(term, labels, name) for term in required.get("nodeSelectorTerms") or [])


def _read_claim(run: ScenarioRun, name: str) -> Obj:
    try:
        return decoded(run.kube.core.read_namespaced_persistent_volume_claim(name, run.namespace, _preload_content=False))
    except kubernetes.client.ApiException as err:
        raise AssertionError(f"PVC {run.namespace}/{name} cannot be read ({err.status} {err.reason}): Tekton made it for the run") from err


def claims_must_be_bound_on(run: ScenarioRun, pod: Obj) -> list[tuple[Obj, Obj]]:
    """claims_must_be_bound_on() asserts each claim of the bound `pod` is Bound to a volume that admits the pod's node.

    It returns (claim, volume) pairs. It waits for nothing: the pod is bound, so
    its claims had to be Bound first (docs/contract.md, volumes).
    """
    node_name = (pod.get("spec") or {}).get("nodeName")
    if not node_name:
        raise HarnessError(f"claims_must_be_bound_on() needs a bound pod; {pod['metadata']['name']} has no node")
    node = decoded(run.kube.core.read_node(node_name, _preload_content=False))
    names = claim_names_of(pod)
    assert names, f"pod {pod['metadata']['name']} mounts no PVC: the fixture's workspace should be volume-backed"
    found = []
    for name in names:
        claim = _read_claim(run, name)
        phase = (claim.get("status") or {}).get("phase")
        volume_name = (claim.get("spec") or {}).get("volumeName")
        selected = ((claim.get("metadata") or {}).get("annotations") or {}).get(SELECTED_NODE)
        assert phase == "Bound" and volume_name, (
            f"pod {pod['metadata']['name']} was bound to {node_name} while its claim {name} is {phase or 'without a phase'} "
            f"({SELECTED_NODE}: {selected or 'not set'}): a pod is bound only once each of its claims is Bound; "
            "a WaitForFirstConsumer claim is provisioned once the scheduler annotates it with the chosen node"
        )
        volume = decoded(run.kube.core.read_persistent_volume(volume_name, _preload_content=False))
        affinity = ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required")
        assert volume_admits(volume, node), (
            f"pod {pod['metadata']['name']} is on {node_name}, but its claim {name} is Bound to PV {volume_name}, "
            f"whose node affinity {affinity} excludes that node: the kubelet can never mount it there"
        )
        found.append((claim, volume))
    return found


def claim_must_be_provisioned_for(run: ScenarioRun, pod: Obj) -> tuple[Obj, Obj]:
    """claim_must_be_provisioned_for() asserts the pod's one claim was provisioned on its node: selected there, Bound, its PV pinned there.

    For a claim of the default class (WaitForFirstConsumer): the scheduler chose
    the node (`volume.kubernetes.io/selected-node`) and the provisioner made a
    volume whose node affinity admits it.
    """
    pairs = claims_must_be_bound_on(run, pod)
    assert len(pairs) == 1, f"pod {pod['metadata']['name']} mounts {len(pairs)} claims; the fixture gives it one"
    claim, volume = pairs[0]
    node = pod["spec"]["nodeName"]
    selected = ((claim.get("metadata") or {}).get("annotations") or {}).get(SELECTED_NODE)
    assert selected == node, (
        f"claim {claim['metadata']['name']} of pod {pod['metadata']['name']} (on {node}) has {SELECTED_NODE}: {selected or 'not set'}; "
        "its class waits for the first consumer, so the scheduler must name the node it chose"
    )
    assert ((volume.get("spec") or {}).get("nodeAffinity") or {}).get("required"), (
        f"PV {volume['metadata']['name']} of claim {claim['metadata']['name']} has no node affinity: it was not made by a node-local provisioner"
    )
    return claim, volume


def claim_of_pod_must_be_selected_for(run: ScenarioRun, pod_name: str, node: str) -> str:
    """claim_of_pod_must_be_selected_for() waits (`pod_scheduled`) for the pod's one claim to carry `volume.kubernetes.io/selected-node: <node>`.

    It returns the claim's name. It is how a scenario sees which node a
    scheduler chose for a pod whose claim is still to be provisioned, before the pod is bound.
    """

    def selected() -> str:
        run.assert_contract()
        pod = run.pod(pod_name)
        names = claim_names_of(pod)
        if len(names) != 1:
            raise HarnessError(f"pod {pod_name} mounts {len(names)} claims; the fixture gives it one")
        claim = _read_claim(run, names[0])
        chosen = ((claim.get("metadata") or {}).get("annotations") or {}).get(SELECTED_NODE)
        if chosen != node:
            raise NotYet(f"claim {names[0]} is {(claim.get('status') or {}).get('phase')} with {SELECTED_NODE}: {chosen or 'not set'}")
        return names[0]

    return wait_for(selected, what=f"the claim of {pod_name} to be selected for {node}", timeout="pod_scheduled", timeouts=run.timeouts)


def helper_pods_must_be_refused_on(run: ScenarioRun, node: str, namespace: str) -> None:
    """helper_pods_must_be_refused_on() waits (`fault_active`) until a pod on `node` in the provisioner's namespace is refused (a dry run).

    The refusal is the scenario's fault: no volume can be made on that node.
    """

    def refused() -> None:
        probe: Any = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": run.named("helper-probe"), "namespace": namespace},
            "spec": {"nodeName": node, "containers": [{"name": "helper-pod", "image": "busybox:1.37"}]},
        }
        try:
            run.kube.core.create_namespaced_pod(namespace, probe, dry_run="All")
        except kubernetes.client.ApiException as err:
            if err.status == 403:
                return
            raise
        raise NotYet(f"a dry-run helper pod on {node} in {namespace} was admitted")

    wait_for(refused, what=f"pods on {node} in {namespace} to be refused", timeout="fault_active", timeouts=run.timeouts)
