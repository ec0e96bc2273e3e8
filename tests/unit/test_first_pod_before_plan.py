"""The first pod before the plan: the cycle parks a pod whose PipelineRun has no plan yet (docs/contract.md section 2).

"Not yet" (the run is not in the cache, or has no status.pipelineSpec, or a
Task fetched through a resolver has no answer in the cache) is unschedulable,
"waiting for the PipelineRun's plan", and nothing is written; a permanent
failure (a missing Task, an invalid quantity, a failed resolution, a run that
finished without a plan) still schedules the pod as a plain pod with a Warning. The
cycle is driven with fakes for its caches and writers: no cluster, no API.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.plan_readiness import RESOLVED_TASK_NOT_ANSWERED, WAITING_FOR_PLAN_MESSAGE, waiting_for_plan_message
from reference_scheduler.core.resolved_tasks import RESOLUTION_FAILED_MESSAGE
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.cycle import Cycle, Outcome, WaitingForPlan
from reference_scheduler.runtime.planner import PodShaping
from reference_scheduler.runtime.records import record_manifest

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


def task_spec(cpu: str) -> Obj:
    return {"workspaces": [{"name": "w"}], "steps": [{"name": "s", "image": "busybox", "computeResources": {"requests": {"cpu": cpu}}}]}


PIPELINE_SPEC: Obj = {
    "workspaces": [{"name": "source"}],
    "tasks": [{"name": "clone", "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": task_spec("600m")}],
}


def pipeline_run(*, resolved: bool, finished: bool = False, pipeline_spec: Obj = PIPELINE_SPEC) -> Obj:
    status: Obj = {"conditions": [{"type": "Succeeded", "status": "False" if finished else "Unknown"}]}
    if resolved:
        status["pipelineSpec"] = pipeline_spec
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"namespace": "ci", "name": "build-x", "uid": "run-uid"},
        "spec": {"workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "c"}}], "pipelineSpec": pipeline_spec},
        "status": status,
    }


POD: Obj = {
    "metadata": {
        "namespace": "ci",
        "name": "build-x-clone-pod",
        "uid": "pod-uid",
        "labels": {"tekton.dev/pipelineRun": "build-x", "tekton.dev/pipelineTask": "clone"},
    },
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "600m"}}}]},
}


class FakeView:
    def request_of(self, pod: Obj) -> Resources:
        return Resources(cpu=600)

    def record_of(self, namespace: str, name: str) -> Obj | None:
        return None


class FakeEvents:
    def __init__(self) -> None:
        self.unschedulable_messages: list[str] = []
        self.warnings: list[tuple[str, str]] = []

    def unschedulable(self, pod: Obj, message: str) -> None:
        self.unschedulable_messages.append(message)

    def pod_warning(self, pod: Obj, reason: str, message: str) -> None:
        self.warnings.append((reason, message))


class FakeRecords:
    def __init__(self) -> None:
        self.created: list[tuple[WorkspaceGroup, ...]] = []

    def create(self, run: Obj, groups: tuple[WorkspaceGroup, ...], *, active: bool = False) -> Obj:
        self.created.append(groups)
        return record_manifest(run, groups, scheduler_name="tkn-scheduler", active=active)


def cycle(run: Obj | None, requests: list[Obj] | None = None) -> tuple[Cycle, FakeEvents, FakeRecords]:
    events, records = FakeEvents(), FakeRecords()
    found = Cycle.__new__(Cycle)
    found._view = FakeView()  # type: ignore[assignment]  # noqa: SLF001
    found._events = events  # type: ignore[assignment]  # noqa: SLF001
    found._records = records  # type: ignore[assignment]  # noqa: SLF001
    found._get_pipeline_run = lambda namespace, name: run  # noqa: SLF001
    found._get_task = lambda namespace, name: None  # noqa: SLF001
    found._get_resolution_requests = lambda namespace, run_uid: list(requests or [])  # noqa: SLF001
    found._get_limit_range = lambda namespace: None  # noqa: SLF001
    found._get_shaping = PodShaping  # noqa: SLF001 - Tekton's defaults, no RuntimeClass
    found._write_later = None  # noqa: SLF001 - the create runs inline
    return found, events, records


@pytest.mark.parametrize(
    "run",
    [
        pytest.param(None, id="run-not-in-the-cache"),
        # The embedded spec.pipelineSpec is there, but it is not parameter-substituted: not planned from.
        pytest.param(pipeline_run(resolved=False), id="no-status-pipelinespec-yet"),
    ],
)
def test_not_yet_parks_the_pod_and_writes_nothing(run: Obj | None) -> None:
    found, events, records = cycle(run)
    assert found.schedule(POD) is Outcome.UNSCHEDULABLE
    assert events.unschedulable_messages == [waiting_for_plan_message("ci", "build-x", run)]
    assert "waiting for the PipelineRun's plan" in events.unschedulable_messages[0]
    assert records.created == []
    assert events.warnings == []


MISSING_TASK: Obj = {**PIPELINE_SPEC, "tasks": [*PIPELINE_SPEC["tasks"], {"name": "lint", "taskRef": {"name": "no-such-task"}}]}
BAD_QUANTITY: Obj = {
    **PIPELINE_SPEC,
    "tasks": [{"name": "clone", "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": task_spec("lots")}],
}


@pytest.mark.parametrize(
    ("run", "reason", "says"),
    [
        pytest.param(pipeline_run(resolved=True, pipeline_spec=MISSING_TASK), "ReservationUnavailable", "no-such-task", id="missing-task"),
        pytest.param(pipeline_run(resolved=True, pipeline_spec=BAD_QUANTITY), "ReservationUnavailable", "lots", id="invalid-quantity"),
        pytest.param(pipeline_run(resolved=False, finished=True), "ReservationUnavailable", "finished without", id="finished-without-a-plan"),
    ],
)
def test_a_permanent_failure_schedules_the_pod_as_a_plain_pod_with_a_warning(run: Obj, reason: str, says: str) -> None:
    found, events, records = cycle(run)
    assert found._group_state(POD) is None  # noqa: SLF001 - None: the pod is placed as a plain pod
    assert [r for r, _ in events.warnings] == [reason]
    assert says in events.warnings[0][1] and "without a reservation" in events.warnings[0][1]
    assert records.created == []
    assert events.unschedulable_messages == []


def test_a_resolved_plan_creates_the_record_before_anything_is_bound() -> None:
    found, events, records = cycle(pipeline_run(resolved=True))
    group = found._group_state(POD)  # noqa: SLF001
    assert group is not None and group.key.group == records.created[0][0].name
    assert [g.tasks for g in records.created[0]] == [("clone",)]
    # clone alone: its 600m step is the peak.
    assert group.peak.cpu == 600
    assert events.warnings == [] and events.unschedulable_messages == []


def test_waiting_for_plan_is_raised_by_the_record_step_only() -> None:
    found, _, _ = cycle(None)
    with pytest.raises(WaitingForPlan, match="not in the scheduler's cache yet"):
        found._create_record(POD, "ci", "build-x", "clone")  # noqa: SLF001


# --- a Task fetched through a resolver: planned from the run's ResolutionRequest (docs/reference-scheduler.md) ---

CLONE_REF: Obj = {"resolver": "cluster", "params": [{"name": "kind", "value": "task"}, {"name": "name", "value": "git-clone"}, {"name": "namespace", "value": "ci"}]}
RESOLVED: Obj = {**PIPELINE_SPEC, "tasks": [{"name": "clone", "workspaces": [{"name": "w", "workspace": "source"}], "taskRef": CLONE_REF}]}


def resolution_request(status: str, *, message: str = "") -> Obj:
    task = {"apiVersion": "tekton.dev/v1", "kind": "Task", "metadata": {"name": "git-clone"}, "spec": task_spec("700m")}
    condition: Obj = {"type": "Succeeded", "status": status, "message": message}
    return {
        "metadata": {
            "namespace": "ci",
            "name": "cluster-3c5f0e",
            "labels": {"resolution.tekton.dev/type": "cluster"},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "build-x", "uid": "run-uid"}],
        },
        "spec": {"params": CLONE_REF["params"]},
        "status": {"conditions": [condition], "data": base64.b64encode(yaml.safe_dump(task).encode()).decode() if status == "True" else ""},
    }


@pytest.mark.parametrize(
    "requests",
    [
        pytest.param([], id="request-not-in-the-cache"),
        pytest.param([resolution_request("Unknown")], id="request-not-answered"),
    ],
)
def test_a_resolved_task_before_its_answer_parks_the_pod_and_writes_nothing(requests: list[Obj]) -> None:
    found, events, records = cycle(pipeline_run(resolved=True, pipeline_spec=RESOLVED), requests)
    assert found.schedule(POD) is Outcome.UNSCHEDULABLE
    why = RESOLVED_TASK_NOT_ANSWERED.format(namespace="ci", name="build-x", task="clone", resolver="cluster")
    assert events.unschedulable_messages == [WAITING_FOR_PLAN_MESSAGE.format(why=why)]
    assert records.created == [] and events.warnings == []


def test_a_resolved_task_is_planned_from_its_answer() -> None:
    found, events, records = cycle(pipeline_run(resolved=True, pipeline_spec=RESOLVED), [resolution_request("True")])
    group = found._group_state(POD)  # noqa: SLF001
    assert group is not None and [g.tasks for g in records.created[0]] == [("clone",)]
    assert group.peak.cpu == 700  # the fetched Task's step, not the pod's 600m
    assert events.warnings == [] and events.unschedulable_messages == []


def test_a_failed_resolution_schedules_the_pod_as_a_plain_pod_naming_the_resolvers_message() -> None:
    failed = resolution_request("False", message='tasks.tekton.dev "git-clone" not found')
    found, events, records = cycle(pipeline_run(resolved=True, pipeline_spec=RESOLVED), [failed])
    assert found._group_state(POD) is None  # noqa: SLF001
    says = RESOLUTION_FAILED_MESSAGE.format(resolver="cluster", message='tasks.tekton.dev "git-clone" not found')
    assert events.warnings == [("ReservationUnavailable", f"PipelineRun ci/build-x: task 'clone': {says}; scheduling the pod without a reservation")]
    assert records.created == [] and events.unschedulable_messages == []


# --- the two mutants of tests/mutants/faults.py that break this rule ---------------


@pytest.fixture
def keep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a mutant's patch replaces is restored after the test."""
    from reference_scheduler.runtime.queue import SchedulingQueue

    for name in ("_create_record", "_group_state"):
        monkeypatch.setattr(Cycle, name, getattr(Cycle, name))
    monkeypatch.setattr(SchedulingQueue, "move_unschedulable", SchedulingQueue.move_unschedulable)


