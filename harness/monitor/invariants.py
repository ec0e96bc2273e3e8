"""invariants: the contract's rules that must hold at every observed state, as pure functions over a snapshot.

The contract monitor (harness.monitor.watcher) keeps a `World` from watches on
pods, nodes, records and PipelineRuns, and after every event asks these
functions what is broken. Each finding names its rule, so a failure reads

    contract monitor: node-overcommitted at 4.2s: node pool-x-0 holds 5000m CPU, 0Mi
    (pods 1400m CPU, 0Mi + residuals 3600m CPU, 0Mi) of 4800m CPU, 8192Mi allocatable: too much cpu;
    cpu 5000m > 4800m allocatable: residual ns/a:source 3600m (peak 3800m - its pods 200m) + pod ns/b 1200m + pod ns/a-small 200m

and carries the node's whole arithmetic (`Finding.room`, harness.monitor.room).

The rule names are the strings users grep for; docs/coverage.md maps each to
the contract sentence it enforces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Mapping

from harness.contract.record import SCHEDULER_ANNOTATION, GroupStatus, Record, State
from harness.monitor import volume_topology as volumes
from harness.monitor.expected_groups import ExpectedGroup, expected_groups, group_of
from harness.monitor.room import CountedPod, GroupResidual, NodeRoom
from harness.monitor.room_text import short_arithmetic
from harness.quantities import Amount, node_allocatable, pod_request, sum_of

Obj = Mapping[str, Any]

PIPELINE_RUN_LABEL = "tekton.dev/pipelineRun"
PIPELINE_TASK_LABEL = "tekton.dev/pipelineTask"
TERMINAL_PHASES = ("Succeeded", "Failed")

# Rule names (docs/coverage.md). Placement rules hold for every implementation.
NODE_OVERCOMMITTED = "node-overcommitted"
GROUP_SPLIT = "group-split"
POD_VOLUME_NODE_CONFLICT = "pod-volume-node-conflict"
POD_BOUND_BEFORE_CLAIM = "pod-bound-before-claim"
# Reservation-state rules, for implementations that publish records.
POD_OFF_CLAIM_NODE = "pod-off-claim-node"
BOUND_POD_NOT_HOLDER = "bound-pod-not-holder"
RECORD_AFTER_BIND = "record-after-bind"
CLAIM_CHANGED_NODE = "claim-changed-node"
CLAIM_GENERATION_STEP = "claim-generation-step"
RELEASED_NOT_FINAL = "released-not-final"
CLAIM_REWRITTEN = "claim-rewritten"
RECORD_INVALID = "record-invalid"
GROUPS_DIFFER = "groups-differ"
RECORD_WRONG_RUN = "record-wrong-run"
SPEC_CHANGED = "spec-changed"
ACTIVE_LABEL_DIVERGED = "active-label-diverged"
RELEASE_REASON_UNTRUE = "release-reason-untrue"
RELEASE_LATE = "release-late"
SCHEDULER_NAME_MISSING = "scheduler-name-missing"
GROUP_VOLUME_NODE_CONFLICT = "group-volume-node-conflict"

PLACEMENT_RULES = (NODE_OVERCOMMITTED, GROUP_SPLIT, POD_VOLUME_NODE_CONFLICT, POD_BOUND_BEFORE_CLAIM)


@dataclass(frozen=True)
class Finding:
    """Finding is one broken rule: its name, what was seen, and the objects involved ("pod ns/name", "node n")."""

    rule: str
    message: str
    objects: tuple[str, ...] = ()
    #: The node's arithmetic, for the rules about room (node-overcommitted): shown in full beside the message.
    room: NodeRoom | None = None


class PodsByUid(dict[str, Obj]):
    """PodsByUid is a dict of pods by uid that counts its changes, so an index over it knows when to rebuild."""

    changes = 0

    def __setitem__(self, key: str, value: Obj) -> None:
        self.changes += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.changes += 1
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.changes += 1
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, Obj]:
        self.changes += 1
        return super().popitem()

    def clear(self) -> None:
        self.changes += 1
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.changes += 1
        super().update(*args, **kwargs)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.changes += 1
        return super().setdefault(key, default)

    def __ior__(self, other: Any) -> PodsByUid:  # type: ignore[override,misc]
        self.changes += 1
        return super().__ior__(other)


@dataclass
class World:
    """World is the last observed state of what the monitor watches, keyed as the API keys it."""

    pods: dict[str, Obj] = field(default_factory=PodsByUid)  # by uid
    nodes: dict[str, Obj] = field(default_factory=dict)  # by name, the scenario's pool
    records: dict[tuple[str, str], Record] = field(default_factory=dict)  # by (namespace, name)
    pipeline_runs: dict[tuple[str, str], Obj] = field(default_factory=dict)
    #: Each pod's weight by (uid, resourceVersion): a version never changes, and the room rules weigh every pod at every state.
    weights: dict[tuple[str, str], Amount] = field(default_factory=dict, repr=False, compare=False)
    #: Each PipelineRun's expected groups by (uid, resourceVersion), for the same reason.
    _groups: dict[tuple[str, str], tuple[ExpectedGroup, ...] | None] = field(default_factory=dict, repr=False, compare=False)
    #: Task pods by (namespace, PipelineRun), rebuilt when `pods` has changed since (PodsByUid.changes).
    _run_pods: dict[tuple[str, str], list[Obj]] = field(default_factory=dict, repr=False, compare=False)
    _run_pods_at: int = field(default=-1, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        # Whatever is assigned to `pods` counts its changes, and the run index starts again from it:
        # a new mapping's count says nothing about the index built from the last one.
        if name == "pods":
            if not isinstance(value, PodsByUid):
                value = PodsByUid(value)
            object.__setattr__(self, "_run_pods_at", -1)
        object.__setattr__(self, name, value)

    def groups_of(self, pipeline_run: Obj) -> tuple[ExpectedGroup, ...] | None:
        """groups_of() is expected_groups(pipeline_run), computed once per run version (a run without a uid or version each time)."""
        meta = _meta(pipeline_run)
        key = (meta.get("uid") or "", meta.get("resourceVersion") or "")
        if not all(key):
            return expected_groups(pipeline_run)
        if key not in self._groups:
            if len(self._groups) > 10_000:
                self._groups.clear()
            self._groups[key] = expected_groups(pipeline_run)
        return self._groups[key]

    def run_pods(self, namespace: str, pipeline_run: str) -> list[Obj]:
        """run_pods() are the task pods of one PipelineRun (every task, every attempt), from an index kept with `pods`."""
        pods = self.pods
        assert isinstance(pods, PodsByUid)  # __setattr__ wraps every mapping assigned
        changes = pods.changes
        if changes != self._run_pods_at:
            index: dict[tuple[str, str], list[Obj]] = {}
            for pod in pods.values():
                owner = task_of(pod)
                if owner is not None:
                    index.setdefault(owner[:2], []).append(pod)
            self._run_pods, self._run_pods_at = index, changes
        return self._run_pods.get((namespace, pipeline_run), [])

    def weight_of(self, pod: Obj) -> Amount:
        """weight_of() is pod_request(pod), computed once per pod version (a pod without a uid or version each time)."""
        meta = _meta(pod)
        key = (meta.get("uid") or "", meta.get("resourceVersion") or "")
        if not all(key):
            return pod_request(pod)
        weight = self.weights.get(key)
        if weight is None:
            if len(self.weights) > 100_000:
                self.weights.clear()
            weight = self.weights[key] = pod_request(pod)
        return weight


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def node_of(pod: Obj) -> str | None:
    return (pod.get("spec") or {}).get("nodeName") or None


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES


def task_of(pod: Obj) -> tuple[str, str, str] | None:
    """task_of() is (namespace, PipelineRun, pipeline task) of a Tekton task pod, else None."""
    labels = _meta(pod).get("labels") or {}
    run, task = labels.get(PIPELINE_RUN_LABEL), labels.get(PIPELINE_TASK_LABEL)
    if not run or not task:
        return None
    return str(_meta(pod).get("namespace")), str(run), str(task)


def _name(pod: Obj) -> str:
    return f"{_meta(pod).get('namespace')}/{_meta(pod).get('name')}"


def pod_key(pod: Obj) -> str:
    return f"pod {_name(pod)}"


def group_pods(world: World, namespace: str, pipeline_run: str, tasks: Iterable[str]) -> list[Obj]:
    """group_pods() are the pods Tekton made for these tasks of one PipelineRun (every attempt)."""
    wanted = set(tasks)
    return [p for p in world.run_pods(namespace, pipeline_run) if str(_meta(p).get("labels", {}).get(PIPELINE_TASK_LABEL)) in wanted]


def _live_on(pods: Iterable[Obj], node: str) -> list[Obj]:
    return [p for p in pods if node_of(p) == node and not is_terminal(p)]


def _records_by_run(world: World) -> dict[tuple[str, str], list[Record]]:
    """_records_by_run() is the records by (namespace, PipelineRun), each list by key: a pod's labels name its run, not its record."""
    found: dict[tuple[str, str], list[Record]] = {}
    for record in sorted(world.records.values(), key=lambda r: r.key):
        found.setdefault((record.namespace, record.pipeline_run), []).append(record)
    return found


