"""session: one replay on a cluster, from bring-up to cleanup, its rounds judged run by run.

    with the cluster held (the local one's machine-wide lock) and up, the CRD installed, the scheduler under test started:
        namespace and node pool made; every run checked to have somewhere to go
        task pods routed to the scheduler (config-defaults), the cluster resolver checked if a run needs it
        supporting objects, Tasks and Pipelines applied
        each round: a contract monitor started; every run's copies created at once; followed to their ends;
                    each judged against the suite's groups and peaks and the violations that name it
    afterwards: config-defaults put back, the namespace, its volumes and the pool removed, the scheduler stopped

Each wait is bounded by a named timeout (harness.timeouts); the providers,
the scheduler under test, the monitor and the report are the suite's own.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kubernetes

from harness import runs
from harness.cluster.namespaces import wait_pods_gone
from harness.cluster.node_pools import POOL_LABEL
from harness.cluster.slot_pools import POOL_SLOT_LABEL
from harness.cluster.storage import default_storage_class_of
from harness.cluster.tekton_resolvers import require_cluster_resolver
from harness.cluster.volumes import delete_claims, wait_provisioned_volumes_gone
from harness.contract import record as contract
from harness.contract.install import install_crd
from harness.errors import HarnessError
from harness.kube import Kube, decoded, json_object
from harness.monitor.latencies import Latencies
from harness.monitor.watcher import ContractMonitor, MonitorBehind, Violation
from harness.replay.attribution import attributed, pod_runs
from harness.replay.cluster_nodes import ReplayPool, make_pool, remove_pool
from harness.replay.follow import Followed, follow_round
from harness.replay.judging import RunResult, judge_run
from harness.replay.pictures import RoundPictures, node_capacities
from harness.replay.plan import PlannedRun, ReplayPlan, require_placeable
from harness.replay.prepare import Prepared
from harness.replay.routing import pods_routed_to
from harness.suite.features import Feature
from harness.suite.session import hold_cluster, make_provider, start_scheduler

if TYPE_CHECKING:
    from harness.plugin import SuiteConfig

Obj = dict[str, Any]
Say = Callable[[str], None]

#: Labels every node of a pool has, left out of a placement problem's nodeSelector.
POOL_LABELS = (POOL_LABEL, POOL_SLOT_LABEL)


@dataclass
class Replayed:
    """Replayed is what a replay leaves: every run's verdict, the monitor's latencies, and the cluster's version for the report."""

    results: list[RunResult] = field(default_factory=list)
    latencies: list[Latencies] = field(default_factory=list)
    kubernetes_version: str = "unknown"
    #: Each run's timeline picture, by run name (harness.replay.pictures), when pictures were asked for.
    pictures: dict[str, Path] = field(default_factory=dict)


def violation_text(violation: Violation) -> str:
    """violation_text() is a violation as a run's line shows it: 'node-overcommitted at 4.2s: node w1 holds ...'."""
    return f"{violation.when()}: {violation.message}"


def _read_record(kube: Kube, namespace: str, name: str) -> contract.Record | None:
    """_read_record() is the run's record, None when there is none or it breaks the contract (the monitor names that: record-invalid)."""
    try:
        obj = json_object(kube.custom.get_namespaced_custom_object(contract.GROUP, contract.VERSION, namespace, contract.PLURAL, name))
        return contract.Record.from_json(obj)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return None
        raise
    except contract.ContractViolation:
        return None


def _pods(kube: Kube, namespace: str) -> list[Obj]:
    return list(decoded(kube.core.list_namespaced_pod(namespace, _preload_content=False)).get("items") or [])


def _apply_all(kube: Kube, namespace: str, plan: ReplayPlan, say: Say) -> None:
    objects = [*plan.supporting, *plan.tasks.values(), *plan.pipelines.values()]
    for obj in objects:
        kube.apply(obj, namespace=namespace)
    say(f"replay: applied {len(plan.supporting)} supporting objects, {len(plan.tasks)} Tasks and {len(plan.pipelines)} Pipelines in {namespace}")


