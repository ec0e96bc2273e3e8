"""The mutants' faults: each pure wrong rule is wrong in exactly the documented way, and nothing else."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from reference_scheduler.core.claims import ClaimState, GroupClaim, unreserve
from reference_scheduler.core.headroom import ActiveReservation, GroupDemand, NodeView, PodUsage, fit, foreign_reserved
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.partition import partition_into_groups
from reference_scheduler.core.peaks import group_peak
from reference_scheduler.core.pipeline_graph import PipelineGraph, TaskNode
from reference_scheduler.core.release import ReleaseReason, release_decision
from reference_scheduler.core.resources import Resources
from tests.mutants import faults
from tests.mutants.faults import MUTANTS

pytestmark = pytest.mark.unit

A = GroupKey("ci", "a", "source")
B = GroupKey("ci", "b", "source")


def task(name: str, cpu: int, *deps: str, workspaces: tuple[str, ...] = ("source",), is_finally: bool = False) -> TaskNode:
    return TaskNode(name, frozenset(workspaces), frozenset(deps), is_finally, 0, Resources(cpu), 1)


def seed_node() -> NodeView:
    """The contract's worked example: 4800m, A's 200m pod running under a 3800m peak."""
    return NodeView("n1", Resources(cpu=4800), 110, (PodUsage("a-1", Resources(cpu=200), A),))


SEED = (ActiveReservation(A, "n1", Resources(cpu=3800)),)


class TestDoubleCountedHeadroom:
    def test_counts_the_running_pod_twice(self) -> None:
        assert foreign_reserved(seed_node(), SEED, excluding=B) == Resources(cpu=3600)
        assert faults.foreign_reserved_in_full(seed_node(), SEED, excluding=B) == Resources(cpu=3800)

    def test_leaves_the_own_group_out_like_the_reference(self) -> None:
        assert faults.foreign_reserved_in_full(seed_node(), SEED, excluding=A) == Resources()

    def test_turns_away_the_900m_group_exact_headroom_admits(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from reference_scheduler.core import headroom

        b_pod = PodUsage("b-1", Resources(cpu=900), B)
        demand = GroupDemand(B, Resources(cpu=900))
        assert fit(seed_node(), SEED, b_pod, demand) == []
        monkeypatch.setattr(headroom, "foreign_reserved", faults.foreign_reserved_in_full)
        assert [f.available for f in fit(seed_node(), SEED, b_pod, demand)] == [800]  # type: ignore[union-attr]


class TestMaxPeak:
    GRAPH = PipelineGraph([task("prep", 200), task("left", 1500, "prep"), task("right", 1500, "prep")])

    def test_parallel_tasks_get_the_largest_not_the_sum(self) -> None:
        assert group_peak(self.GRAPH, ["prep", "left", "right"]) == Resources(cpu=3000)
        assert faults.largest_task_peak(self.GRAPH, ["prep", "left", "right"]) == Resources(cpu=1500)

    def test_a_chain_is_the_same_as_the_reference(self) -> None:
        chain = PipelineGraph([task("a", 1000), task("b", 4000, "a")])
        assert faults.largest_task_peak(chain, ["a", "b"]) == group_peak(chain, ["a", "b"])


class TestReleaseOnVisiblePods:
    @staticmethod
    def pod(phase: str) -> dict[str, object]:
        return {"status": {"phase": phase}}

    def test_the_retry_gap_looks_done(self) -> None:
        assert faults.visible_pods_all_terminal([self.pod("Failed")])

    def test_a_running_pod_or_no_pod_holds(self) -> None:
        assert not faults.visible_pods_all_terminal([self.pod("Failed"), self.pod("Running")])
        assert not faults.visible_pods_all_terminal([])


class TestUnreserveClearsClaim:
    CLAIM = GroupClaim(ClaimState.RESERVED, "n1", frozenset({"left", "right"}), 1)

    def test_drops_the_other_holders_claim(self) -> None:
        assert unreserve(self.CLAIM, "right", 1) == GroupClaim(ClaimState.RESERVED, "n1", frozenset({"left"}), 1)
        assert faults.unreserve_clearing(self.CLAIM, "right", 1) == GroupClaim(ClaimState.PENDING, None, frozenset(), 1)

    def test_a_pod_that_is_no_holder_changes_nothing(self) -> None:
        assert faults.unreserve_clearing(self.CLAIM, "stranger", 1) == self.CLAIM


class TestNoReleaseOnCancel:
    RUNNING = {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Succeeded", "status": "Unknown"}]}}
    DONE = {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}
    CANCELLED = {"metadata": {"name": "a"}, "spec": {"status": "Cancelled"}, "status": RUNNING["status"]}

    def test_a_cancelled_or_deleted_run_holds(self) -> None:
        decide = faults.ignoring_stops(release_decision)
        assert release_decision(["big"], self.CANCELLED, {}).release
        assert not decide(["big"], self.CANCELLED, {}).release
        assert not decide(["big"], None, {}).release

    def test_a_finished_run_still_releases(self) -> None:
        verdict = faults.ignoring_stops(release_decision)(["big"], self.DONE, {})
        assert (verdict.release, verdict.reason) == (True, ReleaseReason.PIPELINE_RUN_DONE)


class TestOutlivesDeletedRecord:
    RECORD = {
        "metadata": {"namespace": "ci", "name": "a"},
        "spec": {"groups": [{"name": "source", "tasks": ["big"], "peak": {"cpu": "3800m"}}]},
        "status": {"groups": [{"name": "source", "state": "Reserved", "node": "n1"}]},
    }
    RELEASED = {**RECORD, "status": {"groups": [{"name": "source", "state": "Released", "node": "n1"}]}}

    def test_a_deleted_records_reservation_stays_counted(self) -> None:
        remembered: dict[tuple[str, str], list[ActiveReservation]] = {}
        faults.remember_reservations(remembered, "ADDED", self.RECORD)
        assert faults.counting_deleted_records(SEED, {("ci", "a")}, remembered) == list(SEED)
        faults.remember_reservations(remembered, "DELETED", self.RECORD)
        assert faults.counting_deleted_records([], set(), remembered) == list(SEED)

    def test_a_release_seen_before_the_delete_frees_the_room(self) -> None:
        remembered: dict[tuple[str, str], list[ActiveReservation]] = {}
        faults.remember_reservations(remembered, "ADDED", self.RECORD)
        faults.remember_reservations(remembered, "MODIFIED", self.RELEASED)
        faults.remember_reservations(remembered, "DELETED", self.RELEASED)
        assert faults.counting_deleted_records([], set(), remembered) == []


    def test_a_deleted_run_is_left_to_the_collector_and_a_cancelled_one_still_released(self) -> None:
        decide = faults.ignoring_reasons(release_decision, faults.LEFT_TO_THE_COLLECTOR, "outlives_deleted_record")
        assert not decide(["big"], None, {}).release
        assert decide(["big"], TestNoReleaseOnCancel.CANCELLED, {}).release


class TestMemoryOnlyState:
    def test_claims_made_before_the_restart_hold_nothing(self) -> None:
        assert faults.claimed_in_this_process(SEED, set()) == []
        assert faults.claimed_in_this_process(SEED, {A}) == list(SEED)


class TestFinallyOutsideGroup:
    GRAPH = PipelineGraph([task("build", 960), task("report", 1440, "build", is_finally=True)])

    def test_the_finally_task_leaves_its_group_and_its_peak(self) -> None:
        (reference,) = partition_into_groups(self.GRAPH)
        assert (reference.tasks, reference.peak) == (("build", "report"), Resources(cpu=1440))
        (mutant,) = faults.groups_without_finally(self.GRAPH, (reference,))
        assert (mutant.tasks, mutant.workspaces, mutant.peak) == (("build",), ("source",), Resources(cpu=960))

    def test_a_group_of_finally_tasks_only_disappears(self) -> None:
        graph = PipelineGraph([task("build", 100, workspaces=()), task("notify", 100, "build", is_finally=True)])
        assert faults.groups_without_finally(graph, partition_into_groups(graph)) == ()


class TestIgnoresReservations:
    def test_sees_none(self) -> None:
        assert faults.no_reservations(SEED) == []


def test_every_mutant_names_an_existing_scenario_and_a_fault() -> None:
    """A mutant's scenario exists, unless the mutant says what it is waiting for (`pending`)."""
    from harness.cluster.paths import REPO_ROOT

    for mutant in MUTANTS.values():
        assert mutant.fault, mutant.name
        exists = (REPO_ROOT / "tests" / "conformance" / f"test_{mutant.caught_by}.py").is_file()
        assert exists or mutant.pending, f"{mutant.name}: no scenario {mutant.caught_by} and nothing pending"


