"""The binding cycle: claim on the scheduling thread, assume, bind on a worker; and the writes it makes.

A fake records API stands in for the API server (resourceVersions, compare-and-swap, a status
subresource that create ignores); the record informer is never told of the writes, as when
its watch lags behind the scheduler, so only ClusterView's assumed records can show them.
"""

from __future__ import annotations

from typing import Any, Callable

import kubernetes
import pytest

from bench import microbench
from reference_scheduler.core.scoring import Strategy
from reference_scheduler.core.volume_binding import VolumeLookups
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import Cycle, Outcome
from reference_scheduler.runtime.records import ACTIVE_LABEL, RecordWriter
from reference_scheduler.runtime.volume_binder import VolumeBinder

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class FakeRecordsApi:
    """The ReservationRecord endpoints of an API server: each write bumps the resourceVersion."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], Obj] = {}
        self.calls: list[str] = []
        self._version = 100

    def _bump(self, obj: Obj) -> Obj:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        self.objects[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
        return {**obj, "metadata": dict(obj["metadata"])}

    def put(self, record: Obj) -> None:
        self._bump({**record, "metadata": dict(record["metadata"])})

    def create_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, body: Obj) -> Obj:
        self.calls.append("create")
        return self._bump({k: v for k, v in body.items() if k != "status"})  # status ignored on create

    def get_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, name: str) -> Obj:
        self.calls.append("get")
        if (ns, name) not in self.objects:
            raise kubernetes.client.ApiException(status=404)
        stored = self.objects[(ns, name)]
        return {**stored, "metadata": dict(stored["metadata"])}

    def replace_namespaced_custom_object_status(self, group: str, version: str, ns: str, plural: str, name: str, body: Obj) -> Obj:
        self.calls.append("status")
        stored = self.objects[(ns, name)]
        if body["metadata"].get("resourceVersion") != stored["metadata"]["resourceVersion"]:
            raise kubernetes.client.ApiException(status=409)
        return self._bump({**stored, "metadata": dict(stored["metadata"]), "status": body["status"]})

    def patch_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, name: str, body: Obj) -> Obj:
        self.calls.append("label")
        stored = self.objects[(ns, name)]
        labels = {**(stored["metadata"].get("labels") or {}), **body["metadata"]["labels"]}
        labels = {k: v for k, v in labels.items() if v is not None}
        return self._bump({**stored, "metadata": {**stored["metadata"], "labels": labels}})


def _node(name: str) -> Obj:
    return {
        "metadata": {"name": name, "resourceVersion": "1", "labels": {}},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def _record(run: str, *, peak: str = "3", tasks: tuple[str, ...] = ("a", "b")) -> Obj:
    return {
        "metadata": {"name": run, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"groups": [{"name": "g0", "tasks": list(tasks), "peak": {"cpu": peak, "memory": "64Mi"}}]},
    }


def _pending(name: str, run: str, task: str = "a") -> Obj:
    return {
        "metadata": {
            "name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1",
            "labels": {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task},
        },
        "spec": {"schedulerName": "s", "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
        "status": {"phase": "Pending"},
    }


class FakeSiblings:
    """The queue's waiting pods, as runtime/siblings.py hands them out: taken once, or given back."""

    def __init__(self, waiting: list[Obj]) -> None:
        self.waiting = waiting
        self.given_back: list[str] = []

    def take(self, pod: Obj, tasks: frozenset[str]) -> list[Obj]:
        taken = [p for p in self.waiting if p is not pod and p["metadata"]["labels"]["tekton.dev/pipelineTask"] in tasks]
        self.waiting = [p for p in self.waiting if p not in taken]
        return taken

    def give_back(self, pod: Obj) -> None:
        self.given_back.append(pod["metadata"]["name"])
        self.waiting.append(pod)


#: The claim _resolved_run's workspace `source` is bound to: Bound, to a volume any node may mount.
BOUND_CLAIMS = {("ns", "c"): {"metadata": {"namespace": "ns", "name": "c"}, "spec": {"volumeName": "pv-c"}, "status": {"phase": "Bound"}}}
BOUND_VOLUMES = {"pv-c": {"metadata": {"name": "pv-c"}, "spec": {}}}