def judge_round(
    kube: Kube, namespace: str, instances: Sequence[tuple[PlannedRun, str]], followed: dict[str, Followed], violations: Sequence[Violation],
    *, checks_records: bool,
) -> list[RunResult]:
    """judge_round() reads the round's pods and records once the runs have ended, and judges each run."""
    pods = _pods(kube, namespace)
    names = [name for _, name in instances]
    by_run = attributed([violation_text(v) for v in violations], [v.objects for v in violations], pod_runs(pods), names)
    results = []
    for planned, name in instances:
        seen = followed[name]
        own_pods = [p for p in pods if ((p.get("metadata") or {}).get("labels") or {}).get(runs.PIPELINERUN_LABEL) == name]
        results.append(judge_run(
            name, planned.origin, ended=seen.ended, seconds=seen.seconds, pods=own_pods,
            record=_read_record(kube, namespace, name) if checks_records else None, checks_records=checks_records,
            task_specs=planned.task_specs, violations=by_run[name], unfinished=seen.unfinished,
        ))
    return results


def run_round(
    kube: Kube, namespace: str, pool: ReplayPool, instances: Sequence[tuple[PlannedRun, str]], config: SuiteConfig, *,
    scheduler: Any, number: int, rounds: int, say: Say, pictures_dir: Path | None = None,
) -> tuple[list[RunResult], Latencies, dict[str, Path]]:
    """run_round() creates every copy of every run at once under a fresh contract monitor, follows them to their ends and judges them.

    With `pictures_dir`, each run's timeline is drawn there (<run>.svg), the monitor's violations that concern it as red lines.
    """
    checks_records = Feature.RESERVATION_RECORDS in config.supported
    monitor = ContractMonitor(
        kube, namespace, pool.pool.selector, timeouts=config.timeouts, checks_records=checks_records,
        scheduler_name=config.scheduler_name, keep_going=True,
    )
    pictures = RoundPictures(kube, namespace, node_capacities(pool.nodes)) if pictures_dir is not None else None
    with monitor, pictures if pictures is not None else contextlib.nullcontext():
        created: dict[str, float] = {}
        for planned, name in instances:
            runs.create(kube, namespace, planned.named(name))
            created[name] = time.monotonic()
        say(f"replay: round {number} of {rounds}: {len(instances)} runs created")
        told = [0]

        def on_poll() -> None:
            scheduler.check_alive()
            for violation in list(monitor.violations)[told[0]:]:
                say(f"replay: contract monitor: {violation_text(violation)}")
                told[0] += 1

        followed = follow_round(kube, namespace, created, timeouts=config.timeouts, on_poll=on_poll, say=say)
        # Judged once the monitor has evaluated every state it was sent: on a loaded machine its evaluator runs
        # behind the watches, and what it had not reached would otherwise surface during the cleanup, unjudged.
        draining = time.monotonic()
        monitor.stop()
        say(f"replay: contract monitor evaluated {monitor.events_seen} events, the last {time.monotonic() - draining:.1f}s after the runs ended")
        if monitor.unjudged:
            raise MonitorBehind(monitor.behind_message())
        on_poll()
        results = judge_round(kube, namespace, instances, followed, list(monitor.violations), checks_records=checks_records)
        latencies = monitor.latencies()
    drawn: dict[str, Path] = {}
    if pictures is not None and pictures_dir is not None:
        names = [name for _, name in instances]
        marks = violation_marks(list(monitor.violations), _pods(kube, namespace), names, shift=monitor.started - pictures.started)
        drawn = pictures.render(names, pictures_dir, marks=marks)
    if number < rounds:  # the next round starts on an empty pool: this one's runs go, with their pods and records
        kube.custom.delete_collection_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "pipelineruns")
        wait_pods_gone(kube, namespace, timeouts=config.timeouts)
    return results, latencies, drawn