@pytest.mark.usefixtures("keep")
def test_binds_before_plan_places_the_waiting_pod_as_a_plain_pod() -> None:
    from tests.mutants import faults

    faults.apply_binds_before_plan()
    found, events, records = cycle(pipeline_run(resolved=False))
    assert found._group_state(POD) is None  # noqa: SLF001 - a plain pod: the reference raises WaitingForPlan here
    assert records.created == [] and [r for r, _ in events.warnings] == ["ReservationUnavailable"]


def test_unless_waiting_for_plan_keeps_only_the_waiting_pods_parked() -> None:
    from tests.mutants import faults

    should_move = faults.unless_waiting_for_plan(lambda key: True, {("ci", "build-x-clone-pod")})
    assert not should_move(("ci", "build-x-clone-pod"))
    assert should_move(("ci", "other"))


@pytest.mark.usefixtures("keep")
def test_parked_pod_waits_for_resync_moves_the_waiting_pod_only_at_the_flush() -> None:
    from reference_scheduler.runtime.queue import UNSCHEDULABLE_FLUSH_SECONDS, SchedulingQueue
    from tests.mutants import faults

    faults.apply_parked_pod_waits_for_resync()
    found, _, _ = cycle(pipeline_run(resolved=False))
    now = [0.0]
    queue = SchedulingQueue(clock=lambda: now[0])
    key = ("ci", "build-x-clone-pod")
    queue.add(key)
    assert queue.pop(timeout=0) == key
    assert found.schedule(POD) is Outcome.UNSCHEDULABLE
    queue.done(key, unschedulable=True)
    # The run's plan appears: the reference's hint would move the pod now; the mutant leaves it parked.
    now[0] = 5.0
    assert queue.move_unschedulable(lambda k: True) == 0
    assert queue.pop(timeout=0) is None
    now[0] = UNSCHEDULABLE_FLUSH_SECONDS
    assert queue.pop(timeout=0) == key
