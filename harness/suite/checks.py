"""Checks: the `*_must_*` helpers scenario bodies assert with.

Each waits with a named timeout and, at every poll, says what it still waits
for, so a failure reads "timed out after 30s (pod_scheduled) waiting for
a-big's pod to be bound: a-big-pod is Pending on no node". Reservation-state
checks return None without asserting when the implementation publishes no
records (placement-only); the report says so.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

from harness.contract import record as contract
from harness.errors import HarnessError
from harness.kube import decoded, present
from harness.quantities import cpu_millis as parse_cpu
from harness.quantities import units_of
from harness.resource_names import amount_text, sort_key
from harness.suite.room_notes import room_note
from harness.suite.run import PIPELINE_RUN_LABEL, ScenarioRun
from harness.waits import NotYet, WaitTimeout, hold_for, wait_for

T = TypeVar("T")

Obj = dict[str, Any]



def wait_checked(run: ScenarioRun, poll: Callable[[], T], **how: Any) -> T:
    """wait_checked() is harness.waits.wait_for with the contract monitor asked first at every poll.

    So a scenario fails on the monitor's first violation, not on whatever
    its own check would time out on later.
    """

    def checked() -> T:
        run.assert_contract()
        return poll()

    return wait_for(checked, **how)


def _hold_for(run: ScenarioRun, check: Callable[[], None], **how: Any) -> None:
    """_hold_for() is harness.waits.hold_for with the contract monitor asked first at every poll."""

    def checked() -> None:
        run.assert_contract()
        check()

    hold_for(checked, **how)


def _describe(pod: Obj) -> str:
    """_describe() is "a-big-pod is Pending on no node (Unschedulable: 0/2 nodes are available: ...)"."""
    node = (pod.get("spec") or {}).get("nodeName") or "no node"
    phase = (pod.get("status") or {}).get("phase") or "no phase"
    described = f"{pod['metadata']['name']} is {phase} on {node}"
    scheduled = next((c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    if scheduled is not None and scheduled.get("status") != "True":
        described += f" ({scheduled.get('reason') or 'no reason'}: {(scheduled.get('message') or 'no message')[:300]})"
    return described


def task_pod_must_exist(run: ScenarioRun, pipeline_run: str, task: str, *, attempt: int = 0) -> Obj:
    """task_pod_must_exist() waits for Tekton to create the task's pod for `attempt` (0 = first)."""

    def poll() -> Obj:
        pods = run.task_pods(pipeline_run, task)
        if len(pods) <= attempt:
            raise NotYet(f"{len(pods)} pod(s) of {pipeline_run}/{task} so far")
        return pods[attempt]

    return wait_checked(run, poll, what=f"attempt {attempt} of {pipeline_run}/{task} to have a pod", timeout="pod_created", timeouts=run.timeouts)


def child_run_must_exist(run: ScenarioRun, pipeline_run: str, task: str, *, kind: str) -> Obj:
    """child_run_must_exist() waits for Tekton to make the CustomRun or child PipelineRun of a task (Tekton's work: the `pod_created` bound)."""

    def poll() -> Obj:
        found = run.child_runs(pipeline_run, task, kind=kind)
        if not found:
            raise NotYet(f"no {kind} of {pipeline_run}/{task} yet")
        return found[0]

    return wait_checked(run, poll, what=f"{pipeline_run}/{task} to have a {kind}", timeout="pod_created", timeouts=run.timeouts)


def task_pod_must_be_bound(run: ScenarioRun, pipeline_run: str, task: str, *, attempt: int = 0, timeout: str = "pod_scheduled") -> Obj:
    """task_pod_must_be_bound() waits for the pod of `attempt` to exist and have a node; it returns the pod.

    `timeout` names the bound: `pod_scheduled`, or `scheduler_failover` for the
    first pod after the scheduler was killed (its successor may first wait out a lease).
    """
    task_pod_must_exist(run, pipeline_run, task, attempt=attempt)
    run.scheduler.check_alive()

    def poll() -> Obj:
        pods = run.task_pods(pipeline_run, task)
        if len(pods) <= attempt:
            # It existed a moment ago (task_pod_must_exist): Tekton deleted it (a timeout, a cancel) before any bind.
            raise AssertionError(f"{pipeline_run}/{task}: the pod of attempt {attempt} was deleted before it was bound")
        pod = pods[attempt]
        if not (pod.get("spec") or {}).get("nodeName"):
            raise NotYet(_describe(pod))
        return pod

    return wait_checked(run, poll, what=f"{pipeline_run}/{task} (attempt {attempt}) to be bound", timeout=timeout, timeouts=run.timeouts)


def _replacement_of(run: ScenarioRun, pipeline_run: str, task: str, gone: Obj) -> Obj:
    old_uid = gone["metadata"]["uid"]
    pods = [p for p in run.task_pods(pipeline_run, task) if p["metadata"]["uid"] != old_uid]
    if not pods:
        raise NotYet(f"{pipeline_run}/{task} has no pod but {gone['metadata']['name']} (uid {old_uid})")
    return pods[0]


def task_pod_must_be_recreated(run: ScenarioRun, pipeline_run: str, task: str, *, gone: Obj) -> Obj:
    """task_pod_must_be_recreated() waits for another pod of the task than `gone` (by uid) to exist; it returns the new pod.

    After an eviction or a lost node Tekton creates the TaskRun's pod again,
    often under the same name, so the old and the new pod are told apart by uid.
    """
    return wait_checked(
        run, lambda: _replacement_of(run, pipeline_run, task, gone),
        what=f"{pipeline_run}/{task} to have a pod in place of {gone['metadata']['name']}", timeout="pod_created", timeouts=run.timeouts,
    )


def task_pod_must_be_replaced(run: ScenarioRun, pipeline_run: str, task: str, *, gone: Obj) -> Obj:
    """task_pod_must_be_replaced() waits for another pod of the task than `gone` (by uid) to exist, then to be bound; it returns the new pod."""
    task_pod_must_be_recreated(run, pipeline_run, task, gone=gone)
    run.scheduler.check_alive()

    def bound() -> Obj:
        pod = _replacement_of(run, pipeline_run, task, gone)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise NotYet(_describe(pod))
        return pod

    return wait_checked(run, bound, what=f"the replacement of {pipeline_run}/{task} to be bound", timeout="pod_scheduled", timeouts=run.timeouts)


def task_pod_must_stay_pending(run: ScenarioRun, pipeline_run: str, task: str, *, duration: str = "pod_stays_pending") -> Obj:
    """task_pod_must_stay_pending() asserts the pod is not bound over the whole `duration` window (a named timeout)."""
    task_pod_must_exist(run, pipeline_run, task)
    return _must_stay_unbound(run, lambda: run.task_pods(pipeline_run, task)[0], what=f"{pipeline_run}/{task}", duration=duration)


def _must_stay_unbound(run: ScenarioRun, read: Callable[[], Obj], *, what: str, duration: str, why: str = "") -> Obj:
    """_must_stay_unbound() holds, for `duration`, that the pod `read()` returns is not bound; it returns the pod as it is then."""

    def unbound() -> None:
        run.scheduler.check_alive()
        pod = read()
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            raise NotYet(f"{what} was bound{', though ' + why if why else ''}: {_describe(pod)}" + room_note(run, node, when=f"{what} was bound"))

    _hold_for(run, unbound, what=f"{what} staying unbound", duration=duration, timeouts=run.timeouts)
    return read()


def pod_must_stay_pending(run: ScenarioRun, pod_name: str, *, why: str, duration: str = "pod_stays_pending") -> Obj:
    """pod_must_stay_pending() asserts a plain pod is not bound over the whole `duration` window; `why` says why it must wait."""
    return _must_stay_unbound(run, lambda: run.pod(pod_name), what=f"pod {pod_name}", duration=duration, why=why)


