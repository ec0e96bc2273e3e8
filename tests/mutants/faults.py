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
import re
from dataclasses import dataclass
from datetime import UTC, datetime
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
    """Mutant is one faulty variant: its name, the fault in one line, the scenario meant to kill it, the patch.

    `rule` names the contract rule it breaks (a key of RULES: docs/contract.md
    section and rule), so the kill table can be read per rule. `pending` is
    empty when `caught_by` is a scenario (or the contract monitor running
    through it) that exists on this branch; otherwise it says what the
    scenario or check still waits for, and the mutant is expected to survive
    until it lands.
    """

    name: str
    fault: str
    caught_by: str
    apply: Callable[[], None]
    rule: str = ""
    pending: str = ""


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
    names = {name for r in requests for name in r.names()}
    return Resources.of({name: max((r.get(name) for r in requests), default=0) for name in names})


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


def _releaser_sees_pods() -> None:
    """_releaser_sees_pods() hands the releaser the scheduler's pod cache (`mutant_pods`), for faults that judge by pods."""
    from reference_scheduler.runtime.scheduler import Scheduler

    original_init = Scheduler.__init__

    @functools.wraps(original_init)
    def init(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.releaser.mutant_pods = self.pods  # type: ignore[attr-defined]

    Scheduler.__init__ = init  # type: ignore[method-assign]


def apply_release_on_visible_pods() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    _releaser_sees_pods()
    original_evaluate = Releaser.evaluate

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


# === The catalogue grown from docs/contract.md, rule by rule (issue 11, item 5) ===
#
# The first five are the five-rule-breaking build of issue 11, one rule each.

# --- no_active_label -----------------------------------------------------------


def manifest_rewritten(rewrite: Callable[[Obj], Obj]) -> None:
    """manifest_rewritten(rewrite): every record the reference creates is `rewrite` of the manifest it would send."""
    from reference_scheduler.runtime import records

    original = records.record_manifest

    def manifest(pipeline_run: Obj, groups: tuple[WorkspaceGroup, ...], **options: Any) -> Obj:
        return rewrite(original(pipeline_run, groups, **options))

    records.record_manifest = manifest


def without_labels(manifest: Obj) -> Obj:
    """without_labels(manifest) is the manifest with no metadata.labels (a record created labelled active loses it)."""
    return {**manifest, "metadata": {k: v for k, v in manifest["metadata"].items() if k != "labels"}}


def apply_no_active_label() -> None:
    from reference_scheduler.runtime.records import RecordWriter

    def sync(self: RecordWriter, namespace: str, name: str, record: Obj, entries: list[Obj]) -> None:
        """The fault: the rescon.dev/active label is never written, whatever the groups' states (docs/contract.md section 9)."""

    RecordWriter._sync_active_label = sync  # type: ignore[method-assign]
    manifest_rewritten(without_labels)  # not even on a record created to claim at once


# --- false_release_reason --------------------------------------------------------


def untrue_reason(reason: str) -> str:
    """untrue_reason(the reason that was true) is a release reason that was not.

    The fault: every release says PipelineRunTimedOut (a run that simply
    succeeded "timed out"); a release that really was a timeout says
    PipelineRunStopped, which only StoppedRunFinally makes true.
    """
    if reason == ReleaseReason.PIPELINE_RUN_TIMED_OUT.value:
        return ReleaseReason.PIPELINE_RUN_STOPPED.value
    return ReleaseReason.PIPELINE_RUN_TIMED_OUT.value


def apply_false_release_reason() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    original = Releaser._release

    def release_saying_otherwise(self: Releaser, namespace: str, name: str, group: str, reason: str) -> None:
        original(self, namespace, name, group, untrue_reason(reason))

    Releaser._release = release_saying_otherwise  # type: ignore[method-assign]


# --- inflated_memory_peak --------------------------------------------------------


def doubled_memory(peak: Resources) -> Resources:
    """doubled_memory: the same CPU peak, twice the memory peak.

    The fault: a group whose tasks need at most 2560Mi at once reserves 5Gi,
    holding back room nothing will use (a group requesting no memory stays at 0).
    """
    return peak._replace(memory=2 * peak.memory)


def apply_inflated_memory_peak() -> None:
    from reference_scheduler.core import partition

    original = partition.group_peak

    def peak(graph: PipelineGraph, tasks: Iterable[str]) -> Resources:
        return doubled_memory(original(graph, tasks))

    partition.group_peak = peak


# --- extra_workspace -------------------------------------------------------------


def with_task_side_names(groups: Sequence[WorkspaceGroup], pipeline_spec: Mapping[str, Any]) -> tuple[WorkspaceGroup, ...]:
    """with_task_side_names: each group also lists the task-side names its tasks bind workspaces under.

    The fault: `workspaces: [{name: w, workspace: source}]` makes the group
    list [source, w]; `w` is the Task's own name for the workspace, not a
    pipeline workspace, and no task uses a pipeline workspace `w`. A name
    already listed by any group is not added, so the record still passes the
    CRD and Record.from_json (each workspace in exactly one group).
    """
    taken = {w for group in groups for w in group.workspaces}
    tasks = [*(pipeline_spec.get("tasks") or []), *(pipeline_spec.get("finally") or [])]
    result = []
    for group in groups:
        extra = []
        for task in tasks:
            if task.get("name") not in group.tasks:
                continue
            for binding in task.get("workspaces") or []:
                name = str(binding.get("name") or "")
                if name and name not in taken:
                    taken.add(name)
                    extra.append(name)
        result.append(dataclasses.replace(group, workspaces=tuple(sorted({*group.workspaces, *extra}))))
    return tuple(result)


def apply_extra_workspace() -> None:
    from reference_scheduler.runtime import cycle, planner

    original = cycle.plan_pipeline_run

    def plan(pipeline_run: Obj, **kwargs: Any) -> planner.Plan:
        found = original(pipeline_run, **kwargs)
        spec = (pipeline_run.get("status") or {}).get("pipelineSpec") or (pipeline_run.get("spec") or {}).get("pipelineSpec") or {}
        return planner.Plan(with_task_side_names(found.groups, spec))

    cycle.plan_pipeline_run = plan


# --- holders_not_joined ----------------------------------------------------------


def reserve_without_joining(claim: GroupClaim, pod_uid: str, node: str) -> Any:
    """reserve_without_joining: reserve() as the reference does it, except that a joining pod is not added to holders.

    The fault: p1 makes the claim on n1 and p2 joins: the reference's holders
    are {p1, p2}, this one's stay {p1}, and p2 is bound outside the claim.
    """
    from reference_scheduler.core.claims import Claimed, reserve

    result = reserve(claim, pod_uid, node)
    if isinstance(result, Claimed) and not result.made:
        return Claimed(claim, made=False, generation=result.generation)
    return result


def apply_holders_not_joined() -> None:
    from reference_scheduler.runtime import cycle

    cycle.reserve = reserve_without_joining


# --- forgets_finished_pods -------------------------------------------------------


def claim_node_from_live_pods(claim: GroupClaim, live_pod_nodes: Iterable[str]) -> str | None:
    """claim_node_from_live_pods: the group's node as a cache of running pods shows it, not as the claim says.

    The fault: once every pod of the group has finished (the cache drops
    finished pods), the group has no node any more, and its next pod is
    placed wherever scoring says, as a plain pod: the claim's node is ignored.
    """
    if claim.state is not ClaimState.RESERVED:
        return claim.node
    return next(iter(sorted(set(live_pod_nodes))), None)


def apply_forgets_finished_pods() -> None:
    from reference_scheduler.runtime.cycle import Cycle

    original = Cycle._group_state

    def group_state(self: Cycle, pod: Obj) -> Any:
        state = original(self, pod)
        if state is None or state.claim.state is not ClaimState.RESERVED:
            return state
        live = [view.name for view in self._view.node_views().values() if any(p.group == state.key for p in view.pods)]
        return state if claim_node_from_live_pods(state.claim, live) is not None else None

    Cycle._group_state = group_state  # type: ignore[method-assign]


# --- record_after_bind -----------------------------------------------------------


def apply_record_after_bind() -> None:
    """The fault: for a group's first pod the order of the writes is bind, create the record, claim.

    The reference creates the record, claims, then binds (docs/contract.md
    section 2, When: the record MUST exist before the first pod of a group is
    bound). The pod is still placed for the group's whole peak, and the claim
    written after the bind is the one the reference would have written, so
    only the order is wrong.
    """
    import kubernetes

    from reference_scheduler.core.claims import Claimed, reserve
    from reference_scheduler.runtime.cluster_view import pipeline_task_of
    from reference_scheduler.runtime.cycle import Cycle, GroupState, Outcome
    from reference_scheduler.runtime.planner import Plan, PlanUnavailable, plan_pipeline_run
    from reference_scheduler.runtime.records import claim_of, with_claim

    late: dict[str, tuple[Obj, Plan]] = {}  # pod uid -> (its PipelineRun, the plan), for pods bound before their record
    original_group_state = Cycle._group_state
    original_claim_and_bind = Cycle._claim_and_bind

    def group_state(self: Cycle, pod: Obj) -> GroupState | None:
        found = pipeline_task_of(pod)
        namespace = pod["metadata"].get("namespace") or ""
        if found is None or self._view.record_of(namespace, found[0]) is not None:
            return original_group_state(self, pod)
        pipeline_run = self._get_pipeline_run(namespace, found[0])
        if pipeline_run is None:
            return original_group_state(self, pod)
        try:
            plan = plan_pipeline_run(pipeline_run, get_task=self._get_task, limit_range=self._get_limit_range(namespace))
        except PlanUnavailable:
            return original_group_state(self, pod)
        group = plan.group_of_task(found[1])
        if group is None:
            return original_group_state(self, pod)
        late[pod["metadata"]["uid"]] = (pipeline_run, plan)
        return GroupState(GroupKey(namespace, found[0], group.name), group.peak, GroupClaim())

    def claim_and_bind(self: Cycle, pod: Obj, node: str, group: GroupState | None, grouped: bool) -> Outcome:
        uid = pod["metadata"]["uid"]
        pending = late.pop(uid, None)
        if pending is None or group is None or not grouped:
            return original_claim_and_bind(self, pod, node, group, grouped)
        try:
            self._bind(pod, node)
        except kubernetes.client.ApiException as err:
            return Outcome.GONE if err.status == 404 else Outcome.RETRY
        pipeline_run, plan = pending
        self._records.create(pipeline_run, plan.groups)

        def claim(entry: Obj) -> Obj | None:
            result = reserve(claim_of(entry), uid, node)
            return with_claim(entry, result.claim) if isinstance(result, Claimed) else None

        self._records.change_group(group.key.namespace, group.key.pipeline_run, group.key.group, claim)
        self._view.assume(pod, node, group.key)
        return Outcome.BOUND

    Cycle._group_state = group_state  # type: ignore[method-assign]
    Cycle._claim_and_bind = claim_and_bind  # type: ignore[method-assign]


# --- no_owner_reference ----------------------------------------------------------


def without_owner(manifest: Obj) -> Obj:
    """without_owner: the record's manifest with no ownerReferences.

    The fault: the garbage collector never deletes the record with its
    PipelineRun (docs/contract.md section 2, Owner).
    """
    meta = dict(manifest["metadata"])
    meta.pop("ownerReferences", None)
    return {**manifest, "metadata": meta}


def apply_no_owner_reference() -> None:
    manifest_rewritten(without_owner)


# --- wrong_run_uid ---------------------------------------------------------------


def with_owner_uid_of(pipeline_run: Obj, pod: Mapping[str, Any]) -> Obj:
    """with_owner_uid_of(run, pod): the PipelineRun as the faulty record writer sees it, with the uid of the pod's owner.

    The fault: the record's `spec.pipelineRun.uid` (and its ownerReference's
    uid) is read from the first pod's controller ownerReference, which is its
    TaskRun, not the PipelineRun (docs/contract.md section 2, Identity).
    """
    owner = next((ref for ref in (pod.get("metadata") or {}).get("ownerReferences") or [] if ref.get("controller")), None)
    if owner is None or not owner.get("uid"):
        return pipeline_run
    return {**pipeline_run, "metadata": {**pipeline_run["metadata"], "uid": owner["uid"]}}


def apply_wrong_run_uid() -> None:
    from reference_scheduler.runtime.cycle import Cycle

    original = Cycle._create_record

    def create_record(self: Cycle, pod: Obj, namespace: str, run_name: str, task: str) -> Obj | None:
        get_pipeline_run = self._get_pipeline_run

        def seen_through_the_pod(ns: str, name: str) -> Obj | None:
            found = get_pipeline_run(ns, name)
            return with_owner_uid_of(found, pod) if found is not None else None

        self._get_pipeline_run = seen_through_the_pod
        try:
            return original(self, pod, namespace, run_name, task)
        finally:
            self._get_pipeline_run = get_pipeline_run

    Cycle._create_record = create_record  # type: ignore[method-assign]


# --- releases_foreign_records ----------------------------------------------------


def owns_records_beside_its_own(record: Mapping[str, Any], scheduler_name: str, records: Iterable[Mapping[str, Any]]) -> bool:
    """owns_records_beside_its_own: a record counts as this scheduler's if it created it, or any record in the same namespace.

    The fault: records annotated `rescon.dev/scheduler-name: other` that sit
    beside this scheduler's own are released (and un-claimed on node loss)
    too, hiding the other scheduler's faults (docs/contract.md section 2,
    Several schedulers). It stays in the namespaces where this scheduler
    works, so running it on a shared cluster never touches other users' runs.
    """
    from reference_scheduler.runtime.records import created_by

    if created_by(record) == scheduler_name:
        return True
    namespace = (record.get("metadata") or {}).get("namespace")
    return any(created_by(r) == scheduler_name and (r.get("metadata") or {}).get("namespace") == namespace for r in records)


def apply_releases_foreign_records() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    def owns(self: Releaser, record: Obj) -> bool:
        return owns_records_beside_its_own(record, self._scheduler_name, self._records.list())

    Releaser.owns = owns  # type: ignore[method-assign]


# --- stale_rollback --------------------------------------------------------------


def rolled_back_on_start(claim: GroupClaim) -> GroupClaim:
    """rolled_back_on_start: what a restarted scheduler does to a Reserved claim it finds: roll it back.

    The fault: it treats every holder it did not bind itself as a failed bind
    and rolls the claim back to Pending with the claim's own generation, which
    it never held (docs/contract.md section 7, rule 4: a scheduler that
    restarted MUST NOT roll back claims it finds). A Pending or Released
    claim is left as it is.
    """
    from reference_scheduler.core.claims import unreserve

    for holder in sorted(claim.holders):
        claim = unreserve(claim, holder, claim.claim_generation)
    if claim.state is ClaimState.RESERVED:  # a claim with no holder left at all
        claim = GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)
    return claim


def on_start_change_claims(change: Callable[[Any, Obj, GroupClaim], GroupClaim]) -> None:
    """Scheduler.run, patched: before it starts, `change(scheduler, record, claim)` rewrites each Reserved claim of its records.

    The shared opening of the faults a restarted scheduler commits on the claims
    it finds (stale_rollback, unbound_claim_dropped_on_start); a claim `change`
    returns as it was is not written.
    """
    from reference_scheduler.runtime.records import RecordGone, claim_of, with_claim
    from reference_scheduler.runtime.scheduler import Scheduler

    original_run = Scheduler.run

    def run(self: Scheduler) -> None:
        for record in self.records.list(self.releaser.owns):
            meta = record["metadata"]
            for entry in (record.get("status") or {}).get("groups") or []:
                if claim_of(entry).state is not ClaimState.RESERVED:
                    continue

                def rewrite(current: Obj) -> Obj | None:
                    before = claim_of(current)
                    after = change(self, record, before) if before.state is ClaimState.RESERVED else before
                    return None if after == before else with_claim(current, after)

                try:
                    self.cycle._records.change_group(meta.get("namespace") or "", meta["name"], str(entry.get("name")), rewrite)
                except RecordGone:
                    pass
        original_run(self)

    Scheduler.run = run  # type: ignore[method-assign]


def apply_stale_rollback() -> None:
    on_start_change_claims(lambda _scheduler, _record, claim: rolled_back_on_start(claim))


# --- claim_moves_node ------------------------------------------------------------