class Harness:
    """A Cycle over one 4-CPU node, whose binds wait in `self.binds` until a test runs them."""

    def __init__(
        self,
        records: list[Obj],
        pods: list[Obj],
        *,
        nodes: tuple[str, ...] = ("n1",),
        assume_records: bool = True,
        runs: tuple[Obj, ...] = (),
        deferred_writes: bool = False,
        waiting: tuple[Obj, ...] = (),
    ) -> None:
        self.api = FakeRecordsApi()
        for record in records:
            self.api.put(record)
        seen = [dict(r) for r in self.api.objects.values()]  # the informer's copies, never updated after this
        self.view = ClusterView(
            pods=microbench._informer("pods", pods), nodes=microbench._informer("nodes", [_node(n) for n in nodes]), records=microbench._informer("records", seen)
        )
        self.labels: list[Callable[[], None]] = []
        self.writer = RecordWriter(
            None,  # type: ignore[arg-type]
            field_manager="s",
            latest=self.view.confirmed_record_of,
            on_written=self.view.assume_record if assume_records else None,
            run_later=self.labels.append,
        )
        self.writer._custom = self.api  # type: ignore[assignment]  # noqa: SLF001
        self.binds: list[tuple[Obj, Callable[[], Outcome]]] = []
        self.siblings = FakeSiblings(list(waiting))
        #: With deferred_writes, the record writes wait here (in one list: the lanes' order per record is kept).
        self.writes: list[tuple[tuple[str, str], Callable[[], None]]] = []
        self.bound: list[tuple[str, str]] = []
        self.bind_error: int | None = None
        self.events = microbench._Events()  # noqa: SLF001
        self.cycle = Cycle(
            api=None,  # type: ignore[arg-type]
            view=self.view,
            records=self.writer,
            events=self.events,  # type: ignore[arg-type]
            get_pipeline_run=lambda ns, name: next((r for r in runs if r["metadata"]["name"] == name), None),
            get_task=lambda ns, name: None,
            get_limit_range=lambda ns: None,
            strategy=Strategy.LEAST_ALLOCATED,
            scheduler_name="s",
            bind_later=lambda pod, bind: self.binds.append((pod, bind)),
            write_later=(lambda key, write: self.writes.append((key, write))) if deferred_writes else None,
            siblings=self.siblings,
            volumes=VolumeBinder(
                None,
                lookups=VolumeLookups(lambda ns, name: BOUND_CLAIMS.get((ns, name)), BOUND_VOLUMES.get, lambda name: None),
                node_named=self.view.node_named,
            ),
        )
        self.cycle._bind = self._bind  # type: ignore[method-assign]  # noqa: SLF001

    def _bind(self, pod: Obj, node: str) -> None:
        self.api.calls.append("bind")
        if self.bind_error is not None:
            raise kubernetes.client.ApiException(status=self.bind_error)
        self.bound.append((pod["metadata"]["name"], node))

    def run_binds(self) -> list[Outcome]:
        done, self.binds = self.binds, []
        return [bind() for _, bind in done]

    def run_writes(self) -> None:
        done, self.writes = self.writes, []
        for _, write in done:
            write()

    def run_labels(self) -> None:
        done, self.labels = self.labels, []
        for write in done:
            write()

    def group(self, run: str) -> Obj:
        entry: Obj = self.api.objects[("ns", run)]["status"]["groups"][0]
        return entry


def test_first_pods_of_two_runs_do_not_overcommit_a_node_while_binds_and_watches_lag() -> None:
    # n1 has 4000m. Run A's first pod claims n1 for A's peak of 3000m and is still binding; the
    # record informer has not shown the claim. Run B (peak 3000m) must see A's 3000m held on n1
    # (4000 - 3000 = 1000m < 3000m): without the assumed record it would see only A's 100m pod
    # (4000 - 100 = 3900m >= 3000m) and claim n1 too, 6000m on a 4000m node.
    h = Harness([_record("run-a"), _record("run-b")], [a := _pending("a-1", "run-a"), b := _pending("b-1", "run-b")])
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.cycle.schedule(b) is Outcome.UNSCHEDULABLE
    assert h.group("run-a")["state"] == "Reserved" and h.group("run-a")["node"] == "n1"
    assert "state" not in h.api.objects[("ns", "run-b")].get("status", {}).get("groups", [{}])[0]
    assert h.run_binds() == [Outcome.BOUND] and h.bound == [("a-1", "n1")]