def pod_must_be_unschedulable(run: ScenarioRun, pod_name: str, *, why: str) -> Obj:
    """pod_must_be_unschedulable() waits (`pod_scheduled`) for the unbound pod's `PodScheduled` condition to be False, reason Unschedulable.

    It is what kube-scheduler writes on a pod no node can take, and what a user
    reads (`kubectl describe pod`): a pod that can never run must say so. The
    message's words are the scheduler's own and are not compared. `why` says why
    no node can take the pod, for the failure a bind makes.
    """

    def said() -> Obj:
        pod = run.pod(pod_name)
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            raise AssertionError(f"pod {pod_name} was bound to {node}, though {why}" + room_note(run, node, when=f"pod {pod_name} was bound"))
        conditions = (pod.get("status") or {}).get("conditions") or []
        scheduled = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if scheduled is None or scheduled.get("status") != "False" or scheduled.get("reason") != "Unschedulable":
            raise NotYet(f"pod {pod_name} has PodScheduled {scheduled or 'not set'}")
        return pod

    return wait_checked(run, said, what=f"pod {pod_name} to be marked Unschedulable", timeout="pod_scheduled", timeouts=run.timeouts)


def pod_must_be_running(run: ScenarioRun, pod_name: str) -> Obj:
    def poll() -> Obj:
        pod = run.pod(pod_name)
        if (pod.get("status") or {}).get("phase") != "Running":
            raise NotYet(f"{pod_name} is {(pod.get('status') or {}).get('phase')}")
        return pod

    return wait_checked(run, poll, what=f"{pod_name} to run", timeout="pod_scheduled", timeouts=run.timeouts)


def pod_must_be_terminating(run: ScenarioRun, pod_name: str) -> Obj:
    """pod_must_be_terminating() waits until the pod has a deletionTimestamp and is still Running (held by a finalizer)."""

    def poll() -> Obj:
        pod = run.pod(pod_name)
        phase = (pod.get("status") or {}).get("phase")
        if not (pod.get("metadata") or {}).get("deletionTimestamp") or phase != "Running":
            raise NotYet(f"{pod_name} is {phase}, deletionTimestamp {(pod.get('metadata') or {}).get('deletionTimestamp')}")
        return pod

    return wait_checked(run, poll, what=f"{pod_name} to be Terminating and still Running", timeout="pod_running", timeouts=run.timeouts)


def pinned_pod_name(run: ScenarioRun, role: str, node: str) -> str:
    """pinned_pod_name(run, 'filler', n1) == run.named('filler-1'): a pod pinned to a pool node, named by the node's place in the pool.

    Not by the node's name: kind's workers rescon-worker2 and rescon-worker12 end alike, and one pool may hold both.
    """
    return run.named(f"{role}-{run.node_names.index(node)}")


def fillers_must_run(run: ScenarioRun, shares: dict[str, float]) -> None:
    """fillers_must_run(run, {n1: 0.25}) pins a held filler taking that share of a node's CPU on each node (pinned_pod_name), and waits until all run."""
    for node, share in shares.items():
        run.apply("filler", name=pinned_pod_name(run, "filler", node), node=node, share=share)
    for node in shares:
        pod_must_be_running(run, pinned_pod_name(run, "filler", node))


def pod_must_be_finished(run: ScenarioRun, pod_name: str) -> str:
    """pod_must_be_finished() waits for Succeeded or Failed and returns the phase."""

    def poll() -> str:
        pod = run.kube.core.read_namespaced_pod(pod_name, run.namespace)
        phase = str(present(pod.status).phase)
        if phase not in ("Succeeded", "Failed"):
            raise NotYet(f"{pod_name} is {phase}")
        return phase

    return wait_checked(run, poll, what=f"{pod_name} to finish", timeout="taskrun_done", timeouts=run.timeouts)


def pipelinerun_must_succeed(run: ScenarioRun, name: str) -> Obj:
    """pipelinerun_must_succeed() waits for the PipelineRun to finish and asserts it succeeded."""
    return pipelinerun_must_end_with(run, name, status="True")


def pipelinerun_must_finish(run: ScenarioRun, name: str, *, timeout: str = "pipelinerun_done") -> Obj:
    """pipelinerun_must_finish() waits for the PipelineRun's end, however it ended, and returns it."""

    def poll() -> Obj:
        obj = run.pipeline_run(name)
        condition = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)
        if condition is None or condition.get("status") == "Unknown":
            reason = condition.get("reason") if condition else "not started"
            raise NotYet(f"PipelineRun {name} is {reason}")
        return obj

    return wait_checked(run, poll, what=f"PipelineRun {name} to finish", timeout=timeout, timeouts=run.timeouts)


def pipelinerun_must_end_with(run: ScenarioRun, name: str, *, status: str, reason: str | None = None) -> Obj:
    """pipelinerun_must_end_with(run, 'slow', status='False', reason='PipelineRunTimeout') waits for the end, then asserts how it ended."""
    obj = pipelinerun_must_finish(run, name)
    condition = next(c for c in obj["status"]["conditions"] if c.get("type") == "Succeeded")
    ended = (condition.get("status"), condition.get("reason"))
    assert ended[0] == status and (reason is None or ended[1] == reason), (
        f"PipelineRun {name} ended {ended[0]} ({ended[1]}: {condition.get('message')}), expected {status}{f' ({reason})' if reason else ''}"
    )
    return obj


def group_status_now(run: ScenarioRun, pipeline_run: str, task: str) -> tuple[contract.Record, contract.GroupSpec, contract.GroupStatus]:
    """group_status_now() is the record of `pipeline_run`, the group holding `task` and that group's status, read now.

    NotYet while the record or the group is not there, so a wait polls on and a hold fails with the reason.
    """
    record = run.record(pipeline_run)
    if record is None:
        raise NotYet(f"there is no ReservationRecord {run.namespace}/{pipeline_run}")
    group = record.group_of_task(task)
    if group is None:
        raise NotYet(f"record {pipeline_run} has no group with task {task!r} (groups: {[g.tasks for g in record.groups]})")
    return record, group, record.status_of(group.name)


def group_must_be(
    run: ScenarioRun,
    pipeline_run: str,
    task: str,
    *,
    state: contract.State,
    node: str | None = None,
    claim_generation: int | None = None,
) -> contract.Record | None:
    """group_must_be() waits for the group holding `task` to reach `state` (and `node`, `claim_generation`, if given).

    Returns the record, or None without checking anything when the
    implementation is placement-only.
    """
    if not run.checks_records:
        return None

    def poll() -> contract.Record:
        record, group, status = group_status_now(run, pipeline_run, task)
        if status.state != state:
            raise NotYet(f"group {group.name} is {status.state.value} on {status.node or 'no node'}")
        if node is not None and status.node != node:
            raise NotYet(f"group {group.name} is {status.state.value} on {status.node}, not {node}")
        if claim_generation is not None and status.claim_generation != claim_generation:
            raise NotYet(f"group {group.name} is {status.state.value} at claimGeneration {status.claim_generation}, not {claim_generation}")
        return record

    where = f" on {node}" if node else ""
    try:
        return wait_checked(run, poll, what=f"the group of {pipeline_run}/{task} to be {state.value}{where}", timeout="record_state", timeouts=run.timeouts)
    except WaitTimeout as err:
        if not run.records():
            raise WaitTimeout(f"{err}; {NO_RECORDS_HINT}") from None
        raise


