"""Tasks fetched through a resolver: found in the run's ResolutionRequests, planned like any other (docs/contract.md section 6)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.core.queue_hints import QUEUE, SKIP, resolution_request_answered
from reference_scheduler.core.resolved_tasks import (
    FIX_ENCODING,
    FIX_NOT_A_TASK,
    FIX_TASK_SPEC,
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


REQUEST = "ResolutionRequest ci/cluster-067ddc3d7fca56a4328c79cda6353b63"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _refusal(data: str) -> str:
    """_refusal(status.data) is the one error resolved_task_spec raises for a Succeeded request answering with it."""
    with pytest.raises(ResolutionFailed) as err:
        resolved_task_spec(_ref("scan"), [_request(_params("scan"), data=data)])
    message = str(err.value)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize(
    ("data", "found", "fix"),
    [
        ("%%% not base64", "status.data that is not base64 (", FIX_ENCODING),
        ("c2Nhbg=", "status.data that is not base64 (", FIX_ENCODING),
        ("dGFzaw==é", "status.data that is not base64 (", FIX_ENCODING),
        (_b64("kind: [Task\n"), "status.data that is not YAML or JSON once decoded (", FIX_ENCODING),
        (_b64("kind: Task\n  spec: {}\n"), "status.data that is not YAML or JSON once decoded (mapping values are not allowed here at line 2, column 7)", FIX_ENCODING),
        (base64.b64encode(b"\xff\xfe\x00").decode(), "status.data that is not YAML or JSON once decoded (", FIX_ENCODING),
        (_b64("kind: Pipeline\nspec: {}\n"), "a Pipeline, not a Task", FIX_NOT_A_TASK),
        (_b64('{"apiVersion": "v1", "kind": "ConfigMap"}'), "a ConfigMap, not a Task", FIX_NOT_A_TASK),
        (_b64("metadata: {name: scan}\n"), "a document without a kind, not a Task", FIX_NOT_A_TASK),
        (_b64("kind: [Task]\n"), "a document whose kind is a YAML list, not a Task", FIX_NOT_A_TASK),
        (_b64("- a list\n"), "a YAML list, not a Task (a mapping with kind: Task)", FIX_NOT_A_TASK),
        (_b64("just text\n"), "a YAML string, not a Task (a mapping with kind: Task)", FIX_NOT_A_TASK),
        (_b64("42\n"), "a YAML number, not a Task (a mapping with kind: Task)", FIX_NOT_A_TASK),
        (_b64("   \n"), "an empty document, not a Task", FIX_NOT_A_TASK),
        (_b64("kind: Task\nspec: [steps]\n"), "a Task whose spec is a YAML list, not a mapping", FIX_TASK_SPEC),
        (_b64("kind: Task\nspec: scan\n"), "a Task whose spec is a YAML string, not a mapping", FIX_TASK_SPEC),
    ],
)
def test_an_answer_that_is_not_a_task_is_refused_in_one_line_naming_the_request_what_it_is_and_the_fix(data: str, found: str, fix: str) -> None:
    message = _refusal(data)
    assert message.startswith(f"the cluster resolver answered {REQUEST} with {found}"), message
    assert message.endswith(f": {fix}"), message


def test_decoded_task_alone_says_its_request() -> None:
    with pytest.raises(ResolutionFailed, match=r"^the cluster resolver answered its ResolutionRequest with a YAML list, not a Task"):
        decoded_task(_b64("- a list\n"), "cluster")
    assert decoded_task(_b64("kind: Task\n"), "cluster") == {"kind": "Task"}


@pytest.mark.parametrize("data", ["", None, "absent", "  \n", {}])
def test_a_succeeded_request_with_no_data_names_the_request_and_where_to_look(data: Any) -> None:
    empty = _request(_params("scan"))
    if data == "absent":
        del empty["status"]["data"]
    else:
        empty["status"]["data"] = data
    with pytest.raises(ResolutionFailed) as err:
        resolved_task_spec(_ref("scan"), [empty])
    assert str(err.value) == (
        "the cluster resolver marked ResolutionRequest ci/cluster-067ddc3d7fca56a4328c79cda6353b63 Succeeded with no status.data: "
        "read the resolver's log and the request's status.conditions "
        "(kubectl get resolutionrequest -n ci cluster-067ddc3d7fca56a4328c79cda6353b63 -o yaml)"
    )


def test_a_request_not_answered_yet_is_waited_for_whatever_its_data() -> None:
    for data in ("", "%%% not base64"):
        assert resolved_task_spec(_ref("scan"), [_request(_params("scan"), status="Unknown", data=data)]) is None
    unanswered = _request(_params("scan"))
    del unanswered["status"]
    assert resolved_task_spec(_ref("scan"), [unanswered]) is None


def test_a_resolvers_message_of_many_lines_is_said_in_one() -> None:
    failed = _request(_params("scan"), status="False", message="error requesting remote resource:\n  git clone failed:\n\texit status 128")
    with pytest.raises(ResolutionFailed, match=r"^the cluster resolver failed to fetch its Task: error requesting remote resource: git clone failed: exit status 128$"):
        resolved_task_spec(_ref("scan"), [failed])


@given(st.text(min_size=1).filter(lambda t: t.strip() and not _is_base64(t)))
def test_any_data_that_is_not_base64_is_refused_naming_the_request(data: str) -> None:
    message = _refusal(data)
    assert message.startswith(f"the cluster resolver answered {REQUEST} with status.data that is not base64 ("), message


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


_NOT_MAPPINGS = st.one_of(
    st.integers().map(lambda v: (v, "number")),
    st.booleans().map(lambda v: (v, "boolean")),
    st.text(min_size=1).map(lambda v: (v, "string")),
    st.lists(st.one_of(st.integers(), st.text()), max_size=4).map(lambda v: (v, "list")),
)


@given(_NOT_MAPPINGS, st.sampled_from(["yaml", "json"]))
def test_decoded_data_that_is_no_mapping_is_refused_naming_its_yaml_type(value_and_type: tuple[Any, str], encoding: str) -> None:
    value, yaml_type = value_and_type
    text = json.dumps(value) if encoding == "json" else yaml.safe_dump(value)
    message = _refusal(_b64(text))
    assert message.startswith(f"the cluster resolver answered {REQUEST} with a YAML {yaml_type}, not a Task"), message


@given(st.one_of(st.binary(), st.text().map(str.encode)))
def test_whatever_the_data_decodes_to_the_answer_is_a_task_spec_or_one_line_naming_the_request(raw: bytes) -> None:
    request = _request(_params("scan"), data=base64.b64encode(raw).decode())
    try:
        spec = resolved_task_spec(_ref("scan"), [request])
    except ResolutionFailed as err:
        assert "\n" not in str(err) and REQUEST in str(err), str(err)
    else:
        assert isinstance(spec, dict)


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
