"""Default storage as kind ships it: the local-path provisioner behind the default StorageClass `standard`.

kind's node image installs rancher's local-path provisioner and makes its class
the default, with `volumeBindingMode: WaitForFirstConsumer`: a claim is
provisioned only once a scheduler has chosen a node for the first pod that
mounts it and annotated the claim with `volume.kubernetes.io/selected-node`.
The provisioner then runs a *helper pod* on that node (`spec.nodeName` set, no
scheduler involved) to make the directory, waits for it to succeed, and creates
a PersistentVolume whose node affinity pins it to that node
(`kubernetes.io/hostname In [<node>]`). The big clouds' default classes behave
the same way (zonal affinity instead of a node).

The local cluster does the same with the real provisioner, built from its
pinned Go module (tools/local-path-provisioner) and run as a process beside
Tekton's controller, out of cluster, with the configuration kind gives it
(sigs.k8s.io/kind v0.33.0, pkg/build/nodeimage/const_storage.go): the config
files it reads from a mounted ConfigMap on kind are written into the cluster's
work directory instead. On KWOK nodes the helper pod is played like any pod
(harness.cluster.simulation): Running, then Succeeded at once. The
provisioner looks at its helper pod once a second, so a helper that took the
simulator's default second would cost two of them.

Scenarios that need a volume on a node they choose still make pre-bound PVs
(harness.cluster.volumes); every other claim of the default class goes through
this provisioner, as on a user's cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.kube import Kube
    from harness.timeouts import TimeoutConfig

#: The provisioner's name, which the StorageClass names (`provisioner:`).
PROVISIONER = "rancher.io/local-path"
#: The default class, as kind names it.
DEFAULT_STORAGE_CLASS = "standard"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
NAMESPACE = "local-path-storage"
SERVICE_ACCOUNT = "local-path-provisioner-service-account"
CONFIG_MAP = "local-path-config"
#: The process name (its pid and log file in the cluster's work directory).
PROCESS = "local-path-provisioner"
#: Where volumes live on a node, as kind configures it.
NODE_PATH = "/var/local-path-provisioner"
#: Never pulled on KWOK; the image kind's helper pods run.
HELPER_IMAGE = "docker.io/kindest/local-path-helper:v20260131-7181c60a"
#: The key under which the provisioner's config lists a path for every node not named.
ANY_NODE = "DEFAULT_PATH_FOR_NON_LISTED_NODES"

#: The local cluster's provisioner serves several scenarios at once (`pytest -n`), a busier cluster than kind's one
#: CI job: its client may make more requests than client-go's default 5 a second (burst 10), with more workers than
#: its 4, each of which sleeps a second between looks at its helper pod. kind runs it with its defaults.
BUSY_CLUSTER_FLAGS = ("--worker-threads", "16", "--kube-client-qps", "50", "--kube-client-burst", "100")

SETUP_SCRIPT = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n'
TEARDOWN_SCRIPT = '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n'


def provisioner_config(nodes: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """provisioner_config() is the provisioner's config.json: every node keeps volumes under NODE_PATH.

    provisioner_config({'pool-a-0': ['/data']}) lists only that node: the
    provisioner then refuses to provision on any other ("config doesn't contain
    node ..."), which is how a cluster restricts local volumes to some nodes.
    """
    listed = nodes if nodes is not None else {ANY_NODE: [NODE_PATH]}
    return {"nodePathMap": [{"node": node, "paths": paths} for node, paths in listed.items()]}


def helper_pod_manifest(image: str = HELPER_IMAGE, *, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """helper_pod_manifest() is the template of the pod the provisioner runs on the chosen node (kind's).

    annotations are for the local cluster's simulator (how long KWOK plays the pod); kind's has none.
    """
    metadata: dict[str, Any] = {"name": "helper-pod"}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "priorityClassName": "system-node-critical",
            "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists", "effect": "NoExecute"}],
            "containers": [{"name": "helper-pod", "image": image, "imagePullPolicy": "IfNotPresent"}],
        },
    }


def config_files(
    nodes: dict[str, list[str]] | None = None, *, helper_image: str = HELPER_IMAGE, helper_annotations: dict[str, str] | None = None
) -> dict[str, str]:
    """config_files() are the ConfigMap's keys and contents: config.json, the setup and teardown scripts, helperPod.yaml."""
    return {
        "config.json": json.dumps(provisioner_config(nodes), indent=2),
        "setup": SETUP_SCRIPT,
        "teardown": TEARDOWN_SCRIPT,
        "helperPod.yaml": json.dumps(helper_pod_manifest(helper_image, annotations=helper_annotations), indent=2),
    }


def storage_class_manifest(*, default: bool = True) -> dict[str, Any]:
    """storage_class_manifest() is kind's `standard` class: WaitForFirstConsumer, deleted with its claim."""
    annotations = {DEFAULT_CLASS_ANNOTATION: "true"} if default else {}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": DEFAULT_STORAGE_CLASS, "annotations": annotations},
        "provisioner": PROVISIONER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Delete",
    }


def cluster_manifests(*, helper_image: str = HELPER_IMAGE) -> list[dict[str, Any]]:
    """cluster_manifests() are what the provisioner needs in the cluster: its namespace, the service account its helper pods run as, the ConfigMap they mount, the class."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIG_MAP, "namespace": NAMESPACE}, "data": config_files(helper_image=helper_image)},
        storage_class_manifest(),
    ]


def in_cluster_manifests(*, provisioner_image: str, helper_image: str) -> list[dict[str, Any]]:
    """in_cluster_manifests() are kind's default storage whole: cluster_manifests() plus the provisioner's RBAC and Deployment.

    A kind node image ships them as /kind/manifests/default-storage.yaml, which
    `kind create cluster` applies (without that file kind falls back on a class of
    the in-tree `kubernetes.io/host-path` provisioner, which provisions nothing).
    The RBAC is kind's: pods in its own namespace; nodes, claims, ConfigMaps,
    pods and their logs read everywhere; volumes written; events; classes read.
    """
    role = "local-path-provisioner-role"
    subject = [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]
    labels = {"app": PROCESS}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": PROCESS, "namespace": NAMESPACE},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [
                        {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "effect": "NoSchedule"},
                    ],
                    "serviceAccountName": SERVICE_ACCOUNT,
                    "containers": [{
                        "name": PROCESS,
                        "image": provisioner_image,
                        "imagePullPolicy": "IfNotPresent",
                        "command": [PROCESS, "--debug", "start", "--helper-image", helper_image, "--config", "/etc/config/config.json"],
                        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/config/"}],
                        "env": [
                            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                            {"name": "CONFIG_MOUNT_PATH", "value": "/etc/config/"},
                        ],
                    }],
                    "volumes": [{"name": "config-volume", "configMap": {"name": CONFIG_MAP}}],
                },
            },
        },
    }
    return [
        *cluster_manifests(helper_image=helper_image),
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": role, "namespace": NAMESPACE},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": role}, "rules": [
            {"apiGroups": [""], "resources": ["nodes", "persistentvolumeclaims", "configmaps", "pods", "pods/log"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"]},
            {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
            {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "list", "watch"]},
        ]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "local-path-provisioner-bind", "namespace": NAMESPACE},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}, "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "local-path-provisioner-bind"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}, "subjects": subject},
        deployment,
    ]


def write_config_dir(
    directory: Path, nodes: dict[str, list[str]] | None = None, *, helper_annotations: dict[str, str] | None = None
) -> Path:
    """write_config_dir() writes the ConfigMap's files where the process reads them (kind mounts them at /etc/config/)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in config_files(nodes, helper_annotations=helper_annotations).items():
        (directory / name).write_text(content)
    return directory


def provisioner_argv(binary: Path, kubeconfig: Path, config_dir: Path) -> list[str]:
    """provisioner_argv() is kind's command line for the provisioner, out of cluster (with a kubeconfig)."""
    return [
        str(binary), "--debug", "start",
        "--kubeconfig", str(kubeconfig),
        "--namespace", NAMESPACE,
        "--service-account-name", SERVICE_ACCOUNT,
        "--configmap-name", CONFIG_MAP,
        "--helper-image", HELPER_IMAGE,
        "--config", str(config_dir / "config.json"),
        *BUSY_CLUSTER_FLAGS,
    ]


def provisioner_env(environ: dict[str, str], config_dir: Path) -> dict[str, str]:
    """provisioner_env() points the provisioner at its config directory, which it re-reads for changes (CONFIG_MOUNT_PATH)."""
    return {**environ, "POD_NAMESPACE": NAMESPACE, "CONFIG_MOUNT_PATH": f"{config_dir}/"}


def default_storage_class_of(kube: Kube) -> tuple[str, str] | None:
    """default_storage_class_of(kube) is the cluster's default StorageClass (the one a claim without a class gets) and its provisioner, or None.

    Example: ('standard', 'rancher.io/local-path') on kind and on the local cluster.
    """
    import kubernetes

    from harness.kube import present

    classes = kubernetes.client.StorageV1Api(kube.api).list_storage_class().items
    defaults = sorted(
        (str(present(c.metadata).name), str(c.provisioner))
        for c in classes
        if (present(c.metadata).annotations or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"
    )
    return defaults[0] if defaults else None


def wait_provisioner_ready(kube: Kube, *, timeouts: TimeoutConfig) -> None:
    """wait_provisioner_ready() returns once the in-cluster provisioner (kind's Deployment) has a Ready replica; at once where there is none.

    A claim made before it runs is only provisioned late, after a scheduler's
    bounded wait for it may have run out: a setup step, not a verdict.
    """
    import kubernetes

    from harness.waits import NotYet, wait_for

    apps = kubernetes.client.AppsV1Api(kube.api)
    try:
        apps.read_namespaced_deployment(PROCESS, NAMESPACE)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return
        raise

    def available() -> None:
        status = apps.read_namespaced_deployment(PROCESS, NAMESPACE).status
        if not status or not status.available_replicas:
            raise NotYet(f"deployment {NAMESPACE}/{PROCESS} has no available replica yet")

    wait_for(available, what="the local-path provisioner (the default StorageClass's) to run", timeout="storage_ready", timeouts=timeouts,
             hint=f"kubectl -n {NAMESPACE} describe pods")