def abandoned_for_another_node(claim: GroupClaim) -> GroupClaim:
    """abandoned_for_another_node: a Reserved claim whose node has no room for the next pod goes back to Pending.

    The fault: the pod then opens a new claim (generation + 1) on another
    node, leaving the group's volume data and its finished pods behind: the
    reference keeps the claim and the pod waits (docs/contract.md section 7,
    rule 3: once a pod of the group was bound to the node, the claim must not move).
    """
    if claim.state is not ClaimState.RESERVED:
        return claim
    return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)


def when_stuck_on_reserved_claim(instead: Callable[[Any, Obj, Any, Callable[[Any, Obj], Any]], Any]) -> None:
    """Cycle.schedule, patched: when an attempt ends UNSCHEDULABLE for a pod whose group holds a Reserved claim, `instead` decides.

    `instead(cycle, pod, group_state, original_schedule)` returns the outcome. The shared opening of the
    two faults that stop treating a full claim node as a rule (claim_moves_node, spills_from_full_group_node).
    """
    from reference_scheduler.runtime.cycle import Cycle, Outcome, WaitingForPlan

    original = Cycle.schedule

    def schedule(self: Cycle, pod: Obj) -> Outcome:
        outcome = original(self, pod)
        if outcome is not Outcome.UNSCHEDULABLE:
            return outcome
        try:
            group = self._group_state(pod)
        except WaitingForPlan:
            return outcome  # parked for its run's plan: no claim to give up yet
        if group is None or group.claim.state is not ClaimState.RESERVED:
            return outcome
        result: Outcome = instead(self, pod, group, original)
        return result

    Cycle.schedule = schedule  # type: ignore[method-assign]


def apply_claim_moves_node() -> None:
    from reference_scheduler.runtime.cycle import Outcome
    from reference_scheduler.runtime.records import RecordGone, claim_of, with_claim

    def abandon_claim(cycle: Any, pod: Obj, group: Any, original: Callable[[Any, Obj], Any]) -> Any:
        node = group.claim.node

        def give_up(entry: Obj) -> Obj | None:
            before = claim_of(entry)
            if before.state is not ClaimState.RESERVED or before.node != node:
                return None
            return with_claim(entry, abandoned_for_another_node(before))

        try:
            cycle._records.change_group(group.key.namespace, group.key.pipeline_run, group.key.group, give_up)
        except RecordGone:
            return Outcome.UNSCHEDULABLE
        return Outcome.RETRY

    when_stuck_on_reserved_claim(abandon_claim)


# --- drops_finished_holders ------------------------------------------------------


def without_finished_holders(claim: GroupClaim, finished: Iterable[str]) -> GroupClaim:
    """without_finished_holders: a Reserved claim minus the holders whose pods have finished.

    The fault: holders shrink to the pods still running, so a bind failure of
    the group's next pod after its first pod finished finds no holder left and
    rolls the claim back, although the group's volume data is on the node
    (docs/contract.md section 7, rule 3: a completed pod stays in holders).
    """
    if claim.state is not ClaimState.RESERVED:
        return claim
    return dataclasses.replace(claim, holders=claim.holders - frozenset(finished))


def apply_drops_finished_holders() -> None:
    from reference_scheduler.runtime.records import claim_of, with_claim
    from reference_scheduler.runtime.releaser import Releaser

    _releaser_sees_pods()
    original_evaluate = Releaser.evaluate

    def evaluate(self: Releaser, record: Obj) -> None:
        namespace = record["metadata"].get("namespace") or ""
        name = record["metadata"]["name"]
        finished = {
            (p.get("metadata") or {}).get("uid")
            for p in self.mutant_pods.list()  # type: ignore[attr-defined]
            if (p.get("status") or {}).get("phase") in TERMINAL_PHASES
        }
        for entry in (record.get("status") or {}).get("groups") or []:
            claim = claim_of(entry)
            if claim.state is ClaimState.RESERVED and claim.holders & finished:

                def drop(current: Obj) -> Obj | None:
                    before = claim_of(current)
                    after = without_finished_holders(before, {uid for uid in finished if uid})
                    return None if after == before else with_claim(current, after)

                self._write(namespace, name, str(entry.get("name")), drop)
        original_evaluate(self, record)

    Releaser.evaluate = evaluate  # type: ignore[method-assign]


# --- reserves_cpu_only -----------------------------------------------------------


def cpu_only(reserved: Callable[..., Resources]) -> Callable[..., Resources]:
    """cpu_only(foreign_reserved): other groups' residuals as the reference counts them, but their memory is dropped.

    The fault: a reservation holds CPU only, so on memory_decides' node (A's
    group Reserved at 0.7 of its memory, 0.05 in use) B's 0.4 sees 0.95 free
    instead of 0.3 (docs/contract.md section 7: the residual is per resource).
    """

    @functools.wraps(reserved)
    def held(node: NodeView, reservations: Iterable[ActiveReservation], *, excluding: GroupKey | None) -> Resources:
        return reserved(node, reservations, excluding=excluding)._replace(memory=0)

    return held


def apply_reserves_cpu_only() -> None:
    from reference_scheduler.core import headroom, scoring

    headroom.foreign_reserved = cpu_only(headroom.foreign_reserved)
    scoring.foreign_reserved = cpu_only(scoring.foreign_reserved)


# --- own_residual_counted --------------------------------------------------------


def fit_counting_own_residual(node: NodeView, reservations: Sequence[ActiveReservation], pod: Any, demand: Any) -> list[Any]:
    """fit_counting_own_residual: fit() as the reference decides it, but a pod of a Reserved group also pays its own group's residual.

    The fault: on the exact_headroom node (4800m; A Reserved at 3800m with no
    pod running, B's 900m pod there) A's 3800m pod sees 4800 − 900 − 3800 =
    100m instead of 3900m: the room held for it is counted against it
    (docs/contract.md section 7: G's own residual is the room held for it).
    """
    from reference_scheduler.core.headroom import fit, foreign_reserved
    from reference_scheduler.core.reasons import InsufficientResource

    failures: list[Any] = list(fit(node, reservations, pod, demand))
    if failures or demand is None or demand.node != node.name:
        return failures
    used = ZERO
    for other in node.pods:
        if other.uid != pod.uid:
            used = used + other.request
    reserved = foreign_reserved(node, reservations, excluding=None)
    for resource, requested in pod.request.items():
        allocatable, by_pods, by_all = node.allocatable.get(resource), used.get(resource), reserved.get(resource)
        available = allocatable - by_pods - by_all
        if requested > 0 and requested > available:
            failures.append(InsufficientResource(resource, requested, available, allocatable, by_pods, by_all))
    return failures


def apply_own_residual_counted() -> None:
    from reference_scheduler.runtime import cycle

    cycle.fit = fit_counting_own_residual


# --- ignores_foreign_pods --------------------------------------------------------


def counted_in_headroom(pod: Mapping[str, Any], scheduler_name: str) -> bool:
    """counted_in_headroom: only pods that ask for this scheduler count against a node.

    The fault: pods of kube-scheduler, of another reservation scheduler, or
    bound by spec.nodeName are invisible, so a node they fill looks empty
    (docs/contract.md section 7: pods of any scheduler count as pods).
    """
    return (pod.get("spec") or {}).get("schedulerName") == scheduler_name


