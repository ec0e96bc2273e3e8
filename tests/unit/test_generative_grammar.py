"""The generative scenario's grammar (harness.generative.grammar): replayable, well-formed, and never able to deadlock a pool."""

from __future__ import annotations

import dataclasses
import re
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.generative.grammar import (
    FAIL_FOR_GOOD,
    PENDING_RUN_TIMEOUT,
    GATE_PARAM,
    MAX_BATCH,
    POOL_NODES,
    RUN_ON_AFTER_GROUPS,
    TRAP_TASK,
    DrawContext,
    DrawnRun,
    cpu_share,
    draw_batches,
    memory_share,
)
from harness.generative.foreign_pods import is_foreign, load
from harness.generative.foreign_reservations import FRACTIONS, OTHER_SCHEDULER, TASK, WORKSPACE, ForeignReservation
from harness.monitor.expected_groups import CO_LOCATING_BINDINGS, expected_groups, pipeline_spec_of

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
CONTEXT = DrawContext("tkn-scheduler", {"rescon.dev/pool": "p"}, 4800, 8 << 30, "rescon-template-ns", nodes=("p-0", "p-1"), runtime_class="rc")
SLOTS = [(f"slot{i}-a", f"slot{i}-b") for i in range(MAX_BATCH)]


def _draw(seed: int, budget: int = 6, templates: int = 24) -> list[list[DrawnRun]]:
    return draw_batches(seed, budget, CONTEXT, pvc_slots=SLOTS, claim_templates=templates)


def test_a_seed_replays_every_run() -> None:
    first, again = _draw(11), _draw(11)
    assert [[r.docs for r in b] for b in first] == [[r.docs for r in b] for b in again]
    assert [[r.docs for r in b] for b in _draw(12)] != [[r.docs for r in b] for b in first]


@pytest.mark.parametrize("budget, sizes", [(1, [[1]]), (2, [[2]]), (3, [[3]]), (4, [[2, 2]]), (5, [[2, 3], [3, 2]])])
def test_batches_hold_two_or_three_runs(budget: int, sizes: list[list[int]]) -> None:
    for seed in range(10):
        assert [len(b) for b in _draw(seed, budget)] in sizes


def _declared_task_spec(run: DrawnRun, entry: Obj) -> Obj:
    if "taskSpec" in entry:
        spec: Obj = entry["taskSpec"]
        return spec
    task: Obj = run.tasks[entry["taskRef"]["name"]]["spec"]
    return task


def _check_well_formed(run: DrawnRun) -> None:
    """What Tekton and the API server would refuse: dangling references, unbound or undeclared workspaces and params."""
    kinds = [d["kind"] for d in run.docs]
    assert kinds[-1] == "PipelineRun" and kinds.count("PipelineRun") == 1
    names = {(d["kind"], d["metadata"]["name"]) for d in run.docs}
    pipeline_run = run.pipeline_run
    pr_spec = pipeline_run["spec"]
    assert pr_spec["taskRunTemplate"]["podTemplate"] == {"schedulerName": "tkn-scheduler", "nodeSelector": {"rescon.dev/pool": "p"}}
    if "pipelineRef" in pr_spec:
        pipeline = next(d for d in run.docs if d["kind"] == "Pipeline" and d["metadata"]["name"] == pr_spec["pipelineRef"]["name"])
        spec = pipeline["spec"]
    else:
        spec = pr_spec["pipelineSpec"]
    declared = {w["name"] for w in spec["workspaces"]}
    bound = {b["name"]: b for b in pr_spec["workspaces"]}
    assert set(bound) == declared
    for binding in bound.values():
        if "configMap" in binding:
            assert ("ConfigMap", binding["configMap"]["name"]) in names
        if "secret" in binding:
            assert ("Secret", binding["secret"]["secretName"]) in names
        if "projected" in binding:
            assert {("ConfigMap", s["configMap"]["name"]) for s in binding["projected"]["sources"] if "configMap" in s} <= names
        if "volumeClaimTemplate" in binding:
            assert binding["volumeClaimTemplate"]["spec"]["storageClassName"] == "rescon-template-ns"
    run_params = {p["name"] for p in pr_spec.get("params") or []}
    assert run_params <= {p["name"] for p in spec.get("params") or []}
    entries = [*spec["tasks"], *(spec.get("finally") or [])]
    task_names = [e["name"] for e in entries]
    assert len(task_names) == len(set(task_names))
    for entry in entries:
        task_spec = _declared_task_spec(run, entry)
        # The short way names no `workspace`: Tekton binds the pipeline workspace of the task workspace's name.
        assert {w.get("workspace", w["name"]) for w in entry.get("workspaces") or []} <= declared
        assert {w["name"] for w in entry.get("workspaces") or []} == {w["name"] for w in task_spec.get("workspaces") or []}
        passed = {p["name"] for p in entry.get("params") or []} | {p["name"] for p in (entry.get("matrix") or {}).get("params") or []}
        assert passed == {p["name"] for p in task_spec.get("params") or []}
        assert set(entry.get("runAfter") or []) <= set(task_names)
        assert not (entry.get("onError") == "continue" and entry.get("retries")), "Tekton refuses onError continue with retries"
        for producer in re.findall(r"\$\(tasks\.([^.]+)\.results\.(\w+)\)", str(entry)):
            producer_entry = next(e for e in entries if e["name"] == producer[0])
            assert {"name": producer[1], "type": "string"} in _declared_task_spec(run, producer_entry)["results"]
            assert entry["onError"] == "continue", "the simulated step writes no result: a consumer must not fail the run"
        for ref in re.findall(r"\$\(params\.([^\[)]+)", str(entry)):
            assert ref in run_params
    assert all(m["metadata"]["name"].startswith(run.name) for m in run.docs)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 9))
