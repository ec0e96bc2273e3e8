"""ScenarioRun: one scenario's namespace, node pool, applied fixtures, and reads of their state.

The runner (harness.plugin) makes it, applies nothing the test did not ask
for, and deletes everything afterwards. Reads go straight to the API (no
caches), so a check always sees the state it asserts on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Callable, Iterator

import kubernetes

from harness import yaml_docs
from harness.cluster import node_readiness
from harness.cluster.node_pools import NodePool, register_again
from harness.cluster.namespaces import release_pod_hold
from harness.cluster.simulation import RELEASE, STOP_SIDECARS
from harness.contract import record as contract
from harness.errors import HarnessError
from harness.kube import Kube, decoded, json_object
from harness.monitor.release_reads import CHILD_RUN_APIS
from harness.monitor.watcher import ContractMonitor
from harness.quantities import node_allocatable
from harness.suite import manifests
from harness.suite.features import Feature
from harness.suite.replicas import Replicas
from harness.suite.scenario import Scenario, names_outside_prefix, object_name_prefix
from harness.suite.scheduler_under_test import SchedulerUnderTest
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]

TEKTON = ("tekton.dev", "v1")
#: CustomRuns are still tekton.dev/v1beta1 in Tekton v1.15.
TEKTON_BETA = ("tekton.dev", "v1beta1")
PIPELINE_RUN_LABEL = "tekton.dev/pipelineRun"
PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"
NUDGE_ANNOTATION = "rescon.dev/nudge"
#: The taint cordon(taint=True) puts on a node.
CORDON_TAINT = {"key": "rescon.dev/cordoned", "value": "true", "effect": "NoSchedule"}


@dataclass
class ScenarioRun:
    """ScenarioRun is what a scenario's test body gets: the state to assert on, and the few actions it may take."""

    scenario: Scenario
    kube: Kube
    namespace: str
    pool: NodePool
    context: manifests.RenderContext
    timeouts: TimeoutConfig
    supported: frozenset[Feature]
    scheduler: SchedulerUnderTest
    resize_floor_cpu_millis: int = 10
    rendered: dict[str, str] = field(default_factory=dict)
    applied: list[Obj] = field(default_factory=list)
    #: The contract monitor watching this scenario (harness.monitor.watcher); None only in unit tests.
    monitor: ContractMonitor | None = None
    #: The cluster provider (harness.cluster), for the faults only it can inject; None only in unit tests.
    cluster: Any = None
    #: The hold policy of each node hold_not_ready() holds, until let_ready().
    _not_ready: dict[str, list[Obj]] = field(default_factory=dict, repr=False)
    #: The replicas replicas() ran, kept after they stop so a failed scenario's report carries their logs.
    ran_replicas: Replicas | None = None
    #: The scenario's other namespaces (Scenario.extra_namespaces) by their declared names: the context fixtures render with there.
    others: dict[str, manifests.RenderContext] = field(default_factory=dict)
    #: The declared name of the extra namespace this run is in (in_namespace()); empty in the scenario's own.
    elsewhere: str = ""

    # --- what the implementation claims ---

    @property
    def checks_records(self) -> bool:
        """checks_records is True when reservation-state checks run (the ReservationRecords feature)."""
        return Feature.RESERVATION_RECORDS in self.supported

    @property
    def node_names(self) -> tuple[str, ...]:
        return self.pool.nodes

    def assert_contract(self) -> None:
        """assert_contract() fails the scenario with the contract monitor's first violation, if there is one."""
        if self.monitor is not None:
            self.monitor.raise_if_violated()

    def in_namespace(self, name: str) -> ScenarioRun:
        """in_namespace('other') is this run in the namespace the scenario declared as `other` (Scenario.extra_namespaces).

        It applies, acts and reads there, with the same pool, scheduler, contract
        monitor and cleanup: every check takes it where it takes `run`.
        """
        if name not in self.others:
            raise HarnessError(f"scenario {self.scenario.name} uses namespace {name!r} without declaring it: add it to Scenario.extra_namespaces")
        context = self.others[name]
        return dataclasses.replace(self, namespace=context.namespace, context=context, others={}, elsewhere=name)

    def every_namespace(self) -> list[ScenarioRun]:
        """every_namespace() is this run in its own namespace, then in each extra one."""
        return [self, *(self.in_namespace(name) for name in self.others)]

    def named(self, name: str) -> str:
        """named('b') is 'task-ref-b' in scenario task_ref: the name a shared helper gives (or finds) its object by.

        Every PipelineRun, TaskRun and pod a scenario creates is named after it
        (harness.suite.scenario.object_name_prefix), so two scenarios at once never share one.
        """
        return f"{object_name_prefix(self.scenario.name)}-{name}"

    # --- actions ---

    def apply(self, fixture: str, **extra: Any) -> list[Obj]:
        """apply('peak_blocks_b-a') renders the fixture into this namespace, creates its objects and returns them.

        An object with `metadata.generateName` is created as `kubectl create` does and
        returned as the server stored it, with the name the server gave it.

        A PipelineRun, TaskRun or pod not named after the scenario is a setup
        error: another scenario running at once could create one of the same name.
        """
        context = self.context if not extra else manifests.RenderContext(
            **{**self.context.__dict__, "extra": {**self.context.extra, **extra}}
        )
        label = f"{fixture} (in {self.elsewhere})" if self.elsewhere else fixture
        text, docs = manifests.render_with_text(fixture, context)
        return self._create(label, docs, text=text)

    def apply_objects(self, label: str, docs: list[Obj]) -> list[Obj]:
        """apply_objects('generative-00', docs) creates objects the test made itself (a drawn run), in this namespace, in order.

        Their YAML is kept under `label` beside the rendered fixtures, so the
        report attaches it as it attaches a fixture's manifests.
        """
        placed = [{**doc, "metadata": {**doc.get("metadata", {}), "namespace": self.namespace}} for doc in docs]
        return self._create(label, placed, text=yaml_docs.dump_all(placed))

    def _create(self, label: str, docs: list[Obj], *, text: str) -> list[Obj]:
        """_create() refuses objects not named after the scenario, keeps `text` under `label` for the report, and creates `docs` in order."""
        foreign = names_outside_prefix(self.scenario.name, docs)
        if foreign:
            raise HarnessError(
                f"{label} of scenario {self.scenario.name} creates {', '.join(foreign)}: "
                f"name it {object_name_prefix(self.scenario.name)}-..., so that no other scenario can create one of that name"
            )
        self.rendered[label] = text
        created = []
        for doc in docs:
            meta = doc.get("metadata") or {}
            if meta.get("generateName") and not meta.get("name"):
                # As `kubectl create` (tkn, Tekton Triggers): the server names it; the test reads the name from what is returned.
                doc = self.kube.create(doc, namespace=self.namespace)
            else:
                self.kube.apply(doc, namespace=self.namespace)
            self.applied.append(doc)
            created.append(doc)
        return created

    def delete(self, manifest: Obj) -> None:
        """delete() removes one applied object (e.g. to lift an injected fault)."""
        self.kube.delete(manifest, namespace=self.namespace)

    def cluster_scoped_applied(self) -> list[Obj]:
        return [doc for doc in self.applied if not self.kube.is_namespaced(doc)]

    def release_pod(self, pod_name: str) -> None:
        """release_pod() ends a held simulated task's steps (the sim.rescon.dev/release annotation)."""
        self.kube.core.patch_namespaced_pod(pod_name, self.namespace, {"metadata": {"annotations": {RELEASE: "true"}}})

    def stop_sidecars(self, pod_name: str) -> None:
        """stop_sidecars() ends a held lingering sidecar (sim_task_spec(linger_held=True)): the sim.rescon.dev/stop-sidecars annotation."""
        self.kube.core.patch_namespaced_pod(pod_name, self.namespace, {"metadata": {"annotations": {STOP_SIDECARS: "true"}}})

    def ungate(self, pod_name: str) -> None:
        """ungate() removes every scheduling gate of a pod, as a queueing controller does once it admits the pod."""
        self.kube.core.patch_namespaced_pod(pod_name, self.namespace, {"spec": {"schedulingGates": None}})

    def hold_terminating(self, pod_name: str) -> None:
        """hold_terminating() deletes a pod its fixture gave the suite's finalizer: it stays, Terminating, until let_go()."""
        self.kube.core.delete_namespaced_pod(pod_name, self.namespace)

    def let_go(self, pod_name: str) -> None:
        """let_go() takes the suite's finalizer off a pod hold_terminating() held, so its deletion completes."""
        release_pod_hold(self.kube, self.namespace, pod_name)

    def delete_pod_now(self, pod_name: str) -> None:
        """delete_pod_now() deletes a pod with no grace period; one already gone (a let-go Terminating pod KWOK finished) is fine."""
        try:
            self.kube.core.delete_namespaced_pod(pod_name, self.namespace, grace_period_seconds=0)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise

    def cancel(self, pipeline_run: str, *, status: str = "Cancelled") -> None:
        """cancel() stops a PipelineRun as `tkn pipelinerun cancel` does: spec.status Cancelled.

        `status="CancelledRunFinally"` stops it gracefully instead: Tekton cancels the DAG tasks and still runs finally.
        """
        body = {"spec": {"status": status}}
        self.kube.custom.patch_namespaced_custom_object(*TEKTON, self.namespace, "pipelineruns", pipeline_run, body)

    def start_pending(self, pipeline_run: str) -> None:
        """start_pending() lets a PipelineRun created with spec.status PipelineRunPending run, as a queueing controller does."""
        body = {"spec": {"status": None}}
        self.kube.custom.patch_namespaced_custom_object(*TEKTON, self.namespace, "pipelineruns", pipeline_run, body)

    def delete_pipeline_run(self, name: str) -> None:
        """delete_pipeline_run() deletes it as kubectl does; its TaskRuns, pods and record go by garbage collection."""
        self.kube.custom.delete_namespaced_custom_object(*TEKTON, self.namespace, "pipelineruns", name, propagation_policy="Background")

    def nudge_task_run(self, pipeline_run: str, task: str) -> None:
        """nudge_task_run() touches the task's TaskRun so that Tekton reconciles it now.

        Tekton retries a pod creation that a ResourceQuota refused only after a
        minute; once a scenario lifts its quota, the nudge saves that minute.
        """
        for task_run in self.task_runs(pipeline_run, task):
            body = {"metadata": {"annotations": {NUDGE_ANNOTATION: str(time.time())}}}
            self.kube.custom.patch_namespaced_custom_object(*TEKTON, self.namespace, "taskruns", task_run["metadata"]["name"], body)

    def lose_node(self, node: str) -> Obj:
        """lose_node() deletes a node and, as the pod garbage collector would, the scenario's pods bound to it; it returns the node as it was."""
        lost = decoded(self.kube.core.read_node(node, _preload_content=False))
        self.kube.core.delete_node(node)
        for pod in self.pods():
            if (pod.get("spec") or {}).get("nodeName") == node:
                self.kube.core.delete_namespaced_pod(pod["metadata"]["name"], self.namespace, grace_period_seconds=0)
        return lost

    def register_node_again(self, lost: Obj) -> None:
        """register_node_again() brings back a node lose_node() deleted, under its name and labels, as its kubelet would on its return."""
        register_again(self.kube, lost, timeouts=self.timeouts)

    def evict_pod(self, pod_name: str) -> None:
        """evict_pod() evicts one pod through the Eviction API, as `kubectl drain` does (PodDisruptionBudgets apply)."""
        body = kubernetes.client.V1Eviction(metadata=kubernetes.client.V1ObjectMeta(name=pod_name, namespace=self.namespace))
        self.kube.core.create_namespaced_pod_eviction(pod_name, self.namespace, body)

    def cordon(self, node: str, *, taint: bool) -> None:
        """cordon() marks the node unschedulable as `kubectl cordon` does and, with taint, adds a NoSchedule taint too."""
        body: Obj = {"spec": {"unschedulable": True}}
        if taint:
            body["spec"]["taints"] = [CORDON_TAINT]
        self.kube.core.patch_node(node, body)

    def uncordon(self, node: str) -> None:
        """uncordon() undoes cordon(): schedulable again, without the suite's taint."""
        self.kube.core.patch_node(node, {"spec": {"unschedulable": False, "taints": []}})

    def taint(self, node: str, taint: Obj) -> None:
        """taint() adds one taint to the node (as `kubectl taint` does), keeping the others it has."""
        self.kube.core.patch_node(node, {"spec": {"taints": [*self._taints_but(node, taint), taint]}})

    def untaint(self, node: str, taint: Obj) -> None:
        """untaint() removes the node's taint with taint's key and effect, keeping the others."""
        self.kube.core.patch_node(node, {"spec": {"taints": self._taints_but(node, taint)}})

    def hold_not_ready(self, node: str) -> None:
        """hold_not_ready() makes the node NotReady (Ready=False, and so the not-ready taint) until let_ready(); see harness.cluster.node_readiness.

        The policy that holds it is one of the applied objects, so the runner deletes it if the test ends first.
        """
        docs = node_readiness.hold_not_ready(self.kube, node, timeouts=self.timeouts)
        self.applied.extend(docs)
        self._not_ready[node] = docs

    def let_ready(self, node: str) -> None:
        """let_ready() undoes hold_not_ready(): it returns once the node is Ready again, without the not-ready taint."""
        node_readiness.let_ready(self.kube, node, self._not_ready.pop(node), timeouts=self.timeouts)

    def _taints_but(self, node: str, taint: Obj) -> list[Obj]:
        current: list[Obj] = (decoded(self.kube.core.read_node(node, _preload_content=False)).get("spec") or {}).get("taints") or []
        return [t for t in current if (t.get("key"), t.get("effect")) != (taint["key"], taint["effect"])]

    def create_foreign_record(self, manifest: Obj) -> Obj:
        """create_foreign_record() publishes a record as another scheduler would: created, then its status written.

        A status subresource drops `status` on create, so it takes two writes,
        as it does for any scheduler.
        """
        api = (contract.GROUP, contract.VERSION, self.namespace, contract.PLURAL)
        created = json_object(self.kube.custom.create_namespaced_custom_object(*api, {k: v for k, v in manifest.items() if k != "status"}))
        created["status"] = manifest.get("status") or {}
        written = json_object(self.kube.custom.replace_namespaced_custom_object_status(*api, created["metadata"]["name"], created))
        self.applied.append(written)
        return written

    def restart_scheduler(self, *, while_down: Callable[[], None] | None = None) -> None:
        """restart_scheduler() kills the scheduler under test as a crash would (SIGKILL, or its pods deleted) and brings it back.

        `while_down` runs between the kill and the start (say, a fault lifted
        while no scheduler runs); the scheduler is started again even if it
        fails. For `--scheduler external` the start is its Deployment's, which
        may already run a replacement by then.
        """
        killed = self.scheduler.kill(self.kube)
        try:
            if while_down is not None:
                while_down()
        finally:
            self.scheduler.start()
        if killed:
            self._wait_scheduler_replaced(set(killed))
        self.scheduler.check_alive()

    @contextlib.contextmanager
    def replicas(self) -> Iterator[Replicas]:
        """replicas() runs the scenario's `Scenario.replicas` leader-electing replicas in place of the session's scheduler.

        The session's process (no leader election) is stopped first, so it
        never serves pods beside them, and started again at the end, always;
        the replicas are stopped then too. Their Lease lives in the scenario's
        namespace and goes with it.
        """
        if self.scenario.replicas < 2:
            raise HarnessError(f"scenario {self.scenario.name} runs replicas without declaring them: set Scenario.replicas=2")
        replicas = Replicas(self.scheduler, self.kube, self.namespace, self.timeouts, count=self.scenario.replicas)
        self.ran_replicas = replicas
        self.scheduler.stop()
        self.scheduler.stand_in = replicas.check_alive
        try:
            replicas.start()
            yield replicas
        finally:
            self.scheduler.stand_in = None
            try:
                replicas.stop()
            finally:
                self.scheduler.start()

    def restart_component(self, name: str, *, while_down: Callable[[], None] | None = None) -> float:
        """restart_component('kube-apiserver') restarts one cluster component and returns once the cluster serves again.

        The scenario declares it in `Scenario.restarts`, so that the runner
        skips it on a provider that cannot (harness.cluster.local restarts
        kube-apiserver, etcd and tekton-controller). `while_down` runs while
        the component is stopped (say, a pod that finishes while Tekton's
        controller is away); the component is started again even if it fails.
        Returns the seconds from the stop to the cluster serving again.
        """
        if name not in self.scenario.restarts:
            raise HarnessError(f"scenario {self.scenario.name} restarts {name!r} without declaring it: add it to Scenario.restarts")
        if self.cluster is None:
            raise HarnessError(f"scenario {self.scenario.name} restarts {name!r} but this run has no cluster provider")
        seconds = float(self.cluster.restart_component(self.kube, name, while_down=while_down))
        self.scheduler.check_alive()
        return seconds

    def _wait_scheduler_replaced(self, killed: set[str]) -> None:
        selector = self.scheduler.pod_selector

        def poll() -> None:
            pods = decoded(self.kube.core.list_pod_for_all_namespaces(label_selector=selector, _preload_content=False)).get("items") or []
            fresh = [p for p in pods if p["metadata"]["uid"] not in killed]
            ready = [p for p in fresh if {c["type"]: c["status"] for c in (p.get("status") or {}).get("conditions") or []}.get("Ready") == "True"]
            if not ready:
                raise NotYet(f"{len(fresh)} new pod(s) match {selector!r}, none Ready yet")

        wait_for(poll, what="the scheduler under test to be replaced", timeout="scheduler_restart", timeouts=self.timeouts)

    # --- reads ---

    def pipeline_run(self, name: str) -> Obj:
        found: Obj = json_object(self.kube.custom.get_namespaced_custom_object(*TEKTON, self.namespace, "pipelineruns", name))
        return found

    def task_pods(self, pipeline_run: str, task: str) -> list[Obj]:
        """task_pods() are the pods of one pipeline task, first attempt first (`-pod`, `-pod-retry1`, ...)."""
        selector = f"{PIPELINE_RUN_LABEL}={pipeline_run},{PIPELINE_TASK_LABEL}={task}"
        pods = self.kube.core.list_namespaced_pod(self.namespace, label_selector=selector, _preload_content=False)
        items: list[Obj] = decoded(pods).get("items") or []
        return sorted(items, key=_attempt)

    def task_runs(self, pipeline_run: str, task: str) -> list[Obj]:
        """task_runs() are the TaskRuns of one pipeline task (one, or one per matrix combination)."""
        selector = f"{PIPELINE_RUN_LABEL}={pipeline_run},{PIPELINE_TASK_LABEL}={task}"
        listing = json_object(self.kube.custom.list_namespaced_custom_object(*TEKTON, self.namespace, "taskruns", label_selector=selector))
        items: list[Obj] = listing.get("items") or []
        return items

    def task_run(self, name: str) -> Obj:
        return json_object(self.kube.custom.get_namespaced_custom_object(*TEKTON, self.namespace, "taskruns", name))

    def child_runs(self, pipeline_run: str, task: str, *, kind: str) -> list[Obj]:
        """child_runs() are the runs of `kind` Tekton made for one task of the run that gets no TaskRun.

        kind CustomRun (a custom task; tekton.dev/v1beta1) or PipelineRun (a task that runs a Pipeline).
        """
        api, plural = CHILD_RUN_APIS[kind]
        selector = f"{PIPELINE_RUN_LABEL}={pipeline_run},{PIPELINE_TASK_LABEL}={task}"
        listing = json_object(self.kube.custom.list_namespaced_custom_object(*api, self.namespace, plural, label_selector=selector))
        items: list[Obj] = listing.get("items") or []
        return items

    def finish_custom_run(self, name: str, *, succeeded: bool = True) -> None:
        """finish_custom_run() ends a CustomRun as its controller would: Succeeded True (or False), with start and completion times."""
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        verdict = ("True", "Succeeded") if succeeded else ("False", "Failed")
        condition = {"type": "Succeeded", "status": verdict[0], "reason": verdict[1], "lastTransitionTime": now, "message": "finished by the suite"}
        body = {"status": {"conditions": [condition], "startTime": now, "completionTime": now}}
        self.kube.custom.patch_namespaced_custom_object_status(*TEKTON_BETA, self.namespace, "customruns", name, body)

    def pod(self, name: str) -> Obj:
        return decoded(self.kube.core.read_namespaced_pod(name, self.namespace, _preload_content=False))

    def pods(self) -> list[Obj]:
        items: list[Obj] = decoded(self.kube.core.list_namespaced_pod(self.namespace, _preload_content=False)).get("items") or []
        return items

    def record(self, pipeline_run: str) -> contract.Record | None:
        """record() reads the PipelineRun's ReservationRecord, validated against the contract."""
        obj = self.record_json(pipeline_run)
        return None if obj is None else contract.Record.from_json(obj)

    def record_json(self, pipeline_run: str) -> Obj | None:
        """record_json() reads the PipelineRun's ReservationRecord as the API returns it (None when there is none)."""
        try:
            return json_object(self.kube.custom.get_namespaced_custom_object(
                contract.GROUP, contract.VERSION, self.namespace, contract.PLURAL, pipeline_run
            ))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                return None
            raise

    def records(self) -> list[Obj]:
        listing = json_object(self.kube.custom.list_namespaced_custom_object(contract.GROUP, contract.VERSION, self.namespace, contract.PLURAL))
        items: list[Obj] = listing.get("items") or []
        return items

    def node_cpu_millis(self) -> int:
        return self.context.node_cpu_millis

    def node_memory_bytes(self) -> int:
        return self.context.node_memory_bytes

    def least_allocatable(self, resource: str) -> int:
        """least_allocatable('ephemeral-storage') is the least any pool node advertises of it, in its unit (0 if one has none).

        For a resource the pool's size does not set (a kubelet reports its disk), so
        a scenario sizes its requests from what the nodes really have.
        """
        return min(node_allocatable(decoded(self.kube.core.read_node(node, _preload_content=False))).get(resource) for node in self.node_names)


def _attempt(pod: Obj) -> tuple[int, str]:
    name = pod["metadata"]["name"]
    _, _, suffix = name.rpartition("-retry")
    return (int(suffix) if suffix.isdigit() else 0, name)
