"""What outside the PipelineRun shapes Tekton's pod, measured: RuntimeClass overhead and Tekton's feature flags.

docs/contract.md section 6.1, steps 7 and 8. The real Tekton v1.15.0
controller and API server on the local cluster build and admit each pod; the
test reads it back and computes its effective request with the harness's own
`harness.quantities.pod_request`. Expected numbers are done by hand in the
comments. Where a test also holds the reference scheduler to the same numbers,
its name says so.

The feature-flag tests change `tekton-pipelines/feature-flags`, which every
PipelineRun on the cluster reads: the cluster lock serialises pytest sessions,
and each test restores the ConfigMap in a `finally`, waiting until Tekton builds
pods the default way again.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import kubernetes
import pytest

from harness import runs
from harness.cluster.node_pools import NodePool
from harness.cluster.simulation import sim_task_spec
from harness.cluster.volumes import make_bound_pvc
from harness.contract import record as contract
from harness.kube import Kube, json_object
from harness.quantities import Amount, amount_of, pod_request
from harness.suite.scheduler_under_test import SchedulerUnderTest
from harness.suite.tekton_defaults import pod_built_with
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for
from it_pipelines import TASK_WORKSPACE, pipeline_run
from it_pods import raw_pod
from test_reference_scheduler import SCHEDULER, reference  # noqa: F401 - the module-scoped reference scheduler fixture
from test_tekton_pod_shapes import _limit_range_in_force

pytestmark = pytest.mark.integration

Obj = dict[str, Any]
Mi = 2**20

TEKTON_NAMESPACE = "tekton-pipelines"
FEATURE_FLAGS = "feature-flags"
#: A nodeSelector no node has: the measured pods stay Pending and use no room.
NOWHERE = {"rescon.dev/pool": "rescon-pod-config-nowhere"}

#: Container defaults for the flag tests: every container without a request gets 200m / 100Mi.
LIMIT_RANGE = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": {"name": "defaults"},
    "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "200m", "memory": "100Mi"}}]},
}


# --- RuntimeClass overhead (section 6.1, step 7) ---

#: Two RuntimeClasses (cluster-scoped). KWOK's nodes run no containers, so any handler name is accepted.
RUNTIME_CLASSES = {
    "rescon-it-overhead": {"cpu": "250m", "memory": "64Mi"},
    "rescon-it-light": {"cpu": "100m", "memory": "16Mi"},
}


def _runtime_class(name: str, pod_fixed: dict[str, str]) -> Obj:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "rescon-it", "overhead": {"podFixed": pod_fixed}}


@pytest.fixture
def runtime_classes(it_kube: Kube) -> Iterator[None]:
    manifests = [_runtime_class(name, fixed) for name, fixed in RUNTIME_CLASSES.items()]
    try:
        it_kube.apply_all(manifests)
        yield
    finally:
        for manifest in manifests:
            it_kube.delete(manifest)


def _task(name: str, cpu: str, memory: str | None) -> Obj:
    spec = sim_task_spec(cpu=cpu, memory=memory)
    return {"name": name, "taskSpec": spec, "workspaces": [{"name": TASK_WORKSPACE, "workspace": "source"}]}


def _record(kube: Kube, namespace: str, name: str, timeouts: TimeoutConfig) -> contract.Record:
    def poll() -> contract.Record:
        try:
            obj = json_object(kube.custom.get_namespaced_custom_object(contract.GROUP, contract.VERSION, namespace, contract.PLURAL, name))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                raise NotYet(f"no record {namespace}/{name} yet") from err
            raise
        return contract.Record.from_json(obj)

    return wait_for(poll, what=f"record {name}", timeout="record_state", timeouts=timeouts)


def test_tekton_pods_get_their_runtime_class_overhead_and_the_reference_peak_counts_it(
    it_kube: Kube, namespace: str, node_pool: NodePool, reference: SchedulerUnderTest, it_timeouts: TimeoutConfig, runtime_classes: None  # noqa: F811
) -> None:
    claim = make_bound_pvc(it_kube, namespace, "source")
    # a (500m / 128Mi) and b (300m, no memory) share `source` and run at the same time. The run's pod template
    # names rescon-it-overhead (250m / 64Mi); b's taskRunSpecs entry names rescon-it-light (100m / 16Mi), which
    # wins for b (PipelineRun.GetTaskRunSpec, pkg/apis/pipeline/v1/pipelinerun_types.go).
    manifest = pipeline_run("overhead", [_task("a", "500m", "128Mi"), _task("b", "300m", None)], pool=node_pool, claims={"source": claim},
                            scheduler_name=SCHEDULER, fixed_name=True)
    manifest["spec"]["taskRunTemplate"]["podTemplate"]["runtimeClassName"] = "rescon-it-overhead"
    manifest["spec"]["taskRunSpecs"] = [{"pipelineTaskName": "b", "podTemplate": {"runtimeClassName": "rescon-it-light"}}]
    name = runs.create(it_kube, namespace, manifest)
    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)
    assert (runs.succeeded(done) or {}).get("status") == "True", runs.describe(done)
    reference.check_alive()

    got: dict[str, object] = {}
    want: dict[str, object] = {}
    pods = {task: raw_pod(it_kube, namespace, run["status"]["podName"]) for task, run in runs.taskruns_of(it_kube, namespace, name).items()}
    # The RuntimeClass admission plugin copies overhead.podFixed to spec.overhead; PodRequests adds it once:
    #   a: step work 500m / 128Mi (Tekton's init containers ask nothing) + 250m / 64Mi = 750m / 192Mi
    #   b: step work 300m / 0 + 100m / 16Mi = 400m / 16Mi
    got["a overhead"], want["a overhead"] = amount_of(pods["a"]["spec"].get("overhead")), Amount(250, 64 * Mi)
    got["b overhead"], want["b overhead"] = amount_of(pods["b"]["spec"].get("overhead")), Amount(100, 16 * Mi)
    got["a"], want["a"] = pod_request(pods["a"]), Amount(750, 192 * Mi)
    got["b"], want["b"] = pod_request(pods["b"]), Amount(400, 16 * Mi)
    # The reference's record: a and b overlap, so the peak is 750 + 400 = 1150m, 192 + 16 = 208Mi
    # (without the overhead it would be 800m / 128Mi).
    [group] = _record(it_kube, namespace, name, it_timeouts).groups
    got["peak"], want["peak"] = (group.peak_cpu_millis, group.peak_memory_bytes), (1150, 208 * Mi)
    assert got == want


# --- feature flags (section 6.1, step 8) ---


def _task_run(spec: Obj) -> Obj:
    return {"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "metadata": {"generateName": "flags-"},
            "spec": {"taskSpec": spec, "podTemplate": {"nodeSelector": NOWHERE}}}


def _config(kube: Kube, name: str) -> dict[str, str]:
    return dict(kube.core.read_namespaced_config_map(name, TEKTON_NAMESPACE).data or {})


def _pod_built_with_flag(
    kube: Kube, namespace: str, spec: Obj, *, key: str, value: str, shows: Callable[[Obj], bool], timeouts: TimeoutConfig,
    config_map: str = FEATURE_FLAGS,
) -> Obj:
    """_pod_built_with_flag() is the first pod of `spec` Tekton builds with `key` of its ConfigMap `config_map` set to `value`.

    The namespace gets LIMIT_RANGE first. Afterwards the key's old value is put
    back and, before returning, a pod built the old way again is awaited, so the
    next test (or session) meets Tekton as it was.
    """
    kube.apply(LIMIT_RANGE, namespace=namespace)
    _limit_range_in_force(kube, namespace, cpu=200, timeouts=timeouts)
    before = _config(kube, config_map).get(key)
    kube.core.patch_namespaced_config_map(config_map, TEKTON_NAMESPACE, {"data": {key: value}})
    try:
        return pod_built_with(kube, namespace, _task_run(spec), shows, f"{config_map} {key}", timeouts)
    finally:
        kube.core.patch_namespaced_config_map(config_map, TEKTON_NAMESPACE, {"data": {key: before}})  # None removes it
        pod_built_with(kube, namespace, _task_run(spec), lambda pod: not shows(pod), f"{config_map} {key} as before", timeouts)


def _names(pod: Obj, field: str) -> list[str]:
    return [str(c["name"]) for c in pod["spec"].get(field) or []]


def _requests(pod: Obj) -> dict[str, Amount]:
    spec = pod["spec"]
    return {c["name"]: amount_of((c.get("resources") or {}).get("requests")) for c in (*(spec.get("initContainers") or []), *spec["containers"])}


def _prediction(spec: Obj, **shaping: Any) -> Amount:
    """_prediction is the reference scheduler's predicted request (the test names say where they compare it)."""
    from reference_scheduler.core.tekton_pods import predict_task_pod_request

    predicted = predict_task_pod_request(spec, limit_range=LIMIT_RANGE, **shaping)
    return Amount(predicted.cpu, predicted.memory)