def test_without_assumed_records_the_second_run_overcommits() -> None:
    # The same as above with ClusterView never told of the writes: the test above depends on them.
    h = Harness([_record("run-a"), _record("run-b")], [a := _pending("a-1", "run-a"), b := _pending("b-1", "run-b")], assume_records=False)
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.cycle.schedule(b) is Outcome.BINDING
    assert h.group("run-b")["node"] == "n1"


def test_a_group_pod_costs_one_status_write_one_label_write_and_a_bind_with_no_get() -> None:
    h = Harness([_record("run-a")], [a := _pending("a-1", "run-a"), a2 := _pending("a-2", "run-a", task="b")])
    assert h.cycle.schedule(a) is Outcome.BINDING
    h.run_labels()
    assert h.run_binds() == [Outcome.BOUND]
    assert h.api.calls == ["status", "label", "bind"]
    assert h.api.objects[("ns", "run-a")]["metadata"]["labels"] == {ACTIVE_LABEL: "true"}
    # The second pod joins from the copy just written (the informer still has the first version):
    # one status write, no GET, no 409, and no label write (the label already says true).
    h.api.calls.clear()
    assert h.cycle.schedule(a2) is Outcome.BINDING
    h.run_labels()
    assert h.run_binds() == [Outcome.BOUND]
    assert h.api.calls == ["status", "bind"]
    assert sorted(h.group("run-a")["holders"]) == ["uid-a-1", "uid-a-2"]


def _resolved_run(name: str, *, cpu: str = "1") -> Obj:
    """A PipelineRun Tekton has resolved: tasks a and b share workspace `source` (one group), c uses none."""

    def task(task_name: str, *, shares: bool) -> Obj:
        steps = [{"name": "s", "image": "busybox", "computeResources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]
        if not shares:
            return {"name": task_name, "taskSpec": {"steps": steps}}
        return {"name": task_name, "workspaces": [{"name": "w", "workspace": "source"}], "taskSpec": {"workspaces": [{"name": "w"}], "steps": steps}}

    spec = {"workspaces": [{"name": "source"}], "tasks": [task("a", shares=True), task("b", shares=True), task("c", shares=False)]}
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"namespace": "ns", "name": name, "uid": f"uid-{name}"},
        "spec": {"workspaces": [{"name": "source", "persistentVolumeClaim": {"claimName": "c"}}], "pipelineSpec": spec},
        "status": {"conditions": [{"type": "Succeeded", "status": "Unknown"}], "pipelineSpec": spec},
    }


def test_a_first_pod_creates_its_record_labelled_active_so_its_claim_writes_no_label() -> None:
    # No record yet: create (with the label), claim, bind; no label write, and nothing queued for one.
    h = Harness([], [a := _pending("a-1", "run-a"), a2 := _pending("a-2", "run-a", task="b")], runs=(_resolved_run("run-a"),))
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.labels == []
    assert h.run_binds() == [Outcome.BOUND]
    assert h.api.calls == ["create", "status", "bind"]
    assert h.api.objects[("ns", "run-a")]["metadata"]["labels"] == {ACTIVE_LABEL: "true"}
    assert (h.group("run-a")["state"], h.group("run-a")["node"]) == ("Reserved", "n1")
    # The join writes from the claim's response: no 409, no GET (before, the label's PATCH raced it).
    h.api.calls.clear()
    assert h.cycle.schedule(a2) is Outcome.BINDING
    h.run_labels()
    assert h.run_binds() == [Outcome.BOUND]
    assert h.api.calls == ["status", "bind"]


