"""PVC-backed workspaces: claims of the cluster's default class, and volumes any node can attach.

A scenario's claims are, by default, what a user applies: a claim with no
storageClassName, served by the cluster's default class (on kind and the local
cluster, the local-path provisioner with WaitForFirstConsumer, so the volume
is made on, and stays on, the node of the first pod that mounts it):
`make_default_class_pvc`. What follows is the other kind, for scenarios whose
group must be free to move (a network volume) and for clusters with no
default class.

A volume any node can attach is a hostPath PV pre-bound to its claim, with no
node affinity (an NFS share or a cloud file store looks the same to a
scheduler). Each claim gets its own PersistentVolume made for it: `claimRef` names the claim and the claim's `volumeName` names the
volume, so the PV controller binds them on its first pass, whatever the
storage class. That pass must find the volume in the controller's cache: a
claim it syncs first stays Pending until the claim's periodic resync
(`--pvclaimbinder-sync-period`, 15 s by default; in the soak at eb6d12e, 8 of
930 claims took 6.6-14.8 s). So the claim is created only once the controller
has moved its volume from `Pending` to `Available`. The class `rescon-static`
exists only as a name: no StorageClass object is needed for pre-bound volumes,
and no provisioner reacts to it.

A `volumeClaimTemplate` workspace is a claim Tekton makes per run, under a
name of its own (`pvc-<hash>`), so no volume can name it in advance. For those
the scenario's namespace gets spare volumes of a storage class of its own,
`template_storage_class(namespace)`, which the fixture's template names: the PV
controller binds each new claim of that class to a spare one (a class with no
StorageClass object binds at once), and no claim of another scenario can take
them, as it would from a shared class.

PersistentVolumes are cluster-scoped and outlive their namespace, so each
carries the label `rescon.dev/test-namespace=<namespace>`, and cleanup deletes
by that label. On kind the hostPath lives on whichever node runs the pod;
a scheduler that keeps a workspace's tasks together sees one directory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes

from harness.kube import Kube, present
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig
from harness.waits import NotYet, wait_for

STORAGE_CLASS = "rescon-static"
TEST_NAMESPACE_LABEL = "rescon.dev/test-namespace"
#: The node label a node-local volume's affinity names, as the local-path provisioner and local PVs do.
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: Where hostPath volumes live on a node; only kind's nodes ever create the directories.
HOST_PATH_ROOT = "/tmp/rescon-volumes"


def volume_name(namespace: str, claim: str) -> str:
    """volume_name('it-a1', 'source') == 'it-a1-source': unique cluster-wide, as namespaces are."""
    return f"{namespace}-{claim}"


def template_storage_class(namespace: str) -> str:
    """template_storage_class('conf-colocation-1a2b3c') == 'rescon-template-conf-colocation-1a2b3c': the class a fixture's volumeClaimTemplate names."""
    return f"rescon-template-{namespace}"


def _volume(
    namespace: str, name: str, size: str, *, storage_class: str, directory: str, admits: tuple[str, tuple[str, ...]] | None = None
) -> dict[str, Any]:
    volume: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {TEST_NAMESPACE_LABEL: namespace}},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            # Retain: no recycler or deleter runs for hostPath; cleanup deletes the PV by label.
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": storage_class,
            "hostPath": {"path": f"{HOST_PATH_ROOT}/{namespace}/{directory}", "type": "DirectoryOrCreate"},
        },
    }
    if admits is not None:
        # A node-local volume, as the local-path provisioner makes them and as local PVs are: the
        # kubelet mounts it only on a node the affinity admits.
        key, values = admits
        volume["spec"]["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]}
        }
    return volume


def spare_volume_manifest(namespace: str, index: int, size: str = "1Gi") -> dict[str, Any]:
    """spare_volume_manifest('ns', 0) is an unclaimed PV of the namespace's template class, for a claim Tekton makes."""
    return _volume(namespace, f"{namespace}-template-{index}", size, storage_class=template_storage_class(namespace), directory=f"template-{index}")