def apply_ignores_foreign_pods() -> None:
    from reference_scheduler.runtime.cluster_view import ClusterView
    from reference_scheduler.runtime.scheduler import Scheduler

    original_init = Scheduler.__init__
    original_index = ClusterView._index

    @functools.wraps(original_init)
    def init(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.view.mutant_scheduler_name = self.scheduler_name  # type: ignore[attr-defined]

    def index(self: ClusterView, pod: Obj) -> None:
        if counted_in_headroom(pod, getattr(self, "mutant_scheduler_name", "")):
            original_index(self, pod)

    Scheduler.__init__ = init  # type: ignore[method-assign]
    ClusterView._index = index  # type: ignore[method-assign]


# --- release_only_when_run_done --------------------------------------------------

#: The release reason release_only_when_run_done never acts on.
IGNORED_TASKS_DONE = frozenset({ReleaseReason.TASKS_DONE.value})


def apply_release_only_when_run_done() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = ignoring_reasons(releaser.release_decision, IGNORED_TASKS_DONE, "release_only_when_run_done")


# --- retry_pending_is_done -------------------------------------------------------


def retry_pending_counts_as_failed(progress: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
    """retry_pending_counts_as_failed(task_run_progress): the same, except that a TaskRun awaiting its retry is done.

    The fault: Succeeded Unknown with reason ToBeRetried (or False with
    retries left) reads as "failed, done", so the group is released in the
    retry gap although Tekton will create another pod (docs/contract.md
    section 8, rule 1). It reads TaskRuns, not pods: a different wrong rule
    from release_on_visible_pods.
    """
    from reference_scheduler.core.release import TaskRunProgress

    @functools.wraps(progress)
    def classify(task_run: Mapping[str, Any]) -> Any:
        found = progress(task_run)
        return TaskRunProgress.FAILED if found is TaskRunProgress.RETRY_PENDING else found

    return classify


def apply_retry_pending_is_done() -> None:
    from reference_scheduler.core import release

    release.task_run_progress = retry_pending_counts_as_failed(release.task_run_progress)


# --- node_loss_releases ----------------------------------------------------------


def apply_node_loss_releases() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    def release_instead(self: Releaser, namespace: str, name: str, group: str, node: str) -> None:
        """The fault: a claim whose node was deleted is Released (final), not sent back to Pending."""
        self._release(namespace, name, group, ReleaseReason.PIPELINE_RUN_DELETED.value)

    Releaser._drop_lost_node = release_instead  # type: ignore[method-assign]


# --- rollback_keeps_claim --------------------------------------------------------


def unreserve_keeping_claim(claim: GroupClaim, pod_uid: str, generation_seen: int) -> GroupClaim:
    """unreserve_keeping_claim: a failed bind removes the pod's holder, and the claim stays Reserved even with none left.

    The fault: the group's first pod fails to bind and the group stays Reserved
    on a node where nothing of it was ever bound, holding its peak there
    (docs/contract.md section 7, rule 4: no holder left, same generation: Pending).
    """
    if claim.state is not ClaimState.RESERVED or pod_uid not in claim.holders:
        return claim
    return dataclasses.replace(claim, holders=claim.holders - {pod_uid})


def apply_rollback_keeps_claim() -> None:
    from reference_scheduler.runtime import cycle

    cycle.unreserve = unreserve_keeping_claim


# --- finally_overlaps_dag --------------------------------------------------------


def peak_with_finally_concurrent(graph: PipelineGraph, tasks: Iterable[str]) -> Resources:
    """peak_with_finally_concurrent: the group's peak as if finally tasks could run beside DAG tasks.

    The fault: build (DAG, 960m) and its finally task report (1440m) get
    2400m instead of 1440m (docs/contract.md section 6: finally tasks never
    add to a DAG task).
    """
    from reference_scheduler.core.peaks import max_weight_antichain

    names = sorted(set(tasks))

    def before(a: str, b: str) -> bool:
        return graph.reaches(a, b) and graph.nodes[a].is_finally == graph.nodes[b].is_finally

    requests = {name: graph.nodes[name].concurrent_request for name in names}
    resources = {resource for r in requests.values() for resource in r.names()}
    return Resources.of({resource: max_weight_antichain({n: r.get(resource) for n, r in requests.items()}, before) for resource in resources})


def apply_finally_overlaps_dag() -> None:
    from reference_scheduler.core import partition

    partition.group_peak = peak_with_finally_concurrent


# --- ignores_result_dependencies -------------------------------------------------


def no_result_references(text: str) -> frozenset[str]:
    """no_result_references: `$(tasks.X.results.r)` names no task: only runAfter orders tasks.

    The fault: a task that consumes another's result is taken to run beside
    it, so their requests add up in the peak (docs/contract.md section 6).
    """
    return frozenset()


def apply_ignores_result_dependencies() -> None:
    from reference_scheduler.core import pipeline_graph

    pipeline_graph.result_references = no_result_references


# --- the request prediction faults (section 6, request(t)) -----------------------


def without_key(spec: Mapping[str, Any] | None, key: str) -> dict[str, Any] | None:
    """without_key(task_spec, 'sidecars'): the spec as the faulty prediction reads it, that one field left out."""
    if spec is None:
        return None
    return {k: v for k, v in spec.items() if k != key}


def _predicting_without(*, task_spec_key: str = "", task_run_spec_key: str = "", limit_range: bool = True) -> Callable[[], None]:
    keep_limit_range = limit_range

    def apply() -> None:
        from reference_scheduler.core import pipeline_graph

        original = pipeline_graph.predict_task_pod_request

        def predict(task_spec: Mapping[str, Any], *, task_run_spec: Mapping[str, Any] | None = None, limit_range: Mapping[str, Any] | None = None, **kwargs: Any) -> Resources:
            spec = without_key(task_spec, task_spec_key) if task_spec_key else task_spec
            run_spec = without_key(task_run_spec, task_run_spec_key) if task_run_spec_key else task_run_spec
            return original(spec or {}, task_run_spec=run_spec, limit_range=limit_range if keep_limit_range else None, **kwargs)

        pipeline_graph.predict_task_pod_request = predict

    return apply


apply_ignores_sidecars = _predicting_without(task_spec_key="sidecars")
apply_ignores_step_template = _predicting_without(task_spec_key="stepTemplate")
apply_ignores_task_compute_resources = _predicting_without(task_run_spec_key="computeResources")
apply_ignores_limit_range = _predicting_without(limit_range=False)
apply_ignores_step_specs = _predicting_without(task_run_spec_key="stepSpecs")
apply_ignores_sidecar_specs = _predicting_without(task_run_spec_key="sidecarSpecs")


def without_min(limit_range: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """without_min: the LimitRange as the faulty prediction reads it, with no item's `min`.

    Tekton gives a step without a request max(defaultRequest / steps, min)
    (docs/contract.md section 6.1, step 5); without the min the split alone
    is predicted, below what the step gets whenever the min is larger.
    """
    if not limit_range:
        return limit_range
    spec = limit_range.get("spec") or {}
    limits = [{k: v for k, v in item.items() if k != "min"} for item in spec.get("limits") or ()]
    return {**limit_range, "spec": {**spec, "limits": limits}}


def limits_as_requests(task_spec: Mapping[str, Any]) -> dict[str, Any]:
    """limits_as_requests: the Task as the faulty prediction reads it, each step with only limits requesting its limits.

    That is the API server's defaulting applied before Tekton's LimitRange
    transformer, which in truth comes first: a limit-only step gets the
    LimitRange's split (docs/contract.md section 6.1, step 5), not its limit.
    """
    steps = []
    for step in task_spec.get("steps") or ():
        resources = step.get("computeResources") or {}
        if resources.get("limits") and not resources.get("requests"):
            step = {**step, "computeResources": {**resources, "requests": dict(resources["limits"])}}
        steps.append(step)
    return {**task_spec, "steps": steps}


def _predicting_rewritten(
    *, task_spec: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None, limit_range: Callable[[Mapping[str, Any] | None], Mapping[str, Any] | None] | None = None
) -> Callable[[], None]:
    """_predicting_rewritten(task_spec=f, limit_range=g): a patch that predicts every pod from f(its Task) and g(the LimitRange)."""
    rewrite_spec, rewrite_limit_range = task_spec, limit_range

    def apply() -> None:
        from reference_scheduler.core import pipeline_graph

        original = pipeline_graph.predict_task_pod_request

        def predict(task_spec: Mapping[str, Any], *, limit_range: Mapping[str, Any] | None = None, **kwargs: Any) -> Resources:
            spec = rewrite_spec(task_spec) if rewrite_spec else task_spec
            read = rewrite_limit_range(limit_range) if rewrite_limit_range else limit_range
            return original(spec, limit_range=read, **kwargs)

        pipeline_graph.predict_task_pod_request = predict

    return apply


apply_limit_range_min_ignored = _predicting_rewritten(limit_range=without_min)
apply_limit_only_step_requests_its_limit = _predicting_rewritten(task_spec=limits_as_requests)


def single_combination(matrix: Mapping[str, Any] | None, params: Mapping[str, object] | None = None) -> int:
    """single_combination: a matrixed task counts once, not once per combination (the fault).

    Tekton starts every combination's TaskRun together, so a 3-way matrix of
    500m needs 1500m at once; this counts 500m (docs/contract.md section 6).
    """
    return 1


def apply_matrix_counted_once() -> None:
    from reference_scheduler.core import pipeline_graph

    pipeline_graph.matrix_fan_out = single_combination


def unknown_as_none(fan_out: int | None) -> int:
    """unknown_as_none: a fan-out only known at run time (from a result) counts as no combination (the fault).

    docs/contract.md section 6 counts it as one: the fewest TaskRuns Tekton
    starts for a matrixed task it runs; counting none reserves nothing for it.
    """
    return 0 if fan_out is None else fan_out


def apply_result_fan_out_counts_nothing() -> None:
    from reference_scheduler.core import pipeline_graph

    original = pipeline_graph.matrix_fan_out

    def known_or_nothing(matrix: Mapping[str, Any] | None, params: Mapping[str, object] | None = None) -> int:
        return unknown_as_none(original(matrix, params))

    pipeline_graph.matrix_fan_out = known_or_nothing


def apply_matrix_include_ignored() -> None:
    """The fault: a matrix counts the product of its params only; `matrix.include` entries that add a combination are not counted.

    Tekton's Matrix.FanOut makes an include entry that agrees with no
    combination a combination of its own, a TaskRun started with the others
    (docs/contract.md section 6): `x` in [a, b] with include {x: c} is 3 pods
    at once; this counts 2.
    """
    from reference_scheduler.core import pipeline_graph

    original = pipeline_graph.matrix_fan_out

    def params_only(matrix: Mapping[str, Any] | None, params: Mapping[str, object] | None = None) -> int | None:
        return original(without_key(matrix, "include"), params)

    pipeline_graph.matrix_fan_out = params_only


def no_overhead(runtime_class: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """no_overhead: a RuntimeClass's `overhead.podFixed` is never read, so no pod carries one in the prediction (the fault).

    The API server's RuntimeClass admission plugin sets it as every pod's
    `spec.overhead` and PodRequests adds it once per pod (docs/contract.md
    section 6.1, step 7); a prediction without it under-reserves by the
    overhead once for each pod that runs at the peak.
    """
    return None


def apply_ignores_runtime_class_overhead() -> None:
    from reference_scheduler.runtime import planner

    planner.overhead_of = no_overhead


# --- ignores_container_defaults ----------------------------------------------------


def no_container_defaults(config_map: Mapping[str, Any] | None) -> dict[str, Any]:
    """no_container_defaults: config-defaults' `default-container-resource-requirements` is never read (the fault).

    Tekton's first pod transformer gives every container the entries name
    (docs/contract.md section 6.1, step 4); a prediction without them takes a
    bare step for one that asks nothing, and under-reserves by its size.
    """
    return {}


def apply_ignores_container_defaults() -> None:
    from reference_scheduler.runtime import scheduler

    scheduler.container_defaults_of = no_container_defaults


# --- skipped_tasks_dropped ------------------------------------------------------


def graph_without_guarded_tasks(graph: PipelineGraph, pipeline_spec: Mapping[str, Any]) -> PipelineGraph:
    """graph_without_guarded_tasks: the pipeline with every `when`-guarded task requesting nothing.

    The fault: a task that "may be skipped" is left out of the peak, so while
    skipped_task_counts' A runs its 200m task its peak is 200m, not 3800m
    (docs/contract.md section 6: skipped tasks still count).
    """
    guarded = {
        str(task.get("name"))
        for task in [*(pipeline_spec.get("tasks") or []), *(pipeline_spec.get("finally") or [])]
        if task.get("when")
    }
    return PipelineGraph([dataclasses.replace(node, request=ZERO) if node.name in guarded else node for node in graph])


def apply_skipped_tasks_dropped() -> None:
    from reference_scheduler.runtime import planner

    original = planner.build_pipeline_graph

    def build(pipeline_spec: Mapping[str, Any], **kwargs: Any) -> PipelineGraph:
        return graph_without_guarded_tasks(original(pipeline_spec, **kwargs), pipeline_spec)

    planner.build_pipeline_graph = build


# --- no_release_on_timeout -------------------------------------------------------

#: The release reason no_release_on_timeout never acts on.
IGNORED_TIMEOUT = frozenset({ReleaseReason.PIPELINE_RUN_TIMED_OUT.value})


def apply_no_release_on_timeout() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = ignoring_reasons(releaser.release_decision, IGNORED_TIMEOUT, "no_release_on_timeout")


# --- cordon_drops_claim ----------------------------------------------------------


def claim_on_cordoned_node(claim: GroupClaim, node: Mapping[str, Any] | None) -> GroupClaim:
    """claim_on_cordoned_node: a Reserved claim whose node is cordoned goes back to Pending, as if the node were lost.

    The fault: only deleting the Node object loses a claim; a cordoned,
    tainted or NotReady node keeps it (docs/contract.md section 10).
    """
    if claim.state is not ClaimState.RESERVED or node is None or (node.get("spec") or {}).get("unschedulable") is not True:
        return claim
    return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)


def apply_node_event_drops_claim(marked: Callable[[Obj], bool], dropped: Callable[[GroupClaim, Mapping[str, Any] | None], GroupClaim]) -> None:
    """apply_node_event_drops_claim(marked, dropped): on a node event where `marked(node)`, every record is evaluated at once,
    and each Reserved claim on a node is replaced by `dropped(claim, node)` (cordon_drops_claim, taint_drops_claim, not_ready_drops_claim).
    """
    from reference_scheduler.runtime.records import claim_of, with_claim
    from reference_scheduler.runtime.releaser import Releaser
    from reference_scheduler.runtime.scheduler import Scheduler

    original = Releaser.evaluate
    original_init = Scheduler.__init__

    @functools.wraps(original_init)
    def init(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        # A cordon, a taint or a NotReady is a node event: like a node-loss handler, it sends the releaser to every record at once.
        original_init(self, *args, **kwargs)

        def on_node(kind: str, node: Obj, old: Obj | None) -> None:
            if marked(node):
                for record in self.records.list(self.releaser.owns):
                    self.releaser.mark(record["metadata"].get("namespace") or "", record["metadata"]["name"])

        self.nodes.add_handler(on_node)

    Scheduler.__init__ = init  # type: ignore[method-assign]

    def evaluate(self: Releaser, record: Obj) -> None:
        namespace = record["metadata"].get("namespace") or ""
        for entry in (record.get("status") or {}).get("groups") or []:
            claim = claim_of(entry)
            if claim.state is not ClaimState.RESERVED or claim.node is None:
                continue
            node = claim.node

            def drop(current: Obj) -> Obj | None:
                before = claim_of(current)
                after = dropped(before, self._nodes.get("", node)) if before.node == node else before
                return None if after == before else with_claim(current, after)

            self._write(namespace, record["metadata"]["name"], str(entry.get("name")), drop)
        original(self, record)

    Releaser.evaluate = evaluate  # type: ignore[method-assign]


def apply_cordon_drops_claim() -> None:
    apply_node_event_drops_claim(lambda node: (node.get("spec") or {}).get("unschedulable") is True, claim_on_cordoned_node)


# === faults (branch `faults`): the Resilience scenarios' mutants ===

# --- forgets_records_on_broken_watch -------------------------------------------


def resume_point(list_raw: Callable[..., Obj]) -> str:
    """resume_point(list_raw): the server's current resourceVersion, from a one-item list whose items are thrown away.

    The fault it serves: a broken watch resumed "from now" instead of relisted,
    so the objects that existed before the break and do not change afterwards
    are never seen again.
    """
    listing = list_raw(limit=1)
    return str((listing.get("metadata") or {}).get("resourceVersion") or "")


def apply_forgets_records_on_broken_watch() -> None:
    """The fault: when the record watch fails (the API server restarts), the record cache is emptied and the watch resumed from now.

    Emptied as the scheduler sees it: the store is cleared and each record's loss is
    told to the handlers (a DELETED event), since ClusterView keeps the Reserved groups
    from those events (c286d5c); clearing the store alone no longer reaches them.

    The reference relists after any error and so finds every Reserved group
    again; this one only learns of the records written after the break, so a
    claim that nobody writes again (A holding its peak) stops counting.
    """
    from reference_scheduler.runtime import informer as informer_module
    from reference_scheduler.runtime.informer import Informer

    original_run = Informer._run

    def run(self: Informer) -> None:
        if self.name != "reservationrecords":
            original_run(self)
            return
        resource_version: str | None = None
        while not self._stop.is_set():
            try:
                if resource_version is None:
                    resource_version = self._relist() if not self.synced else resume_point(self._list_raw)
                resource_version = self._watch(resource_version)
            except Exception:  # noqa: BLE001 - the fault: a failed watch forgets everything it knew
                with self._lock:
                    forgotten = list(self._store.values())
                    self._store.clear()
                # Told to the handlers as deletions, as an informer that wrongly drops objects would:
                # the reference's reservations are kept from these events, not read from the store.
                for record in forgotten:
                    self._emit("DELETED", record, None)
                self._stop.wait(informer_module.ERROR_BACKOFF_SECONDS)
                resource_version = None

    Informer._run = run  # type: ignore[method-assign]


# --- timed_out_read_is_deleted ------------------------------------------------------

#: The client timeout of the timed_out_read_is_deleted mutant's fresh read of a PipelineRun, in seconds.
FRESH_READ_TIMEOUT_SECONDS = 1.0


def timed_out(err: BaseException) -> bool:
    """timed_out(err): the client gave up waiting for an answer (urllib3's read timeout, bare or as MaxRetryError's reason).

    Only a read timeout: urllib3's refused connection (NewConnectionError) is a ConnectTimeoutError too.
    """
    import urllib3

    reason = err.reason if isinstance(err, urllib3.exceptions.MaxRetryError) else err
    return isinstance(reason, urllib3.exceptions.ReadTimeoutError)


def read_or_gone(read: Callable[[], Obj]) -> Obj | None:
    """read_or_gone(read) is the object read, None when it does not exist (404), and, the fault, None when the read timed out.

    An API server whose etcd is away answers nothing (no 5xx: the request
    hangs), so a client with a timeout sees only its own timeout; this reads
    it as "no such object". Any other failure (a refused connection, a 5xx)
    still raises, as in the reference.
    """
    import kubernetes
    import urllib3

    try:
        return read()
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return None
        raise
    except urllib3.exceptions.HTTPError as err:
        if timed_out(err):
            return None
        raise


def apply_timed_out_read_is_deleted() -> None:
    """The fault: the releaser reads each PipelineRun afresh from the API (1 s client timeout), and a read that times out counts as the run deleted.

    The reference judges from its caches, which an etcd outage leaves as they
    were; this one, in the outage, releases every Reserved group it evaluates
    (PipelineRunDeleted) and the release lands once etcd is back.
    """
    import kubernetes

    from reference_scheduler.runtime.scheduler import Scheduler

    original_init = Scheduler.__init__

    class FreshPipelineRuns:
        """FreshPipelineRuns.get(namespace, name) is a GET of the PipelineRun, through read_or_gone."""

        def __init__(self, custom: kubernetes.client.CustomObjectsApi) -> None:
            self._custom = custom

        def get(self, namespace: str, name: str) -> Obj | None:
            def read() -> Obj:
                found = self._custom.get_namespaced_custom_object(
                    "tekton.dev", "v1", namespace, "pipelineruns", name, _request_timeout=FRESH_READ_TIMEOUT_SECONDS
                )
                return dict(found) if isinstance(found, dict) else {}

            return read_or_gone(read)

    @functools.wraps(original_init)
    def init(self: Scheduler, api: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, api, *args, **kwargs)
        self.releaser._pipeline_runs = FreshPipelineRuns(kubernetes.client.CustomObjectsApi(api))  # type: ignore[assignment]

    Scheduler.__init__ = init  # type: ignore[method-assign]


# --- eviction_rolls_back_claim ---------------------------------------------------


def claim_without_deleted_pod(claim: GroupClaim, pod_uid: str) -> GroupClaim:
    """claim_without_deleted_pod: a deleted (evicted) pod leaves holders as if its bind had failed; with none left, Pending.

    The fault: only a failed bind removes a holder (docs/contract.md 7.3), and
    only the node's deletion loses a claim (section 10). Here the group's next
    pod, once its only bound pod is evicted, claims anew wherever it scores best.
    """
    if claim.state is not ClaimState.RESERVED or pod_uid not in claim.holders:
        return claim
    holders = claim.holders - {pod_uid}
    if holders:
        return GroupClaim(ClaimState.RESERVED, claim.node, holders, claim.claim_generation)
    return GroupClaim(claim_generation=claim.claim_generation)


def apply_eviction_rolls_back_claim() -> None:
    import threading

    from reference_scheduler.runtime.cluster_view import is_terminal, pipeline_task_of
    from reference_scheduler.runtime.records import claim_of, spec_group_of_task, with_claim
    from reference_scheduler.runtime.scheduler import Scheduler

    original_init = Scheduler.__init__

    @functools.wraps(original_init)
    def init(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)

        def roll_back(namespace: str, run: str, group: str, uid: str) -> None:
            def change(entry: Obj) -> Obj | None:
                before = claim_of(entry)
                after = claim_without_deleted_pod(before, uid)
                return None if after == before else with_claim(entry, after)

            self.releaser._write(namespace, run, group, change)

        def on_pod(kind: str, pod: Obj, old: Obj | None) -> None:
            found = pipeline_task_of(pod)
            if kind != "DELETED" or found is None or is_terminal(pod) or not (pod.get("spec") or {}).get("nodeName"):
                return
            namespace = (pod.get("metadata") or {}).get("namespace") or ""
            record = self.records.get(namespace, found[0])
            group = spec_group_of_task(record, found[1]) if record is not None else None
            if group is not None:
                uid = str(pod["metadata"].get("uid"))
                threading.Thread(target=roll_back, args=(namespace, found[0], str(group.get("name")), uid), daemon=True).start()

        self.pods.add_handler(on_pod)

    Scheduler.__init__ = init  # type: ignore[method-assign]


# --- taint_drops_claim -----------------------------------------------------------


def claim_on_tainted_node(claim: GroupClaim, node: Mapping[str, Any] | None) -> GroupClaim:
    """claim_on_tainted_node: a Reserved claim whose node carries a NoSchedule taint goes back to Pending, as if the node were lost.

    The fault: only deleting the Node object loses a claim; a tainted node
    keeps it, and the group's tolerating pods still go there (docs/contract.md section 10).
    """
    taints = ((node or {}).get("spec") or {}).get("taints") or []
    if claim.state is not ClaimState.RESERVED or not any(t.get("effect") == "NoSchedule" for t in taints):
        return claim
    return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)


def apply_taint_drops_claim() -> None:
    apply_node_event_drops_claim(lambda node: bool((node.get("spec") or {}).get("taints")), claim_on_tainted_node)


# --- not_ready_drops_claim -------------------------------------------------------


def node_is_not_ready(node: Mapping[str, Any] | None) -> bool:
    """node_is_not_ready(node) is True when the node reports a Ready condition that is not True (False or Unknown)."""
    conditions = ((node or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") != "True" for c in conditions)


def claim_on_not_ready_node(claim: GroupClaim, node: Mapping[str, Any] | None) -> GroupClaim:
    """claim_on_not_ready_node: a Reserved claim whose node reports NotReady goes back to Pending, as if the node were lost.

    The fault: only deleting the Node object loses a claim; a NotReady node
    keeps it, and the group's next pod goes there once it is Ready again
    (docs/contract.md section 10). A node with no Ready condition (just
    registered) is left alone, as the reference leaves it.
    """
    if claim.state is not ClaimState.RESERVED or not node_is_not_ready(node):
        return claim
    return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)


def apply_not_ready_drops_claim() -> None:
    apply_node_event_drops_claim(node_is_not_ready, claim_on_not_ready_node)


# --- taskrun_done_from_pod ---------------------------------------------------------


def task_run_as_its_pod(task_run: Obj, pod: Obj | None) -> Obj:
    """task_run_as_its_pod: a TaskRun whose pod (status.podName) has finished reads as Succeeded, whatever Tekton will do next.

    The fault: a task is done when its TaskRun says so (docs/contract.md
    section 8), and a failed attempt's TaskRun may still retry. While Tekton's
    controller is away nobody writes the TaskRun, so the finished pod is all
    there is to see; this reads it as the end of the task.
    """
    if pod is None or (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES:
        return task_run
    status = dict(task_run.get("status") or {})
    status["conditions"] = [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}]
    return {**task_run, "status": status}


def apply_taskrun_done_from_pod() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    _releaser_sees_pods()
    original = Releaser._task_runs_of

    def task_runs_of(self: Releaser, namespace: str, pipeline_run: Obj | None) -> dict[str, Obj]:
        found = original(self, namespace, pipeline_run)
        pods = self.mutant_pods  # type: ignore[attr-defined]
        return {
            name: task_run_as_its_pod(task_run, pods.get(namespace, (task_run.get("status") or {}).get("podName") or ""))
            for name, task_run in found.items()
        }

    Releaser._task_runs_of = task_runs_of  # type: ignore[method-assign]


#: The contract rules the mutants break: key -> where docs/contract.md states it, in a few words.
#: A Mutant's `rule` is one of these keys; the kill table groups its rows by them.
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


# --- the filters that read placed pods (issue 34): host ports, pod (anti-)affinity, spread; scheduling gates ---


def apply_ignores_host_ports() -> None:
    """The fault: a pod's host ports are never compared with those its node's pods bind (NodePorts skipped)."""
    from reference_scheduler.core import inter_pod_checks

    inter_pod_checks.node_ports_conflict = lambda wanted, used: None


def affinity_state_without(state: Any, rule: str) -> Any:
    """affinity_state_without(state, "anti_affinity_counts"): InterPodAffinity's PreFilter state with one rule's counts forgotten.

    "affinity_terms" drops the pod's required affinity, "anti_affinity_counts" the
    pods its anti-affinity selects, "existing_anti_affinity_counts" the placed
    pods whose anti-affinity selects it (the rule's symmetry); every node then
    passes that rule.
    """
    empty: Any = () if rule == "affinity_terms" else {}
    return dataclasses.replace(state, **{rule: empty})


def _forget_affinity_rule(rule: str) -> None:
    from reference_scheduler.core import inter_pod_checks

    original = inter_pod_checks.inter_pod_affinity_failure

    @functools.wraps(original)
    def failure(state: Any, node: Obj) -> Any:
        return original(affinity_state_without(state, rule), node)

    inter_pod_checks.inter_pod_affinity_failure = failure


def apply_ignores_pod_affinity() -> None:
    """The fault: a pod's required pod affinity is not checked."""
    _forget_affinity_rule("affinity_terms")


def apply_ignores_pod_anti_affinity() -> None:
    """The fault: a pod's own required pod anti-affinity is not checked."""
    _forget_affinity_rule("anti_affinity_counts")


def apply_ignores_existing_anti_affinity() -> None:
    """The fault: placed pods' required anti-affinity is not checked against the incoming pod (the symmetry)."""
    _forget_affinity_rule("existing_anti_affinity_counts")


def apply_ignores_topology_spread() -> None:
    """The fault: DoNotSchedule topology spread constraints are not checked."""
    from reference_scheduler.core import inter_pod_checks

    inter_pod_checks.topology_spread_failure = lambda state, node: None


def apply_ignores_scheduling_gates() -> None:
    """The fault: a pod's scheduling gates are not read, so a gated pod is queued and tried like any other (no PreEnqueue)."""
    from reference_scheduler.runtime import scheduler

    scheduler.is_gated = lambda pod: False


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

    def as_plain_pod(cycle: Any, pod: Obj, group: Any, original: Callable[[Any, Obj], Any]) -> Any:
        cycle._group_state = lambda _pod: None
        try:
            return original(cycle, pod)
        finally:
            del cycle._group_state

    when_stuck_on_reserved_claim(as_plain_pod)


#: The release reasons no_release_when_done ignores: the run's own end.
IGNORED_ENDS = frozenset({ReleaseReason.TASKS_DONE.value, ReleaseReason.PIPELINE_RUN_DONE.value})


def apply_no_release_when_done() -> None:
    """The fault: a group is released only when its run is cancelled, stopped, timed out or deleted, never when it is done."""
    from reference_scheduler.runtime import releaser

    releaser.release_decision = ignoring_reasons(releaser.release_decision, IGNORED_ENDS, "no_release_when_done")


def apply_five_rule_build() -> None:
    """The five faults at once: each must still be caught by its own check (the monitor reports each rule once)."""
    for apply in (apply_no_active_label, apply_false_release_reason, apply_inflated_memory_peak, apply_extra_workspace, apply_holders_not_joined):
        apply()


# --- binds_before_plan, parked_pod_waits_for_resync (the first pod before the plan) --------


def apply_binds_before_plan() -> None:
    """The fault (the reference before it parked such pods): a pod whose PipelineRun has no plan yet is bound as a plain pod.

    The run is not in the cache yet, or Tekton has not written its
    status.pipelineSpec: the pod gets a Warning and goes wherever scoring says,
    with no record and no claim (docs/contract.md section 2, the first pod
    before the plan: it MUST be kept Pending). Permanent failures (a missing
    Task, an invalid quantity) are plain pods in the reference too.
    """
    from reference_scheduler.runtime.cycle import Cycle, WaitingForPlan

    original = Cycle._create_record

    def create_record(self: Cycle, pod: Obj, namespace: str, run_name: str, task: str) -> Obj | None:
        try:
            return original(self, pod, namespace, run_name, task)
        except WaitingForPlan as waiting:
            self._events.pod_warning(pod, "ReservationUnavailable", f"{waiting}; scheduling the pod without a reservation")
            return None

    Cycle._create_record = create_record  # type: ignore[method-assign]


def unless_waiting_for_plan(should_move: Callable[[tuple[str, str]], bool], waiting: set[tuple[str, str]]) -> Callable[[tuple[str, str]], bool]:
    """unless_waiting_for_plan: an event's move predicate that never moves a pod parked for its PipelineRun's plan.

    The fault: the pod is parked as the reference parks it, but no event
    moves it, neither its run's plan, nor its record, nor a claim of its
    group: only the queue's periodic flush (UNSCHEDULABLE_FLUSH_SECONDS, 60 s)
    tries it again. A pod parked for room is moved as before.
    """
    return lambda key: key not in waiting and should_move(key)


def apply_parked_pod_waits_for_resync() -> None:
    from reference_scheduler.runtime.cycle import Cycle, WaitingForPlan
    from reference_scheduler.runtime.queue import SchedulingQueue

    waiting: set[tuple[str, str]] = set()  # (namespace, name) of the pods whose last attempt waited for the plan
    original_group_state = Cycle._group_state
    original_move = SchedulingQueue.move_unschedulable

    def group_state(self: Cycle, pod: Obj) -> Any:
        key = (pod["metadata"].get("namespace") or "", pod["metadata"].get("name") or "")
        try:
            found = original_group_state(self, pod)
        except WaitingForPlan:
            waiting.add(key)
            raise
        waiting.discard(key)
        return found

    def move_unschedulable(self: SchedulingQueue, should_move: Callable[[tuple[str, str]], bool]) -> int:
        return original_move(self, unless_waiting_for_plan(should_move, waiting))

    Cycle._group_state = group_state  # type: ignore[method-assign]
    SchedulingQueue.move_unschedulable = move_unschedulable  # type: ignore[method-assign]


RULES: dict[str, str] = {
    "2.identity": "section 2, Identity: spec.pipelineRun.uid is the PipelineRun's metadata.uid",
    "2.owner": "section 2, Owner: the record carries a controller ownerReference to its PipelineRun",
    "2.when": "section 2, When: the record exists before the first pod of a group is bound",
    "2.schedulers": "section 2, Several schedulers: each scheduler writes only the records it created",
    "3.workspaces": "sections 3-4: spec.groups[].workspaces lists exactly the co-locating workspaces the group's tasks use",
    "3.holders": "sections 3, 5, 7.2: every pod bound under a claim is in its holders, added before the bind",
    "4.finally": "section 4: finally tasks are grouped like any other task",
    "5.record_is_state": "section 5, The record is the state: Reserved groups found in the records hold their room after a restart (of the scheduler, or of its watches)",
    "6.concurrent_sum": "section 6: the peak adds up the tasks that can run at the same time",
    "6.finally": "section 6: finally tasks never add to a DAG task",
    "6.results": "section 6: using a task's results orders two tasks like runAfter",
    "6.memory": "section 6: the memory peak is the most the group's tasks request at once, no more",
    "6.request": "section 6, request(t): the effective request of Tekton's pod (sidecars, stepTemplate, stepSpecs and sidecarSpecs, task-level computeResources, LimitRange, RuntimeClass overhead)",
    "6.skipped": "section 6: skipped (when-guarded) tasks still count in the peak",
    "6.matrix": "section 6: a matrixed task counts once per combination",
    "7.residual": "section 7, Headroom: a Reserved group holds its residual, each pod and reservation counted once",
    "7.own_residual": "section 7, Headroom: a pod of a Reserved group may use its own group's residual",
    "7.any_scheduler": "section 7, Headroom: pods of any scheduler count as pods",
    "7.join_node": "section 7.2, Join: a later pod of a Reserved group goes only to the claim's node",
    "7.holders_stay": "section 7.3, Holders stay: a completed pod stays in holders; the claim never moves to another node",
    "7.rollback": "section 7.4, Rollback: a failed bind removes only its holder; no holder left and the same generation: Pending",
    "7.stale_rollback": "section 7.4: a restarted scheduler never rolls back claims it finds",
    "8.retry_gap": "section 8, rule 1: a task awaiting its retry is not done (judged from TaskRuns, never pods)",
    "8.tasks_done": "section 8, rule 1: the group is Released once every task of it is done",
    "8.run_over": "section 8, rule 2: the group is Released when the PipelineRun is cancelled or deleted",
    "8.reason": "section 8: releaseReason is one that was true at release",
    "9.label": "section 9: rescon.dev/active is \"true\" while any group is Reserved, absent otherwise",
    "8.timeout": "section 8, rule 2: the group is Released when the PipelineRun times out",
    "10.only_deletion": "section 10: only deleting the Node object loses a claim; a cordoned, tainted or NotReady node keeps it",
    "10.node_loss": "section 10: a claim on a deleted node goes back to Pending, with no releaseReason",
    "7.scheduling_gates": "section 7: a pod with scheduling gates is not tried, and opens no claim, until its last gate is removed",
    "7.node_checks": "section 7: everything kube-scheduler checks still applies (cordon, taints, nodeSelector, required node affinity, the pod-count limit, host ports, pod affinity and anti-affinity, topology spread)",
    "7.finished_pods": "section 7: finished (Succeeded, Failed) pods do not count in a node's room",
    "2.first_pod": "section 2, The first pod before the plan: a pod whose PipelineRun's groups cannot be computed yet is kept Pending, not bound",
    "2.first_pod_retry": "section 2, The first pod before the plan: the parked pod is tried again when its run's plan or its record appears, not at a periodic resync",
}

MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant(
            "double_counted_headroom",
            "foreign reservations are subtracted in full, on top of their running pods",
            "exact_headroom",
            apply_double_counted_headroom,
            "7.residual",
        ),
        Mutant("max_peak", "a group's peak is its largest task, even for tasks that run in parallel", "parallel_peak", apply_max_peak, "6.concurrent_sum"),
        Mutant(
            "release_on_visible_pods",
            "a group is released once every visible pod of it is terminal (the retry gap)",
            "retry_gap",
            apply_release_on_visible_pods,
            "8.retry_gap",
        ),
        Mutant(
            "unreserve_clears_claim",
            "a failed bind sends the claim back to Pending although another holder is bound under it",
            "concurrent_bind_rollback",
            apply_unreserve_clears_claim,
            "7.rollback",
        ),
        Mutant(
            "no_release_on_cancel",
            "no release when the PipelineRun is cancelled or deleted: a cancelled run's reservation leaks (a deleted run's record still goes with it, by the contract's ownerReference)",
            "cancel_releases",
            apply_no_release_on_cancel,
            "8.run_over",
        ),
        Mutant(
            "outlives_deleted_record",
            "a reservation stays counted after its PipelineRun and record are deleted (a watch that misses DELETE; deleted runs are left to the garbage collector, as the contract allows)",
            "delete_releases",
            apply_outlives_deleted_record,
            "8.run_over",
        ),
        Mutant(
            "memory_only_state",
            "reservations are counted from memory: after a restart, claims made before it hold no room",
            "scheduler_restart",
            apply_memory_only_state,
            "5.record_is_state",
        ),
        Mutant(
            "finally_outside_group",
            "finally tasks are left out of their workspace group",
            "finally_in_group",
            apply_finally_outside_group,
            "4.finally",
        ),
        Mutant("stale_node", "a claim on a deleted node keeps pointing at it forever", "node_loss", apply_stale_node, "10.node_loss"),
        Mutant("ignores_reservations", "reservations are ignored entirely: only pods count", "peak_blocks_b", apply_ignores_reservations, "7.residual"),
        # --- grown from docs/contract.md (issue 11): the five-rule build, one rule each ---
        # The monitor reports a label that disagrees for longer than label_converges (10 s): the scenario must
        # hold a group Reserved longer than that (peak_holds_b_back holds A through pod_stays_pending, 8 s, and more).
        Mutant("no_active_label", "the rescon.dev/active label is never written", "peak_holds_b_back", apply_no_active_label, "9.label"),
        Mutant(
            "false_release_reason",
            "every release says PipelineRunTimedOut (a timeout says PipelineRunStopped): never the reason that was true",
            "colocation",
            apply_false_release_reason,
            "8.reason",
        ),
        Mutant("inflated_memory_peak", "every group's memory peak is doubled", "colocation", apply_inflated_memory_peak, "6.memory"),
        Mutant(
            "extra_workspace",
            "each group also lists its tasks' task-side workspace names (`w` of {name: w, workspace: source}), which no task uses as a pipeline workspace",
            "colocation",
            apply_extra_workspace,
            "3.workspaces",
        ),
        Mutant(
            "holders_not_joined",
            "a pod joining a Reserved claim is bound without being added to holders",
            "colocation",
            apply_holders_not_joined,
            "3.holders",
        ),
        Mutant(
            "five_rule_build",
            "the five-rule build of issue 11 in one scheduler: no active label, untrue release reasons, inflated memory peaks, an extra workspace, joiners not in holders",
            "colocation",
            apply_five_rule_build,
            "9.label",
        ),
        # --- the rest of the contract, rule by rule ---
        Mutant(
            "forgets_finished_pods",
            "a group's node is read from running pods only: once they finished, the next pod is placed as a plain pod wherever scoring says",
            "colocation",
            apply_forgets_finished_pods,
            "7.join_node",
        ),
        Mutant(
            "record_after_bind",
            "the group's first pod is bound before its record is created and claimed",
            "colocation",
            apply_record_after_bind,
            "2.when",
        ),
        Mutant(
            "wrong_run_uid",
            "the record's spec.pipelineRun.uid and ownerReference uid are the first pod's TaskRun's, not the PipelineRun's",
            "colocation",
            apply_wrong_run_uid,
            "2.identity",
        ),
        Mutant("no_owner_reference", "the record carries no ownerReference to its PipelineRun", "colocation", apply_no_owner_reference, "2.owner"),
        Mutant(
            "releases_foreign_records",
            "records of another schedulerName in the namespaces where it has records of its own are released (and un-claimed on node loss) too",
            "foreign_records_untouched",
            apply_releases_foreign_records,
            "2.schedulers",
        ),
        Mutant(
            "stale_rollback",
            "on start the scheduler rolls back every Reserved claim it finds in the records",
            "scheduler_restart",
            apply_stale_rollback,
            "7.stale_rollback",
        ),
        Mutant(
            "claim_moves_node",
            "a pod of a Reserved group that finds no room on the claim's node sends the claim back to Pending and claims another node",
            "full_group_node_waits",
            apply_claim_moves_node,
            "7.holders_stay",
        ),
        Mutant(
            "drops_finished_holders",
            "holders shrink to the group's pods still running: a finished pod is removed from holders",
            "colocation",
            apply_drops_finished_holders,
            "7.holders_stay",
        ),
        Mutant(
            "reserves_cpu_only",
            "a reservation holds back CPU only: other groups' memory residuals are not subtracted from a node's room",
            "memory_decides",
            apply_reserves_cpu_only,
            "7.residual",
        ),
        Mutant(
            "own_residual_counted",
            "a pod of a Reserved group also pays its own group's residual on the claim's node",
            "exact_headroom",
            apply_own_residual_counted,
            "7.own_residual",
        ),
        Mutant(
            "ignores_foreign_pods",
            "only pods that ask for this schedulerName count against a node; pods of other schedulers, or bound by nodeName, are invisible",
            "plain_pods_beside",
            apply_ignores_foreign_pods,
            "7.any_scheduler",
        ),
        Mutant(
            "release_only_when_run_done",
            "a group is released only when the PipelineRun is over, never when its own tasks are done",
            "group_done_frees_room",
            apply_release_only_when_run_done,
            "8.tasks_done",
        ),
        Mutant(
            "retry_pending_is_done",
            "a TaskRun awaiting its retry (ToBeRetried, or False with retries left) counts as done",
            "retry_gap",
            apply_retry_pending_is_done,
            "8.retry_gap",
        ),
        Mutant(
            "node_loss_releases",
            "a claim on a deleted node is Released (PipelineRunDeleted) instead of going back to Pending",
            "node_loss",
            apply_node_loss_releases,
            "10.node_loss",
        ),
        Mutant(
            "rollback_keeps_claim",
            "a failed bind removes its holder but the claim stays Reserved with no holder",
            "bind_failure_rollback",
            apply_rollback_keeps_claim,
            "7.rollback",
        ),
        Mutant(
            "finally_overlaps_dag",
            "finally tasks are taken to run beside DAG tasks: their requests add up in the peak",
            "finally_in_group",
            apply_finally_overlaps_dag,
            "6.finally",
        ),
        Mutant(
            "ignores_result_dependencies",
            "using a task's results does not order two tasks: only runAfter does",
            "result_dependency",
            apply_ignores_result_dependencies,
            "6.results",
        ),
        Mutant("ignores_sidecars", "a task's sidecars are left out of its predicted request", "sidecars_and_init", apply_ignores_sidecars, "6.request"),
        Mutant("ignores_step_template", "stepTemplate's computeResources are left out of the steps' requests", "step_template", apply_ignores_step_template, "6.request"),
        Mutant(
            "ignores_task_compute_resources",
            "taskRunSpecs[].computeResources (task-level) are ignored: the steps keep their own requests",
            "task_compute_resources",
            apply_ignores_task_compute_resources,
            "6.request",
        ),
        Mutant("ignores_limit_range", "the namespace's LimitRange defaults are not applied to the predicted pod", "limit_range", apply_ignores_limit_range, "6.request"),
        Mutant(
            "skipped_tasks_dropped",
            "tasks guarded by a when expression request nothing in the peak",
            "skipped_task_counts",
            apply_skipped_tasks_dropped,
            "6.skipped",
        ),
        Mutant(
            "no_release_on_timeout",
            "no release when the PipelineRun times out",
            "timeout_releases",
            apply_no_release_on_timeout,
            "8.timeout",
        ),
        Mutant(
            "cordon_drops_claim",
            "a claim on a cordoned node goes back to Pending, as if the node had been deleted",
            "cordon_keeps_claim",
            apply_cordon_drops_claim,
            "10.only_deletion",
        ),
        Mutant("matrix_counted_once", "a matrixed task counts once, not once per combination", "matrix", apply_matrix_counted_once, "6.matrix"),
        Mutant(
            "matrix_include_ignored",
            "a matrixed task counts the product of its matrix params only: include entries that add a combination are not counted",
            "fan_out_include",
            apply_matrix_include_ignored,
            "6.matrix",
        ),
        Mutant(
            "ignores_step_specs",
            "taskRunSpecs[].stepSpecs are ignored: each step keeps its Task's resources",
            "step_and_sidecar_specs",
            apply_ignores_step_specs,
            "6.request",
        ),
        Mutant(
            "ignores_sidecar_specs",
            "taskRunSpecs[].sidecarSpecs are ignored: each sidecar keeps its Task's resources",
            "step_and_sidecar_specs",
            apply_ignores_sidecar_specs,
            "6.request",
        ),
        Mutant(
            "limit_range_min_ignored",
            "the LimitRange's min is ignored: a step without a request is predicted at defaultRequest / steps even when the min is larger",
            "step_request_floor",
            apply_limit_range_min_ignored,
            "6.request",
        ),
        Mutant(
            "limit_only_step_requests_its_limit",
            "a step with only a limit is predicted to request its limit, as if the API server defaulted it before Tekton's LimitRange split",
            "step_request_floor",
            apply_limit_only_step_requests_its_limit,
            "6.request",
        ),
        Mutant(
            "ignores_runtime_class_overhead",
            "the RuntimeClass a run's pod template names is not read: its overhead.podFixed is left out of every pod's predicted request",
            "runtime_class_overhead",
            apply_ignores_runtime_class_overhead,
            "6.request",
        ),
        Mutant(
            "ignores_container_defaults",
            "config-defaults' default-container-resource-requirements are not read: a step that asks nothing is predicted bare",
            "tekton_config_defaults",
            apply_ignores_container_defaults,
            "6.request",
        ),
        # --- the pool scenarios: node checks, the pod limit, finished pods, the group's node ---
        Mutant("ignores_cordon", "a cordoned node takes new pods (spec.unschedulable and its taint ignored)", "node_checks", apply_ignores_cordon, "7.node_checks"),
        Mutant("ignores_taints", "NoSchedule/NoExecute taints are not checked against tolerations", "node_checks", apply_ignores_taints, "7.node_checks"),
        Mutant("ignores_node_selector", "the pod's nodeSelector is not checked", "node_checks", apply_ignores_node_selector, "7.node_checks"),
        Mutant("ignores_node_affinity", "the pod's required node affinity is not checked", "node_checks", apply_ignores_node_affinity, "7.node_checks"),
        Mutant("ignores_pod_limit", "a node's pods allocatable is not checked", "pod_count_limit", apply_ignores_pod_limit, "7.node_checks"),
        Mutant("ignores_host_ports", "a pod's host ports are not compared with those its node's pods bind", "host_port_conflict", apply_ignores_host_ports, "7.node_checks"),
        Mutant("ignores_pod_affinity", "a pod's required pod affinity is not checked", "pod_affinity_rules", apply_ignores_pod_affinity, "7.node_checks"),
        Mutant("ignores_pod_anti_affinity", "a pod's own required pod anti-affinity is not checked", "pod_affinity_rules", apply_ignores_pod_anti_affinity, "7.node_checks"),
        Mutant(
            "ignores_existing_anti_affinity",
            "placed pods' required anti-affinity is not checked against the incoming pod",
            "pod_affinity_rules",
            apply_ignores_existing_anti_affinity,
            "7.node_checks",
        ),
        Mutant("ignores_scheduling_gates", "a gated pod is queued and tried like any other", "scheduling_gates", apply_ignores_scheduling_gates, "7.scheduling_gates"),
        Mutant("ignores_topology_spread", "DoNotSchedule topology spread constraints are not checked", "topology_spread_zones", apply_ignores_topology_spread, "7.node_checks"),
        Mutant("counts_finished_pods", "Succeeded and Failed pods still count on their node", "finished_pods_free_room", apply_counts_finished_pods, "7.finished_pods"),
        Mutant(
            "forgets_finished_group_node",
            "the group's node comes from a pod cache that drops finished pods: once the group's pods have finished, its next pod goes anywhere",
            "group_node_not_the_obvious_choice",
            apply_forgets_finished_group_node,
            "7.join_node",
        ),
        Mutant(
            "spills_from_full_group_node",
            "a group pod that finds no room on its claim's node is placed elsewhere",
            "full_group_node_waits",
            apply_spills_from_full_group_node,
            "7.join_node",
        ),
        Mutant("no_release_when_done", "a group is never released when its tasks or its run are done", "sequential_reuse", apply_no_release_when_done, "8.tasks_done"),
        # --- the Resilience scenarios (issue 14): faults production does to a cluster ---
        Mutant(
            "forgets_records_on_broken_watch",
            "a record watch that fails (the API server restarts) empties the record cache and resumes from now: claims nobody writes again stop counting",
            "api_server_restart",
            apply_forgets_records_on_broken_watch,
            "5.record_is_state",
        ),
        Mutant(
            "timed_out_read_is_deleted",
            "the releaser reads each PipelineRun afresh with a 1 s client timeout and takes a read that times out (etcd away: no answer) for the run deleted, releasing its groups",
            "etcd_restart",
            apply_timed_out_read_is_deleted,
            "8.reason",
        ),
        Mutant(
            "eviction_rolls_back_claim",
            "an evicted (deleted) pod of a Reserved group leaves holders as if its bind had failed; with none left the claim goes back to Pending, so the replacement claims anew elsewhere",
            "evicted_pod_returns",
            apply_eviction_rolls_back_claim,
            "7.holders_stay",
        ),
        Mutant(
            "taint_drops_claim",
            "a claim on a node tainted NoSchedule goes back to Pending, as if the node had been deleted",
            "taint_keeps_claim",
            apply_taint_drops_claim,
            "10.only_deletion",
        ),
        Mutant(
            "taskrun_done_from_pod",
            "a TaskRun whose pod has finished counts as Succeeded before Tekton says so: a failed attempt's retry gap (wide open while Tekton's controller is away) releases the group",
            "tekton_restart",
            apply_taskrun_done_from_pod,
            "8.retry_gap",
        ),
        Mutant(
            "not_ready_drops_claim",
            "a claim on a node whose Ready condition is not True goes back to Pending, as if the node had been deleted",
            "not_ready_keeps_claim",
            apply_not_ready_drops_claim,
            "10.only_deletion",
        ),
        # --- the first pod before the plan (docs/contract.md section 2) ---
        Mutant(
            "binds_before_plan",
            "a pod whose PipelineRun has no plan yet (not in the cache, or no status.pipelineSpec) is bound at once as a plain pod, with a Warning",
            "first_pod_before_plan",
            apply_binds_before_plan,
            "2.first_pod",
        ),
        Mutant(
            "parked_pod_waits_for_resync",
            "a pod parked for its PipelineRun's plan is moved by no event (the plan, the record, a claim): only the 60 s unschedulable flush retries it",
            "first_pod_before_plan",
            apply_parked_pod_waits_for_resync,
            "2.first_pod_retry",
        ),
    )
}


# --- omits_scheduler_name_annotation ---------------------------------------------


def without_scheduler_annotation(manifest: Obj) -> Obj:
    """without_scheduler_annotation: the record's manifest with no `rescon.dev/scheduler-name` annotation.

    The fault: another scheduler sharing the cluster cannot tell the record is
    not its own (docs/contract.md section 2, Several schedulers).
    """
    from reference_scheduler.runtime.records import SCHEDULER_ANNOTATION

    meta = dict(manifest["metadata"])
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != SCHEDULER_ANNOTATION}
    meta.pop("annotations", None)
    if annotations:
        meta["annotations"] = annotations
    return {**manifest, "metadata": meta}


def apply_omits_scheduler_name_annotation() -> None:
    """Records are created unmarked; the releaser still owns them (unmarked counts as its own), so only the mark is missing."""
    from reference_scheduler.runtime import records
    from reference_scheduler.runtime.releaser import Releaser

    manifest_rewritten(without_scheduler_annotation)
    owns = Releaser.owns

    def owns_unmarked_too(self: Releaser, record: Obj) -> bool:
        return records.created_by(record) is None or owns(self, record)

    Releaser.owns = owns_unmarked_too  # type: ignore[method-assign]


RULES["2.scheduler_name"] = "section 2, Several schedulers: every record carries rescon.dev/scheduler-name: <its schedulerName>"
MUTANTS["omits_scheduler_name_annotation"] = Mutant(
    "omits_scheduler_name_annotation",
    "records are created without the rescon.dev/scheduler-name annotation",
    "delete_releases",
    apply_omits_scheduler_name_annotation,
    "2.scheduler_name",
)


# --- graceful_cancel_releases_at_once, graceful_stop_releases_at_once ------------------


def graceful_stop_read_as_cancelled(decide: Callable[..., ReleaseDecision], status: str) -> Callable[..., ReleaseDecision]:
    """graceful_stop_read_as_cancelled(release_decision, "CancelledRunFinally"): the same verdicts, with that spec.status read as Cancelled.

    The fault: a gracefully stopped run's group is released at the stop
    (PipelineRunCancelled), although a task of it can still run. With
    CancelledRunFinally a finally task still runs: on the
    graceful_cancel_keeps_finally node that frees A's 3800m for B while the
    finally task `report` (3800m) is still to come. With StoppedRunFinally the
    running DAG task runs on and the finally task runs after it: on the
    graceful_stop_keeps_running node B binds beside the running `small`.
    """

    def read_as_cancelled(pipeline_run: Obj) -> Obj:
        if (pipeline_run.get("spec") or {}).get("status") != status:
            return pipeline_run
        return {**pipeline_run, "spec": {**pipeline_run["spec"], "status": "Cancelled"}}

    return pipeline_run_rewritten(decide, read_as_cancelled)


def pipeline_run_rewritten(decide: Callable[..., ReleaseDecision], rewrite: Callable[[Obj], Obj]) -> Callable[..., ReleaseDecision]:
    """pipeline_run_rewritten(release_decision, rewrite): the same verdicts, on the PipelineRun as `rewrite` misreads it (None stays None)."""

    @functools.wraps(decide)
    def decision(group_tasks: Any, pipeline_run: Obj | None, *args: Any, **kwargs: Any) -> ReleaseDecision:
        return decide(group_tasks, None if pipeline_run is None else rewrite(pipeline_run), *args, **kwargs)

    return decision


def apply_graceful_cancel_releases_at_once() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = graceful_stop_read_as_cancelled(releaser.release_decision, "CancelledRunFinally")


def apply_graceful_stop_releases_at_once() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = graceful_stop_read_as_cancelled(releaser.release_decision, "StoppedRunFinally")


RULES["8.graceful_stop"] = "section 8, rule 2: a graceful stop (CancelledRunFinally, StoppedRunFinally, an elapsed timeouts.tasks) releases a group only once no task of it can run; a finally task in the group still can, and after StoppedRunFinally so can a running DAG task"
MUTANTS["graceful_cancel_releases_at_once"] = Mutant(
    "graceful_cancel_releases_at_once",
    "CancelledRunFinally is treated like Cancelled: the group is released at the stop, while a finally task of it is still to run",
    "graceful_cancel_keeps_finally",
    apply_graceful_cancel_releases_at_once,
    "8.graceful_stop",
)
MUTANTS["graceful_stop_releases_at_once"] = Mutant(
    "graceful_stop_releases_at_once",
    "StoppedRunFinally is treated like Cancelled: the group is released at the stop, while a DAG task of it still runs and a finally task of it is still to run",
    "graceful_stop_keeps_running",
    apply_graceful_stop_releases_at_once,
    "8.graceful_stop",
)


# --- unbound_claim_dropped_on_start ----------------------------------------------


def dropped_if_unbound(claim: GroupClaim, bound: frozenset[str]) -> GroupClaim:
    """dropped_if_unbound: a Reserved claim none of whose holders is among the `bound` pod uids goes back to Pending.

    The fault: a restarted scheduler takes such a claim for an attempt that
    crashed before its bind and rolls it back (generation kept), so its pods
    are placed afresh by scoring, on whichever node looks best now
    (docs/contract.md section 7, rule 4: a restarted scheduler MUST NOT roll
    back claims it finds; a holder not yet bound binds under its claim). A
    claim with a bound holder is left as it is, so scheduler_restart (whose
    holder runs) does not see it.
    """
    if claim.state is not ClaimState.RESERVED or claim.holders & bound:
        return claim
    return GroupClaim(ClaimState.PENDING, None, frozenset(), claim.claim_generation)


def apply_unbound_claim_dropped_on_start() -> None:
    def drop(scheduler: Any, record: Obj, claim: GroupClaim) -> GroupClaim:
        meta = record["metadata"]
        pods = scheduler.cycle._core.list_namespaced_pod(meta.get("namespace") or "", label_selector=f"tekton.dev/pipelineRun={meta['name']}").items
        bound = frozenset(str(p.metadata.uid) for p in pods if p.spec is not None and p.spec.node_name)
        return dropped_if_unbound(claim, bound)

    on_start_change_claims(drop)


MUTANTS["unbound_claim_dropped_on_start"] = Mutant(
    "unbound_claim_dropped_on_start",
    "on start a Reserved claim none of whose holders is bound is taken for a crashed attempt and rolled back, so its pods are placed afresh by scoring",
    "kill_between_claim_and_bind",
    apply_unbound_claim_dropped_on_start,
    "7.stale_rollback",
)


# --- leader_unsynced_records ---------------------------------------------------


def records_seen_since_start(listed: Mapping[Any, Obj], *, first: bool) -> dict[Any, Obj]:
    """records_seen_since_start: the records of a list, or none at all when it is the process's first list.

    The fault: a replica that becomes leader starts scheduling before its
    records cache holds what already exists; it counts only the records a
    watch event brings it later. A claim made under the previous leader is
    invisible until its record next changes, so its peak holds no room.
    """
    return {} if first else dict(listed)


def apply_leader_unsynced_records() -> None:
    from reference_scheduler.runtime.informer import Informer

    original_relist = Informer._relist
    listed_once: set[int] = set()

    def relist(self: Informer) -> str:
        first = self.name == "reservationrecords" and id(self) not in listed_once
        listed_once.add(id(self))
        if not first:
            return original_relist(self)
        listing = self._list_raw()
        with self._lock:
            self._store = records_seen_since_start({}, first=True)
        self._synced.set()
        return str((listing.get("metadata") or {}).get("resourceVersion") or "")

    Informer._relist = relist  # type: ignore[method-assign]


MUTANTS["leader_unsynced_records"] = Mutant(
    "leader_unsynced_records",
    "a replica that becomes leader schedules before its records cache has synced: it counts no reservation until a watch event brings its record",
    "leader_failover",
    apply_leader_unsynced_records,
    "5.record_is_state",
)


# --- tasks_timeout_read_as_pipeline_timeout ----------------------------------------------


def tasks_timeout_read_as_pipeline_timeout(decide: Callable[..., ReleaseDecision]) -> Callable[..., ReleaseDecision]:
    """tasks_timeout_read_as_pipeline_timeout(release_decision): the same verdicts, with spec.timeouts.tasks taken for timeouts.pipeline.

    The fault: an elapsed `timeouts.tasks` ends the run for the group, as
    `timeouts.pipeline` would, although Tekton still runs the finally tasks
    then; on the tasks_timeout_keeps_finally node that frees A's 3800m for B
    while the finally task `report` (3800m) is still to come.
    """

    def tasks_as_pipeline(pipeline_run: Obj) -> Obj:
        spec = pipeline_run.get("spec") or {}
        timeouts = spec.get("timeouts") or {}
        if not timeouts.get("tasks"):
            return pipeline_run
        return {**pipeline_run, "spec": {**spec, "timeouts": {**timeouts, "pipeline": timeouts["tasks"]}}}

    return pipeline_run_rewritten(decide, tasks_as_pipeline)


def apply_tasks_timeout_read_as_pipeline_timeout() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = tasks_timeout_read_as_pipeline_timeout(releaser.release_decision)


MUTANTS["tasks_timeout_read_as_pipeline_timeout"] = Mutant(
    "tasks_timeout_read_as_pipeline_timeout",
    "an elapsed timeouts.tasks is taken for timeouts.pipeline: the group is released when the DAG tasks are stopped, while a finally task of it is still to run",
    "tasks_timeout_keeps_finally",
    apply_tasks_timeout_read_as_pipeline_timeout,
    "8.graceful_stop",
)


# --- created_label_kept ------------------------------------------------------------


def apply_created_label_kept() -> None:
    from reference_scheduler.runtime.records import RecordWriter

    def settle_label(self: RecordWriter, namespace: str, name: str) -> None:
        """The fault: a record created labelled active for a claim that did not follow keeps the label (docs/contract.md section 9)."""

    RecordWriter.settle_label = settle_label  # type: ignore[method-assign]


MUTANTS["created_label_kept"] = Mutant(
    "created_label_kept",
    "a record created labelled active to claim at once keeps rescon.dev/active when the claim does not follow (no node fits its peak)",
    "peak_holds_b_back",
    apply_created_label_kept,
    "9.label",
)


# --- groups_every_workspace, volume_claim_template_ignored, plans_embedded_spec_only ----------


def every_bound_workspace(pipeline_run_spec: Mapping[str, Any]) -> frozenset[str]:
    """every_bound_workspace: every workspace the run binds ties its tasks to one node, whatever it is bound to.

    The fault (the reference before section 4 was kept): two tasks sharing only
    an `emptyDir` scratch workspace, a ConfigMap, a Secret or a projected
    volume become a group, pinned to one node with a reservation of their peak.
    """
    return frozenset(str(b["name"]) for b in pipeline_run_spec.get("workspaces") or () if isinstance(b, Mapping) and b.get("name"))


def claim_bound_workspaces(pipeline_run_spec: Mapping[str, Any]) -> frozenset[str]:
    """claim_bound_workspaces: only `persistentVolumeClaim` bindings are co-locating; a `volumeClaimTemplate` is not.

    The fault: the PVC Tekton makes per run from a volumeClaimTemplate is just as
    attached to one node, but its tasks are planned as plain pods (or grouped
    only through the run's other PVCs).
    """
    return frozenset(
        str(b["name"]) for b in pipeline_run_spec.get("workspaces") or () if isinstance(b, Mapping) and b.get("name") and b.get("persistentVolumeClaim") is not None
    )


def apply_groups_every_workspace() -> None:
    from reference_scheduler.runtime import planner

    planner.co_locating_workspaces = every_bound_workspace


def apply_volume_claim_template_ignored() -> None:
    from reference_scheduler.runtime import planner

    planner.co_locating_workspaces = claim_bound_workspaces


def embedded_spec_as_resolved(pipeline_run: Obj) -> Obj | None:
    """embedded_spec_as_resolved: the run as a planner reading only `spec.pipelineSpec` sees it; None when it has none.

    The fault: a pipelineRef run (a Pipeline applied once, run by name) carries
    no embedded spec, so it is planned with no group at all and its tasks go
    wherever they fit, with nothing reserved. An embedded run is planned from
    its spec as written, before Tekton substitutes the run's params.
    """
    embedded = (pipeline_run.get("spec") or {}).get("pipelineSpec")
    if not embedded:
        return None
    return {**pipeline_run, "status": {**(pipeline_run.get("status") or {}), "pipelineSpec": embedded}}


def apply_plans_embedded_spec_only() -> None:
    from reference_scheduler.runtime import cycle
    from reference_scheduler.runtime.planner import Plan

    plan = cycle.plan_pipeline_run

    def plan_from_embedded_spec(pipeline_run: Obj, **kwargs: Any) -> Any:
        seen = embedded_spec_as_resolved(pipeline_run)
        return Plan(()) if seen is None else plan(seen, **kwargs)

    cycle.plan_pipeline_run = plan_from_embedded_spec


RULES["4.co_locating"] = "section 4: only workspaces bound to a persistentVolumeClaim or a volumeClaimTemplate are co-locating; emptyDir, configMap, secret, projected and csi bindings group nothing"
RULES["6.resolved_spec"] = "section 6: the tasks are read from the PipelineRun's resolved status.pipelineSpec (a pipelineRef run included), after parameter substitution"
MUTANTS["groups_every_workspace"] = Mutant(
    "groups_every_workspace",
    "every workspace the run binds groups its tasks: an emptyDir, ConfigMap, Secret or projected workspace pins them to one node",
    "emptydir_scratch",
    apply_groups_every_workspace,
    "4.co_locating",
)
MUTANTS["volume_claim_template_ignored"] = Mutant(
    "volume_claim_template_ignored",
    "only persistentVolumeClaim workspaces are co-locating: a task on a volumeClaimTemplate workspace is planned as a plain pod",
    "pipeline_ref",
    apply_volume_claim_template_ignored,
    "4.co_locating",
)
MUTANTS["plans_embedded_spec_only"] = Mutant(
    "plans_embedded_spec_only",
    "the plan is read from spec.pipelineSpec only: a pipelineRef run has no group and reserves nothing",
    "pipeline_ref",
    apply_plans_embedded_spec_only,
    "6.resolved_spec",
)


# --- decimal_memory_as_binary, fractional_cores_truncated ------------------------------------

#: A decimal SI suffix and the binary one a careless parser takes it for.
DECIMAL_AS_BINARY = {"k": "Ki", "M": "Mi", "G": "Gi", "T": "Ti", "P": "Pi", "E": "Ei"}


def decimal_suffix_as_binary(value: object) -> object:
    """decimal_suffix_as_binary('4294M') == '4294Mi': a decimal memory suffix read as its binary namesake.

    The fault: `4294M` (4294000000 bytes) is taken for 4294 Mi (4502585344),
    4.9% more; binary spellings, plain bytes and anything else are read right.
    """
    text = str(value)
    suffix = next((s for s in DECIMAL_AS_BINARY if text.endswith(s) and text[: -len(s)].replace(".", "", 1).isdigit()), None)
    return text[: -len(suffix)] + DECIMAL_AS_BINARY[suffix] if suffix else value


def whole_cores(value: object) -> object:
    """whole_cores('2.45') == '2': a CPU quantity written in fractional cores loses its fraction.

    The fault: `2.45` is read as 2 cores, 450m less; millicores (`2450m`) and
    whole cores are read right.
    """
    text = str(value)
    whole, dot, fraction = text.partition(".")
    return whole if dot and whole.isdigit() and fraction.isdigit() else value


def parse_misreading(misread: Callable[[object], object], what: str) -> None:
    """parse_misreading(whole_cores, 'cpu'): the reference's quantity parser, with `what` quantities misread first."""
    from reference_scheduler.core import resources

    parse = resources._parse

    def misreading_parse(value: object, kind: str) -> Any:
        return parse(misread(value) if kind == what else value, kind)

    resources._parse = misreading_parse


def apply_decimal_memory_as_binary() -> None:
    parse_misreading(decimal_suffix_as_binary, "memory")


def apply_fractional_cores_truncated() -> None:
    parse_misreading(whole_cores, "cpu")


RULES["6.quantities"] = "section 6: request(t) is read as Kubernetes reads quantities (decimal and binary suffixes, fractional cores)"
MUTANTS["decimal_memory_as_binary"] = Mutant(
    "decimal_memory_as_binary",
    "a decimal memory suffix is read as the binary one: 4294M as 4294Mi, so a group's peak is over-counted",
    "quantity_spellings",
    apply_decimal_memory_as_binary,
    "6.quantities",
)
MUTANTS["fractional_cores_truncated"] = Mutant(
    "fractional_cores_truncated",
    "CPU written in fractional cores loses its fraction: 2.45 as 2 cores, so a group's peak is under-counted",
    "quantity_spellings",
    apply_fractional_cores_truncated,
    "6.quantities",
)


# --- old_claims_dropped -------------------------------------------------------------------------

#: How old a claim the old_claims_dropped mutant takes for a leftover of a finished run.
OLD_CLAIM_SECONDS = 20.0


def young_reservations(reservations: Iterable[ActiveReservation], record: Mapping[str, Any], now: datetime) -> list[ActiveReservation]:
    """young_reservations: the record's Reserved groups whose claim (`reservedAt`) is under OLD_CLAIM_SECONDS old.

    The fault: a scheduler that reads a record takes an old claim for the
    leftover of a finished run and stops counting it, though the group's next
    task may be minutes away. The reference reads a record's reservations once
    per record version, so the fault shows when a record is first read long
    after its claim: at a start, after a restart inside a group's idle gap.
    """
    reserved_at = {
        str(entry.get("name")): entry.get("reservedAt")
        for entry in (record.get("status") or {}).get("groups") or []
        if entry.get("reservedAt")
    }
    young = []
    for reservation in reservations:
        stamp = reserved_at.get(reservation.group.group)
        if stamp is None or (now - datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))).total_seconds() < OLD_CLAIM_SECONDS:
            young.append(reservation)
    return young


