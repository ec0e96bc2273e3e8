"""One scheduling attempt for one pod: plan, filter, score, reserve, bind, and roll back on failure.

The decisions are core's; this module only gathers their inputs from the
caches and performs the writes, in the order that keeps the contract:

    record exists -> claim (compare-and-swap) -> assume -> volumes Bound on the node -> bind
    -> on any failure of the last two, un-assume and unreserve (and take a volume selection back)

As in kube-scheduler, the bind is the *binding cycle*: with `bind_later` given, the
scheduling thread assumes the pod (and, through the record just written, its group's
claim) in ClusterView and hands the bind to a worker, then starts the next pod at once;
the worker reports the outcome. Without `bind_later` (unit tests, the microbenchmark)
the bind runs inline. A pod whose WaitForFirstConsumer claims must be provisioned first
(runtime/volume_binder.py) leaves the worker while it waits, and its bind comes back to a
worker when the claims are Bound (or the wait fails).

With `write_later` given too, the record writes leave the scheduling thread as well:
the record's create and the group's claim or join are decided on the record as the
earlier decisions left it (ClusterView.intents), and run in the record's lane, in the
order decided (runtime/lanes.py); a claim written hands its pod's bind to a worker. A
write that fails abandons the decisions queued behind it (their pods are tried again),
so a join never lands without the claim it joined. Nothing is bound before its claim
is written, as before: only the waiting moved.

A pod whose PipelineRun cannot be planned (a missing Task, an invalid
quantity) is scheduled as a plain pod and gets a Warning event saying why, so
one bad PipelineRun never blocks the others. A pod whose PipelineRun cannot be
planned *yet* (the run is not in the cache, or Tekton has not written its
status.pipelineSpec: core/plan_readiness.py) is not bound at all: it is
unschedulable, "waiting for the PipelineRun's plan", until the queueing hints
move it (the run's plan appears, or its record; runtime/requeue.py).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import partial
from types import MappingProxyType
from typing import Any, Callable, Protocol

import kubernetes
from kubernetes.client import ApiClient

from reference_scheduler.core import volume_binding
from reference_scheduler.core.claims import ClaimConflict, Claimed, ClaimState, GroupClaim, reserve, unreserve
from reference_scheduler.core.feasible import ALL_NODES, feasible_nodes_to_find
from reference_scheduler.core.headroom import ActiveReservation, GroupDemand, NodeView, PodUsage, fit, required_for
from reference_scheduler.core.inter_pod_checks import InterPodChecks, inter_pod_checks, inter_pod_failures
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.node_checks import node_check_failures
from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.placed_pods import PlacedPods
from reference_scheduler.core.plan_readiness import WAITING_FOR_PLAN_MESSAGE, PlanReadiness, plan_readiness, waiting_for_plan_message
from reference_scheduler.core.reasons import Reason, fit_error_message, unresolvable_error_message
from reference_scheduler.core.resources import ZERO, InvalidQuantity, Resources
from reference_scheduler.core.scoring import Strategy, score
from reference_scheduler.core.volume_binding import NO_VOLUMES, VolumeConstraints
from reference_scheduler.runtime.cluster_view import ClusterView, pipeline_task_of
from reference_scheduler.runtime.events import EventRecorder
from reference_scheduler.runtime.kube_api import KubeApi
from reference_scheduler.runtime.planner import PlanNotReady, PlanUnavailable, PodShaping, plan_pipeline_run
from reference_scheduler.runtime.records import RecordGone, RecordWriter, changed_status, claim_of, spec_group_of_task, status_entry_of, with_claim
from reference_scheduler.runtime.volume_binder import VolumeBinder

log = logging.getLogger("tkn-scheduler.cycle")

Obj = dict[str, Any]


class WaitingForPlan(Exception):
    """WaitingForPlan: the pod's PipelineRun has no plan yet; the message is the pod's PodScheduled=False message."""


class Outcome(Enum):
    """Outcome of one attempt, which the queue turns into what happens next."""

    BOUND = "bound"
    UNSCHEDULABLE = "unschedulable"  # wait for a cluster event
    RETRY = "retry"  # a conflict or a transient error: back off and try again
    GONE = "gone"  # the pod is no longer ours to schedule
    BINDING = "binding"  # claimed and assumed; a worker binds it and reports BOUND, RETRY or GONE


#: Hands a pod's bind to a worker: (the pod, the bind, which returns the attempt's final Outcome).
BindLater = Callable[[dict[str, Any], Callable[[], Outcome]], None]
#: Runs a record's write later, after the writes submitted before it for the same record: ((namespace, PipelineRun), the write).
WriteLater = Callable[[tuple[str, str], Callable[[], None]], None]


class Siblings(Protocol):
    """Siblings hands out a PipelineRun's other pods waiting in the queue (runtime/siblings.py)."""

    def take(self, pod: Obj, tasks: frozenset[str]) -> list[Obj]: ...

    def give_back(self, pod: Obj) -> None: ...


