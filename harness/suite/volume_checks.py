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
from harness.monitor.volume_topology import SELECTED_NODE_ANNOTATION as SELECTED_NODE
from harness.monitor.volume_topology import describe_node_selector, pod_claim_names, required_node_selector, selected_node, volume_admits
from harness.suite.checks import wait_checked
from harness.suite.run import ScenarioRun
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]



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
    names = pod_claim_names(pod, ephemeral=False)
    assert names, f"pod {pod['metadata']['name']} mounts no PVC: the fixture's workspace should be volume-backed"
    found = []
    for name in names:
        claim = _read_claim(run, name)
        phase = (claim.get("status") or {}).get("phase")
        volume_name = (claim.get("spec") or {}).get("volumeName")
        selected = selected_node(claim)
        assert phase == "Bound" and volume_name, (
            f"pod {pod['metadata']['name']} was bound to {node_name} while its claim {name} is {phase or 'without a phase'} "
            f"({SELECTED_NODE}: {selected or 'not set'}): a pod is bound only once each of its claims is Bound; "
            "a WaitForFirstConsumer claim is provisioned once the scheduler annotates it with the chosen node"
        )
        volume = decoded(run.kube.core.read_persistent_volume(volume_name, _preload_content=False))
        assert volume_admits(volume, node), (
            f"pod {pod['metadata']['name']} is on {node_name}, but its claim {name} is Bound to PV {volume_name}, "
            f"whose node affinity ({describe_node_selector(required_node_selector(volume))}) excludes that node: "
            "the kubelet can never mount it there"
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
    selected = selected_node(claim)
    assert selected == node, (
        f"claim {claim['metadata']['name']} of pod {pod['metadata']['name']} (on {node}) has {SELECTED_NODE}: {selected or 'not set'}; "
        "its class waits for the first consumer, so the scheduler must name the node it chose"
    )
    assert required_node_selector(volume) is not None, (
        f"PV {volume['metadata']['name']} of claim {claim['metadata']['name']} has no node affinity: it was not made by a node-local provisioner"
    )
    return claim, volume


def claim_of_pod_must_be_selected_for(run: ScenarioRun, pod_name: str, node: str) -> str:
    """claim_of_pod_must_be_selected_for() waits (`pod_scheduled`) for the pod's one claim to carry `volume.kubernetes.io/selected-node: <node>`.

    It returns the claim's name. It is how a scenario sees which node a
    scheduler chose for a pod whose claim is still to be provisioned, before the pod is bound.
    """

    def selected() -> str:
        pod = run.pod(pod_name)
        names = pod_claim_names(pod, ephemeral=False)
        if len(names) != 1:
            raise HarnessError(f"pod {pod_name} mounts {len(names)} claims; the fixture gives it one")
        claim = _read_claim(run, names[0])
        chosen = selected_node(claim)
        if chosen != node:
            raise NotYet(f"claim {names[0]} is {(claim.get('status') or {}).get('phase')} with {SELECTED_NODE}: {chosen or 'not set'}")
        return names[0]

    return wait_checked(run, selected, what=f"the claim of {pod_name} to be selected for {node}", timeout="pod_scheduled", timeouts=run.timeouts)


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
            # A ValidatingAdmissionPolicy refuses with 422 (reason Invalid) unless it names another reason.
            if err.status in (403, 422):
                return
            raise
        raise NotYet(f"a dry-run helper pod on {node} in {namespace} was admitted")

    wait_for(refused, what=f"pods on {node} in {namespace} to be refused", timeout="fault_active", timeouts=run.timeouts)