def apply_old_claims_dropped() -> None:
    from reference_scheduler.runtime import cluster_view

    read = cluster_view.reservations_of

    def reservations_of(record: Obj) -> list[ActiveReservation]:
        return young_reservations(read(record), record, datetime.now(UTC))

    cluster_view.reservations_of = reservations_of


RULES["5.record_is_state"] = "section 5: a Reserved group holds its capacity whether or not anything of it runs, for as long as it stays Reserved; a scheduler counts every Reserved group it finds"
MUTANTS["old_claims_dropped"] = Mutant(
    "old_claims_dropped",
    f"a claim found more than {OLD_CLAIM_SECONDS:g} s after it was made is taken for a leftover and not counted (as after a restart in a group's idle gap)",
    "idle_group_restart",
    apply_old_claims_dropped,
    "5.record_is_state",
)


# --- namespace_blind_run_pods ------------------------------------------------------------


def record_of_run_anywhere(records: Iterable[Obj], pipeline_run: str) -> Obj | None:
    """record_of_run_anywhere(records, 'build'): the record of a PipelineRun named `build`, looked up by that name alone.

    The fault of a scheduler that matches a run's pods by their
    `tekton.dev/pipelineRun` label across every namespace: of two runs named
    `build` in `team-a` and `team-b`, a pod of team-b's finds the record made
    first, team-a's, and is placed as one of team-a's group (docs/contract.md
    section 7: a group's pods are in the PipelineRun's namespace). Where one
    namespace alone holds a run of that name it is the reference's lookup.
    """
    found = [r for r in records if (r.get("metadata") or {}).get("name") == pipeline_run]
    if not found:
        return None
    return min(found, key=lambda r: (str(r["metadata"].get("creationTimestamp") or ""), str(r["metadata"].get("namespace") or "")))