def test_the_runner_refuses_an_unknown_mutant(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.mutants.run import main

    assert main(["no_such_mutant"]) == 2
    assert "name a mutant first" in capsys.readouterr().err


class TestReservesCpuOnly:
    # memory_decides in bytes of an 8Gi node, by hand: A's big task peaks at 0.7 (6012954214 B), its small pod
    # runs with 0.05 (429496729 B): A's residual is 6012954214 - 429496729 = 5583457485 B of memory.
    NODE = NodeView("n1", Resources(cpu=4800, memory=8 * 1024**3), 110, (PodUsage("a-1", Resources(cpu=96, memory=429496729), A),))
    HELD = (ActiveReservation(A, "n1", Resources(cpu=240, memory=6012954214)),)

    def test_the_memory_residual_is_dropped_and_the_cpu_one_kept(self) -> None:
        assert foreign_reserved(self.NODE, self.HELD, excluding=B) == Resources(cpu=144, memory=5583457485)
        assert faults.cpu_only(foreign_reserved)(self.NODE, self.HELD, excluding=B) == Resources(cpu=144, memory=0)

    def test_b_fits_beside_a_where_the_reference_turns_it_away(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from reference_scheduler.core import headroom

        # B asks 0.4 of the memory (3435973836 B): 8Gi - 429496729 - 5583457485 = 2576980378 B are free, too few.
        b_pod = PodUsage("b-1", Resources(cpu=48, memory=3435973836), B)
        demand = GroupDemand(B, Resources(cpu=48, memory=3435973836))
        assert [f.resource for f in fit(self.NODE, self.HELD, b_pod, demand)] == ["memory"]  # type: ignore[union-attr]
        monkeypatch.setattr(headroom, "foreign_reserved", faults.cpu_only(foreign_reserved))
        assert fit(self.NODE, self.HELD, b_pod, demand) == []


class TestGracefulCancelReleasesAtOnce:
    """{small, report}: small a DAG task cancelled by the stop, report a finally task with no TaskRun yet."""

    STOPPED = {
        "metadata": {"name": "a"},
        "spec": {"status": "CancelledRunFinally"},
        "status": {
            "conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "CancelledRunningFinally"}],
            "pipelineSpec": {"tasks": [{"name": "small"}], "finally": [{"name": "report"}]},
            "childReferences": [{"pipelineTaskName": "small", "name": "a-small"}],
        },
    }
    SMALL = {"a-small": {"spec": {"status": "TaskRunCancelled"}, "status": {"conditions": [{"type": "Succeeded", "status": "False", "reason": "TaskRunCancelled"}]}}}

    def test_the_finally_task_to_come_holds_in_the_reference_and_not_here(self) -> None:
        assert not release_decision(["small", "report"], self.STOPPED, self.SMALL).release
        verdict = faults.graceful_stop_read_as_cancelled(release_decision, "CancelledRunFinally")(["small", "report"], self.STOPPED, self.SMALL)
        assert (verdict.release, verdict.reason) == (True, ReleaseReason.PIPELINE_RUN_CANCELLED)

    def test_other_runs_are_judged_as_by_the_reference(self) -> None:
        decide = faults.graceful_stop_read_as_cancelled(release_decision, "CancelledRunFinally")
        running = {**self.STOPPED, "spec": {}}
        assert decide(["small", "report"], running, self.SMALL) == release_decision(["small", "report"], running, self.SMALL)
        assert decide(["small"], None, {}) == release_decision(["small"], None, {})


class TestTasksTimeoutReadAsPipelineTimeout:
    """{small, report} 25 s after the start under timeouts {pipeline: 1h, tasks: 20s}: small cancelled by Tekton, report still to come."""

    START = datetime(2026, 12, 1, 12, 0, 0)
    TIMED_OUT = {
        "metadata": {"name": "a"},
        "spec": {"timeouts": {"pipeline": "1h", "tasks": "20s"}},
        "status": {
            "startTime": "2026-12-01T12:00:00Z",
            "conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "PipelineRunTimeoutRunningFinally"}],
            "pipelineSpec": {"tasks": [{"name": "small"}], "finally": [{"name": "report"}]},
            "childReferences": [{"pipelineTaskName": "small", "name": "a-small"}],
        },
    }
    SMALL = {"a-small": {"spec": {"status": "TaskRunCancelled"}, "status": {"conditions": [{"type": "Succeeded", "status": "False", "reason": "TaskRunCancelled"}]}}}

    def test_the_finally_task_to_come_holds_in_the_reference_and_not_here(self) -> None:
        now = self.START + timedelta(seconds=25)
        assert not release_decision(["small", "report"], self.TIMED_OUT, self.SMALL, now=now).release
        verdict = faults.tasks_timeout_read_as_pipeline_timeout(release_decision)(["small", "report"], self.TIMED_OUT, self.SMALL, now=now)
        assert (verdict.release, verdict.reason) == (True, ReleaseReason.PIPELINE_RUN_TIMED_OUT)

    def test_before_the_tasks_timeout_and_without_one_it_judges_as_the_reference(self) -> None:
        decide = faults.tasks_timeout_read_as_pipeline_timeout(release_decision)
        early = self.START + timedelta(seconds=15)
        assert decide(["small", "report"], self.TIMED_OUT, {}, now=early) == release_decision(["small", "report"], self.TIMED_OUT, {}, now=early)
        no_tasks_timeout = {**self.TIMED_OUT, "spec": {"timeouts": {"pipeline": "1h"}}}
        late = self.START + timedelta(seconds=25)
        assert decide(["small", "report"], no_tasks_timeout, self.SMALL, now=late) == release_decision(["small", "report"], no_tasks_timeout, self.SMALL, now=late)
        assert decide(["small"], None, {}) == release_decision(["small"], None, {})


class TestGracefulStopReleasesAtOnce:
    """{small, report}: small a DAG task still running after the stop, report a finally task with no TaskRun yet."""

    STOPPED = {
        "metadata": {"name": "a"},
        "spec": {"status": "StoppedRunFinally"},
        "status": {
            "conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "StoppedRunningFinally"}],
            "pipelineSpec": {"tasks": [{"name": "small"}], "finally": [{"name": "report"}]},
            "childReferences": [{"pipelineTaskName": "small", "name": "a-small"}],
        },
    }
    RUNNING = {"a-small": {"spec": {}, "status": {"conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}]}}}
    DONE = {"a-small": {"spec": {}, "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}]}}}

    def test_the_running_dag_task_and_the_finally_task_to_come_hold_in_the_reference_and_not_here(self) -> None:
        decide = faults.graceful_stop_read_as_cancelled(release_decision, "StoppedRunFinally")
        for task_runs in (self.RUNNING, self.DONE):
            assert not release_decision(["small", "report"], self.STOPPED, task_runs).release
            verdict = decide(["small", "report"], self.STOPPED, task_runs)
            assert (verdict.release, verdict.reason) == (True, ReleaseReason.PIPELINE_RUN_CANCELLED)

    def test_other_runs_are_judged_as_by_the_reference(self) -> None:
        decide = faults.graceful_stop_read_as_cancelled(release_decision, "StoppedRunFinally")
        cancelled_run_finally = {**self.STOPPED, "spec": {"status": "CancelledRunFinally"}}
        running = {**self.STOPPED, "spec": {}}
        for pipeline_run in (cancelled_run_finally, running):
            assert decide(["small", "report"], pipeline_run, self.RUNNING) == release_decision(["small", "report"], pipeline_run, self.RUNNING)
        assert decide(["small"], None, {}) == release_decision(["small"], None, {})


#: A run binding one workspace of each kind the suite's fixtures use.
BOUND_RUN_SPEC = {
    "workspaces": [
        {"name": "source", "volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
        {"name": "cache", "persistentVolumeClaim": {"claimName": "cache"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "settings", "configMap": {"name": "settings"}},
    ]
}


def test_every_bound_workspace_counts_scratch_space_as_co_locating() -> None:
    from reference_scheduler.core.workspace_bindings import co_locating_workspaces

    assert co_locating_workspaces(BOUND_RUN_SPEC) == {"source", "cache"}
    assert faults.every_bound_workspace(BOUND_RUN_SPEC) == {"source", "cache", "scratch", "settings"}


def test_claim_bound_workspaces_leave_out_only_the_volume_claim_template() -> None:
    assert faults.claim_bound_workspaces(BOUND_RUN_SPEC) == {"cache"}


def test_embedded_spec_as_resolved_sees_nothing_of_a_pipeline_ref_run() -> None:
    resolved = {"tasks": [{"name": "t", "matrix": {"params": [{"name": "x", "value": ["a", "b"]}]}}]}
    by_ref = {"spec": {"pipelineRef": {"name": "p"}}, "status": {"pipelineSpec": resolved}}
    assert faults.embedded_spec_as_resolved(by_ref) is None
    written = {"tasks": [{"name": "t", "matrix": {"params": [{"name": "x", "value": "$(params.xs[*])"}]}}]}
    embedded = {"spec": {"pipelineSpec": written}, "status": {"pipelineSpec": resolved, "conditions": []}}
    assert faults.embedded_spec_as_resolved(embedded) == {"spec": {"pipelineSpec": written}, "status": {"pipelineSpec": written, "conditions": []}}


@pytest.mark.parametrize(
    "value, misread",
    [("4294M", "4294Mi"), ("1.5G", "1.5Gi"), ("500k", "500Ki"), ("4096Mi", "4096Mi"), ("8589934592", "8589934592"), ("1e3", "1e3"), ("Mi", "Mi")],
)
def test_decimal_suffix_as_binary_misreads_only_decimal_suffixes(value: str, misread: str) -> None:
    assert faults.decimal_suffix_as_binary(value) == misread


@pytest.mark.parametrize("value, misread", [("2.45", "2"), ("0.5", "0"), ("2450m", "2450m"), ("2", "2"), ("1.5e3", "1.5e3")])
def test_whole_cores_drops_only_a_fraction_of_cores(value: str, misread: str) -> None:
    assert faults.whole_cores(value) == misread


def test_the_misread_parsers_change_the_amounts_the_quantity_spellings_scenario_uses() -> None:
    from reference_scheduler.core import resources

    saved = resources._parse
    try:
        faults.apply_decimal_memory_as_binary()
        assert resources.memory_bytes("4294M") == 4294 * 2**20 and resources.cpu_millis("2.45") == 2450
        resources._parse = saved
        faults.apply_fractional_cores_truncated()
        assert resources.cpu_millis("2.45") == 2000 and resources.memory_bytes("4294M") == 4294 * 10**6
    finally:
        resources._parse = saved


def test_young_reservations_drop_only_claims_older_than_the_mutants_limit() -> None:
    reservations = [ActiveReservation(A, "n1", Resources(800)), ActiveReservation(GroupKey("ci", "a", "cache"), "n1", Resources(100))]
    record = {"status": {"groups": [
        {"name": "source", "state": "Reserved", "node": "n1", "reservedAt": "2026-12-03T08:00:00Z"},
        {"name": "cache", "state": "Reserved", "node": "n1", "reservedAt": "2026-12-03T08:00:15Z"},
    ]}}
    at = datetime.fromisoformat("2026-12-03T08:00:25+00:00")
    assert faults.young_reservations(reservations, record, at) == reservations[1:]
    assert faults.young_reservations(reservations, record, at - timedelta(seconds=10)) == reservations


class TestNamespaceBlindRunPods:
    """Two runs named `build`, team-a's record made first; `lint` only in team-b."""

    @staticmethod
    def record(namespace: str, name: str, created: str) -> dict[str, object]:
        return {"metadata": {"namespace": namespace, "name": name, "creationTimestamp": created}}

    RECORDS = (
        record("team-b", "build", "2026-12-03T08:00:05Z"),
        record("team-a", "build", "2026-12-03T08:00:01Z"),
        record("team-b", "lint", "2026-12-03T08:00:09Z"),
    )

    def test_a_run_named_like_an_older_one_elsewhere_gets_that_ones_record(self) -> None:
        found = faults.record_of_run_anywhere(self.RECORDS, "build")
        assert found is not None and found["metadata"]["namespace"] == "team-a"

    def test_a_name_one_namespace_holds_is_found_as_the_reference_finds_it(self) -> None:
        found = faults.record_of_run_anywhere(self.RECORDS, "lint")
        assert found is not None and found["metadata"]["namespace"] == "team-b"
        assert faults.record_of_run_anywhere(self.RECORDS, "deploy") is None


class TestVolumeFaults:
    """The volume mutants: each drops one rule of section 7, Volumes, and keeps the rest."""

    PINNED = {"metadata": {"name": "pv"}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}}
    N0 = {"metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0"}}}
    BUILD = {"metadata": {"name": "build", "namespace": "ci"}, "spec": {"volumes": [{"name": "ws", "persistentVolumeClaim": {"claimName": "pvc-1"}}]}}
    RUN = {"spec": {"workspaces": [{"name": "source", "volumeClaimTemplate": {}}, {"name": "cache", "persistentVolumeClaim": {"claimName": "cache"}}]}}

    def test_a_volume_pinned_elsewhere_admits_the_node_where_the_reference_refuses_it(self) -> None:
        from reference_scheduler.core.volume_binding import pv_admits_node

        assert not pv_admits_node(self.PINNED, self.N0)
        assert faults.admits_every_node(self.PINNED, self.N0)

    def test_no_claim_is_ever_provisioned(self) -> None:
        assert faults.nothing_to_provision("ci", ("pvc-1",), None) == ()

    def test_a_group_loses_its_later_tasks_claims_and_keeps_the_pods_own(self) -> None:
        from reference_scheduler.core.volume_binding import group_claim_names

        assert set(group_claim_names(self.BUILD, self.RUN, ("source", "cache"))) == {"pvc-1", "cache"}
        assert faults.own_claims_only(self.BUILD, self.RUN, ("source", "cache")) == ("pvc-1",)


def test_task_from_pod_name_reads_short_names_and_loses_shortened_ones() -> None:
    def pod(name: str, run: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "labels": {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": "checkout-the-monorepo"}}}

    assert faults.task_from_pod_name(pod("build-x-clone-pod", "build-x")) == ("build-x", "clone")
    assert faults.task_from_pod_name(pod("build-x-clone-pod-retry2", "build-x")) == ("build-x", "clone")
    # Tekton's name for the pod of task checkout-the-monorepo of run long-generated-names-nightly-integration-build-x7k2q:
    # kmeta.ChildName twice keeps 27 characters and an md5 hash, then `-pod`.
    shortened = "long-gene3c7f0b1e9a4d5c6b2f" + "0" * 32 + "-pod"
    assert len(shortened) == 63
    assert faults.task_from_pod_name(pod(shortened, "long-generated-names-nightly-integration-build-x7k2q")) is None


def test_fit_capping_the_peak_opens_a_claim_no_node_can_hold() -> None:
    group = GroupKey("ci", "tests", "g0")
    empty = NodeView("n1", Resources(cpu=4800), 110, ())
    checkout = PodUsage("checkout", Resources(cpu=240), group)
    demand = GroupDemand(group, Resources(cpu=5760))
    assert fit(empty, (), checkout, demand), "the reference refuses a group larger than the node"
    assert faults.fit_capping_the_peak_at_the_node(empty, (), checkout, demand) == []


def _heavy_pod(name: str, *, anti_affinity: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if anti_affinity:
        term = {"labelSelector": {"matchLabels": {"class": "heavy"}}, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"class": "heavy"}}, "spec": spec}


@pytest.mark.parametrize(
    ("incoming_has_term", "placed_has_term", "forgotten"),
    [(True, False, "anti_affinity_counts"), (False, True, "existing_anti_affinity_counts")],
)
def test_affinity_state_without_forgets_only_its_rule(incoming_has_term: bool, placed_has_term: bool, forgotten: str) -> None:
    from reference_scheduler.core.inter_pod_affinity import inter_pod_affinity_failure, inter_pod_affinity_state

    node = {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}}
    placed = _heavy_pod("placed", anti_affinity=placed_has_term)
    state = inter_pod_affinity_state(
        _heavy_pod("incoming", anti_affinity=incoming_has_term),
        nodes={"n1": node},
        pods_by_node={"n1": [placed]},
        anti_affinity_pods_by_node={"n1": [placed] if placed_has_term else []},
        namespace_labels={"ns": {}},
    )
    assert state is not None and inter_pod_affinity_failure(state, node) is not None
    assert inter_pod_affinity_failure(faults.affinity_state_without(state, forgotten), node) is None
    other = "existing_anti_affinity_counts" if forgotten == "anti_affinity_counts" else "anti_affinity_counts"
    assert inter_pod_affinity_failure(faults.affinity_state_without(state, other), node) is not None


def test_affinity_state_without_affinity_terms_passes_a_node_without_the_wanted_pod() -> None:
    from reference_scheduler.core.inter_pod_affinity import inter_pod_affinity_failure, inter_pod_affinity_state

    term = {"labelSelector": {"matchLabels": {"app": "build-cache"}}, "topologyKey": "kubernetes.io/hostname"}
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}
    bare = {"metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0"}}}
    cache = {"metadata": {"name": "cache", "namespace": "ns", "labels": {"app": "build-cache"}}, "spec": {}}
    cached = {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}}
    state = inter_pod_affinity_state(
        pod, nodes={"n0": bare, "n1": cached}, pods_by_node={"n1": [cache]}, anti_affinity_pods_by_node={}, namespace_labels={"ns": {}}
    )
    assert state is not None and inter_pod_affinity_failure(state, bare) is not None
    assert inter_pod_affinity_failure(faults.affinity_state_without(state, "affinity_terms"), bare) is None


# --- the resource mutants: peak_ignores_extended_resources, fit_ignores_ephemeral_storage, fit_ignores_hugepages ---

GI = 1024**3
GPU = "example.com/gpu"


def resource_task(name: str, amounts: dict[str, int], *deps: str) -> TaskNode:
    return TaskNode(name, frozenset({"source"}), frozenset(deps), False, 0, Resources.of(amounts), 1)


class TestPeakIgnoresExtendedResources:
    # extended_resources_in_group by hand: build (1 CPU, 1Gi of ephemeral-storage) then test (1 CPU and one GPU).
    GRAPH = PipelineGraph(
        [resource_task("build", {"cpu": 1000, "ephemeral-storage": GI}), resource_task("test", {"cpu": 1000, GPU: 1}, "build")]
    )

    def test_the_gpu_leaves_the_peak_and_nothing_else_does(self) -> None:
        reference = group_peak(self.GRAPH, ["build", "test"])
        assert reference == Resources.of({"cpu": 1000, "ephemeral-storage": GI, GPU: 1})
        mutant = faults.peak_without_extended_resources(group_peak)(self.GRAPH, ["build", "test"])
        assert mutant == Resources.of({"cpu": 1000, "ephemeral-storage": GI})

    def test_the_record_and_so_the_claim_hold_no_gpu(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from reference_scheduler.core import partition

        monkeypatch.setattr(partition, "group_peak", partition.group_peak)  # restored after the test
        faults.apply_peak_ignores_extended_resources()
        (group,) = partition.partition_into_groups(self.GRAPH)
        assert group.peak.to_quantities() == {"cpu": "1000m", "memory": "0", "ephemeral-storage": str(GI)}

    def test_another_runs_gpu_pod_then_takes_the_node_s_only_gpu(self) -> None:
        # The node advertises one GPU; the group is Reserved there and runs build (no GPU yet).
        node = NodeView("n1", Resources.of({"cpu": 4000, "memory": 8 * GI, GPU: 1}), 110, (PodUsage("a-build", Resources(cpu=1000), A),))
        other = PodUsage("b-1", Resources.of({"cpu": 100, GPU: 1}), None)
        held = (ActiveReservation(A, "n1", group_peak(self.GRAPH, ["build", "test"])),)
        assert [f.resource for f in fit(node, held, other, None)] == [GPU]  # type: ignore[union-attr]
        lost = (ActiveReservation(A, "n1", faults.peak_without_extended_resources(group_peak)(self.GRAPH, ["build", "test"])),)
        assert fit(node, lost, other, None) == []


class TestFitIgnoresEphemeralStorageAndHugepages:
    NODE = NodeView(
        "n1",
        Resources.of({"cpu": 4000, "memory": 8 * GI, "ephemeral-storage": 10 * GI, "hugepages-2Mi": 64 * 1024**2}),
        110,
        (PodUsage("a-1", Resources.of({"cpu": 100, "ephemeral-storage": 8 * GI, "hugepages-2Mi": 48 * 1024**2}), None),),
    )
    # Short of both: 2Gi of ephemeral-storage and 16Mi of hugepages-2Mi are left.
    POD = PodUsage("b-1", Resources.of({"cpu": 100, "ephemeral-storage": 4 * GI, "hugepages-2Mi": 32 * 1024**2}), None)

    def test_the_reference_reports_both_in_kube_schedulers_order(self) -> None:
        failures = fit(self.NODE, (), self.POD, None)
        assert [f.summary() for f in failures] == ["Insufficient ephemeral-storage", "Insufficient hugepages-2Mi"]

    def test_each_mutant_drops_its_own_resource_only(self) -> None:
        from reference_scheduler.core.resource_names import is_hugepages_resource_name

        ignoring_storage = faults.fit_ignoring(fit, faults.is_ephemeral_storage)
        ignoring_hugepages = faults.fit_ignoring(fit, is_hugepages_resource_name)
        assert [f.resource for f in ignoring_storage(self.NODE, (), self.POD, None)] == ["hugepages-2Mi"]  # type: ignore[attr-defined]
        assert [f.resource for f in ignoring_hugepages(self.NODE, (), self.POD, None)] == ["ephemeral-storage"]  # type: ignore[attr-defined]

    def test_a_pod_short_of_storage_alone_fits_under_the_mutant(self) -> None:
        pod = PodUsage("b-1", Resources.of({"cpu": 100, "ephemeral-storage": 4 * GI}), None)
        assert [f.resource for f in fit(self.NODE, (), pod, None)] == ["ephemeral-storage"]  # type: ignore[union-attr]
        assert faults.fit_ignoring(fit, faults.is_ephemeral_storage)(self.NODE, (), pod, None) == []

    def test_cpu_and_the_pod_count_are_still_judged(self) -> None:
        full = NodeView("n1", self.NODE.allocatable, 1, self.NODE.pods)
        pod = PodUsage("b-1", Resources.of({"cpu": 5000, "ephemeral-storage": 4 * GI}), None)
        failures = faults.fit_ignoring(fit, faults.is_ephemeral_storage)(full, (), pod, None)
        assert [f.summary() for f in failures] == ["Too many pods", "Insufficient cpu"]

    def test_the_patches_replace_the_cycle_s_fit(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from reference_scheduler.runtime import cycle

        monkeypatch.setattr(cycle, "fit", fit)
        faults.apply_fit_ignores_ephemeral_storage()
        assert [f.resource for f in cycle.fit(self.NODE, (), self.POD, None)] == ["hugepages-2Mi"]  # type: ignore[attr-defined]
        monkeypatch.setattr(cycle, "fit", fit)
        faults.apply_fit_ignores_hugepages()
        assert [f.resource for f in cycle.fit(self.NODE, (), self.POD, None)] == ["ephemeral-storage"]  # type: ignore[attr-defined]

