"""Tekton's ConfigMaps (config-defaults, feature-flags), set for one scenario the way operators set them, and put back afterwards.

Operators route task pods to a second scheduler with config-defaults'
`default-pod-template` and give containers resources cluster-wide with
`default-container-resource-requirements`; runs then name neither. They turn
on Kubernetes' native sidecars for Tekton with feature-flags'
`enable-kubernetes-sidecar`, and allow pipelines in pipelines with
`enable-api-fields: alpha`. Tekton reads its ConfigMaps through informers, so
a run created right after a change may still be built the old way:
`tekton_config_set` waits (`pod_built_with`) until a probe TaskRun's pod shows
the change before the scenario goes on, and again, after putting the old
values back, until pods are built the old way. The ConfigMaps are the whole
cluster's: a scenario declares each key it sets (`Scenario.tekton_settings`) and
runs in the Tekton settings window (harness.suite.workers.Slot).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import kubernetes

from harness import runs
from harness.cluster import tekton
from harness.cluster.simulation import sim_task_spec
from harness.errors import HarnessError
from harness.kube import Kube, decoded
from harness.suite.run import ScenarioRun
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

CONFIG_DEFAULTS = "config-defaults"
FEATURE_FLAGS = "feature-flags"
#: A nodeSelector no node has: the probe pods stay Pending, use no room and are judged by nobody.
NOWHERE = {"rescon.dev/pool": "rescon-config-defaults-probe"}

Obj = dict[str, Any]


def probe_task_run(name_prefix: str, *, sidecar_cpu: str | None = None, annotations: Mapping[str, str] | None = None) -> Obj:
    """probe_task_run('tekton-config-defaults-probe') is a TaskRun of one bare step (no requests), its pod bound nowhere: what config-defaults shapes.

    With sidecar_cpu it has a sidecar too (what enable-kubernetes-sidecar shapes); `annotations` go on the
    TaskRun too (the hermetic execution mode shows enable-api-fields: alpha).

    Named after the scenario (harness.suite.scenario.OWN_NAMED_KINDS), like everything it creates.
    """
    task_spec = sim_task_spec(cpu=None, hold=True, sidecar_cpu=sidecar_cpu, workspaces=())
    # A TaskRun's taskSpec has no metadata (only a Pipeline's embedded one does; Tekton's webhook refuses it):
    # the simulator's annotations go on the TaskRun, which Tekton copies to its pod.
    simulator = (task_spec.pop("metadata", None) or {}).get("annotations") or {}
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "TaskRun",
        "metadata": {"generateName": f"{name_prefix}-", "annotations": {**simulator, **(annotations or {})}},
        "spec": {"taskSpec": task_spec, "podTemplate": {"nodeSelector": NOWHERE}},
    }


def pod_built_with(kube: Kube, namespace: str, task_run: Obj, shows: Callable[[Obj], bool], what: str, timeouts: TimeoutConfig) -> Obj:
    """pod_built_with() is the pod Tekton builds for a new `task_run` once it `shows` a change of Tekton's ConfigMaps.

    Tekton reads its ConfigMaps through informers, so a TaskRun created right
    after a change may still be built the old way: each TaskRun is deleted once
    its pod is read, and made again while the pod does not show the change.
    """
    created: list[str] = []

    def poll() -> Obj:
        if not created:
            created.append(runs.create(kube, namespace, task_run))
        made = runs.get(kube, namespace, "TaskRun", created[0])
        pod_name = (made.get("status") or {}).get("podName")
        if not pod_name:
            raise NotYet(f"TaskRun {created[0]} has no pod yet ({runs.describe(made)})")
        pod = decoded(kube.core.read_namespaced_pod(pod_name, namespace, _preload_content=False))
        kube.custom.delete_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "taskruns", created.pop())
        if not shows(pod):
            raise NotYet(f"Tekton still builds pods without {what}")
        return pod

    return wait_for(poll, what=f"Tekton to build pods with {what}", timeout="tekton_ready", timeouts=timeouts,
                    hint=f"kubectl -n {tekton.NAMESPACE} get configmaps")


def pipeline_run_admitted(kube: Kube, namespace: str, pipeline_run: Obj, what: str, timeouts: TimeoutConfig) -> None:
    """pipeline_run_admitted() waits until the API server admits `pipeline_run` in a dry run (nothing is stored).

    Where Tekton's webhook runs, a refusal (400 or 422: it validates with the ConfigMaps it has read so far) is
    retried until the `tekton_ready` bound; where none runs, the first dry run is admitted.
    """

    def poll() -> None:
        try:
            kube.custom.create_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "pipelineruns", pipeline_run, dry_run="All")
        except kubernetes.client.ApiException as err:
            if err.status not in (400, 422):
                raise
            raise NotYet(f"Tekton's webhook still refuses it: {str(err.body)[:300]}") from None

    wait_for(poll, what=f"Tekton's webhook to admit runs with {what}", timeout="tekton_ready", timeouts=timeouts,
             hint=f"kubectl -n {tekton.NAMESPACE} get configmaps")


@contextlib.contextmanager
def tekton_config_set(
    run: ScenarioRun,
    values: Mapping[str, str],
    *,
    shows: Callable[[Obj], bool],
    config_map: str = CONFIG_DEFAULTS,
    probe_sidecar_cpu: str | None = None,
    probe_annotations: Mapping[str, str] | None = None,
    admits: Obj | None = None,
) -> Iterator[None]:
    """tekton_config_set() sets `values` in Tekton's ConfigMap `config_map` until the block ends, then puts the old ones back.

    Each key must be one of the scenario's `tekton_settings` (`<config_map>/<key>`): the
    settings window lets the scenarios that change settings run side by side because each
    declares what it changes. `shows(pod)` tells a probe pod built with the new values
    (TaskRuns `<scenario>-probe-...` in the scenario's namespace, with a sidecar of
    `probe_sidecar_cpu` if given). Example: values {'default-pod-template': 'schedulerName: s'}
    with shows=lambda pod: pod['spec'].get('schedulerName') == 's'. With `admits`, the block
    starts only once the API server admits that PipelineRun in a dry run too: Tekton's webhook
    (kind, real installs) reads the ConfigMaps through informers of its own.
    """
    undeclared = [f"{config_map}/{key}" for key in values if f"{config_map}/{key}" not in run.scenario.tekton_settings]
    if undeclared:
        raise HarnessError(f"scenario {run.scenario.name} changes {', '.join(undeclared)} without declaring it: add it to Scenario.tekton_settings")
    kube, namespace, what = run.kube, run.namespace, f"{config_map} {', '.join(values)}"
    before = dict(kube.core.read_namespaced_config_map(config_map, tekton.NAMESPACE).data or {})
    kube.core.patch_namespaced_config_map(config_map, tekton.NAMESPACE, {"data": dict(values)})

    def probe() -> Obj:
        return probe_task_run(run.named("probe"), sidecar_cpu=probe_sidecar_cpu, annotations=probe_annotations)

    try:
        pod_built_with(kube, namespace, probe(), shows, what, run.timeouts)
        if admits is not None:
            pipeline_run_admitted(kube, namespace, admits, what, run.timeouts)
        yield
    finally:
        # A key that was absent is removed again (a null in a merge patch).
        kube.core.patch_namespaced_config_map(config_map, tekton.NAMESPACE, {"data": {key: before.get(key) for key in values}})
        pod_built_with(kube, namespace, probe(), lambda pod: not shows(pod), f"{config_map} as before", run.timeouts)