def test_every_draw_is_well_formed_and_fits(seed: int, budget: int) -> None:
    batches = _draw(seed, budget)
    assert sum(len(b) for b in batches) == budget
    for batch in batches:
        assert len(batch) <= MAX_BATCH
        claims = [b["persistentVolumeClaim"]["claimName"] for r in batch for b in r.pipeline_run["spec"]["workspaces"] if "persistentVolumeClaim" in b]
        assert len(claims) == len(set(claims)), f"two runs of one batch share a claim: {claims}"
        demands = [run.demand() for run in batch]
        for run, demand in zip(batch, demands):
            _check_well_formed(run)
            assert demand.cpu <= CONTEXT.node_cpu_millis * cpu_share(len(batch))
            assert all(is_foreign(d) for d in run.docs if d["kind"] == "Pod"), "a drawn run's only pods are foreign ones"
            assert demand.memory <= CONTEXT.node_memory_bytes * memory_share(len(batch))
        # The deadlock argument of the grammar's docstring: the batch's demand plus its largest run's fits the pool,
        # what the batch's foreign pods leave of it, and its memory fits one node.
        room = 1 - load([d for r in batch for d in r.docs if is_foreign(d)], CONTEXT.node_cpu_millis)
        assert sum(d.cpu for d in demands) + max(d.cpu for d in demands) <= CONTEXT.node_cpu_millis * POOL_NODES * room + 1
        assert sum(d.memory for d in demands) <= CONTEXT.node_memory_bytes


def test_batches_are_tight() -> None:
    """Runs fill 60% to 100% of their share: a batch of three asks for 0.9 to 1.5 nodes' CPU of the pool's two."""
    for seed in range(10):
        for batch in _draw(seed, 9):
            room = 1 - load([d for r in batch for d in r.docs if is_foreign(d)], CONTEXT.node_cpu_millis)
            for run in batch:
                if run.demand().cpu:
                    assert run.demand().cpu >= 0.55 * CONTEXT.node_cpu_millis * cpu_share(len(batch)) * room or run.demand().memory >= 0.55 * CONTEXT.node_memory_bytes * memory_share(len(batch))


def test_volume_claim_templates_stop_at_the_spare_volumes() -> None:
    for seed in range(20):
        used = sum(
            1 for b in _draw(seed, 9, templates=2) for r in b for w in r.pipeline_run["spec"]["workspaces"] if "volumeClaimTemplate" in w
        )
        assert used <= 2


