"""The KWOK Stages' shape: each stage is well-formed and the vocabulary is wired to selectors and delays."""

from __future__ import annotations

import re
from typing import Any

import pytest

from harness.cluster import simulation

pytestmark = pytest.mark.unit


def _by_name() -> dict[str, dict]:
    return {s["metadata"]["name"]: s for s in simulation.all_stages()}


def test_stages_are_well_formed_and_unique() -> None:
    stages = simulation.all_stages()
    names = [s["metadata"]["name"] for s in stages]
    assert len(names) == len(set(names))
    for stage in stages:
        assert stage["apiVersion"] == "kwok.x-k8s.io/v1alpha1" and stage["kind"] == "Stage"
        assert stage["spec"]["resourceRef"]["kind"] in {"Pod", "Node"}
        assert stage["spec"]["selector"]["matchExpressions"]
        assert stage["spec"]["next"]


def _keys(stage: dict) -> set[str]:
    return {e["key"] for e in stage["spec"]["selector"]["matchExpressions"]}


def test_held_pods_finish_only_on_release() -> None:
    stages = _by_name()
    timed = stages["rescon-pod-steps-finish-after"]
    held = stages["rescon-pod-steps-finish-on-release"]
    hold_key = f'.metadata.annotations["{simulation.HOLD}"]'
    release_key = f'.metadata.annotations["{simulation.RELEASE}"]'
    assert {"key": hold_key, "operator": "DoesNotExist"} in timed["spec"]["selector"]["matchExpressions"]
    assert {hold_key, release_key} <= _keys(held)
    assert timed["spec"]["delay"]["durationFrom"]["expressionFrom"] == f'.metadata.annotations["{simulation.RUN_FOR}"]'
    # KWOK v0.8 (pkg/utils/lifecycle Stage.Delay) adds a uniform draw up to the jitter; no annotation, no jitter.
    assert timed["spec"]["delay"]["jitterDurationFrom"]["expressionFrom"] == f'.metadata.annotations["{simulation.RUN_UNTIL}"]'


def test_run_until_is_an_annotation_and_the_step_script_draws_it() -> None:
    spec = simulation.sim_task_spec(cpu="100m", run_for="1s", run_until="5s")
    assert spec["metadata"]["annotations"] == {simulation.RUN_FOR: "1s", simulation.RUN_UNTIL: "5s"}
    assert simulation.RUN_UNTIL not in simulation.sim_task_spec(cpu="100m")["metadata"]["annotations"]
    assert "sim.rescon.dev/run-until" in simulation.STEP_SCRIPT and "/dev/urandom" in simulation.STEP_SCRIPT


def test_exit_codes_follow_the_attempt_and_sidecars_can_linger() -> None:
    template = _by_name()["rescon-pod-steps-finish-after"]["spec"]["next"]["statusTemplate"]
    assert simulation.EXIT_CODES in template
    assert "-retry[0-9]+$" in template  # Tekton names attempt N `<taskrun>-pod-retryN`
    assert simulation.LINGER in template
    # Tekton parses a non-empty termination message as JSON: a step gets one only when the pod gives results,
    # written as Tekton's entrypoint writes them (tests/integration/test_local_pipelines.py reads them back).
    assert template.count("message") == 1
    assert '{{ if and $results (hasPrefix "step-" .name) }}, message: {{ toJson $results | Quote }}{{ end }}' in template
    assert '(dict "key" (trimPrefix "sim.rescon.dev/result." $key) "value" $value "type" 1)' in template


def test_deleted_pods_are_removed() -> None:
    delete = _by_name()["rescon-pod-delete"]
    assert delete["spec"]["next"] == {"delete": True}
    assert ".metadata.deletionTimestamp" in _keys(delete)


# --- which pod stage KWOK picks for a pod: the selectors evaluated as KWOK v0.8 does ---
#
# KWOK runs each matchExpressions key as a jq query (sigs.k8s.io/kwok pkg/utils/expression):
# null results are dropped, a query error counts as "no value", In/NotIn compare strings, and
# NotIn/DoesNotExist hold when there is no value. The stages use only `.field`, `.[]` and
# `["key"]` steps on pods, which _query() evaluates; anything else is refused.

