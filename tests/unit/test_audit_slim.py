"""rescon audit's slimming: the rules give the same answers on slimmed objects as on whole ones, which are much bigger."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.audit.slim import slim_node, slim_pipeline_run, slim_pod
from harness.cluster.simulation import sim_task_spec
from harness.monitor import invariants as rules
from harness.monitor.expected_groups import expected_groups
from harness.monitor.release_truth import release_may_be_due
from harness.monitor.volume_topology import pod_claim_names, volume_admits, workspace_claim_names
from harness.quantities import node_allocatable, pod_request

pytestmark = pytest.mark.unit

Obj = dict[str, Any]

POD: Obj = {
    "metadata": {
        "name": "run-build-pod", "namespace": "ns", "uid": "u1", "resourceVersion": "42",
        "labels": {"tekton.dev/pipelineRun": "run", "tekton.dev/pipelineTask": "build", "app.kubernetes.io/managed-by": "tekton-pipelines"},
        "annotations": {"pipeline.tekton.dev/release": "v1.15.0", "sim.rescon.dev/hold": "true"},
        "managedFields": [{"manager": "controller", "fieldsV1": {"f:spec": {"f:containers": {}}}}] * 5,
        "ownerReferences": [{"kind": "TaskRun", "name": "run-build", "uid": "t1"}],
    },
    "spec": {
        "nodeName": "n1", "schedulerName": "tkn-scheduler",
        "initContainers": [
            {"name": "prepare", "image": "entrypoint", "command": ["/ko-app/entrypoint", "init"] * 10, "resources": {"requests": {"cpu": "50m"}}},
            {"name": "logs", "image": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"}}},
        ],
        "containers": [
            {"name": "step-work", "image": "busybox", "env": [{"name": f"E{i}", "value": "x" * 100} for i in range(20)],
             "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "256Mi", "nvidia.com/gpu": "1"}}},
        ],
        "overhead": {"cpu": "10m"},
        "volumes": [{"name": f"v{i}", "emptyDir": {}} for i in range(10)] + [
            {"name": "ws-source", "persistentVolumeClaim": {"claimName": "src", "readOnly": False}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        ],
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}] * 4, "containerStatuses": [{"name": "step-work", "ready": True}]},
}


def pipeline_run(*, resolved: bool) -> Obj:
    spec = {
        "workspaces": [{"name": "source"}, {"name": "cache"}],
        "tasks": [
            {"name": "build", "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": sim_task_spec(cpu="500m")},
            # Binds nothing: its steps name $(workspaces.cache.path), so Tekton propagates the run's `cache`.
            {"name": "warm", "taskSpec": {**sim_task_spec(cpu="100m", workspaces=()), "steps": [{"name": "s", "image": "b", "script": "ls $(workspaces.cache.path)"}]}},
            {"name": "lint", "taskSpec": sim_task_spec(cpu="100m", workspaces=())},
        ],
        "finally": [{"name": "report", "workspaces": [{"name": "source", "workspace": "source"}], "taskSpec": sim_task_spec(cpu="100m")}],
    }
    run: Obj = {
        "metadata": {"name": "run", "namespace": "ns", "uid": "r1", "creationTimestamp": "2026-12-03T11:00:00Z", "labels": {"a": "b"}},
        "spec": {
            "workspaces": [
                {"name": "source", "persistentVolumeClaim": {"claimName": "src"}},
                {"name": "cache", "volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}},
                {"name": "config", "configMap": {"name": "c"}},
            ],
            "taskRunTemplate": {"podTemplate": {"schedulerName": "tkn-scheduler", "nodeSelector": {"pool": "p"}}},
            "taskRunSpecs": [{"pipelineTaskName": "build", "podTemplate": {"schedulerName": "other"}}],
        },
        "status": {"conditions": [{"type": "Succeeded", "status": "Unknown"}], "childReferences": [{"name": f"c{i}"} for i in range(10)]},
    }
    if resolved:
        run["status"]["pipelineSpec"] = spec
    else:
        run["spec"]["pipelineSpec"] = spec
    return run


def test_a_slim_pod_counts_the_same_request_and_keeps_what_the_rules_read() -> None:
    slim = slim_pod(POD)
    assert pod_request(slim) == pod_request(POD)
    assert (rules.node_of(slim), rules.task_of(slim), rules.pod_key(slim), rules.is_terminal(slim)) == (
        rules.node_of(POD), rules.task_of(POD), rules.pod_key(POD), rules.is_terminal(POD))
    assert slim["spec"]["schedulerName"] == "tkn-scheduler" and slim["metadata"]["resourceVersion"] == "42"
    assert len(json.dumps(slim)) * 5 < len(json.dumps(POD))


def test_a_slim_pod_mounts_the_same_claims() -> None:
    assert pod_claim_names(slim_pod(POD)) == pod_claim_names(POD) == ("src", "run-build-pod-scratch")
    assert "volumes" not in slim_pod({**POD, "spec": {**POD["spec"], "volumes": [{"name": "e", "emptyDir": {}}]}})["spec"]


def test_a_slim_node_keeps_its_allocatable_and_labels() -> None:
    node: Obj = {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}, "annotations": {"a": "b" * 100}},
                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "images": [{"names": ["a"]}] * 50}}
    assert node_allocatable(slim_node(node)) == node_allocatable(node)
    assert slim_node(node)["metadata"]["name"] == "n1"
    pinned = {"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}}
    assert volume_admits(pinned, slim_node(node)) and volume_admits(pinned, node)


@pytest.mark.parametrize("resolved", [True, False], ids=["status-pipelineSpec", "embedded-pipelineSpec"])
def test_a_slim_pipeline_run_has_the_same_groups_and_scheduler(resolved: bool) -> None:
    run = pipeline_run(resolved=resolved)
    slim = slim_pipeline_run(run)
    groups = expected_groups(run)
    assert groups is not None and any("warm" in g.tasks for g in groups), "the propagated workspace must matter to this test"
    assert expected_groups(slim) == groups
    for name in ("tkn-scheduler", "other", "nobody"):
        assert rules.asks_for(slim, name) == rules.asks_for(run, name)
    assert slim["metadata"]["uid"] == "r1" and slim["metadata"]["creationTimestamp"] == "2026-12-03T11:00:00Z"
    workspaces = ["source", "cache", "config"]
    assert workspace_claim_names(slim, workspaces) == workspace_claim_names(run, workspaces) == {"source": "src"}
    assert len(json.dumps(slim)) * 3 < len(json.dumps(run))


def test_a_slim_pipeline_run_says_as_much_of_whether_a_release_may_be_due() -> None:
    run = pipeline_run(resolved=True)
    run["status"]["childReferences"] = [{"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "name": "run-build", "pipelineTaskName": "build"}]
    run["status"]["skippedTasks"] = [{"name": "report", "reason": "When Expressions evaluated to false",
                                      "whenExpressions": [{"input": "no", "operator": "in", "values": ["yes"]}]}]
    for group in (("build",), ("build", "report"), ("build", "warm"), ("warm",)):
        assert release_may_be_due(slim_pipeline_run(run), group, record_uid="r1") == release_may_be_due(run, group, record_uid="r1")
    assert not release_may_be_due(slim_pipeline_run(run), ("build", "warm"), record_uid="r1")
    run["spec"]["status"] = "StoppedRunFinally"
    assert release_may_be_due(slim_pipeline_run(run), ("warm",), record_uid="r1")
    run["status"]["conditions"] = [{"type": "Succeeded", "status": "True", "reason": "Succeeded", "message": "Tasks Completed: 4"}]
    del run["spec"]["status"]
    assert slim_pipeline_run(run)["status"]["conditions"] == [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}]
    assert release_may_be_due(slim_pipeline_run(run), ("warm",), record_uid="r1")


def test_a_pipeline_run_before_its_plan_stays_unknown() -> None:
    run = pipeline_run(resolved=True)
    del run["status"]["pipelineSpec"]
    assert expected_groups(slim_pipeline_run(run)) is None
