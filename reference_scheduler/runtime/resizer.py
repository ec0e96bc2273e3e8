"""Resizer: gives back a lingering pod's requests once its TaskRun is terminal (flag --enable-resize).

It reads pods and TaskRuns from the caches and patches the `pods/resize`
subresource; what to lower is decided by core.resize. A failed patch is logged
and retried on the next pass: resizing is an optimisation, never a reason to
stop scheduling.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import kubernetes
from kubernetes.client import ApiClient

from reference_scheduler.core.release import succeeded_condition
from reference_scheduler.core.resize import resize_patch
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.informer import Informer
from reference_scheduler.runtime.kube_api import KubeApi

log = logging.getLogger("tkn-scheduler.resizer")

Obj = dict[str, Any]
TASK_RUN_LABEL = "tekton.dev/taskRun"

#: How often every running pod of ours is looked at.
PASS_SECONDS = 2.0


def task_run_terminal(task_run: Obj | None) -> bool:
    condition = succeeded_condition(task_run) if task_run else None
    return condition is not None and condition.get("status") in ("True", "False")


class Resizer:
    """Resizer lowers the requests of Running pods whose TaskRun is done."""

    def __init__(self, api: ApiClient, *, scheduler_name: str, pods: Informer, task_runs: Informer, floor: Resources) -> None:
        self._core = KubeApi(api)
        self._scheduler_name = scheduler_name
        self._pods = pods
        self._task_runs = task_runs
        self._floor = floor
        self._wake = threading.Event()

    def nudge(self) -> None:
        self._wake.set()

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self._wake.wait(PASS_SECONDS)
            self._wake.clear()
            for pod in self._pods.list(self._lingering):
                try:
                    self._resize(pod)
                except Exception:  # noqa: BLE001 - one pod's resize must not stop the others'
                    log.exception("resizing %s/%s failed", pod["metadata"].get("namespace"), pod["metadata"].get("name"))

    def _lingering(self, pod: Obj) -> bool:
        spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
        if spec.get("schedulerName") != self._scheduler_name or not spec.get("nodeName"):
            return False
        if (pod.get("status") or {}).get("phase") != "Running" or meta.get("deletionTimestamp"):
            return False
        task_run = (meta.get("labels") or {}).get(TASK_RUN_LABEL)
        if not task_run:
            return False
        return task_run_terminal(self._task_runs.get(meta.get("namespace") or "", task_run))

    def _resize(self, pod: Obj) -> None:
        patch = resize_patch(pod, self._floor)
        if patch is None:
            return
        meta = pod["metadata"]
        try:
            self._core.patch_namespaced_pod_resize(meta["name"], meta["namespace"], patch, _preload_content=False)
        except kubernetes.client.ApiException as err:
            log.warning("cannot resize %s/%s: %s %s", meta["namespace"], meta["name"], err.status, _message(err))
            return
        log.info("resized %s/%s to the floor %s", meta["namespace"], meta["name"], self._floor.to_quantities())


def _message(err: kubernetes.client.ApiException) -> str:
    import json

    try:
        return str(json.loads(err.body or "{}").get("message") or err.reason)
    except ValueError:
        return str(err.reason)
