"""The scheduler's ResolutionRequest wiring: the cache it keeps, the requests `_resolution_requests_of` gives a run, the answers that move parked pods.

A run's requests are the cached ones in its namespace with an ownerReference to
that PipelineRun's uid (core.resolved_tasks.requests_owned_by); labels and names
play no part. The cache is the real Informer, fed by its own relist from a listing
(as the API would answer it), so the store and the handlers run as they do live.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import kubernetes
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_scheduler.runtime.cluster_view import PIPELINE_RUN_LABEL, PIPELINE_TASK_LABEL
from reference_scheduler.runtime.kube_api import KubeApi
from reference_scheduler.runtime.scheduler import Scheduler

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class Inline:
    """A Background that runs each task at once, on the caller's thread."""

    def submit(self, task: Any) -> bool:
        task()
        return True


def scheduler() -> Scheduler:
    found = Scheduler(kubernetes.client.ApiClient(), scheduler_name="s")
    found.binds = Inline()  # type: ignore[assignment]
    return found


def owner(uid: str, *, kind: str = "PipelineRun", name: str = "run") -> Obj:
    return {"apiVersion": "tekton.dev/v1", "kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}


def resolution_request(name: str, namespace: str, *owners: Obj, answered: bool = False, version: str = "1", labels: Obj | None = None) -> Obj:
    condition = {"type": "Succeeded", "status": "True" if answered else "Unknown"}
    metadata: Obj = {"name": name, "namespace": namespace, "resourceVersion": version, "labels": {"resolution.tekton.dev/type": "cluster", **(labels or {})}}
    if owners:
        metadata["ownerReferences"] = list(owners)
    return {"metadata": metadata, "spec": {"params": [{"name": "name", "value": "scan"}]}, "status": {"conditions": [condition], "data": ""}}


def listing(requests: list[Obj]) -> Obj:
    """listing(requests) is the list the API answers (resolution.tekton.dev/v1beta1, cluster-wide)."""
    items = [copy.deepcopy(r) for r in requests]
    return {"apiVersion": "resolution.tekton.dev/v1beta1", "kind": "ResolutionRequestList", "metadata": {"resourceVersion": "9"}, "items": items}


def relist(found: Scheduler, requests: list[Obj]) -> None:
    """relist(scheduler, requests): the scheduler's ResolutionRequest informer lists these, its store and handlers as live."""
    found.resolution_requests._list_raw = lambda **_: listing(requests)  # noqa: SLF001
    found.resolution_requests._relist()  # noqa: SLF001


def names(requests: list[Obj]) -> list[str]:
    return sorted(r["metadata"]["name"] for r in requests)


def test_the_informer_lists_resolution_requests_of_every_namespace_from_the_v1beta1_api(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Obj] = []

    class Response:
        data = json.dumps(listing([resolution_request("mine", "ns", owner("u1"))]))

    def list_cluster_custom_object(self: Any, **kwargs: Any) -> Response:
        asked.append(kwargs)
        return Response()

    monkeypatch.setattr(KubeApi, "list_cluster_custom_object", list_cluster_custom_object)
    found = scheduler()
    assert found.resolution_requests in found.informers
    found.resolution_requests._relist()  # noqa: SLF001 - the informer's own lister, against the patched API call
    assert [(a["group"], a["version"], a["plural"]) for a in asked] == [("resolution.tekton.dev", "v1beta1", "resolutionrequests")]
    assert names(found._resolution_requests_of("ns", "u1")) == ["mine"]  # noqa: SLF001


def test_an_empty_cache_gives_every_run_no_requests() -> None:
    found = scheduler()
    assert found._resolution_requests_of("ns", "u1") == []  # noqa: SLF001 - never listed
    relist(found, [])
    assert found._resolution_requests_of("ns", "u1") == []  # noqa: SLF001 - listed, empty
    assert found._resolution_requests_of("", "") == []  # noqa: SLF001 - a run without namespace or uid


def test_a_run_gets_the_requests_it_owns_in_its_namespace_and_no_others() -> None:
    found = scheduler()
    relist(
        found,
        [
            resolution_request("mine", "ns", owner("u1")),
            resolution_request("mine-too", "ns", owner("u1"), answered=True),
            resolution_request("co-owned", "ns", owner("u9", kind="ConfigMap", name="cm"), owner("u1")),
            resolution_request("other-run", "ns", owner("u2", name="other")),
            resolution_request("other-namespace", "elsewhere", owner("u1")),
            resolution_request("taskrun-owned", "ns", owner("u1", kind="TaskRun")),
            resolution_request("no-owner", "ns"),
            resolution_request("labelled-only", "ns", owner("u2"), labels={PIPELINE_RUN_LABEL: "run"}),
        ],
    )
    assert names(found._resolution_requests_of("ns", "u1")) == ["co-owned", "mine", "mine-too"]  # noqa: SLF001
    assert names(found._resolution_requests_of("ns", "u2")) == ["labelled-only", "other-run"]  # noqa: SLF001
    assert names(found._resolution_requests_of("elsewhere", "u1")) == ["other-namespace"]  # noqa: SLF001
    assert found._resolution_requests_of("ns", "u3") == []  # noqa: SLF001
    assert found._resolution_requests_of("ns", "") == []  # noqa: SLF001 - "no uid" owns nothing


def test_the_cycle_plans_from_this_cache() -> None:
    found = scheduler()
    relist(found, [resolution_request("mine", "ns", owner("u1")), resolution_request("theirs", "ns", owner("u2"))])
    assert found.cycle._get_resolution_requests == found._resolution_requests_of  # noqa: SLF001
    assert names(found.cycle._get_resolution_requests("ns", "u1")) == ["mine"]  # noqa: SLF001


def test_what_a_run_gets_is_a_copy_and_follows_the_cache() -> None:
    found = scheduler()
    relist(found, [resolution_request("mine", "ns", owner("u1"))])
    [got] = found._resolution_requests_of("ns", "u1")  # noqa: SLF001
    got["metadata"] = {}
    assert names(found._resolution_requests_of("ns", "u1")) == ["mine"]  # noqa: SLF001 - the cached object is untouched
    relist(found, [resolution_request("mine", "ns", owner("u1"), answered=True, version="2"), resolution_request("new", "ns", owner("u1"))])
    now = {r["metadata"]["name"]: r for r in found._resolution_requests_of("ns", "u1")}  # noqa: SLF001
    assert set(now) == {"mine", "new"} and now["mine"]["status"]["conditions"][0]["status"] == "True"
    relist(found, [resolution_request("new", "ns", owner("u1"))])
    assert names(found._resolution_requests_of("ns", "u1")) == ["new"]  # noqa: SLF001 - deleted from the API, gone from the run's


def parked(found: Scheduler, name: str, run: str) -> None:
    """parked(scheduler, pod, run): a pending pod of that PipelineRun, in the cache and in the unschedulable queue."""
    labels = {PIPELINE_RUN_LABEL: run, PIPELINE_TASK_LABEL: "scan"}
    pod = {"metadata": {"name": name, "namespace": "ns", "uid": name, "labels": labels}, "spec": {"schedulerName": "s", "containers": []}, "status": {"phase": "Pending"}}
    found.pods._store[("ns", name)] = pod  # noqa: SLF001
    found.queue.add(("ns", name))
    key = found.queue.pop(timeout=0)
    assert key is not None
    found.queue.done(key, unschedulable=True)


def test_an_answer_in_the_cache_moves_only_its_runs_parked_pods() -> None:
    found = scheduler()
    relist(found, [resolution_request("req-a", "ns", owner("ua", name="run-a")), resolution_request("req-b", "ns", owner("ub", name="run-b"))])
    parked(found, "pod-a", "run-a")
    parked(found, "pod-b", "run-b")
    assert found.queue.lengths()["unschedulable"] == 2
    relist(found, [resolution_request("req-a", "ns", owner("ua", name="run-a"), answered=True, version="2"), resolution_request("req-b", "ns", owner("ub", name="run-b"))])
    assert found.queue.lengths()["unschedulable"] == 1  # pod-a moved to be tried again; pod-b still waits for its answer
    assert found.queue.pop(timeout=0) == ("ns", "pod-a")


@functools.cache
def _shared() -> Scheduler:
    """_shared() is one scheduler for the property below: each relist replaces its whole cache."""
    return scheduler()


_REQUESTS = st.lists(
    st.tuples(
        st.sampled_from(["ns", "elsewhere"]),
        st.lists(st.tuples(st.sampled_from(["PipelineRun", "TaskRun"]), st.sampled_from(["u1", "u2"])), max_size=3),
    ),
    max_size=8,
)


@given(_REQUESTS, st.sampled_from(["ns", "elsewhere"]), st.sampled_from(["u1", "u2", "u3"]))
def test_a_run_gets_exactly_the_requests_of_its_namespace_with_a_pipelinerun_owner_of_its_uid(
    shape: list[tuple[str, list[tuple[str, str]]]], namespace: str, uid: str
) -> None:
    found = _shared()
    requests = [resolution_request(f"r{i}", ns, *(owner(u, kind=k) for k, u in owners)) for i, (ns, owners) in enumerate(shape)]
    relist(found, requests)
    expected = [f"r{i}" for i, (ns, owners) in enumerate(shape) if ns == namespace and ("PipelineRun", uid) in owners]
    assert names(found._resolution_requests_of(namespace, uid)) == sorted(expected)  # noqa: SLF001
