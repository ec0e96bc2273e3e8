"""Faults: the one wrong rule each mutant carries, and the small patch that puts it into the reference.

Each mutant is the reference scheduler with ONE fault, patched in at start by
`apply_*` (a module attribute or a method replaced, never a fork). The wrong
rules that are pure functions live here as functions of their own, so unit
tests can show they are wrong in exactly the documented way
(tests/unit/test_mutant_faults.py).

Each Mutant names the scenario written to catch it; the kill table
(tests/mutants/kill_table.py) checks that it does, and shows what else does.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from reference_scheduler.core.claims import ClaimState, GroupClaim
from reference_scheduler.core.headroom import ActiveReservation, NodeView
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.peaks import group_peak
from reference_scheduler.core.pipeline_graph import PipelineGraph
from reference_scheduler.core.release import ReleaseDecision, ReleaseReason
from reference_scheduler.core.resources import ZERO, Resources

Obj = dict[str, Any]

TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True)
class Mutant:
    """Mutant is one faulty variant: its name, the fault in one line, the scenario meant to kill it, the patch."""

    name: str
    fault: str
    caught_by: str
    apply: Callable[[], None]


# --- double_counted_headroom -------------------------------------------------


def foreign_reserved_in_full(node: NodeView, reservations: Iterable[ActiveReservation], *, excluding: GroupKey | None) -> Resources:
    """foreign_reserved_in_full: every other group's whole peak, as if its running pods were not part of it.

    The fault: on the seed node (A: peak 3800m, its 200m pod running) this is
    3800m where the reference's residual is 3600m, so A's pod counts twice.
    """
    peaks: dict[GroupKey, Resources] = {}
    for reservation in reservations:
        if reservation.node == node.name and reservation.group != excluding:
            peaks[reservation.group] = peaks.get(reservation.group, ZERO).max(reservation.peak)
    held = ZERO
    for peak in peaks.values():
        held = held + peak
    return held


def apply_double_counted_headroom() -> None:
    from reference_scheduler.core import headroom, scoring

    headroom.foreign_reserved = foreign_reserved_in_full
    scoring.foreign_reserved = foreign_reserved_in_full


# --- max_peak ----------------------------------------------------------------


def largest_task_peak(graph: PipelineGraph, tasks: Iterable[str]) -> Resources:
    """largest_task_peak: the group's largest task, per resource, even when several run at once.

    The fault: two parallel 1500m tasks get a 1500m peak instead of 3000m.
    """
    requests = [graph.nodes[name].concurrent_request for name in sorted(set(tasks))]
    return Resources(cpu=max((r.cpu for r in requests), default=0), memory=max((r.memory for r in requests), default=0))


def apply_max_peak() -> None:
    from reference_scheduler.core import partition

    partition.group_peak = largest_task_peak


# --- release_on_visible_pods -------------------------------------------------


def visible_pods_all_terminal(pods: Sequence[Mapping[str, Any]]) -> bool:
    """visible_pods_all_terminal: the group has pods and every one of them has finished.

    The fault, used as a release rule: in the retry gap every pod of the task
    is Failed and the retry's pod does not exist yet, so this says "done".
    """
    return bool(pods) and all((pod.get("status") or {}).get("phase") in TERMINAL_PHASES for pod in pods)


def _group_pods(pods: Iterable[Obj], namespace: str, pipeline_run: str, tasks: Iterable[str]) -> list[Obj]:
    wanted = set(tasks)
    found = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        if (
            meta.get("namespace") == namespace
            and labels.get("tekton.dev/pipelineRun") == pipeline_run
            and labels.get("tekton.dev/pipelineTask") in wanted
        ):
            found.append(pod)
    return found


def apply_release_on_visible_pods() -> None:
    from reference_scheduler.runtime.releaser import Releaser
    from reference_scheduler.runtime.scheduler import Scheduler

    original_init = Scheduler.__init__
    original_evaluate = Releaser.evaluate

    @functools.wraps(original_init)
    def init(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.releaser.mutant_pods = self.pods  # type: ignore[attr-defined]

    def evaluate(self: Releaser, record: Obj) -> None:
        namespace = record["metadata"].get("namespace") or ""
        name = record["metadata"]["name"]
        states = {e.get("name"): e.get("state") for e in (record.get("status") or {}).get("groups") or []}
        pods = self.mutant_pods.list()  # type: ignore[attr-defined]
        for group in (record.get("spec") or {}).get("groups") or []:
            if states.get(group.get("name")) == ClaimState.RELEASED.value:
                continue
            if visible_pods_all_terminal(_group_pods(pods, namespace, name, group.get("tasks") or ())):
                self._release(namespace, name, str(group.get("name")), ReleaseReason.TASKS_DONE.value)
        original_evaluate(self, record)

    Scheduler.__init__ = init  # type: ignore[method-assign]
    Releaser.evaluate = evaluate  # type: ignore[method-assign]


# --- unreserve_clears_claim --------------------------------------------------


def unreserve_clearing(claim: GroupClaim, pod_uid: str, generation_seen: int) -> GroupClaim:
    """unreserve_clearing: a failed bind sends the whole claim back to Pending.

    The fault: another pod of the group, already bound under the claim,
    loses it (the reference removes only the failing pod's holder).
    """
    if claim.state is not ClaimState.RESERVED or pod_uid not in claim.holders:
        return claim
    return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)


def apply_unreserve_clears_claim() -> None:
    from reference_scheduler.runtime import cycle

    cycle.unreserve = unreserve_clearing


# --- no_release_on_cancel ----------------------------------------------------

#: The release reasons the no_release_on_cancel mutant ignores.
IGNORED_STOPS = frozenset({ReleaseReason.PIPELINE_RUN_CANCELLED.value, ReleaseReason.PIPELINE_RUN_DELETED.value})


def ignoring_reasons(decide: Callable[..., ReleaseDecision], reasons: frozenset[str], mutant: str) -> Callable[..., ReleaseDecision]:
    """ignoring_reasons(release_decision, reasons, mutant): the same verdicts, except that a release for one of `reasons` holds."""

    @functools.wraps(decide)
    def decision(*args: Any, **kwargs: Any) -> ReleaseDecision:
        verdict = decide(*args, **kwargs)
        if verdict.release and verdict.reason in reasons:
            return ReleaseDecision(False, ReleaseReason.TASK_RUNNING.value, f"mutant {mutant} ignores {verdict.reason}")
        return verdict

    return decision


def ignoring_stops(decide: Callable[..., ReleaseDecision]) -> Callable[..., ReleaseDecision]:
    """ignoring_stops(release_decision): the same verdicts, except that a cancelled or deleted run holds.

    The fault: a cancelled run's group waits for tasks that will never run, so
    its reservation leaks.
    """
    return ignoring_reasons(decide, IGNORED_STOPS, "no_release_on_cancel")


def apply_no_release_on_cancel() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = ignoring_stops(releaser.release_decision)


# --- outlives_deleted_record ---------------------------------------------------

RunKey = tuple[str, str]


def remember_reservations(remembered: dict[RunKey, list[ActiveReservation]], kind: str, record: Obj) -> None:
    """remember_reservations: a reservation table fed by the record watch, which misses DELETE.

    The fault: when a PipelineRun is deleted and the garbage collector takes
    its record, the table keeps the record's last Reserved groups forever.
    """
    if kind == "DELETED":
        return
    from reference_scheduler.runtime.cluster_view import reservations_of

    meta = record.get("metadata") or {}
    remembered[(meta.get("namespace") or "", meta.get("name") or "")] = reservations_of(record)


def counting_deleted_records(
    current: Sequence[ActiveReservation], present: set[RunKey], remembered: Mapping[RunKey, Sequence[ActiveReservation]]
) -> list[ActiveReservation]:
    """counting_deleted_records: the present records' reservations plus what the table still holds for deleted ones."""
    return list(current) + [r for run, held in remembered.items() if run not in present for r in held]


#: What outlives_deleted_record leaves to the garbage collector, as the contract allows.
LEFT_TO_THE_COLLECTOR = frozenset({ReleaseReason.PIPELINE_RUN_DELETED.value})


def apply_outlives_deleted_record() -> None:
    from reference_scheduler.runtime import releaser
    from reference_scheduler.runtime.cluster_view import ClusterView

    # Not a second fault: the contract lets a deleted run's record simply go with it (ownerReference).
    # The reference also releases it itself, and which comes first is a race; leaving it to the
    # collector makes the record always vanish while Reserved, which is what the missed DELETE needs.
    releaser.release_decision = ignoring_reasons(releaser.release_decision, LEFT_TO_THE_COLLECTOR, "outlives_deleted_record")
    remembered: dict[RunKey, list[ActiveReservation]] = {}
    original_init = ClusterView.__init__
    original_active = ClusterView.active_reservations

    @functools.wraps(original_init)
    def init(self: ClusterView, *, records: Any, **kwargs: Any) -> None:
        original_init(self, records=records, **kwargs)
        records.add_handler(lambda kind, record, old: remember_reservations(remembered, kind, record))

    def active_reservations(self: ClusterView) -> list[ActiveReservation]:
        present = {(r["metadata"].get("namespace") or "", r["metadata"]["name"]) for r in self._records.list()}
        return counting_deleted_records(original_active(self), present, remembered)

    ClusterView.__init__ = init  # type: ignore[method-assign]
    ClusterView.active_reservations = active_reservations  # type: ignore[method-assign]


# --- memory_only_state -------------------------------------------------------


def claimed_in_this_process(reservations: Iterable[ActiveReservation], claimed: set[GroupKey]) -> list[ActiveReservation]:
    """claimed_in_this_process: only the reservations this process made itself.

    The fault: a table of reservations kept in memory starts empty after a
    restart, so claims made before it hold no room any more.
    """
    return [r for r in reservations if r.group in claimed]


def apply_memory_only_state() -> None:
    from reference_scheduler.runtime.cluster_view import ClusterView
    from reference_scheduler.runtime.cycle import Cycle, Outcome

    claimed: set[GroupKey] = set()
    original_claim_and_bind = Cycle._claim_and_bind
    original_active = ClusterView.active_reservations

    def claim_and_bind(self: Cycle, pod: Obj, node: str, group: Any, grouped: bool) -> Outcome:
        if group is not None and grouped:
            claimed.add(group.key)
        return original_claim_and_bind(self, pod, node, group, grouped)

    def active_reservations(self: ClusterView) -> list[ActiveReservation]:
        return claimed_in_this_process(original_active(self), claimed)

    Cycle._claim_and_bind = claim_and_bind  # type: ignore[method-assign]
    ClusterView.active_reservations = active_reservations  # type: ignore[method-assign]


# --- finally_outside_group ---------------------------------------------------


def groups_without_finally(graph: PipelineGraph, groups: Iterable[WorkspaceGroup]) -> tuple[WorkspaceGroup, ...]:
    """groups_without_finally: the same groups with their finally tasks left out (and peaks without them).

    The fault: a finally task that shares the workspace is scheduled as a plain
    pod, anywhere, and its request is not reserved. A group left with no task
    disappears.
    """
    finally_tasks = {node.name for node in graph if node.is_finally}
    kept = []
    for group in groups:
        tasks = tuple(task for task in group.tasks if task not in finally_tasks)
        if tasks:
            kept.append(dataclasses.replace(group, tasks=tasks, peak=group_peak(graph, tasks)))
    return tuple(kept)


def apply_finally_outside_group() -> None:
    from reference_scheduler.runtime import planner

    original = planner.partition_into_groups

    def partition(graph: PipelineGraph, **kwargs: Any) -> tuple[WorkspaceGroup, ...]:
        return groups_without_finally(graph, original(graph, **kwargs))

    planner.partition_into_groups = partition


# --- stale_node --------------------------------------------------------------


def apply_stale_node() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    def keep_claim(self: Releaser, namespace: str, name: str, group: str, node: str) -> None:
        """The fault: a claim on a deleted node stays Reserved there, forever."""

    Releaser._drop_lost_node = keep_claim  # type: ignore[method-assign]


# --- ignores_reservations ----------------------------------------------------


def no_reservations(reservations: Iterable[ActiveReservation]) -> list[ActiveReservation]:
    """no_reservations: the fault of a pod-counting scheduler, which sees no reservation at all."""
    return []


def apply_ignores_reservations() -> None:
    from reference_scheduler.runtime.cluster_view import ClusterView

    original_active = ClusterView.active_reservations

    def active_reservations(self: ClusterView) -> list[ActiveReservation]:
        return no_reservations(original_active(self))

    ClusterView.active_reservations = active_reservations  # type: ignore[method-assign]


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "double_counted_headroom",
            "foreign reservations are subtracted in full, on top of their running pods",
            "exact_headroom",
            apply_double_counted_headroom,
        ),
        Mutant("max_peak", "a group's peak is its largest task, even for tasks that run in parallel", "parallel_peak", apply_max_peak),
        Mutant(
            "release_on_visible_pods",
            "a group is released once every visible pod of it is terminal (the retry gap)",
            "retry_gap",
            apply_release_on_visible_pods,
        ),
        Mutant(
            "unreserve_clears_claim",
            "a failed bind sends the claim back to Pending although another holder is bound under it",
            "concurrent_bind_rollback",
            apply_unreserve_clears_claim,
        ),
        Mutant(
            "no_release_on_cancel",
            "no release when the PipelineRun is cancelled or deleted: a cancelled run's reservation leaks (a deleted run's record still goes with it, by the contract's ownerReference)",
            "cancel_releases",
            apply_no_release_on_cancel,
        ),
        Mutant(
            "outlives_deleted_record",
            "a reservation stays counted after its PipelineRun and record are deleted (a watch that misses DELETE; deleted runs are left to the garbage collector, as the contract allows)",
            "delete_releases",
            apply_outlives_deleted_record,
        ),
        Mutant(
            "memory_only_state",
            "reservations are counted from memory: after a restart, claims made before it hold no room",
            "scheduler_restart",
            apply_memory_only_state,
        ),
        Mutant(
            "finally_outside_group",
            "finally tasks are left out of their workspace group",
            "finally_in_group",
            apply_finally_outside_group,
        ),
        Mutant("stale_node", "a claim on a deleted node keeps pointing at it forever", "node_loss", apply_stale_node),
        Mutant("ignores_reservations", "reservations are ignored entirely: only pods count", "peak_blocks_b", apply_ignores_reservations),
    )
}
