"""The attempt path of the filters that read other pods: how the cycle feeds them, and what a pod is told.

A Cycle over in-memory informers (the microbenchmark's), binding inline into a
recorder, with the records API faked as in test_binding_cycle.py. Nodes n1 and n2
are in zone a, n3 in zone b; each is labelled with its hostname.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from bench import microbench
from reference_scheduler.core.reasons import (
    EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    GROUP_RESERVED_ON_ANOTHER_NODE_SUMMARY,
    NODE_PORTS_CONFLICT_SUMMARY,
    POD_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY,
    TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY,
    FIT_ERROR_MESSAGE,
)
from reference_scheduler.core.scoring import Strategy
from reference_scheduler.runtime.cluster_view import ClusterView
from reference_scheduler.runtime.cycle import Cycle, Outcome
from reference_scheduler.runtime.records import RecordWriter
from tests.unit.test_binding_cycle import FakeRecordsApi, FakeSiblings

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
ZONES = {"n1": "a", "n2": "a", "n3": "b"}


def node(name: str, *, tainted: bool = False) -> Obj:
    return {
        "metadata": {"name": name, "resourceVersion": "1", "labels": {HOST: name, ZONE: ZONES.get(name, "z")}},
        "spec": {"taints": [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}]} if tainted else {},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def pod(
    name: str,
    *,
    node_name: str | None = None,
    host_port: int | None = None,
    anti: tuple[str, str] | None = None,
    affinity: tuple[str, str] | None = None,
    spread: str | None = None,
    run: str | None = None,
    task: str = "a",
    namespace: str = "ns",
    **labels: str,
) -> Obj:
    container: Obj = {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    if host_port is not None:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: Obj = {"schedulerName": "s", "containers": [container]}
    terms: Obj = {}
    if affinity is not None:
        terms["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": affinity[0]}}, "topologyKey": affinity[1]}]}
    if anti is not None:
        terms["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": anti[0]}}, "topologyKey": anti[1]}]}
    if terms:
        spec["affinity"] = terms
    if spread is not None:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": spread, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": labels.get("app", "")}}}
        ]
    if node_name:
        spec["nodeName"] = node_name
    if run:
        labels = {**labels, "tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task}
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "1", "labels": labels}
    return {"metadata": meta, "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def record(run: str, *, tasks: tuple[str, ...] = ("a", "b"), reserved_on: str | None = None) -> Obj:
    found: Obj = {
        "metadata": {"name": run, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"groups": [{"name": "g0", "tasks": list(tasks), "peak": {"cpu": "1", "memory": "64Mi"}}]},
    }
    if reserved_on:
        found["status"] = {"groups": [{"name": "g0", "state": "Reserved", "node": reserved_on, "holders": ["uid-x"], "claimGeneration": 1}]}
    return found


class Attempts:
    """A Cycle over the given nodes, pods and records; binds are recorded, and assumed as the scheduler does."""

    def __init__(
        self,
        pods: list[Obj],
        *,
        nodes: tuple[str, ...] = ("n1", "n2", "n3"),
        tainted: tuple[str, ...] = (),
        records: tuple[Obj, ...] = (),
        namespaces: dict[str, dict[str, str]] | None = None,
        deferred: bool = False,
        waiting: tuple[Obj, ...] = (),
    ) -> None:
        self.api = FakeRecordsApi()
        for found in records:
            self.api.put(found)
        seen = [dict(r) for r in self.api.objects.values()]
        self.view = ClusterView(
            pods=microbench._informer("pods", pods),  # noqa: SLF001
            nodes=microbench._informer("nodes", [node(n, tainted=n in tainted) for n in nodes]),  # noqa: SLF001
            records=microbench._informer("records", seen),  # noqa: SLF001
        )
        self.labels: list[Callable[[], None]] = []
        writer = RecordWriter(None, field_manager="s", latest=self.view.confirmed_record_of, on_written=self.view.assume_record, run_later=self.labels.append)  # type: ignore[arg-type]
        writer._custom = self.api  # type: ignore[assignment]  # noqa: SLF001
        self.events = microbench._Events()  # noqa: SLF001
        self.bound: list[tuple[str, str]] = []
        self.binds: list[Callable[[], Outcome]] = []
        self.writes: list[Callable[[], None]] = []
        self.siblings = FakeSiblings(list(waiting))
        self.cycle = Cycle(
            api=None,  # type: ignore[arg-type]
            view=self.view,
            records=writer,
            events=self.events,  # type: ignore[arg-type]
            get_pipeline_run=lambda ns, name: None,
            get_task=lambda ns, name: None,
            get_limit_range=lambda ns: None,
            strategy=Strategy.LEAST_ALLOCATED,
            scheduler_name="s",
            bind_later=(lambda p, bind: self.binds.append(bind)) if deferred else None,
            write_later=(lambda key, write: self.writes.append(write)) if deferred else None,
            siblings=self.siblings,
            namespace_labels=namespaces or {"ns": {}},
        )
        self.cycle._bind = lambda p, n: self.bound.append((p["metadata"]["name"], n))  # type: ignore[method-assign]  # noqa: SLF001

    def place(self, incoming: Obj) -> str | None:
        """place(pod) runs one attempt: the node it was bound to, or None (its message is the last event)."""
        outcome = self.cycle.schedule(incoming)
        if outcome is Outcome.BOUND:
            return self.bound[-1][1]
        assert outcome is Outcome.UNSCHEDULABLE, outcome
        return None

    @property
    def message(self) -> str:
        return self.events.messages[-1]


def fit_error(total: int, *parts: str) -> str:
    return FIT_ERROR_MESSAGE.format(total=total, reasons=", ".join(parts))


class TestNodePorts:
    def test_a_pod_goes_where_its_host_port_is_free(self) -> None:
        h = Attempts([pod("a", node_name="n1", host_port=8080), pod("b", node_name="n2", host_port=8080)])
        assert h.place(pod("new", host_port=8080)) == "n3"

    def test_no_free_port_anywhere_is_kube_schedulers_message(self) -> None:
        h = Attempts([pod("a", node_name="n1", host_port=8080)], nodes=("n1",))
        assert h.place(pod("new", host_port=8080)) is None
        assert h.message.startswith(f"new: {fit_error(1, '1 ' + NODE_PORTS_CONFLICT_SUMMARY)}")
        assert "n1: host port(s) 8080/TCP on 0.0.0.0 requested by the pod are already bound on the node" in h.message

    def test_an_assumed_pod_holds_its_port_before_the_informer_shows_it_bound(self) -> None:
        h = Attempts([], nodes=("n1",))
        assert h.place(pod("first", host_port=8080)) == "n1"  # bound inline and assumed; the informer never hears of it
        assert h.place(pod("second", host_port=8080)) is None
        assert NODE_PORTS_CONFLICT_SUMMARY in h.message

    def test_a_pod_still_assumed_after_a_failed_bind_does_not_collide_with_itself(self) -> None:
        retried = pod("retried", host_port=8080, anti=("retried-app", HOST), app="retried-app")
        h = Attempts([], nodes=("n1",))
        h.view.assume(retried, "n1", None)
        assert h.place(retried) == "n1"


class TestInterPodAffinity:
    def test_anti_affinity_keeps_the_pod_off_the_node(self) -> None:
        h = Attempts([pod("db", node_name="n1", app="db")])
        assert h.place(pod("web", anti=("db", ZONE), app="web")) == "n3"

    def test_a_placed_pods_anti_affinity_keeps_the_pod_away(self) -> None:
        h = Attempts([pod("db", node_name="n1", anti=("web", HOST), app="db")], nodes=("n1",))
        assert h.place(pod("web", app="web")) is None
        assert h.message.startswith(f"web: {fit_error(1, '1 ' + EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY)}")

    def test_affinity_follows_the_pod_it_selects(self) -> None:
        h = Attempts([pod("db", node_name="n3", app="db"), pod("filler", node_name="n1")])
        assert h.place(pod("web", affinity=("db", HOST), app="web")) == "n3"

    def test_affinity_with_nothing_to_follow_names_every_node(self) -> None:
        h = Attempts([])
        assert h.place(pod("web", affinity=("db", ZONE), app="web")) is None
        assert h.message.startswith(f"web: {fit_error(3, '3 ' + POD_AFFINITY_RULES_NOT_MATCH_SUMMARY)}")

    def test_the_first_pod_of_a_self_affine_set_goes_anywhere_then_the_rest_follow_it(self) -> None:
        h = Attempts([])
        first = h.place(pod("w0", affinity=("web", ZONE), app="web"))
        assert first is not None
        second = h.place(pod("w1", affinity=("web", ZONE), app="web"))
        assert second is not None and ZONES[second] == ZONES[first]

    def test_a_namespace_selector_reads_the_namespaces_labels(self) -> None:
        selecting = pod("web", app="web")
        term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": HOST, "namespaceSelector": {"matchLabels": {"team": "data"}}}
        selecting["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        h = Attempts([pod("db", node_name="n2", namespace="data", app="db")], namespaces={"ns": {}, "data": {"team": "data"}})
        assert h.place(selecting) == "n2"
        h = Attempts([pod("db", node_name="n2", namespace="data", app="db")], namespaces={"ns": {}, "data": {"team": "other"}})
        assert h.place(selecting) is None


class TestTopologySpread:
    def test_a_spread_pod_goes_to_the_emptier_zone(self) -> None:
        h = Attempts([pod("w0", node_name="n1", app="web")])
        assert h.place(pod("w1", spread=ZONE, app="web")) == "n3"

    def test_a_zone_the_pod_cannot_go_to_still_counts(self) -> None:
        # n3 (zone b, empty) is tainted: the pod cannot go there, yet zone b keeps the minimum at 0
        # (nodeTaintsPolicy Ignore, the default), so zone a's 2 + 1 - 0 exceeds maxSkew 1.
        h = Attempts([pod("w0", node_name="n1", app="web"), pod("w1", node_name="n2", app="web")], tainted=("n3",))
        assert h.place(pod("w2", spread=ZONE, app="web")) is None
        assert h.message.startswith(
            f"w2: {fit_error(3, '1 node(s) had untolerated taint {dedicated: other}', '2 ' + TOPOLOGY_SPREAD_CONSTRAINTS_NOT_MATCH_SUMMARY)}"
        )


class TestGroups:
    """The filters apply to every pod of a group, on the node the group's claim chose or will choose."""

    def test_a_groups_first_pod_claims_only_a_node_that_passes_its_filters(self) -> None:
        h = Attempts([pod("a", node_name="n1", host_port=8080), pod("b", node_name="n2", host_port=8080)], records=(record("run"),))
        assert h.place(pod("run-a", run="run", host_port=8080)) == "n3"
        assert h.api.objects[("ns", "run")]["status"]["groups"][0]["node"] == "n3"

    def test_a_later_pod_rejected_on_the_groups_node_stays_pending_with_the_reason(self) -> None:
        # The group is Reserved on n1, where a pod the later task's anti-affinity rejects runs.
        h = Attempts([pod("db", node_name="n1", app="db")], records=(record("run", reserved_on="n1"),))
        assert h.place(pod("run-b", run="run", task="b", anti=("db", HOST))) is None
        assert h.message.startswith(
            f"run-b: {fit_error(3, '1 ' + POD_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY, '2 ' + GROUP_RESERVED_ON_ANOTHER_NODE_SUMMARY)}"
        )

    def test_a_later_pod_that_an_earlier_pod_of_its_group_rejects_stays_pending(self) -> None:
        # The group's first task pod, on n1, has anti-affinity against the later task's label.
        first = pod("run-a", node_name="n1", run="run", anti=("later", HOST))
        h = Attempts([first], records=(record("run", reserved_on="n1"),))
        assert h.place(pod("run-b", run="run", task="b", app="later")) is None
        assert EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH_SUMMARY in h.message

    def test_a_sibling_that_would_collide_with_the_claiming_pod_is_given_back(self) -> None:
        a = pod("run-a", run="run", host_port=8080)
        clashing, fine = pod("run-b", run="run", task="b", host_port=8080), pod("run-c", run="run", task="b", host_port=9090)
        h = Attempts([a, clashing, fine], nodes=("n1",), records=(record("run"),), deferred=True, waiting=(clashing, fine))
        assert h.cycle.schedule(a) is Outcome.BINDING
        assert h.siblings.given_back == ["run-b"]
        assert h.view.node_of("uid-run-c") == "n1" and h.view.node_of("uid-run-b") is None

    def test_a_sibling_rejected_by_the_anti_affinity_of_one_placed_before_it_is_given_back(self) -> None:
        a = pod("run-a", run="run")
        first, second = pod("run-b", run="run", task="b", anti=("twin", HOST), app="twin"), pod("run-c", run="run", task="b", app="twin")
        h = Attempts([a, first, second], nodes=("n1",), records=(record("run"),), deferred=True, waiting=(first, second))
        assert h.cycle.schedule(a) is Outcome.BINDING
        assert h.siblings.given_back == ["run-c"]