def test_a_record_created_for_a_claim_that_does_not_follow_loses_its_label() -> None:
    # The group's peak (a and b run one after the other: 5 CPU) fits no 4-CPU node: no claim, so the label comes off.
    h = Harness([], [a := _pending("a-1", "run-a")], runs=(_resolved_run("run-a", cpu="5"),))
    assert h.cycle.schedule(a) is Outcome.UNSCHEDULABLE
    h.run_labels()
    assert h.api.calls == ["create", "label"]
    assert ACTIVE_LABEL not in (h.api.objects[("ns", "run-a")]["metadata"].get("labels") or {})


def test_a_record_created_labelled_active_loses_the_label_when_the_attempt_raises() -> None:
    h = Harness([], [a := _pending("a-1", "run-a")], runs=(_resolved_run("run-a"),))

    def broken(*args: Any) -> Outcome:
        raise RuntimeError("unexpected")

    h.cycle._claim_and_bind = broken  # type: ignore[method-assign]  # noqa: SLF001
    with pytest.raises(RuntimeError):
        h.cycle.schedule(a)
    h.run_labels()
    assert h.api.calls == ["create", "label"]
    assert ACTIVE_LABEL not in (h.api.objects[("ns", "run-a")]["metadata"].get("labels") or {})


def test_a_plain_first_pod_creates_the_record_unlabelled() -> None:
    # Task c shares no workspace: no claim follows, so the record is created without the label and nothing more is written.
    h = Harness([], [c := _pending("c-1", "run-a", task="c")], runs=(_resolved_run("run-a"),))
    assert h.cycle.schedule(c) is Outcome.BINDING
    h.run_labels()
    assert h.run_binds() == [Outcome.BOUND]
    assert h.api.calls == ["create", "bind"]
    assert ACTIVE_LABEL not in (h.api.objects[("ns", "run-a")]["metadata"].get("labels") or {})


def test_a_stale_copy_costs_one_get_after_the_409() -> None:
    h = Harness([_record("run-a")], [a := _pending("a-1", "run-a")])
    h.api.put(h.api.objects[("ns", "run-a")])  # someone else wrote: the informer's copy is stale
    h.api.calls.clear()
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.api.calls == ["status", "get", "status"]


def test_a_failed_bind_unassumes_the_pod_and_rolls_the_claim_back() -> None:
    h = Harness([_record("run-a"), _record("run-b")], [a := _pending("a-1", "run-a"), b := _pending("b-1", "run-b")])
    assert h.cycle.schedule(a) is Outcome.BINDING
    h.bind_error = 500
    assert h.run_binds() == [Outcome.RETRY]
    group = h.group("run-a")
    assert (group["state"], group.get("node"), group["holders"], group["claimGeneration"]) == ("Pending", None, [], 1)
    assert h.view.node_of("uid-a-1") is None
    h.run_labels()
    assert ACTIVE_LABEL not in (h.api.objects[("ns", "run-a")]["metadata"].get("labels") or {})
    # The node is free again: run B claims it.
    h.bind_error = None
    assert h.cycle.schedule(b) is Outcome.BINDING
    assert h.group("run-b")["node"] == "n1"


def test_a_record_created_by_the_scheduler_is_created_in_one_call() -> None:
    api = FakeRecordsApi()
    writer = RecordWriter(None, field_manager="s")  # type: ignore[arg-type]
    writer._custom = api  # type: ignore[assignment]  # noqa: SLF001
    run = {"apiVersion": "tekton.dev/v1", "metadata": {"name": "run-a", "namespace": "ns", "uid": "u"}}
    created = writer.create(run, ())
    assert api.calls == ["create"] and "status" not in created


