"""routing: task pods sent to the scheduler under test as operators send them, by Tekton's config-defaults `default-pod-template`.

The runs keep their own pod template as written, schedulerName included;
Tekton merges config-defaults' template under it field by field, so a run
that names no scheduler gets the scheduler under test. The template's other
fields (tolerations, a securityContext an operator set) stay; only its
schedulerName is set, and the whole key is put back afterwards. Tekton reads
the ConfigMap through an informer, so a probe TaskRun's pod must show the
change before any run is applied, and the old value again at the end
(harness.suite.tekton_defaults.pod_built_with).

    >>> print(routed_template("tolerations:\\n- {key: ci, operator: Exists}\\nschedulerName: default-scheduler\\n", "tkn-scheduler"), end="")
    schedulerName: tkn-scheduler
    tolerations:
    - key: ci
      operator: Exists
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import kubernetes
import yaml

from harness.cluster import tekton
from harness.errors import HarnessError
from harness.kube import Kube
from harness.suite.tekton_defaults import CONFIG_DEFAULTS, pod_built_with, probe_task_run
from harness.timeouts import TimeoutConfig

DEFAULT_POD_TEMPLATE = "default-pod-template"
#: The prefix of the probe TaskRuns' names (their pods are bound nowhere and judged by nobody).
PROBE_PREFIX = "replay-routing-probe"


def routed_template(current: str | None, scheduler_name: str) -> str:
    """routed_template() is config-defaults' default-pod-template with its schedulerName set, every other field kept."""
    template = yaml.safe_load(current or "") or {}
    if not isinstance(template, dict):
        raise HarnessError(f"Tekton's {CONFIG_DEFAULTS} {DEFAULT_POD_TEMPLATE} is not a pod template ({current!r}): fix it in namespace {tekton.NAMESPACE}")
    return yaml.safe_dump({**template, "schedulerName": scheduler_name}, sort_keys=True)


def _scheduler_of(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("schedulerName") or "")


@contextlib.contextmanager
def pods_routed_to(kube: Kube, namespace: str, scheduler_name: str, *, timeouts: TimeoutConfig, say: Callable[[str], None]) -> Iterator[None]:
    """pods_routed_to() routes task pods without a schedulerName of their own to `scheduler_name` until the block ends."""
    try:
        before = dict(kube.core.read_namespaced_config_map(CONFIG_DEFAULTS, tekton.NAMESPACE).data or {})
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            raise HarnessError(f"Tekton's ConfigMap {CONFIG_DEFAULTS} is not in namespace {tekton.NAMESPACE}: install Tekton Pipelines v1 there") from err
        raise
    current = before.get(DEFAULT_POD_TEMPLATE)
    routed = routed_template(current, scheduler_name)
    if (yaml.safe_load(current or "") or {}) == yaml.safe_load(routed):
        say(f"replay: Tekton's {CONFIG_DEFAULTS} already sends task pods to {scheduler_name}")
        yield
        return

    def routes(pod: Mapping[str, Any]) -> bool:
        return _scheduler_of(pod) == scheduler_name

    kube.core.patch_namespaced_config_map(CONFIG_DEFAULTS, tekton.NAMESPACE, {"data": {DEFAULT_POD_TEMPLATE: routed}})
    try:
        pod_built_with(kube, namespace, probe_task_run(PROBE_PREFIX), routes, f"schedulerName {scheduler_name}", timeouts)
        say(f"replay: Tekton's {CONFIG_DEFAULTS} {DEFAULT_POD_TEMPLATE} sends task pods to {scheduler_name}")
        yield
    finally:
        # A key that was absent is removed again (a null in a merge patch).
        kube.core.patch_namespaced_config_map(CONFIG_DEFAULTS, tekton.NAMESPACE, {"data": {DEFAULT_POD_TEMPLATE: current}})
        pod_built_with(kube, namespace, probe_task_run(PROBE_PREFIX), lambda pod: not routes(pod), f"{CONFIG_DEFAULTS} as before", timeouts)
        say(f"replay: Tekton's {CONFIG_DEFAULTS} is as it was")
