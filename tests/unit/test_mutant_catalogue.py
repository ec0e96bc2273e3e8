"""The grown mutant catalogue (issue 11): each wrong rule is wrong in exactly the documented way.

Pure wrong rules are called directly beside the reference's rule. Patches are
applied under `keep` (monkeypatch restores what they replace), and the patched
reference is driven with fakes where a write decides the fault.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Callable

import pytest

from reference_scheduler.core import pipeline_graph, release
from reference_scheduler.core.claims import Claimed, ClaimConflict, ClaimState, GroupClaim, reserve, unreserve
from reference_scheduler.core.headroom import ActiveReservation, GroupDemand, NodeView, PodUsage, fit
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.peaks import group_peak
from reference_scheduler.core.pipeline_graph import PipelineGraph, TaskNode, build_pipeline_graph
from reference_scheduler.core.reasons import InsufficientResource
from reference_scheduler.core.release import ReleaseReason, release_decision
from reference_scheduler.core.resources import Resources
from tests.mutants import faults
from tests.mutants.faults import MUTANTS, RULES

pytestmark = pytest.mark.unit

MI = 1024 * 1024
A = GroupKey("ci", "a", "source")
B = GroupKey("ci", "b", "source")
Keep = Callable[..., None]


@pytest.fixture
def keep(monkeypatch: pytest.MonkeyPatch) -> Keep:
    """keep(obj, 'name', ...) lets a mutant's patch replace obj.name for this test only."""

    def save(obj: object, *names: str) -> None:
        for name in names:
            monkeypatch.setattr(obj, name, getattr(obj, name))

    return save


def task(name: str, cpu: int, *deps: str, is_finally: bool = False) -> TaskNode:
    return TaskNode(name, frozenset({"source"}), frozenset(deps), is_finally, 0, Resources(cpu), 1)


def step_spec(cpu: str, **extra: Any) -> dict[str, Any]:
    return {"steps": [{"name": "run", "image": "busybox", "computeResources": {"requests": {"cpu": cpu}}}], **extra}


def one_task_graph(task_spec: dict[str, Any], **options: Any) -> Resources:
    graph = build_pipeline_graph({"tasks": [{"name": "t", "taskSpec": task_spec}]}, task_specs={}, **options)
    return graph.nodes["t"].concurrent_request


# --- the five-rule build ----------------------------------------------------------


class FakeCustom:
    def __init__(self) -> None:
        self.patches: list[Any] = []

    def patch_namespaced_custom_object(self, *args: Any) -> None:
        self.patches.append(args[-1])


class TestNoActiveLabel:
    ENTRIES = [{"name": "source", "state": "Reserved", "node": "n1"}]

    def writer(self) -> Any:
        from reference_scheduler.runtime.records import RecordWriter

        writer = RecordWriter.__new__(RecordWriter)
        writer._custom = FakeCustom()  # type: ignore[assignment]
        return writer

    def test_the_reference_labels_a_record_with_a_reserved_group(self) -> None:
        writer = self.writer()
        writer._sync_active_label("ci", "a", {"metadata": {}}, self.ENTRIES)
        assert writer._custom.patches == [{"metadata": {"labels": {"rescon.dev/active": "true"}}}]

    def test_the_mutant_never_writes_it(self, keep: Keep) -> None:
        from reference_scheduler.runtime import records
        from reference_scheduler.runtime.records import RecordWriter

        keep(RecordWriter, "_sync_active_label")
        keep(records, "record_manifest")  # the mutant rewrites the manifest too: no later test may create records without the label
        faults.apply_no_active_label()
        writer = self.writer()
        writer._sync_active_label("ci", "a", {"metadata": {}}, self.ENTRIES)
        assert writer._custom.patches == []


class TestFalseReleaseReason:
    SUCCEEDED = {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}

    def test_never_the_reason_that_was_true(self) -> None:
        for reason in list(ReleaseReason)[:6]:
            assert faults.untrue_reason(reason.value) != reason.value

    def test_a_run_that_simply_succeeded_timed_out(self) -> None:
        assert release_decision(["build"], self.SUCCEEDED, {}).reason == ReleaseReason.PIPELINE_RUN_DONE
        assert faults.untrue_reason(ReleaseReason.PIPELINE_RUN_DONE.value) == ReleaseReason.PIPELINE_RUN_TIMED_OUT

    def test_the_patched_releaser_writes_the_untrue_reason(self, keep: Keep) -> None:
        from reference_scheduler.runtime.releaser import Releaser

        keep(Releaser, "_release")
        faults.apply_false_release_reason()
        written: list[Any] = []
        releaser = Releaser.__new__(Releaser)
        releaser._on_released = lambda reason: None
        releaser._write = lambda ns, name, group, change: written.append(change({"name": group, "state": "Reserved", "node": "n1", "claimGeneration": 1})) or True  # type: ignore[method-assign]
        releaser._release("ci", "a", "source", ReleaseReason.TASKS_DONE.value)
        assert [(w["state"], w["releaseReason"]) for w in written] == [("Released", "PipelineRunTimedOut")]


