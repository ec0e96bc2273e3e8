"""The plugin's work, out of its hooks: providers, cluster preparation, the scheduler, and one scenario's run.

Kept apart from harness.plugin so the hooks stay declarative and so these
steps can be called (and tested) without pytest's machinery.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import pytest

from harness.cluster.namespaces import unique_name, wait_pods_gone
from harness.cluster.node_pools import shape_pool_nodes, unshape_pool_nodes
from harness.cluster.storage import default_storage_class_of
from harness.cluster.toolchain import Toolchain
from harness.cluster.volumes import delete_claims
from harness.contract.install import install_crd
from harness.errors import HarnessError
from harness.kube import Kube
from harness.monitor.watcher import ContractMonitor
from harness.quantities import cpu_millis, memory_bytes
from harness.report.timeline_sampler import Obj, TimelineSampler
from harness.suite import manifests
from harness.suite.attachments import attach_scenario_artifacts
from harness.suite.launch_logs import LOGS_DIR_NAME, LaunchLogs
from harness.suite.retired_pools import RetiredPools, Retirement
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario, provider_skip_reason, storage_skip_reason, volume_admits
from harness.suite.scheduler_under_test import SchedulerUnderTest

if TYPE_CHECKING:
    from harness.plugin import SuiteConfig, SuiteState

#: How often the timeline sampler reads pods and records.
SAMPLE_SECONDS = 0.5


def hold_cluster(config: SuiteConfig, *, purpose: str = "the conformance suite") -> contextlib.AbstractContextManager[None]:
    """hold_cluster() is the machine-wide lock of the local cluster for this session (nothing for kind or existing); `purpose` tells a waiting session who holds it."""
    if config.cluster != "local":
        return contextlib.nullcontext()
    from harness.cluster.cluster_lock import local_cluster_lock

    return local_cluster_lock(timeouts=config.timeouts, purpose=purpose)


def make_provider(config: SuiteConfig) -> Any:
    """make_provider() builds the ClusterProvider the command line asks for."""
    if config.cluster == "local":
        from harness.cluster.local import LocalCluster

        return LocalCluster.from_options(name="rescon", coschedule=config.coschedule, timeouts=config.timeouts)
    if config.cluster == "existing":
        from harness.cluster.existing import ExistingCluster

        if not config.kubeconfig:
            raise HarnessError("--cluster existing needs --kubeconfig (and optionally --context)")
        return ExistingCluster(Path(config.kubeconfig), config.context, config.timeouts, coschedule=config.coschedule)
    from harness.cluster.kind import KindProvider

    return KindProvider.from_options(
        coschedule=config.coschedule, timeouts=config.timeouts, kind_bin=config.kind_bin, keep=config.keep_cluster
    )


class ControllerCluster:
    """ControllerCluster is the cluster as the xdist controller holds it: locked and up before any worker starts.

    Workers then find the lock held (they inherit its environment) and the
    cluster running, and leave it up; the controller takes it down at the end
    unless --keep-cluster.
    """

    def __init__(self, config: SuiteConfig, state: SuiteState) -> None:
        import tempfile

        from harness.cluster.slot_pools import CLAIM_LOCK_ENV
        from harness.suite.workers import SLOTS_ENV

        self.config = config
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(hold_cluster(config))
        self.provider = make_provider(config)
        kube = self.provider.up()
        try:
            prepare_cluster(kube, config, state)
        finally:
            kube.close()
        slots = Path(tempfile.mkdtemp(prefix="rescon-slots-"))
        os.environ[SLOTS_ENV] = str(slots)
        self._stack.callback(os.environ.pop, SLOTS_ENV, None)
        # Workers that claim shared nodes (kind's workers, an existing cluster's slots) claim them one at a time.
        os.environ[CLAIM_LOCK_ENV] = str(slots / "slot-claims")
        self._stack.callback(os.environ.pop, CLAIM_LOCK_ENV, None)

    def close(self) -> None:
        try:
            if not self.config.keep_cluster:
                self.provider.down()
        finally:
            self._stack.close()


def restartable_components(cluster: Any) -> frozenset[str]:
    """restartable_components() is what the provider can restart (harness.cluster.local); none for a provider without the method."""
    names = getattr(cluster, "restartable_components", None)
    return frozenset(names()) if callable(names) else frozenset()


def prepare_cluster(kube: Kube, config: SuiteConfig, state: SuiteState) -> None:
    """prepare_cluster() installs the contract's CRD and notes the versions for the report."""
    install_crd(kube, timeouts=config.timeouts)
    state.versions["kubernetes"] = kube.server_version()


