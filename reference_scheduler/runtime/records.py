"""ReservationRecord I/O: create a record, and change a group's status with compare-and-swap.

The record is the scheduler's only durable state (see docs/contract.md). Every
status change is read-modify-write against the record's resourceVersion: on a
409 the change is re-applied to the fresh record, which is safe because each
change is a pure function of the record it reads (core.claims).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone
from typing import Any, Callable, cast

import kubernetes
from kubernetes.client import ApiClient

from reference_scheduler.core.claims import ClaimState, GroupClaim
from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.runtime.kube_api import KubeApi

log = logging.getLogger("tkn-scheduler.records")

GROUP = "rescon.dev"
VERSION = "v1alpha1"
PLURAL = "reservationrecords"
KIND = "ReservationRecord"
ACTIVE_LABEL = "rescon.dev/active"
#: Names the schedulerName that created the record: several schedulers may share a cluster, and each
#: releases only its own records (one that released another's would hide that scheduler's faults).
SCHEDULER_ANNOTATION = "rescon.dev/scheduler-name"

#: How often a compare-and-swap is retried on 409 before the caller re-queues.
CAS_ATTEMPTS = 5

Obj = dict[str, Any]
#: A status change: (the group's current status entry) -> new entry, or None for "no change".
GroupChange = Callable[[Obj], Obj | None]


class RecordGone(Exception):
    """The record was deleted (by hand, or by garbage collection with its PipelineRun)."""


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def claim_of(entry: Obj) -> GroupClaim:
    """claim_of(status.groups[i]) reads the claim part of a group's status entry."""
    state = ClaimState(entry.get("state") or ClaimState.PENDING)
    node = entry.get("node") or None
    if state is not ClaimState.RESERVED:
        node = node if state is ClaimState.RELEASED else None
    return GroupClaim(
        state=state,
        node=node,
        holders=frozenset(entry.get("holders") or ()),
        claim_generation=int(entry.get("claimGeneration") or 0),
    )


def with_claim(entry: Obj, claim: GroupClaim) -> Obj:
    """with_claim() writes a claim back into a group's status entry, stamping transition times."""
    updated = dict(entry)
    before = entry.get("state")
    updated["state"] = claim.state.value
    updated["holders"] = sorted(claim.holders)
    updated["claimGeneration"] = claim.claim_generation
    if claim.node:
        updated["node"] = claim.node
    else:
        updated.pop("node", None)
    if claim.state is ClaimState.RESERVED and before != ClaimState.RESERVED.value:
        updated["reservedAt"] = now_rfc3339()
    if claim.state is ClaimState.PENDING:
        updated.pop("reservedAt", None)
        updated.pop("releaseReason", None)
    return updated


def spec_group_of_task(record: Obj, task: str) -> Obj | None:
    """spec_group_of_task(record, 'build') is the spec.groups entry holding that pipeline task, if any."""
    for group in (record.get("spec") or {}).get("groups") or []:
        if task in (group.get("tasks") or []):
            return dict(group)
    return None


def status_entry_of(record: Obj, group: str) -> Obj:
    """status_entry_of(record, 'g0') is that group's status.groups entry; {} (Pending, no claim) when absent."""
    return next((e for e in (record.get("status") or {}).get("groups") or [] if e.get("name") == group), {})


def status_entries_of(record: Obj) -> list[Obj]:
    """status_entries_of(record) is a copy of each status.groups entry (to change without touching the record)."""
    return [dict(e) for e in (record.get("status") or {}).get("groups") or []]


def created_by(record: Obj) -> str | None:
    """created_by(record) is the schedulerName that created it (SCHEDULER_ANNOTATION), None if unmarked."""
    annotations = (record.get("metadata") or {}).get("annotations") or {}
    found = annotations.get(SCHEDULER_ANNOTATION)
    return str(found) if found else None


