"""examples/replay: twenty-odd PipelineRuns in the forms teams write them, each replayable as it stands, with a few peaks worked by hand."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from harness.generative.peaks import expected_peaks
from harness.monitor.expected_groups import ExpectedGroup, expected_groups
from harness.quantities import Amount
from harness.replay.classify import classify
from harness.replay.judging import judged_copy
from harness.replay.loading import load_documents
from harness.replay.plan import PlannedRun, ReplayPlan
from harness.replay.prepare import Prepared, prepare

pytestmark = pytest.mark.unit

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "replay"
Mi, Gi = 2**20, 2**30


@pytest.fixture(scope="module")
def prepared() -> Prepared:
    return prepare(paths=[EXAMPLES], nodes_file=None, pool="2x4cpu8Gi", copies=2, rounds=1, run_for="2s",
                   scheduler_name="tkn-scheduler", cluster="local", namespace="replay-examples")


def _run(plan: ReplayPlan, name: str) -> PlannedRun:
    return next(run for run in plan.runs if run.base == name)


def _ended(plan: ReplayPlan, run: PlannedRun) -> dict[str, Any]:
    """_ended() is the run as Tekton shows it resolved: its Pipeline's spec (or its own) in status.pipelineSpec."""
    spec = run.manifest["spec"]
    ref = (spec.get("pipelineRef") or {}).get("name")
    pipeline = plan.pipelines[ref]["spec"] if ref else spec["pipelineSpec"]
    return {**copy.deepcopy(run.manifest), "status": {"pipelineSpec": copy.deepcopy(pipeline)}}


def _peaks(plan: ReplayPlan, name: str) -> dict[frozenset[str], Amount]:
    run = _run(plan, name)
    ended = _ended(plan, run)
    return expected_peaks(expected_groups(ended) or (), judged_copy(ended, run.task_specs))


def test_every_example_plans_and_two_copies_of_each_fit_the_default_pool(prepared: Prepared) -> None:
    assert len(prepared.plan.runs) >= 20
    assert len(prepared.instances[0]) == 2 * len(prepared.plan.runs)
    assert len({name for _, name in prepared.instances[0]}) == len(prepared.instances[0])


def test_the_examples_are_written_in_the_forms_the_brief_names() -> None:
    inputs = classify(load_documents([EXAMPLES]))
    text = json.dumps([d.body for d in inputs.pipeline_runs] + [d.body for d in inputs.pipelines.values()])
    runs = [d.body["spec"] for d in inputs.pipeline_runs]
    assert len(inputs.pipeline_runs) >= 20
    assert sum(1 for spec in runs if any("volumeClaimTemplate" in w for w in spec.get("workspaces") or [])) >= 10
    assert sum(1 for spec in runs if "pipelineRef" in spec) >= 3 and sum(1 for spec in runs if "pipelineSpec" in spec) >= 10
    for form in ('"resolver": "cluster"', '"resolver": "hub"', '"matrix"', '"retries"', '"finally"', '"sidecars"', '"stepTemplate"',
                 '"taskRunSpecs"', '"when"', '"generateName"', '"persistentVolumeClaim"', '"apiVersion": "openshift-pipelines.org/v1alpha1"'):
        assert form in text, form
    assert not any(d.kind == "LimitRange" for d in inputs.supporting)  # requests come from the YAML alone


def test_go_ci_peak_by_hand(prepared: Prepared) -> None:
    # fetch 100m/128Mi; then build (vet 500m + build 1000m; memory 1Gi from the stepTemplate + 1536Mi) beside test
    # (500m/768Mi): 2000m, 3328Mi; then image 1500m/2Gi with 4Gi of scratch disk; report is in no group.
    assert _peaks(prepared.plan, "go-ci-main") == {
        frozenset({"fetch", "build", "test", "image"}): Amount.of({"cpu": 2000, "memory": 3328 * Mi, "ephemeral-storage": 4 * Gi})}


def test_monorepo_peak_by_hand(prepared: Prepared) -> None:
    # Three builds side by side: two golang-builds (1500m/2560Mi each) and npm's bare build (nothing): 3000m, 5120Mi;
    # package (kaniko) after them 1500m/2Gi/4Gi disk.
    (peak,) = _peaks(prepared.plan, "monorepo").values()
    assert peak == Amount.of({"cpu": 3000, "memory": 5120 * Mi, "ephemeral-storage": 4 * Gi})


def test_matrix_peak_by_hand(prepared: Prepared) -> None:
    # Two Go versions by two platforms: four test pods at once, 4 x 500m and 4 x 768Mi.
    (peak,) = _peaks(prepared.plan, "go-matrix").values()
    assert peak == Amount(2000, 3072 * Mi)


def test_two_claims_join_one_group_and_the_propagated_workspace_counts(prepared: Prepared) -> None:
    cached = _ended(prepared.plan, _run(prepared.plan, "cached-build"))
    assert expected_groups(cached) == (ExpectedGroup(frozenset({"fetch", "warm-cache", "build"}), frozenset({"source", "cache"})),)
    propagated = _ended(prepared.plan, _run(prepared.plan, "propagated"))
    assert expected_groups(propagated) == (ExpectedGroup(frozenset({"fetch", "count-lines", "license-check"}), frozenset({"source"})),)
    # license-check (500m) and count-lines (100m) run side by side after fetch.
    (peak,) = _peaks(prepared.plan, "propagated").values()
    assert peak == Amount(600, 576 * Mi)


def test_a_custom_task_keeps_its_place_in_the_group_and_counts_nothing(prepared: Prepared) -> None:
    promote = _ended(prepared.plan, _run(prepared.plan, "promote"))
    assert expected_groups(promote) == (ExpectedGroup(frozenset({"staging", "approve", "production"}), frozenset({"manifests"})),)
    (peak,) = _peaks(prepared.plan, "promote").values()
    assert peak == Amount(200, 128 * Mi)
