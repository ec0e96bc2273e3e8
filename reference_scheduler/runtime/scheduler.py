"""Scheduler: wires the informers, the queue, the scheduling cycle and the releaser together.

Threads:
- one informer thread per watched resource (they only update caches and enqueue);
- the scheduling loop (one pod at a time, like kube-scheduler's scheduleOne);
- the record writers (runtime/lanes.py: each record's writes in order) and the bind workers;
- the volume waits (runtime/volume_binder.py: binds waiting for their claims to be provisioned);
- the releaser loop.

Nothing here decides; every decision is in `core` and is called from `cycle`
and `releaser`. A pod whose scheduling raises is logged, backed off and retried:
one bad pod never stops the loop.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import partial
from typing import Any, Callable

import kubernetes
from kubernetes.client import ApiClient

from reference_scheduler.core.feasible import ALL_NODES
from reference_scheduler.core.queue_hints import QUEUE, own_pod_updated
from reference_scheduler.core.resolved_tasks import requests_owned_by
from reference_scheduler.core.resources import Resources
from reference_scheduler.core.scheduling_gates import is_gated, scheduling_gates_removed, waiting_for_gates_message
from reference_scheduler.core.scoring import Strategy
from reference_scheduler.core.container_defaults import CONFIG_DEFAULTS_CONFIGMAP, container_defaults_of
from reference_scheduler.core.tekton_config import FEATURE_FLAGS_CONFIGMAP, coschedule_of, coschedule_problem, feature_flags_of
from reference_scheduler.core.volume_binding import VolumeLookups
from reference_scheduler.core.volume_provisioning import DEFAULT_VOLUME_BINDING_TIMEOUT
from reference_scheduler.runtime.assumed_claims import AssumedClaims
from reference_scheduler.runtime.background import Background
from reference_scheduler.runtime.cluster_view import ClusterView, is_terminal, pipeline_task_of
from reference_scheduler.runtime.cycle import Cycle, Outcome
from reference_scheduler.runtime.events import EventRecorder
from reference_scheduler.runtime.informer import Informer, LabelsByName, Obj, raw_lister
from reference_scheduler.runtime.kube_api import KubeApi
from reference_scheduler.runtime.lanes import Lanes
from reference_scheduler.runtime.planner import PodShaping
from reference_scheduler.runtime.queue import SchedulingQueue
from reference_scheduler.runtime.records import GROUP, PLURAL, VERSION, RecordWriter
from reference_scheduler.runtime.releaser import Releaser
from reference_scheduler.runtime.requeue import EventHints, ShouldMove
from reference_scheduler.runtime.resizer import Resizer
from reference_scheduler.runtime.siblings import PendingSiblings
from reference_scheduler.runtime.volume_binder import VolumeBinder

log = logging.getLogger("tkn-scheduler")

#: The namespace of Tekton's controller, where its feature-flags ConfigMap is.
TEKTON_NAMESPACE = "tekton-pipelines"
#: How long startup waits for the caches before it gives up (the API is unreachable or RBAC is missing).
CACHE_SYNC_SECONDS = 60.0
#: How often that wait looks for a stop request (SIGTERM while the caches fill).
SYNC_POLL_SECONDS = 0.2

AttemptObserver = Callable[[str, float], None]

#: Binds in flight at once (kube-scheduler starts a goroutine per pod; the client's
#: token bucket, not this number, is what limits the rate).
BIND_THREADS = 8
#: Records whose writes (create, claim, join) are in flight at once; each record's run in order.
RECORD_WRITE_THREADS = 8
#: The caches, each an informer holding one watch open on the main client.
INFORMERS = 16
#: The other threads that send requests on the main client: the scheduling loop, the label writer,
#: the releaser, the resizer, the volume waits and the lease's renewal.
OTHER_REQUESTING_THREADS = 6
#: MAIN_CLIENT_CONNECTIONS is how many requests the main client can have open at once (38).
#: Its connection pool keeps that many: urllib3 never makes a caller wait for a connection, it opens
#: a new one and, when the pool is full, closes it after its request, so a smaller pool made a TLS
#: connection (about 5 ms of CPU) for many of the writes once the watches held most of the pool.
MAIN_CLIENT_CONNECTIONS = INFORMERS + BIND_THREADS + RECORD_WRITE_THREADS + OTHER_REQUESTING_THREADS


def _custom_lister(custom: KubeApi, group: str, version: str, plural: str) -> Callable[..., Any]:
    return raw_lister(custom.list_cluster_custom_object, group=group, version=version, plural=plural)


class Scheduler:
    """Scheduler serves one schedulerName: it binds pending pods that ask for it."""

    def __init__(
        self,
        api: ApiClient,
        *,
        scheduler_name: str,
        events_api: ApiClient | None = None,
        strategy: Strategy = Strategy.LEAST_ALLOCATED,
        release_resync_seconds: float = 5.0,
        percentage_of_nodes_to_score: int = ALL_NODES,
        resize_floor: Resources | None = None,
        on_attempt: AttemptObserver | None = None,
        on_release: Callable[[str], None] | None = None,
        tekton_namespace: str = TEKTON_NAMESPACE,
        volume_binding_timeout: float = DEFAULT_VOLUME_BINDING_TIMEOUT,
        on_coschedule: Callable[[bool], None] | None = None,
    ) -> None:
        self.scheduler_name = scheduler_name
        self.stop_event = threading.Event()
        self._on_attempt = on_attempt or (lambda result, seconds: None)
        self._on_release = on_release or (lambda reason: None)
        self._on_coschedule = on_coschedule or (lambda disabled: None)
        #: The coschedule mode last reported (docs/contract.md section 4); None before the caches are read.
        self._coschedule: str | None = None
        self._coschedule_lock = threading.Lock()  # the informer's thread and run() both ask
        #: config-defaults' resourceVersion and its parsed container entries (_container_defaults).
        self._parsed_defaults: tuple[str | None, dict[str, Any]] | None = None
        core = custom = KubeApi(api)
        stop = self.stop_event
        self.pods = Informer("pods", raw_lister(core.list_pod_for_all_namespaces), stop=stop)
        self.nodes = Informer("nodes", raw_lister(core.list_node), stop=stop)
        self.records = Informer("reservationrecords", _custom_lister(custom, GROUP, VERSION, PLURAL), stop=stop)
        self.pipeline_runs = Informer("pipelineruns", _custom_lister(custom, "tekton.dev", "v1", "pipelineruns"), stop=stop)
        self.task_runs = Informer("taskruns", _custom_lister(custom, "tekton.dev", "v1", "taskruns"), stop=stop)
        # A custom task's child run (docs/contract.md section 8): its end can release a group.
        self.custom_runs = Informer("customruns", _custom_lister(custom, "tekton.dev", "v1beta1", "customruns"), stop=stop)
        self.tasks = Informer("tasks", _custom_lister(custom, "tekton.dev", "v1", "tasks"), stop=stop)
        # Tasks fetched through a resolver are in their run's ResolutionRequests (docs/contract.md section 6).
        self.resolution_requests = Informer(
            "resolutionrequests", _custom_lister(custom, "resolution.tekton.dev", "v1beta1", "resolutionrequests"), stop=stop
        )
        self.limit_ranges = Informer("limitranges", raw_lister(core.list_limit_range_for_all_namespaces), stop=stop)
        # What outside the PipelineRun shapes its pods (docs/contract.md section 6.1, steps 7 and 8).
        self.runtime_classes = Informer("runtimeclasses", raw_lister(core.list_runtime_class), stop=stop)
        self.tekton_flags = Informer(
            "tekton-feature-flags",
            raw_lister(core.list_namespaced_config_map, namespace=tekton_namespace, field_selector=f"metadata.name={FEATURE_FLAGS_CONFIGMAP}"),
            stop=stop,
        )
        self.tekton_defaults = Informer(
            "tekton-config-defaults",
            raw_lister(core.list_namespaced_config_map, namespace=tekton_namespace, field_selector=f"metadata.name={CONFIG_DEFAULTS_CONFIGMAP}"),
            stop=stop,
        )
        # Volumes (docs/reference-scheduler.md, Volumes): read only; the claims' selected-node annotation is patched.
        self.claims = Informer("persistentvolumeclaims", raw_lister(core.list_persistent_volume_claim_for_all_namespaces), stop=stop)
        self.volumes = Informer("persistentvolumes", raw_lister(core.list_persistent_volume), stop=stop)
        self.storage_classes = Informer("storageclasses", raw_lister(core.list_storage_class), stop=stop)
        # Pod affinity's namespaceSelector reads the namespaces' labels (core/inter_pod_affinity.py).
        self.namespaces = Informer("namespaces", raw_lister(core.list_namespace), stop=stop)
        self._tekton_namespace = tekton_namespace
        self.informers = [
            self.pods, self.nodes, self.records, self.pipeline_runs, self.task_runs, self.custom_runs, self.tasks, self.resolution_requests,
            self.limit_ranges,
            self.runtime_classes, self.tekton_flags, self.tekton_defaults, self.claims, self.volumes, self.storage_classes, self.namespaces,
        ]
        # Our own selected-node writes count at once, before the claim watch shows them (V3 reads them).
        self.assumed_claims = AssumedClaims(self.claims.get)
        volume_lookups = VolumeLookups(
            get_claim=self.assumed_claims.get,
            get_volume=lambda name: self.volumes.get("", name),
            get_storage_class=lambda name: self.storage_classes.get("", name),
        )

        self.queue = SchedulingQueue()
        self.view = ClusterView(pods=self.pods, nodes=self.nodes, records=self.records)
        self.volume_binder = VolumeBinder(
            api, lookups=volume_lookups, node_named=self.view.node_named, timeout=volume_binding_timeout, assume=self.assumed_claims.assume,
        )
        self.binds = Background("bind", threads=BIND_THREADS)
        self.labels = Background("labels", threads=1)  # one thread: label writes stay in order
        self.record_writes = Lanes("record-writes", threads=RECORD_WRITE_THREADS)
        self._attempt_started: dict[tuple[str, str], float] = {}
        self.siblings = PendingSiblings(queue=self.queue, pods=self.pods, is_ours_pending=self._is_ours_to_try, attempt_started=self._attempt_started)
        writer = RecordWriter(
            api, field_manager=scheduler_name, latest=self.view.confirmed_record_of, on_written=self.view.assume_record, run_later=self.labels.submit
        )
        events = EventRecorder(events_api or api, component=scheduler_name)
        self.cycle = Cycle(
            api=api,
            view=self.view,
            records=writer,
            events=events,
            get_pipeline_run=self.pipeline_runs.get,
            get_task=self.tasks.get,
            get_resolution_requests=self._resolution_requests_of,
            get_limit_range=self._limit_range,
            strategy=strategy,
            scheduler_name=scheduler_name,
            get_shaping=self._shaping,
            bind_later=self._bind_later,
            write_later=self.record_writes.submit,
            siblings=self.siblings,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
            volumes=self.volume_binder,
            namespace_labels=LabelsByName(self.namespaces),
        )
        self.releaser = Releaser(
            records=self.records,
            pipeline_runs=self.pipeline_runs,
            task_runs=self.task_runs,
            custom_runs=self.custom_runs,
            nodes=self.nodes,
            writer=writer,
            resync_seconds=release_resync_seconds,
            on_released=self._on_release,
            scheduler_name=scheduler_name,
        )
        self.resizer = (
            Resizer(api, scheduler_name=scheduler_name, pods=self.pods, task_runs=self.task_runs, floor=resize_floor)
            if resize_floor is not None
            else None
        )
        self.hints = EventHints(
            view=self.view,
            waiting_pod=self.pods.get,
            node_named=lambda name: self.nodes.get("", name),
            volumes=volume_lookups,
            pipeline_run_named=self.pipeline_runs.get,
        )
        self._wire_handlers()

    # --- lifecycle ---

    def start_informers(self) -> None:
        """start_informers() starts every cache and waits for them; a stop request ends the wait at once."""
        for informer in self.informers:
            informer.start()
        deadline = time.monotonic() + CACHE_SYNC_SECONDS
        for informer in self.informers:
            while not informer.wait_synced(min(SYNC_POLL_SECONDS, max(0.0, deadline - time.monotonic()))):
                if self.stop_event.is_set():
                    return
                if time.monotonic() >= deadline:
                    raise RuntimeError(
                        f"the {informer.name} cache did not sync in {CACHE_SYNC_SECONDS:g}s: check the API server and the scheduler's RBAC"
                    )

    def run(self) -> None:
        """run() schedules and releases until stop_event is set; informers must be started."""
        if self.stop_event.is_set():
            return
        releaser = threading.Thread(target=self.releaser.run, args=(self.stop_event,), name="releaser", daemon=True)
        releaser.start()
        if self.resizer is not None:
            threading.Thread(target=self.resizer.run, args=(self.stop_event,), name="resizer", daemon=True).start()
        threading.Thread(target=self.volume_binder.waits.run, args=(self.stop_event,), name="volume-waits", daemon=True).start()
        self.check_coschedule()  # the ConfigMap may not exist: no event would ever say so
        for pod in self.pods.list(self._is_ours_to_try):
            self.queue.add(_key(pod))
        log.info("scheduler %s is serving", self.scheduler_name)
        while not self.stop_event.is_set():
            key = self.queue.pop(timeout=0.5)
            if key is not None:
                self._schedule_one(key)
        self.queue.close()

    def stop(self) -> None:
        self.stop_event.set()
        self.queue.close()

    def healthy(self) -> bool:
        return all(i.synced for i in self.informers) and not self.stop_event.is_set()

    # --- the scheduling loop ---

    def _schedule_one(self, key: tuple[str, str]) -> None:
        pod = self.pods.get(*key)
        if pod is None or not self._is_ours_to_try(pod):
            self.queue.forget(key)
            self.queue.done(key, unschedulable=False)
            return
        started = time.monotonic()
        result = None
        self._attempt_started[key] = started
        try:
            outcome = self.cycle.schedule(pod)
        except Exception:  # noqa: BLE001 - one bad pod must never stop the scheduler
            log.exception("scheduling %s/%s failed unexpectedly; backing off", *key)
            outcome, result = Outcome.RETRY, "error"
        if outcome is Outcome.BINDING:
            self.queue.binding(key)  # ends bound or backs off: no event is weighed for it any more
            return  # in flight until its bind ends: the worker finishes it (_bind_later)
        self._finish(key, outcome, result)

    def _bind_later(self, pod: Obj, bind: Callable[[], Outcome]) -> None:
        """_bind_later() runs a pod's bind on a worker, then ends its attempt as _schedule_one would have."""
        key = _key(pod)

        def run() -> None:
            result = None
            try:
                outcome = bind()
            except Exception:  # noqa: BLE001 - as in _schedule_one: back off and try again
                log.exception("binding %s/%s failed unexpectedly; backing off", *key)
                outcome, result = Outcome.RETRY, "error"
            if outcome is Outcome.BINDING:
                return  # waiting for its volumes: the bind resumes on a worker when they come (runtime/volume_binder.py)
            self._finish(key, outcome, result)

        self.binds.submit(run)

    def _finish(self, key: tuple[str, str], outcome: Outcome, result: str | None) -> None:
        elapsed = time.monotonic() - self._attempt_started.pop(key, time.monotonic())
        self._on_attempt(result or outcome.value, elapsed)
        log.debug("attempt %s/%s: %s in %.1f ms", *key, result or outcome.value, elapsed * 1000)
        if outcome in (Outcome.BOUND, Outcome.GONE):
            self.queue.done(key, unschedulable=False)
            self.queue.forget(key)
        elif outcome is Outcome.UNSCHEDULABLE:
            self.queue.done(key, unschedulable=True)
        else:
            self.queue.done(key, unschedulable=False, retry_soon=True)

    # --- events ---

    def _is_ours_pending(self, pod: Obj) -> bool:
        spec = pod.get("spec") or {}
        return (
            spec.get("schedulerName") == self.scheduler_name
            and not spec.get("nodeName")
            and not (pod.get("metadata") or {}).get("deletionTimestamp")
            and not is_terminal(pod)
        )

    def _is_ours_to_try(self, pod: Obj) -> bool:
        """_is_ours_to_try: ours and pending, and not held back by scheduling gates (core/scheduling_gates.py).

        kube-scheduler's SchedulingGates PreEnqueue: a gated pod never enters the queue, is
        never tried, never taken along with its group's claim; the API server has marked it
        PodScheduled=False, SchedulingGated, and the scheduler writes nothing for it.
        """
        return self._is_ours_pending(pod) and not is_gated(pod)

    def _wire_handlers(self) -> None:
        self.pods.add_handler(self._on_pod)
        self.nodes.add_handler(lambda kind, node, old: self._move(partial(self.hints.after_node_event, kind, node, old), f"node {kind.lower()}"))
        self.records.add_handler(lambda kind, record, old: self._move(partial(self.hints.after_record_event, kind, record, old), "reservation changed"))
        self.pipeline_runs.add_handler(self._on_pipeline_run)
        self.task_runs.add_handler(self._on_task_run)
        self.custom_runs.add_handler(self._on_task_run)
        self.claims.add_handler(self._on_claim)
        self.volumes.add_handler(self._on_volume)
        self.storage_classes.add_handler(
            lambda kind, storage_class, old: self._move(partial(self.hints.after_storage_class_event, kind, storage_class, old), f"storageclass {kind.lower()}")
        )
        self.tekton_flags.add_handler(lambda kind, config_map, old: self.check_coschedule())
        self.resolution_requests.add_handler(
            lambda kind, request, old: self._move(partial(self.hints.after_resolution_request_event, kind, request, old), f"resolutionrequest {kind.lower()}")
        )

    def _resolution_requests_of(self, namespace: str, run_uid: str) -> list[Obj]:
        """_resolution_requests_of(ns, uid) are the cached ResolutionRequests of that namespace owned by that PipelineRun."""
        in_namespace = self.resolution_requests.list(lambda r: (r.get("metadata") or {}).get("namespace") == namespace)
        return [dict(request) for request in requests_owned_by(in_namespace, run_uid)]

    def check_coschedule(self) -> None:
        """check_coschedule() says, once per change, whether Tekton's coschedule is the `disabled` this scheduler needs (one line naming the fix)."""
        mode = coschedule_of(self.tekton_flags.get(self._tekton_namespace, FEATURE_FLAGS_CONFIGMAP))
        with self._coschedule_lock:
            if mode == self._coschedule:
                return
            self._coschedule = mode
        problem = coschedule_problem(mode, self._tekton_namespace)
        self._on_coschedule(problem is None)
        if problem is not None:
            log.error("%s", problem)
        else:
            log.info("Tekton's coschedule is disabled (%s/%s): groups are co-located here", self._tekton_namespace, FEATURE_FLAGS_CONFIGMAP)

    def _on_pod(self, kind: str, pod: Obj, old: Obj | None) -> None:
        key = _key(pod)
        self.siblings.on_pod(kind, pod, old)
        if kind != "DELETED" and self._is_ours_pending(pod) and is_gated(pod):
            log.debug("%s/%s: %s", *key, waiting_for_gates_message(pod))
            self.queue.forget(key)  # never queued while gated; gates are only ever removed
            return
        if kind != "DELETED" and self._is_ours_to_try(pod):
            if (
                old is None
                or not self._is_ours_pending(old)
                or scheduling_gates_removed(old, pod) is QUEUE
                or own_pod_updated(old, pod) is QUEUE
            ):
                self.queue.add(key)
            return
        self.queue.forget(key)
        self._move(partial(self.hints.after_pod_event, kind, pod, old), f"pod {kind.lower()}")
        freed = kind == "DELETED" or (is_terminal(pod) and not (old is not None and is_terminal(old)))
        found = pipeline_task_of(pod)
        if found is not None and freed:
            self.releaser.mark(key[0], found[0])

    def _on_pipeline_run(self, kind: str, run: Obj, old: Obj | None) -> None:
        self.releaser.mark(*_key(run))
        # A child pipeline's PipelineRun carries its parent's name: its end can release the parent's group.
        parent = ((run.get("metadata") or {}).get("labels") or {}).get("tekton.dev/pipelineRun")
        if parent:
            self.releaser.mark(_key(run)[0], parent)
        self._move(partial(self.hints.after_pipeline_run_event, kind, run, old), f"pipelinerun {kind.lower()}")

    def _on_task_run(self, kind: str, task_run: Obj, old: Obj | None) -> None:
        if self.resizer is not None:
            self.resizer.nudge()
        run = ((task_run.get("metadata") or {}).get("labels") or {}).get("tekton.dev/pipelineRun")
        if run:
            self.releaser.mark(_key(task_run)[0], run)

    def _on_claim(self, kind: str, claim: Obj, old: Obj | None) -> None:
        self.volume_binder.waits.notify()  # a bind waiting for this claim re-checks it
        self._move(partial(self.hints.after_claim_event, kind, claim, old), f"persistentvolumeclaim {kind.lower()}")

    def _on_volume(self, kind: str, volume: Obj, old: Obj | None) -> None:
        self.volume_binder.waits.notify()
        self._move(partial(self.hints.after_volume_event, kind, volume, old), f"persistentvolume {kind.lower()}")

    def _move(self, hint: Callable[[], ShouldMove | None], why: str) -> None:
        """_move(hint) moves the parked pods the event's hint says it may help (runtime/requeue.py; None: none).

        The hint is asked only while a pod waits for events (parked, or being decided): a pod
        popped after this event's handlers started reads caches that already hold it. With the
        queue idle or busy binding, as for most of a backlog's events, asking cost a pod's
        request computed twice per pod event.
        """
        if not self.queue.waiting_for_events():
            return
        should_move = hint()
        if should_move is None:
            return
        moved = self.queue.move_unschedulable(should_move)
        if moved:
            log.debug("%s: moved %d unschedulable pod(s)", why, moved)

    def _shaping(self) -> PodShaping:
        """_shaping() is Tekton's feature flags, its containers' defaults and the RuntimeClasses, as the caches hold them now."""
        flags = feature_flags_of(self.tekton_flags.get(self._tekton_namespace, FEATURE_FLAGS_CONFIGMAP))
        return PodShaping(flags=flags, runtime_class=lambda name: self.runtime_classes.get("", name), container_defaults=self._container_defaults())

    def _container_defaults(self) -> dict[str, Any]:
        """_container_defaults() is config-defaults' container entries, parsed once per version of the ConfigMap, not once per plan."""
        config_map = self.tekton_defaults.get(self._tekton_namespace, CONFIG_DEFAULTS_CONFIGMAP)
        version = ((config_map or {}).get("metadata") or {}).get("resourceVersion")
        parsed = self._parsed_defaults
        if parsed is None or parsed[0] != version:
            parsed = (version, container_defaults_of(config_map))
            self._parsed_defaults = parsed  # one assignment: a racing reader sees the old pair or the new one
        return parsed[1]

    def _limit_range(self, namespace: str) -> Obj | None:
        ranges = self.limit_ranges.list(lambda o: (o.get("metadata") or {}).get("namespace") == namespace)
        return sorted(ranges, key=lambda o: o["metadata"]["name"])[0] if ranges else None


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")