#: Said when a scenario found no ReservationRecord at all in its namespace.
NO_RECORDS_HINT = "no ReservationRecord was ever published here: if your scheduler does not publish them, pass --exempt-features ReservationRecords"


def task_must_hold_its_group(run: ScenarioRun, pipeline_run: str, task: str) -> tuple[Obj, str, contract.Record | None]:
    """task_must_hold_its_group() is the opening of the peak scenarios: the task's pod bound and Running, its group Reserved there.

    Returns the pod, its node and the record (None when placement-only).
    """
    pod = task_pod_must_be_bound(run, pipeline_run, task)
    node = str(pod["spec"]["nodeName"])
    pod_must_be_running(run, pod["metadata"]["name"])
    record = group_must_be(run, pipeline_run, task, state=contract.State.RESERVED, node=node)
    return pod, node, record


def group_must_have(
    run: ScenarioRun,
    record: contract.Record | None,
    task: str,
    *,
    tasks: set[str],
    workspaces: set[str],
    peak_cpu_millis: int,
    peak_memory_bytes: int,
    peak_other: Mapping[str, int | str] | None = None,
) -> None:
    """group_must_have() asserts the group's tasks, its workspaces and its peak (CPU in millicores, memory in bytes, exact).

    `peak_other` is every other resource the peak must name, each exact: an
    int in the resource's unit (bytes for ephemeral-storage and hugepages, a
    count for extended resources) or a quantity string, e.g.
    `peak_other={"example.com/gpu": 1, "ephemeral-storage": "6Gi"}`. The peak
    must name no other resource: one the group's pods request and the record
    leaves out fails, as does one they do not request.

    Every expected value is computed by hand from the fixture in the scenario
    itself (docs/contract.md sections 4 and 6), never by an implementation's code.
    """
    if record is None:
        return
    group = record.group_of_task(task)
    assert group is not None, f"record {record.key} has no group with task {task!r}"
    # Every field is compared before failing, so one message names all that differ.
    wrong = []
    if set(group.tasks) != tasks:
        wrong.append(f"has tasks {sorted(group.tasks)}, expected {sorted(tasks)}")
    if set(group.workspaces) != workspaces:
        wrong.append(
            f"lists workspaces {sorted(group.workspaces)}, expected {sorted(workspaces)}: "
            "a group lists exactly the co-locating workspaces its tasks use (docs/contract.md section 4)"
        )
    if group.peak_cpu_millis != peak_cpu_millis:
        wrong.append(f"reserves a peak of {group.peak_cpu_millis}m CPU, expected {peak_cpu_millis}m")
    if group.peak_memory_bytes != peak_memory_bytes:
        wrong.append(f"reserves a peak of {group.peak_memory_bytes} bytes of memory, expected {peak_memory_bytes}")
    wrong += other_peak_differences(dict(group.peak_others), {r: units_of(r, v) for r, v in (peak_other or {}).items()})
    assert not wrong, f"group {group.name} " + "; it ".join(wrong)


def other_peak_differences(found: Mapping[str, int], expected: Mapping[str, int]) -> list[str]:
    """other_peak_differences() says how a peak's resources other than cpu and memory differ from those expected ([] if not at all).

    Example: found {} and expected {"example.com/gpu": 1} is ["reserves no example.com/gpu, expected
    example.com/gpu 1: a peak names every resource its group's pods request (docs/contract.md section 6)"].
    """
    wrong = []
    for resource in sorted({*found, *expected} - {"cpu", "memory"}, key=sort_key):
        have, want = found.get(resource, 0), expected.get(resource, 0)
        if have == want:
            continue
        if not have:
            wrong.append(f"reserves no {resource}, expected {amount_text(resource, want)}: "
                         "a peak names every resource its group's pods request (docs/contract.md section 6)")
        elif not want:
            wrong.append(f"reserves a peak of {amount_text(resource, have)}, expected none: no pod of the group requests {resource}")
        else:
            wrong.append(f"reserves a peak of {amount_text(resource, have)}, expected {amount_text(resource, want)}")
    return wrong


#: The node a binding probe targets: it does not exist, so a probe that gets through binds to nothing.
PROBE_NODE = "rescon-binding-probe-nowhere"


def binding_must_be_denied(run: ScenarioRun) -> None:
    """binding_must_be_denied() waits until an injected admission fault really denies bindings here.

    Admission policies take effect a moment after they are created; a probe
    pod (plain, never scheduled) is bound to a node that does not exist
    until the API server refuses.
    """
    import kubernetes

    def create_probe(name: str) -> None:
        run.kube.core.create_namespaced_pod(run.namespace, probe_pod(name, kind="binding"))

    attempt = [0]

    def poll() -> None:
        name = run.named(f"binding-probe-{attempt[0]}")
        attempt[0] += 1
        create_probe(name)
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"apiVersion": "v1", "kind": "Node", "name": PROBE_NODE}}
        try:
            run.kube.core.create_namespaced_pod_binding(name, run.namespace, kubernetes.client.V1Binding.model_validate(body), _preload_content=False)
        except kubernetes.client.ApiException as err:
            if err.status in (403, 422):
                return
            raise
        raise NotYet(f"probe pod {name} could still be bound")

    try:
        wait_checked(run, poll, what="the binding fault to take effect", timeout="fault_active", timeouts=run.timeouts)
    finally:
        run.kube.core.delete_collection_namespaced_pod(run.namespace, label_selector=f"{PROBE_LABEL}=binding", grace_period_seconds=0)


