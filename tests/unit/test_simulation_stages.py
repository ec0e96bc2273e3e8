"""The KWOK Stages' shape: each stage is well-formed and the vocabulary is wired to selectors and delays."""

from __future__ import annotations

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


def test_exit_codes_follow_the_attempt_and_sidecars_can_linger() -> None:
    template = _by_name()["rescon-pod-steps-finish-after"]["spec"]["next"]["statusTemplate"]
    assert simulation.EXIT_CODES in template
    assert "-retry[0-9]+$" in template  # Tekton names attempt N `<taskrun>-pod-retryN`
    assert simulation.LINGER in template
    assert "message" not in template  # Tekton parses a non-empty termination message as JSON


def test_deleted_pods_are_removed() -> None:
    delete = _by_name()["rescon-pod-delete"]
    assert delete["spec"]["next"] == {"delete": True}
    assert ".metadata.deletionTimestamp" in _keys(delete)
