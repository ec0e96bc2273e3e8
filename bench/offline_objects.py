"""Objects as the API server stores them, for the offline backlog (bench/offline_backlog.py): pure functions.

The reference decodes what the API server sends, so the offline driver sends what
it would: the benchmark's own manifests (bench/workload.py, harness's KWOK nodes and
bound claims) with the fields the API server, Tekton and KWOK add to them, including
`managedFields`, which a watch event carries on every object and the reference decodes
with the rest. The shapes follow what the local cluster's objects look like; the
values that no decision reads (times, uids) are made up, deterministically.

Example: ``stored(task_pod(...), namespace="bench", uid="u-1", version=7)`` is the pod
as a watch event would carry it: uid, resourceVersion, creationTimestamp, managedFields,
its spec defaulted (tolerations, the service-account token volume) and status Pending.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping

from harness.cluster.node_pools import node_manifest
from harness.cluster.volumes import STORAGE_CLASS, volume_manifests

Obj = dict[str, Any]

#: A made-up but well-formed time for every stamp: no decision reads them, and a digest must not.
STAMP = "2026-12-05T10:00:00Z"
#: KWOK's node conditions (its NodeConditions template function), as the heartbeat writes them.
NODE_CONDITIONS = (
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
)


def fields_v1(value: Any) -> Obj:
    """fields_v1({'spec': {'containers': [{'name': 'a'}]}}) is managedFields' set of the fields in value, in its own notation.

    Only its size and shape matter here (the reference never reads it, but decodes it):
    {'f:spec': {'f:containers': {'k:{"name":"a"}': {'f:name': {}}}}}.
    """
    if isinstance(value, dict):
        return {f"f:{key}": fields_v1(item) for key, item in value.items()}
    if isinstance(value, list):
        out: Obj = {}
        for item in value:
            if isinstance(item, dict) and "name" in item:
                out[f'k:{{"name":"{item["name"]}"}}'] = fields_v1(item)
            elif isinstance(item, dict):
                out[f"k:{json.dumps(sorted(item)[:2])}"] = fields_v1(item)
            else:
                out[f"v:{json.dumps(item)}"] = {}
        return out
    return {}


def managed_entry(manager: str, content: Obj, *, subresource: str | None = None, api_version: str = "v1") -> Obj:
    """managed_entry('kwok', {'status': ...}, subresource='status') is one managedFields entry of an Update."""
    entry: Obj = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": STAMP,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(content),
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def stored(manifest: Mapping[str, Any], *, namespace: str | None, uid: str, version: int, manager: str = "python") -> Obj:
    """stored(manifest, ...) is the object as created: metadata the API server adds, and its creator's managedFields entry."""
    obj = copy.deepcopy(dict(manifest))
    meta = obj.setdefault("metadata", {})
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(uid=uid, resourceVersion=str(version), creationTimestamp=STAMP)
    content = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "status")}
    meta["managedFields"] = [managed_entry(manager, content, api_version=obj.get("apiVersion", "v1"))]
    return obj


def kwok_node(name: str, *, pool: str, cpu: str, memory: str, pods: int, index: int) -> Obj:
    """kwok_node('bench-n100-0', ...) is the benchmark's node manifest as KWOK's initialize stage leaves it (Ready)."""
    node = node_manifest(name, pool=pool, cpu=cpu, memory=memory, pods=pods, labels={}, taints=())
    node["status"] = node_status(node["status"], name=name, index=index)
    return node