def _group_label(records: Mapping[tuple[str, str], list[Record]], pod: Obj) -> str | None:
    """_group_label() is "ns/record:group" of the first record whose group has the pod's task, None for a plain pod or no such group."""
    owner = task_of(pod)
    if owner is None:
        return None
    for record in records.get(owner[:2], []):
        group = record.group_of_task(owner[2])
        if group is not None:
            return f"{record.key}:{group.name}"
    return None


def _residuals(records: Mapping[tuple[str, str], list[Record]], node: str, live: list[Obj], requests: Mapping[int, Amount]) -> Iterable[GroupResidual]:
    """_residuals() is each Reserved group's hold on the node, its pods there found among `live` by their labels (every attempt)."""
    for record in (r for runs in records.values() for r in runs):
        for group, status in zip(record.groups, record.statuses):
            if status.state is State.RESERVED and status.node == node:
                own = group_pods_of(live, record.namespace, record.pipeline_run, group.tasks)
                yield GroupResidual(f"{record.key}:{group.name}", group.peak, tuple(_name(p) for p in own), sum_of(requests[id(p)] for p in own))


def node_room(world: World, node: str, *, with_reservations: bool) -> NodeRoom:
    """node_room() is section 7's arithmetic of one node, term by term: the one accounting every room rule reads.

    Its pods are those bound there and not finished (a terminating one counts
    until it is gone), each with its effective request; with reservations, its
    residuals are those of every Reserved group on the node, each group's pods
    there being those among its pods. A node the world does not hold has
    allocatable 0. Example (the contract's): a 4800m node, group A Reserved
    with peak 3800m running a 200m pod, a plain 1000m pod: pods 1200m,
    residual 3600m, total 4800m.
    """
    live = sorted(_live_on(world.pods.values(), node), key=_name)
    requests = {id(pod): world.weight_of(pod) for pod in live}  # each pod's request once, for its own row and its group's
    records = _records_by_run(world)
    pods = tuple(
        CountedPod(_name(p), requests[id(p)], str((p.get("status") or {}).get("phase") or "Pending"), _group_label(records, p),
                   terminating=bool(_meta(p).get("deletionTimestamp")))
        for p in live
    )
    residuals = tuple(_residuals(records, node, live, requests)) if with_reservations else ()
    return NodeRoom(node, node_allocatable(world.nodes.get(node) or {}), pods, residuals, with_reservations)