@dataclass(frozen=True)
class GroupState:
    key: GroupKey
    peak: Resources
    claim: GroupClaim
    tasks: frozenset[str] = frozenset()  # the group's pipeline tasks (spec.groups[].tasks)
    workspaces: frozenset[str] = frozenset()  # the group's PipelineRun workspaces (spec.groups[].workspaces)


class NodeCheckCache:
    """NodeCheckCache memoises core.node_checks per (the pod's node constraints, node, node version).

    node_check_failures reads only the pod's nodeName, nodeSelector, required
    node affinity and tolerations, and the node's name, labels and spec; informer
    objects are replaced, never changed in place, so a node's resourceVersion
    identifies its content. Pods of one PipelineRun (or one pool) share their
    constraints, so after the first attempt every node is a lookup instead of five
    checks. A new version whose labels and spec are as before (a heartbeat, which
    rewrites only status) keeps its answer too: at 5000 nodes KWOK rewrites about
    150 nodes a second.
    """

    #: Distinct pod constraint sets remembered; past this the cache starts again.
    MAX_CONSTRAINT_SETS = 64

    def __init__(self) -> None:
        # Per constraints, per node name: (version, labels, spec, the failures).
        self._by_constraints: dict[str, dict[str, tuple[str, Any, Any, tuple[Reason, ...]]]] = {}

    @staticmethod
    def constraints_of(pod: Obj) -> str:
        """constraints_of(pod) is the JSON of every pod field a node check reads (all of spec.affinity)."""
        spec = pod.get("spec") or {}
        fields = [spec.get("nodeName"), spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations")]
        return json.dumps(fields, sort_keys=True, default=str)

    def for_pod(self, pod: Obj) -> Callable[[Obj], tuple[Reason, ...]]:
        """for_pod(pod)(node) is node_check_failures(pod, node), computed once per node version."""
        key = self.constraints_of(pod)
        per_node = self._by_constraints.get(key)
        if per_node is None:
            if len(self._by_constraints) >= self.MAX_CONSTRAINT_SETS:
                self._by_constraints.clear()
            per_node = self._by_constraints.setdefault(key, {})

        def failures(node: Obj) -> tuple[Reason, ...]:
            meta = node.get("metadata") or {}
            name, version = meta.get("name") or "", meta.get("resourceVersion") or ""
            cached = per_node.get(name)
            if cached is not None and version:
                if cached[0] == version:
                    return cached[3]
                labels, spec = meta.get("labels"), node.get("spec")
                if cached[1] == labels and cached[2] == spec:  # what the checks read is as before
                    per_node[name] = (version, labels, spec, cached[3])
                    return cached[3]
            found = tuple(node_check_failures(pod, node))
            if version:
                per_node[name] = (version, meta.get("labels"), node.get("spec"), found)
            return found

        return failures


#: What one node's pods and reservations answer an attempt: the fit's failures, and the score when it has none.
FitAnswer = tuple[tuple[Reason, ...], int]


@dataclass
class _NodeResults:
    """_NodeResults remembers the answers of one NodeView object with the reservations on it."""

    view: NodeView
    reservations: tuple[ActiveReservation, ...]
    answers: dict[int, FitAnswer]


class NodeResultsCache:
    """NodeResultsCache memoises a node's headroom.fit and scoring.score for an attempt.

    Both are pure functions of the NodeView, the reservations on the node, and what
    the attempt asks (the pod's request and group, the group's demand), and
    ClusterView.node_views() returns the very same NodeView object for a node whose
    pods did not change. What the attempt asks is interned once per attempt as a
    small number (`attempt_keys`), so a node's memo is one lookup of an int, not a
    hash of the request and group per node. The pod's uid matters only when the pod
    is already on the node (assumed): then nothing is memoised. So at 5000 nodes an
    attempt recomputes only the nodes that changed. (The node checks, which read the
    node object, are NodeCheckCache's.)
    """

    #: Distinct attempt keys kept per node before its memo starts again.
    MAX_KEYS_PER_NODE = 64
    #: Distinct attempt keys interned before every memo starts again (their numbers are reused).
    MAX_ATTEMPT_KEYS = 4096

    def __init__(self) -> None:
        self._nodes: dict[str, _NodeResults] = {}
        self._attempt_keys: dict[tuple[Any, ...], int] = {}

    def attempt_keys(self, *keys: tuple[Any, ...]) -> tuple[int, ...]:
        """attempt_keys(k1, k2) numbers what an attempt asks; equal keys get equal numbers until the memo starts again."""
        if len(self._attempt_keys) + len(keys) > self.MAX_ATTEMPT_KEYS:
            self._attempt_keys.clear()
            self._nodes.clear()  # a number may now stand for another key
        return tuple(self._attempt_keys.setdefault(key, len(self._attempt_keys)) for key in keys)

    def for_node(self, view: NodeView, reservations: tuple[ActiveReservation, ...]) -> dict[int, FitAnswer]:
        """for_node() is the node's memo of answers, emptied when its view or its reservations changed."""
        found = self._nodes.get(view.name)
        if found is None or found.view is not view or found.reservations != reservations:
            found = self._nodes[view.name] = _NodeResults(view, reservations, {})
        elif len(found.answers) > self.MAX_KEYS_PER_NODE:
            found.answers.clear()
        return found.answers

    def forget_missing(self, names: dict[str, Any]) -> None:
        """forget_missing(views) drops the memo of nodes no longer listed (only memos of listed nodes are made)."""
        if len(self._nodes) <= len(names):
            return  # every memo may still be of a listed node; a stale one is dropped once they outnumber the nodes
        for name in [n for n in self._nodes if n not in names]:
            del self._nodes[name]


@dataclass(frozen=True)
class AttemptInputs:
    """AttemptInputs is what the last attempt chose its node from: siblings placed with its claim are fitted against it."""

    views: dict[str, NodeView]
    reservations_by_node: dict[str, tuple[ActiveReservation, ...]]
    request: Resources  # the claiming pod's own request
    placed: PlacedPods = field(default_factory=PlacedPods)  # the pods on each node, the claiming pod not among them
    nodes: Mapping[str, Obj] = field(default_factory=dict)  # the attempt's nodes by name


class NodesByName(Mapping[str, Obj]):
    """NodesByName is the attempt's node list as a mapping by name, built on first use.

    The filters that read other pods (core/inter_pod_checks.py) look nodes up by
    name; most attempts never do (a plain pod in a cluster without required
    anti-affinity), and pay nothing for it.
    """

    def __init__(self, nodes: list[Obj]) -> None:
        self._nodes = nodes
        self._by_name: dict[str, Obj] | None = None

    def _built(self) -> dict[str, Obj]:
        if self._by_name is None:
            self._by_name = {node["metadata"]["name"]: node for node in self._nodes}
        return self._by_name

    def __getitem__(self, name: str) -> Obj:
        return self._built()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._nodes)


