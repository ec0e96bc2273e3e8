"""generative: PipelineRuns drawn from a grammar of Tekton features, two or three at once on a tight pool.

The faults it exists to catch: any misreading of sections 4, 6 and 6.1 that
the hand-written scenarios do not happen to draw. Each of them pins one
feature in one shape; here DAG shapes, finally tasks, every workspace binding
the contract reads (each written the long or the short way), embedded and
referred-to tasks and pipelines, steps, sidecars, stepTemplates, matrices,
one or two retries, params, tasks a false `when` expression skips, a task that
fails for good while finally is still to run, matrix combinations that end in
any order, and runs created PipelineRunPending and started later come in
combinations nobody wrote down (harness.generative.grammar). A scheduler that gets a
combination wrong reserves the wrong peak or groups the wrong tasks, and the
suite's own computation (harness.monitor.expected_groups,
harness.generative.peaks: docs/contract.md sections 4 and 6, never the
reference's code) says so; under contention a wrong peak or a lost release
shows up as an over-committed node or a split group (the contract monitor).
Every session's first run is a release trap: a group whose tasks are done
(one skipped) while the run goes on for 25 s with a task in no group, so a
scheduler that releases late, or only at the run's end, fails the monitor's
`release-late` whatever else the seed draws. Half the batches find a pod no
scheduler placed on each node, in a shape that counts more than its containers
(harness.generative.foreign_pods), and the batch's runs sized around it; some
find another reservation scheduler's Reserved group on a node (its run's pod
Pending under a schedulerName nobody serves: harness.generative.foreign_reservations),
and are sized around that too.

Each run is judged once its PipelineRun has ended as drawn (succeeded, or
failed where a task fails for good): the record's groups
(tasks, workspaces) are the suite's, each group's peak is the suite's
(millicores and bytes, exact), and every pod of a group ran on the group's
node. A failure names the seed and a one-line replay command; the drawn
objects are attached to the report (and printed) in full.
"""

from __future__ import annotations

import contextlib
import random
import sys
import time
from typing import Any, Iterator

import allure
import pytest

from harness.cluster.namespaces import HOLD_TERMINATING_FINALIZER
from harness.errors import HarnessError
from harness.generative.foreign_pods import OVERHEAD_FRACTION, is_foreign, runtime_class_manifest
from harness.generative.foreign_reservations import OTHER_SCHEDULER, TASK, WORKSPACE, ForeignReservation
from harness.generative.grammar import MAX_BATCH, POOL_NODES, DrawContext, DrawnRun, draw_batches
from harness.generative.peaks import expected_peaks
from harness.monitor.expected_groups import ExpectedGroup, expected_groups
from harness.quantities import share_of
from harness.suite.checks import (
    group_must_be_released_or_gone,
    pipelinerun_must_end_with,
    pod_of_some_run_must_be_bound,
    pipelinerun_must_succeed,
    pod_must_be_running,
    pod_must_be_terminating,
    pods_must_be_gone,
    runtime_class_must_be_in_force,
    task_pod_must_exist,
)
from harness.suite.features import Feature
from harness.suite.foreign_records import foreign_record
from harness.suite.run import ScenarioRun
from harness.suite.scenario import PoolSpec, Scenario
from harness.suite.seeds import note_seed

#: Slot i of a batch binds its persistentVolumeClaim workspaces to these claims (at most two per run).
PVC_SLOTS = tuple((f"slot{i}-a", f"slot{i}-b") for i in range(MAX_BATCH))

SCENARIO = Scenario(
    name="generative",
    description=(
        "PipelineRuns drawn from a grammar of Tekton features (DAGs, finally, every workspace binding, taskRef and pipelineRef, "
        "steps, sidecars, stepTemplate, matrix, retries, params, when skips, short workspace bindings), two or three at once on two "
        "nodes beside foreign pods and another scheduler's reservations, the first a release trap: each run's record has the suite's own groups and peaks, every group's pods share its node, "
        "the monitor sees no violation"
    ),
    features=(Feature.GENERATIVE,),
    fixtures=(),
    pool=PoolSpec(count=POOL_NODES),
    volumes=tuple(name for slot in PVC_SLOTS for name in slot),
    volumes_attach_anywhere=(
        "a slot's claims serve one run per batch, in new groupings: volumes made on one node by an earlier batch could "
        "never meet in one group of a later batch (its volumeClaimTemplates take the default class)"
    ),
    # Only on a cluster with no default class: one spare volume per volumeClaimTemplate workspace drawn; the grammar
    # binds no more than this in a session (past it, the later runs draw none).
    claim_templates=24,
)

REPLAY = "pytest tests/conformance -k generative --all-features --rescon-generative-seed {seed} --rescon-generative-runs {runs}"


@contextlib.contextmanager
def replayable(note: str) -> Iterator[None]:
    """replayable() adds the seed and the replay command to whatever fails inside it."""
    try:
        yield
    except Exception as err:
        err.add_note(note)
        raise