def residuals_on(world: World, node: str) -> Amount:
    """residuals_on() is section 7's Σ residual(H, N) over the Reserved groups H on the node, per resource.

    residual[r] = max(0, peak[r] - what H's live pods on N request of r), for
    every resource of the peak: a group's GPUs are held like its CPU.
    """
    return node_room(world, node, with_reservations=True).residuals_total


def overcommitted(world: World, *, with_reservations: bool, nodes: Iterable[str] | None = None) -> list[Finding]:
    """overcommitted() finds pool nodes (of `nodes`, default all) whose pods (+ residuals of Reserved groups) exceed allocatable.

    Each counted resource is judged on its own (cpu, memory, ephemeral-storage,
    hugepages-*, extended resources); a resource the node does not advertise
    has allocatable 0, so one GPU on a node without GPUs is too much.
    Finished pods do not count, as in kube-scheduler; pods of every scheduler do.
    Each finding carries the node's arithmetic (`room`), and its message the
    largest terms of each resource that is over.
    """
    findings = []
    wanted = set(world.nodes) if nodes is None else set(nodes) & set(world.nodes)
    for name in sorted(wanted):
        room = node_room(world, name, with_reservations=with_reservations)
        over = room.over()
        if over:
            findings.append(Finding(
                NODE_OVERCOMMITTED,
                f"node {name} holds {room.total.describe()} (pods {room.pods_total.describe()} + residuals {room.residuals_total.describe()}) "
                f"of {room.allocatable.describe()} allocatable: too much {too_much(over, room.allocatable)}; {short_arithmetic(room)}",
                (f"node {name}", *sorted(f"pod {p.pod}" for p in room.pods)),
                room,
            ))
    return findings


