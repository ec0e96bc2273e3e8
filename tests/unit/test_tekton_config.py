"""Tekton's feature flags and RuntimeClass overhead in the reference's prediction (docs/contract.md section 6.1, steps 7 and 8).

The numbers are those measured on the local cluster by
tests/integration/test_tekton_pod_config.py, computed by hand in the comments.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.cluster.simulation import sim_task_spec
from reference_scheduler.core.pod_requests import pod_effective_request
from reference_scheduler.core.resources import Resources
from reference_scheduler.core.tekton_config import (
    TektonFeatureFlags,
    coschedule_of,
    coschedule_problem,
    feature_flags_of,
    overhead_of,
    runtime_class_name,
)
from reference_scheduler.core.tekton_pods import predict_task_pod_request, predict_task_pod_spec
from reference_scheduler.runtime.planner import PodShaping, plan_pipeline_run

pytestmark = pytest.mark.unit

Mi = 2**20

#: defaultRequest only: every container without a request gets 200m / 100Mi, Tekton's steps their split of it.
LIMIT_RANGE: dict[str, Any] = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "200m", "memory": "100Mi"}}]}}
OVERHEAD = {"cpu": "250m", "memory": "64Mi"}
LIGHT = {"cpu": "100m", "memory": "16Mi"}
RUNTIME_CLASSES = {
    "rescon-overhead": {"handler": "rescon-handler", "overhead": {"podFixed": OVERHEAD}},
    "rescon-light": {"handler": "rescon-handler", "overhead": {"podFixed": LIGHT}},
    "rescon-plain": {"handler": "rescon-handler"},
}


@pytest.mark.parametrize(
    "data, flags",
    [
        pytest.param(None, TektonFeatureFlags(), id="no-configmap-tektons-defaults"),
        pytest.param({"results-from": "termination-message", "enable-kubernetes-sidecar": "false"}, TektonFeatureFlags(), id="explicit-defaults"),
        pytest.param({"results-from": "Sidecar-Logs"}, TektonFeatureFlags(sidecar_logs_results=True), id="results-from-lower-cased"),
        pytest.param({"enable-kubernetes-sidecar": "True"}, TektonFeatureFlags(native_sidecars=True), id="parse-bool-true"),
        pytest.param({"enable-kubernetes-sidecar": "yes"}, TektonFeatureFlags(), id="not-a-go-bool"),
    ],
)
def test_feature_flags_are_read_as_tekton_reads_them(data: dict[str, str] | None, flags: TektonFeatureFlags) -> None:
    assert feature_flags_of({"data": data} if data is not None else None) == flags


def test_a_tasks_own_pod_template_runtime_class_wins_over_the_runs() -> None:
    spec = {
        "taskRunTemplate": {"podTemplate": {"runtimeClassName": "rescon-overhead"}},
        "taskRunSpecs": [{"pipelineTaskName": "b", "podTemplate": {"runtimeClassName": "rescon-light"}}, {"pipelineTaskName": "c"}],
    }
    assert [runtime_class_name(spec, t) for t in ("a", "b", "c")] == ["rescon-overhead", "rescon-light", "rescon-overhead"]
    assert runtime_class_name({}, "a") is None
    assert overhead_of(RUNTIME_CLASSES["rescon-overhead"]) == OVERHEAD
    assert overhead_of(RUNTIME_CLASSES["rescon-plain"]) is None


def test_overhead_is_added_once_per_pod() -> None:
    # step work 500m / 128Mi + sidecar helper 100m / 32Mi = 600m / 160Mi; prepare and place-scripts ask nothing;
    # + overhead 250m / 64Mi once: 850m / 224Mi.
    spec = sim_task_spec(cpu="500m", memory="128Mi", sidecar_cpu="100m", sidecar_memory="32Mi", workspaces=())
    assert predict_task_pod_request(spec) == Resources(600, 160 * Mi)
    assert predict_task_pod_request(spec, overhead=OVERHEAD) == Resources(850, 224 * Mi)


def test_the_results_sidecar_counts_only_through_a_limit_range_default() -> None:
    # results-from sidecar-logs, a task with a result: Tekton adds sidecar tekton-log-results with no resources.
    # The LimitRange (defaultRequest 200m / 100Mi): step work keeps 400m / 64Mi (it sets both); helper 100m / 32Mi;
    # the results sidecar, prepare and place-scripts get 200m / 100Mi each (the LimitRanger admission plugin).
    # Containers 400 + 100 + 200 = 700m, 64 + 32 + 100 = 196Mi; init containers at most 200m / 100Mi: 700m / 196Mi.
    spec = sim_task_spec(cpu="400m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", results=("out",), workspaces=())
    assert predict_task_pod_request(spec, limit_range=LIMIT_RANGE) == Resources(500, 100 * Mi)  # 500m; max(96Mi, 100Mi)
    assert predict_task_pod_request(spec, limit_range=LIMIT_RANGE, sidecar_logs_results=True) == Resources(700, 196 * Mi)
    # A task without results gets no results sidecar.
    plain = sim_task_spec(cpu="400m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", workspaces=())
    assert predict_task_pod_request(plain, limit_range=LIMIT_RANGE, sidecar_logs_results=True) == Resources(500, 100 * Mi)


def test_native_sidecars_are_restartable_init_containers_after_tektons_with_the_same_total() -> None:
    # enable-kubernetes-sidecar: initContainers prepare, place-scripts (200m / 100Mi each, LimitRange), then
    # sidecar-helper (100m / 32Mi, restartPolicy Always); containers step-work 400m / 64Mi.
    # PodRequests: the sidecar adds to the containers, 400 + 100 = 500m, 64 + 32 = 96Mi, and to no init
    # container (none starts after it); init containers at most 200m / 100Mi: 500m / 100Mi, as with Tekton's sidecars.
    # Reading the sidecar as an ordinary init container (the largest counts) would give 400m / 100Mi.
    spec = sim_task_spec(cpu="400m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", workspaces=(), as_script=True)
    pod = predict_task_pod_spec(spec, limit_range=LIMIT_RANGE, native_sidecars=True)
    assert [(c["name"], c.get("restartPolicy")) for c in pod["initContainers"]] == [("prepare", None), ("place-scripts", None), ("sidecar-helper", "Always")]
    assert [c["name"] for c in pod["containers"]] == ["step-work"]
    assert pod_effective_request(pod) == Resources(500, 100 * Mi)
    as_plain_init = {**pod, "initContainers": [{k: v for k, v in c.items() if k != "restartPolicy"} for c in pod["initContainers"]]}
    assert pod_effective_request(as_plain_init) == Resources(400, 100 * Mi)


def _run(tasks: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    # As Tekton leaves it once resolved: the plan is read from status.pipelineSpec only.
    pipeline_spec = {"workspaces": [{"name": "source"}], "tasks": tasks}
    return {
        "metadata": {"name": "r", "namespace": "ci", "uid": "u"},
        "spec": {
            "workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "c"}}],
            "pipelineSpec": pipeline_spec,
            **spec,
        },
        "status": {"pipelineSpec": pipeline_spec},
    }


def test_the_group_peak_adds_each_pods_overhead() -> None:
    # a (500m / 128Mi) and b (300m) share `source` and run together. The run's pod template names
    # rescon-overhead (250m / 64Mi); b's taskRunSpecs entry names rescon-light (100m / 16Mi).
    # a: 500 + 250 = 750m, 128 + 64 = 192Mi; b: 300 + 100 = 400m, 0 + 16 = 16Mi. Peak: 1150m / 208Mi.
    tasks = [
        {"name": n, "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": sim_task_spec(cpu=cpu, memory=memory)}
        for n, cpu, memory in (("a", "500m", "128Mi"), ("b", "300m", None))
    ]
    run = _run(
        tasks,
        taskRunTemplate={"podTemplate": {"runtimeClassName": "rescon-overhead"}},
        taskRunSpecs=[{"pipelineTaskName": "b", "podTemplate": {"runtimeClassName": "rescon-light"}}],
    )
    shaping = PodShaping(runtime_class=RUNTIME_CLASSES.get)
    [group] = plan_pipeline_run(run, get_task=lambda ns, name: None, limit_range=None, shaping=shaping).groups
    assert group.peak == Resources(1150, 208 * Mi)
    [without] = plan_pipeline_run(run, get_task=lambda ns, name: None, limit_range=None).groups
    assert without.peak == Resources(800, 128 * Mi)  # no RuntimeClass known: 500 + 300, 128 + 0


def test_the_scheduler_plans_with_the_flags_and_runtime_classes_its_caches_hold() -> None:
    """Scheduler._shaping() reads tekton-pipelines/feature-flags and the RuntimeClasses from its informers, never the API."""
    import kubernetes

    from reference_scheduler.runtime.scheduler import Scheduler

    scheduler = Scheduler(kubernetes.client.ApiClient(), scheduler_name="t")
    assert scheduler._shaping().flags == TektonFeatureFlags()  # nothing cached yet: Tekton's defaults
    scheduler.tekton_flags._store[("tekton-pipelines", "feature-flags")] = {"data": {"results-from": "sidecar-logs", "enable-kubernetes-sidecar": "true"}}
    scheduler.runtime_classes._store[("", "rescon-overhead")] = RUNTIME_CLASSES["rescon-overhead"]
    shaping = scheduler._shaping()
    assert shaping.flags == TektonFeatureFlags(sidecar_logs_results=True, native_sidecars=True)
    assert overhead_of(shaping.runtime_class("rescon-overhead")) == OVERHEAD
    assert shaping.runtime_class("missing") is None


@pytest.mark.parametrize(
    ("config_map", "mode"),
    [
        (None, "workspaces"),
        ({"data": {"coschedule": ""}}, "workspaces"),
        ({"data": {"coschedule": " DISABLED"}}, "disabled"),
        ({"data": {"coschedule": "pipelineruns"}}, "pipelineruns"),
    ],
)
def test_coschedule_is_read_as_tekton_reads_it(config_map: dict[str, Any] | None, mode: str) -> None:
    assert coschedule_of(config_map) == mode


def test_only_a_disabled_coschedule_is_no_problem_and_the_problem_names_the_fix() -> None:
    assert coschedule_problem("disabled", "tekton-pipelines") is None
    problem = coschedule_problem("workspaces", "openshift-pipelines")
    assert problem is not None and "\n" not in problem
    assert problem.startswith("Tekton's coschedule is 'workspaces' (openshift-pipelines/feature-flags)")
    assert problem.endswith("""kubectl -n openshift-pipelines patch configmap feature-flags --type merge -p '{"data":{"coschedule":"disabled"}}'""")


def test_the_scheduler_reports_coschedule_once_per_change_from_its_cache(caplog: pytest.LogCaptureFixture) -> None:
    import kubernetes

    from reference_scheduler.runtime.scheduler import Scheduler

    reported: list[bool] = []
    scheduler = Scheduler(kubernetes.client.ApiClient(), scheduler_name="t", tekton_namespace="ops", on_coschedule=reported.append)
    with caplog.at_level("INFO", logger="tkn-scheduler"):
        scheduler.check_coschedule()  # no ConfigMap: Tekton's default, the affinity assistant
        scheduler.check_coschedule()
        scheduler.tekton_flags._store[("ops", "feature-flags")] = {"data": {"coschedule": "disabled"}}
        scheduler.check_coschedule()
        scheduler.tekton_flags._store[("tekton-pipelines", "feature-flags")] = {"data": {"coschedule": "workspaces"}}  # another install's
        scheduler.check_coschedule()
    assert reported == [False, True]
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == [coschedule_problem("workspaces", "ops")]


def test_the_scheduler_parses_config_defaults_once_per_version() -> None:
    import kubernetes

    from reference_scheduler.runtime.scheduler import Scheduler

    scheduler = Scheduler(kubernetes.client.ApiClient(), scheduler_name="t")
    assert scheduler._shaping().container_defaults == {}
    key = ("tekton-pipelines", "config-defaults")
    entry = "default-container-resource-requirements"
    scheduler.tekton_defaults._store[key] = {"metadata": {"resourceVersion": "1"}, "data": {entry: "default: {requests: {cpu: 100m}}"}}
    assert scheduler._shaping().container_defaults == {"default": {"requests": {"cpu": "100m"}}}
    scheduler.tekton_defaults._store[key]["data"][entry] = "default: {requests: {cpu: 999m}}"  # same version: not read again
    assert scheduler._shaping().container_defaults == {"default": {"requests": {"cpu": "100m"}}}
    scheduler.tekton_defaults._store[key] = {"metadata": {"resourceVersion": "2"}, "data": {entry: "default: {requests: {cpu: 200m}}"}}
    assert scheduler._shaping().container_defaults == {"default": {"requests": {"cpu": "200m"}}}