class TestInflatedMemoryPeak:
    def test_the_contract_example_reserves_5Gi_not_2560Mi(self) -> None:
        assert faults.doubled_memory(Resources(cpu=2000, memory=2560 * MI)) == Resources(cpu=2000, memory=5120 * MI)

    def test_the_patched_partition_doubles_every_groups_memory(self, keep: Keep) -> None:
        from reference_scheduler.core import partition

        keep(partition, "group_peak")
        graph = PipelineGraph([TaskNode("t", frozenset({"source"}), frozenset(), False, 0, Resources(500, 256 * MI), 1)])
        assert partition.partition_into_groups(graph)[0].peak == Resources(500, 256 * MI)
        faults.apply_inflated_memory_peak()
        assert partition.partition_into_groups(graph)[0].peak == Resources(500, 512 * MI)


class TestExtraWorkspace:
    SPEC = {
        "tasks": [
            {"name": "fetch", "workspaces": [{"name": "w", "workspace": "source"}]},
            {"name": "build", "workspaces": [{"name": "source"}]},
            {"name": "scan", "workspaces": [{"name": "source", "workspace": "cache"}]},
        ]
    }
    GROUPS = (
        WorkspaceGroup("source", ("build", "fetch"), ("source",), Resources()),
        WorkspaceGroup("cache", ("scan",), ("cache",), Resources()),
    )

    def test_the_task_side_name_is_listed_too(self) -> None:
        source, _ = faults.with_task_side_names(self.GROUPS, self.SPEC)
        assert source.workspaces == ("source", "w")

    def test_a_name_another_group_lists_is_never_added_so_the_record_stays_valid(self) -> None:
        _, cache = faults.with_task_side_names(self.GROUPS, self.SPEC)
        assert cache.workspaces == ("cache",)  # scan's task-side "source" is the other group's workspace


class TestHoldersNotJoined:
    def test_the_joining_pod_is_not_a_holder(self) -> None:
        made = reserve(GroupClaim(), "p1", "n1")
        assert isinstance(made, Claimed)
        joined = reserve(made.claim, "p2", "n1")
        mutant = faults.reserve_without_joining(made.claim, "p2", "n1")
        assert isinstance(joined, Claimed) and joined.claim.holders == {"p1", "p2"}
        assert isinstance(mutant, Claimed) and mutant.claim.holders == {"p1"} and mutant.generation == 1

    def test_making_a_claim_and_conflicts_are_the_references(self) -> None:
        assert faults.reserve_without_joining(GroupClaim(), "p1", "n1") == reserve(GroupClaim(), "p1", "n1")
        reserved = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)
        assert isinstance(faults.reserve_without_joining(reserved, "p2", "n2"), ClaimConflict)


# --- the rest of the contract -----------------------------------------------------


class TestForgetsFinishedPods:
    CLAIM = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)

    def test_once_the_groups_pods_finished_it_has_no_node(self) -> None:
        assert faults.claim_node_from_live_pods(self.CLAIM, []) is None

    def test_while_one_runs_it_is_that_pods_node(self) -> None:
        assert faults.claim_node_from_live_pods(self.CLAIM, ["n1"]) == "n1"


class TestNoOwnerReference:
    RUN = {"apiVersion": "tekton.dev/v1", "metadata": {"name": "a", "namespace": "ci", "uid": "u-1"}}

    def test_the_manifest_loses_only_its_owner(self) -> None:
        from reference_scheduler.runtime.records import record_manifest

        reference = record_manifest(self.RUN, (), scheduler_name="s")
        mutant = faults.without_owner(reference)
        assert reference["metadata"]["ownerReferences"][0]["uid"] == "u-1"
        assert "ownerReferences" not in mutant["metadata"]
        assert {**mutant, "metadata": {**mutant["metadata"], "ownerReferences": reference["metadata"]["ownerReferences"]}} == reference


class TestWrongRunUid:
    RUN = {"metadata": {"name": "a", "namespace": "ci", "uid": "run-uid"}}
    POD = {"metadata": {"ownerReferences": [{"kind": "TaskRun", "uid": "taskrun-uid", "controller": True}]}}

    def test_the_record_is_written_for_the_pods_taskrun(self) -> None:
        from reference_scheduler.runtime.records import record_manifest

        manifest = record_manifest(faults.with_owner_uid_of(self.RUN, self.POD), (), scheduler_name="s")
        assert manifest["spec"]["pipelineRun"]["uid"] == "taskrun-uid"
        assert manifest["metadata"]["ownerReferences"][0]["uid"] == "taskrun-uid"

    def test_a_pod_without_an_owner_leaves_the_run_alone(self) -> None:
        assert faults.with_owner_uid_of(self.RUN, {"metadata": {}}) == self.RUN