def too_much(resources: Iterable[str], allocatable: Amount) -> str:
    """too_much() names the resources a node is over-committed on: "cpu and example.com/gpu (the node advertises none)"."""
    return " and ".join(r + (" (the node advertises none)" if allocatable.get(r) == 0 else "") for r in resources)


def _groups_by_run(world: World) -> Iterable[tuple[tuple[str, str], ExpectedGroup]]:
    for key, pipeline_run in world.pipeline_runs.items():
        for group in world.groups_of(pipeline_run) or ():
            yield key, group


def split_groups(world: World) -> list[Finding]:
    """split_groups() finds groups whose pods are bound to two nodes that both still exist."""
    findings = []
    for (namespace, run), group in _groups_by_run(world):
        pods = [p for p in group_pods(world, namespace, run, group.tasks) if node_of(p) in world.nodes]
        nodes = sorted({str(node_of(p)) for p in pods})
        if len(nodes) > 1:
            placed = ", ".join(f"{_meta(p).get('name')} on {node_of(p)}" for p in sorted(pods, key=lambda p: str(_meta(p).get("name"))))
            findings.append(Finding(
                GROUP_SPLIT,
                f"the group {sorted(group.tasks)} of {namespace}/{run} (workspaces {sorted(group.workspaces)}) is split: {placed}",
                tuple(pod_key(p) for p in pods),
            ))
    return findings


def claim_placement(world: World) -> list[Finding]:
    """claim_placement() finds pods of a Reserved group bound off its node, and bound ones missing from holders.

    Pods on nodes that no longer exist are left out: their claim was lost
    with the node (section 10).
    """
    findings = []
    for record in world.records.values():
        for group, status in zip(record.groups, record.statuses):
            if status.state is not State.RESERVED:
                continue
            for pod in group_pods(world, record.namespace, record.pipeline_run, group.tasks):
                node = node_of(pod)
                if node is None or node not in world.nodes:
                    continue
                name = _meta(pod).get("name")
                if node != status.node:
                    findings.append(Finding(
                        POD_OFF_CLAIM_NODE,
                        f"{name} of group {group.name} is bound to {node} while the group is Reserved on {status.node} "
                        f"(record {record.key}, claimGeneration {status.claim_generation})",
                        (pod_key(pod), f"record {record.key}"),
                    ))
                elif str(_meta(pod).get("uid")) not in status.holders:
                    findings.append(Finding(
                        BOUND_POD_NOT_HOLDER,
                        f"{name} is bound to {node} under group {group.name}'s claim but is not among its holders "
                        f"{sorted(status.holders)} (record {record.key}): a joining pod is added to holders before it binds",
                        (pod_key(pod), f"record {record.key}"),
                    ))
    return findings


def record_for_bound_pod(world: World, pod: Obj) -> Finding | None:
    """record_for_bound_pod() is a finding when a group's pod is bound but the record has no such group.

    Asked once, when the pod is first seen bound. A PipelineRun that is gone
    or being deleted takes its record with it, so it is left out.
    """
    owner = task_of(pod)
    if owner is None or node_of(pod) is None:
        return None
    namespace, run, task = owner
    pipeline_run = world.pipeline_runs.get((namespace, run))
    if pipeline_run is None or _meta(pipeline_run).get("deletionTimestamp"):
        return None
    groups = world.groups_of(pipeline_run)
    if not groups or group_of(groups, task) is None:
        return None
    record = world.records.get((namespace, run))
    if record is not None and record.group_of_task(task) is not None:
        return None
    what = "no ReservationRecord" if record is None else f"record {record.key} has no group with task {task!r}"
    return Finding(
        RECORD_AFTER_BIND,
        f"{_meta(pod).get('name')} (task {task}) is bound to {node_of(pod)} but {what}: the record is created before a group's first pod binds",
        (pod_key(pod),),
    )


