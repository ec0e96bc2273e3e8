"""Where a Task fetched through a resolver is before its TaskRun exists, measured on the real Tekton and its cluster resolver.

docs/contract.md section 6 ("Tasks fetched through a resolver") says a
scheduler finds such a Task in a ResolutionRequest owned by the PipelineRun,
answered before Tekton creates the run's first TaskRun. This test holds the
first task's pod and reads what is there while it holds: both tasks' requests,
answered, with the Tasks in their data, and no TaskRun yet for the second task.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from harness import runs
from harness.cluster import tekton_resolvers
from harness.cluster.node_pools import NodePool
from harness.cluster.simulation import sim_task_spec
from harness.kube import Kube, json_object
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for
from it_pipelines import pipeline_run

pytestmark = pytest.mark.integration

Obj = dict[str, Any]


def _task(name: str, **behaviour: Any) -> Obj:
    spec = sim_task_spec(cpu="300m", workspaces=(), **behaviour)
    return {"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": name, **spec.pop("metadata")}, "spec": spec}


def _resolved(name: str, namespace: str) -> Obj:
    params = [{"name": "kind", "value": "task"}, {"name": "name", "value": name}, {"name": "namespace", "value": namespace}]
    return {"resolver": "cluster", "params": params}


def _requests(kube: Kube, namespace: str) -> list[Obj]:
    found = kube.custom.list_namespaced_custom_object(tekton_resolvers.RESOLUTION_GROUP, tekton_resolvers.RESOLUTION_VERSION, namespace, "resolutionrequests")
    return list(json_object(found)["items"])


def test_every_resolved_task_is_answered_before_the_first_taskrun(it_kube: Kube, namespace: str, node_pool: NodePool, it_timeouts: TimeoutConfig) -> None:
    for task in (_task("catalog-fetch", hold=True), _task("catalog-test", run_for="1s")):
        it_kube.custom.create_namespaced_custom_object("tekton.dev", "v1", namespace, "tasks", task)
    manifest = pipeline_run("resolved", [], pool=node_pool)
    manifest["spec"]["pipelineSpec"]["tasks"] = [
        {"name": "fetch", "taskRef": _resolved("catalog-fetch", namespace)},
        {"name": "test", "runAfter": ["fetch"], "taskRef": _resolved("catalog-test", namespace)},
    ]
    run = json_object(it_kube.custom.create_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "pipelineruns", manifest))
    name, uid = run["metadata"]["name"], run["metadata"]["uid"]

    def fetch_pod_running() -> list[Obj]:
        taskruns = json_object(
            it_kube.custom.list_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "taskruns", label_selector=f"{runs.PIPELINERUN_LABEL}={name}")
        )["items"]
        pod_name = ((taskruns[0].get("status") or {}).get("podName") if taskruns else None)
        if not pod_name:
            raise NotYet(f"PipelineRun {name} has no pod yet")
        pod = it_kube.core.read_namespaced_pod(pod_name, namespace)
        if pod.status is None or pod.status.phase != "Running":
            raise NotYet(f"pod {pod_name} is not Running yet")
        return list(taskruns)

    taskruns = wait_for(fetch_pod_running, what=f"the fetch pod of {name} to run", timeout="pod_running", timeouts=it_timeouts)
    # fetch holds (the resolved Task's annotations reached its pod), so test has not started.
    assert [t["metadata"]["labels"][runs.PIPELINE_TASK_LABEL] for t in taskruns] == ["fetch"]

    requests = _requests(it_kube, namespace)
    assert len(requests) == 2, f"{len(requests)} ResolutionRequests in {namespace}, expected one per resolved task"
    by_task: dict[str, Obj] = {}
    for request in requests:
        owners = [(o["kind"], o["name"], o["uid"]) for o in request["metadata"].get("ownerReferences") or []]
        assert owners == [("PipelineRun", name, uid)], f"ResolutionRequest {request['metadata']['name']} is owned by {owners}"
        assert request["metadata"]["labels"][tekton_resolvers.RESOLVER_TYPE_LABEL] == "cluster"
        succeeded = [c for c in request["status"]["conditions"] if c["type"] == "Succeeded"]
        assert [c["status"] for c in succeeded] == ["True"], f"ResolutionRequest {request['metadata']['name']}: {succeeded}"
        params = {p["name"]: p["value"] for p in request["spec"]["params"]}
        fetched = yaml.safe_load(base64.b64decode(request["status"]["data"]))
        assert (fetched["kind"], fetched["metadata"]["name"]) == ("Task", params["name"])
        assert fetched["spec"]["steps"][0]["computeResources"]["requests"]["cpu"] == "300m"
        by_task[params["name"]] = request
    assert sorted(by_task) == ["catalog-fetch", "catalog-test"], "the second task's Task was not resolved while the first one ran"