def start_scheduler(cluster: Any, kube: Kube, config: SuiteConfig) -> SchedulerUnderTest:
    workdir = cluster.logs_dir() if cluster.logs_dir() is not None else Path.cwd() / "reports" / "logs"
    binary = None
    if config.scheduler_mode == "kube-scheduler":
        binary = Toolchain().ensure(["kube-scheduler"])["kube-scheduler"]
    scheduler = SchedulerUnderTest(
        mode=config.scheduler_mode,
        scheduler_name=config.scheduler_name,
        kubeconfig=kube.kubeconfig,
        workdir=Path(workdir).parent if config.cluster == "local" else Path(workdir),
        command_template=config.scheduler_cmd,
        config_template=Path(config.scheduler_config_template) if config.scheduler_config_template else None,
        kube_scheduler_binary=binary,
        pod_selector=config.scheduler_pod_selector,
        replica_command_template=config.scheduler_replica_cmd,
        launch_logs=LaunchLogs(config.report_output.parent / LOGS_DIR_NAME if config.report_output is not None else None),
    )
    scheduler.start()
    return scheduler


class _Sampler(TimelineSampler):
    """_Sampler records the scenario's pods and records, in every namespace of its run, for its timeline.

    It reads them from the contract monitor's watches (ContractMonitor.view), not
    from the API server: the monitor runs through the whole scenario. Records are
    listed only where the monitor does not watch them (no ReservationRecords feature).
    """

    def __init__(self, run: ScenarioRun, monitor: ContractMonitor) -> None:
        super().__init__(seconds=SAMPLE_SECONDS, name="timeline-sampler")
        self._run = run
        self._monitor = monitor

    def read(self) -> tuple[list[Obj], list[Obj]]:
        pods, records = self._monitor.view.snapshot()
        if not self._monitor.checks_records:
            records = [record for run in self._run.every_namespace() for record in run.records()]
        return pods, records


@contextlib.contextmanager
def scenario_run(
    request: pytest.FixtureRequest, scenario: Scenario, cluster: Any, kube: Kube, scheduler: SchedulerUnderTest, config: SuiteConfig,
    retired: RetiredPools,
    *,
    after: Sequence[str] = (),
) -> Iterator[ScenarioRun]:
    """scenario_run() is the scenario's run, in its place among concurrent scenarios (harness.suite.workers.Slot).

    `after` are the node ids of the tests handed out before it, which a scenario that keeps
    shared ones out waits to have started (harness.suite.workers.earlier_nodeids).
    """
    from harness.suite.workers import scenario_slot

    with (
        scenario_slot(scenario, after=after, timeouts=config.timeouts),
        _waits_logged(scenario.name),
        _scenario_run(request, scenario, cluster, kube, scheduler, config, retired) as run,
    ):
        yield run


#: A file the scenario's waits are appended to, one JSON line each (the soak's margins; tests/soak.py).
WAIT_LOG_ENV = "RESCON_WAIT_LOG"


def _waits_logged(scenario: str) -> contextlib.AbstractContextManager[None]:
    """_waits_logged() appends each wait of the scenario to $RESCON_WAIT_LOG, when it is set."""
    path = os.environ.get(WAIT_LOG_ENV)
    if not path:
        return contextlib.nullcontext()
    import json

    from harness.waits import observed

    def append(what: str, timeout: str, seconds: float, limit: float) -> None:
        line = json.dumps({"scenario": scenario, "what": what, "timeout": timeout, "seconds": round(seconds, 3), "limit": limit})
        with open(path, "a", encoding="utf-8") as out:  # one short write per line: whole lines from concurrent workers
            out.write(line + "\n")

    return observed(append)