def test_an_assumed_record_gives_way_once_the_informer_shows_it_or_a_later_write() -> None:
    records = microbench._informer("records", [{**_record("run-a"), "metadata": {"name": "run-a", "namespace": "ns", "resourceVersion": "4"}}])
    view = ClusterView(pods=microbench._informer("pods", []), nodes=microbench._informer("nodes", []), records=records)
    written = {**_record("run-a"), "metadata": {"name": "run-a", "namespace": "ns", "resourceVersion": "5"}, "status": {"groups": []}}
    view.assume_record(written, replaces="4")
    assert view.record_of("ns", "run-a") is written  # the informer still has 4
    view.assume_record({**written, "metadata": {**written["metadata"], "resourceVersion": "3"}})  # an older response, late
    assert view.record_of("ns", "run-a") is written
    caught_up = {**written, "metadata": dict(written["metadata"])}
    records._store[("ns", "run-a")] = caught_up  # noqa: SLF001
    assert view.record_of("ns", "run-a") is caught_up
    view.assume_record(written, replaces="4")
    later = {**written, "metadata": {**written["metadata"], "resourceVersion": "9"}}
    records._store[("ns", "run-a")] = later  # noqa: SLF001  # someone else wrote after us
    assert view.record_of("ns", "run-a") is later


# --- record writes off the scheduling thread (write_later) ---


def test_with_deferred_writes_the_scheduling_thread_makes_no_api_call_and_the_writes_keep_their_order() -> None:
    # The run's two grouped pods are decided before any write has run: the second finds the record
    # (no second create) and the claim as decided (it joins n1), both from ClusterView.intents.
    h = Harness([], [a := _pending("a-1", "run-a"), a2 := _pending("a-2", "run-a", task="b")], runs=(_resolved_run("run-a"),), deferred_writes=True)
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.cycle.schedule(a2) is Outcome.BINDING
    assert h.api.calls == [] and h.binds == []
    assert [key for key, _ in h.writes] == [("ns", "run-a")] * 3
    h.run_writes()
    assert h.api.calls == ["create", "status", "status"]  # the join's compare-and-swap starts from the claim's response
    assert h.run_binds() == [Outcome.BOUND, Outcome.BOUND]
    assert h.bound == [("a-1", "n1"), ("a-2", "n1")]
    assert (h.group("run-a")["state"], sorted(h.group("run-a")["holders"])) == ("Reserved", ["uid-a-1", "uid-a-2"])
    assert h.view.intents.items() == []  # every write ran: the API's copy is the truth again
    h.run_labels()
    assert h.api.calls == ["create", "status", "status", "bind", "bind"]  # created labelled active: no label write


def test_deferred_claims_of_two_runs_do_not_overcommit_a_node_before_either_is_written() -> None:
    # As the assumed-record test above, one step earlier: A's claim is not even written yet. B
    # (peak 3000m) must see A's 3000m held on n1 through the intended record.
    h = Harness([_record("run-a"), _record("run-b")], [a := _pending("a-1", "run-a"), b := _pending("b-1", "run-b")], deferred_writes=True)
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.api.calls == []
    assert h.cycle.schedule(b) is Outcome.UNSCHEDULABLE
    h.run_writes()
    assert h.run_binds() == [Outcome.BOUND]
    assert h.group("run-a")["node"] == "n1"
    assert "state" not in h.api.objects[("ns", "run-b")].get("status", {}).get("groups", [{}])[0]


def test_without_intended_records_the_second_deferred_claim_overcommits() -> None:
    # The test above depends on the intents: hidden, B claims n1 as well (6000m on a 4000m node).
    h = Harness([_record("run-a"), _record("run-b")], [a := _pending("a-1", "run-a"), b := _pending("b-1", "run-b")], deferred_writes=True)
    h.view.intents.items = lambda: []  # type: ignore[method-assign]
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.cycle.schedule(b) is Outcome.BINDING
    h.run_writes()
    assert h.group("run-a")["node"] == "n1" and h.group("run-b")["node"] == "n1"