def record_transition(before: Record | None, after: Record) -> list[Finding]:
    """record_transition() finds the state-machine breaks between two successive states of one record (section 5)."""
    if before is None:
        return []
    findings = []
    if before.groups != after.groups or before.pipeline_run_uid != after.pipeline_run_uid:
        findings.append(Finding(SPEC_CHANGED, f"record {after.key} changed its spec: a record's spec is written once, at creation", (f"record {after.key}",)))
    old = {s.name: s for s in before.statuses}
    for status in after.statuses:
        previous = old.get(status.name)
        if previous is None:
            continue
        where = f"group {status.name} of record {after.key}"
        objects = (f"record {after.key}",)
        if previous.state is State.RELEASED and status.state is not State.RELEASED:
            findings.append(Finding(RELEASED_NOT_FINAL, f"{where} went from Released back to {status.state.value}", objects))
        claimed = previous.state is State.PENDING and status.state is State.RESERVED
        step = status.claim_generation - previous.claim_generation
        if claimed and step != 1:
            findings.append(Finding(
                CLAIM_GENERATION_STEP, f"{where} was claimed with claimGeneration {previous.claim_generation} -> {status.claim_generation}: a claim adds exactly one", objects,
            ))
        if not claimed and step != 0:
            findings.append(Finding(
                CLAIM_GENERATION_STEP,
                f"{where} changed claimGeneration {previous.claim_generation} -> {status.claim_generation} going {previous.state.value} -> {status.state.value}: only a claim changes it",
                objects,
            ))
        if previous.state is State.RESERVED and status.state is State.RESERVED and previous.node != status.node:
            findings.append(Finding(CLAIM_CHANGED_NODE, f"{where} moved its claim from {previous.node} to {status.node}", objects))
        rewritten = claim_rewritten(previous, status)
        if rewritten:
            findings.append(Finding(CLAIM_REWRITTEN, f"{where} {rewritten}", objects))
    return findings


def claim_rewritten(previous: GroupStatus, status: GroupStatus) -> str | None:
    """claim_rewritten() says how a step of one claim changed what section 5 keeps, or None.

    A join (Reserved -> Reserved) changes only `holders`; a release keeps
    `node`, `holders` and `reservedAt` (section 5, the transitions table).
    Example: Reserved with reservedAt 10:00:00, then Reserved with reservedAt
    10:00:05 after a join: "rewrote reservedAt ... on a join".
    """
    if previous.state is not State.RESERVED or status.claim_generation != previous.claim_generation:
        return None
    if status.state is State.RESERVED and status.reserved_at != previous.reserved_at:
        return f"rewrote reservedAt {_when(previous.reserved_at)} -> {_when(status.reserved_at)} within one claim: only a claim sets it"
    if status.state is not State.RELEASED:
        return None
    if status.node != previous.node or status.reserved_at != previous.reserved_at:
        return (f"was Released with node {status.node} and reservedAt {_when(status.reserved_at)}, but its claim had node {previous.node} "
                f"and reservedAt {_when(previous.reserved_at)}: a release keeps both")
    if set(status.holders) != set(previous.holders):
        return f"was Released with holders {sorted(status.holders)}, but its claim had {sorted(previous.holders)}: a release keeps them"
    return None


def _when(moment: datetime | None) -> str:
    return "none" if moment is None else moment.strftime("%H:%M:%S")


def groups_differ(record: Record, pipeline_run: Obj) -> Finding | None:
    """groups_differ() compares the record's groups (tasks, workspaces) with those section 4 gives the PipelineRun."""
    if _meta(pipeline_run).get("uid") != record.pipeline_run_uid:
        return None
    expected = expected_groups(pipeline_run)
    if expected is None:
        return None
    want = sorted((sorted(g.tasks), sorted(g.workspaces)) for g in expected)
    have = sorted((sorted(g.tasks), sorted(g.workspaces)) for g in record.groups)
    if want == have:
        return None
    return Finding(
        GROUPS_DIFFER,
        f"record {record.key} declares groups (tasks, workspaces) {have}; the PipelineRun's are {want} (docs/contract.md section 4)",
        (f"record {record.key}",),
    )


def record_names_wrong_run(record: Record, record_created: str, pipeline_run: Obj) -> Finding | None:
    """record_names_wrong_run() is a finding when a record made for this PipelineRun carries another uid (section 2).

    A record created before the PipelineRun belongs to an earlier run of the
    same name that the garbage collector has not removed yet: that one is stale, not wrong.
    """
    uid = _meta(pipeline_run).get("uid")
    run_created = str(_meta(pipeline_run).get("creationTimestamp") or "")
    if not uid or uid == record.pipeline_run_uid or (record_created and run_created and record_created < run_created):
        return None
    return Finding(
        RECORD_WRONG_RUN,
        f"record {record.key} names PipelineRun uid {record.pipeline_run_uid}, but it was created for the PipelineRun "
        f"{record.pipeline_run} of uid {uid}: spec.pipelineRun.uid and the ownerReference carry the PipelineRun's metadata.uid",
        (f"record {record.key}",),
    )


def new_claims(before: Record | None, after: Record) -> set[str]:
    """new_claims() is the nodes of the groups that went Pending -> Reserved between two states of a record."""
    return {str(node) for group in newly_reserved(before, after) if (node := after.status_of(group).node)}