def test_the_grammar_draws_every_feature_it_names() -> None:
    """Over a few seeds every feature shows up, so the scenario exercises what its docstring promises."""
    seen: set[str] = set()
    for seed in range(40):
        for batch in _draw(seed):
            for run in batch:
                seen |= {word for feature in run.features for word in feature.split()}
                seen |= {k for b in run.pipeline_run["spec"]["workspaces"] for k in b if k != "name"}
                groups = expected_groups(run.resolved) or ()
                seen |= {"several-groups"} if len(groups) > 1 else set()
    wanted = {
        "pipelineRef", "taskRef", "taskSpec", "finally", "after", "result", "stepTemplate", "sidecar", "matrix", "include",
        "params", "retries", "param", "implicitly", "steps", *CO_LOCATING_BINDINGS, "emptyDir", "configMap", "secret", "projected",
        "several-groups", "decimal", "binary", "short", "when", "fails", "PipelineRunPending,", "order",
    }
    assert wanted <= seen, f"never drawn: {sorted(wanted - seen)}"
    phrases = {feature for seed in range(40) for batch in _draw(seed) for run in batch for feature in run.features}
    assert any("retries 2" in f for f in phrases) and any("retries 1" in f for f in phrases)


def test_the_resolved_view_substitutes_the_run_s_params() -> None:
    for seed in range(40):
        for batch in _draw(seed):
            for run in batch:
                resolved = pipeline_spec_of(run.resolved) or {}
                assert "$(params." not in str(resolved)


def test_apply_objects_creates_a_draw_in_the_namespace_and_keeps_its_yaml() -> None:
    from harness.cluster.node_pools import NodePool
    from harness.suite.manifests import RenderContext
    from harness.suite.run import ScenarioRun
    from harness.suite.scenario import Scenario
    from harness.timeouts import DEFAULT_TIMEOUTS

    class RecordingKube:
        def __init__(self) -> None:
            self.applied: list[tuple[Obj, str | None]] = []

        def apply(self, manifest: Obj, *, namespace: str | None = None) -> None:
            self.applied.append((manifest, namespace))

    kube = RecordingKube()
    run = ScenarioRun(
        Scenario("generative", "d", (), ()), kube, "conf-ns", NodePool("p", ("p-0",), "4800m", "8Gi", 110),  # type: ignore[arg-type]
        RenderContext("conf-ns", "tkn-scheduler", {}, 4800, 8 << 30), DEFAULT_TIMEOUTS, frozenset(), None,  # type: ignore[arg-type]
    )
    drawn = _draw(3, 1)[0][0]
    placed = run.apply_objects(drawn.name, list(drawn.docs))
    assert [(m["kind"], m["metadata"]["namespace"], ns) for m, ns in kube.applied] == [(d["kind"], "conf-ns", "conf-ns") for d in drawn.docs]
    assert run.applied == placed and "namespace" not in drawn.docs[0]["metadata"]
    assert run.rendered[drawn.name].count("kind: PipelineRun") == 1


@pytest.mark.parametrize(
    "fraction, spelling, cpu, memory",
    [(0.25, "plain", "1200m", "2147483648"), (0.25, "decimal", "1.2", "2147M"), (0.25, "binary", "1200m", "2048Mi"), (0.01, "decimal", "0.048", "85M")],
)
def test_quantities_are_spelt_three_ways_for_the_same_amount(fraction: float, spelling: str, cpu: str, memory: str) -> None:
    assert (CONTEXT.cpu(fraction, spelling), CONTEXT.memory(fraction, spelling)) == (cpu, memory)


def _entries(run: DrawnRun) -> list[Obj]:
    spec = pipeline_spec_of(run.resolved) or {}
    return [*spec.get("tasks", []), *(spec.get("finally") or [])]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 9))
def test_every_session_opens_with_a_release_trap(seed: int, budget: int) -> None:
    """Run 0: a group with a skipped task and one that runs, done while the run's last task, in no group, runs on."""
    trap = _draw(seed, budget)[0][0]
    entries = _entries(trap)
    by_name = {e["name"]: e for e in entries}
    assert not (pipeline_spec_of(trap.resolved) or {}).get("finally"), "a finally task would keep the trap's group busy to the end"
    last = by_name[TRAP_TASK]
    assert set(last["runAfter"]) == set(by_name) - {TRAP_TASK}, "the trap's last task starts only once every other task is done"
    assert trap.tasks.get(last.get("taskRef", {}).get("name", "")) is None and last["taskSpec"]["metadata"]["annotations"]["sim.rescon.dev/run-for"] == RUN_ON_AFTER_GROUPS
    groups = expected_groups(trap.resolved) or ()
    assert all(TRAP_TASK not in g.tasks for g in groups), f"the trap's last task must be in no group: {groups}"
    skipped = {e["name"] for e in entries if e.get("when")}
    trapped = [g for g in groups if g.tasks & skipped and g.tasks - skipped]
    assert trapped, f"no group holds both a skipped task and one that runs: groups {groups}, skipped {skipped}"
    assert {p["name"]: p["value"] for p in trap.pipeline_run["spec"]["params"]}[GATE_PARAM] == "no"
    # Tekton skips a task whose result reference is missing, and every task after it: the trap's last task would not run.
    assert "$(tasks." not in str(trap.resolved), "a trap reads no task's result"


