"""Unit tests for workspace_bindings and the planner's use of it: only PVC and volumeClaimTemplate workspaces group tasks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cluster.simulation import sim_task_spec
from reference_scheduler.core.workspace_bindings import CO_LOCATING_BINDINGS, co_locating_workspaces
from reference_scheduler.runtime.planner import plan_pipeline_run

pytestmark = pytest.mark.unit

#: One binding of each kind a PipelineRun workspace can have (Tekton v1 WorkspaceBinding).
BINDINGS: dict[str, dict[str, Any]] = {
    "persistentVolumeClaim": {"persistentVolumeClaim": {"claimName": "source"}},
    "volumeClaimTemplate": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}},
    "emptyDir": {"emptyDir": {}},
    "configMap": {"configMap": {"name": "settings"}},
    "secret": {"secret": {"secretName": "token"}},
    "projected": {"projected": {"sources": [{"configMap": {"name": "settings"}}]}},
    "csi": {"csi": {"driver": "secrets-store.csi.k8s.io"}},
}


def _run(kinds: dict[str, str], tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"workspaces": [{"name": name, **BINDINGS[kind]} for name, kind in kinds.items()]},
        "status": {"pipelineSpec": {"workspaces": [{"name": name} for name in kinds], "tasks": tasks}},
    }


def _task(name: str, *workspaces: str, after: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "name": name,
        "runAfter": list(after),
        "workspaces": [{"name": f"w{i}", "workspace": w} for i, w in enumerate(workspaces)],
        "taskSpec": sim_task_spec(cpu="100m", workspaces=tuple(f"w{i}" for i in range(len(workspaces)))),
    }


def _plan(run: dict[str, Any]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return [(g.tasks, g.workspaces) for g in plan_pipeline_run(run, get_task=lambda ns, name: None, limit_range=None).groups]


@pytest.mark.parametrize("kind", sorted(BINDINGS))
def test_each_binding_kind(kind: str) -> None:
    assert co_locating_workspaces({"workspaces": [{"name": "w", **BINDINGS[kind]}]}) == ({"w"} if kind in CO_LOCATING_BINDINGS else set())


def test_unnamed_and_unbound_entries_tie_nothing() -> None:
    assert co_locating_workspaces({}) == set()
    assert co_locating_workspaces({"workspaces": [{"persistentVolumeClaim": {"claimName": "x"}}, {"name": "optional"}]}) == set()


def test_an_emptydir_only_pipeline_has_no_group() -> None:
    """Two tasks sharing only `emptyDir: {}` scratch space are plain pods: nothing pins them to one node."""
    run = _run({"scratch": "emptyDir"}, [_task("fetch", "scratch"), _task("build", "scratch", after=("fetch",))])
    assert _plan(run) == []


@pytest.mark.parametrize("kind", ["emptyDir", "configMap", "secret", "projected", "csi"])
def test_a_non_co_locating_workspace_does_not_bridge_two_groups(kind: str) -> None:
    run = _run(
        {"source": "persistentVolumeClaim", "cache": "volumeClaimTemplate", "shared": kind},
        [_task("a", "source", "shared"), _task("b", "cache", "shared"), _task("c", "shared")],
    )
    assert _plan(run) == [(("b",), ("cache",)), (("a",), ("source",))]


def test_a_task_using_a_pvc_and_a_volume_claim_template_bridges_them() -> None:
    """Section 4's worked example with one binding of each co-locating kind: one group of three."""
    run = _run(
        {"source": "persistentVolumeClaim", "cache": "volumeClaimTemplate", "scratch": "emptyDir"},
        [_task("build", "source", "scratch"), _task("test", "source", "cache"), _task("report", "cache", "scratch")],
    )
    assert _plan(run) == [(("build", "report", "test"), ("cache", "source"))]


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(sorted(BINDINGS)), min_size=1))
def test_grouped_workspaces_are_exactly_the_co_locating_ones_used(kinds: dict[str, str]) -> None:
    names = sorted(kinds)
    run = _run(kinds, [_task(f"t-{name}", name) for name in names] + [_task("all", *names)])
    expected = tuple(sorted(name for name, kind in kinds.items() if kind in CO_LOCATING_BINDINGS))
    groups = _plan(run)
    assert [ws for _, ws in groups] == ([expected] if expected else [])