def test_results_from_sidecar_logs_adds_a_sidecar_that_counts_through_the_limit_range_and_the_reference_predicts_it(
    it_kube: Kube, namespace: str, it_timeouts: TimeoutConfig
) -> None:
    spec = sim_task_spec(cpu="400m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", results=("out",), workspaces=(), as_script=True)
    pod = _pod_built_with_flag(it_kube, namespace, spec, key="results-from", value="sidecar-logs", timeouts=it_timeouts,
                               shows=lambda pod: "sidecar-tekton-log-results" in _names(pod, "containers"))
    # createResultsSidecar (pkg/pod/pod.go) gives sidecar tekton-log-results no resources; the LimitRanger admission
    # plugin gives it, prepare and place-scripts the whole defaultRequest, 200m / 100Mi. Tekton's LimitRange
    # transformer leaves step work alone (it sets cpu and memory). Containers: work 400m / 64Mi + helper
    # 100m / 32Mi + results 200m / 100Mi = 700m / 196Mi; init containers at most 200m / 100Mi: pod 700m / 196Mi.
    got = {"containers": _requests(pod), "pod": pod_request(pod), "reference": _prediction(spec, sidecar_logs_results=True)}
    want = {
        "containers": {
            "prepare": Amount(200, 100 * Mi), "place-scripts": Amount(200, 100 * Mi),
            "step-work": Amount(400, 64 * Mi), "sidecar-helper": Amount(100, 32 * Mi), "sidecar-tekton-log-results": Amount(200, 100 * Mi),
        },
        "pod": Amount(700, 196 * Mi),
        "reference": Amount(700, 196 * Mi),
    }
    assert got == want