class TestReleasesForeignRecords:
    @staticmethod
    def record(namespace: str, scheduler: str) -> dict[str, Any]:
        from reference_scheduler.runtime.records import SCHEDULER_ANNOTATION

        return {"metadata": {"namespace": namespace, "annotations": {SCHEDULER_ANNOTATION: scheduler}}}

    def test_another_schedulers_record_beside_its_own_counts_as_its_own(self) -> None:
        from reference_scheduler.runtime.records import created_by

        other, mine = self.record("ns1", "other"), self.record("ns1", "mine")
        assert created_by(other) != "mine"
        assert faults.owns_records_beside_its_own(other, "mine", [other, mine])

    def test_records_in_namespaces_it_never_wrote_are_left_alone(self) -> None:
        other = self.record("ns2", "other")
        assert not faults.owns_records_beside_its_own(other, "mine", [other, self.record("ns1", "mine")])


class TestStaleRollback:
    def test_a_restarted_scheduler_sends_a_claim_it_found_back_to_pending(self) -> None:
        found = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1", "p2"}), 2)
        assert faults.rolled_back_on_start(found) == GroupClaim(ClaimState.PENDING, None, frozenset(), 2)

    def test_the_reference_rollback_needs_the_generation_only_the_claimer_holds(self) -> None:
        found = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 2)
        assert unreserve(found, "p1", 0).state is ClaimState.RESERVED  # a process that never claimed it holds generation 0

    def test_pending_and_released_are_left_alone(self) -> None:
        for claim in (GroupClaim(claim_generation=1), GroupClaim(ClaimState.RELEASED, "n1", frozenset({"p1"}), 1)):
            assert faults.rolled_back_on_start(claim) == claim


class TestUnboundClaimDroppedOnStart:
    FOUND = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 3)

    def test_a_claim_whose_holders_are_all_unbound_goes_back_to_pending_with_its_generation(self) -> None:
        assert faults.dropped_if_unbound(self.FOUND, frozenset({"other"})) == GroupClaim(ClaimState.PENDING, None, frozenset(), 3)

    def test_a_claim_with_a_bound_holder_is_kept(self) -> None:
        assert faults.dropped_if_unbound(self.FOUND, frozenset({"p1"})) == self.FOUND

    def test_pending_and_released_are_left_alone(self) -> None:
        for claim in (GroupClaim(claim_generation=1), GroupClaim(ClaimState.RELEASED, "n1", frozenset({"p1"}), 1)):
            assert faults.dropped_if_unbound(claim, frozenset()) == claim


CORDONED = {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}


class TestClaimMovesNode:
    CLAIM = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)

    def test_the_reference_never_books_a_second_node(self) -> None:
        assert isinstance(reserve(self.CLAIM, "p2", "n2"), ClaimConflict)

    def test_the_mutant_abandons_the_claim_and_claims_anew_elsewhere(self) -> None:
        abandoned = faults.abandoned_for_another_node(self.CLAIM)
        assert abandoned == GroupClaim(ClaimState.PENDING, None, frozenset(), 1)
        moved = reserve(abandoned, "p2", "n2")
        assert isinstance(moved, Claimed) and (moved.claim.node, moved.generation) == ("n2", 2)


class TestDropsFinishedHolders:
    CLAIM = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1", "p2"}), 1)

    def test_a_finished_pod_leaves_holders(self) -> None:
        assert faults.without_finished_holders(self.CLAIM, {"p1"}).holders == {"p2"}

    def test_so_the_next_failed_bind_rolls_the_claim_back_where_the_reference_keeps_it(self) -> None:
        assert unreserve(self.CLAIM, "p2", 1).state is ClaimState.RESERVED
        assert unreserve(faults.without_finished_holders(self.CLAIM, {"p1"}), "p2", 1).state is ClaimState.PENDING


class TestOwnResidualCounted:
    """exact_headroom's node after A's small task finished: B's 900m pod runs; A (3800m) and B (900m) are Reserved."""

    NODE = NodeView("n1", Resources(cpu=4800), 110, (PodUsage("b-1", Resources(cpu=900), B),))
    RESERVATIONS = (ActiveReservation(A, "n1", Resources(cpu=3800)), ActiveReservation(B, "n1", Resources(cpu=900)))
    BIG = PodUsage("a-big", Resources(cpu=3800), A)
    DEMAND = GroupDemand(A, Resources(cpu=3800), node="n1")

    def test_the_reference_lets_as_big_task_use_as_room(self) -> None:
        assert fit(self.NODE, self.RESERVATIONS, self.BIG, self.DEMAND) == []  # 4800 - 900 - 0

    def test_the_mutant_sees_100m(self) -> None:
        (failure,) = faults.fit_counting_own_residual(self.NODE, self.RESERVATIONS, self.BIG, self.DEMAND)
        assert isinstance(failure, InsufficientResource) and failure.available == 100  # 4800 - 900 - 3800

    def test_a_pod_opening_a_claim_is_judged_as_by_the_reference(self) -> None:
        opening = GroupDemand(A, Resources(cpu=3800))
        assert faults.fit_counting_own_residual(self.NODE, self.RESERVATIONS, self.BIG, opening) == fit(self.NODE, self.RESERVATIONS, self.BIG, opening)


