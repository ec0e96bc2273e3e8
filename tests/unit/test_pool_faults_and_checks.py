"""The pool scenarios' pure pieces: their mutants' faults, node shapes (the load formula is the monitor's: test_monitor_invariants.py)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cluster.node_pools import NodePool, NodeShape, shape_pool_nodes, unshape_pool_nodes
from harness.contract.record import Record

from reference_scheduler.core import node_checks
from reference_scheduler.core.headroom import NodeView, PodUsage
from reference_scheduler.core.keys import GroupKey
from reference_scheduler.core.reasons import InsufficientResource, TooManyPods
from reference_scheduler.core.resources import Resources
from tests.mutants import faults

pytestmark = pytest.mark.unit

G = GroupKey("ci", "g", "source")
POD: dict[str, Any] = {"spec": {"nodeSelector": {"lane": "open"}}}


def node(*, unschedulable: bool = False, taints: tuple[dict[str, str], ...] = (), lane: str = "open") -> dict[str, Any]:
    return {"metadata": {"name": "n", "labels": {"lane": lane}}, "spec": {"unschedulable": unschedulable, "taints": list(taints)}}


CORDON_TAINT = {"key": node_checks.UNSCHEDULABLE_TAINT_KEY, "effect": "NoSchedule"}
OTHER_TAINT = {"key": "dedicated", "value": "other", "effect": "NoSchedule"}


class TestNodeCheckFaults:
    def test_without_check_drops_only_that_check(self) -> None:
        checks = faults.without_check(node_checks.NODE_CHECKS, node_checks.node_selector_mismatch)
        assert node_checks.node_selector_mismatch not in checks
        assert len(checks) == len(node_checks.NODE_CHECKS) - 1

    def test_the_cordon_blind_taint_check_still_sees_other_taints(self) -> None:
        check = faults.taint_check_ignoring_cordon(node_checks.untolerated_taint)
        assert node_checks.untolerated_taint(POD, node(unschedulable=True, taints=(CORDON_TAINT,))) is not None
        assert check(POD, node(unschedulable=True, taints=(CORDON_TAINT,))) is None
        assert check(POD, node(taints=(OTHER_TAINT,))) is not None


def test_without_pod_limit_keeps_every_other_failure() -> None:
    too_many = TooManyPods(allowed=3, bound=3)
    short = InsufficientResource(resource="cpu", requested=2, available=1, allocatable=4, used_by_pods=3, reserved_by_others=0)
    assert faults.without_pod_limit([too_many, short]) == [short]


def test_the_faulty_cache_sees_the_group_only_through_live_pods() -> None:
    alive = NodeView("n2", Resources(cpu=4800), 110, (PodUsage("p", Resources(cpu=600), G),))
    assert faults.group_pods_alive_on(alive, G)
    assert not faults.group_pods_alive_on(NodeView("n2", Resources(cpu=4800), 110, ()), G)
    assert not faults.group_pods_alive_on(None, G)


def _pod(name: str, node_name: str, cpu: str, *, phase: str = "Running", run: str = "", task: str = "") -> dict[str, Any]:
    labels = {"tekton.dev/pipelineRun": run, "tekton.dev/pipelineTask": task} if run else {}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase},
    }


def _record(state: str, node_name: str, peak: str) -> Record:
    released = {"releasedAt": "2026-01-01T00:01:00Z", "releaseReason": "TasksDone"} if state == "Released" else {}
    return Record.from_json({
        "apiVersion": "rescon.dev/v1alpha1",
        "kind": "ReservationRecord",
        "metadata": {
            "name": "a", "namespace": "ci", "uid": "r",
            "labels": {"rescon.dev/active": "true"} if state == "Reserved" else {},
            "ownerReferences": [{"apiVersion": "tekton.dev/v1", "kind": "PipelineRun", "name": "a", "uid": "u", "controller": True}],
        },
        "spec": {"pipelineRun": {"name": "a", "uid": "u"}, "groups": [{"name": "source", "tasks": ["small", "big"], "workspaces": ["source"], "peak": {"cpu": peak, "memory": "0"}}]},
        "status": {"groups": [{"name": "source", "state": state, "node": node_name, "holders": ["x"], "claimGeneration": 1, "reservedAt": "2026-01-01T00:00:00Z", **released}],
                   "reservedGroups": 1 if state == "Reserved" else 0},
    })


class FakeCore:
    def __init__(self) -> None:
        from kubernetes.client import V1Node, V1NodeSpec, V1ObjectMeta

        self.nodes = {"p-0": V1Node(metadata=V1ObjectMeta(name="p-0", labels={"rescon.dev/pool": "p"}), spec=V1NodeSpec())}
        self.patches: list[tuple[str, dict[str, Any]]] = []

    def read_node(self, name: str) -> Any:
        return self.nodes[name]

    def patch_node(self, name: str, body: dict[str, Any]) -> None:
        self.patches.append((name, body))


class FakeKube:
    def __init__(self) -> None:
        from kubernetes.client import ApiClient

        self.core = FakeCore()
        self.api = ApiClient()


def test_shapes_patch_their_node_and_the_undo_puts_it_back() -> None:
    kube: Any = FakeKube()
    pool = NodePool("p", ("p-0",), "4800m", "8Gi", 110)
    undo = shape_pool_nodes(kube, pool, (NodeShape(0, cordoned=True, taints=(("dedicated", "other", "NoSchedule"),), labels=(("lane", "away"),)),))
    name, patch = kube.core.patches[0]
    assert name == "p-0"
    assert patch == {
        "metadata": {"labels": {"lane": "away"}},
        "spec": {"taints": [{"key": "dedicated", "value": "other", "effect": "NoSchedule"}], "unschedulable": True},
    }
    unshape_pool_nodes(kube, undo)
    assert kube.core.patches[1] == ("p-0", {"metadata": {"labels": {"lane": None}}, "spec": {"taints": [], "unschedulable": None}})


def test_a_shape_for_a_node_the_pool_lacks_fails() -> None:
    from harness.errors import HarnessError

    with pytest.raises(HarnessError, match="node 3 of pool p"):
        shape_pool_nodes(FakeKube(), NodePool("p", ("p-0",), "4800m", "8Gi", 110), (NodeShape(3, cordoned=True),))  # type: ignore[arg-type]


class TestToleration:
    TOLERATING: dict[str, Any] = {"spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "other", "effect": "NoSchedule"}]}}

    def test_the_reference_lets_a_tolerating_pod_onto_a_tainted_node(self) -> None:
        assert node_checks.untolerated_taint(self.TOLERATING, node(taints=(OTHER_TAINT,))) is None

    def test_the_toleration_blind_check_keeps_it_off(self) -> None:
        check = faults.taint_check_without_tolerations(node_checks.untolerated_taint)
        assert check(self.TOLERATING, node(taints=(OTHER_TAINT,))) is not None
        assert check(self.TOLERATING, node()) is None  # an untainted node still passes

    def test_the_mutant_replaces_only_the_taint_check(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(node_checks, "NODE_CHECKS", node_checks.NODE_CHECKS)
        faults.apply_ignores_tolerations()
        assert node_checks.untolerated_taint not in node_checks.NODE_CHECKS
        assert len(node_checks.NODE_CHECKS) == 5 and node_checks.node_selector_mismatch in node_checks.NODE_CHECKS
        assert node_checks.node_check_failures(self.TOLERATING, node(taints=(OTHER_TAINT,))) != []