def test_a_skipped_task_reads_the_run_param_and_the_resolved_view_says_false() -> None:
    for seed in range(20):
        for batch in _draw(seed):
            for run in batch:
                pipelines = [d["spec"] for d in run.docs if d["kind"] == "Pipeline"] or [run.pipeline_run["spec"]["pipelineSpec"]]
                for entry in pipelines[0]["tasks"]:
                    if entry.get("when"):
                        assert entry["when"] == [{"input": f"$(params.{GATE_PARAM})", "operator": "in", "values": ["yes"]}]
                for entry in _entries(run):
                    if entry.get("when"):
                        assert entry["when"] == [{"input": "no", "operator": "in", "values": ["yes"]}]
                        assert not entry.get("retries")


def test_a_short_binding_names_the_task_workspace_as_the_pipeline_s() -> None:
    found = 0
    for seed in range(20):
        for batch in _draw(seed):
            for run in batch:
                for entry in _entries(run):
                    for binding in entry.get("workspaces") or []:
                        if "workspace" not in binding:
                            found += 1
                            task_spec = _declared_task_spec(run, entry)
                            assert binding["name"] in {w["name"] for w in task_spec["workspaces"]}
    assert found, "no short binding in 20 sessions"


def _annotations(run: DrawnRun, entry: Obj) -> dict[str, str]:
    """The sim annotations of a pipeline task: on its embedded taskSpec, or on the Task it refers to."""
    owner = entry["taskSpec"] if "taskSpec" in entry else run.tasks[entry["taskRef"]["name"]]
    annotations: dict[str, str] = owner["metadata"]["annotations"]
    return annotations


def test_a_failing_task_fails_every_attempt_in_a_run_with_finally() -> None:
    """A task drawn to fail exits 1 on every attempt, only where finally tasks run after it and nothing reads its result."""
    failing = 0
    for seed in range(40):
        for batch in _draw(seed):
            for run in batch:
                entries = _entries(run)
                failed = [e for e in entries if _annotations(run, e).get("sim.rescon.dev/exit-codes") == FAIL_FOR_GOOD]
                assert run.fails == bool(failed), f"{run.name}: fails is {run.fails}, failing tasks {[e['name'] for e in failed]}"
                if not failed:
                    continue
                failing += 1
                assert len(failed) == 1 and run.index != 0, "one failing task a run, never in the release trap"
                assert (pipeline_spec_of(run.resolved) or {}).get("finally"), f"{run.name} fails with no finally task to run after"
                entry = failed[0]
                assert not entry.get("when") and "onError" not in entry and entry["name"] not in {e["name"] for e in (pipeline_spec_of(run.resolved) or {}).get("finally", [])}
                assert f"$(tasks.{entry['name']}.results" not in str(run.resolved), "a result nobody writes would skip its consumer, not test a failure"
    assert failing, "no failing task in 40 sessions"


def test_a_pending_run_says_so_and_carries_a_timeout() -> None:
    pending = 0
    for seed in range(40):
        for batch in _draw(seed):
            for run in batch:
                spec = run.pipeline_run["spec"]
                assert run.pending == (spec.get("status") == "PipelineRunPending")
                if run.pending:
                    pending += 1
                    assert run.index != 0, "the release trap starts at once: its timing is its point"
                    assert spec["timeouts"] == {"pipeline": PENDING_RUN_TIMEOUT}
    assert pending, "no pending run in 40 sessions"


