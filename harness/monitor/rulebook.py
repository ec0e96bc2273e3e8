"""rulebook: which of the contract's rules are asked at which moment, shared by the suite's monitor and `rescon audit`.

harness.monitor.invariants holds each rule as a pure function; this module
groups them by the moment they are asked, so that the scenario monitor
(harness.monitor.watcher) and the live auditor (harness.audit) ask the same
rules with the same arguments and name them the same:

- after any change of pods, nodes or records: `state_findings`;
- when a record and its PipelineRun are both known: `run_findings`;
- when a record's label has disagreed with its status for too long: `label_diverged`;
- when a group goes Released: `untrue_releases`, given a way to learn which reasons were true;
- while a group is Reserved after its release was seen due (harness.monitor.release_due): `late_release`,
  once a fresh read of the record shows it still Reserved past `release_late`;
- when a pod of the judged scheduler is first seen bound: `bind_volume_findings`, and, with records,
  `group_volume_findings` for its group; when a group is first seen Reserved: `group_volume_findings`,
  each on the claims, volumes and record read just after (harness.monitor.volume_reads).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from harness.contract import record as contract
from harness.monitor import invariants as rules
from harness.monitor.release_due import Late

Obj = Mapping[str, Any]


def state_findings(
    world: rules.World, *, with_reservations: bool, nodes: Iterable[str] | None, judged: rules.World | None = None
) -> list[rules.Finding]:
    """state_findings() is every placement rule (room on `nodes`, groups kept together) and, with records, the claim rules.

    Room is judged on `world`, every pod and record on the node; groups and
    claims on `judged` (default: `world`), the PipelineRuns and records of the
    scheduler being judged, which the auditor narrows on a shared cluster.
    """
    judged = world if judged is None else judged
    found = rules.overcommitted(world, with_reservations=with_reservations, nodes=nodes) + rules.split_groups(judged)
    return found + (rules.claim_placement(judged) if with_reservations else [])


def run_findings(
    record: contract.Record, record_created: str, pipeline_run: Obj, scheduler_name: str | None, pods: Iterable[Obj] = ()
) -> list[rules.Finding]:
    """run_findings() is what a record says wrongly about its PipelineRun: another uid, or no schedulerName of the one serving it.

    groups-differ is asked apart (`rules.groups_differ`): the monitor asks it
    once per record, since a record's groups never change (spec-changed).
    """
    wrong_run = rules.record_names_wrong_run(record, record_created, pipeline_run)
    unmarked = rules.scheduler_name_missing(record, pipeline_run, scheduler_name, pods) if scheduler_name else None
    return [f for f in (wrong_run, unmarked) if f is not None]


def label_diverged(record: contract.Record | None, key: tuple[str, str], *, seconds: float, limit: float) -> rules.Finding:
    """label_diverged() is the active-label-diverged finding of a record whose label has disagreed for `seconds` (> `limit`)."""
    active = record.is_active if record else False
    label = "true" if record and record.active_label else "absent"
    return rules.Finding(
        rules.ACTIVE_LABEL_DIVERGED,
        f"record {key[0]}/{key[1]} has had label {contract.ACTIVE_LABEL}={label} "
        f"while {'some' if active else 'no'} group is Reserved for {seconds:.1f}s (label_converges {limit:g}s)",
        (f"record {key[0]}/{key[1]}",),
    )


def newly_released(before: contract.Record | None, after: contract.Record) -> list[tuple[contract.GroupSpec, contract.GroupStatus]]:
    """newly_released() is each group that went to Released between two states of a record, with its new status."""
    if before is None:
        return []
    old = {s.name: s for s in before.statuses}
    found = []
    for group, status in zip(after.groups, after.statuses):
        previous = old.get(status.name)
        if status.state is not contract.State.RELEASED or previous is None or previous.state is contract.State.RELEASED:
            continue
        if status.release_reason is None:
            continue  # Record.from_json already refuses a Released group without a reason
        found.append((group, status))
    return found


def untrue_releases(
    before: contract.Record | None,
    after: contract.Record,
    true_reasons_of: Callable[[contract.Record, tuple[str, ...]], set[contract.ReleaseReason]],
) -> list[rules.Finding]:
    """untrue_releases() finds groups just Released for a reason that was not true; `true_reasons_of` reads the API."""
    findings = []
    for group, status in newly_released(before, after):
        found = true_reasons_of(after, group.tasks)
        if status.release_reason not in found:
            assert status.release_reason is not None
            findings.append(rules.Finding(
                rules.RELEASE_REASON_UNTRUE,
                f"group {group.name} of record {after.key} was Released with releaseReason {status.release_reason.value}, "
                f"which was not true; true then: {sorted(r.value for r in found) or 'none (releasing was premature)'}",
                (f"record {after.key}",),
            ))
    return findings


def late_release(late: Late, *, now: float, limit: float) -> rules.Finding:
    """late_release() is the release-late finding of a group still Reserved `now` (the monitor's clock), `limit` after its release was seen due.

    Example: "group source of record ci/build-7x2 is still Reserved on n1 15.3s after the monitor first saw its
    release due (TasksDone) ...".
    """
    status = late.record.status_of(late.group)
    reasons = ", ".join(sorted(r.value for r in late.due.reasons))
    return rules.Finding(
        rules.RELEASE_LATE,
        f"group {late.group} of record {late.record.key} is still Reserved on {status.node} {now - late.due.since:.1f}s after the monitor "
        f"first saw its release due ({reasons}; release_late {limit:g}s): a group is Released promptly once a release condition holds "
        f"(docs/contract.md section 8)",
        (f"record {late.record.key}",),
    )


def still_reserved(late: Late, fresh: contract.Record | None) -> bool:
    """still_reserved() is True when `fresh`, the record read after the limit ran out, has the late group Reserved still (same run)."""
    if fresh is None or fresh.pipeline_run_uid != late.record.pipeline_run_uid:
        return False
    try:
        return fresh.status_of(late.group).state is contract.State.RESERVED
    except KeyError:
        return False


def bind_volume_findings(pod: Obj, node: Obj | None, claims: Mapping[str, Obj], volumes: Mapping[str, Obj]) -> list[rules.Finding]:
    """bind_volume_findings() is the placement rules of a bind seen: a Bound volume that excludes the node, a claim not Bound yet.

    `claims` (by name) and `volumes` (by name) were read after the bind was
    seen; a claim that is not Bound is reported as pod-bound-before-claim only.
    """
    return rules.pod_volume_node_conflict(pod, node, claims, volumes) + rules.pod_bound_before_claim(pod, claims)


def group_volume_findings(
    record: contract.Record, groups: Iterable[str], pipeline_run: Obj | None, pods: Iterable[Obj],
    nodes: Mapping[str, Obj], claims: Mapping[str, Obj], volumes: Mapping[str, Obj],
) -> list[rules.Finding]:
    """group_volume_findings() is group-volume-node-conflict for these groups of `record`, each judged on its Reserved node.

    `record` was read after `claims` and `volumes`; a group that is not
    Reserved in it, or whose node is not in `nodes`, is not judged.
    """
    known = {g.name for g in record.groups}
    pods = list(pods)
    found: list[rules.Finding] = []
    for group in groups:
        if group not in known:
            continue
        node = nodes.get(str(record.status_of(group).node or ""))
        found += rules.group_volume_node_conflict(record, group, pipeline_run, pods, node, claims, volumes)
    return found
