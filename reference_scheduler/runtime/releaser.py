"""Releaser: ends reservations when the work is done, and drops claims on nodes that are gone.

A group is released only on the word of Tekton's own status (core.release):
every group task done according to its TaskRun (succeeded, or failed with no
retry left), or the PipelineRun done, cancelled, timed out or deleted. Pods
alone never decide it: between a failed attempt and its retry no pod of the
task exists, and the hold must survive that gap.

Work arrives as "this PipelineRun may have changed" marks from the informers,
plus a periodic resync of every record, so a missed event costs only latency.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone
from typing import Any, Callable

import kubernetes

from reference_scheduler.core.claims import ClaimState, GroupClaim, release
from reference_scheduler.core.release import CHILD_PIPELINE_RUN_KIND, child_run_kinds, release_decision, task_run_names
from reference_scheduler.runtime.informer import Informer
from reference_scheduler.runtime.records import RecordGone, RecordWriter, claim_of, created_by, now_rfc3339, with_claim

log = logging.getLogger("tkn-scheduler.releaser")

Obj = dict[str, Any]
RunKey = tuple[str, str]


class Releaser:
    """Releaser evaluates records marked dirty, and all of them every `resync_seconds`."""

    def __init__(
        self,
        *,
        records: Informer,
        pipeline_runs: Informer,
        task_runs: Informer,
        custom_runs: Informer,
        nodes: Informer,
        writer: RecordWriter,
        resync_seconds: float,
        on_released: Callable[[str], None],
        scheduler_name: str,
    ) -> None:
        self._scheduler_name = scheduler_name
        self._records = records
        self._pipeline_runs = pipeline_runs
        self._task_runs = task_runs
        self._custom_runs = custom_runs
        self._nodes = nodes
        self._writer = writer
        self._resync_seconds = resync_seconds
        self._on_released = on_released
        self._dirty: set[RunKey] = set()
        self._cond = threading.Condition()

    def mark(self, namespace: str, pipeline_run: str) -> None:
        with self._cond:
            self._dirty.add((namespace, pipeline_run))
            self._cond.notify()

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            with self._cond:
                if not self._dirty:
                    self._cond.wait(self._resync_seconds)
            self.run_once(stop)

    def run_once(self, stop: threading.Event) -> None:
        """run_once() evaluates the records marked since the last pass, or every record it owns when none is (the resync).

        One turn of run()'s loop, without its wait (bench/offline_backlog.py calls it on its own clock).
        """
        with self._cond:
            batch, self._dirty = self._dirty, set()
        keys = batch or {(r["metadata"].get("namespace") or "", r["metadata"]["name"]) for r in self._records.list(self.owns)}
        for namespace, name in sorted(keys):
            if stop.is_set():
                return
            record = self._records.get(namespace, name)
            if record is not None and self.owns(record):
                try:
                    self.evaluate(record)
                except Exception:  # noqa: BLE001 - one bad record must not stop releases of the others
                    log.exception("evaluating record %s/%s failed", namespace, name)

    def owns(self, record: Obj) -> bool:
        """owns(record): this scheduler created it. Another scheduler's records are never released or changed here."""
        return created_by(record) == self._scheduler_name

    def evaluate(self, record: Obj) -> None:
        """evaluate() releases the record's finished groups and un-claims groups whose node is gone."""
        namespace = record["metadata"].get("namespace") or ""
        name = record["metadata"]["name"]
        pipeline_run = self._pipeline_runs.get(namespace, name)
        task_runs = self._task_runs_of(namespace, pipeline_run)
        tasks_by_group = {str(g.get("name")): list(g.get("tasks") or []) for g in (record.get("spec") or {}).get("groups") or []}
        entries = {str(e.get("name")): e for e in (record.get("status") or {}).get("groups") or []}
        now = datetime.now(timezone.utc)
        for group, tasks in tasks_by_group.items():
            claim = claim_of(entries.get(group, {}))
            if claim.state is ClaimState.RELEASED:
                continue
            decision = release_decision(tasks, pipeline_run, task_runs, now=now)
            if decision.release:
                self._release(namespace, name, group, decision.reason)
            elif claim.state is ClaimState.RESERVED and claim.node and self._nodes.get("", claim.node) is None:
                self._drop_lost_node(namespace, name, group, claim.node)

    def _task_runs_of(self, namespace: str, pipeline_run: Obj | None) -> dict[str, Obj]:
        if pipeline_run is None:
            return {}
        found = {}
        other_kinds = child_run_kinds(pipeline_run)
        for names in task_run_names(pipeline_run).values():
            for child in names:
                kind = other_kinds.get(child)
                if kind is None:
                    task_run = self._task_runs.get(namespace, child)
                    if task_run is not None:
                        found[child] = task_run
                    continue
                # A custom task's CustomRun or a child pipeline's PipelineRun (docs/contract.md section 8):
                # read like a TaskRun, its kind said.
                informer = self._pipeline_runs if kind == CHILD_PIPELINE_RUN_KIND else self._custom_runs
                other = informer.get(namespace, child)
                if other is not None:
                    found[child] = {**other, "kind": kind}
        return found

    def _release(self, namespace: str, name: str, group: str, reason: str) -> None:
        def to_released(entry: Obj) -> Obj | None:
            claim = claim_of(entry)
            if claim.state is ClaimState.RELEASED:
                return None
            updated = with_claim(entry, release(claim))
            updated["releasedAt"] = now_rfc3339()
            updated["releaseReason"] = reason
            return updated

        if self._write(namespace, name, group, to_released):
            log.info("released %s/%s group %s: %s", namespace, name, group, reason)
            self._on_released(reason)

    def _drop_lost_node(self, namespace: str, name: str, group: str, node: str) -> None:
        def to_pending(entry: Obj) -> Obj | None:
            claim = claim_of(entry)
            if claim.state is not ClaimState.RESERVED or claim.node != node or self._nodes.get("", node) is not None:
                return None
            return with_claim(entry, GroupClaim(claim_generation=claim.claim_generation))

        if self._write(namespace, name, group, to_pending):
            log.warning("node %s of %s/%s group %s is gone; the group is Pending again", node, namespace, name, group)

    def _write(self, namespace: str, name: str, group: str, change: Callable[[Obj], Obj | None]) -> bool:
        try:
            return self._writer.change_group(namespace, name, group, change) is not None
        except RecordGone:
            return False
        except kubernetes.client.ApiException as err:
            log.warning("cannot update record %s/%s group %s: %s; will retry", namespace, name, group, err.reason)
            self.mark(namespace, name)
            return False