class Cycle:
    """Cycle schedules one pod at a time; it is called from the single scheduling thread."""

    def __init__(
        self,
        *,
        api: ApiClient,
        view: ClusterView,
        records: RecordWriter,
        events: EventRecorder,
        get_pipeline_run: Callable[[str, str], Obj | None],
        get_task: Callable[[str, str], Obj | None],
        get_limit_range: Callable[[str], Obj | None],
        strategy: Strategy,
        get_resolution_requests: Callable[[str, str], list[Obj]] = lambda namespace, run_uid: [],
        scheduler_name: str,
        get_shaping: Callable[[], PodShaping] = PodShaping,
        bind_later: BindLater | None = None,
        write_later: WriteLater | None = None,
        siblings: Siblings | None = None,
        percentage_of_nodes_to_score: int = ALL_NODES,
        volumes: VolumeBinder | None = None,
        namespace_labels: Mapping[str, Mapping[str, Any]] = MappingProxyType({}),
    ) -> None:
        self._core = KubeApi(api)
        # Every namespace's labels by name: what pod affinity's namespaceSelector reads.
        self._namespace_labels = namespace_labels
        # Without the scheduler's caches no claim is found: a pod that mounts one is never bound blind.
        self._volumes = volumes if volumes is not None else VolumeBinder(api, lookups=NO_VOLUMES, node_named=view.node_named)
        self._get_shaping = get_shaping
        self._bind_later = bind_later
        # Record writes are deferred only with the bind: a deferred claim hands its bind to a worker.
        self._write_later = write_later if bind_later is not None else None
        # Siblings are placed with a claim only when the claim's write is deferred (_claim_later).
        self._siblings = siblings if self._write_later is not None else None
        self._attempt_inputs = AttemptInputs({}, {}, ZERO)
        self._view = view
        self._records = records
        self._events = events
        self._get_pipeline_run = get_pipeline_run
        self._get_task = get_task
        self._get_resolution_requests = get_resolution_requests
        self._get_limit_range = get_limit_range
        self._strategy = strategy
        self._scheduler_name = scheduler_name
        self._node_checks = NodeCheckCache()
        self._node_results = NodeResultsCache()
        self._percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self._next_start_node = 0
        self._created_active: tuple[str, str] | None = None

    def schedule(self, pod: Obj) -> Outcome:
        self._created_active = None
        outcome: Outcome | None = None
        try:
            outcome = self._schedule(pod)
            return outcome
        finally:
            # A record created labelled active for a claim that did not follow (also when the
            # attempt raised): its next attempt finds the record and would never settle it.
            created = self._created_active
            if created is not None and outcome not in (Outcome.BINDING, Outcome.BOUND):
                self._in_order(created, lambda: self._records.settle_label(*created))

    def _schedule(self, pod: Obj) -> Outcome:
        try:
            request = self._view.request_of(pod)
        except InvalidQuantity as err:
            self._events.pod_warning(pod, "FailedScheduling", f"pod has an invalid resource quantity: {err}")
            return Outcome.UNSCHEDULABLE
        try:
            group = self._group_state(pod)
        except WaitingForPlan as waiting:
            self._events.unschedulable(pod, str(waiting))
            return Outcome.UNSCHEDULABLE
        nodes = self._view.node_objects()
        views = self._view.node_views()
        # Indexed by node once per attempt: fit and score only look at the reservations on the
        # node they are given, so each node gets just its own (the same answer, without
        # scanning every reservation for every node).
        indexed: dict[str, list[ActiveReservation]] = {}
        own_group_nodes: set[str] = set()  # nodes holding a reservation of the pod's own group
        own_group = group.key if group else None
        for reservation in self._view.active_reservations():
            indexed.setdefault(reservation.node, []).append(reservation)
            if reservation.group == own_group:
                own_group_nodes.add(reservation.node)
        reservations_by_node = {name: tuple(on_node) for name, on_node in indexed.items()}
        demand = None
        if group is not None and group.claim.state is not ClaimState.RELEASED:
            demand = GroupDemand(group.key, group.peak, group.claim.node if group.claim.state is ClaimState.RESERVED else None)
        usage = PodUsage(pod["metadata"]["uid"], request, group.key if group else None)
        constraints = self._volume_constraints(pod, group, opening=demand is not None and demand.node is None)
        if constraints is not None and constraints.unresolvable:
            # No node can cure these (a claim missing, an unbound immediate claim): kube-scheduler's PreFilter.
            self._events.unschedulable(pod, unresolvable_error_message(len(nodes), constraints.unresolvable))
            return Outcome.UNSCHEDULABLE
        # Outside NodeCheckCache: claims, volumes and classes change without the node's version changing.
        # Volumes that no node can fail (pinned nowhere, nothing selected) are not asked about per node.
        volume_check = (
            partial(volume_binding.volume_failures, constraints)
            if constraints is not None and not volume_binding.passes_every_node(constraints)
            else None
        )

        reasons: dict[str, list[Reason]] = {}
        feasible: list[tuple[int, str]] = []
        node_checks = self._node_checks.for_pod(pod)
        # Where this very pod already counts (assumed after a failed bind): that node is never memoised.
        own_node = self._view.node_of(usage.uid)
        # NodePorts, PodTopologySpread and InterPodAffinity read the pods placed on the nodes (not
        # the pod itself): their PreFilter runs once here, their Filter per node below. None (the
        # usual case) when no node can fail them.
        placed = self._view.placed_pods()
        if own_node is not None:
            placed = placed.without(usage.uid, own_node)
        nodes_by_name = NodesByName(nodes)
        inter_pod = inter_pod_checks(pod, nodes=nodes_by_name, placed=placed, namespace_labels=self._namespace_labels)
        incoming = demand.peak.max(request) if demand is not None and demand.node is None else request
        # On a node where the pod's group has no pod and no reservation, fit and score do not
        # depend on the group: a plain pod (need = its request) and a Pending group's first pod
        # (need = the peak) with the same need get the same answer, so they share one memo
        # entry across PipelineRuns. Not for a Reserved group: elsewhere its reason names it.
        shared = usage.group is not None and (demand is None or demand.node is None)
        group_nodes: set[str] = set()
        if shared and usage.group is not None:
            group_nodes = self._view.nodes_with_run(usage.group.namespace, usage.group.pipeline_run) | own_group_nodes
        related_key, unrelated_key = self._node_results.attempt_keys(
            ((request, usage.group, demand), (incoming, usage.group, self._strategy)),
            (("unrelated", required_for(request, demand)), ("unrelated", incoming, self._strategy)),
        )
        views_get, reservations_get, memo_of = views.get, reservations_by_node.get, self._node_results.for_node

        def fit_answer(view: NodeView, reservations: tuple[ActiveReservation, ...]) -> FitAnswer:
            fitted = tuple(fit(view, reservations, usage, demand))
            return fitted, 0 if fitted else score(view, reservations, incoming, group=usage.group, strategy=self._strategy)

        def evaluate(node: Obj) -> None:
            name = node["metadata"]["name"]
            view = views_get(name)
            failures = node_checks(node)
            if volume_check is not None:
                failures += volume_check(node)
            if inter_pod is not None:
                failures += inter_pod_failures(inter_pod, node, placed)
            if view is not None:
                reservations = reservations_get(name, ())
                if name == own_node:
                    fitted, node_score = fit_answer(view, reservations)
                else:
                    memo = memo_of(view, reservations)
                    key = unrelated_key if usage.group is None or (shared and name not in group_nodes) else related_key
                    found = memo.get(key)
                    if found is None:
                        found = memo[key] = fit_answer(view, reservations)
                    fitted, node_score = found
                failures += fitted
            if failures:
                reasons[name] = list(failures)
                return
            assert view is not None
            feasible.append((node_score, name))

        # A pod of a Reserved group can pass only on its group's node (fit says
        # GroupReservedOnAnotherNode everywhere else): when it passes there, that is the
        # choice every full walk makes. Otherwise every node is walked, for the message.
        reserved_node = self._view.node_named(demand.node) if demand is not None and demand.node is not None else None
        if reserved_node is not None:
            evaluate(reserved_node)
        if not feasible:
            reasons.clear()
            to_find = feasible_nodes_to_find(self._percentage_of_nodes_to_score, len(nodes))
            start = self._next_start_node % len(nodes) if nodes and to_find < len(nodes) else 0
            processed = 0
            for i in range(len(nodes)):
                evaluate(nodes[(start + i) % len(nodes)])
                processed += 1
                if len(feasible) >= to_find:
                    break
            if to_find < len(nodes):
                # As kube-scheduler's nextStartNodeIndex: the next attempt starts where this one stopped.
                self._next_start_node = (start + processed) % len(nodes)
        self._node_results.forget_missing(views)

        if not feasible:
            message = fit_error_message(len(nodes), reasons)
            details = "; ".join(f"{n}: {', '.join(r.message() for r in rs)}" for n, rs in sorted(reasons.items())[:5])
            self._events.unschedulable(pod, f"{message} {details}".strip())
            return Outcome.UNSCHEDULABLE

        feasible.sort(key=lambda item: (-item[0], item[1]))
        chosen = feasible[0][1]
        self._attempt_inputs = AttemptInputs(views, reservations_by_node, request, placed, nodes_by_name)
        return self._claim_and_bind(pod, chosen, group, demand is not None)

    # --- groups ---

    def _group_state(self, pod: Obj) -> GroupState | None:
        found = pipeline_task_of(pod)
        if found is None:
            return None
        run_name, task = found
        namespace = pod["metadata"].get("namespace") or ""
        record = self._view.record_of(namespace, run_name)
        if record is None:
            record = self._create_record(pod, namespace, run_name, task)
            if record is None:
                return None
        spec_group = spec_group_of_task(record, task)
        if spec_group is None:
            return None  # a task that shares no workspace: a plain pod
        name = str(spec_group.get("name"))
        entry = status_entry_of(record, name)
        try:
            peak = Resources.from_mapping(spec_group.get("peak") or {})
        except InvalidQuantity as err:
            self._events.pod_warning(pod, "InvalidReservation", f"record {namespace}/{run_name} has an invalid peak: {err}")
            return None
        return GroupState(
            GroupKey(namespace, run_name, name),
            peak,
            claim_of(entry),
            frozenset(spec_group.get("tasks") or ()),
            frozenset(spec_group.get("workspaces") or ()),
        )

    def _volume_constraints(self, pod: Obj, group: GroupState | None, *, opening: bool) -> VolumeConstraints | None:
        """_volume_constraints() is what the pod's claims (and, when it opens its group's claim, the group's) ask of a node.

        None when there is nothing to check: the pod mounts no claim and opens no
        group with a claim, so it pays one scan of its volumes and nothing per node.
        A pod that opens its group's claim is held to every claim of the group
        (volume spec V1, V3), those of tasks whose pods do not exist yet too.
        """
        namespace = pod["metadata"].get("namespace") or ""
        if opening and group is not None and group.workspaces:
            pipeline_run = self._get_pipeline_run(group.key.namespace, group.key.pipeline_run)
            claims = volume_binding.group_claim_names(pod, pipeline_run, group.workspaces)
        else:
            claims = volume_binding.pod_claim_names(pod)
        if not claims:
            return None
        return volume_binding.volume_constraints(namespace, claims, self._volumes.lookups)

    def _create_record(self, pod: Obj, namespace: str, run_name: str, task: str) -> Obj | None:
        """_create_record() plans the run and creates its record; None: schedule the pod as a plain pod.

        When the pod's task is in a group, this attempt claims that group next: the record is
        created labelled active, which saves the claim's label write (docs/contract.md section 9).

        Raises WaitingForPlan while the plan cannot be computed yet: the pod is
        not bound before its record exists (docs/contract.md section 2).
        """
        pipeline_run = self._get_pipeline_run(namespace, run_name)
        readiness = plan_readiness(pipeline_run)
        if readiness is PlanReadiness.NOT_YET or pipeline_run is None:
            raise WaitingForPlan(waiting_for_plan_message(namespace, run_name, pipeline_run))
        if readiness is PlanReadiness.NEVER:
            message = f"PipelineRun {namespace}/{run_name} finished without a resolved pipelineSpec: scheduling the pod without a reservation"
            self._events.pod_warning(pod, "ReservationUnavailable", message)
            return None
        try:
            plan = plan_pipeline_run(
                pipeline_run,
                get_task=self._get_task,
                limit_range=self._get_limit_range(namespace),
                shaping=self._get_shaping(),
                resolution_requests=self._get_resolution_requests,
            )
        except PlanNotReady as err:
            # A resolved Task's answer is not in the cache yet: park the pod, never bind it plainly (section 6).
            raise WaitingForPlan(WAITING_FOR_PLAN_MESSAGE.format(why=str(err))) from err
        except PlanUnavailable as err:
            self._events.pod_warning(pod, "ReservationUnavailable", f"{err}; scheduling the pod without a reservation")
            return None
        claiming = any(task in g.tasks for g in plan.groups)
        key = (namespace, run_name)
        # Set before the create: a create that fails may still have been made (its answer
        # lost), labelled active, so schedule() settles the label after any failure.
        self._created_active = key if claiming else None
        if self._write_later is None:
            return self._create(pipeline_run, plan.groups, claiming)
        record = self._records.manifest(pipeline_run, plan.groups, active=claiming)
        epoch = self._view.intents.intend(record)

        def create() -> None:
            try:
                self._create(pipeline_run, plan.groups, claiming)
            except Exception:
                self._view.intents.abandon(key)  # the claims queued behind it have no record to write to
                raise
            finally:
                self._view.intents.settle(key, epoch)

        self._write_later(key, create)
        return record

    def _create(self, pipeline_run: Obj, groups: tuple[WorkspaceGroup, ...], active: bool) -> Obj:
        started = time.monotonic()
        record = self._records.create(pipeline_run, groups, active=active)
        meta = pipeline_run["metadata"]
        log.info("created record %s/%s with %d group(s) in %.1f ms", meta["namespace"], meta["name"], len(groups), (time.monotonic() - started) * 1000)
        return record

    def _in_order(self, key: tuple[str, str], write: Callable[[], None]) -> None:
        """_in_order() runs a record write after the ones already decided for that record (at once, inline)."""
        if self._write_later is None:
            write()
        else:
            self._write_later(key, write)

    # --- claim and bind ---

    def _claim_and_bind(self, pod: Obj, node: str, group: GroupState | None, grouped: bool) -> Outcome:
        uid = pod["metadata"]["uid"]
        generation = 0
        if group is not None and grouped:
            held: dict[str, Any] = {}
            joining: list[str] = []  # siblings placed with this claim: holders in its own write

            def claim(entry: Obj) -> Obj | None:
                held.clear()  # a change may be applied twice (a 409, or a copy re-read): the last one counts
                result = reserve(claim_of(entry), uid, node)
                if isinstance(result, ClaimConflict):
                    held["conflict"] = result
                    return None
                for sibling in joining:
                    joined = reserve(result.claim, sibling, node)
                    if isinstance(joined, Claimed):
                        result = replace(result, claim=joined.claim)
                held["claimed"] = result
                return with_claim(entry, result.claim)

            if self._write_later is not None:
                return self._claim_later(pod, node, group, claim, held, joining)
            failed = self._write_claim(pod, group.key, claim, held)
            if failed is not None:
                return failed
            claimed: Claimed = held["claimed"]
            generation = claimed.generation

        held_group = group.key if group is not None and grouped else None
        # Assumed before the bind: the next pod counts this one on the node at once (and its
        # group's claim, which ClusterView holds from the record just written).
        self._view.assume(pod, node, group.key if group else None)
        if self._bind_later is None:
            return self._bind_and_report(pod, node, held_group, generation)
        self._bind_later(pod, lambda: self._bind_and_report(pod, node, held_group, generation))
        return Outcome.BINDING

    def _write_claim(self, pod: Obj, key: GroupKey, claim: Callable[[Obj], Obj | None], held: dict[str, Any]) -> Outcome | None:
        """_write_claim() writes the pod's claim or join (compare-and-swap); None once written, else the attempt's Outcome."""
        try:
            self._records.change_group(key.namespace, key.pipeline_run, key.group, claim)
        except RecordGone:
            log.info("record of %s vanished during the claim; retrying", key)
            return Outcome.RETRY
        except kubernetes.client.ApiException as err:
            log.warning("claim for %s failed: %s", key, err.reason)
            return Outcome.RETRY
        return self._refused(pod, key, held)

    @staticmethod
    def _refused(pod: Obj, key: GroupKey, held: dict[str, Any]) -> Outcome | None:
        if "conflict" not in held:
            return None
        conflict: ClaimConflict = held["conflict"]
        log.info("group %s is %s on %s; re-queueing %s", key, conflict.reason, conflict.reserved_node, _name(pod))
        return Outcome.RETRY

    def _claim_later(
        self, pod: Obj, node: str, group: GroupState, claim: Callable[[Obj], Obj | None], held: dict[str, Any], joining: list[str]
    ) -> Outcome:
        """_claim_later() decides the claim on the record as decided so far, and queues its write in the record's lane.

        The pod is assumed at once (and the claim counted, through ClusterView.intents); the
        write re-decides on the API's copy (compare-and-swap), then hands the bind to a worker.
        A pod that makes its group's claim takes the group's waiting siblings that fit beside
        it along (`joining`): holders in the same write, each then bound like the pod. A write
        that fails un-assumes its pods, takes a label it created off again, and drops the
        decisions queued behind it.
        """
        key = (group.key.namespace, group.key.pipeline_run)
        record = self._view.record_of(*key)
        siblings = self._place_siblings(pod, node, group) if record is not None else []
        joining.extend(s["metadata"]["uid"] for s in siblings)
        changed = changed_status(record, group.key.group, claim) if record is not None else None
        if record is None or changed is None:
            for sibling in siblings:
                assert self._siblings is not None  # only it hands siblings out
                self._siblings.give_back(sibling)
            return self._refused(pod, group.key, held) or Outcome.RETRY
        epoch = self._view.intents.intend({**record, "status": changed[0]})
        placed = [pod, *siblings]
        for each in placed:
            self._view.assume(each, node, group.key)
        created_active = self._created_active == key
        self._created_active = None  # settled by the write below if the claim does not follow

        def write() -> None:
            try:
                failed = self._write_claim(pod, group.key, claim, held) if self._view.intents.current(key, epoch) else Outcome.RETRY
                if failed is not None:
                    self._view.intents.abandon(key)
                    if created_active:
                        self._records.settle_label(*key)
                    for each in placed:
                        self._view.forget_assumed(each["metadata"]["uid"])
                        self._hand_over(each, lambda: failed)
                    return
                generation = held["claimed"].generation
                for each in placed:
                    self._hand_over(each, partial(self._bind_and_report, each, node, group.key, generation))
            finally:
                self._view.intents.settle(key, epoch)

        self._in_order(key, write)
        return Outcome.BINDING

    def _place_siblings(self, pod: Obj, node: str, group: GroupState) -> list[Obj]:
        """_place_siblings() takes the group's waiting pods that pass on the claim's node beside the pod; gives the rest back.

        Only for a pod that makes the claim. Each sibling is judged as its own attempt would
        judge it there: the node checks, its own volumes, the filters that read other pods
        (host ports, pod affinity, spread: core/inter_pod_checks.py) and the fit of a pod of
        the group Reserved on the node, with the pod and the siblings before it placed on the node.
        """
        if self._siblings is None or group.claim.state is not ClaimState.PENDING or not group.tasks:
            return []
        inputs = self._attempt_inputs
        view, node_object = inputs.views.get(node), self._view.node_named(node)
        if view is None or node_object is None:
            return []
        taken = self._siblings.take(pod, group.tasks)
        usages = [*view.pods, PodUsage(pod["metadata"]["uid"], inputs.request, group.key)]
        reservations = (*(r for r in inputs.reservations_by_node.get(node, ()) if r.group != group.key), ActiveReservation(group.key, node, group.peak))
        demand = GroupDemand(group.key, group.peak, node)
        placed = []
        on_node = inputs.placed.with_pods(node, [pod])
        for sibling in taken:
            try:
                usage = PodUsage(sibling["metadata"]["uid"], self._view.request_of(sibling), group.key)
            except InvalidQuantity:
                usage = None
            fits = (
                usage is not None
                and not self._node_checks.for_pod(sibling)(node_object)
                and not self._own_volume_failures(sibling, node_object)
                and not self._inter_pod_failures(sibling, node_object, on_node, inputs.nodes)
            )
            if usage is None or not fits or fit(NodeView(view.name, view.allocatable, view.max_pods, tuple(usages)), reservations, usage, demand):
                self._siblings.give_back(sibling)
                continue
            usages.append(usage)
            placed.append(sibling)
            on_node = on_node.with_pods(node, [sibling])
        return placed

    def _inter_pod_failures(self, pod: Obj, node: Obj, placed: PlacedPods, nodes: Mapping[str, Obj]) -> tuple[Reason, ...]:
        """_inter_pod_failures() is why the node fails the filters that read other pods, for a pod placed beside others."""
        checks: InterPodChecks | None = inter_pod_checks(pod, nodes=nodes, placed=placed, namespace_labels=self._namespace_labels)
        return inter_pod_failures(checks, node, placed) if checks is not None else ()

    def _own_volume_failures(self, pod: Obj, node: Obj) -> tuple[Reason, ...]:
        """_own_volume_failures() is why the node cannot take the pod's own claims (a sibling placed beside its group's claim)."""
        constraints = self._volume_constraints(pod, None, opening=False)
        return volume_binding.volume_failures(constraints, node) if constraints is not None else ()

    def _hand_over(self, pod: Obj, finish: Callable[[], Outcome]) -> None:
        """_hand_over() gives a pod whose claim write has returned to the bind workers, which run finish() and report its Outcome."""
        assert self._bind_later is not None  # deferred writes come only with deferred binds
        self._bind_later(pod, finish)

    def _bind_and_report(self, pod: Obj, node: str, claimed: GroupKey | None, generation: int) -> Outcome:
        """_bind_and_report() binds an assumed pod, once its delayed claims are Bound on the node (volume spec V2).

        A pod with unbound WaitForFirstConsumer claims first has them select the
        node, then waits for them (runtime/volume_binder.py): inline without
        workers, else on ProvisionWaits' thread, the bind resuming on a worker
        (Outcome.BINDING until then). Any failure is a failed bind.
        """
        claims, failure = self._volumes.prepare(pod, node)
        if failure is not None:
            return self._volume_bind_failed(pod, node, claimed, generation, (), failure)
        if not claims:
            return self._bind_now(pod, node, claimed, generation)
        namespace = pod["metadata"].get("namespace") or ""
        known, failure = self._volumes.select(namespace, claims, node)
        if failure is not None:
            return self._volume_bind_failed(pod, node, claimed, generation, claims, failure)

        def after_wait(failure: str | None) -> Outcome:
            if failure is not None:
                return self._volume_bind_failed(pod, node, claimed, generation, claims, failure)
            return self._bind_now(pod, node, claimed, generation)

        if self._bind_later is None:
            return after_wait(self._volumes.wait(namespace, claims, node, known))
        bind_later = self._bind_later
        self._volumes.wait_later(namespace, claims, node, known, lambda failure: bind_later(pod, partial(after_wait, failure)))
        return Outcome.BINDING

    def _volume_bind_failed(self, pod: Obj, node: str, claimed: GroupKey | None, generation: int, claims: tuple[str, ...], failure: str) -> Outcome:
        """_volume_bind_failed() ends a bind whose volumes did not come (V4): un-assume, undo the selection, roll the claim back, RETRY."""
        uid = pod["metadata"]["uid"]
        self._view.forget_assumed(uid)
        namespace = pod["metadata"].get("namespace") or ""
        if claims:
            self._volumes.unselect(namespace, claims, node)
        message = f"volume binding on {node} failed: {failure}"
        log.info("%s: %s", _name(pod), message)
        self._events.pod_warning(pod, "FailedBinding", message)
        if claimed is not None:
            self._unreserve(claimed, uid, generation)
        return Outcome.RETRY

    def _bind_now(self, pod: Obj, node: str, claimed: GroupKey | None, generation: int) -> Outcome:
        """_bind_now() binds an assumed pod; a failed bind un-assumes it and rolls its claim back."""
        uid = pod["metadata"]["uid"]
        try:
            self._bind(pod, node)
        except kubernetes.client.ApiException as err:
            self._view.forget_assumed(uid)
            self._events.pod_warning(pod, "FailedBinding", f"binding to {node} failed: {err.status} {_api_message(err)}")
            if claimed is not None:
                self._unreserve(claimed, uid, generation)
            return Outcome.GONE if err.status == 404 else Outcome.RETRY
        self._events.scheduled(pod, node, self._scheduler_name)
        return Outcome.BOUND

    def _bind(self, pod: Obj, node: str) -> None:
        meta = pod["metadata"]
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        # The generated client cannot deserialize the Status this call returns; the raw call is enough.
        response = self._core.create_namespaced_pod_binding(
            meta["name"], meta["namespace"], body, _preload_content=False
        )
        release_response(response)

    def _unreserve(self, key: GroupKey, uid: str, generation: int) -> None:
        """Roll back this pod's hold; idempotent, so it is retried until it sticks or the record is gone."""

        def rollback(entry: Obj) -> Obj | None:
            before = claim_of(entry)
            after = unreserve(before, uid, generation)
            return None if after == before else with_claim(entry, after)

        for _ in range(3):
            try:
                self._records.change_group(key.namespace, key.pipeline_run, key.group, rollback)
                return
            except RecordGone:
                return
            except kubernetes.client.ApiException as err:
                log.warning("rollback of %s for pod %s failed (%s); retrying", key, uid, err.reason)
        log.error("could not roll back the claim of %s for pod %s", key, uid)


def release_response(response: Any) -> None:
    """release_response() reads a raw (`_preload_content=False`) response and returns its connection to the pool.

    Without it urllib3 keeps the connection checked out, and the next request
    opens (and TLS-handshakes) a new one: two handshakes per bound pod.
    """
    getattr(response, "data", None)
    release = getattr(response, "release_conn", None)
    if release is not None:
        release()


def _name(pod: Obj) -> str:
    return f"{pod['metadata'].get('namespace')}/{pod['metadata'].get('name')}"


def _api_message(err: kubernetes.client.ApiException) -> str:
    import json

    try:
        return str(json.loads(err.body or "{}").get("message") or err.reason)
    except ValueError:
        return str(err.reason)