def _revision(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def bound_before_record(pod: Obj, record: Record, record_created_rv: str) -> Finding | None:
    """bound_before_record() is a finding when a group pod's bind is older, in etcd's order, than its record.

    `pod` is the pod as first seen bound, so its resourceVersion is that of
    the bind (or of a write after it, which only makes the check lenient).
    Non-numeric resourceVersions (not etcd) are not compared.
    """
    owner = task_of(pod)
    bound, created = _revision(_meta(pod).get("resourceVersion")), _revision(record_created_rv)
    if owner is None or bound is None or created is None or record.group_of_task(owner[2]) is None or bound >= created:
        return None
    return Finding(
        RECORD_AFTER_BIND,
        f"{_meta(pod).get('name')} (task {owner[2]}) was bound to {node_of(pod)} at resourceVersion {bound}, before record "
        f"{record.key} was created at {created}: the record is created before a group's first pod binds",
        (pod_key(pod), f"record {record.key}"),
    )


def asks_for(pipeline_run: Obj, scheduler_name: str, pods: Iterable[Obj] = ()) -> bool:
    """asks_for() is True when the PipelineRun's pods use scheduler_name.

    Tekton takes a TaskRun pod's schedulerName from the PipelineRun's pod
    template, `spec.taskRunTemplate.podTemplate`, or a task's
    `spec.taskRunSpecs[].podTemplate` over it (`PipelineRun.GetTaskRunSpec`),
    merged over config-defaults' `default-pod-template`. Tekton's webhook
    writes that merge into the stored spec; where no webhook runs (the local
    cluster) the stored spec names no scheduler, and the run's pods (`pods`:
    any the caller has seen, matched by namespace and the
    `tekton.dev/pipelineRun` label) say which one Tekton gave them.
    Example: asks_for({'spec': {'taskRunTemplate': {'podTemplate': {'schedulerName': 's'}}}}, 's') is True.
    """
    spec = pipeline_run.get("spec") or {}
    templates = [((spec.get("taskRunTemplate") or {}).get("podTemplate") or {})]
    templates += [(entry.get("podTemplate") or {}) for entry in spec.get("taskRunSpecs") or [] if isinstance(entry, Mapping)]
    if any(template.get("schedulerName") == scheduler_name for template in templates):
        return True
    namespace, name = _meta(pipeline_run).get("namespace"), _meta(pipeline_run).get("name")
    return any(
        _meta(pod).get("namespace") == namespace
        and (_meta(pod).get("labels") or {}).get(PIPELINE_RUN_LABEL) == name
        and (pod.get("spec") or {}).get("schedulerName") == scheduler_name
        for pod in pods
    )


def scheduler_name_missing(record: Record, pipeline_run: Obj, scheduler_name: str, pods: Iterable[Obj] = ()) -> Finding | None:
    """scheduler_name_missing() is a finding when a record of a run served by scheduler_name does not name it (section 2).

    Only the records of PipelineRuns whose pods use the scheduler under test
    are judged: a record the suite writes for another scheduler's run
    (`foreign_records_untouched`) names that one, and a stale record (another
    uid) belongs to a run that may not have been this scheduler's.
    """
    if _meta(pipeline_run).get("uid") != record.pipeline_run_uid or not asks_for(pipeline_run, scheduler_name, pods):
        return None
    if record.scheduler_name == scheduler_name:
        return None
    found = f"names {record.scheduler_name!r}" if record.scheduler_name is not None else "carries no such annotation"
    return Finding(
        SCHEDULER_NAME_MISSING,
        f"record {record.key} of PipelineRun {record.pipeline_run}, whose pods use schedulerName {scheduler_name}, {found}: "
        f"every record carries {SCHEDULER_ANNOTATION}: <the schedulerName that created it>, from its creation on (docs/contract.md section 2, Several schedulers)",
        (f"record {record.key}",),
    )


# --- volumes (docs/contract.md section 7, Volumes) ---

VOLUMES_SECTION = "docs/contract.md section 7, Volumes"


def _claim_object(namespace: str, claim: str) -> str:
    return f"persistentvolumeclaim {namespace}/{claim}"


def _conflicts(node: Obj, names: Iterable[str], claims: Mapping[str, Obj], volumes_by_name: Mapping[str, Obj]) -> Iterable[tuple[str, Obj, str]]:
    """_conflicts() yields (claim name, volume, volume name) for each named claim Bound to a volume whose node affinity excludes the node."""
    for name in names:
        claim = claims.get(name)
        if claim is None or not volumes.is_bound(claim):
            continue
        volume = volumes_by_name.get(str(volumes.volume_name_of(claim)))
        if volume is None or volumes.volume_admits(volume, node):
            continue
        yield name, volume, str(_meta(volume).get("name"))


def _excluded_by(volume: Obj, node: Obj) -> str:
    selector = volumes.required_node_selector(volume)
    return f"whose node affinity ({volumes.describe_node_selector(selector)}) excludes it: {volumes.describe_node_for(selector, node)}"


def pod_volume_node_conflict(pod: Obj, node: Obj | None, claims: Mapping[str, Obj], volumes_by_name: Mapping[str, Obj]) -> list[Finding]:
    """pod_volume_node_conflict() finds each claim of a bound pod that is Bound to a volume whose node affinity excludes the pod's node.

    `claims` (by name, the pod's namespace) and `volumes_by_name` were read
    after the bind was seen; a claim or volume missing from them was gone
    (nothing to judge), and so is a node the monitor cannot see. A volume's
    node affinity never changes and a Bound claim keeps its volume, so what
    the read shows held at the bind, or the claim was not Bound then
    (pod-bound-before-claim's fault, found here under this name).
    Example: pod `run-build-pod` on n1 mounts `src`, Bound to `pv-src` pinned
    by `kubernetes.io/hostname In [n2]`: one finding naming all four.
    """
    where = node_of(pod)
    if where is None or node is None or _meta(node).get("name") != where:
        return []
    namespace = str(_meta(pod).get("namespace"))
    findings = []
    for name, volume, volume_name in _conflicts(node, volumes.pod_claim_names(pod), claims, volumes_by_name):
        findings.append(Finding(
            POD_VOLUME_NODE_CONFLICT,
            f"{_meta(pod).get('name')} is bound to {where}, but its claim {namespace}/{name} is Bound to PersistentVolume {volume_name}, "
            f"{_excluded_by(volume, node)}: a pod goes only to a node that the volume of each of its Bound claims admits ({VOLUMES_SECTION}, V1)",
            (pod_key(pod), f"node {where}", _claim_object(namespace, name), f"persistentvolume {volume_name}"),
        ))
    return findings


def pod_bound_before_claim(pod: Obj, claims: Mapping[str, Obj]) -> list[Finding]:
    """pod_bound_before_claim() finds each claim of a bound pod that is not Bound, read after the bind was seen.

    A claim only ever goes from unbound to Bound, so one that is not Bound
    after the bind was not Bound at it: a correct scheduler binds a pod only
    once every claim of it is Bound (WaitForFirstConsumer ones after it set
    `volume.kubernetes.io/selected-node` and the provisioner answered), so
    this read can never wrongly flag it. Not judged: a claim gone (not in
    `claims`), and a Lost one (it was Bound; its volume has gone since).
    Example: pod `run-build-pod` bound to n1 while `src` is Pending with
    `volume.kubernetes.io/selected-node: n1`: the scheduler asked for a
    volume and did not wait for it.
    """
    where = node_of(pod)
    if where is None:
        return []
    namespace = str(_meta(pod).get("namespace"))
    findings = []
    for name in volumes.pod_claim_names(pod):
        claim = claims.get(name)
        if claim is None or volumes.is_bound(claim) or volumes.claim_phase(claim) == "Lost":
            continue
        volume, chosen = volumes.volume_name_of(claim), volumes.selected_node(claim)
        annotation = (
            f"{volumes.SELECTED_NODE_ANNOTATION}: {chosen} (a node was chosen for it, but the bind did not wait for the volume)"
            if chosen else f"no {volumes.SELECTED_NODE_ANNOTATION} annotation (no node was chosen for it)"
        )
        findings.append(Finding(
            POD_BOUND_BEFORE_CLAIM,
            f"{_meta(pod).get('name')} was bound to {where} while its claim {namespace}/{name} was not Bound "
            f"(read after the bind: phase {volumes.claim_phase(claim)}, {f'volumeName {volume}' if volume else 'no volumeName'}, {annotation}): "
            f"a pod is bound only once each of its claims is Bound to a volume that admits the node ({VOLUMES_SECTION}, V1, V2)",
            (pod_key(pod), f"node {where}", _claim_object(namespace, name)),
        ))
    return findings


def group_claims(record: Record, group: str, pipeline_run: Obj | None, pods: Iterable[Obj]) -> dict[str, str]:
    """group_claims() is every claim of a record's group, by name, with where the group gets it.

    The group's claims are the `persistentVolumeClaim.claimName` of each
    PipelineRun workspace its tasks use (the record's `workspaces`, and those
    section 4 gives the tasks, should the record leave one out) and every
    claim its bound pods mount (a volumeClaimTemplate's claim is Tekton's to
    name, so its pods name it), but for their ephemeral volumes: an ephemeral
    claim is its pod's alone, goes with it, and is judged at that pod's bind
    (pod-volume-node-conflict); a pod left on a lost node would otherwise pin
    its group to that node. A PipelineRun of another uid is not this
    record's and adds nothing.
    Example: {'src': 'workspace source of PipelineRun ns/run', 'pvc-1a2b': 'mounted by run-build-pod (task build)'}.
    """
    spec = record.group(group)
    found: dict[str, str] = {}
    if pipeline_run is not None and _meta(pipeline_run).get("uid") == record.pipeline_run_uid:
        workspaces = set(spec.workspaces)
        for expected in expected_groups(pipeline_run) or ():
            if expected.tasks & set(spec.tasks):
                workspaces |= expected.workspaces
        for workspace, claim in sorted(volumes.workspace_claim_names(pipeline_run, workspaces).items()):
            found.setdefault(claim, f"workspace {workspace} of PipelineRun {record.namespace}/{record.pipeline_run}")
    for pod in sorted(group_pods_of(pods, record.namespace, record.pipeline_run, spec.tasks), key=lambda p: str(_meta(p).get("name"))):
        if node_of(pod) is None:
            continue
        owner = task_of(pod)
        for claim in volumes.pod_claim_names(pod, ephemeral=False):
            found.setdefault(claim, f"mounted by {_meta(pod).get('name')} (task {owner[2] if owner else '?'})")
    return found


def group_pods_of(pods: Iterable[Obj], namespace: str, pipeline_run: str, tasks: Iterable[str]) -> list[Obj]:
    """group_pods_of() are the pods among `pods` that Tekton made for these tasks of one PipelineRun (every attempt)."""
    wanted = set(tasks)
    return [p for p in pods if (owner := task_of(p)) is not None and owner[:2] == (namespace, pipeline_run) and owner[2] in wanted]


def group_volume_node_conflict(
    record: Record, group: str, pipeline_run: Obj | None, pods: Iterable[Obj], node: Obj | None,
    claims: Mapping[str, Obj], volumes_by_name: Mapping[str, Obj],
) -> list[Finding]:
    """group_volume_node_conflict() finds each claim of a Reserved group that is Bound to a volume whose node affinity excludes the group's node.

    `node` is the group's node as the monitor sees it (a node it cannot see,
    or another node, is not judged); `claims` and `volumes_by_name` were read
    before `record`, so a claim Bound in that read was still Bound, to the
    same volume, when the record was read: both held at once. Not guarded:
    a delayed claim that two runs' groups share, provisioned for the other
    group's node between this group's claim and the read (contended; no
    scenario shares a claim between runs).
    Example: group `source` Reserved on n1 while task `test`'s workspace
    `cache` is bound to claim `cache-pvc`, Bound to `pv-cache` pinned to n2.
    """
    try:
        status = record.status_of(group)
    except KeyError:
        return []
    if status.state is not State.RESERVED or node is None or _meta(node).get("name") != status.node:
        return []
    findings = []
    sources = group_claims(record, group, pipeline_run, pods)
    for name, volume, volume_name in _conflicts(node, sources, claims, volumes_by_name):
        source = sources[name]
        findings.append(Finding(
            GROUP_VOLUME_NODE_CONFLICT,
            f"group {group} of record {record.key} is Reserved on {status.node} (claimGeneration {status.claim_generation}), but its claim "
            f"{record.namespace}/{name} ({source}) is Bound to PersistentVolume {volume_name}, {_excluded_by(volume, node)}: "
            f"a group's claim opens only on a node that admits the volume of every Bound claim of the group, a later task's included "
            f"({VOLUMES_SECTION}, V3, and V5 after node loss)",
            (f"record {record.key}", f"node {status.node}", _claim_object(record.namespace, name), f"persistentvolume {volume_name}"),
        ))
    return findings


def newly_reserved(before: Record | None, after: Record) -> list[str]:
    """newly_reserved() is the groups that went to Reserved between two states of a record (every Reserved one of a new record)."""
    old = {s.name: s for s in before.statuses} if before is not None else {}
    return [
        s.name for s in after.statuses
        if s.state is State.RESERVED and (s.name not in old or old[s.name].state is not State.RESERVED)
    ]