def test_native_sidecars_become_restartable_init_containers_with_the_same_request_and_the_reference_predicts_it(
    it_kube: Kube, namespace: str, it_timeouts: TimeoutConfig
) -> None:
    spec = sim_task_spec(cpu="400m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", workspaces=(), as_script=True)
    pod = _pod_built_with_flag(it_kube, namespace, spec, key="enable-kubernetes-sidecar", value="true", timeouts=it_timeouts,
                               shows=lambda pod: "sidecar-helper" in _names(pod, "initContainers"))
    # pkg/pod/pod.go (Build): the sidecar goes after Tekton's init containers, with restartPolicy Always.
    # PodRequests: it adds to the containers, 400 + 100 = 500m, 64 + 32 = 96Mi, and to no init container (none
    # starts after it); prepare and place-scripts 200m / 100Mi (LimitRange): pod max(500, 200) = 500m,
    # max(96Mi, 100Mi) = 100Mi, as with Tekton's own sidecars. Taking the sidecar for an ordinary init container
    # (the largest counts) would give 400m / 100Mi.
    got = {
        "init": [(c["name"], c.get("restartPolicy")) for c in pod["spec"]["initContainers"]],
        "containers": _names(pod, "containers"),
        "pod": pod_request(pod),
        "reference": _prediction(spec, native_sidecars=True),
    }
    want = {
        "init": [("prepare", None), ("place-scripts", None), ("sidecar-helper", "Always")],
        "containers": ["step-work"],
        "pod": Amount(500, 100 * Mi),
        "reference": Amount(500, 100 * Mi),
    }
    assert got == want


#: config-defaults' container defaults (docs/contract.md section 6.1, step 4): a prefixed entry and the fallback.
CONTAINER_DEFAULTS = "prefix-sidecar: {requests: {cpu: 300m, memory: 64Mi}}\ndefault: {requests: {cpu: 150m, memory: 32Mi}}\n"


def test_config_defaults_container_resources_go_to_bare_and_tektons_own_containers_and_the_reference_predicts_them(
    it_kube: Kube, namespace: str, it_timeouts: TimeoutConfig
) -> None:
    from reference_scheduler.core.container_defaults import container_defaults_of

    spec = {
        "steps": [{"name": "work", "image": "busybox:1.37", "script": "true", "computeResources": {"requests": {"cpu": "400m"}}}],
        "sidecars": [{"name": "db", "image": "busybox:1.37"}],
    }
    pod = _pod_built_with_flag(
        it_kube, namespace, spec, config_map="config-defaults", key="default-container-resource-requirements", value=CONTAINER_DEFAULTS,
        timeouts=it_timeouts, shows=lambda pod: _requests(pod).get("sidecar-db") == Amount(300, 64 * Mi),
    )
    # Tekton's first transformer: prefix-sidecar gives the bare sidecar-db 300m / 64Mi; default gives Tekton's own
    # prepare and place-scripts 150m / 32Mi; step-work has a request and is not Tekton's own: it keeps it. Then
    # Tekton's LimitRange transformer gives step-work the memory it lacks, defaultRequest / 1 step = 100Mi.
    # Containers: 400m + 300m = 700m, 100Mi + 64Mi = 164Mi; init containers 150m / 32Mi: pod 700m / 164Mi
    # (without the entries: 600m / 200Mi, the LimitRange's 200m / 100Mi for sidecar-db and Tekton's own).
    defaults = container_defaults_of({"data": {"default-container-resource-requirements": CONTAINER_DEFAULTS}})
    got = {"containers": _requests(pod), "pod": pod_request(pod), "reference": _prediction(spec, container_defaults=defaults)}
    want = {
        "containers": {
            "prepare": Amount(150, 32 * Mi), "place-scripts": Amount(150, 32 * Mi),
            "step-work": Amount(400, 100 * Mi), "sidecar-db": Amount(300, 64 * Mi),
        },
        "pod": Amount(700, 164 * Mi),
        "reference": Amount(700, 164 * Mi),
    }
    assert got == want
