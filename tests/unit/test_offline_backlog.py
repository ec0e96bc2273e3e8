"""The offline backlog (bench/offline_backlog.py): the reference's runtime against the in-process API server."""

from __future__ import annotations

import json

import pytest

from bench import offline_backlog
from bench.fake_api import FakeApiServer, Route, merge_patch, route_of

pytestmark = pytest.mark.unit


def test_a_small_backlog_binds_every_pod_and_decides_the_same_every_time() -> None:
    first = offline_backlog.run_backlog(offline_backlog.Shape(nodes=12, pods=20))
    again = offline_backlog.run_backlog(offline_backlog.Shape(nodes=12, pods=20))
    assert (first.bound, first.unbound) == (20, 0)
    assert first.digest == again.digest
    # The Tekton mix: 3 runs per 5 pods, each run's record created and claimed once; one bind and one event per pod.
    assert first.requests["POST reservationrecords"] == 12
    assert first.requests["PUT reservationrecords/status"] == 12
    assert first.requests["POST pods/binding"] == first.requests["POST events"] == 20
    assert first.cpu_s > 0 and first.components["attempts"] > 0


def test_writes_run_early_or_late_decide_the_same_here() -> None:
    late = offline_backlog.run_backlog(offline_backlog.Shape(nodes=12, pods=20, heartbeats=False))
    early = offline_backlog.run_backlog(offline_backlog.Shape(nodes=12, pods=20, heartbeats=False, lag=0))
    assert early.digest == late.digest


def test_routes_name_the_resource_the_namespace_the_object_and_the_subresource() -> None:
    assert route_of("/api/v1/pods") == Route("pods")
    assert route_of("/api/v1/namespaces/ns/pods/p-1/binding") == Route("pods", "ns", "p-1", "binding")
    assert route_of("/apis/rescon.dev/v1alpha1/namespaces/ns/reservationrecords/r/status") == Route("reservationrecords", "ns", "r", "status")
    assert route_of("/api/v1/namespaces/ci") == Route("namespaces", None, "ci")


def test_merge_patch_removes_nulls_and_merges_maps() -> None:
    assert merge_patch({"a": {"b": 1, "d": 4}}, {"a": {"b": None, "c": 2}}) == {"a": {"c": 2, "d": 4}}


def test_a_status_write_on_an_old_version_conflicts() -> None:
    server = FakeApiServer()
    path = "/apis/rescon.dev/v1alpha1/namespaces/ns/reservationrecords"
    created = json.loads(server.request("POST", path, json.dumps({"metadata": {"name": "r"}, "spec": {}})).data)
    stale = {**created, "metadata": {**created["metadata"], "resourceVersion": "1"}, "status": {"groups": []}}
    answer = server.request("PUT", f"{path}/r/status", json.dumps(stale))
    assert answer.status == 409
    fresh = {**created, "status": {"groups": []}}
    assert server.request("PUT", f"{path}/r/status", json.dumps(fresh)).status == 200
