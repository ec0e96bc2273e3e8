"""The bind phase of volumes (runtime/volume_binder.py): the selected-node writes, the waits, and the cycle's use of them.

A fake API holds the claims (resourceVersions, compare-and-swap on merge patches); the
informer cache the binder reads is a separate dict that sees the API's state only when a
test says so (`sync()`), as a watch that lags. A fake "provisioner" reacts to the
annotation as the local-path provisioner does: it binds the claim to a volume on the node.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import Any, Callable

import kubernetes
import pytest

from bench import microbench
from reference_scheduler.core.reasons import VOLUME_CLAIM_NOT_FOUND_MESSAGE, VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY
from reference_scheduler.core.scoring import Strategy
from reference_scheduler.core.volume_binding import SELECTED_NODE_ANNOTATION, VolumeLookups
from reference_scheduler.core.volume_provisioning import SELECTED_ELSEWHERE_MESSAGE, SELECTION_REMOVED_MESSAGE, timed_out_message
from reference_scheduler.runtime import volume_binder
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import Cycle, Outcome
from reference_scheduler.runtime.records import RecordWriter
from reference_scheduler.runtime.volume_binder import (
    MERGE_PATCH,
    ProvisionWaits,
    VolumeBinder,
    cache_caught_up,
    select_node,
    unselect_node,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
#: How long a test waits for another thread's work; it is done in milliseconds, so this only bounds a failure.
THREAD_SECONDS = 5.0


# --- fakes ---------------------------------------------------------------------


class Response:
    """A raw (`_preload_content=False`) response."""

    def __init__(self, obj: Obj) -> None:
        self.data = json.dumps(obj).encode()

    def release_conn(self) -> None:
        pass


def claim(name: str, *, selected: str | None = None, bound_to: str | None = None, storage_class: str = "standard", rv: str = "1") -> Obj:
    meta: Obj = {"name": name, "namespace": "ns", "resourceVersion": rv}
    if selected is not None:
        meta["annotations"] = {SELECTED_NODE_ANNOTATION: selected}
    spec: Obj = {"storageClassName": storage_class, **({"volumeName": bound_to} if bound_to else {})}
    return {"metadata": meta, "spec": spec, "status": {"phase": "Bound" if bound_to else "Pending"}}


def volume(name: str, host: str) -> Obj:
    terms = [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [host]}]}]
    return {"metadata": {"name": name}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": terms}}}}


def node(name: str) -> Obj:
    return {
        "metadata": {"name": name, "resourceVersion": "1", "labels": {HOSTNAME: name}},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


CLASSES = {"standard": {"metadata": {"name": "standard"}, "volumeBindingMode": "WaitForFirstConsumer"}}


class FakeClaimsApi:
    """The claim endpoints of an API server, and the informer caches (claims, volumes) the scheduler reads."""

    def __init__(self, *claims: Obj, volumes: tuple[Obj, ...] = ()) -> None:
        self.objects: dict[tuple[str, str], Obj] = {("ns", c["metadata"]["name"]): c for c in claims}
        self.cache: dict[tuple[str, str], Obj] = copy.deepcopy(self.objects)
        self.volumes: dict[str, Obj] = {v["metadata"]["name"]: v for v in volumes}
        self.calls: list[str] = []
        self.version = 100
        self.conflicts = 0  # the next patches answer 409 (another writer changed the claim)
        self.fail_status: int | None = None
        self.provision: Callable[[Obj], None] | None = None  # the provisioner, told of each annotation written

    @property
    def lookups(self) -> VolumeLookups:
        """The caches as read at each call: a test may sync them in between."""
        return VolumeLookups(lambda ns, name: self.cache.get((ns, name)), self.volumes.get, CLASSES.get)

    def sync(self) -> None:
        """The informer catches up with the API."""
        self.cache = copy.deepcopy(self.objects)

    def _bump(self, obj: Obj) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)

    def read_namespaced_persistent_volume_claim(self, name: str, namespace: str, **_: Any) -> Response:
        self.calls.append(f"get {name}")
        if (namespace, name) not in self.objects:
            raise kubernetes.client.ApiException(status=404, reason="Not Found")
        return Response(self.objects[(namespace, name)])

    def patch_namespaced_persistent_volume_claim(self, name: str, namespace: str, body: Obj, **kwargs: Any) -> Response:
        assert kwargs.get("_content_type") == MERGE_PATCH and kwargs.get("_preload_content") is False
        annotation = body["metadata"]["annotations"][SELECTED_NODE_ANNOTATION]
        self.calls.append(f"patch {name} {annotation}")
        if self.fail_status is not None:
            raise kubernetes.client.ApiException(status=self.fail_status, reason="Forbidden")
        stored = self.objects.get((namespace, name))
        if stored is None:
            raise kubernetes.client.ApiException(status=404, reason="Not Found")
        if self.conflicts:
            self.conflicts -= 1
            self._bump(stored)
            raise kubernetes.client.ApiException(status=409, reason="Conflict")
        if body["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]:
            raise kubernetes.client.ApiException(status=409, reason="Conflict")
        annotations = {**(stored["metadata"].get("annotations") or {}), SELECTED_NODE_ANNOTATION: annotation}
        stored["metadata"]["annotations"] = {k: v for k, v in annotations.items() if v is not None}
        self._bump(stored)
        if annotation is not None and self.provision is not None:
            self.provision(stored)
        return Response(stored)

    def bind_on_selected_node(self, stored: Obj) -> None:
        """The local-path provisioner: a volume on the selected node, and the claim Bound to it."""
        host = stored["metadata"]["annotations"][SELECTED_NODE_ANNOTATION]
        name = f"pv-{stored['metadata']['name']}"
        self.volumes[name] = volume(name, host)
        stored["spec"]["volumeName"] = name
        stored["status"]["phase"] = "Bound"
        self._bump(stored)

    def provision_and_watch(self, stored: Obj) -> None:
        """The provisioner binds the claim and the informer shows it at once (for a bind that waits inline)."""
        self.bind_on_selected_node(stored)
        self.sync()

    def take_annotation_off(self, name: str) -> None:
        """An external provisioner's "reschedule" signal: it cannot provision there."""
        stored = self.objects[("ns", name)]
        stored["metadata"]["annotations"].pop(SELECTED_NODE_ANNOTATION, None)
        self._bump(stored)


