"""Plain pods for the integration tests: made for a scheduler and a node pool, read raw, awaited bound."""

from __future__ import annotations

import json
from typing import Any, Callable

from harness.cluster.node_pools import NodePool
from harness.kube import Kube
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]


def plain_pod(name: str, pool: NodePool, cpu: str, *, scheduler_name: str, **labels: str) -> Obj:
    """plain_pod('p', pool, '500m', scheduler_name='tkn-scheduler-it') asks that scheduler for a node of the pool."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "schedulerName": scheduler_name,
            "nodeSelector": pool.selector,
            "containers": [{"name": "c", "image": "rescon.invalid/c", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def raw_pod(kube: Kube, namespace: str, name: str) -> Obj:
    data: Obj = json.loads(kube.core.read_namespaced_pod(name, namespace, _preload_content=False).data)
    return data


def wait_bound(kube: Kube, namespace: str, name: str, timeouts: TimeoutConfig, *, check_alive: Callable[[], None]) -> str:
    """wait_bound() is the node the pod is bound to; check_alive() fails at once if the scheduler died."""

    def poll() -> str:
        check_alive()
        node = (raw_pod(kube, namespace, name).get("spec") or {}).get("nodeName")
        if not node:
            raise NotYet(f"{name} is not bound")
        return str(node)

    return wait_for(poll, what=f"{name} to be bound", timeout="pod_scheduled", timeouts=timeouts)


def task_pod_name(kube: Kube, namespace: str, run: str, task: str, timeouts: TimeoutConfig) -> str:
    """task_pod_name() waits for Tekton to create the pod of one task of a PipelineRun and returns its name."""

    def poll() -> str:
        pods = kube.core.list_namespaced_pod(namespace, label_selector=f"tekton.dev/pipelineRun={run},tekton.dev/pipelineTask={task}")
        if not pods.items:
            raise NotYet(f"no pod for {run}/{task} yet")
        return str(pods.items[0].metadata.name)

    return wait_for(poll, what=f"the pod of {run}/{task}", timeout="pod_created", timeouts=timeouts)