_STEP = re.compile(r'\.\[\]|\.([A-Za-z_][A-Za-z0-9_]*)|\["([^"]+)"\]')


class _NoValue(Exception):
    pass


def _query(obj: Any, key: str) -> list[Any]:
    values: list[Any] = [obj]
    position = 0
    while position < len(key):
        step = _STEP.match(key, position)
        assert step is not None, f"the test's evaluator does not know {key[position:]!r} in {key!r}"
        position = step.end()
        name = step.group(1) or step.group(2)
        following: list[Any] = []
        for value in values:
            if name is None:  # .[]
                if not isinstance(value, list):
                    return []  # jq: cannot iterate over null/an object -> an error -> no value
                following.extend(value)
            elif value is None:
                following.append(None)
            elif isinstance(value, dict):
                following.append(value.get(name))
            else:
                return []
        values = following
    return [v for v in values if v is not None]


def _matches(expression: dict, obj: dict) -> bool:
    values = _query(obj, expression["key"])
    operator = expression["operator"]
    strings = {str(v).lower() if isinstance(v, bool) else str(v) for v in values}
    if operator == "In":
        return bool(strings & set(expression["values"]))
    if operator == "NotIn":
        return not strings & set(expression["values"])
    if operator == "Exists":
        return bool(values)
    assert operator == "DoesNotExist", operator
    return not values


def _pod_stages_matching(pod: dict) -> set[str]:
    return {
        s["metadata"]["name"]
        for s in simulation.pod_stages()
        if all(_matches(e, pod) for e in s["spec"]["selector"]["matchExpressions"])
    }


def _pod(labels: dict[str, str], annotations: dict[str, str], *, phase: str | None = None, deleting: bool = False) -> dict:
    """_pod(...) is a pod bound to a node: Pending as the scheduler left it, or Running as the Stages make it."""
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "labels": labels, "annotations": annotations},
        "spec": {"nodeName": "n-0", "containers": [{"name": "c", "image": "i"}]},
        "status": {},
    }
    if phase == "Running":
        pod["status"] = {
            "phase": "Running",
            "podIP": "10.0.0.1",
            "containerStatuses": [{"name": "c", "state": {"running": {"startedAt": "2026-12-01T00:00:00Z"}}}],
        }
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:10Z"
    return pod


def _lingering(annotations: dict[str, str], *, deleting: bool = False) -> dict:
    """_lingering(...) is a task pod whose steps have ended while its sidecar runs on (the TaskRun done, the pod Running)."""
    pod = _pod(_TASK_LABELS, {"sim.rescon.dev/linger": "true", **annotations}, phase="Running", deleting=deleting)
    pod["status"]["containerStatuses"] = [
        {"name": "step-work", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "sidecar-linger", "state": {"running": {"startedAt": "2026-12-01T00:00:00Z"}}},
    ]
    return pod


#: An affinity-assistant pod's labels as Tekton v1.15.0 writes them (getStatefulSetLabels:
#: the PipelineRun's labels, tekton.dev/pipelineRun, app.kubernetes.io/instance and /component);
#: the instance is `affinity-assistant-` + 10 hex digits of a sha256. Typed out, not imported.
_ASSISTANT_LABELS = {
    "tekton.dev/pipelineRun": "share-x7k2p",
    "app.kubernetes.io/instance": "affinity-assistant-0a1b2c3d4e",
    "app.kubernetes.io/component": "affinity-assistant",
}
#: What the policy adds to it at creation.
_POLICY_ANNOTATIONS = {"sim.rescon.dev/hold": "true"}
_TASK_LABELS = {"tekton.dev/pipelineRun": "share-x7k2p", "tekton.dev/pipelineTask": "write", "app.kubernetes.io/managed-by": "tekton-pipelines"}


