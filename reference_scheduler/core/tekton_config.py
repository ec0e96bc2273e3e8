"""tekton_config: what of Tekton's configuration and the cluster's RuntimeClasses changes a task's pod.

Two inputs outside the PipelineRun change the request of the pod Tekton
builds (docs/contract.md section 6.1, steps 7 and 8):

* Tekton's ``feature-flags`` ConfigMap (namespace ``tekton-pipelines``), read
  by Tekton v1.15.0 in ``pkg/apis/config/feature_flags.go``:
  ``results-from: sidecar-logs`` adds the results sidecar ``tekton-log-results``
  to a task that declares results (``pkg/pod/pod.go``, ``Build``), and
  ``enable-kubernetes-sidecar: "true"`` makes every sidecar a restartable init
  container placed after Tekton's own init containers.
* The RuntimeClass a pod template names (``runtimeClassName``): the API
  server's RuntimeClass admission plugin copies its ``overhead.podFixed`` to
  the pod's ``spec.overhead``, which PodRequests adds once per pod.

Pure functions over the raw objects; the runtime reads them from informers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FEATURE_FLAGS_CONFIGMAP",
    "TektonFeatureFlags",
    "coschedule_of",
    "coschedule_problem",
    "feature_flags_of",
    "runtime_class_name",
    "overhead_of",
]

#: The ConfigMap Tekton reads its feature flags from (in Tekton's namespace, `tekton-pipelines` by default).
FEATURE_FLAGS_CONFIGMAP = "feature-flags"

_SIDECAR_LOGS = "sidecar-logs"
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # what Go's strconv.ParseBool reads as true


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class TektonFeatureFlags:
    """TektonFeatureFlags is the part of Tekton's feature flags that changes a pod's shape; the defaults are Tekton's.

    Example: TektonFeatureFlags() has neither; TektonFeatureFlags(sidecar_logs_results=True)
    gives a task with results one more sidecar.
    """

    sidecar_logs_results: bool = False
    native_sidecars: bool = False


def feature_flags_of(config_map: Mapping[str, Any] | None) -> TektonFeatureFlags:
    """feature_flags_of(the feature-flags ConfigMap) reads `results-from` and `enable-kubernetes-sidecar`.

    A missing ConfigMap or key means Tekton's default (termination messages,
    Tekton's own sidecars). Values are read as Tekton reads them: `results-from`
    lower-cased, the boolean with Go's ParseBool (an unparsable value makes
    Tekton refuse the whole ConfigMap and keep its previous one; here it reads as
    the default).

    Example: feature_flags_of({'data': {'results-from': 'sidecar-logs',
    'enable-kubernetes-sidecar': 'true'}}) == TektonFeatureFlags(True, True).
    """
    data = _mapping(_mapping(config_map).get("data"))
    results_from = str(data.get("results-from") or "").strip().lower()
    native = str(data.get("enable-kubernetes-sidecar") or "").strip()
    return TektonFeatureFlags(
        sidecar_logs_results=results_from == _SIDECAR_LOGS,
        native_sidecars=native in _TRUE,
    )


#: Tekton's default coschedule mode (v1.15, pkg/apis/config/feature_flags.go: DefaultCoschedule), and the one this scheduler needs.
TEKTON_DEFAULT_COSCHEDULE = "workspaces"
COSCHEDULE_DISABLED = "disabled"


def coschedule_of(config_map: Mapping[str, Any] | None) -> str:
    """coschedule_of(the feature-flags ConfigMap) is Tekton's coschedule mode, lower-cased as Tekton reads it; its default when unset.

    Example: coschedule_of({'data': {'coschedule': 'Disabled'}}) == 'disabled';
    coschedule_of(None) == 'workspaces' (Tekton runs on its defaults without the ConfigMap).
    """
    data = _mapping(_mapping(config_map).get("data"))
    return str(data.get("coschedule") or "").strip().lower() or TEKTON_DEFAULT_COSCHEDULE


def coschedule_problem(mode: str, namespace: str) -> str | None:
    """coschedule_problem() is the one-line error for a coschedule mode other than `disabled`, naming the fix; None for `disabled`.

    docs/contract.md, section 4 (Tekton's coschedule): with the affinity
    assistant on, Tekton pins each workspace's tasks, by a required pod
    affinity, to a node the default scheduler chose for the assistant's pod,
    so no group's peak would be reserved where its tasks run.
    """
    if mode == COSCHEDULE_DISABLED:
        return None
    return (
        f"Tekton's coschedule is {mode!r} ({namespace}/feature-flags): its affinity assistant picks each workspace's node "
        "before this scheduler can reserve the group's peak there; set it to disabled: "
        f"kubectl -n {namespace} patch configmap feature-flags --type merge -p '{{\"data\":{{\"coschedule\":\"disabled\"}}}}'"
    )


def runtime_class_name(pipeline_run_spec: Mapping[str, Any], task: str) -> str | None:
    """runtime_class_name is the runtimeClassName of the pod Tekton builds for pipeline task `task`, if any.

    Tekton's `PipelineRun.GetTaskRunSpec` merges `spec.taskRunSpecs[]`'s
    podTemplate for the task over `spec.taskRunTemplate.podTemplate`
    (`MergePodTemplateWithDefault`: the task's runtimeClassName wins when set).
    Tekton's defaulting has already written config-defaults' default-pod-template
    into the stored `taskRunTemplate`.

    Example: with taskRunTemplate.podTemplate.runtimeClassName 'kata' and a
    taskRunSpecs entry for 'build' naming 'gvisor': 'gvisor' for build, 'kata' for the rest.
    """
    chosen = _mapping(_mapping(pipeline_run_spec.get("taskRunTemplate")).get("podTemplate")).get("runtimeClassName")
    entries = pipeline_run_spec.get("taskRunSpecs")
    if isinstance(entries, Sequence) and not isinstance(entries, str):
        for entry in entries:
            entry = _mapping(entry)
            if entry.get("pipelineTaskName") == task:
                own = _mapping(entry.get("podTemplate")).get("runtimeClassName")
                if own:
                    chosen = own
    return str(chosen) if chosen else None


def overhead_of(runtime_class: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """overhead_of(a RuntimeClass) is its `overhead.podFixed`, the pod's `spec.overhead` after admission; None without.

    Example: overhead_of({'handler': 'kata', 'overhead': {'podFixed': {'cpu': '250m', 'memory': '120Mi'}}})
    == {'cpu': '250m', 'memory': '120Mi'}.
    """
    pod_fixed = _mapping(_mapping(_mapping(runtime_class).get("overhead")).get("podFixed"))
    return dict(pod_fixed) if pod_fixed else None
