"""Tasks fetched through a resolver: found in the run's ResolutionRequests, planned like any other (docs/contract.md section 6)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.queue_hints import QUEUE, SKIP, resolution_request_answered
from reference_scheduler.core.resolved_tasks import (
    ResolutionFailed,
    decoded_task,
    request_for,
    requests_owned_by,
    resolved_task_spec,
    task_spec_v1,
)
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime.planner import PlanNotReady, PlanUnavailable, plan_pipeline_run

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
Mi = 2**20
RUN_UID = "5f0c1a2b-run"


def _params(name: str, namespace: str = "ci") -> list[Obj]:
    return [{"name": "kind", "value": "task"}, {"name": "name", "value": name}, {"name": "namespace", "value": namespace}]


def _ref(name: str) -> Obj:
    return {"resolver": "cluster", "params": _params(name)}


def _task(name: str, cpu: str, *, api_version: str = "tekton.dev/v1") -> Obj:
    field = "computeResources" if api_version == "tekton.dev/v1" else "resources"
    return {"apiVersion": api_version, "kind": "Task", "metadata": {"name": name}, "spec": {"steps": [{"name": "s", "image": "busybox", field: {"requests": {"cpu": cpu}}}]}}


def _request(params: list[Obj], *, status: str = "True", data: Obj | str | None = None, owner: str = RUN_UID, resolver: str = "cluster", message: str = "") -> Obj:
    encoded = data if isinstance(data, str) else base64.b64encode(yaml.safe_dump(data).encode()).decode() if data is not None else ""
    condition: Obj = {"type": "Succeeded", "status": status}
    if message:
        condition["message"] = message
    return {
        "apiVersion": "resolution.tekton.dev/v1beta1",
        "kind": "ResolutionRequest",
        "metadata": {
            "name": "cluster-067ddc3d7fca56a4328c79cda6353b63",
            "namespace": "ci",
            "labels": {"resolution.tekton.dev/type": resolver},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "scan-x", "uid": owner}],
        },
        "spec": {"params": params},
        "status": {"conditions": [condition], "data": encoded},
    }


def test_a_request_is_matched_by_resolver_and_params_in_any_order() -> None:
    scan = _request(list(reversed(_params("scan"))), data=_task("scan", "600m"))
    other = _request(_params("lint"), data=_task("lint", "100m"))
    bundle = _request(_params("scan"), data=_task("scan", "1"), resolver="bundles")
    assert request_for(_ref("scan"), [other, bundle, scan]) is scan
    assert request_for(_ref("build"), [other, bundle, scan]) is None


def test_only_the_runs_own_requests_count() -> None:
    mine, theirs = _request(_params("scan")), _request(_params("scan"), owner="another-run")
    assert requests_owned_by([mine, theirs], RUN_UID) == [mine]


def test_the_answered_task_spec_is_returned_and_none_before_the_answer() -> None:
    answered = _request(_params("scan"), data=_task("scan", "600m"))
    pending = _request(_params("scan"), status="Unknown")
    assert resolved_task_spec(_ref("scan"), [answered]) == _task("scan", "600m")["spec"]
    assert resolved_task_spec(_ref("scan"), [pending]) is None
    assert resolved_task_spec(_ref("scan"), []) is None
    # An answered request wins over one not answered yet for the same params.
    assert resolved_task_spec(_ref("scan"), [pending, answered]) == _task("scan", "600m")["spec"]


def test_a_failed_resolution_says_the_resolvers_message() -> None:
    failed = _request(_params("scan"), status="False", message='tasks.tekton.dev "scan" not found')
    with pytest.raises(ResolutionFailed, match='the cluster resolver failed to fetch its Task: tasks.tekton.dev "scan" not found'):
        resolved_task_spec(_ref("scan"), [failed])


@pytest.mark.parametrize(
    ("data", "found"),
    [
        ("%%% not base64", "data that is not base64 YAML"),
        (base64.b64encode(b"kind: Pipeline\nspec: {}\n").decode(), "a Pipeline"),
        (base64.b64encode(b"- a list\n").decode(), "a list"),
        ("", "an empty document"),
        (base64.b64encode(b"   \n").decode(), "an empty document"),
    ],
)
def test_an_answer_that_is_not_a_task_is_refused_naming_what_it_is(data: str, found: str) -> None:
    with pytest.raises(ResolutionFailed, match=f"the cluster resolver answered with {found}"):
        decoded_task(data, "cluster")


@pytest.mark.parametrize("data", ["", None])
def test_a_succeeded_request_with_no_data_names_the_request(data: str | None) -> None:
    empty = _request(_params("scan"))
    empty["status"]["data"] = data
    with pytest.raises(ResolutionFailed, match="the cluster resolver marked ResolutionRequest ci/cluster-067ddc3d7fca56a4328c79cda6353b63 Succeeded with no status.data: read the resolver's log"):
        resolved_task_spec(_ref("scan"), [empty])
    del empty["status"]["data"]
    with pytest.raises(ResolutionFailed, match="with no status.data"):
        resolved_task_spec(_ref("scan"), [empty])


def test_a_v1beta1_task_reads_its_resources_as_compute_resources() -> None:
    task = _task("scan", "600m", api_version="tekton.dev/v1beta1")
    task["spec"]["sidecars"] = [{"name": "db", "image": "postgres", "resources": {"requests": {"memory": "64Mi"}}}]
    task["spec"]["stepTemplate"] = {"resources": {"requests": {"memory": "32Mi"}}, "env": []}
    spec = task_spec_v1(task)
    assert spec["steps"][0]["computeResources"] == {"requests": {"cpu": "600m"}} and "resources" not in spec["steps"][0]
    assert spec["sidecars"][0]["computeResources"] == {"requests": {"memory": "64Mi"}}
    assert spec["stepTemplate"] == {"computeResources": {"requests": {"memory": "32Mi"}}, "env": []}
    v1 = _task("scan", "600m")
    assert task_spec_v1(v1) == v1["spec"]


@given(st.lists(st.tuples(st.text(min_size=1, max_size=8), st.one_of(st.text(max_size=8), st.lists(st.text(max_size=4), max_size=3))), min_size=1, max_size=4, unique_by=lambda p: p[0]), st.randoms())
def test_params_match_whatever_their_order_and_differ_by_any_value(params: list[tuple[str, Any]], random: Any) -> None:
    written = [{"name": n, "value": v} for n, v in params]
    shuffled = list(written)
    random.shuffle(shuffled)
    request = _request(shuffled, data=_task("t", "1"))
    assert request_for({"resolver": "cluster", "params": written}, [request]) is request
    changed = [dict(p) for p in written]
    changed[0]["value"] = [changed[0]["value"], "x"] if isinstance(changed[0]["value"], str) else "x"
    assert request_for({"resolver": "cluster", "params": changed}, [request]) is None


def _run(tasks: list[Obj]) -> Obj:
    return {
        "metadata": {"name": "scan-x", "namespace": "ci", "uid": RUN_UID},
        "spec": {"workspaces": [{"name": "source", "volumeClaimTemplate": {"spec": {}}}]},
        "status": {"pipelineSpec": {"workspaces": [{"name": "source"}], "tasks": tasks}},
    }


def _pipeline() -> list[Obj]:
    bare = {"steps": [{"name": "s", "image": "busybox", "computeResources": {"requests": {"cpu": "50m", "memory": "16Mi"}}}], "workspaces": [{"name": "w"}]}
    return [
        {"name": "fetch", "taskSpec": bare, "workspaces": [{"name": "w", "workspace": "source"}]},
        {"name": "scan", "runAfter": ["fetch"], "taskRef": _ref("security-scan"), "workspaces": [{"name": "w", "workspace": "source"}]},
    ]


def test_the_plan_counts_a_resolved_task_in_its_groups_peak() -> None:
    scan = _task("security-scan", "2880m")
    scan["spec"]["workspaces"] = [{"name": "w"}]
    requests = [_request(_params("security-scan"), data=scan), _request(_params("security-scan"), data=_task("x", "9"), owner="another-run")]
    [group] = plan_pipeline_run(_run(_pipeline()), get_task=lambda ns, name: None, limit_range=None, resolution_requests=lambda ns, uid: requests).groups
    assert set(group.tasks) == {"fetch", "scan"}
    assert group.peak == Resources(2880, 16 * Mi)


def test_the_plan_waits_for_an_answer_and_fails_on_a_failed_one() -> None:
    with pytest.raises(PlanNotReady, match=r"PipelineRun ci/scan-x: task 'scan' waits for the cluster resolver's answer"):
        plan_pipeline_run(_run(_pipeline()), get_task=lambda ns, name: None, limit_range=None)
    failed = [_request(_params("security-scan"), status="False", message="not found")]
    with pytest.raises(PlanUnavailable, match="task 'scan': the cluster resolver failed to fetch its Task: not found") as err:
        plan_pipeline_run(_run(_pipeline()), get_task=lambda ns, name: None, limit_range=None, resolution_requests=lambda ns, uid: failed)
    assert not isinstance(err.value, PlanNotReady)


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, _request(_params("s")), QUEUE),
        (_request(_params("s"), status="Unknown"), _request(_params("s")), QUEUE),
        (_request(_params("s"), status="Unknown"), _request(_params("s"), status="False"), QUEUE),
        (None, _request(_params("s"), status="Unknown"), SKIP),
        (_request(_params("s")), _request(_params("s")), SKIP),
    ],
)
def test_an_answer_queues_the_runs_parked_pods_once(old: Obj | None, new: Obj, hint: Any) -> None:
    assert resolution_request_answered(old, new) is hint
