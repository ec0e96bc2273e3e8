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


# === pool shapes (branch `pools`): node checks, pod limit, finished pods, the group's node, release ===


def without_check(checks: Sequence[Callable[..., Any]], dropped: Callable[..., Any]) -> tuple[Callable[..., Any], ...]:
    """without_check(NODE_CHECKS, node_unschedulable): the node checks less one, which every node now passes."""
    return tuple(check for check in checks if check is not dropped)


def _drop_node_check(name: str) -> None:
    from reference_scheduler.core import node_checks

    node_checks.NODE_CHECKS = without_check(node_checks.NODE_CHECKS, getattr(node_checks, name))


def taint_check_ignoring_cordon(check: Callable[[Obj, Obj], Any]) -> Callable[[Obj, Obj], Any]:
    """taint_check_ignoring_cordon(untolerated_taint): the taint check, blind to the cordon's own taint."""
    from reference_scheduler.core.node_checks import UNSCHEDULABLE_TAINT_KEY

    def check_taints(pod: Obj, node: Obj) -> Any:
        spec = dict(node.get("spec") or {})
        spec["taints"] = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT_KEY]
        return check(pod, {**node, "spec": spec})

    return check_taints


def apply_ignores_cordon() -> None:
    """The fault: a cordoned node (spec.unschedulable, and the taint the node controller adds for it) takes new pods."""
    from reference_scheduler.core import node_checks

    checks = without_check(node_checks.NODE_CHECKS, node_checks.node_unschedulable)
    node_checks.NODE_CHECKS = tuple(
        taint_check_ignoring_cordon(c) if c is node_checks.untolerated_taint else c for c in checks
    )


def apply_ignores_taints() -> None:
    """The fault: NoSchedule and NoExecute taints are not checked against the pod's tolerations."""
    _drop_node_check("untolerated_taint")


def apply_ignores_node_selector() -> None:
    """The fault: the pod's nodeSelector is not checked."""
    _drop_node_check("node_selector_mismatch")


def apply_ignores_node_affinity() -> None:
    """The fault: the pod's required node affinity is not checked."""
    _drop_node_check("node_affinity_mismatch")


def without_pod_limit(failures: Iterable[Any]) -> list[Any]:
    """without_pod_limit(fit(...)): the fit verdict with the pod-count failure left out."""
    from reference_scheduler.core.reasons import TooManyPods

    return [f for f in failures if not isinstance(f, TooManyPods)]


def apply_ignores_pod_limit() -> None:
    """The fault: a node's `pods` allocatable is never checked, so a node already at its pod limit takes more."""
    from reference_scheduler.runtime import cycle

    original = cycle.fit

    @functools.wraps(original)
    def fit(*args: Any, **kwargs: Any) -> list[Any]:
        return without_pod_limit(original(*args, **kwargs))

    cycle.fit = fit


def apply_counts_finished_pods() -> None:
    """The fault: Succeeded and Failed pods stay counted on their node, so a node full of finished pods looks full."""
    from reference_scheduler.runtime.cluster_view import ClusterView, pipeline_task_of

    def index(self: ClusterView, pod: Obj) -> None:
        # The reference's _index without its "if is_terminal(pod): return".
        meta = pod.get("metadata") or {}
        uid = meta.get("uid") or ""
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        self._bound.add(uid)
        self._pod_node[uid] = node
        self._node_pods.setdefault(node, {})[uid] = pod
        self._dirty.add(node)
        found = pipeline_task_of(pod)
        if found is not None:
            run = (meta.get("namespace") or "", found[0])
            self._pod_run[uid] = run
            self._run_pods.setdefault(run, set()).add(uid)

    ClusterView._index = index  # type: ignore[method-assign]


def group_pods_alive_on(view: NodeView | None, group: GroupKey) -> bool:
    """group_pods_alive_on(view, group): a non-terminal pod of the group is on the node (all the faulty cache knows)."""
    return view is not None and any(p.group == group for p in view.pods)


def apply_forgets_finished_group_node() -> None:
    """The fault: the group's node is read from a pod cache that drops finished pods.

    Once every pod of the group has finished (between two sequential tasks, in
    the retry gap), the group's next pod is placed as if it had no group: it
    goes wherever scoring says, the claim is neither joined nor followed.
    """
    from reference_scheduler.runtime.cycle import Cycle

    original = Cycle._group_state

    def group_state(self: Cycle, pod: Obj) -> Any:
        state = original(self, pod)
        if state is None or state.claim.state is not ClaimState.RESERVED:
            return state
        if group_pods_alive_on(self._view.node_views().get(state.claim.node or ""), state.key):
            return state
        return None

    Cycle._group_state = group_state  # type: ignore[method-assign]


def apply_spills_from_full_group_node() -> None:
    """The fault: the group's node is a preference, not a rule: a pod that finds no room there goes elsewhere."""
    from reference_scheduler.runtime.cycle import Cycle, Outcome

    original_schedule = Cycle.schedule

    def schedule(self: Cycle, pod: Obj) -> Any:
        outcome = original_schedule(self, pod)
        if outcome is not Outcome.UNSCHEDULABLE:
            return outcome
        state = self._group_state(pod)
        if state is None or state.claim.state is not ClaimState.RESERVED:
            return outcome
        self._group_state = lambda _pod: None  # type: ignore[method-assign]
        try:
            return original_schedule(self, pod)
        finally:
            del self._group_state

    Cycle.schedule = schedule  # type: ignore[method-assign]


#: The release reasons no_release_when_done ignores: the run's own end.
IGNORED_ENDS = frozenset({ReleaseReason.TASKS_DONE.value, ReleaseReason.PIPELINE_RUN_DONE.value})


def apply_no_release_when_done() -> None:
    """The fault: a group is released only when its run is cancelled, stopped, timed out or deleted, never when it is done."""
    from reference_scheduler.runtime import releaser

    releaser.release_decision = ignoring_reasons(releaser.release_decision, IGNORED_ENDS, "no_release_when_done")

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
        # === pool shapes (branch `pools`) ===
        Mutant("ignores_cordon", "a cordoned node takes new pods (spec.unschedulable and its taint ignored)", "node_checks", apply_ignores_cordon),
        Mutant("ignores_taints", "NoSchedule/NoExecute taints are not checked against tolerations", "node_checks", apply_ignores_taints),
        Mutant("ignores_node_selector", "the pod's nodeSelector is not checked", "node_checks", apply_ignores_node_selector),
        Mutant("ignores_node_affinity", "the pod's required node affinity is not checked", "node_checks", apply_ignores_node_affinity),
        Mutant("ignores_pod_limit", "a node's pods allocatable is not checked", "pod_count_limit", apply_ignores_pod_limit),
        Mutant("counts_finished_pods", "Succeeded and Failed pods still count on their node", "finished_pods_free_room", apply_counts_finished_pods),
        Mutant(
            "forgets_finished_group_node",
            "the group's node comes from a pod cache that drops finished pods: once the group's pods have finished, its next pod goes anywhere",
            "group_node_not_the_obvious_choice",
            apply_forgets_finished_group_node,
        ),
        Mutant(
            "spills_from_full_group_node",
            "a group pod that finds no room on its claim's node is placed elsewhere",
            "full_group_node_waits",
            apply_spills_from_full_group_node,
        ),
        Mutant("no_release_when_done", "a group is never released when its tasks or its run are done", "sequential_reuse", apply_no_release_when_done),
    )
}
