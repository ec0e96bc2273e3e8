"""The held-out batch (tests/mutants/held_out.py): each wrong rule differs from the reference's on one concrete input and agrees on an ordinary one; each mutant applies."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from reference_scheduler.core import pipeline_graph, release, tekton_pods
from reference_scheduler.core.claims import ClaimState, GroupClaim, unreserve
from reference_scheduler.core.claims import release as release_claim
from reference_scheduler.core.headroom import ActiveReservation, GroupDemand, NodeView, PodUsage, fit, foreign_reserved
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import node_allocatable, tolerates, untolerated_taint
from reference_scheduler.core.peaks import group_peak
from reference_scheduler.core.pipeline_graph import PipelineGraph, TaskNode, build_pipeline_graph, matrix_fan_out
from reference_scheduler.core.pod_requests import pod_effective_request
from reference_scheduler.core.release import ReleaseReason, release_decision
from reference_scheduler.core.resources import ZERO, Resources
from reference_scheduler.core.tekton_pods import predict_task_pod_request
from reference_scheduler.core.volume_binding import SELECTED_NODE_ANNOTATION, group_claim_names, pv_admits_node
from reference_scheduler.core.volume_provisioning import ProvisionState, provisioning_check
from reference_scheduler.core.workspace_bindings import co_locating_workspaces
from reference_scheduler.runtime import cluster_view, records
from reference_scheduler.runtime.informer import Informer
from reference_scheduler.runtime.records import with_claim
from tests.mutants import held_out as held
from tests.mutants.faults import MUTANTS, RULES

pytestmark = pytest.mark.unit

MI = 1024 * 1024
ROOT = Path(__file__).resolve().parents[2]


# --- the batch as a whole ---------------------------------------------------------------------


def test_every_fault_of_the_batch_is_measured_caught_or_explained() -> None:
    assert len(held.HELD_OUT) >= 12
    assert set(held.MEASURED) == set(held.HELD_OUT)
    for name, mutant in held.HELD_OUT.items():
        assert name.startswith("held_") and mutant.name == name
        assert MUTANTS[name] is mutant
        assert mutant.rule in RULES, name
        assert bool(mutant.caught_by) != bool(mutant.pending), f"{name}: caught by a scenario, or pending with the reason"
        assert mutant.pending != held.PENDING
        assert mutant.fault and "\n" not in mutant.fault
    assert set(held.PURE_FAULTS) <= set(held.HELD_OUT)


def test_importing_the_batch_first_still_registers_it_in_the_catalogue() -> None:
    code = (
        "from tests.mutants.held_out import HELD_OUT\n"
        "from tests.mutants.faults import MUTANTS\n"
        "assert HELD_OUT and all(MUTANTS[name] is mutant for name, mutant in HELD_OUT.items())\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("name", sorted(held.HELD_OUT))
def test_each_mutant_applies_alone_and_the_scheduler_still_builds(name: str) -> None:
    """In a fresh process: apply, import the entry point, build a Scheduler offline (nothing is started)."""
    code = (
        "from tests.mutants.faults import MUTANTS\n"
        f"MUTANTS[{name!r}].apply()\n"
        "import kubernetes, reference_scheduler.main\n"
        "from reference_scheduler.runtime.scheduler import Scheduler\n"
        "Scheduler(kubernetes.client.ApiClient(), scheduler_name='held-out').stop()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


# --- headroom ------------------------------------------------------------------------------------

A = GroupKey("ci", "a", "source")
A_CACHE = GroupKey("ci", "a", "cache")
B = GroupKey("ci", "b", "source")


def seed_node() -> NodeView:
    """The contract's worked example: 4800m, A's 200m pod running under a 3800m peak."""
    return NodeView("n1", Resources(cpu=4800), 110, (PodUsage("a-1", Resources(cpu=200), A),))


SEED = (ActiveReservation(A, "n1", Resources(cpu=3800)),)


class TestCapacityForAllocatable:
    NODE = {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "5", "memory": "9Gi"}, "allocatable": {"cpu": "4800m", "memory": "8Gi"}}}

    def test_the_kept_back_room_is_handed_out(self) -> None:
        assert node_allocatable(self.NODE) == Resources(4800, 8192 * MI)
        assert held.room_from_capacity(self.NODE) == Resources(5000, 9216 * MI)

    def test_a_node_keeping_nothing_back_reads_the_same(self) -> None:
        same = {"status": {"capacity": {"cpu": "4800m", "memory": "8Gi"}, "allocatable": {"cpu": "4800m", "memory": "8Gi"}}}
        without = {"status": {"allocatable": {"cpu": "4800m"}}}
        for node in (same, without):
            assert held.room_from_capacity(node) == node_allocatable(node)


class TestOwnRunGroupsHoldNothing:
    def test_a_sibling_group_of_the_same_run_holds_nothing(self) -> None:
        assert foreign_reserved(seed_node(), SEED, excluding=A_CACHE) == Resources(cpu=3600)
        assert held.reserved_by_other_runs(seed_node(), SEED, excluding=A_CACHE) == ZERO

    def test_other_runs_and_plain_pods_see_the_reference_residual(self) -> None:
        for excluding in (B, None, A):
            assert held.reserved_by_other_runs(seed_node(), SEED, excluding=excluding) == foreign_reserved(seed_node(), SEED, excluding=excluding)

    def test_the_runs_second_group_opens_where_the_reference_turns_it_away(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from reference_scheduler.core import headroom

        pod = PodUsage("a-cache-1", Resources(cpu=500), A_CACHE)
        demand = GroupDemand(A_CACHE, Resources(cpu=2000))
        assert [f.requested for f in fit(seed_node(), SEED, pod, demand)] == [2000]  # type: ignore[union-attr]
        monkeypatch.setattr(headroom, "foreign_reserved", held.reserved_by_other_runs)
        assert fit(seed_node(), SEED, pod, demand) == []


class TestFailedPodsHoldRoom:
    def test_a_failed_pod_is_not_finished(self) -> None:
        failed = {"status": {"phase": "Failed"}}
        assert cluster_view.is_terminal(failed)
        assert not held.finished_only_when_succeeded(failed)

    @pytest.mark.parametrize("phase", ["Succeeded", "Running", "Pending", None])
    def test_other_phases_read_as_the_reference(self, phase: str | None) -> None:
        pod = {"status": {"phase": phase}}
        assert held.finished_only_when_succeeded(pod) == cluster_view.is_terminal(pod)


# --- effective pod requests ------------------------------------------------------------------------


def _container(name: str, cpu: str, memory: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": {"cpu": cpu, "memory": memory}}, **extra}


class TestNativeSidecarsAsInit:
    # docs/contract.md section 6.1, step 8's second worked example.
    POD = {
        "initContainers": [
            _container("prepare", "200m", "100Mi"),
            _container("place-scripts", "200m", "100Mi"),
            _container("sidecar-helper", "100m", "32Mi", restartPolicy="Always"),
        ],
        "containers": [_container("step-work", "400m", "64Mi")],
    }

    def test_the_sidecar_no_longer_adds_to_the_containers(self) -> None:
        assert pod_effective_request(self.POD) == Resources(500, 100 * MI)
        assert held.sidecars_taken_for_init(self.POD) == Resources(400, 100 * MI)

    def test_a_pod_without_native_sidecars_is_the_same(self) -> None:
        pod = {"initContainers": [_container("prepare", "2", "1Gi")], "containers": [_container("a", "1", "1Gi"), _container("b", "500m", "64Mi")]}
        assert held.sidecars_taken_for_init(pod) == pod_effective_request(pod)


class TestStepTemplateReplacedWhole:
    # docs/contract.md section 6.1's third worked example: 800m / 640Mi.
    TASK = {
        "stepTemplate": {"computeResources": {"requests": {"cpu": "200m", "memory": "256Mi"}}},
        "steps": [
            {"name": "a", "computeResources": {"requests": {"cpu": "400m"}}},
            {"name": "b"},
            {"name": "c", "computeResources": {"requests": {"memory": "128Mi"}}},
        ],
    }

    def test_a_template_only_key_is_lost(self) -> None:
        template = {"requests": {"cpu": "200m", "memory": "256Mi"}}
        step = {"requests": {"cpu": "400m"}}
        assert tekton_pods._merge(template, step) == {"requests": {"cpu": "400m", "memory": "256Mi"}}
        assert held.merge_replacing_maps(template, step) == {"requests": {"cpu": "400m"}}

    def test_the_worked_example_is_predicted_too_small(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert predict_task_pod_request(self.TASK) == Resources(800, 640 * MI)
        monkeypatch.setattr(tekton_pods, "_merge", held.merge_replacing_maps)
        assert predict_task_pod_request(self.TASK) == Resources(600, 384 * MI)

    def test_steps_without_a_template_are_the_same(self) -> None:
        for step in ({"requests": {"cpu": "1"}}, {}):
            assert held.merge_replacing_maps({}, step) == tekton_pods._merge({}, step)
        full = {"requests": {"cpu": "1", "memory": "1Gi"}}
        assert held.merge_replacing_maps({"requests": {"cpu": "2"}}, full) == tekton_pods._merge({"requests": {"cpu": "2"}}, full)


class TestTaskLevelShareRoundsUp:
    TASK = {"steps": [{"name": "a", "computeResources": {"requests": {"cpu": "100m"}}}, {"name": "b", "computeResources": {"requests": {"cpu": "2"}}}, {"name": "c"}]}
    RUN_SPEC = {"pipelineTaskName": "t", "computeResources": {"requests": {"cpu": "1"}}}

    def test_one_cpu_over_three_steps(self) -> None:
        assert tekton_pods._divided({"cpu": "1"}, 3, "t") == {"cpu": "333m"}
        assert held.divided_rounding_up({"cpu": "1"}, 3, "t") == {"cpu": "334m"}

    def test_the_worked_example_is_predicted_too_large(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert predict_task_pod_request(self.TASK, task_run_spec=self.RUN_SPEC).cpu == 999
        monkeypatch.setattr(tekton_pods, "_divided", held.divided_rounding_up)
        assert predict_task_pod_request(self.TASK, task_run_spec=self.RUN_SPEC).cpu == 1002

    def test_an_even_share_is_the_same(self) -> None:
        amounts = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}
        assert held.divided_rounding_up(amounts, 2, "t") == tekton_pods._divided(amounts, 2, "t")
        assert held.divided_rounding_up(None, 2, "t") is None


class TestLimitRangeSparesTektonInit:
    LIMIT_RANGE = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "1"}}]}}
    TASK = {"steps": [{"name": "work", "computeResources": {"requests": {"cpu": "100m"}}}]}

    def test_prepare_gets_no_default_request(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert predict_task_pod_request(self.TASK, limit_range=self.LIMIT_RANGE).cpu == 1000  # prepare: the whole 1 CPU
        monkeypatch.setattr(tekton_pods, "_apply_api_defaults", held.api_defaults_sparing_tekton_init)
        assert predict_task_pod_request(self.TASK, limit_range=self.LIMIT_RANGE).cpu == 100

    def test_steps_and_sidecars_get_it_as_before(self) -> None:
        items = tekton_pods._limit_range_items(self.LIMIT_RANGE)
        for name in ("step-work", "sidecar-db"):
            ours, theirs = {"name": name}, {"name": name}
            held.api_defaults_sparing_tekton_init(ours, items)
            tekton_pods._apply_api_defaults(theirs, items)
            assert ours == theirs == {"name": name, "resources": {"requests": {"cpu": "1"}}}

    def test_without_a_limit_range_the_prediction_is_the_same(self, monkeypatch: pytest.MonkeyPatch) -> None:
        before = predict_task_pod_request(self.TASK)
        monkeypatch.setattr(tekton_pods, "_apply_api_defaults", held.api_defaults_sparing_tekton_init)
        assert predict_task_pod_request(self.TASK) == before == Resources(cpu=100)


# --- peaks ---------------------------------------------------------------------------------------


def task(name: str, cpu: int, *deps: str, is_finally: bool = False) -> TaskNode:
    return TaskNode(name, frozenset({"source"}), frozenset(deps), is_finally, 0, Resources(cpu), 1)


class TestFinallyInSequence:
    GRAPH = PipelineGraph([task("build", 1000), task("notify", 500, "build", is_finally=True), task("report", 700, "build", is_finally=True)])

    def test_two_finally_tasks_count_the_larger_not_the_sum(self) -> None:
        names = ["build", "notify", "report"]
        assert group_peak(self.GRAPH, names) == Resources(cpu=1200)
        assert group_peak(held.finally_in_sequence(self.GRAPH), names) == Resources(cpu=1000)

    def test_one_finally_task_is_the_same(self) -> None:
        graph = PipelineGraph([task("a", 300), task("b", 300), task("report", 800, "a", "b", is_finally=True)])
        assert group_peak(held.finally_in_sequence(graph), ["a", "b", "report"]) == group_peak(graph, ["a", "b", "report"]) == Resources(cpu=800)


class TestMatrixIncludeAlwaysNew:
    @staticmethod
    def include(name: str, **params: str) -> dict[str, Any]:
        return {"name": name, "params": [{"name": k, "value": v} for k, v in params.items()]}

    def test_the_worked_example_counts_four_not_three(self) -> None:
        matrix = {"params": [{"name": "x", "value": ["a", "b"]}], "include": [self.include("i1", x="a"), self.include("i2", x="c")]}
        assert matrix_fan_out(matrix) == 3
        assert held.fan_out_counting_every_include(matrix) == 4

    def test_matrices_without_include_or_without_params_are_the_same(self) -> None:
        for matrix in (
            {"params": [{"name": "os", "value": ["linux", "mac"]}, {"name": "arch", "value": ["amd64", "arm64"]}]},
            {"include": [self.include("i1", x="a"), self.include("i2", x="b")]},
            {"params": [{"name": "x", "value": "$(tasks.t.results.xs[*])"}], "include": [self.include("i1", x="a")]},
            None,
        ):
            assert held.fan_out_counting_every_include(matrix) == matrix_fan_out(matrix)


def spec_task(name: str, cpu: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "taskSpec": {"steps": [{"name": "s", "computeResources": {"requests": {"cpu": cpu}}}]},
        "workspaces": [{"name": "w", "workspace": "source"}],
        **extra,
    }


class TestResultDepsFromParamsOnly:
    WHEN = {"tasks": [spec_task("check", "1"), spec_task("deploy", "1", when=[{"input": "$(tasks.check.results.ok)", "operator": "in", "values": ["yes"]}])]}
    PARAMS = {"tasks": [spec_task("check", "1"), spec_task("deploy", "1", params=[{"name": "ok", "value": "$(tasks.check.results.ok)"}])]}

    def test_a_when_expression_orders_nothing(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert group_peak(build_pipeline_graph(self.WHEN, task_specs={}), ["check", "deploy"]) == Resources(cpu=1000)
        monkeypatch.setattr(pipeline_graph, "_dependency_strings", held.dependency_strings_of_params)
        assert group_peak(build_pipeline_graph(self.WHEN, task_specs={}), ["check", "deploy"]) == Resources(cpu=2000)

    def test_a_param_still_orders_the_tasks(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(pipeline_graph, "_dependency_strings", held.dependency_strings_of_params)
        graph = build_pipeline_graph(self.PARAMS, task_specs={})
        assert graph.reaches("check", "deploy")
        assert group_peak(graph, ["check", "deploy"]) == Resources(cpu=1000)


# --- grouping ------------------------------------------------------------------------------------


class TestEmptyDirCoLocates:
    def test_an_empty_dir_workspace_ties_its_tasks(self) -> None:
        spec = {"workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "src"}}, {"name": "scratch", "emptyDir": {}}]}
        assert co_locating_workspaces(spec) == frozenset({"source"})
        assert held.co_locating_with_empty_dir(spec) == frozenset({"source", "scratch"})

    def test_claims_templates_and_config_read_as_the_reference(self) -> None:
        spec = {
            "workspaces": [
                {"name": "source", "volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
                {"name": "cfg", "configMap": {"name": "c"}},
                {"name": "creds", "secret": {"secretName": "s"}},
            ]
        }
        assert held.co_locating_with_empty_dir(spec) == co_locating_workspaces(spec) == frozenset({"source"})


class TestImplicitWorkspacesInScriptsOnly:
    def test_the_contracts_env_value_groups_nothing(self) -> None:
        spec = {"steps": [{"name": "s", "image": "busybox", "env": [{"name": "SOURCE_DIR", "value": "$(workspaces.source.path)"}]}]}
        assert pipeline_graph._propagated_workspaces(spec) == {"source"}
        assert held.workspaces_named_in_scripts(spec) == set()

    def test_a_script_is_read_as_the_reference_reads_it(self) -> None:
        spec = {"steps": [{"name": "s", "script": 'cd $(workspaces.source.path) && ls $(workspaces["cache"].path)'}]}
        assert held.workspaces_named_in_scripts(spec) == pipeline_graph._propagated_workspaces(spec) == {"source", "cache"}


# --- release -------------------------------------------------------------------------------------


def condition(status: str, reason: str = "") -> dict[str, Any]:
    return {"type": "Succeeded", "status": status, **({"reason": reason} if reason else {})}


class TestSkippedTasksHold:
    RUN = {
        "metadata": {"name": "r"},
        "status": {
            "conditions": [condition("Unknown", "Running")],
            "childReferences": [{"pipelineTaskName": "build", "name": "r-build"}],
            "skippedTasks": [{"name": "deploy", "reason": "When Expressions evaluated to false"}],
        },
    }
    TASK_RUNS = {"r-build": {"status": {"conditions": [condition("True", "Succeeded")]}}}

    def test_a_group_with_a_skipped_task_is_held(self) -> None:
        decide = held.deciding_without_skipped(release_decision)
        assert release_decision(["build", "deploy"], self.RUN, self.TASK_RUNS) == release_decision(["build"], self.RUN, self.TASK_RUNS)
        assert release_decision(["build", "deploy"], self.RUN, self.TASK_RUNS).reason == ReleaseReason.TASKS_DONE
        verdict = decide(["build", "deploy"], self.RUN, self.TASK_RUNS)
        assert (verdict.release, verdict.reason) == (False, ReleaseReason.TASK_NOT_STARTED)

    def test_a_group_without_skipped_tasks_and_a_gone_run_are_judged_as_the_reference(self) -> None:
        decide = held.deciding_without_skipped(release_decision)
        assert decide(["build"], self.RUN, self.TASK_RUNS) == release_decision(["build"], self.RUN, self.TASK_RUNS)
        assert decide(["build"], None, {}) == release_decision(["build"], None, {})
        assert held.without_skipped_tasks(None) is None


class TestZeroTimeoutExpires:
    @staticmethod
    def run(timeout: str) -> dict[str, Any]:
        return {
            "metadata": {"name": "r"},
            "spec": {"timeouts": {"pipeline": timeout}},
            "status": {
                "startTime": "2026-12-05T12:00:00Z",
                "conditions": [condition("Unknown", "Running")],
                "childReferences": [{"pipelineTaskName": "build", "name": "r-build"}],
            },
        }

    TASK_RUNS = {"r-build": {"status": {"conditions": [condition("Unknown", "Running")]}}}
    AT = datetime(2026, 12, 5, 12, 0, 5, tzinfo=timezone.utc)

    def test_no_timeout_reads_as_a_zero_one(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert release._timeout(self.run("0s"), "pipeline") is None
        assert held.timeout_zero_included(self.run("0s"), "pipeline") == timedelta(0)
        assert release_decision(["build"], self.run("0s"), self.TASK_RUNS, now=self.AT).reason == ReleaseReason.TASK_RUNNING
        monkeypatch.setattr(release, "_timeout", held.timeout_zero_included)
        verdict = release_decision(["build"], self.run("0s"), self.TASK_RUNS, now=self.AT)
        assert (verdict.release, verdict.reason) == (True, ReleaseReason.PIPELINE_RUN_TIMED_OUT)

    def test_a_real_timeout_is_the_same(self, monkeypatch: pytest.MonkeyPatch) -> None:
        before = [release_decision(["build"], self.run("10s"), self.TASK_RUNS, now=self.AT + timedelta(seconds=s)) for s in (0, 6)]
        monkeypatch.setattr(release, "_timeout", held.timeout_zero_included)
        after = [release_decision(["build"], self.run("10s"), self.TASK_RUNS, now=self.AT + timedelta(seconds=s)) for s in (0, 6)]
        assert before == after
        assert [v.release for v in after] == [False, True]


# --- the record ----------------------------------------------------------------------------------

RESERVED = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1", "p2"}), 1)


class TestReleaseDropsHolders:
    def test_the_released_group_forgets_who_held_it(self) -> None:
        assert release_claim(RESERVED) == GroupClaim(ClaimState.RELEASED, "n1", frozenset({"p1", "p2"}), 1)
        assert held.release_dropping_holders(RESERVED) == GroupClaim(ClaimState.RELEASED, "n1", frozenset(), 1)

    def test_a_pending_or_released_group_is_released_as_by_the_reference(self) -> None:
        for claim in (GroupClaim(claim_generation=2), release_claim(RESERVED)):
            assert held.release_dropping_holders(claim) == release_claim(claim)


class TestJoinRestampsReservedAt:
    ENTRY = {"name": "g", "state": "Reserved", "node": "n1", "holders": ["p1"], "claimGeneration": 1, "reservedAt": "2020-01-01T00:00:00Z"}

    def test_a_join_moves_reserved_at(self) -> None:
        assert with_claim(self.ENTRY, RESERVED)["reservedAt"] == "2020-01-01T00:00:00Z"
        assert held.with_claim_restamped(self.ENTRY, RESERVED)["reservedAt"] != "2020-01-01T00:00:00Z"

    def test_a_rollback_or_a_release_is_written_as_by_the_reference(self) -> None:
        for claim in (GroupClaim(claim_generation=1), release_claim(RESERVED)):
            assert held.with_claim_restamped(self.ENTRY, claim) == with_claim(self.ENTRY, claim)


class TestActiveLabelWhilePending:
    def test_a_pending_group_beside_a_released_one_keeps_the_label(self) -> None:
        entries = [{"name": "a", "state": "Released"}, {"name": "b", "state": "Pending"}]
        assert records._active_value(entries) is None
        assert held.active_unless_all_released(entries) == "true"

    @pytest.mark.parametrize("states", [["Reserved"], ["Released"], ["Released", "Reserved"], []])
    def test_reserved_or_all_released_read_as_the_reference(self, states: list[str]) -> None:
        entries: list[dict[str, Any]] = [{"name": str(i), "state": s} for i, s in enumerate(states)]
        assert held.active_unless_all_released(entries) == records._active_value(entries)


# --- rollback ------------------------------------------------------------------------------------


class TestRollbackKeepsReserved:
    def test_the_last_holders_failed_bind_leaves_the_claim_reserved(self) -> None:
        claim = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)
        assert unreserve(claim, "p1", 1) == GroupClaim(ClaimState.PENDING, None, frozenset(), 1)
        assert held.unreserve_keeping_claim(claim, "p1", 1) == GroupClaim(ClaimState.RESERVED, "n1", frozenset(), 1)

    def test_a_rollback_with_another_holder_left_is_the_same(self) -> None:
        for uid in ("p1", "stranger"):
            assert held.unreserve_keeping_claim(RESERVED, uid, 1) == unreserve(RESERVED, uid, 1)


# --- restart and recovery ------------------------------------------------------------------------


def _pod(name: str, version: str) -> dict[str, Any]:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"namespace": "ci", "name": name, "resourceVersion": version}}


class TestRelistForgetsDeletions:
    OLD = {("ci", "kept"): _pod("kept", "1"), ("ci", "changed"): _pod("changed", "1"), ("ci", "gone"): _pod("gone", "1")}
    FRESH = [_pod("kept", "1"), _pod("changed", "2"), _pod("new", "3")]

    def relist(self, monkeypatch: pytest.MonkeyPatch, relist: Any | None) -> list[tuple[str, str]]:
        cache = Informer("pods", lambda **_: {"kind": "PodList", "apiVersion": "v1", "items": [dict(p) for p in self.FRESH]}, stop=threading.Event())
        cache._store = dict(self.OLD)
        seen: list[tuple[str, str]] = []
        cache.add_handler(lambda kind, obj, old: seen.append((kind, obj["metadata"]["name"])))
        if relist is not None:
            monkeypatch.setattr(Informer, "_relist", relist)
        cache._relist()
        assert sorted(o["metadata"]["name"] for o in cache.list()) == ["changed", "kept", "new"]  # the cache itself is right
        return sorted(seen)

    def test_the_handlers_never_hear_of_the_deleted_pod(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert self.relist(monkeypatch, None) == [("ADDED", "new"), ("DELETED", "gone"), ("MODIFIED", "changed")]
        assert self.relist(monkeypatch, held.relist_forgetting_deletions) == [("ADDED", "new"), ("MODIFIED", "changed")]

    def test_without_a_deletion_the_events_are_the_same(self) -> None:
        old = {k: v for k, v in self.OLD.items() if k != ("ci", "gone")}
        events = held.relist_events_without_deletions(old, {("ci", p["metadata"]["name"]): p for p in self.FRESH})
        assert sorted((kind, obj["metadata"]["name"]) for kind, obj, _ in events) == [("ADDED", "new"), ("MODIFIED", "changed")]


# --- node checks ---------------------------------------------------------------------------------


class TestTolerationIgnoresEffect:
    NO_EXECUTE = {"key": "gpu", "operator": "Exists", "effect": "NoExecute"}
    TAINT = {"key": "gpu", "value": "a100", "effect": "NoSchedule"}

    def test_a_no_execute_toleration_passes_a_no_schedule_taint(self) -> None:
        assert not tolerates(self.NO_EXECUTE, self.TAINT)
        assert held.tolerates_any_effect(self.NO_EXECUTE, self.TAINT)

    def test_the_node_check_lets_the_pod_on(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from reference_scheduler.core import node_checks

        pod = {"spec": {"tolerations": [self.NO_EXECUTE]}}
        node = {"metadata": {"name": "n1"}, "spec": {"taints": [self.TAINT]}}
        assert untolerated_taint(pod, node) is not None
        monkeypatch.setattr(node_checks, "tolerates", held.tolerates_any_effect)
        assert untolerated_taint(pod, node) is None

    @pytest.mark.parametrize(
        "toleration",
        [
            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "gpu", "operator": "Exists"},
            {"key": "gpu", "operator": "Equal", "value": "v100", "effect": "NoSchedule"},
            {"key": "other", "operator": "Exists", "effect": "NoSchedule"},
        ],
    )
    def test_a_toleration_of_the_taints_effect_or_of_every_effect_is_the_same(self, toleration: dict[str, str]) -> None:
        assert held.tolerates_any_effect(toleration, self.TAINT) == tolerates(toleration, self.TAINT)


class TestNotReadyNodeIsLost:
    @staticmethod
    def node(ready: str | None) -> dict[str, Any]:
        conditions = [] if ready is None else [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}]
        return {"metadata": {"name": "n1"}, "status": {"conditions": conditions}}

    class Nodes:
        def __init__(self, node: dict[str, Any]) -> None:
            self.node = node

        def get(self, namespace: str, name: str) -> dict[str, Any] | None:
            return self.node if name == "n1" else None

    @pytest.mark.parametrize("ready", ["False", "Unknown"])
    def test_a_not_ready_node_reads_as_deleted(self, ready: str) -> None:
        nodes = self.Nodes(self.node(ready))
        assert nodes.get("", "n1") is not None  # what the reference's releaser sees: the node is there
        assert held.looks_lost(self.node(ready))
        assert held._ReadyNodesOnly(nodes).get("", "n1") is None

    @pytest.mark.parametrize("ready", ["True", None])
    def test_a_ready_node_or_one_without_conditions_is_there(self, ready: str | None) -> None:
        nodes = self.Nodes(self.node(ready))
        assert held._ReadyNodesOnly(nodes).get("", "n1") is nodes.node
        assert held._ReadyNodesOnly(nodes).get("", "n2") is None


# --- volumes -------------------------------------------------------------------------------------


class TestGroupVolumesIgnoredOnOpen:
    POD = {"metadata": {"name": "p"}, "spec": {"volumes": [{"name": "ws", "persistentVolumeClaim": {"claimName": "pvc-1a2b"}}]}}
    RUN = {"spec": {"workspaces": [{"name": "cache", "persistentVolumeClaim": {"claimName": "team-cache"}}, {"name": "source", "volumeClaimTemplate": {}}]}}

    def test_a_later_tasks_claim_is_left_out(self) -> None:
        assert group_claim_names(self.POD, self.RUN, {"cache", "source"}) == ("pvc-1a2b", "team-cache")
        assert held.pod_claims_only(self.POD, self.RUN, {"cache", "source"}) == ("pvc-1a2b",)

    def test_a_group_of_template_workspaces_is_the_same(self) -> None:
        assert held.pod_claims_only(self.POD, self.RUN, {"source"}) == group_claim_names(self.POD, self.RUN, {"source"}) == ("pvc-1a2b",)


def node_named(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def pinned_volume(*, field: str, key: str) -> dict[str, Any]:
    requirement = {"key": key, "operator": "In", "values": ["n2"]}
    return {"metadata": {"name": "pv"}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [{field: [requirement]}]}}}}


class TestVolumeAffinitySeesNodeName:
    def test_match_fields_on_the_name_admits_the_named_node(self) -> None:
        volume = pinned_volume(field="matchFields", key="metadata.name")
        assert not pv_admits_node(volume, node_named("n2"))
        assert held.pv_admits_named_node(volume, node_named("n2"))

    @pytest.mark.parametrize("name", ["n1", "n2"])
    def test_a_hostname_pin_or_no_affinity_reads_as_the_reference(self, name: str) -> None:
        volumes: list[dict[str, Any]] = [pinned_volume(field="matchExpressions", key="kubernetes.io/hostname"), {"spec": {}}]
        for volume in volumes:
            assert held.pv_admits_named_node(volume, node_named(name)) == pv_admits_node(volume, node_named(name))


class TestSelectedClaimCountsAsBound:
    @staticmethod
    def claim(*, selected: str | None, bound: bool = False) -> dict[str, Any]:
        annotations = {SELECTED_NODE_ANNOTATION: selected} if selected else {}
        return {
            "metadata": {"name": "src", "annotations": annotations},
            "spec": {"volumeName": "pv-src"} if bound else {},
            "status": {"phase": "Bound" if bound else "Pending"},
        }

    def test_a_claim_still_provisioning_lets_the_pod_bind(self) -> None:
        claim, node = self.claim(selected="n1"), node_named("n1")
        assert provisioning_check("src", claim, None, node, "n1").state is ProvisionState.WAITING
        assert held.provisioning_trusting_selection("src", claim, None, node, "n1").state is ProvisionState.BOUND

    def test_bound_failed_and_stale_checks_are_the_same(self) -> None:
        node = node_named("n1")
        cases: list[tuple[dict[str, Any] | None, dict[str, Any] | None, bool]] = [
            (self.claim(selected="n1", bound=True), {"metadata": {"name": "pv-src"}, "spec": {}}, True),  # Bound here
            (self.claim(selected=None), None, True),  # the provisioner took the annotation off
            (self.claim(selected="n2"), None, True),  # selects another node
            (None, None, True),  # deleted
            (self.claim(selected=None), None, False),  # the cache is older than our annotation
        ]
        for claim, volume, fresh in cases:
            assert held.provisioning_trusting_selection("src", claim, volume, node, "n1", fresh=fresh) == provisioning_check(
                "src", claim, volume, node, "n1", fresh=fresh
            )