class TestIgnoresForeignPods:
    def test_a_pod_bound_by_node_name_or_another_scheduler_is_invisible(self) -> None:
        assert not faults.counted_in_headroom({"spec": {"nodeName": "n1"}}, "mine")
        assert not faults.counted_in_headroom({"spec": {"schedulerName": "default-scheduler"}}, "mine")
        assert faults.counted_in_headroom({"spec": {"schedulerName": "mine"}}, "mine")


def task_run(name: str, condition: dict[str, Any], retries: int = 0, attempts: int = 0) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"retries": retries},
        "status": {"conditions": [{"type": "Succeeded", **condition}], "retriesStatus": [{}] * attempts},
    }


RUNNING_RUN = {
    "metadata": {"name": "a"},
    "status": {"conditions": [{"type": "Succeeded", "status": "Unknown"}], "childReferences": [{"pipelineTaskName": "build", "name": "a-build"}]},
}


class TestReleaseOnlyWhenRunDone:
    def test_a_group_whose_tasks_are_done_holds_while_the_run_goes_on(self) -> None:
        runs = {"a-build": task_run("a-build", {"status": "True"})}
        decide = faults.ignoring_reasons(release_decision, faults.IGNORED_TASKS_DONE, "release_only_when_run_done")
        assert release_decision(["build"], RUNNING_RUN, runs).reason == ReleaseReason.TASKS_DONE
        assert not decide(["build"], RUNNING_RUN, runs).release

    def test_the_end_of_the_run_still_releases(self) -> None:
        done = {**RUNNING_RUN, "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}
        decide = faults.ignoring_reasons(release_decision, faults.IGNORED_TASKS_DONE, "release_only_when_run_done")
        assert decide(["build"], done, {}).reason == ReleaseReason.PIPELINE_RUN_DONE


class TestSkippedTasksAwaited:
    SKIPPED = {**RUNNING_RUN, "status": {**RUNNING_RUN["status"], "skippedTasks": [
        {"name": "deploy", "reason": "When Expressions evaluated to false", "whenExpressions": [{"input": "no", "operator": "in", "values": ["yes"]}]}]}}
    DONE = {"a-build": task_run("a-build", {"status": "True", "reason": "Succeeded"})}

    def test_the_reference_releases_a_group_whose_other_task_was_skipped(self) -> None:
        assert release_decision(["build", "deploy"], self.SKIPPED, self.DONE).reason == ReleaseReason.TASKS_DONE

    def test_the_mutant_holds_it_while_the_run_goes_on(self) -> None:
        decide = faults.pipeline_run_rewritten(release_decision, faults.without_skipped_tasks)
        assert not decide(["build", "deploy"], self.SKIPPED, self.DONE).release
        assert decide(["build"], self.SKIPPED, self.DONE).reason == ReleaseReason.TASKS_DONE  # a group of tasks that ran is not affected

    def test_and_releases_it_when_the_run_is_over(self) -> None:
        over = {**self.SKIPPED, "status": {**self.SKIPPED["status"], "conditions": [{"type": "Succeeded", "status": "True", "reason": "Completed"}]}}
        decide = faults.pipeline_run_rewritten(release_decision, faults.without_skipped_tasks)
        assert decide(["build", "deploy"], over, self.DONE).reason == ReleaseReason.PIPELINE_RUN_DONE

    def test_the_patched_releaser_holds_it(self, keep: Keep) -> None:
        from reference_scheduler.runtime import releaser

        keep(releaser, "release_decision")
        faults.apply_skipped_tasks_awaited()
        assert not releaser.release_decision(["build", "deploy"], self.SKIPPED, self.DONE).release


class TestRetryPendingIsDone:
    GAP = {"a-build": task_run("a-build", {"status": "Unknown", "reason": "ToBeRetried"}, retries=1, attempts=1)}

    def test_the_retry_gap_reads_as_done(self, keep: Keep) -> None:
        assert not release_decision(["build"], RUNNING_RUN, self.GAP).release
        keep(release, "task_run_progress")
        faults.apply_retry_pending_is_done()
        verdict = release_decision(["build"], RUNNING_RUN, self.GAP)
        assert (verdict.release, verdict.reason) == (True, ReleaseReason.TASKS_DONE)

    def test_a_running_taskrun_still_holds(self, keep: Keep) -> None:
        keep(release, "task_run_progress")
        faults.apply_retry_pending_is_done()
        running = {"a-build": task_run("a-build", {"status": "Unknown", "reason": "Running"})}
        assert not release_decision(["build"], RUNNING_RUN, running).release


class TestRollbackKeepsClaim:
    def test_no_holder_left_yet_still_reserved(self) -> None:
        claim = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)
        assert unreserve(claim, "p1", 1).state is ClaimState.PENDING
        assert faults.unreserve_keeping_claim(claim, "p1", 1) == GroupClaim(ClaimState.RESERVED, "n1", frozenset(), 1)