@pytest.mark.parametrize(
    ("case", "pod", "expected"),
    [
        ("assistant-pending-starts", _pod(_ASSISTANT_LABELS, _POLICY_ANNOTATIONS), {"rescon-pod-running"}),
        ("assistant-running-stays-running", _pod(_ASSISTANT_LABELS, _POLICY_ANNOTATIONS, phase="Running"), set()),
        ("assistant-deleted-goes", _pod(_ASSISTANT_LABELS, _POLICY_ANNOTATIONS, phase="Running", deleting=True), {"rescon-pod-delete"}),
        # Without the policy's annotation the assistant is played as a 1 s task: the bug it fixes.
        ("assistant-unannotated-finishes", _pod(_ASSISTANT_LABELS, {}, phase="Running"), {"rescon-pod-steps-finish-after"}),
        ("task-running-finishes-after-run-for", _pod(_TASK_LABELS, {"sim.rescon.dev/run-for": "2s"}, phase="Running"), {"rescon-pod-steps-finish-after"}),
        ("held-task-waits", _pod(_TASK_LABELS, {"sim.rescon.dev/hold": "true"}, phase="Running"), set()),
        (
            "released-task-finishes",
            _pod(_TASK_LABELS, {"sim.rescon.dev/hold": "true", "sim.rescon.dev/release": "true"}, phase="Running"),
            {"rescon-pod-steps-finish-on-release"},
        ),
        ("lingering-sidecar-stops-after-linger-for", _lingering({"sim.rescon.dev/linger-for": "1s"}), {"rescon-pod-sidecars-stop"}),
        ("held-linger-waits", _lingering({"sim.rescon.dev/linger-held": "true"}), set()),
        (
            "held-linger-stops-when-told",
            _lingering({"sim.rescon.dev/linger-held": "true", "sim.rescon.dev/stop-sidecars": "true"}),
            {"rescon-pod-sidecars-stop-when-told"},
        ),
        # stop-sidecars means nothing to a sidecar that is not held: it still runs for linger-for.
        ("unheld-linger-ignores-stop", _lingering({"sim.rescon.dev/stop-sidecars": "true"}), {"rescon-pod-sidecars-stop"}),
        ("held-linger-deleted-goes", _lingering({"sim.rescon.dev/linger-held": "true"}, deleting=True), {"rescon-pod-delete"}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_pod_state_matches_the_expected_stages(case: str, pod: dict, expected: set[str]) -> None:
    assert _pod_stages_matching(pod) == expected, case


def test_the_policy_holds_exactly_tekton_affinity_assistant_pods_at_creation() -> None:
    policy, binding = simulation.affinity_assistant_policy()
    assert (policy["kind"], binding["kind"]) == ("MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding")
    assert binding["spec"] == {"policyName": policy["metadata"]["name"]}
    constraints = policy["spec"]["matchConstraints"]
    # Tekton's own label (pkg/workspace/affinity_assistant_names.go), typed out here.
    assert constraints["objectSelector"] == {"matchLabels": {"app.kubernetes.io/component": "affinity-assistant"}}
    assert constraints["resourceRules"] == [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    assert not set(constraints["objectSelector"]["matchLabels"].items()) <= set(_TASK_LABELS.items())
    (mutation,) = policy["spec"]["mutations"]
    assert mutation["patchType"] == "ApplyConfiguration"
    assert mutation["applyConfiguration"]["expression"] == 'Object{metadata: Object.metadata{annotations: {"sim.rescon.dev/hold": "true"}}}'
    assert policy["spec"]["failurePolicy"] == "Fail"


def test_the_probe_pod_is_one_the_policy_marks() -> None:
    policy, _ = simulation.affinity_assistant_policy()
    probe = simulation.affinity_assistant_probe_pod("tekton-pipelines")
    selector = policy["spec"]["matchConstraints"]["objectSelector"]["matchLabels"]
    assert set(selector.items()) <= set(probe["metadata"]["labels"].items())
    assert probe["metadata"]["namespace"] == "tekton-pipelines" and probe["kind"] == "Pod"