@contextlib.contextmanager
def _scenario_run(
    request: pytest.FixtureRequest, scenario: Scenario, cluster: Any, kube: Kube, scheduler: SchedulerUnderTest, config: SuiteConfig,
    retired: RetiredPools,
) -> Iterator[ScenarioRun]:
    """_scenario_run() sets up namespace, pool and volumes, samples the timeline, attaches artifacts, cleans up."""
    from harness.cluster.tekton_resolvers import require_cluster_resolver
    from harness.cluster.volumes import make_bound_pvc, make_default_class_pvc, make_spare_volumes, template_storage_class

    skip = provider_skip_reason(scenario, provider=cluster.kind, restartable=restartable_components(cluster))
    if skip is None and scenario.replicas > 1:
        skip = scheduler.replica_skip_reason()
    default_class = default_storage_class_of(kube)
    if skip is None:
        skip = storage_skip_reason(scenario, cluster.kind, default_class)
    if skip is not None:
        pytest.skip(skip)
    scheduler.check_alive()
    namespace = cluster.create_test_namespace(kube, unique_name("conf", scenario.name))
    pool = None
    run: ScenarioRun | None = None
    unshape: list[Any] = []
    #: The scenario's extra namespaces (Scenario.extra_namespaces), by their declared names.
    extra: dict[str, str] = {}
    try:
        for name in scenario.extra_namespaces:
            extra[name] = cluster.create_test_namespace(kube, unique_name("conf", f"{name}-{scenario.name}"))
        if scenario.uses_cluster_resolver:
            require_cluster_resolver(kube, namespace, timeouts=config.timeouts)
        pool = cluster.add_node_pool(
            kube,
            f"{scenario.name.replace('_', '-')[:20]}-{namespace[-6:]}",
            count=scenario.pool.count,
            cpu=scenario.pool.cpu,
            memory=scenario.pool.memory,
            pods=scenario.pool.pods,
        )
        unshape = shape_pool_nodes(kube, pool, scenario.pool.shapes)
        # The pool's size, not the node's allocatable: on shared workers it leaves out the daemons' requests.
        contexts = {}
        # Claims of the default class, as users make them, unless the scenario needs volumes that can move or there is no default.
        attach_anywhere = bool(scenario.volumes_attach_anywhere) or default_class is None
        for where in (namespace, *extra.values()):
            if default_class is None:
                make_spare_volumes(kube, where, scenario.claim_templates, timeouts=config.timeouts)
            contexts[where] = manifests.RenderContext(
                namespace=where,
                scheduler_name=config.scheduler_name,
                pool_selector=pool.selector,
                node_cpu_millis=cpu_millis(pool.cpu),
                node_memory_bytes=memory_bytes(pool.memory),
                pvcs={
                    **{
                        name: make_bound_pvc(kube, where, name, timeouts=config.timeouts) if attach_anywhere else make_default_class_pvc(kube, where, name)
                        for name in scenario.volumes
                    },
                    **{
                        name: make_bound_pvc(kube, where, name, admits=volume_admits(place, pool.nodes), timeouts=config.timeouts)
                        for name, place in scenario.pinned_volumes.items()
                    },
                },
                storage_class=template_storage_class(where) if default_class is None else None,
                extra=dict(scenario.values),
            )
        run = ScenarioRun(
            scenario, kube, namespace, pool, contexts[namespace], config.timeouts, config.supported, scheduler,
            resize_floor_cpu_millis=cpu_millis(config.resize_floor_cpu), cluster=cluster,
            others={name: contexts[where] for name, where in extra.items()},
        )
        # Started before the test applies its first fixture; asked by every check and once after the test.
        monitor = ContractMonitor(
            kube, namespace, pool.selector, timeouts=config.timeouts, checks_records=run.checks_records, scheduler_name=config.scheduler_name,
            keep_going=config.contract_keep_going, extra_namespaces=tuple(extra.values()),
        )
        # The sampler ends after the monitor: the monitor's stop() judges every event received, so the
        # timeline's last sample, read from it, is the scenario's last state.
        with _Sampler(run, monitor) as sampler, monitor:
            run.monitor = monitor
            yield run
        failed = getattr(request.node, "rescon_failed", False)
        attach_scenario_artifacts(
            run, sampler.recorder, cluster, scheduler, include_logs=True, failed=failed,
            marks=[(v.at + monitor.started - sampler.started, v.rule) for v in monitor.violations],
        )
    finally:
        if run is not None:
            for doc in run.cluster_scoped_applied():
                kube.delete(doc)
        # Shapes come off before the pool goes back: on kind its nodes serve the next scenario.
        unshape_pool_nodes(kube, unshape)
        _cleanup(kube, (namespace, *extra.values()), pool, cluster, config, retired)
        # This scenario's launches (a restart, replicas) lie next to the reports even if the session dies later.
        scheduler.launch_logs.copy()


def _cleanup(kube: Kube, namespaces: tuple[str, ...], pool: Any, cluster: Any, config: SuiteConfig, retired: RetiredPools) -> None:
    for namespace in namespaces:
        cluster.delete_test_namespace(kube, namespace)
    # Pods go before their nodes: a node deleted under a pod leaves the pod to garbage collection.
    for namespace in namespaces:
        wait_pods_gone(kube, namespace, timeouts=config.timeouts)
    # A provisioned volume is deleted by a helper pod on its node: the pool goes once they are gone (RetiredPools).
    for namespace in namespaces:
        delete_claims(kube, namespace)
    if pool is not None:
        retired.retire(pool, namespaces)


def retired_pools(cluster: Any, kube: Kube, config: SuiteConfig) -> RetiredPools:
    """retired_pools() is the session's RetiredPools: later where pools are nodes of their own (local), else beside the next scenario."""
    from harness.cluster.local import LocalCluster

    when = Retirement.LATER if isinstance(cluster, LocalCluster) else Retirement.BESIDE
    return RetiredPools(cluster, kube, config.timeouts, when=when)