def apply_namespace_blind_run_pods() -> None:
    """A pod's group comes from the record of its run's name in any namespace: the pod is taken for a pod of that namespace."""
    from reference_scheduler.runtime.cluster_view import pipeline_task_of
    from reference_scheduler.runtime.cycle import Cycle

    original = Cycle._group_state

    def group_state(self: Cycle, pod: Obj) -> Any:
        found = pipeline_task_of(pod)
        record = record_of_run_anywhere(self._view._records.list(), found[0]) if found is not None else None
        if record is not None:
            pod = {**pod, "metadata": {**pod["metadata"], "namespace": record["metadata"].get("namespace")}}
        return original(self, pod)

    Cycle._group_state = group_state  # type: ignore[method-assign]


RULES["7.run_namespace"] = "section 7, Headroom: a group's pods are those of the PipelineRun's own namespace with its labels, never a same-named run's elsewhere"
MUTANTS["namespace_blind_run_pods"] = Mutant(
    "namespace_blind_run_pods",
    "a pod's run is found by its tekton.dev/pipelineRun label alone, in every namespace: a pod of a run named like an older run elsewhere joins that run's group and claim",
    "same_name_two_namespaces",
    apply_namespace_blind_run_pods,
    "7.run_namespace",
)


# --- sizes_nodes_by_capacity ---------------------------------------------------------


