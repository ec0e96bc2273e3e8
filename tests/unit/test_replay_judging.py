"""rescon replay's verdict on one run: its record against the suite's own groups and peaks, its groups' nodes, the monitor's violations."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.contract.record import GroupSpec, GroupStatus, Record, State
from harness.replay.classify import classify
from harness.replay.judging import judge_run, judged_copy
from harness.replay.loading import Document
from harness.replay.plan import PlannedRun, plan_replay
from harness.report.outcomes import Outcome

pytestmark = pytest.mark.unit

Obj = dict[str, Any]

GIT_CLONE = {"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": "git-clone"},
             "spec": {"workspaces": [{"name": "output"}], "results": [{"name": "shards", "type": "array"}],
                      "steps": [{"name": "clone", "image": "git", "computeResources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def _tasks(compile_matrix: Obj | None = None) -> list[Obj]:
    compile_: Obj = {"name": "compile", "runAfter": ["clone"], "workspaces": [{"name": "src", "workspace": "source"}],
                     "taskSpec": {"workspaces": [{"name": "src"}], "params": [{"name": "arch"}],
                                  "steps": [{"name": "make", "image": "gcc", "computeResources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}],
                                  "sidecars": [{"name": "cache", "image": "redis", "computeResources": {"requests": {"cpu": "200m"}}}]}}
    if compile_matrix:
        compile_["matrix"] = compile_matrix
    return [
        {"name": "clone", "taskRef": {"name": "git-clone"}, "workspaces": [{"name": "output", "workspace": "source"}]},
        compile_,
        {"name": "lint", "runAfter": ["clone"], "taskSpec": {"steps": [{"name": "l", "image": "x", "computeResources": {"requests": {"cpu": "500m"}}}]}},
    ]


FINALLY = [{"name": "report", "workspaces": [{"name": "r", "workspace": "source"}],
            "taskSpec": {"workspaces": [{"name": "r"}], "steps": [{"name": "r", "image": "x", "computeResources": {"requests": {"cpu": "100m"}}}]}}]
SOURCE = {"name": "source", "volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}}


def _planned(compile_matrix: Obj | None = None) -> PlannedRun:
    run = {"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "metadata": {"name": "build"},
           "spec": {"workspaces": [SOURCE], "pipelineSpec": {"workspaces": [{"name": "source"}], "tasks": _tasks(compile_matrix), "finally": FINALLY}}}
    plan = plan_replay(classify([Document("t#1", GIT_CLONE), Document("r#1", run)]), namespace="ns", scheduler_name="s", run_for="1s",
                       pool_selector={"rescon.dev/pool": "p"})
    return plan.runs[0]


def _ended(planned: PlannedRun, *, status: str = "True", reason: str = "Succeeded", children: bool = True) -> Obj:
    """_ended() is the run as the API shows it once Tekton has ended it: its resolved spec in status."""
    ended = copy.deepcopy(planned.manifest)
    ended["metadata"]["namespace"] = "ns"
    ended["status"] = {"pipelineSpec": copy.deepcopy(ended["spec"]["pipelineSpec"]),
                       "conditions": [{"type": "Succeeded", "status": status, "reason": reason, "message": "Tasks Completed: 4"}]}
    if children:
        ended["status"]["childReferences"] = [{"name": "build-clone", "kind": "TaskRun"}]
    return ended


def _pod(task: str, node: str | None, suffix: str = "") -> Obj:
    return {"metadata": {"name": f"build-{task}-pod{suffix}", "namespace": "ns",
                         "labels": {"tekton.dev/pipelineRun": "build", "tekton.dev/pipelineTask": task}},
            "spec": {"nodeName": node} if node else {}}


PODS = [_pod("clone", "w1"), _pod("compile", "w1"), _pod("lint", "w2"), _pod("report", "w1")]
GROUP_TASKS = ("clone", "compile", "report")


def _record(cpu_millis: int, memory_bytes: int, *, tasks: tuple[str, ...] = GROUP_TASKS, node: str = "w1") -> Record:
    return Record("ns", "build", "build", "uid-1", (GroupSpec("source", tasks, ("source",), cpu_millis, memory_bytes),),
                  (GroupStatus("source", State.RELEASED, node=node),), active_label=False)


def _judge(planned: PlannedRun, record: Record | None, **kwargs: Any) -> Any:
    values: dict[str, Any] = {"ended": _ended(planned), "seconds": 12.5, "pods": PODS, "record": record, "checks_records": True,
                              "task_specs": planned.task_specs}
    values.update(kwargs)
    return judge_run("build", "r#1", **values)


# By hand (docs/contract.md sections 4 and 6): clone, compile and report use `source`, a volumeClaimTemplate: one group;
# lint uses none. clone (100m, 64Mi) comes first; compile (1500m + its sidecar's 200m = 1700m, 1Gi) runs beside lint, which
# is not in the group; report (100m) is a finally task, after both. The group's peak is the largest of the three:
# 1700m CPU, 1Gi.
PEAK = (1700, 2**30)


def test_a_run_whose_record_holds_the_suites_groups_and_peaks_passes() -> None:
    result = _judge(_planned(), _record(*PEAK))
    assert (result.outcome, result.groups, result.problems, result.notes) == (Outcome.PASSED, 1, (), ())
    assert result.seconds == 12.5


def test_a_peak_that_is_not_the_suites_fails_with_both_figures() -> None:
    result = _judge(_planned(), _record(1500, 2**30))
    assert result.outcome is Outcome.FAILED
    assert result.problems == ("group source ['clone', 'compile', 'report'] reserves 1500m CPU, 1024Mi, the suite computes 1700m CPU, 1024Mi "
                               "(docs/contract.md section 6)",)


def test_a_matrix_counts_each_combination() -> None:
    # compile fans out over two architectures: 2 x 1700m = 3400m and 2 x 1Gi = 2Gi at once.
    planned = _planned({"params": [{"name": "arch", "value": ["amd64", "arm64"]}]})
    assert _judge(planned, _record(3400, 2 * 2**30)).outcome is Outcome.PASSED
    assert _judge(planned, _record(1700, 2**30)).outcome is Outcome.FAILED


def test_a_fan_out_over_a_result_counts_one_combination() -> None:
    planned = _planned({"params": [{"name": "arch", "value": "$(tasks.clone.results.shards[*])"}]})
    assert _judge(planned, _record(*PEAK)).outcome is Outcome.PASSED
    assert "matrix" not in judged_copy(_ended(planned), planned.task_specs)["status"]["pipelineSpec"]["tasks"][1]


def test_the_judged_copy_reads_a_referenced_task_from_the_simulated_task() -> None:
    planned = _planned()
    clone = judged_copy(_ended(planned), planned.task_specs)["status"]["pipelineSpec"]["tasks"][0]
    assert "taskRef" not in clone
    assert clone["taskSpec"]["steps"][0]["computeResources"] == {"requests": {"cpu": "100m", "memory": "64Mi"}}


def test_groups_that_are_not_the_suites_fail() -> None:
    result = _judge(_planned(), _record(*PEAK, tasks=("clone", "compile")))
    assert result.outcome is Outcome.FAILED
    assert result.problems == ("record ns/build has groups [(['clone', 'compile'], ['source'])], the suite reads "
                               "[(['clone', 'compile', 'report'], ['source'])] (docs/contract.md section 4)",)


def test_a_group_split_over_two_nodes_fails() -> None:
    pods = [*PODS, _pod("report", "w2", "-retry1")]
    result = _judge(_planned(), _record(*PEAK), pods=pods)
    assert result.outcome is Outcome.FAILED
    assert result.problems[0].startswith("group ['clone', 'compile', 'report'] ran on w1, w2 (docs/contract.md section 4)")


def test_a_record_that_names_another_node_fails() -> None:
    result = _judge(_planned(), _record(*PEAK, node="w2"))
    assert result.problems == ("group source's pods ran on w1, but its record names node w2",)


def test_a_group_that_ran_with_no_record_fails_unless_records_are_not_checked() -> None:
    assert _judge(_planned(), None).problems == (
        "groups [['clone', 'compile', 'report']] ran pods but the run has no ReservationRecord (docs/contract.md section 2)",)
    assert _judge(_planned(), None, checks_records=False).outcome is Outcome.PASSED


def test_a_violation_fails_a_run_that_succeeded() -> None:
    result = _judge(_planned(), _record(*PEAK), violations=["node-overcommitted at 4.2s: node w1 holds 5000m CPU"])
    assert (result.outcome, result.problems) == (Outcome.FAILED, ("node-overcommitted at 4.2s: node w1 holds 5000m CPU",))


def test_a_run_that_did_not_end_fails_naming_its_unbound_pods() -> None:
    result = _judge(_planned(), None, ended=None, pods=[_pod("clone", "w1"), _pod("compile", None)],
                    unfinished="did not end within 600s (replay_run_done): Unknown/Running: Tasks Completed: 1")
    assert result.outcome is Outcome.FAILED
    assert result.problems == ("did not end within 600s (replay_run_done): Unknown/Running: Tasks Completed: 1", "pods never bound: build-compile-pod")


def test_a_run_tekton_refused_is_no_verdict() -> None:
    planned = _planned()
    result = _judge(planned, None, ended=_ended(planned, status="False", reason="CouldntGetPipeline", children=False))
    assert result.outcome is Outcome.ERROR
    assert result.problems == ("Tekton refused it before any TaskRun: False/CouldntGetPipeline: Tasks Completed: 4",)


def test_a_run_that_failed_with_nothing_wrong_is_no_verdict() -> None:
    planned = _planned()
    result = _judge(planned, _record(*PEAK), ended=_ended(planned, status="False", reason="Failed"))
    assert result.outcome is Outcome.ERROR
    assert result.problems == ("it ended False/Failed: Tasks Completed: 4, and nothing the suite checks went wrong: no verdict on the scheduler",)