def test_a_refused_deferred_claim_drops_the_join_queued_behind_it_and_unassumes_both_pods() -> None:
    # While the claim waits, someone else claims the group on n2: the claim's compare-and-swap
    # conflicts, the re-read shows Reserved elsewhere, so the claim is refused. The join decided on
    # top of it must not run (it would join a claim that was never made): both pods are retried.
    h = Harness([_record("run-a")], [a := _pending("a-1", "run-a"), a2 := _pending("a-2", "run-a", task="b")], nodes=("n1", "n2"), deferred_writes=True)
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.cycle.schedule(a2) is Outcome.BINDING
    chosen = h.view.node_of("uid-a-1")
    other = "n2" if chosen == "n1" else "n1"
    stored = h.api.objects[("ns", "run-a")]
    h.api.put({**stored, "status": {"groups": [{"name": "g0", "state": "Reserved", "node": other, "holders": ["uid-x"], "claimGeneration": 1}]}})
    h.api.calls.clear()
    h.run_writes()
    assert h.api.calls == ["status", "get"]  # the claim's 409 and re-read; nothing for the join
    assert h.run_binds() == [Outcome.RETRY, Outcome.RETRY]
    assert h.bound == []
    assert h.view.node_of("uid-a-1") is None and h.view.node_of("uid-a-2") is None
    assert (h.group("run-a")["node"], h.group("run-a")["holders"]) == (other, ["uid-x"])
    assert h.view.intents.items() == []


def test_a_failed_deferred_create_drops_the_claim_queued_behind_it() -> None:
    h = Harness([], [a := _pending("a-1", "run-a")], runs=(_resolved_run("run-a"),), deferred_writes=True)
    assert h.cycle.schedule(a) is Outcome.BINDING

    def refused(*args: Any) -> Obj:
        h.api.calls.append("create")
        raise kubernetes.client.ApiException(status=403)

    h.api.create_namespaced_custom_object = refused  # type: ignore[method-assign]
    with pytest.raises(kubernetes.client.ApiException):
        h.writes[0][1]()  # the lane logs it and goes on
    h.writes[1][1]()
    assert h.api.calls == ["create", "get"]  # the claim never ran; the label's settling found no record
    assert h.run_binds() == [Outcome.RETRY]
    assert h.view.node_of("uid-a-1") is None and h.view.record_of("ns", "run-a") is None


# --- siblings placed with their group's claim ---


def test_a_claim_takes_its_waiting_sibling_along_so_the_sibling_costs_only_its_bind() -> None:
    a, a2 = _pending("a-1", "run-a"), _pending("a-2", "run-a", task="b")
    h = Harness([_record("run-a")], [a, a2], deferred_writes=True, waiting=(a2,))
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.view.node_of("uid-a-2") == "n1"  # assumed with the claim
    h.run_writes()
    assert h.api.calls == ["status"]  # one write: the claim with both holders, no join
    assert (h.group("run-a")["state"], sorted(h.group("run-a")["holders"])) == ("Reserved", ["uid-a-1", "uid-a-2"])
    assert h.run_binds() == [Outcome.BOUND, Outcome.BOUND]
    assert h.bound == [("a-1", "n1"), ("a-2", "n1")]


def test_a_sibling_that_would_fail_on_the_claims_node_is_given_back_untouched() -> None:
    # a-2 asks for a node label n1 lacks: its own attempt would fail there, so it is not placed with the claim.
    a, a2 = _pending("a-1", "run-a"), _pending("a-2", "run-a", task="b")
    a2["spec"]["nodeSelector"] = {"disk": "ssd"}
    h = Harness([_record("run-a")], [a, a2], deferred_writes=True, waiting=(a2,))
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.siblings.given_back == ["a-2"]
    assert h.view.node_of("uid-a-2") is None
    h.run_writes()
    assert h.group("run-a")["holders"] == ["uid-a-1"]
    assert h.run_binds() == [Outcome.BOUND]


def test_a_sibling_whose_own_claim_the_node_cannot_take_is_given_back() -> None:
    # a-2 mounts a claim that does not exist (yet): its own attempt would fail on every node.
    a, a2, a3 = _pending("a-1", "run-a"), _pending("a-2", "run-a", task="b"), _pending("a-3", "run-a", task="b")
    a2["spec"]["volumes"] = [{"name": "ws", "persistentVolumeClaim": {"claimName": "not-yet"}}]
    a3["spec"]["volumes"] = [{"name": "ws", "persistentVolumeClaim": {"claimName": "c"}}]  # Bound, admits n1
    h = Harness([_record("run-a")], [a, a2, a3], deferred_writes=True, waiting=(a2, a3))
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.siblings.given_back == ["a-2"]
    assert (h.view.node_of("uid-a-2"), h.view.node_of("uid-a-3")) == (None, "n1")