def capacity_as_allocatable(node: Mapping[str, Any]) -> Resources:
    """capacity_as_allocatable: a node's room read from ``status.capacity`` instead of ``status.allocatable``.

    The fault: a kubelet's capacity includes what it keeps back for the system
    (system-reserved, kube-reserved, the eviction threshold). On a local pool
    node of allocatable 4800m / 8Gi this is 5000m / 8704Mi, so beside A's 200m
    pod and 3600m residual the scheduler finds 1200m where there are 1000m.
    """
    from reference_scheduler.core.node_checks import node_allocatable

    return node_allocatable({"status": {"allocatable": (node.get("status") or {}).get("capacity")}})


def apply_sizes_nodes_by_capacity() -> None:
    from reference_scheduler.runtime import cluster_view

    cluster_view.node_allocatable = capacity_as_allocatable


RULES["7.allocatable"] = "section 7, Headroom: a node's room is its status.allocatable, never its capacity"
MUTANTS["sizes_nodes_by_capacity"] = Mutant(
    "sizes_nodes_by_capacity",
    "nodes are sized by status.capacity, not status.allocatable: the room a kubelet keeps back for the system is handed to pods",
    "allocatable_not_capacity",
    apply_sizes_nodes_by_capacity,
    "7.allocatable",
)


# --- ignores_tolerations -------------------------------------------------------------