def node_status(status: Mapping[str, Any], *, name: str, index: int, beat: int = 0) -> Obj:
    """node_status(...) is KWOK's _NODE_READY status template filled in; `beat` stands for the heartbeat's time."""
    stamp = f"2026-12-05T10:{beat // 60 % 60:02d}:{beat % 60:02d}Z"
    return {
        "conditions": [
            {"lastHeartbeatTime": stamp, "lastTransitionTime": STAMP, "message": message, "reason": reason, "status": status_, "type": kind}
            for kind, status_, reason, message in NODE_CONDITIONS
        ],
        "addresses": [{"type": "InternalIP", "address": f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "allocatable": dict(status["allocatable"]),
        "capacity": dict(status["capacity"]),
        "nodeInfo": {
            "architecture": "amd64",
            "operatingSystem": "linux",
            "kubeletVersion": "fake",
            "kubeProxyVersion": "fake",
            "containerRuntimeVersion": "kwok",
            "kernelVersion": "kwok",
            "osImage": "kwok",
            "bootID": "",
            "machineID": "",
            "systemUUID": "",
        },
        "phase": "Running",
    }


def with_kwok_status(node: Obj) -> Obj:
    """with_kwok_status(node) adds kwok-controller's managedFields entry for the status it wrote."""
    node["metadata"]["managedFields"].append(managed_entry("kwok", {"status": node["status"]}, subresource="status"))
    return node


def pending_pod(manifest: Mapping[str, Any], *, namespace: str, uid: str, version: int) -> Obj:
    """pending_pod(task_pod(...), ...) is the pod the API server stores: defaulted spec, the token volume, status Pending."""
    pod = stored(manifest, namespace=namespace, uid=uid, version=version)
    spec = pod["spec"]
    token = f"kube-api-access-{uid[-5:]}"
    spec.setdefault("volumes", []).append({
        "name": token,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    })
    for container in spec["containers"]:
        container.setdefault("volumeMounts", []).append({"name": token, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
        container.update(imagePullPolicy="Always", terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File")
    spec.update(
        dnsPolicy="ClusterFirst",
        enableServiceLinks=True,
        preemptionPolicy="PreemptLowerPriority",
        priority=0,
        securityContext={},
        serviceAccount="default",
        serviceAccountName="default",
        tolerations=[
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
    )
    pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    return pod


def bound(pod: Obj, node: str) -> Obj:
    """bound(pod, node) is the pod after its binding: nodeName set, PodScheduled True (the API server's binding subresource)."""
    pod = copy.deepcopy(pod)
    pod["spec"]["nodeName"] = node
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": STAMP}]
    return pod


def running(pod: Obj, *, index: int) -> Obj:
    """running(pod) is the pod after KWOK's rescon-pod-running stage (harness/cluster/simulation.py _POD_RUNNING)."""
    pod = copy.deepcopy(pod)
    status: Obj = {
        "conditions": [{"type": kind, "status": "True", "lastTransitionTime": STAMP} for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": STAMP}},
                "resources": c.get("resources") or {},
            }
            for c in pod["spec"]["containers"]
        ],
        "hostIP": "10.0.0.1",
        "podIP": f"10.244.{index // 256 % 256}.{index % 256}",
        "phase": "Running",
        "qosClass": pod["status"].get("qosClass", "Burstable"),
        "startTime": STAMP,
    }
    pod["status"] = status
    pod["metadata"]["managedFields"].append(managed_entry("kwok", {"status": status}, subresource="status"))
    return pod


def pending_pipeline_run(manifest: Mapping[str, Any], *, namespace: str, uid: str, version: int) -> Obj:
    """pending_pipeline_run(pipeline_run(..., pending=True), ...) is the run as Tekton leaves it: Pending, its plan resolved.

    Tekton marks a pending run Succeeded=Unknown (PipelineRunPending); the benchmark writes
    status.pipelineSpec as Tekton's resolution would (bench/workload.py resolved_status_patch).
    """
    run = stored(manifest, namespace=namespace, uid=uid, version=version, manager="python")
    run["metadata"].setdefault("labels", {})["tekton.dev/pipeline"] = run["metadata"]["name"]
    run["spec"].setdefault("taskRunTemplate", {})["serviceAccountName"] = "default"
    run["status"] = {
        "conditions": [
            {"type": "Succeeded", "status": "Unknown", "reason": "PipelineRunPending", "message": "PipelineRun is pending", "lastTransitionTime": STAMP}
        ],
        "pipelineSpec": copy.deepcopy(run["spec"]["pipelineSpec"]),
    }
    run["metadata"]["managedFields"].append(managed_entry("controller", {"status": run["status"]}, subresource="status", api_version="tekton.dev/v1"))
    return run


def bound_claim(namespace: str, claim: str, *, uid: str, version: int) -> tuple[Obj, Obj]:
    """bound_claim(ns, 'ws-0', ...) is the (PersistentVolume, PersistentVolumeClaim) of harness's make_bound_pvc, both Bound."""
    pv, pvc = volume_manifests(namespace, claim, "1Gi")
    volume = stored(pv, namespace=None, uid=f"{uid}-pv", version=version)
    volume["spec"]["claimRef"].update(uid=uid, resourceVersion=str(version))
    volume["status"] = {"phase": "Bound"}
    claim_obj = stored(pvc, namespace=namespace, uid=uid, version=version)
    claim_obj["spec"]["volumeMode"] = "Filesystem"
    claim_obj["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    return volume, claim_obj


def storage_class() -> Obj:
    """storage_class() is the static class the benchmark's bound claims name."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": STORAGE_CLASS}, "provisioner": "kubernetes.io/no-provisioner",
            "reclaimPolicy": "Retain", "volumeBindingMode": "Immediate"}


def config_map(namespace: str, name: str, data: Mapping[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": dict(data)}


def namespace_object(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