def _log(seed: int, batches: list[list[DrawnRun]], replay: str) -> str:
    lines = [f"seed {seed}; replay: {replay}"]
    for number, batch in enumerate(batches):
        lines.append(f"batch {number}: {', '.join(r.name for r in batch)}")
        for drawn in batch:
            lines.append(f"  {drawn.name} (sizes x{drawn.scale:.3f}):")
            lines += [f"    {feature}" for feature in drawn.features]
    return "\n".join(lines)


def test_generative(run: ScenarioRun, request: pytest.FixtureRequest) -> None:
    seed = request.config.getoption("--rescon-generative-seed")
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    note_seed(request.node, seed)  # the report names each attempt's seed (--rerun-failures draws anew)
    budget = int(request.config.getoption("--rescon-generative-runs"))
    if budget < 1:
        raise HarnessError(f"--rescon-generative-runs {budget}: draw at least one run")
    replay = REPLAY.format(seed=seed, runs=budget)
    runtime_class = f"rescon-generative-{run.namespace}"
    run.apply_objects("generative runtime class", [runtime_class_manifest(runtime_class, run.node_cpu_millis())])
    runtime_class_must_be_in_force(run, runtime_class, cpu=share_of(run.node_cpu_millis(), OVERHEAD_FRACTION))
    context = DrawContext(
        scheduler_name=run.context.scheduler_name, pool_selector=run.context.pool_selector,
        node_cpu_millis=run.node_cpu_millis(), node_memory_bytes=run.node_memory_bytes(), storage_class=run.context.storage_class,
        nodes=run.node_names, runtime_class=runtime_class, foreign_reservations=run.checks_records,
    )
    pvc_slots = [tuple(run.context.pvcs[name] for name in slot) for slot in PVC_SLOTS]
    # The default class makes a volume for every claim Tekton makes; only spare volumes run out.
    templates = SCENARIO.claim_templates if run.context.storage_class is not None else sys.maxsize
    batches = draw_batches(seed, budget, context, pvc_slots=pvc_slots, claim_templates=templates)
    log = _log(seed, batches, replay)
    print(log)
    allure.attach(log, f"generative draws (seed {seed})", allure.attachment_type.TEXT)
    for number, batch in enumerate(batches):
        for drawn in batch:
            allure.attach(drawn.yaml(), f"{drawn.name} (seed {seed})", allure.attachment_type.YAML)
        with replayable(f"generative seed {seed}, batch {number} ({', '.join(r.name for r in batch)}); replay: {replay}"):
            foreign = [doc for drawn in batch for doc in drawn.docs if is_foreign(doc)]
            if foreign:
                run.apply_objects(f"batch {number} foreign pods", foreign)
                _hold_foreign(run, foreign)
            reservations = [drawn.foreign_reservation for drawn in batch if drawn.foreign_reservation]
            for reservation in reservations:
                _reserve_as_another_scheduler(run, reservation)
            for drawn in batch:
                run.apply_objects(drawn.name, [doc for doc in drawn.docs if not is_foreign(doc)])
            _start_pending(run, batch)
            started = time.monotonic()
            for drawn in batch:
                with replayable(f"{drawn.name} as drawn:\n  " + "\n  ".join(drawn.features)):
                    _judge(run, drawn)
            run.assert_contract()
            _let_foreign_go(run, foreign)
            for reservation in reservations:
                _let_reservation_go(run, reservation)
            print(f"batch {number} judged {time.monotonic() - started:.1f} s after it was applied")


def _hold_foreign(run: ScenarioRun, pods: list[dict[str, Any]]) -> None:
    """_hold_foreign() waits until the batch's foreign pods run, then holds the `terminating` ones Terminating, before the batch's runs exist."""
    for pod in pods:
        pod_must_be_running(run, pod["metadata"]["name"])
        if HOLD_TERMINATING_FINALIZER in pod["metadata"].get("finalizers", ()):
            run.hold_terminating(pod["metadata"]["name"])
            pod_must_be_terminating(run, pod["metadata"]["name"])


def _let_foreign_go(run: ScenarioRun, pods: list[dict[str, Any]]) -> None:
    """_let_foreign_go() removes the batch's foreign pods, so the next batch, sized for whole nodes or its own, finds them gone."""
    names = tuple(pod["metadata"]["name"] for pod in pods)
    for name in names:
        run.let_go(name)
        run.delete_pod_now(name)
    pods_must_be_gone(run, names)


def _reserve_as_another_scheduler(run: ScenarioRun, reservation: ForeignReservation) -> None:
    """_reserve_as_another_scheduler() runs the other scheduler's PipelineRun and publishes its Reserved record, before the batch's runs exist."""
    run.apply_objects(reservation.name, [reservation.pipeline_run])
    pod = task_pod_must_exist(run, reservation.name, TASK)
    run.create_foreign_record(foreign_record(
        run.pipeline_run(reservation.name), scheduler=OTHER_SCHEDULER, group=WORKSPACE, task=TASK,
        peak_cpu_millis=reservation.cpu_millis, node=reservation.node, holders=(pod,),
    ))