def record_manifest(pipeline_run: Obj, groups: tuple[WorkspaceGroup, ...], *, scheduler_name: str, active: bool = False) -> Obj:
    """record_manifest() is the record of one PipelineRun: named after it, owned by it, all groups Pending.

    active=True labels it ACTIVE_LABEL "true" already, for a record created to claim a group at
    once (docs/contract.md section 9): the claim then needs no label write of its own.
    """
    meta = pipeline_run["metadata"]
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "annotations": {SCHEDULER_ANNOTATION: scheduler_name},
            **({"labels": {ACTIVE_LABEL: "true"}} if active else {}),
            "ownerReferences": [
                {
                    "apiVersion": pipeline_run.get("apiVersion", "tekton.dev/v1"),
                    "kind": "PipelineRun",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "spec": {
            "pipelineRun": {"name": meta["name"], "uid": meta["uid"]},
            "groups": [
                {
                    "name": g.name,
                    "tasks": list(g.tasks),
                    "workspaces": list(g.workspaces),
                    "peak": g.peak.to_quantities(),
                }
                for g in groups
            ],
        },
    }


#: A record as the caller last saw it (the informer's copy, or one just written), or None to GET it.
Latest = Callable[[str, str], "Obj | None"]
#: Told of every record this writer wrote: (the API's response, the resourceVersion it replaced).
Written = Callable[..., None]
#: Runs a write later, on another thread (in order); None runs it at once.
RunLater = Callable[[Callable[[], None]], object]


class RecordWriter:
    """RecordWriter performs the scheduler's writes to ReservationRecords.

    Writes per record, as few as the API allows (docs/contract.md section 2: a status
    subresource, so create ignores status and a status write ignores labels):

    * create: one POST of the spec; no status write (an absent entry is Pending). A record
      created to claim a group at once carries the active label already, so that claim
      writes no label; `settle_label` takes it off again if the claim does not follow;
    * a claim, join, rollback or release: one PUT to /status, compare-and-swap against
      `latest(namespace, name)` (the informer's copy, or the response of our last write),
      with no GET first; a GET only after a 409, or to confirm a change declined on a copy;
    * the active label: a PATCH only when its value changes, run through `run_later`.
    """

    def __init__(
        self,
        api: ApiClient,
        *,
        field_manager: str,
        latest: Latest | None = None,
        on_written: Written | None = None,
        run_later: RunLater | None = None,
    ) -> None:
        self._custom = KubeApi(api)
        self._field_manager = field_manager  # the schedulerName, also written into SCHEDULER_ANNOTATION
        self._latest = latest
        self._on_written = on_written or (lambda record, replaces="": None)
        self._run_later = run_later
        self._label_lock = threading.Lock()
        self._label_pending: set[tuple[str, str]] = set()

    def manifest(self, pipeline_run: Obj, groups: tuple[WorkspaceGroup, ...], *, active: bool = False) -> Obj:
        """manifest() is the record create() would write (the state a queued create leads to)."""
        return record_manifest(pipeline_run, groups, scheduler_name=self._field_manager, active=active)

    def create(self, pipeline_run: Obj, groups: tuple[WorkspaceGroup, ...], *, active: bool = False) -> Obj:
        """create() makes the record (every group Pending: no status entry yet); an existing record is returned as it is.

        active=True: the caller claims a group of it next, so it is created labelled active.
        """
        manifest = self.manifest(pipeline_run, groups, active=active)
        ns, name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
        try:
            created = cast(Obj, self._custom.create_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, manifest))
        except kubernetes.client.ApiException as err:
            if err.status != 409:
                raise
            existing = cast(Obj, self._custom.get_namespaced_custom_object(GROUP, VERSION, ns, PLURAL, name))
            return existing
        self._on_written(created)
        return created

    def _get(self, namespace: str, name: str) -> Obj:
        try:
            return cast(Obj, self._custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                raise RecordGone(f"{namespace}/{name}") from err
            raise

    def change_group(self, namespace: str, name: str, group: str, change: GroupChange) -> Obj | None:
        """change_group() applies `change` to one group's status entry with compare-and-swap.

        Returns the new group entry, or None when `change` declined. Raises
        RecordGone when the record does not exist, and ApiException(409) when
        CAS_ATTEMPTS conflicting writes in a row beat us (the caller re-queues).
        """
        cached = self._latest(namespace, name) if self._latest is not None else None
        for attempt in range(CAS_ATTEMPTS):
            record = dict(cached) if cached is not None else self._get(namespace, name)  # top level only: status is rebuilt
            from_cache, cached = cached is not None, None
            changed = changed_status(record, group, change)
            if changed is None:
                if from_cache:
                    continue  # declined on a copy that may be stale: confirm on the API's own
                return None
            record["status"], new_entry = changed
            entries = record["status"]["groups"]
            try:
                written = self._custom.replace_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, name, without_managed_fields(record))
            except kubernetes.client.ApiException as err:
                if err.status == 409 and attempt + 1 < CAS_ATTEMPTS:
                    log.debug("record %s/%s changed under us; retrying (%d)", namespace, name, attempt + 1)
                    continue
                if err.status == 404:
                    raise RecordGone(f"{namespace}/{name}") from err
                raise
            if isinstance(written, dict) and written.get("metadata"):
                self._on_written(written, replaces=str(record["metadata"].get("resourceVersion") or ""))
                record = written
            self._label_after(namespace, name, record, entries)
            return new_entry
        return None  # every attempt declined on a copy and then conflicted: the caller retries

    def settle_label(self, namespace: str, name: str) -> None:
        """settle_label() brings the active label in line with the record's status, as after a status write.

        For a record created labelled active whose claim did not follow (no node fitted,
        the claim write failed): its label comes off again (nothing is written when it agrees).
        """
        record = self._latest(namespace, name) if self._latest is not None else None
        if record is None:
            try:
                record = self._get(namespace, name)
            except RecordGone:
                return
        self._label_after(namespace, name, record, status_entries_of(record))

    def _label_after(self, namespace: str, name: str, record: Obj, entries: list[Obj]) -> None:
        """_label_after() brings the active label in line after a status write, through run_later when given.

        The deferred write re-reads the latest record when it runs, so writes queued in any
        order end with the label the last status asks for; nothing is queued when the label
        already agrees and no label write is pending.
        """
        if self._run_later is None:
            self._sync_active_label(namespace, name, record, entries)
            return
        key = (namespace, name)
        with self._label_lock:
            if key not in self._label_pending and _label_of(record) == _active_value(entries):
                return
            self._label_pending.add(key)

        def write() -> None:
            with self._label_lock:
                self._label_pending.discard(key)
            latest = (self._latest(namespace, name) if self._latest is not None else None) or record
            self._sync_active_label(namespace, name, latest, status_entries_of(latest))

        self._run_later(write)

    def _sync_active_label(self, namespace: str, name: str, record: Obj, entries: list[Obj]) -> None:
        """_sync_active_label() writes the label the record's status asks for, until the API's answer agrees.

        The contract: "true" while any group is Reserved, absent otherwise. The value is
        decided on a copy: a claim written after that copy and before the PATCH lands shows
        only in the PATCH's answer, and its own status write saw the old label and queued
        nothing. So the answer decides again (at most CAS_ATTEMPTS writes).
        """
        for _ in range(CAS_ATTEMPTS):
            active = _active_value(entries)
            if _label_of(record) == active:
                return
            try:
                patched = self._custom.patch_namespaced_custom_object(
                    GROUP, VERSION, namespace, PLURAL, name, {"metadata": {"labels": {ACTIVE_LABEL: active}}}
                )
            except kubernetes.client.ApiException as err:
                if err.status != 404:
                    log.warning("cannot set %s=%s on record %s/%s: %s", ACTIVE_LABEL, active, namespace, name, err.reason)
                return
            if not (isinstance(patched, dict) and patched.get("metadata")):
                return
            self._on_written(patched)
            record, entries = patched, status_entries_of(patched)
        if _label_of(record) != _active_value(entries):
            log.warning("record %s/%s: its status changed under each of %d label writes; its next status write sets the label again", namespace, name, CAS_ATTEMPTS)