def test_a_plain_cluster_builds_no_node_map(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pod without ports, terms or constraints, and no placed pod with anti-affinity: the
    # PreFilters look at no node (NodesByName is never built) and every node passes them.
    from reference_scheduler.runtime import cycle as cycle_module

    built: list[int] = []
    original = cycle_module.NodesByName._built

    def counting(self: Any) -> dict[str, Obj]:
        built.append(1)
        return original(self)

    monkeypatch.setattr(cycle_module.NodesByName, "_built", counting)
    h = Attempts([pod("a", node_name="n1", host_port=8080, app="web")])
    assert h.place(pod("plain")) is not None
    assert built == []


def test_the_scheduler_keeps_namespaces_cached_and_hands_their_labels_to_the_cycle() -> None:
    import kubernetes

    from reference_scheduler.runtime.informer import LabelsByName
    from reference_scheduler.runtime.scheduler import Scheduler

    found = Scheduler(kubernetes.client.ApiClient(), scheduler_name="s")
    assert found.namespaces in found.informers and found.namespaces.name == "namespaces"
    found.namespaces._store[("", "data")] = {"metadata": {"name": "data", "labels": {"team": "data"}}}  # noqa: SLF001
    found.namespaces._store[("", "bare")] = {"metadata": {"name": "bare"}}  # noqa: SLF001
    labels = found.cycle._namespace_labels  # noqa: SLF001
    assert isinstance(labels, LabelsByName)
    assert dict(labels) == {"data": {"team": "data"}, "bare": {}} and len(labels) == 2
    assert labels.get("missing") is None