def violation_marks(violations: Sequence[Violation], pods: Sequence[Obj], names: Sequence[str], *, shift: float) -> dict[str, list[tuple[float, str]]]:
    """violation_marks() is, per run, the (time on its picture, rule) of each violation that concerns it; `shift` moves monitor time to picture time."""
    by_run = attributed([str(i) for i in range(len(violations))], [v.objects for v in violations], pod_runs(pods), names)
    return {name: [(violations[int(i)].at + shift, violations[int(i)].rule) for i in found] for name, found in by_run.items()}


def _clean_up(cluster: Any, kube: Kube, namespace: str, pool: ReplayPool | None, config: SuiteConfig, say: Say) -> None:
    """_clean_up() removes the namespace, its volumes, then the pool: pods before their nodes, provisioned volumes before their nodes."""
    cluster.delete_test_namespace(kube, namespace)
    wait_pods_gone(kube, namespace, timeouts=config.timeouts)
    delete_claims(kube, namespace)
    if pool is not None:
        wait_provisioned_volumes_gone(kube, namespace, timeouts=config.timeouts)
        remove_pool(cluster, kube, pool)
    say(f"replay: namespace {namespace} and its {len(pool.nodes) if pool else 0} nodes removed")


def replay_on_cluster(prepared: Prepared, config: SuiteConfig, *, say: Say, pictures_dir: Path | None = None) -> Replayed:
    """replay_on_cluster() runs the prepared replay on the cluster the config names and returns every run's verdict."""
    plan = prepared.plan
    replayed = Replayed()
    with hold_cluster(config, purpose="rescon replay"):
        cluster = make_provider(config)
        kube = cluster.up()
        try:
            install_crd(kube, timeouts=config.timeouts)
            replayed.kubernetes_version = kube.server_version()
            if plan.needs_default_class and default_storage_class_of(kube) is None:
                raise HarnessError("this cluster has no default StorageClass, and some workspaces' claims name no class: "
                                   "mark one StorageClass default (storageclass.kubernetes.io/is-default-class: \"true\")")
            scheduler = start_scheduler(cluster, kube, config)
            try:
                _replay_in_namespace(cluster, kube, prepared, config, scheduler, replayed, say, pictures_dir)
            finally:
                scheduler.stop()
        finally:
            kube.close()
            if not config.keep_cluster:
                cluster.down()
    return replayed


def _replay_in_namespace(
    cluster: Any, kube: Kube, prepared: Prepared, config: SuiteConfig, scheduler: Any, replayed: Replayed, say: Say, pictures_dir: Path | None,
) -> None:
    plan = prepared.plan
    namespace = cluster.create_test_namespace(kube, plan.namespace)
    pool: ReplayPool | None = None
    try:
        pool = make_pool(cluster, kube, plan.namespace, prepared.nodes, timeouts=config.timeouts)
        say(f"replay: {len(pool.nodes)} nodes ready: {', '.join(n.name for n in pool.nodes)}")
        require_placeable(plan.runs, pool.nodes, pool_labels=POOL_LABELS)
        with pods_routed_to(kube, namespace, config.scheduler_name, timeouts=config.timeouts, say=say):
            if plan.uses_resolver:
                require_cluster_resolver(kube, namespace, timeouts=config.timeouts)
            _apply_all(kube, namespace, plan, say)
            for number, instances in enumerate(prepared.instances, start=1):
                results, latencies, drawn = run_round(
                    kube, namespace, pool, instances, config, scheduler=scheduler, number=number, rounds=len(prepared.instances), say=say,
                    pictures_dir=pictures_dir,
                )
                replayed.results += results
                replayed.latencies.append(latencies)
                replayed.pictures.update(drawn)
    finally:
        _clean_up(cluster, kube, namespace, pool, config, say)