def without_managed_fields(record: Obj) -> Obj:
    """without_managed_fields(record) is the record to PUT to /status: the same, but for metadata.managedFields.

    The API server takes a subresource write's managedFields from the object it holds, never
    from the request (and a request without them keeps them on any write), so sending them back
    was only bytes to encode, and a third of a claim's JSON. The record is not changed.

    Example: {'metadata': {'name': 'r', 'resourceVersion': '7', 'managedFields': [...]}, 'status': s}
    gives {'metadata': {'name': 'r', 'resourceVersion': '7'}, 'status': s}.
    """
    meta = record.get("metadata") or {}
    if "managedFields" not in meta:
        return record
    return {**record, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _active_value(entries: list[Obj]) -> str | None:
    return "true" if any(e.get("state") == ClaimState.RESERVED.value for e in entries) else None


def _label_of(record: Obj) -> str | None:
    found = ((record.get("metadata") or {}).get("labels") or {}).get(ACTIVE_LABEL)
    return str(found) if found is not None else None


def changed_status(record: Obj, group: str, change: GroupChange) -> tuple[Obj, Obj] | None:
    """changed_status(record, group, change) is (the record's status with `change` applied to the group, the new entry).

    None when `change` declined. The record is not changed. An absent entry (or status) is
    Pending, as the contract reads it.
    """
    status = dict(record.get("status") or {})
    entries = [dict(e) for e in status.get("groups") or []]
    if not entries:  # a new record: every group Pending, as the contract reads an absent entry
        entries = initial_status_entries(record)
    index = next((i for i, e in enumerate(entries) if e.get("name") == group), None)
    if index is None:
        entries.append({"name": group, "state": ClaimState.PENDING.value, "holders": [], "claimGeneration": 0})
        index = len(entries) - 1
    new_entry = change(entries[index])
    if new_entry is None:
        return None
    entries[index] = new_entry
    status["groups"] = entries
    status["reservedGroups"] = sum(1 for e in entries if e.get("state") == ClaimState.RESERVED.value)
    return status, new_entry


def initial_status_entries(record: Obj) -> list[Obj]:
    """initial_status_entries(record) is a Pending entry for each spec group (what an empty status means)."""
    return [
        {"name": g.get("name"), "state": ClaimState.PENDING.value, "holders": [], "claimGeneration": 0}
        for g in (record.get("spec") or {}).get("groups") or []
    ]