def selected_of(api: FakeClaimsApi, name: str) -> str | None:
    found = (api.objects[("ns", name)]["metadata"].get("annotations") or {}).get(SELECTED_NODE_ANNOTATION)
    return None if found is None else str(found)


def core(api: FakeClaimsApi) -> Any:
    return api


# --- select_node and unselect_node ------------------------------------------------


class TestSelectNode:
    def test_a_pending_claim_is_annotated_with_compare_and_swap(self) -> None:
        api = FakeClaimsApi(claim("src"))
        selection = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")])
        assert selection.failure is None and selection.known_version == "101"
        assert api.calls == ["patch src n1"] and selected_of(api, "src") == "n1"

    def test_a_stale_cached_copy_costs_a_read_and_a_second_try(self) -> None:
        api = FakeClaimsApi(claim("src"))
        api._bump(api.objects[("ns", "src")])  # noqa: SLF001 - changed by someone since the cache saw it
        selection = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")])
        assert selection.failure is None
        assert api.calls == ["patch src n1", "get src", "patch src n1"]

    def test_a_claim_already_selecting_the_node_or_bound_is_not_written(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"), claim("cache", bound_to="pv-1"))
        assert select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")]) == volume_binder.Selection(known_version="1")
        assert select_node(core(api), "ns", "cache", "n1", cached=api.cache[("ns", "cache")]).failure is None
        assert api.calls == []

    def test_a_claim_selecting_another_node_is_refused_never_overwritten(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n2"))
        selection = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")])
        assert selection.failure == SELECTED_ELSEWHERE_MESSAGE.format(claim="src", selected="n2", node="n1")
        assert api.calls == [] and selected_of(api, "src") == "n2"

    def test_a_claim_not_cached_is_read_and_a_deleted_one_fails(self) -> None:
        api = FakeClaimsApi(claim("src"))
        assert select_node(core(api), "ns", "src", "n1", cached=None).failure is None
        assert api.calls == ["get src", "patch src n1"]
        assert select_node(core(api), "ns", "gone", "n1", cached=None).failure == 'persistentvolumeclaim "gone" was deleted while its volume was provisioned'

    def test_an_api_error_is_one_line_naming_the_claim(self) -> None:
        api = FakeClaimsApi(claim("src"))
        api.fail_status = 403
        failure = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")]).failure
        assert failure == 'cannot annotate persistentvolumeclaim "src" with node n1: 403 Forbidden'

    def test_a_claim_that_keeps_changing_gives_up_after_the_attempts(self) -> None:
        api = FakeClaimsApi(claim("src"))
        api.conflicts = volume_binder.CLAIM_WRITE_ATTEMPTS
        failure = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")]).failure
        assert failure is not None and "changed 3 times" in failure and selected_of(api, "src") is None


class TestUnselectNode:
    def test_the_annotation_comes_off_an_unbound_claim_still_naming_the_node(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        unselect_node(core(api), "ns", "src", "n1")
        assert api.calls == ["get src", "patch src None"] and selected_of(api, "src") is None

    def test_a_claim_bound_meanwhile_or_naming_another_node_is_left_alone(self) -> None:
        api = FakeClaimsApi(claim("bound", selected="n1", bound_to="pv-1"), claim("other", selected="n2"))
        unselect_node(core(api), "ns", "bound", "n1")
        unselect_node(core(api), "ns", "other", "n1")
        unselect_node(core(api), "ns", "gone", "n1")
        assert api.calls == ["get bound", "get other", "get gone"]
        assert (selected_of(api, "bound"), selected_of(api, "other")) == ("n1", "n2")

    def test_a_conflict_reads_again_and_decides_again(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        api.conflicts = 1
        unselect_node(core(api), "ns", "src", "n1")
        assert api.calls == ["get src", "patch src None", "get src", "patch src None"] and selected_of(api, "src") is None

    def test_an_api_error_is_logged_not_raised(self, caplog: pytest.LogCaptureFixture) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        api.fail_status = 403
        unselect_node(core(api), "ns", "src", "n1")
        assert "cannot take selected node n1 off persistentvolumeclaim ns/src: 403" in caplog.text


@pytest.mark.parametrize(
    ("cached", "known", "caught_up"),
    [
        pytest.param("41", "42", False, id="older"),
        pytest.param("42", "42", True, id="our-write"),
        pytest.param("57", "42", True, id="newer"),
        pytest.param("41", "", True, id="nothing-known"),
        pytest.param("", "42", False, id="not-cached"),
    ],
)
def test_cache_caught_up(cached: str, known: str, caught_up: bool) -> None:
    assert cache_caught_up(cached, known) is caught_up


# --- ProvisionWaits -------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class TestProvisionWaits:
    NODES = {"n1": node("n1"), "n2": node("n2")}

    def waits(self, api: FakeClaimsApi, clock: Callable[[], float] = time.monotonic) -> ProvisionWaits:
        return ProvisionWaits(lookups=api.lookups, node_named=self.NODES.get, clock=clock)

    def test_a_wait_ends_when_every_claim_is_bound_to_a_volume_on_the_node(self) -> None:
        api = FakeClaimsApi(claim("a", selected="n1"), claim("b", selected="n1"))
        waits, done = self.waits(api, Clock()), []
        waits.add("ns", ("a", "b"), "n1", timeout=60, known={}, on_done=done.append)
        assert waits.check() == 60 and done == [] and waits.pending() == 1
        api.bind_on_selected_node(api.objects[("ns", "a")])
        api.sync()
        waits.check()
        assert done == []  # b still provisioning
        api.bind_on_selected_node(api.objects[("ns", "b")])
        api.sync()
        assert waits.check() is None and done == [None] and waits.pending() == 0

    def test_the_provisioner_taking_the_annotation_off_ends_the_wait_at_once(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        waits, done = self.waits(api, Clock()), []
        waits.add("ns", ("src",), "n1", timeout=60, known={}, on_done=done.append)
        api.take_annotation_off("src")
        api.sync()
        waits.check()
        assert done == [SELECTION_REMOVED_MESSAGE.format(claim="src", node="n1")]

    def test_a_cache_older_than_our_annotation_is_not_read_as_its_removal(self) -> None:
        api = FakeClaimsApi(claim("src"))
        selection = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")])
        waits, done = self.waits(api, Clock()), []
        waits.add("ns", ("src",), "n1", timeout=60, known={"src": selection.known_version}, on_done=done.append)
        waits.check()
        assert done == []  # the cache still shows the claim without the annotation: not the provisioner's doing
        api.sync()
        waits.check()
        assert done == []
        api.take_annotation_off("src")
        api.sync()
        waits.check()
        assert done == [SELECTION_REMOVED_MESSAGE.format(claim="src", node="n1")]

    def test_a_sibling_finding_the_claim_selected_by_another_bind_waits_for_the_cache(self) -> None:
        # Two pods of a group share a claim: the first bind's annotation is in the API, not yet in the cache.
        api = FakeClaimsApi(claim("src"))
        select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")])
        selection = select_node(core(api), "ns", "src", "n1", cached=api.cache[("ns", "src")])  # the sibling's, from the stale copy
        assert selection.failure is None and api.calls == ["patch src n1", "patch src n1", "get src"]
        waits, done = self.waits(api, Clock()), []
        waits.add("ns", ("src",), "n1", timeout=60, known={"src": selection.known_version}, on_done=done.append)
        waits.check()
        assert done == []  # not read as the provisioner taking the annotation off
        api.bind_on_selected_node(api.objects[("ns", "src")])
        api.sync()
        waits.check()
        assert done == [None]

    def test_a_volume_bound_elsewhere_fails_the_wait_naming_it(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1", bound_to="pv-x"), volumes=(volume("pv-x", "n2"),))
        waits, done = self.waits(api, Clock()), []
        waits.add("ns", ("src",), "n1", timeout=60, known={}, on_done=done.append)
        waits.check()
        assert done == ['persistentvolumeclaim "src" was bound to persistentvolume "pv-x", whose node affinity does not admit node n1']

    def test_a_wait_that_runs_out_of_time_fails_naming_the_claim_still_waited_for(self) -> None:
        api = FakeClaimsApi(claim("a", selected="n1", bound_to="pv-a"), claim("b", selected="n1"), volumes=(volume("pv-a", "n1"),))
        clock = Clock()
        waits, done = self.waits(api, clock), []
        waits.add("ns", ("a", "b"), "n1", timeout=60, known={}, on_done=done.append)
        clock.now += 59.9
        assert waits.check() == pytest.approx(0.1)
        clock.now += 0.1
        waits.check()
        assert done == [timed_out_message("b", "n1", 60)]

    def test_a_hundred_waits_hold_no_thread(self) -> None:
        api = FakeClaimsApi(*(claim(f"c{i}", selected="n1") for i in range(100)))
        waits, done = self.waits(api, Clock()), []
        threads = threading.active_count()
        for i in range(100):
            waits.add("ns", (f"c{i}",), "n1", timeout=60, known={}, on_done=done.append)
        assert waits.pending() == 100 and threading.active_count() == threads
        for i in range(100):
            api.bind_on_selected_node(api.objects[("ns", f"c{i}")])
        api.sync()
        waits.check()
        assert done == [None] * 100

    def test_the_thread_is_woken_by_an_event_not_by_a_poll(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        waits, ended, stop = self.waits(api), threading.Event(), threading.Event()
        waits.IDLE_SECONDS = 60.0  # type: ignore[misc]  # only an event can end this wait in time
        thread = threading.Thread(target=waits.run, args=(stop,), daemon=True)
        thread.start()
        try:
            waits.add("ns", ("src",), "n1", timeout=60, known={}, on_done=lambda failure: ended.set())
            api.bind_on_selected_node(api.objects[("ns", "src")])
            api.sync()
            waits.notify()
            assert ended.wait(THREAD_SECONDS)
        finally:
            stop.set()
            waits.notify()
            thread.join(THREAD_SECONDS)
        assert not thread.is_alive()

    def test_the_blocking_wait_returns_when_the_claim_binds(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        waits = self.waits(api)

        def provision() -> None:
            api.bind_on_selected_node(api.objects[("ns", "src")])
            api.sync()
            waits.notify()

        timer = threading.Timer(0.05, provision)
        timer.start()
        try:
            assert waits.wait("ns", ("src",), "n1", timeout=THREAD_SECONDS, known={}) is None
        finally:
            timer.cancel()

    def test_the_blocking_wait_is_bounded(self) -> None:
        api = FakeClaimsApi(claim("src", selected="n1"))
        started = time.monotonic()
        assert self.waits(api).wait("ns", ("src",), "n1", timeout=0.05, known={}) == timed_out_message("src", "n1", 0.05)
        assert time.monotonic() - started < THREAD_SECONDS


# --- the cycle's bind phase ---------------------------------------------------------------


class FakeRecordsApi:
    """Just enough of the record endpoints for one group's claim and its rollback."""

    def __init__(self, record: Obj) -> None:
        self.record = record
        self.version = 10

    def replace_namespaced_custom_object_status(self, group: str, version: str, ns: str, plural: str, name: str, body: Obj) -> Obj:
        if body["metadata"].get("resourceVersion") != self.record["metadata"]["resourceVersion"]:
            raise kubernetes.client.ApiException(status=409)
        self.version += 1
        self.record = {**self.record, "metadata": {**self.record["metadata"], "resourceVersion": str(self.version)}, "status": body["status"]}
        return copy.deepcopy(self.record)

    def get_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, name: str) -> Obj:
        return copy.deepcopy(self.record)

    def patch_namespaced_custom_object(self, *args: Any) -> Obj:
        return copy.deepcopy(self.record)


def pending_pod(name: str, *claims: str, run: str | None = None, task: str = "fetch") -> Obj:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if run else {}
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1", "labels": labels},
        "spec": {
            "schedulerName": "s",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
            "volumes": [{"name": f"ws-{c}", "persistentVolumeClaim": {"claimName": c}} for c in claims],
        },
        "status": {"phase": "Pending"},
    }


def group_record(*, state: str = "Pending", node_name: str | None = None) -> Obj:
    entry: Obj = {"name": "g0", "state": state, "holders": [], "claimGeneration": 1 if node_name else 0}
    if node_name:
        entry["node"] = node_name
    return {
        "metadata": {"name": "run", "namespace": "ns", "resourceVersion": "5"},
        "spec": {"groups": [{"name": "g0", "tasks": ["fetch", "build"], "workspaces": ["cache", "source"], "peak": {"cpu": "1", "memory": "64Mi"}}]},
        "status": {"groups": [entry]},
    }


#: The PipelineRun of group_record(): `cache` is bound to the existing claim team-cache.
PIPELINE_RUN = {
    "metadata": {"name": "run", "namespace": "ns"},
    "spec": {"workspaces": [{"name": "source", "volumeClaimTemplate": {}}, {"name": "cache", "persistentVolumeClaim": {"claimName": "team-cache"}}]},
}


class VolumeCycle:
    """A Cycle over nodes n1 and n2 (n1 wins every tie), with the fake claims API behind its VolumeBinder."""

    def __init__(
        self, api: FakeClaimsApi, pods: list[Obj], *, record: Obj | None = None, workers: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.api = api
        self.records = FakeRecordsApi(record) if record is not None else None
        self.view = ClusterView(
            pods=microbench._informer("pods", pods),  # noqa: SLF001
            nodes=microbench._informer("nodes", [node("n1"), node("n2")]),  # noqa: SLF001
            records=microbench._informer("records", [record] if record is not None else []),  # noqa: SLF001
        )
        writer = RecordWriter(None, field_manager="s", latest=self.view.confirmed_record_of, on_written=self.view.assume_record)  # type: ignore[arg-type]
        writer._custom = self.records  # type: ignore[assignment]  # noqa: SLF001
        # A wait inline that no event ends fails the test in THREAD_SECONDS, not in a minute.
        self.binder = VolumeBinder(None, lookups=api.lookups, node_named=self.view.node_named, timeout=60 if workers else THREAD_SECONDS, clock=clock)
        self.binder._core = api  # type: ignore[assignment]  # noqa: SLF001
        self.events = microbench._Events()  # noqa: SLF001
        self.binds: list[Callable[[], Outcome]] = []
        self.bound: list[tuple[str, str]] = []
        self.cycle = Cycle(
            api=None,  # type: ignore[arg-type]
            view=self.view,
            records=writer,
            events=self.events,  # type: ignore[arg-type]
            get_pipeline_run=lambda ns, name: PIPELINE_RUN if name == "run" else None,
            get_task=lambda ns, name: None,
            get_limit_range=lambda ns: None,
            strategy=Strategy.LEAST_ALLOCATED,
            scheduler_name="s",
            bind_later=(lambda pod, bind: self.binds.append(bind)) if workers else None,
            volumes=self.binder,
        )
        self.cycle._bind = lambda pod, node_name: self.bound.append((pod["metadata"]["name"], node_name))  # type: ignore[method-assign]  # noqa: SLF001

    def run_binds(self) -> list[Outcome]:
        done, self.binds = self.binds, []
        return [bind() for bind in done]

    def group_entry(self) -> Obj:
        assert self.records is not None
        entry: Obj = self.records.record["status"]["groups"][0]
        return entry


class TestCycleFilter:
    def test_a_bound_claims_volume_decides_the_node_over_scoring(self) -> None:
        api = FakeClaimsApi(claim("cache", bound_to="pv-1"), volumes=(volume("pv-1", "n2"),))
        h = VolumeCycle(api, [p := pending_pod("p", "cache")])
        assert h.cycle.schedule(p) is Outcome.BOUND and h.bound == [("p", "n2")]
        assert api.calls == []  # a Bound claim is not written

    def test_a_missing_claim_fails_every_node_at_once_naming_it(self) -> None:
        h = VolumeCycle(FakeClaimsApi(), [p := pending_pod("p", "cache")])
        assert h.cycle.schedule(p) is Outcome.UNSCHEDULABLE
        assert h.events.messages == [f"p: 0/2 nodes are available: {VOLUME_CLAIM_NOT_FOUND_MESSAGE.format(claim='cache')}."]

    def test_volumes_that_can_never_meet_leave_the_pod_pending_with_the_conflict_named(self) -> None:
        api = FakeClaimsApi(claim("a", bound_to="pv-a"), claim("b", bound_to="pv-b"), volumes=(volume("pv-a", "n1"), volume("pv-b", "n2")))
        h = VolumeCycle(api, [p := pending_pod("p", "a", "b")])
        assert h.cycle.schedule(p) is Outcome.UNSCHEDULABLE and h.bound == []
        (message,) = h.events.messages
        assert f"0/2 nodes are available: 2 {VOLUME_NODE_AFFINITY_CONFLICT_SUMMARY}." in message
        assert 'persistentvolume "pv-a"' in message and 'persistentvolume "pv-b"' in message

    def test_a_pod_without_claims_never_reads_a_volume_cache(self) -> None:
        def refuse(*args: Any) -> None:
            raise AssertionError("a pod without claims read the volume caches")

        api = FakeClaimsApi()
        h = VolumeCycle(api, [p := pending_pod("p")])
        h.binder.lookups = VolumeLookups(refuse, refuse, refuse)
        assert h.cycle.schedule(p) is Outcome.BOUND

    def test_v3_the_groups_first_pod_goes_where_a_later_tasks_pinned_claim_is(self) -> None:
        # fetch mounts only the template claim (pvc-src); build, with no pod yet, mounts team-cache, pinned to n2.
        api = FakeClaimsApi(claim("pvc-src"), claim("team-cache", bound_to="pv-cache"), volumes=(volume("pv-cache", "n2"),))
        api.provision = api.provision_and_watch
        h = VolumeCycle(api, [fetch := pending_pod("fetch", "pvc-src", run="run")], record=group_record())
        assert h.cycle.schedule(fetch) is Outcome.BOUND
        assert h.bound == [("fetch", "n2")] and (h.group_entry()["state"], h.group_entry()["node"]) == ("Reserved", "n2")
        assert selected_of(api, "pvc-src") == "n2"

    def test_a_reserved_groups_pod_whose_claim_excludes_the_groups_node_is_not_bound(self) -> None:
        api = FakeClaimsApi(claim("other", bound_to="pv-o"), volumes=(volume("pv-o", "n2"),))
        h = VolumeCycle(api, [build := pending_pod("build", "other", run="run", task="build")], record=group_record(state="Reserved", node_name="n1"))
        assert h.cycle.schedule(build) is Outcome.UNSCHEDULABLE and h.bound == []
        assert "node(s) had volume node affinity conflict" in h.events.messages[0]


class TestCycleBindPhase:
    def test_inline_the_claim_is_annotated_provisioned_and_then_the_pod_bound(self) -> None:
        api = FakeClaimsApi(claim("src"))
        api.provision = api.provision_and_watch
        h = VolumeCycle(api, [p := pending_pod("p", "src")])
        assert h.cycle.schedule(p) is Outcome.BOUND
        assert api.calls == ["patch src n1"] and h.bound == [("p", "n1")]
        assert api.objects[("ns", "src")]["spec"]["volumeName"] == "pv-src"

    def test_with_workers_the_wait_holds_no_worker_and_the_bind_resumes_on_one(self) -> None:
        api = FakeClaimsApi(claim("src"))
        h = VolumeCycle(api, [p := pending_pod("p", "src")], workers=True)
        assert h.cycle.schedule(p) is Outcome.BINDING
        assert h.run_binds() == [Outcome.BINDING]  # annotated; now waiting, off the worker
        assert h.binder.waits.pending() == 1 and h.binds == [] and h.bound == []
        api.bind_on_selected_node(api.objects[("ns", "src")])
        api.sync()
        h.binder.waits.check()
        assert h.run_binds() == [Outcome.BOUND] and h.bound == [("p", "n1")]

    def test_a_provisioner_that_gives_up_fails_the_bind_and_everything_is_rolled_back(self) -> None:
        api = FakeClaimsApi(claim("pvc-src"), claim("team-cache", bound_to="pv-cache"), volumes=(volume("pv-cache", "n1"),))
        h = VolumeCycle(api, [fetch := pending_pod("fetch", "pvc-src", run="run")], record=group_record(), workers=True)
        assert h.cycle.schedule(fetch) is Outcome.BINDING
        assert h.run_binds() == [Outcome.BINDING]
        assert h.group_entry()["state"] == "Reserved" and h.view.node_of("uid-fetch") == "n1"
        api.take_annotation_off("pvc-src")
        api.sync()
        h.binder.waits.check()
        assert h.run_binds() == [Outcome.RETRY] and h.bound == []
        assert h.view.node_of("uid-fetch") is None  # un-assumed
        assert h.group_entry()["state"] == "Pending"  # its claim rolled back, as after any failed bind
        assert h.events.messages == [f"fetch: FailedBinding volume binding on n1 failed: {SELECTION_REMOVED_MESSAGE.format(claim='pvc-src', node='n1')}"]
        assert api.calls[-1] == "get pvc-src"  # already off: nothing to take off

    def test_a_timeout_takes_our_annotation_off_again(self) -> None:
        api = FakeClaimsApi(claim("src"))
        clock = Clock()
        h = VolumeCycle(api, [p := pending_pod("p", "src")], workers=True, clock=clock)
        assert h.cycle.schedule(p) is Outcome.BINDING and h.run_binds() == [Outcome.BINDING]
        api.sync()
        clock.now += 60
        h.binder.waits.check()
        assert h.run_binds() == [Outcome.RETRY]
        assert selected_of(api, "src") is None and api.calls[-2:] == ["get src", "patch src None"]
        assert h.events.messages == [f"p: FailedBinding volume binding on n1 failed: {timed_out_message('src', 'n1', 60)}"]

    def test_a_claim_selected_for_another_node_since_the_attempt_fails_the_bind_unwritten(self) -> None:
        api = FakeClaimsApi(claim("src"))
        h = VolumeCycle(api, [p := pending_pod("p", "src")], workers=True)
        assert h.cycle.schedule(p) is Outcome.BINDING
        api.objects[("ns", "src")]["metadata"]["annotations"] = {SELECTED_NODE_ANNOTATION: "n2"}
        api.sync()
        assert h.run_binds() == [Outcome.RETRY] and api.calls == [] and selected_of(api, "src") == "n2"
        assert h.events.messages == ['p: FailedBinding volume binding on n1 failed: persistentvolumeclaim "src" is being provisioned on node n2']
