"""World's index of task pods by run is the brute-force filter, whatever the watch does to the pods in between."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.monitor import invariants as rules

pytestmark = pytest.mark.unit

RUNS = [("a", "r1"), ("a", "r2"), ("b", "r1")]


def _pod(uid: str, namespace: str, run: str, task: str, version: int) -> dict[str, Any]:
    labels = {rules.PIPELINE_RUN_LABEL: run, rules.PIPELINE_TASK_LABEL: task} if task else {}
    return {"metadata": {"uid": uid, "namespace": namespace, "name": f"{run}-{task}-{uid}", "labels": labels, "resourceVersion": str(version)}}


_change = st.tuples(
    st.sampled_from(["set", "pop", "del", "clear", "update", "setdefault"]),
    st.sampled_from([f"u{i}" for i in range(6)]),
    st.sampled_from(RUNS),
    st.sampled_from(["", "build", "test"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_change, max_size=30))
def test_group_pods_equals_the_brute_force_filter_after_every_change(changes: list[tuple[str, str, tuple[str, str], str]]) -> None:
    world = rules.World()
    for version, (how, uid, (namespace, run), task) in enumerate(changes):
        pod = _pod(uid, namespace, run, task, version)
        if how == "set":
            world.pods[uid] = pod
        elif how == "pop":
            world.pods.pop(uid, None)
        elif how == "del" and uid in world.pods:
            del world.pods[uid]
        elif how == "clear":
            world.pods.clear()
        elif how == "update":
            world.pods.update({uid: pod})
        elif how == "setdefault":
            world.pods.setdefault(uid, pod)
        for ns, r in RUNS:
            for tasks in (("build",), ("test",), ("build", "test")):
                assert rules.group_pods(world, ns, r, tasks) == rules.group_pods_of(world.pods.values(), ns, r, tasks)


def test_a_world_given_a_plain_dict_indexes_it_too() -> None:
    world = rules.World(pods={"u1": _pod("u1", "a", "r1", "build", 1)})
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u1"]
    world.pods["u2"] = _pod("u2", "a", "r1", "build", 2)
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u1", "u2"]


def test_expected_groups_are_computed_once_per_run_version(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(rules, "expected_groups", lambda run: calls.append(run) or ())
    world = rules.World()
    run = {"metadata": {"uid": "r", "resourceVersion": "1"}}
    world.groups_of(run)
    world.groups_of(run)
    world.groups_of({"metadata": {"uid": "r", "resourceVersion": "2"}})
    world.groups_of({"metadata": {}})
    world.groups_of({"metadata": {}})
    assert len(calls) == 4


def test_a_plain_dict_assigned_later_is_wrapped_and_indexed_afresh() -> None:
    world = rules.World(pods={"u1": _pod("u1", "a", "r1", "build", 1)})
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u1"]
    # A new mapping whose own count of changes equals the one the index was built at.
    world.pods = {"u2": _pod("u2", "a", "r1", "build", 2)}
    assert isinstance(world.pods, rules.PodsByUid)
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u2"]
    world.pods["u3"] = _pod("u3", "a", "r1", "build", 3)
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u2", "u3"]


def test_a_new_counted_mapping_is_indexed_afresh_even_at_the_same_count() -> None:
    world = rules.World(pods={"u1": _pod("u1", "a", "r1", "build", 1)})
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u1"]
    fresh = rules.PodsByUid({"u2": _pod("u2", "a", "r1", "build", 2)})
    assert fresh.changes == world.pods.changes  # its count alone cannot tell the index is stale
    world.pods = fresh
    assert [p["metadata"]["uid"] for p in rules.group_pods(world, "a", "r1", ["build"])] == ["u2"]