def _let_reservation_go(run: ScenarioRun, reservation: ForeignReservation) -> None:
    """_let_reservation_go() deletes the other scheduler's run; its record goes with it, so the next batch finds the node free."""
    run.delete_pipeline_run(reservation.name)
    group_must_be_released_or_gone(run, reservation.name, TASK)


def _start_pending(run: ScenarioRun, batch: list[DrawnRun]) -> None:
    """_start_pending() starts the batch's pending runs once another run of it has a pod bound, as a queue admits a run when there is room.

    A batch whose other runs may never have a pod (pending ones only, or every task skipped) is started at once:
    nothing else would start it.
    """
    pending = [drawn for drawn in batch if drawn.pending]
    others = [drawn.name for drawn in batch if not drawn.pending and drawn.starts_a_pod]
    if pending and others:
        pod_of_some_run_must_be_bound(run, others)
    for drawn in pending:
        run.start_pending(drawn.name)


def _judge(run: ScenarioRun, drawn: DrawnRun) -> None:
    """_judge() waits for the run to end as drawn (Succeeded; Failed when a task fails for good), then holds its record and pods to the suite's own groups and peaks."""
    try:
        if drawn.fails:
            pipeline_run = pipelinerun_must_end_with(run, drawn.name, status="False", reason="Failed")
        else:
            pipeline_run = pipelinerun_must_succeed(run, drawn.name)
    except AssertionError as err:
        ended = run.pipeline_run(drawn.name)
        if not (ended.get("status") or {}).get("childReferences"):
            # Tekton refused the run before it made a single TaskRun: no scheduler had a say, the grammar drew it wrong.
            raise HarnessError(f"{drawn.name} failed before any TaskRun was created: a generator bug ({err})") from err
        raise
    groups = expected_groups(pipeline_run) or ()
    peaks = expected_peaks(groups, pipeline_run, drawn.tasks)
    # The grammar's own view of the run (before Tekton resolved it) must agree with Tekton's: else the generator is wrong.
    drawn_groups = expected_groups(drawn.resolved) or ()
    if drawn_groups != groups or expected_peaks(drawn_groups, drawn.resolved, drawn.tasks) != peaks:
        raise HarnessError(f"{drawn.name}: the grammar expected groups {drawn_groups}, Tekton's resolved run has {groups}: a generator bug")
    nodes = {group.tasks: _group_node(run, drawn.name, group) for group in groups}
    if not run.checks_records:
        return
    record = run.record(drawn.name)
    if record is None:
        # Section 2: the record comes before a group's first claim; a run none of whose group pods ran (every
        # group task skipped) may never have one.
        ran = sorted(sorted(tasks) for tasks, node in nodes.items() if node is not None)
        assert not ran, f"{drawn.name}'s groups {ran} ran pods but it has no ReservationRecord"
        return
    found = {(frozenset(g.tasks), frozenset(g.workspaces)) for g in record.groups}
    wanted = {(g.tasks, g.workspaces) for g in groups}
    assert found == wanted, (
        f"record {record.key} has groups {sorted((sorted(t), sorted(w)) for t, w in found)}, "
        f"expected {sorted((sorted(t), sorted(w)) for t, w in wanted)} (docs/contract.md section 4)"
    )
    wrong = []
    for spec in record.groups:
        peak = peaks[frozenset(spec.tasks)]
        if spec.peak != peak:
            wrong.append(f"group {spec.name} {sorted(spec.tasks)} reserves {spec.peak.describe()}, expected {peak.describe()}")
        node = nodes[frozenset(spec.tasks)]
        if node is not None and record.status_of(spec.name).node != node:
            wrong.append(f"group {spec.name}'s pods ran on {node}, but its record names node {record.status_of(spec.name).node}")
    assert not wrong, f"{drawn.name}: " + "; ".join(wrong) + " (docs/contract.md section 6)"


def _group_node(run: ScenarioRun, pipeline_run: str, group: ExpectedGroup) -> str | None:
    """_group_node() is the one node every pod of the group ran on (None when none ran: skipped tasks)."""
    placed = {
        pod["metadata"]["name"]: pod["spec"].get("nodeName")
        for task in sorted(group.tasks)
        for pod in run.task_pods(pipeline_run, task)
    }
    nodes = set(placed.values())
    assert None not in nodes, f"{pipeline_run} has ended, yet some pods of group {sorted(group.tasks)} were never bound: {placed}"
    assert len(nodes) <= 1, f"{pipeline_run}'s group {sorted(group.tasks)} ran on {sorted(str(n) for n in nodes)}: {placed}"
    return next(iter(nodes), None)
