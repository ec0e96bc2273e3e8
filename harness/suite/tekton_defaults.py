"""Tekton's config-defaults, set for one scenario the way operators set them, and put back afterwards.

Operators route task pods to a second scheduler with config-defaults'
`default-pod-template` and give containers resources cluster-wide with
`default-container-resource-requirements`; runs then name neither. Tekton
reads the ConfigMap through an informer, so a run created right after a change
may still be built the old way: `config_defaults_set` waits until a probe
TaskRun's pod shows the change before the scenario goes on, and again, after
putting the old values back, until pods are built the old way. The ConfigMap is
the whole cluster's: a scenario that sets it declares `exclusive=True`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from harness import runs
from harness.cluster import tekton
from harness.cluster.simulation import sim_task_spec
from harness.kube import Kube, decoded
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

CONFIG_DEFAULTS = "config-defaults"
#: A nodeSelector no node has: the probe pods stay Pending, use no room and are judged by nobody.
NOWHERE = {"rescon.dev/pool": "rescon-config-defaults-probe"}

Obj = dict[str, Any]


def probe_task_run(name_prefix: str) -> Obj:
    """probe_task_run('tekton-config-defaults-probe') is a TaskRun of one bare step (no requests), its pod bound nowhere: what config-defaults shapes.

    Named after the scenario (harness.suite.scenario.OWN_NAMED_KINDS), like everything it creates.
    """
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "TaskRun",
        "metadata": {"generateName": f"{name_prefix}-"},
        "spec": {"taskSpec": sim_task_spec(cpu=None, hold=True, workspaces=()), "podTemplate": {"nodeSelector": NOWHERE}},
    }


def _built_pod(kube: Kube, namespace: str, name_prefix: str, shows: Callable[[Obj], bool], what: str, timeouts: TimeoutConfig) -> Obj:
    created: list[str] = []

    def poll() -> Obj:
        if not created:
            created.append(runs.create(kube, namespace, probe_task_run(name_prefix)))
        task_run = runs.get(kube, namespace, "TaskRun", created[0])
        pod_name = (task_run.get("status") or {}).get("podName")
        if not pod_name:
            raise NotYet(f"TaskRun {created[0]} has no pod yet ({runs.describe(task_run)})")
        pod = decoded(kube.core.read_namespaced_pod(pod_name, namespace, _preload_content=False))
        # Deleted either way: a probe's pod is of no further use, and it asks for the scheduler under test.
        kube.custom.delete_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "taskruns", created.pop())
        if not shows(pod):
            raise NotYet(f"Tekton still builds pods without {what}")
        return pod

    return wait_for(poll, what=f"Tekton to build pods with {what}", timeout="tekton_ready", timeouts=timeouts,
                    hint=f"kubectl -n {tekton.NAMESPACE} get configmap {CONFIG_DEFAULTS} -o yaml")


@contextlib.contextmanager
def config_defaults_set(
    kube: Kube, namespace: str, values: Mapping[str, str], *, probe_prefix: str, shows: Callable[[Obj], bool], timeouts: TimeoutConfig
) -> Iterator[None]:
    """config_defaults_set() sets `values` in config-defaults until the block ends, then puts the old ones back.

    `shows(pod)` tells a probe pod built with the new values (namespace `namespace`
    holds the probes, TaskRuns named `<probe_prefix>-...`). Example: values {'default-pod-template': 'schedulerName: s'}
    with shows=lambda pod: pod['spec'].get('schedulerName') == 's'.
    """
    before = dict(kube.core.read_namespaced_config_map(CONFIG_DEFAULTS, tekton.NAMESPACE).data or {})
    kube.core.patch_namespaced_config_map(CONFIG_DEFAULTS, tekton.NAMESPACE, {"data": dict(values)})
    try:
        _built_pod(kube, namespace, probe_prefix, shows, f"{CONFIG_DEFAULTS} {', '.join(values)}", timeouts)
        yield
    finally:
        # A key that was absent is removed again (a null in a merge patch).
        kube.core.patch_namespaced_config_map(CONFIG_DEFAULTS, tekton.NAMESPACE, {"data": {key: before.get(key) for key in values}})
        _built_pod(kube, namespace, probe_prefix, lambda pod: not shows(pod), f"{CONFIG_DEFAULTS} as before", timeouts)