def taint_check_without_tolerations(check: Callable[[Obj, Obj], Any]) -> Callable[[Obj, Obj], Any]:
    """taint_check_without_tolerations(untolerated_taint): the taint check with the pod's tolerations left out.

    The fault: every NoSchedule or NoExecute taint keeps every pod off its node,
    as if no pod could tolerate one (a scheduler that takes only untainted nodes).
    On pod_template_placement's pool the group's tasks, which tolerate the
    dedicated node's taint through their podTemplate and select that node, find
    no node at all.
    """

    def check_taints(pod: Obj, node: Obj) -> Any:
        return check({**pod, "spec": {**(pod.get("spec") or {}), "tolerations": []}}, node)

    return check_taints


def apply_ignores_tolerations() -> None:
    from reference_scheduler.core import node_checks

    node_checks.NODE_CHECKS = tuple(
        taint_check_without_tolerations(c) if c is node_checks.untolerated_taint else c for c in node_checks.NODE_CHECKS
    )


MUTANTS["ignores_tolerations"] = Mutant(
    "ignores_tolerations",
    "a pod's tolerations are not read: no pod goes to a node with a NoSchedule or NoExecute taint",
    "pod_template_placement",
    apply_ignores_tolerations,
    "7.node_checks",
)


# --- volumes (docs/contract.md section 7, Volumes) ------------------------------------------------


def admits_every_node(volume: Obj, node: Obj) -> bool:
    """admits_every_node: a volume's node affinity as a scheduler blind to it reads it.

    The fault: pinned_cache_volume's cache volume admits only n1, which fillers
    make the choice of no scoring: the first run's group opens its claim on n0 or
    n2, where the kubelet can never mount the cache.
    """
    return True


def apply_ignores_volume_node_affinity() -> None:
    from reference_scheduler.core import volume_binding

    volume_binding.pv_admits_node = admits_every_node


def nothing_to_provision(namespace: str, claim_names: Any, lookups: Any) -> tuple[str, ...]:
    """nothing_to_provision: no claim of a pod ever needs a node chosen for it, as a scheduler that ignores volumes binds.

    The fault: a WaitForFirstConsumer claim is never annotated
    `volume.kubernetes.io/selected-node`, so no provisioner acts, and the pod is
    bound at once with its claim Pending for ever (the reference before volumes).
    """
    return ()


def apply_never_selects_node_for_delayed_claim() -> None:
    from reference_scheduler.core import volume_binding

    volume_binding.claims_to_provision = nothing_to_provision


def own_claims_only(pod: Obj, pipeline_run: Any, workspaces: Any) -> tuple[str, ...]:
    """own_claims_only: a group's first pod is checked against its own claims only, not its group's later tasks'.

    The fault: in later_task_pinned_volume, fetch mounts only a template claim
    that could go anywhere, so the group's claim opens where fetch fits best, and
    build, whose cache volume admits only n2, can then never run.
    """
    from reference_scheduler.core import volume_binding

    return volume_binding.pod_claim_names(pod)


def apply_checks_only_own_pod_volumes() -> None:
    from reference_scheduler.core import volume_binding

    volume_binding.group_claim_names = own_claims_only


def apply_keeps_selection_after_failed_provisioning() -> None:
    """The fault: a bind whose volume did not come rolls its claim back but leaves `volume.kubernetes.io/selected-node` on the claim.

    The claim then pins every later attempt to the node where its volume could
    not be made (a selected node is the only node an unbound claim admits), so
    in provisioning_refused_rolls_back the pod never leaves n0.
    """
    from reference_scheduler.runtime import volume_binder

    volume_binder.unselect_node = lambda *args, **kwargs: None


RULES["7.volume_affinity"] = "section 7, Volumes V1: a pod is bound only to a node that the volume of each of its Bound claims admits"
RULES["7.volume_provisioning"] = "section 7, Volumes V2: a WaitForFirstConsumer claim is annotated with the chosen node and Bound before the pod is bound"
RULES["7.volume_group"] = "section 7, Volumes V3: a group's claim opens only on a node that admits the claims of every task of the group"
RULES["7.volume_rollback"] = "section 7, Volumes V4: provisioning that fails is a failed bind: the claim rolled back and the node taken off the claim"
MUTANTS["ignores_volume_node_affinity"] = Mutant(
    "ignores_volume_node_affinity",
    "a Bound claim's volume node affinity is not checked: a pod goes where its volume cannot be mounted",
    "pinned_cache_volume",
    apply_ignores_volume_node_affinity,
    "7.volume_affinity",
)
MUTANTS["never_selects_node_for_delayed_claim"] = Mutant(
    "never_selects_node_for_delayed_claim",
    "a WaitForFirstConsumer claim is never annotated with the chosen node, and the pod is bound before its claim is Bound",
    "volume_claim_template_default_class",
    apply_never_selects_node_for_delayed_claim,
    "7.volume_provisioning",
)
MUTANTS["checks_only_own_pod_volumes"] = Mutant(
    "checks_only_own_pod_volumes",
    "a group's claim opens where its first pod's own volumes can go, whatever its later tasks' volumes admit",
    "later_task_pinned_volume",
    apply_checks_only_own_pod_volumes,
    "7.volume_group",
)
MUTANTS["keeps_selection_after_failed_provisioning"] = Mutant(
    "keeps_selection_after_failed_provisioning",
    "a bind whose volume was not provisioned rolls its claim back but leaves the claim's selected node, pinning the pod to that node",
    "provisioning_refused_rolls_back",
    apply_keeps_selection_after_failed_provisioning,
    "7.volume_rollback",
)


# --- task_from_pod_name ---------------------------------------------------------


def task_from_pod_name(pod: Mapping[str, Any]) -> tuple[str, str] | None:
    """task_from_pod_name: a pod's pipeline task read from its name, `<run>-<task>-pod` (or `-pod-retryN`), not from its label.

    The fault: Tekton names a TaskRun `<run>-<task>` and its pod `<TaskRun>-pod`,
    but shortens either past 63 characters to its start and an md5 hash
    (knative's kmeta.ChildName). Such a pod's name no longer starts with its
    run's, so it is taken for a plain pod: no record, no group, no peak.
    """
    meta = pod.get("metadata") or {}
    run = (meta.get("labels") or {}).get("tekton.dev/pipelineRun")
    name = str(meta.get("name") or "")
    if not run or not name.startswith(f"{run}-"):
        return None
    task = re.sub(r"-pod(-retry[0-9]+)?$", "", name[len(run) + 1 :])
    return (str(run), task) if task and task != name[len(run) + 1 :] else None


def apply_task_from_pod_name() -> None:
    from reference_scheduler.runtime import cluster_view, cycle, requeue, scheduler

    for module in (cluster_view, cycle, requeue, scheduler):
        module.pipeline_task_of = task_from_pod_name  # type: ignore[attr-defined]


RULES["7.group_pods_by_label"] = (
    "section 7: a pod is one of a group's by Tekton's labels tekton.dev/pipelineRun and tekton.dev/pipelineTask, never by its name"
)
MUTANTS["task_from_pod_name"] = Mutant(
    "task_from_pod_name",
    "a pod's pipeline task is read from its name (`<run>-<task>-pod`): a pod whose name Tekton shortened past 63 characters is taken for a plain pod",
    "long_generated_names",
    apply_task_from_pod_name,
    "7.group_pods_by_label",
)


# --- oversized_group_claims_a_node -------------------------------------------------


def fit_capping_the_peak_at_the_node(node: NodeView, reservations: Sequence[ActiveReservation], pod: Any, demand: Any) -> list[Any]:
    """fit_capping_the_peak_at_the_node: a group whose peak exceeds the node's allocatable opens its claim if the node is empty enough for what it can hold.

    The fault: rather than refuse a group no node can hold (docs/contract.md
    section 7), the claim takes the node, as if "as much as fits" were a
    reservation. The record still states the whole peak, so its residual covers
    more than the node: nothing else fits there, and the group's own later pods
    wait on each other on a node it cannot hold.
    """
    from reference_scheduler.core.headroom import GroupDemand, fit

    if demand is not None and demand.node is None:
        capped = Resources.of({name: min(amount, node.allocatable.get(name)) for name, amount in demand.peak.items()})
        demand = GroupDemand(demand.key, capped)
    return fit(node, reservations, pod, demand)


def apply_oversized_group_claims_a_node() -> None:
    from reference_scheduler.runtime import cycle

    cycle.fit = fit_capping_the_peak_at_the_node


RULES["7.fits_no_node"] = "section 7: a group no node can hold is refused: none of its pods is bound, it holds nothing"
MUTANTS["oversized_group_claims_a_node"] = Mutant(
    "oversized_group_claims_a_node",
    "a group whose peak exceeds every node opens its claim with what a node holds: its first pod is bound, and its residual fills the node",
    "group_fits_no_node",
    apply_oversized_group_claims_a_node,
    "7.fits_no_node",
)


# --- skips_resolved_tasks -------------------------------------------------------


def nothing_for_a_resolved_task(pipeline_run: Mapping[str, Any], task: str, ref: Mapping[str, Any], resolution_requests: Any) -> dict[str, Any]:
    """nothing_for_a_resolved_task: a task whose Task comes through a resolver is planned as a Task of no steps.

    The fault: the scheduler finds no Task by name for `taskRef: {resolver: ...}`
    and, rather than read the run's ResolutionRequests (docs/contract.md
    section 6), counts the task as nothing. Its group still forms (workspaces
    are the pipeline's), but the peak leaves the resolved Task out: the room it
    will need goes to other runs.
    """
    return {"steps": []}


def apply_skips_resolved_tasks() -> None:
    from reference_scheduler.runtime import planner

    planner._resolved_spec = nothing_for_a_resolved_task


RULES["6.resolved_tasks"] = "section 6: a Task fetched through a resolver counts like any other, read from the run's answered ResolutionRequest"
MUTANTS["skips_resolved_tasks"] = Mutant(
    "skips_resolved_tasks",
    "a task whose Task comes through a resolver is counted as nothing: the group's peak leaves it out",
    "resolved_catalog_task",
    apply_skips_resolved_tasks,
    "6.resolved_tasks",
)


# --- skipped_tasks_awaited ---------------------------------------------------------


def without_skipped_tasks(pipeline_run: Obj) -> Obj:
    """without_skipped_tasks: the PipelineRun as a releaser sees it that waits for a TaskRun of every group task.

    The fault: a task Tekton skipped (status.skippedTasks) never gets a
    TaskRun, so its group never counts as done and is held until the whole
    PipelineRun is over (its Succeeded condition, checked before the tasks).
    """
    status = pipeline_run.get("status") or {}
    if "skippedTasks" not in status:
        return pipeline_run
    return {**pipeline_run, "status": {k: v for k, v in status.items() if k != "skippedTasks"}}


def apply_skipped_tasks_awaited() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = pipeline_run_rewritten(releaser.release_decision, without_skipped_tasks)


MUTANTS["skipped_tasks_awaited"] = Mutant(
    "skipped_tasks_awaited",
    "a task the PipelineRun lists in status.skippedTasks is not done until a TaskRun of it is: a group whose task was skipped is held until the run is over",
    "skipped_task_releases",
    apply_skipped_tasks_awaited,
    "8.tasks_done",
)


# --- the shapes of a node's other pods (foreign_pod_shapes) ----------------------------


def spec_rewritten(rewrite: Callable[[Mapping[str, Any]], dict[str, Any]]) -> None:
    """spec_rewritten() makes the scheduler count every bound pod by `rewrite(pod's spec)` instead of its spec."""
    from reference_scheduler.runtime.cluster_view import ClusterView

    original = ClusterView.request_of

    @functools.wraps(original)
    def request_of(self: ClusterView, pod: Obj) -> Any:
        return original(self, {**pod, "spec": rewrite(pod.get("spec") or {})})

    ClusterView.request_of = request_of  # type: ignore[method-assign]


def without_overhead(spec: Mapping[str, Any]) -> dict[str, Any]:
    """without_overhead: the fault counts a pod without the `spec.overhead` its RuntimeClass gave it."""
    return {k: v for k, v in spec.items() if k != "overhead"}


def sidecars_as_init(spec: Mapping[str, Any]) -> dict[str, Any]:
    """sidecars_as_init: the fault reads a native sidecar (`restartPolicy: Always`) as an init container that ends."""
    inits = [{k: v for k, v in c.items() if k != "restartPolicy"} for c in spec.get("initContainers") or []]
    return {**spec, "initContainers": inits} if inits else dict(spec)


def without_init_containers(spec: Mapping[str, Any]) -> dict[str, Any]:
    """without_init_containers: the fault counts a pod's containers only."""
    return {k: v for k, v in spec.items() if k != "initContainers"}


def without_pod_level_requests(spec: Mapping[str, Any]) -> dict[str, Any]:
    """without_pod_level_requests: the fault ignores `spec.resources`, counting the containers' total instead."""
    return {k: v for k, v in spec.items() if k != "resources"}


def apply_ignores_pod_overhead_of_others() -> None:
    spec_rewritten(without_overhead)


def apply_native_sidecars_as_init() -> None:
    spec_rewritten(sidecars_as_init)


def apply_ignores_init_containers() -> None:
    spec_rewritten(without_init_containers)


def apply_ignores_pod_level_requests() -> None:
    spec_rewritten(without_pod_level_requests)


def counts_while_deleting(pod: Mapping[str, Any]) -> bool:
    """counts_while_deleting: the fault drops a pod from its node once it has a deletionTimestamp, not once it is gone."""
    return not (pod.get("metadata") or {}).get("deletionTimestamp")


def apply_terminating_pods_free() -> None:
    from reference_scheduler.runtime.cluster_view import ClusterView

    original_index = ClusterView._index

    def index(self: ClusterView, pod: Obj) -> None:
        if counts_while_deleting(pod):
            original_index(self, pod)
        else:
            # The node's count forgets it, as a scheduler that treats a deletion as the pod's end would.
            original_index(self, {**pod, "status": {**(pod.get("status") or {}), "phase": "Succeeded"}})

    ClusterView._index = index  # type: ignore[method-assign]


RULES["7.pod_request"] = (
    "section 7, Headroom: a pod counts with its effective request (overhead, native sidecars, init containers, pod-level requests), "
    "and a pod being deleted counts until it is gone"
)
for _name, _fault, _apply in (
    ("ignores_pod_overhead_of_others", "a bound pod is counted without its spec.overhead (its RuntimeClass's podFixed)", apply_ignores_pod_overhead_of_others),
    ("native_sidecars_as_init", "a bound pod's native sidecar (an init container with restartPolicy Always) is counted as an init container that ends", apply_native_sidecars_as_init),
    ("ignores_init_containers", "a bound pod is counted by its containers only: a larger init container is left out", apply_ignores_init_containers),
    ("ignores_pod_level_requests", "a bound pod's pod-level spec.resources requests are ignored: its containers' total counts instead", apply_ignores_pod_level_requests),
    ("terminating_pods_free", "a bound pod with a deletionTimestamp no longer counts on its node, though it runs until it is gone", apply_terminating_pods_free),
):
    MUTANTS[_name] = Mutant(_name, _fault, "foreign_pod_shapes", _apply, "7.pod_request")


# --- tekton_sidecars_as_plain_init -------------------------------------------------


