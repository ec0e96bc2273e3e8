"""Held-out faults: a second batch of mutants, each one plausible mistake in implementing the contract.

This batch was written blind on 2026-12-05 against docs/contract.md and
reference_scheduler/ only: its author did not read the conformance suite
(tests/conformance/, harness/), docs/coverage.md, docs/mutants.md,
tests/soak.py, reports/, nor which scenario catches any mutant of the
catalogue in tests/mutants/faults.py. The faults were chosen as a developer
writing such a scheduler might get the contract wrong, not to fit (or to dodge)
what the suite checks, so the batch measures how well the suite generalises.

Style as in tests/mutants/faults.py: each fault is ONE wrong rule, a small pure
function where it can be one (tests/unit/test_held_out_faults.py shows each
differs from the reference's on one concrete input and agrees on an ordinary
one), and an `apply_*` that patches it into the reference at start (a module
attribute or a method replaced, never a fork of a file). `_replace` refuses a
name the reference does not have, so a fault can never silently patch nothing.
Each leaves the scheduler placing ordinary pods as before.

Each is registered pending ("held-out batch: not yet run"); MEASURED, at the
end, fills in `caught_by` and `rule` from what the kill table measured, and
says why for the ones no scenario catches.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Iterator, Mapping
from datetime import timedelta
from typing import Any

# Defined before the catalogue is imported: tests/mutants/faults.py imports this module at its
# end, and when this module is imported first that import finds HELD_OUT already here (and
# `_register` then fills MUTANTS directly), so either import order gives the whole catalogue.
HELD_OUT: dict[str, Mutant] = {}  # the annotation is not evaluated (PEP 563): Mutant is imported below

from reference_scheduler.core import pipeline_graph, tekton_pods  # noqa: E402
from reference_scheduler.core.claims import ClaimState, GroupClaim
from reference_scheduler.core.headroom import ActiveReservation, NodeView
from reference_scheduler.core.json_path import value_at
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import node_allocatable, node_selector_matches, tolerates
from reference_scheduler.core.pipeline_graph import PipelineGraph, matrix_fan_out
from reference_scheduler.core.pod_requests import pod_effective_request
from reference_scheduler.core.release import ReleaseDecision, parse_go_duration
from reference_scheduler.core.resources import ZERO, InvalidQuantity, Resources, milli_units, total
from reference_scheduler.core.volume_binding import is_bound, pod_claim_names, selected_node
from reference_scheduler.core.volume_provisioning import BOUND, ProvisionCheck, ProvisionState, provisioning_check
from reference_scheduler.runtime.informer import Informer, key_of
from reference_scheduler.runtime.records import now_rfc3339, with_claim

from .faults import MUTANTS, Mutant  # noqa: E402

Obj = dict[str, Any]
Json = Mapping[str, Any]

PENDING = "held-out batch: not yet run"


def _replace(owner: object, name: str, new: object) -> Any:
    """_replace sets owner.name to new and returns what was there; a name the reference lacks is an error, not a no-op."""
    if not hasattr(owner, name):
        raise AttributeError(f"{owner!r} has no attribute {name!r} to patch: the reference changed under this fault")
    original = getattr(owner, name)
    setattr(owner, name, new)
    return original


def _register(name: str, fault: str, apply: Callable[[], None]) -> None:
    key = f"held_{name}"
    if key in HELD_OUT or key in MUTANTS:
        raise ValueError(f"mutant {key} is registered twice")
    HELD_OUT[key] = MUTANTS[key] = Mutant(key, fault, "", apply, rule="", pending=PENDING)


# ============================================================================
# Headroom arithmetic (docs/contract.md section 7, Headroom)
# ============================================================================

# --- held_capacity_for_allocatable ------------------------------------------


def room_from_capacity(node: Json) -> Resources:
    """room_from_capacity: a node's room read from `status.capacity`, allocatable only when no capacity is reported.

    The fault: the room the kubelet keeps back (system-reserved, kube-reserved,
    the eviction threshold) is handed to pods; section 7 says allocatable, never capacity.
    """
    capacity = value_at(node, "status", "capacity")
    if isinstance(capacity, Mapping) and capacity:
        try:
            return Resources.from_mapping(capacity)
        except InvalidQuantity:
            return Resources()
    return node_allocatable(node)


def apply_capacity_for_allocatable() -> None:
    from reference_scheduler.runtime import cluster_view

    _replace(cluster_view, "node_allocatable", room_from_capacity)


_register(
    "capacity_for_allocatable",
    "a node's room is its status.capacity (allocatable only when capacity is absent): system-reserved room is given to pods",
    apply_capacity_for_allocatable,
)


# --- held_own_run_groups_hold_nothing ---------------------------------------


def reserved_by_other_runs(node: NodeView, reservations: Collection[ActiveReservation], *, excluding: GroupKey | None) -> Resources:
    """reserved_by_other_runs: the residuals of the groups reserved on the node, skipping every group of `excluding`'s PipelineRun.

    The fault: section 7 subtracts every Reserved group H != G; this one takes
    "not G" to mean "not G's PipelineRun", so a run's second group opens its
    claim in the room its first group still holds on the node.
    """
    peaks: dict[GroupKey, Resources] = {}
    for reservation in reservations:
        if reservation.node == node.name:
            peaks[reservation.group] = peaks.get(reservation.group, ZERO).max(reservation.peak)
    held = ZERO
    for group, peak in peaks.items():
        if excluding is not None and (group.namespace, group.pipeline_run) == (excluding.namespace, excluding.pipeline_run):
            continue
        used = total(pod.request for pod in node.pods if pod.group == group)
        held = held + (peak - used).clamp_non_negative()
    return held


def apply_own_run_groups_hold_nothing() -> None:
    from reference_scheduler.core import headroom, scoring

    _replace(headroom, "foreign_reserved", reserved_by_other_runs)
    _replace(scoring, "foreign_reserved", reserved_by_other_runs)


_register(
    "own_run_groups_hold_nothing",
    "headroom for a group leaves out the residuals of every group of its own PipelineRun, not only its own group's",
    apply_own_run_groups_hold_nothing,
)


# --- held_failed_pods_hold_room ----------------------------------------------


def finished_only_when_succeeded(pod: Json) -> bool:
    """finished_only_when_succeeded: only a `Succeeded` pod is finished; a `Failed` one still counts on its node.

    The fault: section 7 frees a pod whose phase is Succeeded or Failed; a failed
    attempt's pod (the retry gap, a crashed plain pod) keeps holding its request.
    """
    return (pod.get("status") or {}).get("phase") == "Succeeded"


def apply_failed_pods_hold_room() -> None:
    from reference_scheduler.runtime import cluster_view, requeue, scheduler

    for module in (cluster_view, requeue, scheduler):
        _replace(module, "is_terminal", finished_only_when_succeeded)


_register(
    "failed_pods_hold_room",
    "a Failed pod is not taken as finished: it keeps counting its request on its node until it is deleted",
    apply_failed_pods_hold_room,
)


# ============================================================================
# Effective pod requests (sections 6 and 6.1, and 7: which pods count, and how much)
# ============================================================================

# --- held_native_sidecars_as_init --------------------------------------------


def sidecars_taken_for_init(pod_spec: Mapping[str, Any]) -> Resources:
    """sidecars_taken_for_init: PodRequests with every init container a plain one, `restartPolicy: Always` ignored.

    The fault: a native sidecar keeps running beside the containers, so
    PodRequests adds it to them; taken for an ordinary init container only the
    largest init container counts, and a pod with a native sidecar is undercounted.
    """
    init = [
        {key: value for key, value in container.items() if key != "restartPolicy"} if isinstance(container, Mapping) else container
        for container in pod_spec.get("initContainers") or ()
    ]
    return pod_effective_request({**pod_spec, "initContainers": init})


def apply_native_sidecars_as_init() -> None:
    from reference_scheduler.core import pod_requests

    _replace(pod_requests, "pod_effective_request", sidecars_taken_for_init)
    _replace(tekton_pods, "pod_effective_request", sidecars_taken_for_init)


_register(
    "native_sidecars_as_init",
    "a native sidecar (init container with restartPolicy Always) counts as a plain init container: max, not added to the containers",
    apply_native_sidecars_as_init,
)


# --- held_step_template_replaced_whole -----------------------------------------


def merge_replacing_maps(template: dict[str, dict[str, Any]], override: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """merge_replacing_maps: a step's `requests` (or `limits`) map replaces the template's whole, instead of key by key.

    The fault: section 6.1 step 1 merges `stepTemplate.computeResources` key by
    key; a step asking only for CPU loses the template's memory request (the
    same mistake in stepSpecs and sidecarSpecs overrides).
    """
    result: dict[str, dict[str, Any]] = {}
    for field in ("requests", "limits"):
        chosen = override.get(field) or template.get(field)
        if chosen:
            result[field] = dict(chosen)
    return result


def apply_step_template_replaced_whole() -> None:
    _replace(tekton_pods, "_merge", merge_replacing_maps)


_register(
    "step_template_replaced_whole",
    "a step's computeResources requests replace the stepTemplate's whole map, not key by key: a template-only key is lost",
    apply_step_template_replaced_whole,
)


# --- held_task_level_share_rounds_up ------------------------------------------


def divided_rounding_up(amounts: dict[str, Any] | None, parts: int, where: str) -> dict[str, Any] | None:
    """divided_rounding_up: task-level computeResources shared over the steps, each share rounded UP.

    The fault: Tekton's integer division rounds down (1 CPU over 3 steps is
    333m each, 999m for the pod); rounding up predicts 334m each, 1002m.
    """
    if not amounts or parts <= 0:
        return None
    result: dict[str, Any] = {}
    for name, value in amounts.items():
        if name in tekton_pods._WHOLE_UNIT_SHARES:
            result[name] = str(-(-tekton_pods._amount(name, value, where) // parts))
        else:
            result[name] = f"{-(-milli_units(value, name) // parts)}m"
    return result


def apply_task_level_share_rounds_up() -> None:
    _replace(tekton_pods, "_divided", divided_rounding_up)


_register(
    "task_level_share_rounds_up",
    "task-level computeResources divided over the steps round up, not down: 1 CPU over 3 steps predicts 1002m, not 999m",
    apply_task_level_share_rounds_up,
)


# --- held_limit_range_spares_tekton_init ---------------------------------------

_reference_api_defaults = tekton_pods._apply_api_defaults


def api_defaults_sparing_tekton_init(container: dict[str, Any], items: list[dict[str, dict[str, Any]]]) -> None:
    """api_defaults_sparing_tekton_init: the LimitRanger's defaultRequest given to steps and sidecars, not to Tekton's init containers.

    The fault: section 6.1 step 6 gives every container still without a request
    the whole defaultRequest, `prepare` and `place-scripts` included; taking
    Tekton's init containers for resource-free predicts too little whenever the
    defaultRequest is larger than the steps' sum.
    """
    _reference_api_defaults(container, [] if container.get("name") in tekton_pods.TEKTON_INIT_CONTAINERS else items)


def apply_limit_range_spares_tekton_init() -> None:
    _replace(tekton_pods, "_apply_api_defaults", api_defaults_sparing_tekton_init)


_register(
    "limit_range_spares_tekton_init",
    "the prediction gives the LimitRange's defaultRequest to steps and sidecars only: Tekton's init containers stay at zero",
    apply_limit_range_spares_tekton_init,
)


# ============================================================================
# Peak computation (section 6)
# ============================================================================

# --- held_finally_in_sequence --------------------------------------------------


def finally_in_sequence(graph: PipelineGraph) -> PipelineGraph:
    """finally_in_sequence: the graph with each finally task after the finally tasks before it (by name), as if they ran one by one.

    The fault: Tekton starts every finally task at once once the DAG is done,
    so they add up among themselves (section 6); chained, two finally tasks of
    a group count only the larger.
    """
    finals = [name for name in graph.order if graph.nodes[name].is_finally]
    nodes = []
    for node in graph:
        if node.is_finally:
            earlier = finals[: finals.index(node.name)]
            node = dataclasses.replace(node, depends_on=node.depends_on | frozenset(earlier))
        nodes.append(node)
    return PipelineGraph(nodes)


def apply_finally_in_sequence() -> None:
    from reference_scheduler.runtime import planner

    original: Callable[..., PipelineGraph] = getattr(planner, "build_pipeline_graph")

    @functools.wraps(original)
    def build(*args: Any, **kwargs: Any) -> PipelineGraph:
        return finally_in_sequence(original(*args, **kwargs))

    _replace(planner, "build_pipeline_graph", build)


_register(
    "finally_in_sequence",
    "finally tasks are taken to run one after another: a group's peak counts the largest finally task, not their sum",
    apply_finally_in_sequence,
)


# --- held_matrix_include_always_new ------------------------------------------------


def fan_out_counting_every_include(matrix: Mapping[str, Any] | None, params: Mapping[str, object] | None = None) -> int | None:
    """fan_out_counting_every_include: the product of the matrix params, plus one combination per `include` entry.

    The fault: Matrix.FanOut adds an include entry as a new combination only
    when no combination shares any of its values; otherwise it only adds its
    params to those it agrees with. x in [a, b] with includes {x: a} and
    {x: c} is 3 TaskRuns, not 4.
    """
    found = matrix_fan_out(matrix, params)
    if not matrix or found is None:
        return found
    includes = [i for i in matrix.get("include") or () if isinstance(i, Mapping)]
    if not matrix.get("params") or not includes:
        return found
    product = matrix_fan_out({"params": matrix.get("params")}, params)
    return None if product is None else product + len(includes)


def apply_matrix_include_always_new() -> None:
    _replace(pipeline_graph, "matrix_fan_out", fan_out_counting_every_include)


_register(
    "matrix_include_always_new",
    "every matrix include entry adds a combination, even one that only extends existing combinations: the peak is too high",
    apply_matrix_include_always_new,
)


# --- held_result_deps_from_params_only ----------------------------------------------


def dependency_strings_of_params(task: Mapping[str, Any]) -> Iterator[str]:
    """dependency_strings_of_params: where a task's result references order it, read from its params and matrix only.

    The fault: section 6 orders a task after one whose results it uses in
    `when` expressions or in its embedded taskSpec's steps and sidecars too;
    without those, two tasks ordered by a `when` look concurrent and the peak
    adds them.
    """
    matrix = pipeline_graph._mapping(task.get("matrix"))
    for param in (*pipeline_graph._list(task.get("params")), *pipeline_graph._list(matrix.get("params"))):
        yield from pipeline_graph._strings(param.get("value"))
    for include in pipeline_graph._list(matrix.get("include")):
        for param in pipeline_graph._list(include.get("params")):
            yield from pipeline_graph._strings(param.get("value"))


def apply_result_deps_from_params_only() -> None:
    _replace(pipeline_graph, "_dependency_strings", dependency_strings_of_params)


_register(
    "result_deps_from_params_only",
    "result references order tasks only from params and matrix: a $(tasks.X.results.r) in when or in steps adds no order",
    apply_result_deps_from_params_only,
)


# ============================================================================
# Grouping by workspace (section 4)
# ============================================================================

# --- held_empty_dir_co_locates -----------------------------------------------------------

CO_LOCATING_WITH_EMPTY_DIR = ("persistentVolumeClaim", "volumeClaimTemplate", "emptyDir")


def co_locating_with_empty_dir(pipeline_run_spec: Mapping[str, Any]) -> frozenset[str]:
    """co_locating_with_empty_dir: the run's workspaces bound to a PVC, a volumeClaimTemplate, or an emptyDir.

    The fault: an emptyDir is a volume on the node, but each pod gets its own;
    section 4 says it ties no task to a node. Tasks sharing only an emptyDir
    workspace are grouped and reserved, when they should be plain pods.
    """
    names = set()
    for binding in pipeline_run_spec.get("workspaces") or ():
        if not isinstance(binding, Mapping) or not binding.get("name"):
            continue
        if any(binding.get(kind) is not None for kind in CO_LOCATING_WITH_EMPTY_DIR):
            names.add(str(binding["name"]))
    return frozenset(names)


def apply_empty_dir_co_locates() -> None:
    from reference_scheduler.runtime import planner

    _replace(planner, "co_locating_workspaces", co_locating_with_empty_dir)


_register(
    "empty_dir_co_locates",
    "a workspace bound to an emptyDir is taken as co-locating: tasks sharing only it become a reserved group",
    apply_empty_dir_co_locates,
)


# --- held_implicit_workspaces_in_scripts_only -------------------------------------------


def workspaces_named_in_scripts(task_spec: Mapping[str, Any]) -> set[str]:
    """workspaces_named_in_scripts: the workspaces an embedded taskSpec uses without binding, found in scripts only.

    The fault: Tekton propagates a workspace named in a step's script, args,
    command, workingDir, env values or params (and the sidecars' and the
    stepTemplate's); reading only scripts misses `$(workspaces.source.path)` in
    an env value (the contract's worked example), and that task is left out of
    its group.
    """
    used = set()
    for container in (*pipeline_graph._list(task_spec.get("steps")), *pipeline_graph._list(task_spec.get("sidecars"))):
        for text in pipeline_graph._strings(container.get("script")):
            for match in pipeline_graph._WORKSPACE_USE.finditer(text):
                used.add(next(group for group in match.groups() if group))
    return used


def apply_implicit_workspaces_in_scripts_only() -> None:
    _replace(pipeline_graph, "_propagated_workspaces", workspaces_named_in_scripts)


_register(
    "implicit_workspaces_in_scripts_only",
    "an implicitly used workspace is found only in step and sidecar scripts: one named in env, args or workingDir groups nothing",
    apply_implicit_workspaces_in_scripts_only,
)


# ============================================================================
# Release rules (section 8)
# ============================================================================

Decide = Callable[..., ReleaseDecision]

# --- held_skipped_tasks_hold ------------------------------------------------------


def without_skipped_tasks(pipeline_run: Json | None) -> Json | None:
    """without_skipped_tasks: the PipelineRun as read by a releaser that never looks at `status.skippedTasks`."""
    if pipeline_run is None:
        return None
    status = pipeline_run.get("status")
    if not isinstance(status, Mapping) or "skippedTasks" not in status:
        return pipeline_run
    return {**pipeline_run, "status": {key: value for key, value in status.items() if key != "skippedTasks"}}


def deciding_without_skipped(decide: Decide) -> Decide:
    """deciding_without_skipped: release_decision blind to skipped tasks.

    The fault: a task skipped by its `when` expressions (or not started after a
    failure) has no TaskRun, so it looks "not started" and holds its group
    until the whole PipelineRun ends; section 8 counts it done.
    """

    def decided(group_tasks: Collection[str], pipeline_run: Json | None, task_runs: Mapping[str, Json], *, now: Any = None) -> ReleaseDecision:
        return decide(group_tasks, without_skipped_tasks(pipeline_run), task_runs, now=now)

    return decided


def apply_skipped_tasks_hold() -> None:
    from reference_scheduler.runtime import releaser

    _replace(releaser, "release_decision", deciding_without_skipped(getattr(releaser, "release_decision")))


_register(
    "skipped_tasks_hold",
    "a skipped task (status.skippedTasks) is not done: its group stays Reserved until the PipelineRun ends",
    apply_skipped_tasks_hold,
)


# --- held_zero_timeout_expires -------------------------------------------------------------


def timeout_zero_included(pipeline_run: Json, field: str) -> timedelta | None:
    """timeout_zero_included: `spec.timeouts.<field>` as a duration, "0s" included.

    The fault: section 8 says "0s" means no timeout; read as zero, a run with
    `timeouts.pipeline: 0s` is "past its timeout" as soon as it starts, and its
    groups are released as PipelineRunTimedOut while their tasks run.
    """
    raw = value_at(pipeline_run, "spec", "timeouts", field)
    duration = parse_go_duration(raw) if isinstance(raw, str) else None
    return duration if duration is not None and duration >= timedelta(0) else None


def apply_zero_timeout_expires() -> None:
    from reference_scheduler.core import release

    _replace(release, "_timeout", timeout_zero_included)


_register(
    "zero_timeout_expires",
    'timeouts.pipeline "0s" is read as a zero timeout, not as none: the run\'s groups are released as timed out once it starts',
    apply_zero_timeout_expires,
)


# ============================================================================
# The record: fields and transitions (sections 3, 5 and 9)
# ============================================================================

# --- held_release_drops_holders ---------------------------------------------------------


def release_dropping_holders(claim: GroupClaim) -> GroupClaim:
    """release_dropping_holders: Released, with the holders emptied as if nobody held the group any more.

    The fault: section 3 keeps `holders` (and `node`, `reservedAt`) when a
    group is Released; they are the record of who ran under the claim.
    """
    if claim.state is ClaimState.RELEASED:
        return claim
    return dataclasses.replace(claim, state=ClaimState.RELEASED, holders=frozenset())


def apply_release_drops_holders() -> None:
    from reference_scheduler.runtime import releaser

    _replace(releaser, "release", release_dropping_holders)


_register(
    "release_drops_holders",
    "a release empties status.groups[].holders; the contract keeps them (and node, reservedAt) on a Released group",
    apply_release_drops_holders,
)


# --- held_join_restamps_reserved_at ----------------------------------------------------------


def with_claim_restamped(entry: Obj, claim: GroupClaim) -> Obj:
    """with_claim_restamped: the status entry for the claim, with `reservedAt` set to now on every write while Reserved.

    The fault: `reservedAt` is when the current claim was made; a join (or a
    holder's rollback) changes only `holders`. Restamping it on each join
    moves the claim's time forward.
    """
    updated = with_claim(entry, claim)
    if claim.state is ClaimState.RESERVED:
        updated["reservedAt"] = now_rfc3339()
    return updated


def apply_join_restamps_reserved_at() -> None:
    from reference_scheduler.runtime import cycle, records, releaser

    for module in (records, cycle, releaser):
        _replace(module, "with_claim", with_claim_restamped)


_register(
    "join_restamps_reserved_at",
    "reservedAt is rewritten on every status write of a Reserved group, a join included, not only when the claim is made",
    apply_join_restamps_reserved_at,
)


# --- held_active_label_while_pending ------------------------------------------------------------


def active_unless_all_released(entries: list[Obj]) -> str | None:
    """active_unless_all_released: the active label "true" while any group is not Released (Pending counts).

    The fault: section 9 labels a record active while any group is Reserved;
    a record whose groups are Pending (rolled back, never claimed, or waiting
    beside a Released group) holds nothing and must not be labelled.
    """
    return "true" if any(entry.get("state") != ClaimState.RELEASED.value for entry in entries) else None


def apply_active_label_while_pending() -> None:
    from reference_scheduler.runtime import records

    _replace(records, "_active_value", active_unless_all_released)


_register(
    "active_label_while_pending",
    'rescon.dev/active is "true" while any group is not Released, Pending ones included, instead of while any is Reserved',
    apply_active_label_while_pending,
)


# ============================================================================
# Rollback of a claim on a failed bind (section 7, rule 4)
# ============================================================================

# --- held_rollback_keeps_reserved ------------------------------------------------------------------


def unreserve_keeping_claim(claim: GroupClaim, pod_uid: str, generation_seen: int) -> GroupClaim:
    """unreserve_keeping_claim: a failed bind takes its pod out of `holders`, and the claim stays Reserved even with none left.

    The fault: rule 4 sends a claim with no holder left (and the generation the
    pod saw) back to Pending; kept Reserved with no holder, it holds its peak
    on a node where no pod of the group ever ran.
    """
    if claim.state is not ClaimState.RESERVED or pod_uid not in claim.holders:
        return claim
    return dataclasses.replace(claim, holders=claim.holders - {pod_uid})


def apply_rollback_keeps_reserved() -> None:
    from reference_scheduler.runtime import cycle

    _replace(cycle, "unreserve", unreserve_keeping_claim)


_register(
    "rollback_keeps_reserved",
    "a failed bind removes its pod from holders but never sets the group back to Pending, even when no holder is left",
    apply_rollback_keeps_reserved,
)


# ============================================================================
# Restart and recovery (section 5, "The record is the state")
# ============================================================================

# --- held_relist_forgets_deletions -------------------------------------------------------------------

Key = tuple[str, str]


def relist_events_without_deletions(old: Mapping[Key, Obj], fresh: Mapping[Key, Obj]) -> list[tuple[str, Obj, Obj | None]]:
    """relist_events_without_deletions: what a relist replays to the handlers, ADDED and MODIFIED only, never DELETED.

    The fault: after a watch breaks (the API server or etcd restarts, a 410),
    the cache is listed again; the objects deleted meanwhile leave the cache but
    no handler hears of it, so the accounting built from the events keeps
    counting deleted pods and deleted records on their nodes.
    """
    events: list[tuple[str, Obj, Obj | None]] = []
    for key, obj in fresh.items():
        before = old.get(key)
        if before is None:
            events.append(("ADDED", obj, None))
        elif (before.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get("resourceVersion"):
            events.append(("MODIFIED", obj, before))
    return events


def relist_forgetting_deletions(self: Informer) -> str:
    """relist_forgetting_deletions: Informer._relist, replaying relist_events_without_deletions instead of every difference."""
    listing = self._list_raw()
    fresh = {key_of(o): o for o in listing.get("items") or []}
    kind = (listing.get("kind") or "").removesuffix("List")
    api_version = listing.get("apiVersion")
    for obj in fresh.values():
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", api_version)
    with self._lock:
        old = self._store
        self._store = fresh
    for event, obj, before in relist_events_without_deletions(old, fresh):
        self._emit(event, obj, before)
    self._synced.set()
    return str((listing.get("metadata") or {}).get("resourceVersion") or "")


def apply_relist_forgets_deletions() -> None:
    _replace(Informer, "_relist", relist_forgetting_deletions)


_register(
    "relist_forgets_deletions",
    "a relist after a broken watch replays additions and changes but no deletions: pods and records deleted meanwhile still count",
    apply_relist_forgets_deletions,
)


# ============================================================================
# Node checks (sections 7 and 10)
# ============================================================================

# --- held_toleration_ignores_effect ---------------------------------------------------------------


def tolerates_any_effect(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """tolerates_any_effect: a toleration matched by key, operator and value alone, its `effect` ignored.

    The fault: a toleration naming an effect tolerates only that effect; one
    for `NoExecute` lets the pod onto a node tainted `NoSchedule` with the same key.
    """
    return tolerates({key: value for key, value in toleration.items() if key != "effect"}, taint)


def apply_toleration_ignores_effect() -> None:
    from reference_scheduler.core import node_checks

    _replace(node_checks, "tolerates", tolerates_any_effect)


_register(
    "toleration_ignores_effect",
    "a toleration matches a taint whatever the taint's effect: a NoExecute toleration admits a NoSchedule taint of that key",
    apply_toleration_ignores_effect,
)


# --- held_not_ready_node_is_lost ----------------------------------------------------------------------


def looks_lost(node: Json) -> bool:
    """looks_lost: a node whose Ready condition is reported and is not True is taken for a lost one.

    The fault: section 10 drops a claim only when the Node object is deleted;
    a NotReady (or unreachable) node keeps its claims, and the group's next pod
    waits for it. Taking it for lost sends the group back to Pending and its
    next pod to another node, away from its volume.
    """
    for condition in value_at(node, "status", "conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("status") != "True"
    return False


class _ReadyNodesOnly:
    """_ReadyNodesOnly is the releaser's node cache with the NotReady nodes hidden, as if deleted."""

    def __init__(self, nodes: Any) -> None:
        self._nodes = nodes

    def get(self, namespace: str, name: str) -> Obj | None:
        node: Obj | None = self._nodes.get(namespace, name)
        return None if node is None or looks_lost(node) else node

    def __getattr__(self, name: str) -> Any:
        return getattr(self._nodes, name)


def apply_not_ready_node_is_lost() -> None:
    from reference_scheduler.runtime.releaser import Releaser

    original_init = Releaser.__init__

    @functools.wraps(original_init)
    def init(self: Releaser, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self._nodes = _ReadyNodesOnly(self._nodes)  # type: ignore[assignment]

    _replace(Releaser, "__init__", init)


_register(
    "not_ready_node_is_lost",
    "a node whose Ready condition is not True is taken as deleted: its groups' claims go back to Pending",
    apply_not_ready_node_is_lost,
)


# ============================================================================
# Volumes (section 7, Volumes: V1 to V3)
# ============================================================================

# --- held_group_volumes_ignored_on_open ------------------------------------------------------------------


def pod_claims_only(pod: Json, pipeline_run: Json | None, workspaces: Collection[str]) -> tuple[str, ...]:
    """pod_claims_only: the claims a group's first pod is held to, its own only.

    The fault: V3 holds the pod that opens its group's claim to every claim of
    the group, a later task's PVC workspace included; with its own claims only,
    the claim may open on a node where that later task's pinned volume can
    never be mounted.
    """
    return pod_claim_names(pod)


def apply_group_volumes_ignored_on_open() -> None:
    from reference_scheduler.core import volume_binding

    _replace(volume_binding, "group_claim_names", pod_claims_only)


_register(
    "group_volumes_ignored_on_open",
    "the pod that opens a group's claim is held to its own claims only, not to the PVCs of its group's later tasks (V3)",
    apply_group_volumes_ignored_on_open,
)


# --- held_volume_affinity_sees_node_name ---------------------------------------------------------------


def pv_admits_named_node(volume: Json, node: Json) -> bool:
    """pv_admits_named_node: a volume's `nodeAffinity.required` matched against the whole node, its name included.

    The fault: kube-scheduler and the kubelet match it against the node's
    labels alone, so a `matchFields` term on `metadata.name` meets an empty
    name: `metadata.name In [n2]` admits no node, `NotIn [n2]` every node.
    """
    required = value_at(volume, "spec", "nodeAffinity", "required")
    if not isinstance(required, Mapping):
        return True
    return node_selector_matches(required, node)


def apply_volume_affinity_sees_node_name() -> None:
    from reference_scheduler.core import volume_binding

    _replace(volume_binding, "pv_admits_node", pv_admits_named_node)


_register(
    "volume_affinity_sees_node_name",
    "a PersistentVolume's node affinity is matched against the whole node: matchFields on metadata.name meets the node's name",
    apply_volume_affinity_sees_node_name,
)


# --- held_selected_claim_counts_as_bound ---------------------------------------------------------------


def provisioning_trusting_selection(
    claim_name: str, claim: Json | None, volume: Json | None, node: Json | None, node_name: str, *, fresh: bool = True
) -> ProvisionCheck:
    """provisioning_trusting_selection: a delayed claim that selects the node is ready for the bind, Bound or not.

    The fault: V2 binds the pod only once each of its WaitForFirstConsumer
    claims is Bound to a volume that admits the node; trusting the
    selected-node annotation binds it while the provisioner is still at work.
    """
    check = provisioning_check(claim_name, claim, volume, node, node_name, fresh=fresh)
    if check.state is ProvisionState.WAITING and claim is not None and node is not None and not is_bound(claim) and selected_node(claim) == node_name:
        return BOUND
    return check


def apply_selected_claim_counts_as_bound() -> None:
    from reference_scheduler.runtime import volume_binder

    _replace(volume_binder, "provisioning_check", provisioning_trusting_selection)


_register(
    "selected_claim_counts_as_bound",
    "a WaitForFirstConsumer claim annotated with the chosen node counts as ready: the pod is bound before the claim is Bound",
    apply_selected_claim_counts_as_bound,
)


# The wrong rules that are pure functions, by mutant, for the unit tests (and readers).
PURE_FAULTS: dict[str, Callable[..., Any]] = {
    "held_capacity_for_allocatable": room_from_capacity,
    "held_own_run_groups_hold_nothing": reserved_by_other_runs,
    "held_failed_pods_hold_room": finished_only_when_succeeded,
    "held_native_sidecars_as_init": sidecars_taken_for_init,
    "held_step_template_replaced_whole": merge_replacing_maps,
    "held_task_level_share_rounds_up": divided_rounding_up,
    "held_limit_range_spares_tekton_init": api_defaults_sparing_tekton_init,
    "held_finally_in_sequence": finally_in_sequence,
    "held_matrix_include_always_new": fan_out_counting_every_include,
    "held_result_deps_from_params_only": dependency_strings_of_params,
    "held_empty_dir_co_locates": co_locating_with_empty_dir,
    "held_implicit_workspaces_in_scripts_only": workspaces_named_in_scripts,
    "held_skipped_tasks_hold": without_skipped_tasks,
    "held_zero_timeout_expires": timeout_zero_included,
    "held_release_drops_holders": release_dropping_holders,
    "held_join_restamps_reserved_at": with_claim_restamped,
    "held_active_label_while_pending": active_unless_all_released,
    "held_rollback_keeps_reserved": unreserve_keeping_claim,
    "held_relist_forgets_deletions": relist_events_without_deletions,
    "held_toleration_ignores_effect": tolerates_any_effect,
    "held_not_ready_node_is_lost": looks_lost,
    "held_group_volumes_ignored_on_open": pod_claims_only,
    "held_volume_affinity_sees_node_name": pv_admits_named_node,
    "held_selected_claim_counts_as_bound": provisioning_trusting_selection,
}



# What the kill table measured (docs/mutants.md, "The held-out batch"): name -> (caught_by, rule, pending).
# A fault the default-feature run caught names the scenario that failed, alone, again; a survivor names
# the scenario added after the measurement that now catches it (the batch's kill rate is the
# measurement's, not this table's), or says why none does.
MEASURED: dict[str, tuple[str, str, str]] = {
    "held_capacity_for_allocatable": ("allocatable_not_capacity", "7.allocatable", ""),
    "held_own_run_groups_hold_nothing": ("own_run_two_groups", "7.residual", ""),
    "held_failed_pods_hold_room": ("finished_pods_free_room", "7.finished_pods", ""),
    "held_native_sidecars_as_init": ("foreign_pod_shapes", "7.pod_request", ""),
    "held_step_template_replaced_whole": ("step_template", "6.request", ""),
    "held_task_level_share_rounds_up": ("task_compute_resources", "6.request", ""),
    "held_limit_range_spares_tekton_init": ("limit_range", "6.request", ""),
    "held_finally_in_sequence": ("finally_in_group", "6.concurrent_sum", ""),
    "held_matrix_include_always_new": ("fan_out_include", "6.matrix", ""),
    "held_result_deps_from_params_only": ("result_dependency", "6.results", ""),
    "held_empty_dir_co_locates": ("pipeline_ref", "4.co_locating", ""),
    "held_implicit_workspaces_in_scripts_only": ("colocation", "3.workspaces", ""),
    "held_skipped_tasks_hold": ("skipped_task_releases", "8.tasks_done", ""),
    "held_zero_timeout_expires": ("peak_blocks_b", "8.timeout", ""),
    "held_release_drops_holders": ("peak_blocks_b", "5.transitions", ""),
    "held_join_restamps_reserved_at": ("peak_blocks_b", "5.transitions", ""),
    "held_active_label_while_pending": ("own_run_two_groups", "9.label", ""),
    "held_rollback_keeps_reserved": ("provisioning_refused_rolls_back", "7.rollback", ""),
    "held_relist_forgets_deletions": (
        "", "5.record_is_state",
        "a scenario that deletes a pod or a record while the scheduler's watches are broken (only the opt-in Resilience "
        "scenarios break them, and none deletes anything meanwhile)",
    ),
    "held_toleration_ignores_effect": ("node_checks", "7.node_checks", ""),
    "held_not_ready_node_is_lost": (
        "", "10.only_deletion",
        "the opt-in Resilience feature: only not_ready_keeps_claim holds a claim on a NotReady node",
    ),
    "held_group_volumes_ignored_on_open": ("later_task_pinned_volume", "7.volume_group", ""),
    "held_volume_affinity_sees_node_name": (
        "", "7.volume_affinity",
        "a volume whose nodeAffinity has a matchFields term: no provisioner writes one, and kube-scheduler lets such a "
        "volume admit no node, so no scenario has one",
    ),
    "held_selected_claim_counts_as_bound": ("provisioning_refused_rolls_back", "7.volume_provisioning", ""),
}

for _name, (_caught_by, _rule, _pending) in MEASURED.items():
    HELD_OUT[_name] = MUTANTS[_name] = dataclasses.replace(HELD_OUT[_name], caught_by=_caught_by, rule=_rule, pending=_pending)