def test_a_run_starts_a_pod_when_a_dependency_free_dag_task_is_not_skipped() -> None:
    # A pending run of a batch is started once another run has a pod bound: only runs sure to make one may start it.
    seen = {True: 0, False: 0}
    for seed in range(40):
        for batch in _draw(seed):
            for run in batch:
                spec = pipeline_spec_of(run.resolved) or {}
                roots = [
                    t for t in spec.get("tasks") or []
                    if not t.get("runAfter") and not t.get("when") and "$(tasks." not in str(t.get("params") or "") + str(t.get("matrix") or "")
                ]
                assert run.starts_a_pod == bool(roots), f"{run.name}: starts_a_pod {run.starts_a_pod}, root tasks {[t['name'] for t in roots]}"
                seen[run.starts_a_pod] += 1
    assert seen[True], "no run with a pod to start in 40 sessions"


#: A cluster whose default class serves volumeClaimTemplates, under a scheduler that publishes records.
WITH_RECORDS = dataclasses.replace(CONTEXT, storage_class=None, foreign_reservations=True)


def _reservations(context: DrawContext, seeds: range) -> list[ForeignReservation]:
    found = []
    for seed in seeds:
        for batch in draw_batches(seed, 9, context, pvc_slots=SLOTS, claim_templates=sys.maxsize):
            found += [run.foreign_reservation for run in batch if run.foreign_reservation]
            assert all(run.foreign_reservation is None for run in batch[1:]), "the batch's first run carries its foreign reservation"
    return found


def test_another_scheduler_s_reservation_is_drawn_only_beside_records_and_a_default_class() -> None:
    assert _reservations(CONTEXT, range(40)) == [], "a spare volume of the suite's class would be spent on the other run"
    assert _reservations(dataclasses.replace(WITH_RECORDS, foreign_reservations=False), range(40)) == []
    drawn = _reservations(WITH_RECORDS, range(40))
    assert drawn, "40 seeds of 9 runs never drew another scheduler's reservation"
    assert {r.node for r in drawn} == set(WITH_RECORDS.nodes)
    assert {r.cpu_millis for r in drawn} <= {int(4800 * f) for f in FRACTIONS}


def test_the_other_scheduler_s_run_is_one_group_whose_pods_nobody_serves() -> None:
    (reservation, *_) = _reservations(WITH_RECORDS, range(40))
    pipeline_run = reservation.pipeline_run
    assert pipeline_run["spec"]["taskRunTemplate"]["podTemplate"]["schedulerName"] == OTHER_SCHEDULER != WITH_RECORDS.scheduler_name
    # The record the scenario publishes names this group: task `only`, workspace `source`, as the monitor computes it.
    assert [(set(g.tasks), set(g.workspaces)) for g in expected_groups(pipeline_run) or ()] == [({TASK}, {WORKSPACE})]
    (binding,) = pipeline_run["spec"]["workspaces"]
    assert "storageClassName" not in binding["volumeClaimTemplate"]["spec"], "the default class serves it, and waits for its consumer"
    assert reservation.taken == {reservation.node: reservation.cpu_millis}
    assert reservation.name.endswith("-other") and reservation.describe().startswith(f"another scheduler's ({OTHER_SCHEDULER})")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 9))
def test_a_batch_beside_another_scheduler_s_reservation_still_cannot_deadlock(seed: int, budget: int) -> None:
    for batch in draw_batches(seed, budget, WITH_RECORDS, pvc_slots=SLOTS, claim_templates=sys.maxsize):
        held = batch[0].foreign_reservation.taken if batch[0].foreign_reservation else None
        room = 1 - load([d for r in batch for d in r.docs if is_foreign(d)], WITH_RECORDS.node_cpu_millis, held=held)
        demands = [run.demand() for run in batch]
        assert sum(d.cpu for d in demands) + max(d.cpu for d in demands) <= WITH_RECORDS.node_cpu_millis * POOL_NODES * room + 1


def test_load_adds_what_is_held_on_a_node_to_its_pods() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "x"}, "spec": {"nodeName": "p-0", "containers": [{"name": "c", "resources": {"requests": {"cpu": "480m"}}}]}}
    assert load([pod], 4800) == 0.1
    assert load([pod], 4800, held={"p-0": 480}) == 0.2
    assert load([pod], 4800, held={"p-1": 960}) == 0.2
    assert load([], 4800, held={"p-1": 240}) == 0.05