def make_spare_volumes(kube: Kube, namespace: str, count: int, size: str = "1Gi", *, timeouts: TimeoutConfig = DEFAULT_TIMEOUTS) -> str:
    """make_spare_volumes(kube, 'ns', 2) makes two spare PVs for volumeClaimTemplate claims; returns their storage class.

    It returns once the PV controller has seen them, so a claim Tekton makes at once binds at once.
    """
    names = []
    for index in range(count):
        manifest = spare_volume_manifest(namespace, index, size)
        kube.core.create_persistent_volume(kubernetes.client.V1PersistentVolume.model_validate(manifest))
        names.append(manifest["metadata"]["name"])
    for name in names:
        wait_volume_seen(kube, name, timeouts=timeouts)
    return template_storage_class(namespace)


def wait_volume_seen(kube: Kube, name: str, *, timeouts: TimeoutConfig = DEFAULT_TIMEOUTS) -> None:
    """wait_volume_seen() returns once the PV controller has synced PV `name`: it leaves the API server's `Pending`."""
    _wait_for_phase(
        lambda: present(kube.core.read_persistent_volume(name).status).phase,
        reached=lambda phase: phase not in (None, "Pending"),
        subject=f"PV {name}",
        what=f"PV {name} to be seen by the PV controller (Available)",
        timeouts=timeouts,
    )


def _wait_for_phase(
    read_phase: Callable[[], str | None], *, reached: Callable[[str | None], bool], subject: str, what: str, timeouts: TimeoutConfig
) -> None:
    """_wait_for_phase() waits (`volume_bound`) until the phase read_phase() gives is reached; the PV controller moves both PVs and PVCs."""

    def check() -> None:
        phase = read_phase()
        if not reached(phase):
            raise NotYet(f"{subject} is {phase or 'without a phase'}")

    wait_for(check, what=what, timeout="volume_bound", timeouts=timeouts, hint="is kube-controller-manager (its PV controller) running?")


def volume_manifests(
    namespace: str, claim: str, size: str, *, admits: tuple[str, tuple[str, ...]] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """volume_manifests() are a PersistentVolume and a PersistentVolumeClaim that name each other.

    With admits=('kubernetes.io/hostname', ('pool-x-1',)) the volume is node-local:
    its `nodeAffinity` admits only the nodes whose label has one of the values.
    """
    volume = volume_name(namespace, claim)
    pv = _volume(namespace, volume, size, storage_class=STORAGE_CLASS, directory=claim, admits=admits)
    pv["spec"]["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim}
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": STORAGE_CLASS,
            "volumeName": volume,
            "resources": {"requests": {"storage": size}},
        },
    }
    return pv, pvc


def make_bound_pvc(
    kube: Kube,
    namespace: str,
    name: str,
    size: str = "1Gi",
    *,
    admits: tuple[str, tuple[str, ...]] | None = None,
    timeouts: TimeoutConfig = DEFAULT_TIMEOUTS,
) -> str:
    """make_bound_pvc(kube, 'it-a1', 'source') returns 'source' once the claim is Bound.

    Use the returned name as a workspace's `persistentVolumeClaim.claimName`.
    `admits` pins the volume to some nodes (volume_manifests()).
    """
    pv, pvc = volume_manifests(namespace, name, size, admits=admits)
    kube.core.create_persistent_volume(kubernetes.client.V1PersistentVolume.model_validate(pv))
    # A claim synced before its volume is in the controller's cache waits for the resync (module docstring).
    wait_volume_seen(kube, pv["metadata"]["name"], timeouts=timeouts)
    kube.core.create_namespaced_persistent_volume_claim(namespace, kubernetes.client.V1PersistentVolumeClaim.model_validate(pvc))
    _wait_for_phase(
        lambda: present(kube.core.read_namespaced_persistent_volume_claim(name, namespace).status).phase,
        reached=lambda phase: phase == "Bound",
        subject=f"PVC {namespace}/{name}",
        what=f"PVC {namespace}/{name} to bind to PV {pv['metadata']['name']}",
        timeouts=timeouts,
    )
    return name