class TestFinallyOverlapsDag:
    def test_a_finally_task_adds_to_the_dag_task_before_it(self) -> None:
        graph = PipelineGraph([task("build", 960), task("report", 1440, "build", is_finally=True)])
        assert group_peak(graph, ["build", "report"]) == Resources(cpu=1440)
        assert faults.peak_with_finally_concurrent(graph, ["build", "report"]) == Resources(cpu=2400)

    def test_dag_order_is_kept(self) -> None:
        chain = PipelineGraph([task("a", 1000), task("b", 4000, "a")])
        assert faults.peak_with_finally_concurrent(chain, ["a", "b"]) == group_peak(chain, ["a", "b"])


class TestIgnoresResultDependencies:
    PIPELINE = {
        "tasks": [
            {"name": "clone", "taskSpec": step_spec("1")},
            {"name": "test", "taskSpec": step_spec("2"), "params": [{"name": "rev", "value": "$(tasks.clone.results.commit)"}]},
        ]
    }

    def test_a_result_consumer_runs_beside_its_producer(self, keep: Keep) -> None:
        reference = build_pipeline_graph(self.PIPELINE, task_specs={})
        assert group_peak(reference, ["clone", "test"]) == Resources(cpu=2000)
        keep(pipeline_graph, "result_references")
        faults.apply_ignores_result_dependencies()
        mutant = build_pipeline_graph(self.PIPELINE, task_specs={})
        assert group_peak(mutant, ["clone", "test"]) == Resources(cpu=3000)


SIDECAR = step_spec("1", sidecars=[{"name": "db", "image": "x", "computeResources": {"requests": {"cpu": "500m"}}}])
TEMPLATE = {"stepTemplate": {"computeResources": {"requests": {"memory": "1Gi"}}}, "steps": [{"name": "run", "image": "x"}]}
LIMIT_RANGE = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "300m"}}]}}
#: 600m split over three steps is 200m, below the min of 250m.
LIMIT_RANGE_MIN = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "600m"}, "min": {"cpu": "250m"}}]}}
#: Steps 500m, no request, and a 300m limit only.
THREE_STEPS = {
    "steps": [
        {"name": "a", "image": "x", "computeResources": {"requests": {"cpu": "500m"}}},
        {"name": "b", "image": "x"},
        {"name": "c", "image": "x", "computeResources": {"limits": {"cpu": "300m"}}},
    ]
}


@pytest.mark.parametrize(
    ("apply", "task_spec", "options", "reference", "mutant"),
    [
        (faults.apply_ignores_sidecars, SIDECAR, {}, Resources(cpu=1500), Resources(cpu=1000)),
        (faults.apply_ignores_step_template, TEMPLATE, {}, Resources(memory=1024 * MI), Resources()),
        (
            faults.apply_ignores_task_compute_resources,
            step_spec("1"),
            {"task_run_specs": [{"pipelineTaskName": "t", "computeResources": {"requests": {"cpu": "3"}}}]},
            Resources(cpu=3000),
            Resources(cpu=1000),
        ),
        (faults.apply_ignores_limit_range, {"steps": [{"name": "run", "image": "x"}]}, {"limit_range": LIMIT_RANGE}, Resources(cpu=300), Resources()),
        (
            faults.apply_ignores_step_specs,
            {**SIDECAR, "steps": [{**SIDECAR["steps"][0], "computeResources": {"requests": {"cpu": "1", "memory": "64Mi"}}}]},
            {"task_run_specs": [{"pipelineTaskName": "t", "stepSpecs": [{"name": "run", "computeResources": {"requests": {"cpu": "2"}}}]}]},
            Resources(cpu=2500, memory=64 * MI),  # the step's cpu overridden, its memory kept
            Resources(cpu=1500, memory=64 * MI),
        ),
        (
            faults.apply_ignores_sidecar_specs,
            SIDECAR,
            {"task_run_specs": [{"pipelineTaskName": "t", "sidecarSpecs": [{"name": "db", "computeResources": {"requests": {"cpu": "1"}}}]}]},
            Resources(cpu=2000),
            Resources(cpu=1500),
        ),
        # 500 + max(200, 250) + max(200, 250) = 1000m; init containers 600m. Without the min: 500 + 200 + 200 = 900m.
        (faults.apply_limit_range_min_ignored, THREE_STEPS, {"limit_range": LIMIT_RANGE_MIN}, Resources(cpu=1000), Resources(cpu=900)),
        # The limit-only step taken at its limit: 500 + 250 + 300 = 1050m.
        (faults.apply_limit_only_step_requests_its_limit, THREE_STEPS, {"limit_range": LIMIT_RANGE_MIN}, Resources(cpu=1000), Resources(cpu=1050)),
    ],
    ids=["sidecars", "step-template", "task-compute-resources", "limit-range", "step-specs", "sidecar-specs", "limit-range-min", "limit-only-step"],
)
def test_each_prediction_mutant_leaves_out_exactly_its_input(
    keep: Keep, apply: Callable[[], None], task_spec: Any, options: Any, reference: Resources, mutant: Resources
) -> None:
    assert one_task_graph(task_spec, **options) == reference
    keep(pipeline_graph, "predict_task_pod_request")
    apply()
    assert one_task_graph(task_spec, **options) == mutant


