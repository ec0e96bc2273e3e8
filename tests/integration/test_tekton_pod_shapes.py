"""What Tekton v1.15.0 builds, measured: the pod's effective request for each input the contract names (section 6).

The real Tekton controller on the local cluster builds each pod; the test reads
it back and computes its effective request with the harness's own
`harness.quantities.pod_request` (kube-scheduler's PodRequests: containers
summed, the largest init container, the more of the two). The expected numbers
are the contract's arithmetic done by hand in the comments; where they follow
Tekton's code, the comment names its file under github.com/tektoncd/pipeline@v1.15.0.

The groups come from `harness.monitor.expected_groups`, the suite's own reading,
compared with the volumes Tekton actually mounts (propagated workspaces).

Besides these pinned shapes, a hypothesis test draws random task shapes
(steps, a stepTemplate, a sidecar, stepSpecs, sidecarSpecs, task-level
requests, with and without a LimitRange) and compares each pod Tekton builds
with the contract's arithmetic as `harness.generative.pod_requests` writes it out.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness import runs
from harness.cluster.node_pools import NodePool
from harness.cluster.simulation import STEP_IMAGE, sim_task_spec
from harness.cluster.volumes import make_bound_pvc
from harness.kube import Kube, json_object
from harness.monitor.expected_groups import ExpectedGroup, expected_groups
from harness.quantities import Amount, cpu_millis, pod_request
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for
from harness.generative.pod_requests import contract_pod_request, contract_requests
from it_pipelines import pipeline_run, task
from it_pods import raw_pod

pytestmark = pytest.mark.integration

Obj = dict[str, Any]
Mi = 2**20


def _entry(name: str, spec: Obj, **fields: Any) -> Obj:
    return {"name": name, "taskSpec": spec, **fields}


def _pods_of(kube: Kube, namespace: str, run: str, task_name: str) -> list[Obj]:
    """_pods_of() are the pods of every TaskRun of one pipeline task (several for a matrix), read raw."""
    selector = f"{runs.PIPELINERUN_LABEL}={run},{runs.PIPELINE_TASK_LABEL}={task_name}"
    taskruns = json_object(kube.custom.list_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "taskruns", label_selector=selector))["items"]
    pods = []
    for taskrun in taskruns:
        pod_name = (taskrun.get("status") or {}).get("podName")
        assert pod_name, f"TaskRun {taskrun['metadata']['name']} has no pod: {runs.describe(taskrun)}"
        pods.append(raw_pod(kube, namespace, pod_name))
    return pods


def _containers(pod: Obj) -> dict[str, Amount]:
    """_containers maps each container and init container of a pod to its request as stored."""
    spec = pod["spec"]
    return {
        c["name"]: pod_request({"spec": {"containers": [c]}}) for c in (*(spec.get("initContainers") or []), *(spec.get("containers") or []))
    }


def _one_pod(kube: Kube, namespace: str, run: str, task_name: str) -> Obj:
    pods = _pods_of(kube, namespace, run, task_name)
    assert len(pods) == 1, f"task {task_name} has {len(pods)} pods"
    return pods[0]


def test_the_inputs_tekton_reads_make_these_pods(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    claim = make_bound_pvc(it_kube, namespace, "source", timeouts=it_timeouts)

    # task-level: three steps asking 100m, 2 CPU and nothing; taskRunSpecs computeResources requests cpu 1.
    task_level = sim_task_spec(cpu="100m", extra_steps=[{"cpu": "2"}, {}], workspaces=())
    # overrides: step work asks 100m / 64Mi, sidecar helper 100m / 32Mi; stepSpecs sets work's cpu, sidecarSpecs helper's memory.
    overrides = sim_task_spec(cpu="100m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", workspaces=())
    # template: stepTemplate requests 200m / 256Mi; steps ask {cpu 400m}, {} and {memory 128Mi}.
    template = sim_task_spec(cpu="400m", step_template={"cpu": "200m", "memory": "256Mi"}, extra_steps=[{}, {"memory": "128Mi"}], workspaces=())
    # limit-only: the one step has limits cpu 300m / memory 64Mi and no requests.
    limit_only = sim_task_spec(cpu=None, workspaces=())
    limit_only["steps"][0]["computeResources"] = {"limits": {"cpu": "300m", "memory": "64Mi"}}
    # matrix: x over the pipeline param xs = [a, b], include {x: a} (matches) and {x: c} (new); 100m each.
    matrixed = sim_task_spec(cpu="100m", params=("x",), workspaces=())
    # implicit: an embedded taskSpec that refers to $(workspaces.source.path) and declares nothing; its entry binds nothing.
    implicit = sim_task_spec(cpu="100m", workspaces=())
    implicit["steps"][0]["env"] = [{"name": "SOURCE_DIR", "value": "$(workspaces.source.path)"}]

    manifest = pipeline_run(
        "shapes",
        [
            task("writer", workspace="source"),
            _entry("implicit", implicit),
            _entry("task-level", task_level),
            _entry("overrides", overrides),
            _entry("template", template),
            _entry("limit-only", limit_only),
            _entry(
                "matrixed",
                matrixed,
                matrix={
                    "params": [{"name": "x", "value": "$(params.xs[*])"}],
                    "include": [
                        {"name": "again-a", "params": [{"name": "x", "value": "a"}]},
                        {"name": "add-c", "params": [{"name": "x", "value": "c"}]},
                    ],
                },
            ),
        ],
        pool=node_pool,
        claims={"source": claim},
    )
    manifest["spec"]["pipelineSpec"]["params"] = [{"name": "xs", "type": "array"}]
    manifest["spec"]["params"] = [{"name": "xs", "value": ["a", "b"]}]
    manifest["spec"]["taskRunSpecs"] = [
        {"pipelineTaskName": "task-level", "computeResources": {"requests": {"cpu": "1"}}},
        {
            "pipelineTaskName": "overrides",
            "stepSpecs": [{"name": "work", "computeResources": {"requests": {"cpu": "700m"}}}],
            "sidecarSpecs": [{"name": "helper", "computeResources": {"requests": {"memory": "96Mi"}}}],
        },
    ]
    name = runs.create(it_kube, namespace, manifest)
    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)
    assert (runs.succeeded(done) or {}).get("status") == "True", runs.describe(done)

    # Every measurement first, then one comparison, so a run shows every disagreement at once.
    got: dict[str, object] = {}
    want: dict[str, object] = {}

    # Task-level computeResources (pkg/internal/computeresources/tasklevel/tasklevel.go): each of the 3 steps
    # requests 1000m / 3 = 333m (integer millicores, rounded down), whatever it asked: 3 × 333 = 999m, no memory.
    pod = _one_pod(it_kube, namespace, name, "task-level")
    got["task-level steps"] = [a.cpu for n, a in _containers(pod).items() if n.startswith("step-")]
    want["task-level steps"] = [333, 333, 333]
    got["task-level"], want["task-level"] = pod_request(pod), Amount(999, 0)

    # stepSpecs / sidecarSpecs (pkg/apis/pipeline/v1/merge.go, MergeStepsWithSpecs, MergeSidecarsWithSpecs): key by
    # key over the step's own: work 700m (override) / 64Mi (kept); helper 100m (kept) / 96Mi (override).
    # Pod: 700 + 100 = 800m, 64 + 96 = 160Mi.
    pod = _one_pod(it_kube, namespace, name, "overrides")
    got["overrides step-work"], want["overrides step-work"] = _containers(pod).get("step-work"), Amount(700, 64 * Mi)
    got["overrides sidecar-helper"], want["overrides sidecar-helper"] = _containers(pod).get("sidecar-helper"), Amount(100, 96 * Mi)
    got["overrides"], want["overrides"] = pod_request(pod), Amount(800, 160 * Mi)

    # stepTemplate (pkg/apis/pipeline/v1/merge.go, MergeStepsWithStepTemplate): key by key, the step's keys win:
    # work 400m / 256Mi, work-2 200m / 256Mi, work-3 200m / 128Mi. Pod: 800m, 640Mi.
    pod = _one_pod(it_kube, namespace, name, "template")
    got["template steps"] = {n: a for n, a in _containers(pod).items() if n.startswith("step-")}
    want["template steps"] = {"step-work": Amount(400, 256 * Mi), "step-work-2": Amount(200, 256 * Mi), "step-work-3": Amount(200, 128 * Mi)}
    got["template"], want["template"] = pod_request(pod), Amount(800, 640 * Mi)

    # A step with only a limit, no LimitRange: the API server copies the limit to the request: 300m, 64Mi.
    got["limit-only"], want["limit-only"] = pod_request(_one_pod(it_kube, namespace, name, "limit-only")), Amount(300, 64 * Mi)

    # matrix.include (pkg/apis/pipeline/v1/matrix_types.go, FanOut): x in [a, b] makes 2 combinations; include
    # {x: a} matches combination a and adds none; {x: c} matches none and adds one: 3 TaskRuns, 3 × 100m = 300m.
    matrix_pods = _pods_of(it_kube, namespace, name, "matrixed")
    got["matrix pods"], want["matrix pods"] = len(matrix_pods), 3
    got["matrix cpu"], want["matrix cpu"] = sum(pod_request(p).cpu for p in matrix_pods), 300
    # status.pipelineSpec is the spec after parameter substitution (pkg/reconciler/pipelinerun/pipelinerun.go,
    # ApplyParameters before `pr.Status.PipelineSpec = pipelineSpec`): the matrix holds [a, b], not $(params.xs[*]).
    resolved = {t["name"]: t for t in done["status"]["pipelineSpec"]["tasks"]}
    got["resolved matrix"], want["resolved matrix"] = resolved["matrixed"]["matrix"]["params"], [{"name": "x", "value": ["a", "b"]}]

    # Propagated workspace (pkg/reconciler/pipelinerun/pipelinerun.go, propagateWorkspaces): Tekton binds `source`
    # for `implicit` although the resolved spec binds nothing, so its pod mounts the claim, and the suite's own
    # reading puts it in writer's group.
    pod = _one_pod(it_kube, namespace, name, "implicit")
    got["implicit mounts"] = {v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes") or [] if v.get("persistentVolumeClaim")}
    want["implicit mounts"] = {claim}
    got["implicit bindings"], want["implicit bindings"] = resolved["implicit"].get("workspaces"), None
    got["groups"] = expected_groups(done)
    want["groups"] = (ExpectedGroup(frozenset({"implicit", "writer"}), frozenset({"source"})),)

    assert got == want


def _limit_range_in_force(kube: Kube, namespace: str, *, cpu: int, timeouts: TimeoutConfig) -> None:
    """_limit_range_in_force waits until a new pod's container without requests gets `cpu` millicores.

    The API server's LimitRanger reads LimitRanges through its own cache, so a
    pod created right after the LimitRange may miss it.
    """
    attempt = [0]

    def poll() -> None:
        attempt[0] += 1
        name = f"limit-range-probe-{attempt[0]}"
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"schedulerName": "rescon-nobody", "containers": [{"name": "c", "image": "busybox:1.37"}]}}
        pod = json.loads(kube.core.create_namespaced_pod(namespace, body, _preload_content=False).data)
        kube.core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
        got = cpu_millis(((pod["spec"]["containers"][0].get("resources") or {}).get("requests") or {}).get("cpu", "0"))
        if got != cpu:
            raise NotYet(f"a probe pod's container without requests got {got}m CPU, not the LimitRange's {cpu}m")

    wait_for(poll, what="the LimitRange to give containers their default request", timeout="fault_active", timeouts=timeouts)


#: The LimitRange: defaultRequest 600m / 300Mi, min 250m / 50Mi, for containers.
LIMIT_RANGE = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": {"name": "defaults"},
    "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "600m", "memory": "300Mi"}, "min": {"cpu": "250m", "memory": "50Mi"}}]},
}


def limit_range_task_spec() -> Obj:
    """limit_range_task_spec: steps work (500m, no memory, a script: Tekton adds place-scripts), work-2 (nothing) and work-3 (limits 300m / 200Mi only)."""
    spec = sim_task_spec(cpu="500m", extra_steps=[{}, {}], workspaces=(), as_script=True)
    spec["steps"][2]["computeResources"] = {"limits": {"cpu": "300m", "memory": "200Mi"}}
    return copy.deepcopy(spec)


def test_a_limit_range_default_is_split_across_steps_no_lower_than_min(
    it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig
) -> None:
    it_kube.apply(LIMIT_RANGE, namespace=namespace)
    _limit_range_in_force(it_kube, namespace, cpu=600, timeouts=it_timeouts)
    name = runs.create(it_kube, namespace, pipeline_run("limits", [_entry("split", limit_range_task_spec())], pool=node_pool))
    done = runs.wait_for_done(it_kube, namespace, "PipelineRun", name, timeouts=it_timeouts)
    assert (runs.succeeded(done) or {}).get("status") == "True", runs.describe(done)

    # Tekton's LimitRange transformer (pkg/internal/computeresources/transformer.go) runs before the pod exists:
    #   the default for a step is max(defaultRequest / 3 steps, min) = max(200m, 250m) = 250m CPU and
    #   max(300Mi / 3, 50Mi) = 100Mi memory (integer division of millicores and bytes);
    #   a step with no requests at all gets that default, a limit-only step included (its limit is not its request);
    #   a step with some requests gets the default only for the resources it left at zero.
    # Then the API server's LimitRanger gives Tekton's init containers (no requests) the whole default.
    #   step-work   500m (own), 100Mi (Tekton's default for the missing memory)
    #   step-work-2 250m, 100Mi
    #   step-work-3 250m, 100Mi (not its limits 300m / 200Mi)
    #   containers: 500 + 250 + 250 = 1000m, 300Mi; init containers prepare, place-scripts: 600m / 300Mi each
    #   pod: max(1000, 600) = 1000m, max(300Mi, 300Mi) = 300Mi.
    # The literal reading (each step without a request gets defaultRequest, a limit is a request):
    #   500 + 600 + 300 = 1400m, 300 + 300 + 200 = 800Mi.
    pod = _one_pod(it_kube, namespace, name, "split")
    got = {"containers": _containers(pod), "pod": pod_request(pod)}
    want = {
        "containers": {
            "prepare": Amount(600, 300 * Mi),
            "place-scripts": Amount(600, 300 * Mi),
            "step-work": Amount(500, 100 * Mi),
            "step-work-2": Amount(250, 100 * Mi),
            "step-work-3": Amount(250, 100 * Mi),
        },
        "pod": Amount(1000, 300 * Mi),
    }
    assert got == want


# --- random task shapes (issue 14): the pod Tekton builds against the contract's arithmetic ---

#: Values every container may ask: at least the LimitRange's min (250m / 50Mi), so the LimitRanger admits the
#: pod, and below every limit drawn (at least 1 CPU / 512Mi), so no request exceeds its limit.
CPU_REQUESTS = ("250m", "300m", "400m", "500m", "750m")
MEMORY_REQUESTS = ("50Mi", "64Mi", "128Mi", "200Mi")
LIMITS = {"cpu": ("1", "2"), "memory": ("512Mi", "1Gi")}
#: Task-level requests: split over at most 3 steps they stay at least the min (1000m / 3 = 333m, 192Mi / 3 = 64Mi).
TASK_LEVEL = {"cpu": ("1", "1500m", "2"), "memory": ("192Mi", "300Mi", "512Mi")}
#: A nodeSelector no node has: the pods stay Pending and use no room.
NOWHERE = {"rescon.dev/pool": "rescon-pod-shapes-nowhere"}


def _requests(values: dict[str, tuple[str, ...]] | None = None, *, min_size: int = 0) -> st.SearchStrategy[dict[str, str]]:
    values = values or {"cpu": CPU_REQUESTS, "memory": MEMORY_REQUESTS}
    drawn = st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in values.items()})
    return drawn.filter(lambda d: len(d) >= min_size)


def _resources() -> st.SearchStrategy[Obj]:
    limits = st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in LIMITS.items()})
    return st.tuples(_requests(), limits).map(lambda rl: {k: v for k, v in (("requests", rl[0]), ("limits", rl[1])) if v})


@st.composite
def task_shapes(draw: st.DrawFn) -> tuple[Obj, Obj]:
    """task_shapes: (taskSpec, TaskRun spec fields): 1-3 steps, a stepTemplate, a sidecar, stepSpecs, sidecarSpecs, task-level requests."""
    steps: list[Obj] = []
    for index in range(draw(st.integers(1, 3))):
        step: Obj = {"name": f"s{index + 1}", "image": STEP_IMAGE}
        if index == 0 and draw(st.booleans()):
            step["script"] = "#!/bin/sh\ntrue"  # place-scripts
        else:
            step["command"] = ["true"]
        resources = draw(_resources())
        if resources:
            step["computeResources"] = resources
        steps.append(step)
    spec: Obj = {"steps": steps}
    template = draw(_requests())
    if template:
        spec["stepTemplate"] = {"computeResources": {"requests": template}}
    if draw(st.booleans()):
        sidecar: Obj = {"name": "helper", "image": STEP_IMAGE, "command": ["true"]}
        resources = draw(_resources())
        if resources:
            sidecar["computeResources"] = resources
        spec["sidecars"] = [sidecar]
    run_spec: Obj = {}
    overrides = draw(st.sampled_from(("none", "task-level", "step-specs")))
    if overrides == "task-level":  # Tekton refuses stepSpecs resources beside task-level computeResources
        run_spec["computeResources"] = {"requests": draw(_requests(TASK_LEVEL, min_size=1))}
    else:
        if overrides == "step-specs":
            run_spec["stepSpecs"] = [{"name": "s1", "computeResources": {"requests": draw(_requests(min_size=1))}}]
        if spec.get("sidecars") and draw(st.booleans()):
            run_spec["sidecarSpecs"] = [{"name": "helper", "computeResources": {"requests": draw(_requests(min_size=1))}}]
    return spec, run_spec


@pytest.mark.parametrize("limit_range", [None, LIMIT_RANGE], ids=["no-limit-range", "limit-range"])
@settings(
    max_examples=12,
    deadline=None,
    # Each example builds one pod on the cluster: no shrinking (each step would be another TaskRun); the failing
    # shape is printed whole, with the contract's arithmetic and Tekton's pod side by side.
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=(HealthCheck.function_scoped_fixture, HealthCheck.too_slow),
)
@given(shape=task_shapes())
def test_random_task_shapes_make_the_pods_the_contracts_arithmetic_predicts(
    shape: tuple[Obj, Obj], limit_range: Obj | None, it_kube: Kube, namespace: str, it_timeouts: TimeoutConfig
) -> None:
    """The prediction is harness/generative/pod_requests.py, the contract's steps 1-6 as written; not the reference's."""
    if limit_range is not None and not it_kube.core.list_namespaced_limit_range(namespace).items:
        it_kube.apply(limit_range, namespace=namespace)
        _limit_range_in_force(it_kube, namespace, cpu=600, timeouts=it_timeouts)
    task_spec, run_spec = shape
    body = {
        "apiVersion": "tekton.dev/v1",
        "kind": "TaskRun",
        "metadata": {"generateName": "shape-"},
        "spec": {"taskSpec": task_spec, "podTemplate": {"nodeSelector": NOWHERE}, **run_spec},
    }
    name = runs.create(it_kube, namespace, body)
    try:

        def pod_built() -> Obj:
            run = runs.get(it_kube, namespace, "TaskRun", name)
            pod_name = (run.get("status") or {}).get("podName")
            if not pod_name:
                raise NotYet(f"TaskRun {name} has no pod yet ({runs.describe(run)})")
            return raw_pod(it_kube, namespace, pod_name)

        pod = wait_for(pod_built, what=f"TaskRun {name} to have a pod", timeout="pod_created", timeouts=it_timeouts)
    finally:
        it_kube.custom.delete_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "taskruns", name)
    predicted = contract_requests(task_spec, run_spec, limit_range)
    got = {"containers": _containers(pod), "pod": pod_request(pod)}
    want = {"containers": predicted, "pod": contract_pod_request(predicted)}
    assert got == want, f"taskSpec {json.dumps(task_spec)}, TaskRun spec {json.dumps(run_spec)}"