def claim_manifest(namespace: str, name: str, size: str = "1Gi") -> dict[str, Any]:
    """claim_manifest('ns', 'source') is a claim as users write one: no storageClassName, so the cluster's default class serves it."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}},
    }


def make_default_class_pvc(kube: Kube, namespace: str, name: str, size: str = "1Gi") -> str:
    """make_default_class_pvc(kube, 'it-a1', 'source') creates the claim and returns 'source' at once.

    With kind's default class (WaitForFirstConsumer) it stays Pending until a
    scheduler picks a node for the first pod that mounts it and the provisioner
    makes its volume there: from then on, the volume lives on that node.
    """
    manifest = claim_manifest(namespace, name, size)
    kube.core.create_namespaced_persistent_volume_claim(namespace, kubernetes.client.V1PersistentVolumeClaim.model_validate(manifest))
    return name


#: The annotation the PV controller and external provisioners put on a volume they provisioned.
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def provisioned_volumes_of(volumes: list[Any], namespace: str) -> list[str]:
    """provisioned_volumes_of() names the provisioned PVs (V1PersistentVolume) whose claim was in `namespace`."""
    found = []
    for volume in volumes:
        meta = present(volume.metadata)
        claim = volume.spec.claim_ref if volume.spec is not None else None
        if PROVISIONED_BY in (meta.annotations or {}) and claim is not None and claim.namespace == namespace:
            found.append(f"{meta.name} ({present(volume.status).phase})")
    return found


def delete_claims(kube: Kube, namespace: str) -> None:
    """delete_claims() deletes every claim of `namespace` now, so a provisioner can delete their volumes; idempotent.

    Call it once the namespace's pods are gone. The namespace controller deletes
    pods first and everything else only when it comes back to the namespace
    (about 5 s later on v1.37), and a claim's volume is deleted only after its claim.
    """
    try:
        kube.core.delete_collection_namespaced_persistent_volume_claim(namespace)
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise


def wait_provisioned_volumes_gone(kube: Kube, namespace: str, *, timeouts: TimeoutConfig = DEFAULT_TIMEOUTS) -> None:
    """wait_provisioned_volumes_gone() returns once no provisioned PV of a claim of `namespace` is left.

    Call it after the namespace's pods are gone and before its nodes go: the
    local-path provisioner deletes a volume (reclaim policy Delete) with a
    helper pod on the volume's node, which never runs once the node is gone.
    """

    def gone() -> None:
        left = provisioned_volumes_of(kube.core.list_persistent_volume().items, namespace)
        if left:
            raise NotYet(f"{len(left)} provisioned volume(s) of namespace {namespace} left: {', '.join(left[:5])}")

    wait_for(gone, what=f"the provisioned volumes of namespace {namespace} to be deleted", timeout="volume_bound", timeouts=timeouts,
             hint="is the local-path provisioner running (rescon cluster status)?")


def delete_test_volumes(kube: Kube, namespace: str) -> None:
    """delete_test_volumes() deletes the PersistentVolumes made for `namespace`'s claims; idempotent."""
    kube.core.delete_collection_persistent_volume(label_selector=f"{TEST_NAMESPACE_LABEL}={namespace}")


def volumes_of_namespace(kube: Kube, namespace: str) -> list[str]:
    """volumes_of_namespace() is the PersistentVolumes still labelled for `namespace`."""
    volumes = kube.core.list_persistent_volume(label_selector=f"{TEST_NAMESPACE_LABEL}={namespace}").items
    return sorted(present(present(v.metadata).name) for v in volumes)