def taskrun_must_be_done(run: ScenarioRun, pipeline_run: str, task: str) -> Obj:
    """taskrun_must_be_done() waits for the task's TaskRun to have a terminal Succeeded condition."""

    def poll() -> Obj:
        items = run.task_runs(pipeline_run, task)
        if not items:
            raise NotYet(f"no TaskRun for {pipeline_run}/{task} yet")
        condition = next((c for c in (items[0].get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)
        if condition is None or condition.get("status") == "Unknown":
            raise NotYet(f"TaskRun {items[0]['metadata']['name']} is {condition.get('reason') if condition else 'not started'}")
        found: Obj = items[0]
        return found

    return wait_checked(run, poll, what=f"the TaskRun of {pipeline_run}/{task} to finish", timeout="taskrun_done", timeouts=run.timeouts)


def pipelinerun_must_list_task(run: ScenarioRun, pipeline_run: str, task: str) -> None:
    """pipelinerun_must_list_task() waits until the PipelineRun's status.childReferences names the task's TaskRun.

    Tekton cancels only the TaskRuns it already lists there, so a scenario
    that cancels waits for this first; otherwise it would judge a scheduler
    on a run whose task Tekton never cancelled.
    """

    def poll() -> None:
        children = (run.pipeline_run(pipeline_run).get("status") or {}).get("childReferences") or []
        if not any(child.get("pipelineTaskName") == task for child in children):
            raise NotYet(f"PipelineRun {pipeline_run} lists {[c.get('pipelineTaskName') for c in children]} in childReferences")

    wait_checked(run, poll, what=f"PipelineRun {pipeline_run} to list the TaskRun of {task}", timeout="pod_created", timeouts=run.timeouts)


def task_must_be_skipped(run: ScenarioRun, pipeline_run: str, task: str, *, reason: str) -> Obj:
    """task_must_be_skipped() waits until the PipelineRun lists `task` in status.skippedTasks, and asserts Tekton's skipping `reason`.

    Tekton decides a guarded task's fate once its parents are done (Tekton's
    work, bounded like the creation of a task's pod); the reason says the
    fixture's guard did it ("When Expressions evaluated to false"), not a
    failure upstream. Returns the PipelineRun.
    """

    def poll() -> Obj:
        found = run.pipeline_run(pipeline_run)
        skipped = {s.get("name"): s for s in (found.get("status") or {}).get("skippedTasks") or []}
        if task not in skipped:
            raise NotYet(f"PipelineRun {pipeline_run} skips {sorted(str(n) for n in skipped)}")
        assert skipped[task].get("reason") == reason, f"Tekton skipped {task} because {skipped[task].get('reason')!r}, not {reason!r}"
        return found

    return wait_checked(run, poll, what=f"PipelineRun {pipeline_run} to skip {task}", timeout="pod_created", timeouts=run.timeouts)


def pod_requests_must_drop_to(run: ScenarioRun, pod_name: str, *, cpu_millis: int) -> Obj:
    """pod_requests_must_drop_to() waits until no container of the pod requests more CPU than the floor."""
    def poll() -> Obj:
        pod = run.pod(pod_name)
        if (pod.get("status") or {}).get("phase") != "Running":
            raise AssertionError(f"{pod_name} is {pod['status']['phase']}: it should still be lingering")
        above = {
            c["name"]: (c.get("resources") or {}).get("requests", {}).get("cpu")
            for c in pod["spec"]["containers"]
            if parse_cpu((c.get("resources") or {}).get("requests", {}).get("cpu") or 0) > cpu_millis
        }
        if above:
            raise NotYet(f"{pod_name} still requests {above} (floor {cpu_millis}m)")
        return pod

    return wait_checked(run, poll, what=f"{pod_name}'s requests to drop to {cpu_millis}m", timeout="resize_done", timeouts=run.timeouts)


def claim_generation_of(record: contract.Record | None, task: str) -> int | None:
    """claim_generation_of() is the claimGeneration of the group holding `task` (None when placement-only)."""
    if record is None:
        return None
    group = record.group_of_task(task)
    assert group is not None, f"record {record.key} has no group with task {task!r}"
    return record.status_of(group.name).claim_generation


def task_run_of_pod_must_be_done(run: ScenarioRun, pod: Obj) -> Obj:
    """task_run_of_pod_must_be_done() waits for the TaskRun that owns `pod` (one matrix combination, say) to be terminal."""
    owner = next((o["name"] for o in (pod["metadata"].get("ownerReferences") or []) if o.get("kind") == "TaskRun"), None)
    if owner is None:
        raise HarnessError(f"pod {pod['metadata']['name']} has no TaskRun owner: it is not a Tekton task pod")

    def poll() -> Obj:
        task_run = run.task_run(owner)
        condition = next((c for c in (task_run.get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)
        if condition is None or condition.get("status") == "Unknown":
            raise NotYet(f"TaskRun {owner} is {condition.get('reason') if condition else 'not started'}")
        return task_run

    return wait_checked(run, poll, what=f"TaskRun {owner} to finish", timeout="taskrun_done", timeouts=run.timeouts)


def pod_of_some_run_must_be_bound(run: ScenarioRun, pipeline_runs: list[str]) -> Obj:
    """pod_of_some_run_must_be_bound() waits until a pod of one of `pipeline_runs` is bound to a node, and returns it."""
    wanted = set(pipeline_runs)

    def poll() -> Obj:
        for pod in run.pods():
            labels = pod["metadata"].get("labels") or {}
            if labels.get(PIPELINE_RUN_LABEL) in wanted and (pod.get("spec") or {}).get("nodeName"):
                return pod
        raise NotYet(f"no pod of {', '.join(sorted(wanted))} is bound yet")

    return wait_checked(run, poll, what=f"a pod of {', '.join(sorted(wanted))} to be bound", timeout="first_pod_bound", timeouts=run.timeouts)


def pipelinerun_must_stay_pending(run: ScenarioRun, name: str, *, duration: str = "run_pending") -> None:
    """pipelinerun_must_stay_pending() asserts Tekton leaves a PipelineRunPending run alone for the `duration` window.

    No start time, no TaskRun: the run's time has not begun (Tekton counts
    `timeouts.pipeline` from status.startTime, set when the run starts).
    """

    def untouched() -> None:
        obj = run.pipeline_run(name)
        status = obj.get("status") or {}
        if (obj.get("spec") or {}).get("status") != "PipelineRunPending":
            raise NotYet(f"PipelineRun {name} is no longer PipelineRunPending (spec.status {(obj.get('spec') or {}).get('status')!r})")
        if status.get("startTime") or status.get("childReferences"):
            raise NotYet(f"Tekton started PipelineRun {name} while it was PipelineRunPending (startTime {status.get('startTime')!r})")

    _hold_for(run, untouched, what=f"PipelineRun {name} staying PipelineRunPending", duration=duration, timeouts=run.timeouts)


def record_must_lose_its_active_label(run: ScenarioRun, pipeline_run: str) -> contract.Record | None:
    """record_must_lose_its_active_label() waits, within `label_converges`, for the record to lack `rescon.dev/active: "true"`.

    For a record with no Reserved group (section 9: active while any group is
    Reserved, Pending ones holding nothing). Returns the record (None when placement-only).
    """
    if not run.checks_records:
        return None

    def poll() -> contract.Record:
        record = run.record(pipeline_run)
        if record is None:
            raise NotYet(f"no record of {pipeline_run}")
        reserved = [s.name for s in record.reserved]
        assert not reserved, f"record {record.key} has Reserved groups {reserved}: this check is for a record with none"
        if record.active_label:
            states = ", ".join(f"{s.name} {s.state.value}" for s in record.statuses)
            raise NotYet(f'record {record.key} is labelled rescon.dev/active "true" with no group Reserved ({states})')
        return record

    return wait_checked(run, poll, what=f"the record of {pipeline_run} to lose its active label", timeout="label_converges", timeouts=run.timeouts)


def group_must_stay(run: ScenarioRun, pipeline_run: str, task: str, *, node: str, holders: tuple[Obj, ...] = ()) -> None:
    """group_must_stay() asserts the group holding `task` stays Reserved on `node`, with `holders` among its holders.

    Watched for the whole `group_stays` window (harness.waits.hold_for): a
    release in a retry gap, or a rollback that drops another pod's claim,
    breaks it. Placement-only implementations are not checked.
    """
    if not run.checks_records:
        return
    wanted = {pod["metadata"]["uid"]: pod["metadata"]["name"] for pod in holders}

    def check() -> None:
        _, group, status = group_status_now(run, pipeline_run, task)
        if status.state != contract.State.RESERVED or status.node != node:
            raise NotYet(f"group {group.name} is {status.state.value} on {status.node or 'no node'}, not Reserved on {node}")
        missing = sorted(name for uid, name in wanted.items() if uid not in status.holders)
        if missing:
            raise NotYet(f"group {group.name} lost its holder(s) {missing} (holders now {sorted(status.holders)})")

    _hold_for(run, check, what=f"the group of {pipeline_run}/{task} Reserved on {node}", duration="group_stays", timeouts=run.timeouts)


def group_must_be_released_or_gone(run: ScenarioRun, pipeline_run: str, task: str) -> None:
    """group_must_be_released_or_gone() waits until the group holding `task` is Released or its record is deleted.

    A record garbage-collected with its PipelineRun releases all its groups
    (docs/contract.md, section 8). Placement-only implementations are not checked.
    """
    if not run.checks_records:
        return

    def poll() -> None:
        record = run.record(pipeline_run)
        if record is None:
            return
        group = record.group_of_task(task)
        if group is None:
            raise NotYet(f"record {pipeline_run} has no group with task {task!r}")
        status = record.status_of(group.name)
        if status.state != contract.State.RELEASED:
            raise NotYet(f"group {group.name} is {status.state.value} on {status.node or 'no node'}")

    wait_checked(run, poll, what=f"the group of {pipeline_run}/{task} to be Released or its record gone", timeout="record_state", timeouts=run.timeouts)


def task_pod_must_not_exist(run: ScenarioRun, pipeline_run: str, task: str, *, attempt: int) -> None:
    """task_pod_must_not_exist() asserts Tekton has not created the pod of `attempt` yet (a scenario holds it back)."""
    pods = run.task_pods(pipeline_run, task)
    assert len(pods) <= attempt, (
        f"{pods[attempt]['metadata']['name']} exists although the scenario's ResourceQuota should hold it back: the fault did not take effect"
    )


#: The label of the plain pods that probe what this namespace's admission does, its value the probe's kind.
PROBE_LABEL = "rescon.dev/probe"


def probe_pod(name: str, *, kind: str, labels: dict[str, str] | None = None, spec: dict[str, Any] | None = None) -> Any:
    """probe_pod('p-1', kind='creation') is a plain pod no scheduler takes, labelled PROBE_LABEL=kind, with `labels` and `spec` added.

    Admission probes create it (or dry-run it) to see what the API server's admission does to a new pod.
    """
    import kubernetes

    return kubernetes.client.V1Pod.model_validate({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {PROBE_LABEL: kind, **(labels or {})}},
        "spec": {"schedulerName": "rescon-nobody", "containers": [{"name": "c", "image": "busybox:1.37"}], **(spec or {})},
    })


def _probe_pod_creation(run: ScenarioRun, name: str) -> str | None:
    """Creates and deletes a probe pod; returns None when it was admitted, else the API's refusal."""
    import kubernetes

    try:
        run.kube.core.create_namespaced_pod(run.namespace, probe_pod(name, kind="creation"))
    except kubernetes.client.ApiException as err:
        if err.status == 403:
            return str(err.body or err.reason)
        raise
    run.kube.core.delete_namespaced_pod(name, run.namespace, grace_period_seconds=0)
    return None


def pod_creation_must_be_denied(run: ScenarioRun) -> None:
    """pod_creation_must_be_denied() waits until the scenario's ResourceQuota refuses new pods here.

    Tekton retries a pod creation refused with "exceeded quota" instead of
    failing the TaskRun, so a quota is how a scenario holds a pod back
    (a retry, a replacement) for as long as it likes.
    """
    attempt = [0]

    def poll() -> None:
        attempt[0] += 1
        refusal = _probe_pod_creation(run, run.named(f"creation-probe-{attempt[0]}"))
        if refusal is None or "exceeded quota" not in refusal:
            raise NotYet(f"a probe pod was {'admitted' if refusal is None else 'refused for another reason: ' + refusal[:200]}")

    wait_checked(run, poll, what="the ResourceQuota to refuse new pods", timeout="fault_active", timeouts=run.timeouts)


def pod_creation_must_be_allowed(run: ScenarioRun) -> None:
    """pod_creation_must_be_allowed() waits until new pods are admitted again, after the scenario lifted its quota."""
    attempt = [0]

    def poll() -> None:
        attempt[0] += 1
        refusal = _probe_pod_creation(run, run.named(f"creation-probe-lifted-{attempt[0]}"))
        if refusal is not None:
            raise NotYet(f"a probe pod was refused: {refusal[:200]}")

    wait_checked(run, poll, what="new pods to be admitted again", timeout="fault_active", timeouts=run.timeouts)


def _b_note(run: ScenarioRun, b_pod: Obj) -> str:
    """_b_note() is the arithmetic of the node B went to, where A's peak should have kept it out (harness.suite.room_notes)."""
    return room_note(run, b_pod["spec"]["nodeName"], when=f"{b_pod['metadata']['name']} was bound")


def b_must_land_beside_the_filler(run: ScenarioRun, prefix: str, *, a_node: str, why: str) -> Obj:
    """b_must_land_beside_the_filler() is the middle of the peak scenarios: B must go to the node A did not take.

    It pins `<prefix>-filler` to the other node, so that a scheduler that
    under-counts A's peak finds A's node the emptier one, applies `<prefix>-b`
    (PipelineRun `run.named("b")`) and asserts that B's pod binds beside the
    filler; `why` says what B would break on A's node. Returns B's pod.
    """
    other = next(n for n in run.node_names if n != a_node)
    run.apply(f"{prefix}-filler", node=other)
    run.apply(f"{prefix}-b")
    b_pod = task_pod_must_be_bound(run, run.named("b"), "only")
    assert b_pod["spec"]["nodeName"] == other, f"B landed on {b_pod['spec']['nodeName']}, {why}: it should be on {other}" + _b_note(run, b_pod)
    return b_pod


def b_must_go_beside_a_filler(run: ScenarioRun, *, a_node: str, b_fixture: str, b_run: str, share: float, why: str) -> Obj:
    """b_must_go_beside_a_filler() pins the `filler` fixture taking `share` of the node A did not take, applies `b_fixture`, and asserts B's pod binds beside it.

    The filler makes A's node the emptier one to a scheduler that under-counts
    A's peak; `b_run` is B's PipelineRun, whose one task is `only`; `why` says
    what B would break on A's node. Returns B's pod.
    """
    other = next(n for n in run.node_names if n != a_node)
    filler = run.named("filler")
    run.apply("filler", name=filler, node=other, share=share)
    pod_must_be_running(run, filler)
    run.apply(b_fixture)
    b_pod = task_pod_must_be_bound(run, b_run, "only")
    assert b_pod["spec"]["nodeName"] == other, f"{b_run} landed on {b_pod['spec']['nodeName']}, {why}: it should be on {other}" + _b_note(run, b_pod)
    return b_pod


def matrixed_pods_must_run_on(run: ScenarioRun, pipeline_run: str, task: str, *, combinations: int, node: str) -> list[Obj]:
    """matrixed_pods_must_run_on() asserts that each of a matrixed task's pods binds to its group's node; returns them.

    task_pods() sorts a task's pods by attempt, then name: with no retries,
    index i is combination i's pod.
    """
    pods = []
    for combination in range(combinations):
        pod = task_pod_must_be_bound(run, pipeline_run, task, attempt=combination)
        assert pod["spec"]["nodeName"] == node, (
            f"{pod['metadata']['name']}, one of {pipeline_run}'s matrixed {task} pods, ran on {pod['spec']['nodeName']}, not on its group's node {node}"
        )
        pods.append(pod)
    return pods


def matrixed_pods_must_bind_one_by_one(run: ScenarioRun, pipeline_run: str, task: str, *, combinations: int, node: str) -> None:
    """matrixed_pods_must_bind_one_by_one() asserts that a matrixed task's pods run one at a time on `node`, each released in turn.

    The pods must be held (sim.rescon.dev/hold): while one runs, the others
    stay unbound for the `pod_stays_pending` window; releasing it lets the next
    one bind.
    """
    ended: set[str] = set()
    for turn in range(combinations):

        def one_bound() -> Obj:
            pods = run.task_pods(pipeline_run, task)
            bound = [p for p in pods if p["metadata"]["name"] not in ended and p["spec"].get("nodeName")]
            if len(pods) < combinations or not bound:
                raise NotYet(f"{len(pods)} of {combinations} pods of {pipeline_run}/{task}, none of the {combinations - turn} left bound yet")
            return bound[0]

        pod = wait_checked(run, one_bound, what=f"a pod of {pipeline_run}/{task} to bind (turn {turn + 1})", timeout="pod_scheduled", timeouts=run.timeouts)
        assert pod["spec"]["nodeName"] == node, f"{pod['metadata']['name']} ran on {pod['spec']['nodeName']}, not on its group's node {node}"
        pod_must_be_running(run, pod["metadata"]["name"])

        def only_it_bound() -> None:
            others = [p for p in run.task_pods(pipeline_run, task) if p["metadata"]["name"] not in ended | {pod["metadata"]["name"]}]
            bound = [_describe(p) for p in others if p["spec"].get("nodeName")]
            if bound:
                raise NotYet(
                    f"while {pod['metadata']['name']} runs, {', '.join(bound)}: only one of {pipeline_run}/{task} fits at a time"
                    + room_note(run, node, when=f"a second pod of {pipeline_run}/{task} was bound")
                )

        if turn < combinations - 1:
            _hold_for(run, only_it_bound, what=f"the rest of {pipeline_run}/{task} staying unbound", duration="pod_stays_pending", timeouts=run.timeouts)
        run.release_pod(pod["metadata"]["name"])
        ended.add(pod["metadata"]["name"])


def claim_must_open_on(run: ScenarioRun, pipeline_run: str, task: str, *, node: str, why: str) -> contract.Record | None:
    """claim_must_open_on() waits for `task`'s pod to hold its group and asserts the claim opened on `node`; returns the record.

    `why` says why only `node` will do, for the failure message:
    claim_must_open_on(run, "g", "build", node=n1, why=f"only {n1} has host port 5000 free").
    """
    _, at, record = task_must_hold_its_group(run, pipeline_run, task)
    assert at == node, f"{pipeline_run}/{task} opened its group's claim on {at}: {why}" + room_note(run, at, when=f"{pipeline_run}/{task} opened its claim")
    return record


def group_must_end_on_its_node(run: ScenarioRun, pipeline_run: str, *, held: Obj, next_task: str, node: str, others: tuple[Obj, ...] = ()) -> Obj:
    """group_must_end_on_its_node() releases the held task, asserts the group's next task lands on `node`, and lets every run finish.

    `others` are held pods of other PipelineRuns (each the `only` task of its run), released once the group is done.
    Returns the next task's pod as it was when bound (a scheduler with Resize may lower its requests once its TaskRun is done).
    """
    run.release_pod(held["metadata"]["name"])
    following = task_pod_must_be_bound(run, pipeline_run, next_task)
    assert following["spec"]["nodeName"] == node, f"{pipeline_run}'s {next_task} ran on {following['spec']['nodeName']}, not on its group's node {node}"
    for pod in others:
        run.release_pod(pod["metadata"]["name"])
    pipelinerun_must_succeed(run, pipeline_run)
    for pod in others:
        pipelinerun_must_succeed(run, pod["metadata"]["labels"]["tekton.dev/pipelineRun"])
    return following


def pod_must_be_bound(run: ScenarioRun, name: str, *, timeout: str = "pod_scheduled") -> Obj:
    """pod_must_be_bound() waits for a pod the scenario made to have a node; it returns the pod.

    `timeout` names the bound: `pod_scheduled`, or `parked_pod_scheduled` for
    a pod that waited for its PipelineRun's plan.
    """
    run.scheduler.check_alive()

    def poll() -> Obj:
        pod = run.pod(name)
        if not (pod.get("spec") or {}).get("nodeName"):
            raise NotYet(_describe(pod))
        return pod

    return wait_checked(run, poll, what=f"pod {name} to be bound", timeout=timeout, timeouts=run.timeouts)


def plain_pods_must_bind(run: ScenarioRun, names: tuple[str, ...], *, count: int) -> list[Obj]:
    """plain_pods_must_bind() waits until `count` of the named plain pods have a node; it returns those pods.

    Which of them bind is the scheduler's choice; that no more than `count`
    bind is the contract monitor's to judge (a further one over-commits a node).
    """
    run.scheduler.check_alive()

    def poll() -> list[Obj]:
        pods = [run.pod(name) for name in names]
        bound = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
        if len(bound) < count:
            raise NotYet(f"{len(bound)} of {len(names)} bound: " + ", ".join(_describe(p) for p in pods))
        return bound

    return wait_checked(run, poll, what=f"{count} of {', '.join(names)} to be bound", timeout="pod_scheduled", timeouts=run.timeouts)


def pods_must_be_finished(run: ScenarioRun, names: tuple[str, ...]) -> None:
    """pods_must_be_finished() waits until every named pod is Succeeded or Failed (fillers that end on their own)."""

    def poll() -> None:
        pending = [_describe(p) for p in (run.pod(n) for n in names) if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        if pending:
            raise NotYet(", ".join(pending))

    wait_checked(run, poll, what=f"{', '.join(names)} to finish", timeout="taskrun_done", timeouts=run.timeouts)


def pods_must_be_gone(run: ScenarioRun, names: tuple[str, ...]) -> None:
    """pods_must_be_gone() waits until none of the named pods exists any more (after the scenario deleted them)."""

    def poll() -> None:
        left = sorted({p["metadata"]["name"] for p in run.pods()} & set(names))
        if left:
            raise NotYet(f"{left} still exist")

    wait_checked(run, poll, what=f"{', '.join(names)} to be deleted", timeout="pod_scheduled", timeouts=run.timeouts)


def claim_must_be_forced_onto_the_last_node(run: ScenarioRun) -> str:
    """claim_must_be_forced_onto_the_last_node() pins 4000m blockers on every pool node but the last and returns the last.

    With 800m left elsewhere, a group whose peak is 1200m can only open its claim there.
    """
    *others, last = run.node_names
    for node in others:
        run.apply("filler", name=pinned_pod_name(run, "blocker", node), node=node, share=4000 / 4800)
    for node in others:
        pod_must_be_running(run, pinned_pod_name(run, "blocker", node))
    return last


def group_node_must_look_worse(run: ScenarioRun, node: str) -> None:
    """group_node_must_look_worse() pins a filler of half a node's CPU on the group's `node` of a two-node pool.

    The group's next pod then scores worse there than on the empty other node
    under least-allocated and balanced-allocation scoring, every time: a
    scheduler that does not remember the group splits it, instead of keeping it
    together by a random tie-break between two empty nodes.
    """
    run.apply("filler", name=run.named("filler-group-node"), node=node, share=0.5)
    pod_must_be_running(run, run.named("filler-group-node"))


def every_other_node_must_look_better(run: ScenarioRun) -> None:
    """every_other_node_must_look_better() swaps the blockers for fillers that make every other node outscore the last.

    Of three nodes: the first stays empty (least-allocated and name order pick
    it), the second gets 3000m (most-allocated picks it), the claim's node 1200m.
    """
    n0, n1, n2 = run.node_names
    for node in (n0, n1):
        run.delete({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pinned_pod_name(run, "blocker", node)}})
    pods_must_be_gone(run, (pinned_pod_name(run, "blocker", n0), pinned_pod_name(run, "blocker", n1)))
    run.apply("filler", name=pinned_pod_name(run, "filler", n1), node=n1, share=3000 / 4800)
    run.apply("filler", name=pinned_pod_name(run, "filler", n2), node=n2, share=1200 / 4800)
    pod_must_be_running(run, pinned_pod_name(run, "filler", n1))
    pod_must_be_running(run, pinned_pod_name(run, "filler", n2))


def peak_must_survive_a_restart(run: ScenarioRun, prefix: str, *, component: str, what: str) -> None:
    """peak_must_survive_a_restart() is api_server_restart and etcd_restart: A's claim outlives `component`'s restart.

    `<prefix>-a` reserves 3800m and runs its 200m task on A's node; `<prefix>-filler` puts 1000m on the
    other node (with A's reservation forgotten, A's node is the emptier one); the component restarts;
    A must stay Reserved as it was (same node, holder, claimGeneration), and `<prefix>-b` (2000m),
    created after the restart, must go to the other node: on A's node it has 4800 - 200 - (3800 - 200)
    = 1000m, beside the filler 4800 - 1000 = 3800m. Then A's big task lands on A's node and both
    runs are Released. `what` names the restart in messages ("the API server restarted").
    """
    a, b = run.named("a"), run.named("b")
    run.apply(f"{prefix}-a")
    small, a_node, record = task_must_hold_its_group(run, a, "small")
    generation = claim_generation_of(record, "small")
    other = next(n for n in run.node_names if n != a_node)
    run.apply(f"{prefix}-filler", node=other)

    run.restart_component(component)
    group_must_stay(run, a, "small", node=a_node, holders=(small,))
    group_must_be(run, a, "small", state=contract.State.RESERVED, node=a_node, claim_generation=generation)

    # The first pod after the restart: the scheduler's watches may first reconnect with a backoff.
    b_must_avoid_the_kept_peak(run, prefix, small, a_node=a_node, other=other, timeout="component_recovery", when=f"before {what}")
    # Nothing leaks: both groups are Released once their runs are done.
    group_must_be(run, a, "big", state=contract.State.RELEASED, node=a_node, claim_generation=generation)
    group_must_be(run, b, "only", state=contract.State.RELEASED, node=other)


def b_must_avoid_the_kept_peak(run: ScenarioRun, prefix: str, small: Obj, *, a_node: str, other: str, timeout: str, when: str) -> None:
    """b_must_avoid_the_kept_peak() is the end of the scenarios where A's peak must outlive a restart or a failover.

    `<prefix>-b` (2000m) is created and must bind, within `timeout`, on `other`:
    on A's node it would land inside the peak A reserved `when` ("before the
    restart"). Then big_task_must_follow_and_both_finish().
    """
    run.apply(f"{prefix}-b")
    b_pod = task_pod_must_be_bound(run, run.named("b"), "only", timeout=timeout)
    assert b_pod["spec"]["nodeName"] == other, (
        f"B landed on {b_pod['spec']['nodeName']}, inside the peak A reserved {when}: it should be on {other}" + _b_note(run, b_pod)
    )
    big_task_must_follow_and_both_finish(run, small, b_pod, a_node=a_node)


def big_task_must_follow_and_both_finish(run: ScenarioRun, small: Obj, b_pod: Obj, *, a_node: str) -> None:
    """big_task_must_follow_and_both_finish() is the end the restart scenarios share.

    A's small task is released, A's big task must bind on A's node `a_node`, B's pod is
    released, and both runs (`run.named("a")` and `run.named("b")`) must succeed.
    """
    run.release_pod(small["metadata"]["name"])
    big = task_pod_must_be_bound(run, run.named("a"), "big")
    assert big["spec"]["nodeName"] == a_node, f"A's big task ran on {big['spec']['nodeName']}, not on its group's node {a_node}"
    run.release_pod(b_pod["metadata"]["name"])
    pipelinerun_must_succeed(run, run.named("a"))
    pipelinerun_must_succeed(run, run.named("b"))


def group_must_hold_beside_a_filler(run: ScenarioRun, pipeline_run: str, *, filler_cpu_millis: int) -> tuple[Obj, str, int | None, str]:
    """group_must_hold_beside_a_filler() is the opening of taint_keeps_claim and not_ready_keeps_claim.

    The task `small` of `pipeline_run` holds its group's claim on one node, and a
    held filler of `filler_cpu_millis` runs on the other node (fixture `filler`, pod `run.named("filler")`).
    Returns small's pod, the group's node, its claimGeneration and the other node.
    """
    small, node, record = task_must_hold_its_group(run, pipeline_run, "small")
    other = next(n for n in run.node_names if n != node)
    # The scenarios' arithmetic is in millis of a 4800m node (PoolSpec's default); the fixture scales it to
    # the real node, as on kind (a share of the node's real allocatable would ask a kind node for 4200m).
    run.apply("filler", name=run.named("filler"), node=other, share=filler_cpu_millis / 4800)
    pod_must_be_running(run, run.named("filler"))
    return small, node, claim_generation_of(record, "small"), other


def pipelinerun_must_be_resolved(run: ScenarioRun, name: str) -> Obj:
    """pipelinerun_must_be_resolved() waits for Tekton to write the run's status.pipelineSpec; it returns the run."""

    def poll() -> Obj:
        obj = run.pipeline_run(name)
        if not (obj.get("status") or {}).get("pipelineSpec"):
            condition = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == "Succeeded"), None)
            raise NotYet(f"PipelineRun {name} has no status.pipelineSpec yet ({condition.get('reason') if condition else 'no condition'})")
        return obj

    return wait_checked(run, poll, what=f"Tekton to resolve PipelineRun {name}", timeout="pipelinerun_resolved", timeouts=run.timeouts)


def pod_must_wait_for_plan(run: ScenarioRun, pod_name: str, *, pipeline_run: str, task: str) -> None:
    """pod_must_wait_for_plan() holds, for `pod_stays_pending`, that a pod of a run with no plan yet is not bound outside a claim.

    docs/contract.md section 2, the first pod before the plan: a pod whose
    groups the scheduler cannot compute yet MUST NOT be bound. A scheduler that
    plans from the embedded spec.pipelineSpec (and substitutes parameters
    itself) MAY bind it, but only after its record exists: then the pod must
    be on the node of its group's Reserved claim, among its holders. Tekton
    must keep status.pipelineSpec unset all along (the run is
    PipelineRunPending); if it does not, the scenario's premise failed and it
    says so, as a harness error.
    """
    run.scheduler.check_alive()

    def check() -> None:
        if (run.pipeline_run(pipeline_run).get("status") or {}).get("pipelineSpec"):
            raise HarnessError(f"Tekton wrote status.pipelineSpec of {pipeline_run} while it is PipelineRunPending: this scenario cannot run here")
        pod = run.pod(pod_name)
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        record = run.record(pipeline_run)
        group = record.group_of_task(task) if record is not None else None
        if record is None or group is None:
            raise NotYet(f"{pod_name} was bound to {node} before its PipelineRun had a plan and with no record holding task {task!r}")
        status = record.status_of(group.name)
        if status.state != contract.State.RESERVED or status.node != node or pod["metadata"]["uid"] not in status.holders:
            raise NotYet(
                f"{pod_name} was bound to {node} outside its group's claim: group {group.name} is {status.state.value} "
                f"on {status.node or 'no node'} with holders {sorted(status.holders)}"
            )

    _hold_for(run, check, what=f"{pod_name} waiting for the plan of {pipeline_run}", duration="pod_stays_pending", timeouts=run.timeouts)


#: The label of the plain pods that probe whether an admission plugin applies an object the scenario made.


def _admission_must_apply(run: ScenarioRun, *, kind: str, spec: Obj, read_cpu: Callable[[Any], Any], cpu: int, what: str) -> None:
    """_admission_must_apply() creates and deletes probe pods until the API server's admission gives one `cpu` millicores.

    The LimitRanger and the RuntimeClass admission plugin read their objects
    through the API server's own caches, so a scenario that has just created a
    LimitRange or a RuntimeClass waits until it applies before its runs exist.
    `read_cpu(pod)` is the amount (a quantity or None) the plugin set on the probe.
    """
    import kubernetes

    attempt = [0]

    def poll() -> None:
        attempt[0] += 1
        name = run.named(f"probe-{attempt[0]}")
        try:
            pod = run.kube.core.create_namespaced_pod(run.namespace, probe_pod(name, kind=kind, spec=spec))
        except kubernetes.client.ApiException as err:
            if err.status != 403:
                raise
            # The LimitRanger defaults in its mutating phase and checks `min` in its
            # validating phase, each from its own read of a cache that is filling: a
            # probe can miss the default yet meet the min, and be refused for it.
            raise NotYet(f"the API server refused a probe pod while the {kind} came into force: {err.body or err.reason}") from err
        run.kube.core.delete_namespaced_pod(name, run.namespace, grace_period_seconds=0)
        amount = read_cpu(pod)
        got = parse_cpu(amount) if amount is not None else 0
        if got != cpu:
            raise NotYet(f"a probe pod got {got}m CPU from the {kind}, not its {cpu}m")

    wait_for(poll, what=what, timeout="fault_active", timeouts=run.timeouts)


def scheduling_gate_must_be_in_force(run: ScenarioRun, *, labels: dict[str, str], gate: str) -> None:
    """scheduling_gate_must_be_in_force() waits until a new pod with `labels` is given the scheduling gate `gate`.

    A MutatingAdmissionPolicy comes into force once the API server's own informer
    has it, so a scenario that has just created one waits before its runs exist.
    The probe is a server-side dry run: admission runs, nothing is stored.
    """
    attempt = [0]

    def poll() -> None:
        attempt[0] += 1
        body = probe_pod(run.named(f"gate-probe-{attempt[0]}"), kind="scheduling-gate", labels=labels)
        pod = decoded(run.kube.core.create_namespaced_pod(run.namespace, body, dry_run="All", _preload_content=False))
        gates = [g.get("name") for g in (pod.get("spec") or {}).get("schedulingGates") or []]
        if gate not in gates:
            raise NotYet(f"a probe pod labelled {labels} got the scheduling gates {gates}, not {gate}")

    wait_for(poll, what=f"the admission policy to gate new pods with {gate}", timeout="fault_active", timeouts=run.timeouts)


def gated_task_pod_must_stay_untried(run: ScenarioRun, pipeline_run: str, task: str) -> Obj:
    """gated_task_pod_must_stay_untried() holds, for `pod_stays_pending`, that a gated pod opens no claim for its group.

    A pod with scheduling gates is not tried (docs/contract.md section 7): its
    group gets no claim, so if its record exists the group stays Pending at
    claimGeneration 0. The API server refuses to bind a gated pod, so a
    scheduler that tries one anyway claims, fails the bind and rolls back: the
    claimGeneration it leaves behind shows it.
    """
    pod = task_pod_must_exist(run, pipeline_run, task)
    if not (pod.get("spec") or {}).get("schedulingGates"):
        raise AssertionError(f"{pipeline_run}/{task}'s pod {pod['metadata']['name']} was created without scheduling gates: the admission policy did not apply")

    def untried() -> None:
        run.scheduler.check_alive()
        now = run.task_pods(pipeline_run, task)[0]
        if (now.get("spec") or {}).get("nodeName"):
            raise NotYet(f"{pipeline_run}/{task} was bound while gated: {_describe(now)}")
        if not run.checks_records:
            return
        try:
            _, group, status = group_status_now(run, pipeline_run, task)
        except NotYet:  # no record or no group yet: nothing claimed
            return
        if status.state != contract.State.PENDING or status.claim_generation:
            raise NotYet(
                f"group {group.name} is {status.state.value} at claimGeneration {status.claim_generation} while "
                f"{pipeline_run}/{task}'s only pod still has scheduling gates: a gated pod must not be tried"
            )

    _hold_for(run, untried, what=f"{pipeline_run}/{task} staying untried while gated", duration="pod_stays_pending", timeouts=run.timeouts)
    return run.task_pods(pipeline_run, task)[0]


def limit_range_must_be_in_force(run: ScenarioRun, *, cpu: int) -> None:
    """limit_range_must_be_in_force() waits until a new pod's container without requests gets `cpu` millicores (the defaultRequest)."""

    def default_request(pod: Any) -> Any:
        resources = pod.spec.containers[0].resources if pod.spec else None
        return ((resources.requests if resources else None) or {}).get("cpu")

    _admission_must_apply(
        run, kind="limit-range", spec={}, read_cpu=default_request, cpu=cpu,
        what="the LimitRange to give containers their default request",
    )


def runtime_class_must_be_in_force(run: ScenarioRun, runtime_class: str, *, cpu: int) -> None:
    """runtime_class_must_be_in_force() waits until a new pod naming `runtime_class` gets `cpu` millicores of overhead."""

    def overhead(pod: Any) -> Any:
        return ((pod.spec.overhead if pod.spec else None) or {}).get("cpu")

    _admission_must_apply(
        run, kind="runtime-class", spec={"runtimeClassName": runtime_class}, read_cpu=overhead, cpu=cpu,
        what="the RuntimeClass to give pods their overhead",
    )


#: How the kubelet words a pod it refused at admission (pkg/kubelet, rejectPod): "Pod was rejected: Node didn't have enough resource: cpu, ...".
KUBELET_REFUSAL = "Pod was rejected: "


def next_task_must_wait_while_the_last_counts(run: ScenarioRun, pipeline_run: str, *, lingering: str, next_task: str) -> Obj:
    """next_task_must_wait_while_the_last_counts(): `lingering`'s TaskRun is done but its pod still runs (a sidecar stopping), and `next_task`'s pod, which has no room beside it, must stay unbound for pod_stays_pending; then the sidecar is stopped.

    `lingering`'s sidecar is held (sim_task_spec(linger_held=True)): it runs
    until this check has held `next_task` for the whole of pod_stays_pending,
    however long the machine takes to get there. If the pod finishes first all
    the same (on a real kubelet, Tekton's own stop of the sidecar outlasted its
    grace period), that is a setup error, not a verdict.
    """
    taskrun_must_be_done(run, pipeline_run, lingering)
    task_pod_must_exist(run, pipeline_run, next_task)

    def next_pod() -> Obj:
        last = run.task_pods(pipeline_run, lingering)[0]
        if (last.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            raise HarnessError(
                f"{last['metadata']['name']} finished while {pipeline_run}/{next_task} was held: its sidecar must run "
                "until the check stops it (fix the fixture: sim_task_spec(linger=True, linger_held=True))"
            )
        return run.task_pods(pipeline_run, next_task)[0]

    why = f"{lingering}'s pod still runs there (its TaskRun is done, its sidecar is stopping) and there is no room beside it"
    held = _must_stay_unbound(run, next_pod, what=f"{pipeline_run}/{next_task}", duration="pod_stays_pending", why=why)
    run.stop_sidecars(run.task_pods(pipeline_run, lingering)[0]["metadata"]["name"])
    return held


def no_task_pod_must_be_refused_by_a_kubelet(run: ScenarioRun, pipeline_run: str) -> None:
    """no_task_pod_must_be_refused_by_a_kubelet(): no pod of the run was failed at kubelet admission (OutOfcpu and the like), i.e. bound where its node had no room for it."""
    listing = decoded(run.kube.core.list_namespaced_pod(run.namespace, label_selector=f"{PIPELINE_RUN_LABEL}={pipeline_run}", _preload_content=False))
    refused = [
        pod for pod in listing.get("items") or []
        if (pod.get("status") or {}).get("phase") == "Failed" and ((pod.get("status") or {}).get("message") or "").startswith(KUBELET_REFUSAL)
    ]
    assert not refused, f"the kubelet refused {len(refused)} of {pipeline_run}'s pods, bound beside pods it still counted: " + "; ".join(
        f"{pod['metadata']['name']} on {pod['spec'].get('nodeName')} ({pod['status'].get('reason')}: {pod['status'].get('message')})" for pod in refused
    )
