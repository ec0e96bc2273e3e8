"""The suite's own reading of a PipelineRun's groups (docs/contract.md section 4)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.monitor.expected_groups import ExpectedGroup, co_locating_workspaces, expected_groups, group_of, workspaces_used

pytestmark = pytest.mark.unit


def _run(bindings: dict[str, str], tasks: list[dict[str, Any]], finally_: list[dict[str, Any]] | None = None, *, resolved: bool = True) -> dict[str, Any]:
    spec = {"tasks": tasks, "finally": finally_ or []}
    workspaces = [{"name": name, kind: {}} for name, kind in bindings.items()]
    run: dict[str, Any] = {"spec": {"workspaces": workspaces}, "status": {}}
    if resolved:
        run["status"]["pipelineSpec"] = spec
    else:
        run["spec"]["pipelineSpec"] = spec
    return run


def _task(name: str, *workspaces: str) -> dict[str, Any]:
    return {"name": name, "workspaces": [{"name": "w", "workspace": w} for w in workspaces]}


def test_the_contract_example_joins_build_test_and_report_through_two_workspaces() -> None:
    run = _run(
        {"source": "persistentVolumeClaim", "cache": "volumeClaimTemplate"},
        [_task("build", "source"), _task("test", "source", "cache"), _task("report", "cache")],
    )
    assert expected_groups(run) == (ExpectedGroup(frozenset({"build", "test", "report"}), frozenset({"cache", "source"})),)


def test_emptydir_and_configmap_workspaces_group_nothing() -> None:
    run = _run({"scratch": "emptyDir", "conf": "configMap", "source": "persistentVolumeClaim"}, [_task("a", "scratch", "conf"), _task("b", "source")])
    assert expected_groups(run) == (ExpectedGroup(frozenset({"b"}), frozenset({"source"})),)
    assert co_locating_workspaces(run) == {"source"}


def test_finally_tasks_are_grouped_like_dag_tasks() -> None:
    run = _run({"source": "persistentVolumeClaim"}, [_task("build", "source")], [_task("report", "source")])
    assert expected_groups(run) == (ExpectedGroup(frozenset({"build", "report"}), frozenset({"source"})),)


def test_a_lone_task_with_a_volume_is_a_group_of_its_own() -> None:
    run = _run({"a": "persistentVolumeClaim", "b": "persistentVolumeClaim"}, [_task("x", "a"), _task("y", "b")])
    groups = expected_groups(run)
    assert groups == (ExpectedGroup(frozenset({"x"}), frozenset({"a"})), ExpectedGroup(frozenset({"y"}), frozenset({"b"})))
    assert groups is not None and group_of(groups, "y") == groups[1] and group_of(groups, "z") is None


@pytest.mark.parametrize("access_modes", [["ReadWriteOnce"], ["ReadWriteMany"], ["ReadOnlyMany", "ReadWriteMany"], None],
                         ids=["read-write-once", "read-write-many", "read-only-and-read-write-many", "unsaid"])
def test_access_modes_do_not_change_the_groups(access_modes: list[str] | None) -> None:
    """Section 4, Access modes do not matter (V7): a ReadWriteMany template co-locates like any other."""
    run = _run({"source": "volumeClaimTemplate", "shared": "persistentVolumeClaim"}, [_task("build", "source"), _task("test", "source"), _task("lint", "shared")])
    template: dict[str, Any] = {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    if access_modes is not None:
        template["spec"]["accessModes"] = access_modes
    run["spec"]["workspaces"][0]["volumeClaimTemplate"] = template
    run["spec"]["workspaces"][1]["persistentVolumeClaim"] = {"claimName": "shared-rwx"}
    assert expected_groups(run) == (
        ExpectedGroup(frozenset({"build", "test"}), frozenset({"source"})), ExpectedGroup(frozenset({"lint"}), frozenset({"shared"})),
    )


def test_a_binding_without_workspace_uses_its_own_name() -> None:
    assert workspaces_used({"workspaces": [{"name": "source"}]}) == {"source"}


def test_the_embedded_spec_serves_until_tekton_resolves_it_and_nothing_before() -> None:
    run = _run({"source": "persistentVolumeClaim"}, [_task("a", "source")], resolved=False)
    assert expected_groups(run) == (ExpectedGroup(frozenset({"a"}), frozenset({"source"})),)
    assert expected_groups({"spec": {"pipelineRef": {"name": "p"}}}) is None


@given(st.lists(st.lists(st.sampled_from("abcdef"), max_size=3), min_size=1, max_size=8))
def test_groups_partition_the_tasks_that_use_a_volume_and_never_share_a_workspace(uses: list[list[str]]) -> None:
    run = _run({w: "persistentVolumeClaim" for w in "abcdef"}, [_task(f"t{i}", *ws) for i, ws in enumerate(uses)])
    groups = expected_groups(run) or ()
    grouped = [t for g in groups for t in g.tasks]
    assert sorted(grouped) == sorted(f"t{i}" for i, ws in enumerate(uses) if ws)
    all_workspaces = [w for g in groups for w in g.workspaces]
    assert len(all_workspaces) == len(set(all_workspaces))
    for i, ws in enumerate(uses):
        if ws:
            group = group_of(groups, f"t{i}")
            assert group is not None and set(ws) <= group.workspaces


# Propagated workspaces (Tekton's propagateWorkspaces, v1.15.0): an embedded taskSpec's reference binds by name.


def test_an_embedded_task_that_refers_to_an_unbound_workspace_uses_it() -> None:
    implicit = {"name": "report", "taskSpec": {"steps": [{"name": "s", "env": [{"name": "D", "value": "$(workspaces.source.path)"}]}]}}
    run = _run({"source": "persistentVolumeClaim"}, [_task("build", "source"), implicit])
    assert expected_groups(run) == (ExpectedGroup(frozenset({"build", "report"}), frozenset({"source"})),)


def test_every_field_tekton_reads_is_a_reference() -> None:
    spec = {
        "steps": [{"script": "cd $(workspaces.a.path)", "args": ["$(workspaces[\"b\"].path)"], "params": [{"name": "p", "value": ["$(workspaces.c.bound)"]}]}],
        "sidecars": [{"command": ["$(workspaces['d'].claim)"], "workingDir": "$(workspaces.e.path)/sub"}],
        "stepTemplate": {"env": [{"name": "X", "value": "$(workspaces.f.volume)"}], "script": "$(workspaces.not-read.path)"},
    }
    assert workspaces_used({"name": "t", "taskSpec": spec}) == {"a", "b", "c", "d", "e", "f"}


def test_a_reference_to_a_bound_task_workspace_adds_nothing() -> None:
    """The step's `$(workspaces.w.path)` is the entry's own binding w → source, not a pipeline workspace w."""
    task = {"name": "t", "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": {"steps": [{"script": "ls $(workspaces.w.path)"}]}}
    assert workspaces_used(task) == {"source"}


def test_a_task_ref_propagates_nothing() -> None:
    """Only an embedded taskSpec is read: Tekton propagates only into `rpt.PipelineTask.TaskSpec`."""
    assert workspaces_used({"name": "t", "taskRef": {"name": "x"}}) == frozenset()