class TestSkippedTasksDropped:
    PIPELINE = {
        "tasks": [
            {"name": "small", "taskSpec": step_spec("200m")},
            {"name": "big", "runAfter": ["small"], "when": [{"input": "no", "operator": "in", "values": ["yes"]}], "taskSpec": step_spec("3800m")},
        ]
    }

    def test_the_guarded_task_leaves_the_peak(self) -> None:
        graph = build_pipeline_graph(self.PIPELINE, task_specs={})
        assert group_peak(graph, ["small", "big"]) == Resources(cpu=3800)
        assert group_peak(faults.graph_without_guarded_tasks(graph, self.PIPELINE), ["small", "big"]) == Resources(cpu=200)


class TestNoReleaseOnTimeout:
    TIMED_OUT = {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Succeeded", "status": "False", "reason": "PipelineRunTimeout"}]}}

    def test_a_timed_out_run_holds(self) -> None:
        decide = faults.ignoring_reasons(release_decision, faults.IGNORED_TIMEOUT, "no_release_on_timeout")
        assert release_decision(["big"], self.TIMED_OUT, {}).reason == ReleaseReason.PIPELINE_RUN_TIMED_OUT
        assert not decide(["big"], self.TIMED_OUT, {}).release

    def test_a_cancelled_run_still_releases(self) -> None:
        cancelled = {"metadata": {"name": "a"}, "spec": {"status": "Cancelled"}}
        assert faults.ignoring_reasons(release_decision, faults.IGNORED_TIMEOUT, "no_release_on_timeout")(["big"], cancelled, {}).release


class TestCordonDropsClaim:
    CLAIM = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)

    def test_a_cordoned_node_loses_the_claim(self) -> None:
        assert faults.claim_on_cordoned_node(self.CLAIM, CORDONED) == GroupClaim(ClaimState.PENDING, None, frozenset(), 1)

    def test_a_schedulable_node_keeps_it(self) -> None:
        assert faults.claim_on_cordoned_node(self.CLAIM, {"metadata": {"name": "n1"}, "spec": {}}) == self.CLAIM


def test_matrix_include_ignored(keep: Keep) -> None:
    # x in [a, b]; include {x: a} agrees with a and adds none, {x: c} adds a third combination.
    matrix = {
        "params": [{"name": "x", "value": ["a", "b"]}],
        "include": [{"name": "again-a", "params": [{"name": "x", "value": "a"}]}, {"name": "add-c", "params": [{"name": "x", "value": "c"}]}],
    }
    pipeline = {"tasks": [{"name": "t", "taskSpec": step_spec("500m"), "matrix": matrix}]}
    assert build_pipeline_graph(pipeline, task_specs={}).nodes["t"].concurrent_request == Resources(cpu=1500)
    keep(pipeline_graph, "matrix_fan_out")
    faults.apply_matrix_include_ignored()
    assert build_pipeline_graph(pipeline, task_specs={}).nodes["t"].concurrent_request == Resources(cpu=1000)


def test_matrix_counted_once(keep: Keep) -> None:
    pipeline = {"tasks": [{"name": "t", "taskSpec": step_spec("500m"), "matrix": {"params": [{"name": "os", "value": ["a", "b", "c"]}]}}]}
    assert build_pipeline_graph(pipeline, task_specs={}).nodes["t"].concurrent_request == Resources(cpu=1500)
    keep(pipeline_graph, "matrix_fan_out")
    faults.apply_matrix_counted_once()
    assert build_pipeline_graph(pipeline, task_specs={}).nodes["t"].concurrent_request == Resources(cpu=500)