def test_a_sibling_beyond_the_peak_left_on_the_node_is_given_back() -> None:
    # a-2 asks 3950m: beside a-1's 100m on the 4000m node it does not fit, so its own attempt
    # would not place it there either (a pod of a Reserved group fits by its own request).
    a, a2 = _pending("a-1", "run-a"), _pending("a-2", "run-a", task="b")
    a2["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3950m"
    h = Harness([_record("run-a")], [a, a2], deferred_writes=True, waiting=(a2,))
    assert h.cycle.schedule(a) is Outcome.BINDING
    assert h.siblings.given_back == ["a-2"]
    h.run_writes()
    assert h.group("run-a")["holders"] == ["uid-a-1"]


def test_a_refused_claim_retries_the_siblings_taken_with_it() -> None:
    a, a2 = _pending("a-1", "run-a"), _pending("a-2", "run-a", task="b")
    h = Harness([_record("run-a")], [a, a2], nodes=("n1", "n2"), deferred_writes=True, waiting=(a2,))
    assert h.cycle.schedule(a) is Outcome.BINDING
    chosen = h.view.node_of("uid-a-1")
    assert h.view.node_of("uid-a-2") == chosen
    other = "n2" if chosen == "n1" else "n1"
    stored = h.api.objects[("ns", "run-a")]
    h.api.put({**stored, "status": {"groups": [{"name": "g0", "state": "Reserved", "node": other, "holders": ["uid-x"], "claimGeneration": 1}]}})
    h.run_writes()
    assert h.run_binds() == [Outcome.RETRY, Outcome.RETRY]
    assert h.view.node_of("uid-a-1") is None and h.view.node_of("uid-a-2") is None
    assert h.group("run-a")["holders"] == ["uid-x"]


def test_a_join_takes_no_siblings_along() -> None:
    # Only the pod that makes the claim places siblings: a join's write is its own.
    a, a2, a3 = _pending("a-1", "run-a"), _pending("a-2", "run-a", task="b"), _pending("a-3", "run-a", task="b")
    h = Harness([_record("run-a")], [a, a2, a3], deferred_writes=True)
    assert h.cycle.schedule(a) is Outcome.BINDING
    h.run_writes()
    h.run_binds()
    h.siblings.waiting = [a3]
    assert h.cycle.schedule(a2) is Outcome.BINDING
    assert h.siblings.waiting == [a3] and h.view.node_of("uid-a-3") is None


def test_a_claim_puts_the_record_back_without_its_managed_fields() -> None:
    api = FakeRecordsApi()
    sent: list[Obj] = []
    replace = api.replace_namespaced_custom_object_status

    def recording(group: str, version: str, ns: str, plural: str, name: str, body: Obj) -> Obj:
        sent.append(body)
        return replace(group, version, ns, plural, name, body)

    api.replace_namespaced_custom_object_status = recording  # type: ignore[method-assign]
    managed = [{"manager": "tkn-scheduler", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
    api.put({"metadata": {"name": "a", "namespace": "ci", "managedFields": managed}, "spec": {"groups": [{"name": "source", "tasks": ["t"]}]}})
    latest = api.get_namespaced_custom_object("", "", "ci", "", "a")
    writer = RecordWriter(kubernetes.client.ApiClient(), field_manager="s", latest=lambda ns, name: latest)
    writer._custom = api  # type: ignore[assignment]  # noqa: SLF001
    writer.change_group("ci", "a", "source", lambda entry: {**entry, "state": "Reserved", "node": "n1", "holders": ["p"], "claimGeneration": 1})
    (body,) = sent
    assert "managedFields" not in body["metadata"] and body["metadata"]["resourceVersion"] == latest["metadata"]["resourceVersion"]
    assert latest["metadata"]["managedFields"] == managed  # the record read is left as it was
