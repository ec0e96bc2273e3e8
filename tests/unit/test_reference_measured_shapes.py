"""The reference's prediction of each pod shape measured on Tekton v1.15.0 (tests/integration/test_tekton_pod_shapes.py).

The integration test reads the pods the real Tekton controller built; these
are the same task specs and the same hand-computed numbers, given to the
reference scheduler's predictor, so the reference and Tekton are held to the
one arithmetic (docs/contract.md section 6).
"""

from __future__ import annotations

import pytest

from harness.cluster.simulation import sim_task_spec
from reference_scheduler.core.pipeline_graph import build_pipeline_graph, matrix_fan_out
from reference_scheduler.core.resources import Resources
from reference_scheduler.core.tekton_pods import predict_task_pod_request

pytestmark = pytest.mark.unit

Mi = 2**20


def test_task_level_compute_resources_over_three_steps_is_999m() -> None:
    # 1000m / 3 = 333m a step (rounded down), 3 × 333 = 999m; the steps' own 100m, 2 and nothing are replaced.
    spec = sim_task_spec(cpu="100m", extra_steps=[{"cpu": "2"}, {}], workspaces=())
    assert predict_task_pod_request(spec, task_run_spec={"computeResources": {"requests": {"cpu": "1"}}}) == Resources(999, 0)


def test_step_and_sidecar_specs_merge_key_by_key() -> None:
    # work 700m (override) / 64Mi (kept), helper 100m (kept) / 96Mi (override): 800m, 160Mi.
    spec = sim_task_spec(cpu="100m", memory="64Mi", sidecar_cpu="100m", sidecar_memory="32Mi", workspaces=())
    run_spec = {
        "stepSpecs": [{"name": "work", "computeResources": {"requests": {"cpu": "700m"}}}],
        "sidecarSpecs": [{"name": "helper", "computeResources": {"requests": {"memory": "96Mi"}}}],
    }
    assert predict_task_pod_request(spec, task_run_spec=run_spec) == Resources(800, 160 * Mi)


def test_step_template_merges_key_by_key() -> None:
    # 400m/256Mi + 200m/256Mi + 200m/128Mi = 800m, 640Mi.
    spec = sim_task_spec(cpu="400m", step_template={"cpu": "200m", "memory": "256Mi"}, extra_steps=[{}, {"memory": "128Mi"}], workspaces=())
    assert predict_task_pod_request(spec) == Resources(800, 640 * Mi)


def test_a_limit_only_step_requests_its_limit_without_a_limit_range() -> None:
    spec = sim_task_spec(cpu=None, workspaces=())
    spec["steps"][0]["computeResources"] = {"limits": {"cpu": "300m", "memory": "64Mi"}}
    assert predict_task_pod_request(spec) == Resources(300, 64 * Mi)


def test_a_limit_range_default_is_split_no_lower_than_min_and_a_limit_only_step_gets_the_split() -> None:
    # Steps: 500m + max(600/3, 250) + max(600/3, 250) = 1000m; memory 3 × max(300Mi/3, 50Mi) = 300Mi;
    # init containers 600m / 300Mi each: pod max(1000, 600) = 1000m, 300Mi.
    spec = sim_task_spec(cpu="500m", extra_steps=[{}, {}], workspaces=())
    spec["steps"][2]["computeResources"] = {"limits": {"cpu": "300m", "memory": "200Mi"}}
    limit_range = {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "600m", "memory": "300Mi"}, "min": {"cpu": "250m", "memory": "50Mi"}}]}}
    assert predict_task_pod_request(spec, limit_range=limit_range) == Resources(1000, 300 * Mi)


def test_fan_out_include_that_matches_adds_none_and_a_new_value_adds_one() -> None:
    matrix = {
        "params": [{"name": "x", "value": "$(params.xs[*])"}],
        "include": [{"name": "again-a", "params": [{"name": "x", "value": "a"}]}, {"name": "add-c", "params": [{"name": "x", "value": "c"}]}],
    }
    assert matrix_fan_out(matrix, {"xs": ["a", "b"]}) == 3


def test_a_propagated_workspace_puts_the_task_in_the_group() -> None:
    implicit = sim_task_spec(cpu="100m", workspaces=())
    implicit["steps"][0]["env"] = [{"name": "SOURCE_DIR", "value": "$(workspaces.source.path)"}]
    spec = {
        "workspaces": [{"name": "source"}],
        "tasks": [
            {"name": "writer", "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": sim_task_spec(cpu="100m")},
            {"name": "implicit", "taskSpec": implicit},
        ],
    }
    graph = build_pipeline_graph(spec, task_specs={})
    assert graph.nodes["implicit"].workspaces == {"source"}