def apply_tekton_sidecars_as_plain_init() -> None:
    """The fault: a prediction of Tekton's pod that, with enable-kubernetes-sidecar on, makes each sidecar an init container
    without `restartPolicy: Always`, so the largest init container counts, not the steps plus the sidecars (sidecars_as_init)."""
    from reference_scheduler.core import tekton_pods

    original = tekton_pods.predict_task_pod_spec

    @functools.wraps(original)
    def predict_task_pod_spec(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return sidecars_as_init(original(*args, **kwargs))

    tekton_pods.predict_task_pod_spec = predict_task_pod_spec


# --- custom_runs_never_done, child_pipeline_runs_never_done -------------------------


def without_kind(children: Mapping[str, Obj], kind: str) -> dict[str, Obj]:
    """without_kind: the fault looks for a TaskRun of every group task, so a child run of `kind` (CustomRun, PipelineRun) is never found."""
    return {name: child for name, child in children.items() if child.get("kind") != kind}


def _never_finding(kind: str) -> None:
    from reference_scheduler.runtime.releaser import Releaser

    original = Releaser._task_runs_of

    @functools.wraps(original)
    def task_runs_of(self: Releaser, namespace: str, pipeline_run: Obj | None) -> dict[str, Obj]:
        return without_kind(original(self, namespace, pipeline_run), kind)

    Releaser._task_runs_of = task_runs_of  # type: ignore[method-assign]


def apply_custom_runs_never_done() -> None:
    _never_finding("CustomRun")


def apply_child_pipeline_runs_never_done() -> None:
    _never_finding("PipelineRun")


RULES["8.custom_tasks"] = "section 8, rule 1: a custom task is done when its CustomRun's Succeeded is True or False"
MUTANTS["custom_runs_never_done"] = Mutant(
    "custom_runs_never_done",
    "a group's tasks are judged from TaskRuns only: a custom task's CustomRun is never found, so its group is held until the run ends",
    "custom_task_in_group",
    apply_custom_runs_never_done,
    "8.custom_tasks",
)


RULES["8.child_pipelines"] = "section 8, rule 1: a task that runs a Pipeline is done when its child PipelineRun's Succeeded is True or False"
MUTANTS["child_pipeline_runs_never_done"] = Mutant(
    "child_pipeline_runs_never_done",
    "a group's tasks are judged from TaskRuns only: a child pipeline's PipelineRun is never found, so its parent's group is held until the run ends",
    "child_pipeline",
    apply_child_pipeline_runs_never_done,
    "8.child_pipelines",
)


# --- child_pipelines_unplanned ---------------------------------------------------


def refusing_child_pipelines(pipeline_spec: Mapping[str, Any]) -> None:
    """refusing_child_pipelines: the fault refuses a pipeline with a task that runs a Pipeline, so the whole run is planned as plain pods."""
    for task in [*(pipeline_spec.get("tasks") or []), *(pipeline_spec.get("finally") or [])]:
        if task.get("pipelineRef") or task.get("pipelineSpec"):
            raise ValueError(f"pipeline task {task.get('name')!r} runs a Pipeline: not planned")


def apply_child_pipelines_unplanned() -> None:
    from reference_scheduler.runtime import planner

    original = planner.build_pipeline_graph

    def build(pipeline_spec: Mapping[str, Any], **kwargs: Any) -> PipelineGraph:
        refusing_child_pipelines(pipeline_spec)
        return original(pipeline_spec, **kwargs)

    planner.build_pipeline_graph = build


RULES["5.transitions"] = "section 5: a join changes only holders; a release keeps node, holders and reservedAt"
RULES["6.child_pipelines"] = (
    "section 6: a task that runs a Pipeline requests nothing in its run, whose other tasks are planned as usual; "
    "the child PipelineRun's tasks are planned in its own record"
)
MUTANTS["child_pipelines_unplanned"] = Mutant(
    "child_pipelines_unplanned",
    "a run with a task that runs a Pipeline is not planned: its pods are scheduled as plain pods, its groups get no record",
    "child_pipeline",
    apply_child_pipelines_unplanned,
    "6.child_pipelines",
)


RULES["6.result_fan_out"] = "section 6: a matrix whose fan-out comes from a task result counts as one combination"
MUTANTS["result_fan_out_counts_nothing"] = Mutant(
    "result_fan_out_counts_nothing",
    "a matrix whose values come from a task result counts as no combination: its group's peak leaves the task out",
    "fan_out_from_results",
    apply_result_fan_out_counts_nothing,
    "6.result_fan_out",
)


RULES["6.native_sidecars"] = (
    "section 6.1, step 8: with enable-kubernetes-sidecar on, Tekton's sidecars are restartable init containers, "
    "added to the steps as PodRequests adds them"
)
MUTANTS["tekton_sidecars_as_plain_init"] = Mutant(
    "tekton_sidecars_as_plain_init",
    "with enable-kubernetes-sidecar on, the prediction of Tekton's pod makes its sidecars init containers that end: the largest counts, not the sum",
    "native_sidecars",
    apply_tekton_sidecars_as_plain_init,
    "6.native_sidecars",
)


# --- ignores_other_schedulers_records --------------------------------------------


def own_records_only(reservations_of: Callable[[Obj], Any], scheduler_name: Callable[[], str]) -> Callable[[Obj], Any]:
    """own_records_only: a record another scheduler wrote holds nothing, as if only one's own reservations took room.

    The fault: docs/contract.md section 7 sums the residuals of every Reserved
    group on a node, whoever reserved it; a scheduler that filters the records
    by its own rescon.dev/scheduler-name binds into another scheduler's room.
    """

    def filtered(record: Obj) -> Any:
        written_by = ((record.get("metadata") or {}).get("annotations") or {}).get("rescon.dev/scheduler-name")
        return reservations_of(record) if written_by in (None, scheduler_name()) else []

    return filtered


def apply_ignores_other_schedulers_records() -> None:
    from reference_scheduler.runtime import cluster_view
    from reference_scheduler.runtime.scheduler import Scheduler

    names: list[str] = []
    original_init = Scheduler.__init__

    @functools.wraps(original_init)
    def init(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        names.append(self.scheduler_name)

    Scheduler.__init__ = init  # type: ignore[method-assign]
    cluster_view.reservations_of = own_records_only(cluster_view.reservations_of, lambda: names[-1] if names else "")


RULES["7.other_schedulers"] = "section 7, Headroom: a group another reservation scheduler holds Reserved on a node counts there as any other"
MUTANTS["ignores_other_schedulers_records"] = Mutant(
    "ignores_other_schedulers_records",
    "a record another scheduler wrote (rescon.dev/scheduler-name not this one's) holds nothing: its Reserved group's room looks free",
    "another_schedulers_reservation",
    apply_ignores_other_schedulers_records,
    "7.other_schedulers",
)


# --- failed_task_ends_group, matrix_last_child_only, timeout_from_creation ---------------


def failure_ends_group(decide: Callable[..., ReleaseDecision]) -> Callable[..., ReleaseDecision]:
    """failure_ends_group(release_decision): the same verdicts, except that a group with a task failed for good is released.

    The fault: a failed task read as the end of its run. Tekton starts no new
    DAG task after a failure but still runs the finally tasks, and a finally
    task that shares the group's workspace is in the group (docs/contract.md
    sections 4 and 8), so the group is not done while that task is to come.
    """
    from reference_scheduler.core import release

    def decide_on_failure(group_tasks: Any, pipeline_run: Any, task_runs: Mapping[str, Any], *, now: datetime | None = None) -> ReleaseDecision:
        refs = release.task_run_names(pipeline_run) if pipeline_run is not None else {}
        for task in sorted(group_tasks):
            for name in refs.get(task, ()):
                task_run = task_runs.get(name)
                if task_run is not None and release.task_run_progress(task_run) is release.TaskRunProgress.FAILED:
                    return ReleaseDecision(True, ReleaseReason.PIPELINE_RUN_DONE, f"task {task} failed: the run is over")
        return decide(group_tasks, pipeline_run, task_runs, now=now)

    return decide_on_failure


def apply_failed_task_ends_group() -> None:
    from reference_scheduler.runtime import releaser

    releaser.release_decision = failure_ends_group(releaser.release_decision)


def one_child_per_task(pipeline_run: Mapping[str, Any]) -> dict[str, list[str]]:
    """one_child_per_task: each pipeline task's TaskRun from status.childReferences, a later reference overwriting an earlier.

    The fault: a map of task to TaskRun. A matrixed task has one TaskRun per
    combination; only the last listed is kept, so the task looks done once
    that one is, whatever its other combinations are doing.
    """
    names: dict[str, list[str]] = {}
    for ref in ((pipeline_run.get("status") or {}).get("childReferences")) or []:
        if isinstance(ref, Mapping) and isinstance(ref.get("pipelineTaskName"), str) and ref.get("name"):
            names[ref["pipelineTaskName"]] = [str(ref["name"])]
    return names


def apply_matrix_last_child_only() -> None:
    from reference_scheduler.core import release

    release.task_run_names = one_child_per_task


def elapsed_since_creation(pipeline_run: Mapping[str, Any], timeout: Any, now: datetime | None) -> bool:
    """elapsed_since_creation: a timeout counted from metadata.creationTimestamp, as if every run started when it was created.

    The fault: Tekton counts `timeouts.pipeline` (and `tasks`) from
    status.startTime; a run created PipelineRunPending starts later, so its
    deadline comes later than creation plus the timeout.
    """
    created = (pipeline_run.get("metadata") or {}).get("creationTimestamp")
    if timeout is None or now is None or not isinstance(created, str):
        return False
    start = datetime.fromisoformat(created.replace("Z", "+00:00"))
    moment = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    return bool(moment - start > timeout)


def apply_timeout_from_creation() -> None:
    from reference_scheduler.core import release

    release._elapsed_beyond = elapsed_since_creation  # type: ignore[assignment]


RULES["8.failed_task"] = "section 8, rule 1: a DAG task that failed for good is done, but its run is not: a finally task of the group can still run"
RULES["8.matrix_done"] = "section 8, rule 1: a matrixed task is done when every one of its TaskRuns is, in whatever order they end"
RULES["8.timeout_start"] = "section 8, rule 2: timeouts.pipeline counts from the run's start (status.startTime), not its creation"
MUTANTS["failed_task_ends_group"] = Mutant(
    "failed_task_ends_group",
    "a group with a task failed for good is released as if its run were over, while a finally task of it is still to run",
    "failed_task_keeps_finally",
    apply_failed_task_ends_group,
    "8.failed_task",
)
MUTANTS["matrix_last_child_only"] = Mutant(
    "matrix_last_child_only",
    "a task's TaskRuns are read as one, the last childReference listed: a matrixed task looks done once its last combination is",
    "out_of_order_matrix",
    apply_matrix_last_child_only,
    "8.matrix_done",
)
MUTANTS["timeout_from_creation"] = Mutant(
    "timeout_from_creation",
    "timeouts.pipeline is counted from metadata.creationTimestamp: a run that was pending before it started is released early",
    "pending_start_timeout",
    apply_timeout_from_creation,
    "8.timeout_start",
)

# --- peak_ignores_extended_resources, fit_ignores_ephemeral_storage, fit_ignores_hugepages ---


def peak_without_extended_resources(group_peak: Callable[[PipelineGraph, Iterable[str]], Resources]) -> Callable[[PipelineGraph, Iterable[str]], Resources]:
    """peak_without_extended_resources(group_peak): the same peaks, less every extended resource (nvidia.com/gpu, example.com/gpu).

    The fault: a group whose build needs 1 CPU and whose later test needs 1 CPU
    and one example.com/gpu reserves 1 CPU and no GPU, so its claim holds no
    GPU: another run can take the node's only GPU before the test starts, and
    the test's pod waits (docs/contract.md section 6: the peak covers every
    resource the group's tasks request). cpu, memory, ephemeral-storage and
    hugepages stay exact; the claiming pod's own GPU is still checked.
    """
    from reference_scheduler.core.resource_names import is_extended_resource_name

    @functools.wraps(group_peak)
    def peak(graph: PipelineGraph, tasks: Iterable[str]) -> Resources:
        return group_peak(graph, tasks).dropping(is_extended_resource_name)

    return peak


def apply_peak_ignores_extended_resources() -> None:
    from reference_scheduler.core import partition

    partition.group_peak = peak_without_extended_resources(partition.group_peak)


def fit_ignoring(fit: Callable[..., list[Any]], ignored: Callable[[str], bool]) -> Callable[..., list[Any]]:
    """fit_ignoring(fit, ignored): fit()'s verdicts without the failures of the resources ignored(name) picks.

    The fault, for ephemeral-storage or hugepages: a node short of it still
    takes the pod (or the group's claim), and the kubelet then refuses the pod
    (OutOfephemeral-storage, OutOfhugepages-2Mi) or evicts it
    (docs/contract.md section 7: fit covers every resource kube-scheduler's
    NodeResourcesFit checks). Other resources are judged as the reference does.
    """

    @functools.wraps(fit)
    def judged(node: NodeView, reservations: Sequence[ActiveReservation], pod: Any, demand: Any) -> list[Any]:
        return [f for f in fit(node, reservations, pod, demand) if not ignored(getattr(f, "resource", ""))]

    return judged


def is_ephemeral_storage(name: str) -> bool:
    return name == "ephemeral-storage"


def apply_fit_ignores_ephemeral_storage() -> None:
    from reference_scheduler.runtime import cycle

    cycle.fit = fit_ignoring(cycle.fit, is_ephemeral_storage)


def apply_fit_ignores_hugepages() -> None:
    from reference_scheduler.core.resource_names import is_hugepages_resource_name
    from reference_scheduler.runtime import cycle

    cycle.fit = fit_ignoring(cycle.fit, is_hugepages_resource_name)


RULES["6.every_resource"] = (
    "section 6: the peak covers every resource the group's tasks request, extended resources (nvidia.com/gpu) included"
)
RULES["7.every_resource"] = (
    "section 7: fit checks every resource NodeResourcesFit checks, ephemeral-storage and hugepages-<size> included"
)
MUTANTS["peak_ignores_extended_resources"] = Mutant(
    "peak_ignores_extended_resources",
    "a group's peak, and so its claim, leaves out extended resources: a later task's GPU is not held",
    "extended_resources_in_group",
    apply_peak_ignores_extended_resources,
    "6.every_resource",
)
MUTANTS["fit_ignores_ephemeral_storage"] = Mutant(
    "fit_ignores_ephemeral_storage",
    "node fit ignores ephemeral-storage: a node without room for it still takes the pod or the claim",
    "ephemeral_storage_decides",
    apply_fit_ignores_ephemeral_storage,
    "7.every_resource",
)
MUTANTS["fit_ignores_hugepages"] = Mutant(
    "fit_ignores_hugepages",
    "node fit ignores hugepages-<size>: a node without room for them still takes the pod or the claim",
    "hugepages_decide",
    apply_fit_ignores_hugepages,
    "7.every_resource",
)

# --- group_pods_skip_fit, finished_steps_free_room ------------------------------------


def apply_group_pods_skip_fit() -> None:
    """The fault: a pod of a Reserved group goes to the claim's node without a fit check there, the reservation taken to hold its room
    (the group's tasks run one after another, so the peak is one task's): the next task's pod is bound beside the last one still running."""
    from reference_scheduler.core.reasons import InsufficientResource
    from reference_scheduler.runtime import cycle

    original = cycle.fit

    @functools.wraps(original)
    def fit(node: Any, reservations: Any, pod: Any, demand: Any) -> list[Any]:
        failures = original(node, reservations, pod, demand)
        if demand is not None and demand.node == node.name:
            return [failure for failure in failures if not isinstance(failure, InsufficientResource)]
        return failures

    cycle.fit = fit


def steps_ended(pod: Mapping[str, Any]) -> bool:
    """steps_ended: every step container (Tekton's `step-*`) has terminated, i.e. the pod's TaskRun is done, whatever else still runs."""
    statuses = [s for s in (pod.get("status") or {}).get("containerStatuses") or [] if str(s.get("name", "")).startswith("step-")]
    return bool(statuses) and all((s.get("state") or {}).get("terminated") for s in statuses)


def apply_finished_steps_free_room() -> None:
    from reference_scheduler.runtime.cluster_view import ClusterView

    original_index = ClusterView._index

    def index(self: ClusterView, pod: Obj) -> None:
        if steps_ended(pod):
            # The node's count forgets it, as a scheduler that takes a done TaskRun for a finished pod would.
            original_index(self, {**pod, "status": {**(pod.get("status") or {}), "phase": "Succeeded"}})
        else:
            original_index(self, pod)

    ClusterView._index = index  # type: ignore[method-assign]


RULES["7.hand_off"] = (
    "section 7, Handing room from task to task: a group's next pod joins its claim's node only where it fits beside every pod "
    "that still counts there, the group's own included; a pod whose TaskRun is done counts until its phase is Succeeded or Failed"
)
MUTANTS["group_pods_skip_fit"] = Mutant(
    "group_pods_skip_fit",
    "a pod of a Reserved group is bound on the claim's node without a fit check: the group's reservation is taken to hold its room",
    "exact_fit_handoff",
    apply_group_pods_skip_fit,
    "7.hand_off",
)
MUTANTS["finished_steps_free_room"] = Mutant(
    "finished_steps_free_room",
    "a bound task pod whose steps have all ended (its TaskRun done) no longer counts, though its sidecars still run",
    "exact_fit_handoff",
    apply_finished_steps_free_room,
    "7.hand_off",
)

from .held_out import HELD_OUT  # noqa: E402  (the held-out batch registers after the catalogue it extends)
MUTANTS.update(HELD_OUT)