def test_result_fan_out_counts_nothing(keep: Keep) -> None:
    # A matrix over a result: one combination by the contract, none by the fault; a known fan-out is untouched.
    from_result = {"params": [{"name": "shard", "value": "$(tasks.list.results.shards[*])"}]}
    known = {"params": [{"name": "os", "value": ["a", "b"]}]}
    pipeline = {"tasks": [
        {"name": "list", "taskSpec": step_spec("100m")},
        {"name": "t", "taskSpec": step_spec("500m"), "matrix": from_result},
        {"name": "k", "taskSpec": step_spec("500m"), "matrix": known},
    ]}
    assert build_pipeline_graph(pipeline, task_specs={}).nodes["t"].concurrent_request == Resources(cpu=500)
    keep(pipeline_graph, "matrix_fan_out")
    faults.apply_result_fan_out_counts_nothing()
    nodes = build_pipeline_graph(pipeline, task_specs={}).nodes
    assert nodes["t"].concurrent_request == Resources(cpu=0)
    assert nodes["k"].concurrent_request == Resources(cpu=1000)


def test_ignores_runtime_class_overhead(keep: Keep) -> None:
    from reference_scheduler.runtime import planner

    # One task, step 500m, whose run's pod template names a RuntimeClass with 250m / 64Mi of overhead.
    pipeline_spec = {"workspaces": [{"name": "source"}], "tasks": [{"name": "t", "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": step_spec("500m")}]}
    run = {
        "metadata": {"name": "r", "namespace": "ci", "uid": "u"},
        "spec": {
            "workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "c"}}],
            "taskRunTemplate": {"podTemplate": {"runtimeClassName": "kata"}},
            "pipelineSpec": pipeline_spec,
        },
        "status": {"pipelineSpec": pipeline_spec},
    }
    shaping = planner.PodShaping(runtime_class={"kata": {"handler": "kata", "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}}}}.get)

    def peak() -> Resources:
        [group] = planner.plan_pipeline_run(run, get_task=lambda ns, name: None, limit_range=None, shaping=shaping).groups
        return group.peak

    assert peak() == Resources(cpu=750, memory=64 * MI)
    keep(planner, "overhead_of")
    faults.apply_ignores_runtime_class_overhead()
    assert peak() == Resources(cpu=500)


# --- the catalogue itself ----------------------------------------------------------


def test_every_mutant_names_a_known_rule() -> None:
    for mutant in MUTANTS.values():
        if mutant.pending and not mutant.rule:
            continue  # a pending mutant (the held-out batch, tests/mutants/held_out.py) names its rule once it has been run
        assert mutant.rule in RULES, (mutant.name, mutant.rule)


def test_every_rule_has_a_mutant() -> None:
    assert set(RULES) == {m.rule for m in MUTANTS.values() if m.rule or not m.pending}


def test_every_patch_applies_to_the_reference() -> None:
    """Each apply() replaces something that exists: all of them applied in one fresh process, then the entry point imported."""
    code = "from tests.mutants.faults import MUTANTS\nfor m in MUTANTS.values(): m.apply()\nimport reference_scheduler.main\n"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


class TestForgetsRecordsOnBrokenWatch:
    def test_the_watch_resumes_from_the_servers_version_and_keeps_no_item(self) -> None:
        asked: list[dict[str, Any]] = []

        def list_raw(**kwargs: Any) -> dict[str, Any]:
            asked.append(kwargs)
            return {"metadata": {"resourceVersion": "42"}, "items": [{"metadata": {"name": "a"}}]}

        assert faults.resume_point(list_raw) == "42"
        assert asked == [{"limit": 1}]

    def test_a_failed_watch_empties_the_record_cache_and_never_relists(self, keep: Keep) -> None:
        import threading

        from reference_scheduler.runtime import informer as informer_module
        from reference_scheduler.runtime.informer import Informer

        keep(Informer, "_run")
        keep(informer_module, "ERROR_BACKOFF_SECONDS")
        informer_module.ERROR_BACKOFF_SECONDS = 0.0
        faults.apply_forgets_records_on_broken_watch()
        stop = threading.Event()
        calls: list[dict[str, Any]] = []
        record = {"metadata": {"namespace": "ci", "name": "a", "resourceVersion": "7"}}

        def list_raw(**kwargs: Any) -> Any:
            calls.append(kwargs)
            if kwargs.get("watch"):
                if len([c for c in calls if c.get("watch")]) == 1:
                    raise ConnectionError("the API server went away")
                stop.set()
                return iter(())
            return {"metadata": {"resourceVersion": "9"}, "items": [record] if not kwargs else []}

        records = Informer("reservationrecords", list_raw, stop=stop)
        records._run()
        assert records.get("ci", "a") is None, "the record listed before the break is forgotten"
        assert [c for c in calls if not c.get("watch")] == [{}, {"limit": 1}], "one full list, then only a resume point"


class TestTimedOutReadIsDeleted:
    @staticmethod
    def failing(err: BaseException) -> Any:
        def read() -> Any:
            raise err

        return read

    def test_a_read_that_timed_out_counts_as_gone(self) -> None:
        import urllib3

        timeout = urllib3.exceptions.ReadTimeoutError(None, "/apis/tekton.dev/v1", "Read timed out. (read timeout=1.0)")  # type: ignore[arg-type]
        assert faults.read_or_gone(self.failing(timeout)) is None
        assert faults.read_or_gone(self.failing(urllib3.exceptions.MaxRetryError(None, "/apis", reason=timeout))) is None  # type: ignore[arg-type]

    def test_a_404_is_gone_and_the_object_is_returned(self) -> None:
        import kubernetes

        assert faults.read_or_gone(self.failing(kubernetes.client.ApiException(status=404))) is None
        assert faults.read_or_gone(lambda: {"metadata": {"name": "a"}}) == {"metadata": {"name": "a"}}

    def test_other_failures_still_raise(self) -> None:
        import kubernetes
        import urllib3

        refused = urllib3.exceptions.MaxRetryError(None, "/apis", reason=urllib3.exceptions.NewConnectionError(None, "refused"))  # type: ignore[arg-type]
        for err in (kubernetes.client.ApiException(status=500), refused):
            with pytest.raises(type(err)):
                faults.read_or_gone(self.failing(err))


class TestEvictionRollsBackClaim:
    def test_the_only_holder_evicted_sends_the_claim_back_to_pending(self) -> None:
        claim = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)
        assert faults.claim_without_deleted_pod(claim, "p1") == GroupClaim(ClaimState.PENDING, None, frozenset(), 1)

    def test_another_holder_keeps_it_reserved_without_the_evicted_pod(self) -> None:
        claim = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1", "p2"}), 1)
        assert faults.claim_without_deleted_pod(claim, "p1") == GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p2"}), 1)

    def test_a_pod_that_holds_nothing_changes_nothing(self) -> None:
        claim = GroupClaim(ClaimState.RELEASED, "n1", frozenset({"p1"}), 1)
        assert faults.claim_without_deleted_pod(claim, "p1") is claim


class TestTaintDropsClaim:
    RESERVED = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)

    def test_a_noschedule_taint_loses_the_claim(self) -> None:
        node = {"spec": {"taints": [{"key": "rescon.dev/maintenance", "effect": "NoSchedule"}]}}
        assert faults.claim_on_tainted_node(self.RESERVED, node) == GroupClaim(ClaimState.PENDING, None, frozenset(), 1)

    def test_an_untainted_or_prefer_tainted_node_keeps_it(self) -> None:
        assert faults.claim_on_tainted_node(self.RESERVED, {"spec": {}}) is self.RESERVED
        prefer = {"spec": {"taints": [{"key": "k", "effect": "PreferNoSchedule"}]}}
        assert faults.claim_on_tainted_node(self.RESERVED, prefer) is self.RESERVED


class TestNotReadyDropsClaim:
    RESERVED = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"p1"}), 1)

    @staticmethod
    def node(ready: str | None) -> dict[str, object]:
        conditions = [{"type": "MemoryPressure", "status": "False"}] + ([{"type": "Ready", "status": ready}] if ready else [])
        return {"metadata": {"name": "n1"}, "status": {"conditions": conditions}}

    def test_a_not_ready_or_unknown_node_loses_the_claim(self) -> None:
        for ready in ("False", "Unknown"):
            assert faults.claim_on_not_ready_node(self.RESERVED, self.node(ready)) == GroupClaim(ClaimState.PENDING, None, frozenset(), 1), ready

    def test_a_ready_node_or_one_without_the_condition_keeps_it(self) -> None:
        assert faults.claim_on_not_ready_node(self.RESERVED, self.node("True")) is self.RESERVED
        assert faults.claim_on_not_ready_node(self.RESERVED, self.node(None)) is self.RESERVED
        assert faults.claim_on_not_ready_node(self.RESERVED, None) is self.RESERVED

    def test_only_reserved_claims_go_back(self) -> None:
        released = GroupClaim(ClaimState.RELEASED, "n1", frozenset({"p1"}), 1)
        assert faults.claim_on_not_ready_node(released, self.node("False")) is released


class TestTaskRunDoneFromPod:
    RUNNING = {"metadata": {"name": "tr"}, "spec": {"retries": 1}, "status": {"podName": "tr-pod", "conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}]}}

    def test_a_failed_attempts_pod_ends_a_taskrun_that_will_retry(self) -> None:
        read = faults.task_run_as_its_pod(self.RUNNING, {"status": {"phase": "Failed"}})
        assert release.task_run_progress(read) is release.TaskRunProgress.SUCCEEDED
        assert release.task_run_progress(self.RUNNING) is release.TaskRunProgress.RUNNING, "the reference reads it as running"

    def test_a_running_or_missing_pod_changes_nothing(self) -> None:
        assert faults.task_run_as_its_pod(self.RUNNING, {"status": {"phase": "Running"}}) is self.RUNNING
        assert faults.task_run_as_its_pod(self.RUNNING, None) is self.RUNNING
