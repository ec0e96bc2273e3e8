"""rescon replay's plan: runs made for lone Pipelines, references resolved from the given files, what each run's line says, bad input."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cluster.simulation import RESULT, RUN_FOR, STEP_IMAGE
from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError
from harness.replay.classify import classify
from harness.replay.loading import Document
from harness.replay.plan import ReplayPlan, plan_replay
from harness.replay.steps import PLACEHOLDER

pytestmark = pytest.mark.unit

NS = "replay-1a2b3c"
POOL = {"rescon.dev/pool": "replay-1a2b3c"}


def _task(name: str, cpu: str = "500m", **spec: Any) -> Document:
    steps = [{"name": "s", "image": "alpine", "computeResources": {"requests": {"cpu": cpu}}}]
    return Document(f"tasks.yaml#{name}", {"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": name},
                                           "spec": {"workspaces": [{"name": "source"}], "steps": steps, **spec}})


def _pipeline(name: str, tasks: list[dict[str, Any]], **spec: Any) -> Document:
    return Document(f"pipelines.yaml#{name}", {"apiVersion": "tekton.dev/v1", "kind": "Pipeline", "metadata": {"name": name},
                                               "spec": {"tasks": tasks, **spec}})


def _run(metadata: dict[str, Any], spec: dict[str, Any], origin: str = "runs.yaml#1") -> Document:
    return Document(origin, {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": metadata, "spec": spec})


def _plan(*documents: Document, scheduler_name: str = "tkn-scheduler") -> ReplayPlan:
    return plan_replay(classify(list(documents)), namespace=NS, scheduler_name=scheduler_name, run_for="2s", pool_selector=POOL)


SOURCE_VCT = {"name": "source", "volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}


def test_a_pipeline_no_run_names_gets_a_run_with_its_default_params() -> None:
    pipeline = _pipeline("ci", [{"name": "build", "taskRef": {"name": "build"}, "workspaces": [{"name": "source", "workspace": "src"}]}],
                         params=[{"name": "revision", "default": "main"}, {"name": "targets", "type": "array"}],
                         workspaces=[{"name": "src"}, {"name": "cache", "optional": True}])
    plan = _plan(_task("build"), pipeline)
    (run,) = plan.runs
    assert (run.base, run.origin) == ("ci-run", "pipelines.yaml#ci (run made for it)")
    assert run.manifest["spec"]["params"] == [{"name": "targets", "value": [PLACEHOLDER]}]
    assert run.manifest["spec"]["workspaces"] == [{"name": "src", **{k: v for k, v in SOURCE_VCT.items() if k != "name"}}]
    assert run.notes == (
        "made for Pipeline ci, which no given run names",
        'param targets has no default: "replay-placeholder"',
        "workspace src bound to a 1Gi volumeClaimTemplate of the default class",
    )


def test_a_pipeline_a_run_names_gets_no_run_of_its_own() -> None:
    plan = _plan(_task("build"), _pipeline("ci", [{"name": "b", "taskRef": {"name": "build"}}]),
                 _run({"generateName": "ci-"}, {"pipelineRef": {"name": "ci"}}))
    assert [r.base for r in plan.runs] == ["ci"]
    assert plan.runs[0].notes == ()


def test_a_task_ref_by_name_stays_and_its_task_is_simulated_once() -> None:
    plan = _plan(_task("build", cpu="750m"), _run({"name": "r"}, {"pipelineSpec": {"tasks": [{"name": "b", "taskRef": {"name": "build"}}]}}))
    (run,) = plan.runs
    assert run.manifest["spec"]["pipelineSpec"]["tasks"][0]["taskRef"] == {"name": "build"}
    assert plan.tasks["build"]["spec"]["steps"][0]["image"] == STEP_IMAGE
    assert run.task_specs["b"]["steps"][0]["computeResources"] == {"requests": {"cpu": "750m"}}
    assert not run.uses_resolver


def test_the_cluster_resolver_is_pointed_at_the_replays_namespace() -> None:
    ref = {"resolver": "cluster", "params": [{"name": "kind", "value": "task"}, {"name": "name", "value": "scan"}, {"name": "namespace", "value": "ci"}]}
    plan = _plan(_task("scan"), _run({"name": "r"}, {"pipelineSpec": {"tasks": [{"name": "s", "taskRef": ref}]}}))
    (run,) = plan.runs
    assert run.manifest["spec"]["pipelineSpec"]["tasks"][0]["taskRef"]["params"] == [
        {"name": "kind", "value": "task"}, {"name": "name", "value": "scan"}, {"name": "namespace", "value": NS}]
    assert run.uses_resolver and plan.uses_resolver
    assert run.notes == ()


def test_a_hub_reference_is_served_by_the_cluster_resolver_and_said_so() -> None:
    ref = {"resolver": "hub", "params": [{"name": "kind", "value": "task"}, {"name": "name", "value": "git-clone"}, {"name": "version", "value": "0.9"}]}
    plan = _plan(_task("git-clone"), _run({"name": "r"}, {"pipelineSpec": {"tasks": [{"name": "fetch", "taskRef": ref}]}}))
    (run,) = plan.runs
    assert run.manifest["spec"]["pipelineSpec"]["tasks"][0]["taskRef"]["resolver"] == "cluster"
    assert run.notes == ("task fetch: Task git-clone through the hub resolver is served by the cluster resolver from the given files",)


def test_a_pipeline_ref_through_git_names_the_file_the_pipeline_comes_from() -> None:
    ref = {"resolver": "git", "params": [{"name": "url", "value": "https://example.com/ci.git"}, {"name": "pathInRepo", "value": "tekton/ci.yaml"}]}
    plan = _plan(_task("build"), _pipeline("ci", [{"name": "b", "taskRef": {"name": "build"}}]), _run({"name": "r"}, {"pipelineRef": ref}))
    (run,) = plan.runs
    assert run.manifest["spec"]["pipelineRef"] == {"resolver": "cluster", "params": [
        {"name": "kind", "value": "pipeline"}, {"name": "name", "value": "ci"}, {"name": "namespace", "value": NS}]}
    assert run.notes == ("the run: Pipeline ci through the git resolver is served by the cluster resolver from the given files",)
    assert plan.pipelines["ci"]["spec"]["tasks"][0]["taskRef"] == {"name": "build"}


def test_a_task_that_does_not_resolve_is_bad_input() -> None:
    run = _run({"name": "build"}, {"pipelineSpec": {"tasks": [{"name": "test", "taskRef": {"name": "unit-test"}}]}}, origin="ci.yaml#3")
    with pytest.raises(ReplayInputError) as err:
        _plan(run)
    assert str(err.value) == bad_input.task_unresolved("PipelineRun build (ci.yaml#3)", "test", "Task unit-test")
    assert str(err.value) == ("PipelineRun build (ci.yaml#3): pipeline task test refers to Task unit-test, which none of the given files defines: "
                              "add that Task's YAML to the paths given")


def test_a_pipeline_that_does_not_resolve_and_a_run_with_no_pipeline_are_bad_input() -> None:
    with pytest.raises(ReplayInputError) as unresolved:
        _plan(_run({"name": "nightly"}, {"pipelineRef": {"name": "release"}}, origin="ci.yaml#4"))
    assert str(unresolved.value) == bad_input.pipeline_unresolved("PipelineRun nightly (ci.yaml#4)", "Pipeline release")
    with pytest.raises(ReplayInputError) as empty:
        _plan(_run({"name": "x"}, {}, origin="ci.yaml#1"))
    assert str(empty.value) == bad_input.run_without_pipeline("PipelineRun x (ci.yaml#1)")


def test_a_claim_the_files_do_not_hold_is_bad_input() -> None:
    run = _run({"name": "build"}, {"pipelineSpec": {"tasks": []}, "workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "shared-src"}}]},
               origin="ci.yaml#3")
    with pytest.raises(ReplayInputError) as err:
        _plan(run)
    assert str(err.value) == ("PipelineRun build (ci.yaml#3) binds workspace source to PersistentVolumeClaim shared-src, which none of the given "
                              "files defines: add the claim's YAML to the paths given, or bind the workspace to a volumeClaimTemplate")
    claim = Document("pvc.yaml#1", {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "shared-src", "uid": "u"},
                                    "spec": {"volumeName": "pv-1", "resources": {"requests": {"storage": "5Gi"}}}, "status": {"phase": "Bound"}})
    plan = _plan(run, claim)
    assert plan.supporting == ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "shared-src"},
                                "spec": {"resources": {"requests": {"storage": "5Gi"}}}},)


def test_input_with_no_run_and_no_pipeline_is_bad_input() -> None:
    with pytest.raises(ReplayInputError) as err:
        _plan(_task("build"))
    assert str(err.value) == bad_input.nothing_to_run("tasks.yaml")


def test_a_custom_task_stands_in_as_a_simulated_task_with_no_requests() -> None:
    entry = {"name": "approve", "taskRef": {"apiVersion": "example.dev/v1", "kind": "Approval"}, "runAfter": ["build"],
             "workspaces": [{"name": "src", "workspace": "source"}]}
    plan = _plan(_task("build"), _run({"name": "r"}, {"workspaces": [SOURCE_VCT], "pipelineSpec": {
        "workspaces": [{"name": "source"}], "tasks": [{"name": "build", "taskRef": {"name": "build"}}, entry]}}))
    (run,) = plan.runs
    stand_in = run.manifest["spec"]["pipelineSpec"]["tasks"][1]
    assert "taskRef" not in stand_in and stand_in["runAfter"] == ["build"] and stand_in["workspaces"] == entry["workspaces"]
    assert stand_in["taskSpec"]["workspaces"] == [{"name": "src"}]
    assert all("computeResources" not in step for step in stand_in["taskSpec"]["steps"])
    assert run.notes == ("approve is a custom task (example.dev/v1 Approval): it runs as a simulated task with no requests",)


def test_each_run_says_what_cannot_be_simulated() -> None:
    tasks = [
        {"name": "build", "taskSpec": {"results": [{"name": "digest"}, {"name": "changed"}, {"name": "shards", "type": "array"}],
                                       "steps": [{"name": "s", "image": "x"}]}},
        {"name": "deploy", "params": [{"name": "image", "value": "$(tasks.build.results.digest)"}],
         "when": [{"input": "$(tasks.build.results.changed)", "operator": "in", "values": ["true"]}],
         "taskSpec": {"params": [{"name": "image"}], "steps": [{"name": "s", "image": "x"}]}},
        {"name": "test", "matrix": {"params": [{"name": "shard", "value": "$(tasks.build.results.shards[*])"}]},
         "taskSpec": {"params": [{"name": "shard"}], "steps": [{"name": "s", "image": "x"}]}},
    ]
    plan = _plan(_run({"name": "release"}, {"pipelineSpec": {"tasks": tasks}, "status": "PipelineRunPending",
                                           "taskRunTemplate": {"podTemplate": {"schedulerName": "other-scheduler"}}}))
    assert plan.runs[0].notes == (
        'result build.digest read by deploy gets "replay-placeholder"',
        'result build.shards read by test gets "replay-placeholder"',
        "when of deploy reads build.changed: the placeholder decides it",
        "matrix of test fans out over build.shards: one combination, from the placeholder",
        "written PipelineRunPending: started at once",
        "its pod template names schedulerName other-scheduler, not tkn-scheduler: kept, so those pods go to other-scheduler",
    )
    build = plan.runs[0].manifest["spec"]["pipelineSpec"]["tasks"][0]["taskSpec"]
    assert build["metadata"]["annotations"] == {RUN_FOR: "2s", RESULT + "digest": PLACEHOLDER, RESULT + "changed": PLACEHOLDER,
                                                RESULT + "shards": '["replay-placeholder"]'}


def test_the_runs_pods_are_kept_to_the_pool_and_its_scheduler_name_left_as_written() -> None:
    spec = {"pipelineSpec": {"tasks": []},
            "taskRunTemplate": {"serviceAccountName": "builder", "podTemplate": {"schedulerName": "tkn-scheduler", "nodeSelector": {"disk": "ssd"}}},
            "taskRunSpecs": [{"pipelineTaskName": "a", "podTemplate": {"nodeSelector": {"gpu": "yes"}}}, {"pipelineTaskName": "b", "serviceAccountName": "deployer"}]}
    plan = _plan(_run({"name": "r", "namespace": "ci", "labels": {"team": "core"}}, spec))
    manifest = plan.runs[0].manifest
    assert manifest["metadata"] == {"name": "r", "labels": {"team": "core"}}
    assert manifest["spec"]["taskRunTemplate"]["podTemplate"] == {"schedulerName": "tkn-scheduler", "nodeSelector": {"disk": "ssd", **POOL}}
    assert manifest["spec"]["taskRunSpecs"][0]["podTemplate"] == {"nodeSelector": {"gpu": "yes", **POOL}}
    assert [(o["kind"], o["metadata"]["name"]) for o in plan.supporting] == [("ServiceAccount", "builder"), ("ServiceAccount", "deployer")]
    assert plan.runs[0].notes == ()


def test_two_runs_of_one_name_are_told_apart() -> None:
    spec: dict[str, Any] = {"pipelineSpec": {"tasks": []}}
    plan = _plan(_run({"name": "build"}, spec), _run({"generateName": "build-"}, spec, origin="runs.yaml#2"))
    assert [r.base for r in plan.runs] == ["build", "build-2"]
    assert plan.runs[1].named("build-2-c1")["metadata"]["name"] == "build-2-c1"
