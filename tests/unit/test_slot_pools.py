"""Pools on shared nodes (kind, existing): which slots a pool gets, and the errors that name the label to set."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cluster.existing import ExistingCluster, coschedule_mismatch_message, coschedule_of, missing_crds, tekton_missing_message
from harness.cluster.slot_pools import POOL_SLOT_LABEL, SlotNode, choose_slots
from harness.errors import HarnessError
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit


def _names(nodes: list[SlotNode]) -> list[str]:
    return [n.name for n in nodes]


@pytest.mark.parametrize(
    "nodes, count, expected",
    [
        pytest.param([SlotNode("w1", "1"), SlotNode("w0", "0")], 1, ["w0"], id="lowest-slot-first"),
        pytest.param([SlotNode("w10", "10"), SlotNode("w2", "2")], 2, ["w2", "w10"], id="slots-are-numbers-not-strings"),
        pytest.param([SlotNode("w0", "0", pool="a"), SlotNode("w1", "1"), SlotNode("w2", "2")], 2, ["w1", "w2"], id="held-slots-are-skipped"),
        pytest.param([SlotNode("w0", "0", usable=False), SlotNode("w1", "1")], 1, ["w1"], id="not-ready-or-cordoned-is-skipped"),
    ],
)
def test_choose_slots(nodes: list[SlotNode], count: int, expected: list[str]) -> None:
    assert _names(choose_slots(nodes, count, "p")) == expected


def test_no_slot_nodes_names_the_label_to_put_on_nodes() -> None:
    with pytest.raises(HarnessError, match=rf"no node is labelled {POOL_SLOT_LABEL}: .*kubectl label node <node> {POOL_SLOT_LABEL}=0"):
        choose_slots([], 1, "p")


def test_too_few_free_slots_says_who_holds_them() -> None:
    nodes = [SlotNode("w0", "0", pool="old-pool"), SlotNode("w1", "1", usable=False)]
    with pytest.raises(HarnessError, match=r"needs 1 free node.*0 of 2 are free \(held: w0 \(pool old-pool\); not Ready or cordoned: w1\)"):
        choose_slots(nodes, 1, "p")


def test_too_few_free_of_enough_offered_is_slots_taken_and_too_few_offered_is_not() -> None:
    from harness.cluster.slot_pools import SlotsTaken

    held = [SlotNode("w0", "0", pool="a"), SlotNode("w1", "1")]
    # Two offered, one held: a concurrent session waits for pool 'a' to give w0 back.
    with pytest.raises(SlotsTaken):
        choose_slots(held, 2, "p")
    # Two offered for a pool of three: no waiting makes room, so the error is the plain one.
    with pytest.raises(HarnessError) as raised:
        choose_slots(held, 3, "p")
    assert not isinstance(raised.value, SlotsTaken)


def test_claim_turn_is_nothing_in_a_plain_session(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cluster.slot_pools import CLAIM_LOCK_ENV, claim_turn

    monkeypatch.delenv(CLAIM_LOCK_ENV, raising=False)
    with claim_turn(DEFAULT_TIMEOUTS) as concurrent:
        assert concurrent is False


def test_claim_turn_keeps_a_second_claimer_out_until_the_first_is_done(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import dataclasses
    import fcntl

    from harness.cluster.slot_pools import CLAIM_LOCK_ENV, claim_turn
    from harness.waits import WaitTimeout

    lock = tmp_path / "slot-claims"
    monkeypatch.setenv(CLAIM_LOCK_ENV, str(lock))
    short = dataclasses.replace(DEFAULT_TIMEOUTS, pool_slots_free=0.3)
    with claim_turn(short) as concurrent:
        assert concurrent is True
        # Another worker's open file description: flock holds it out while this turn lasts.
        with open(lock, "a+", encoding="utf-8") as other:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(WaitTimeout, match=r"pool_slots_free.*another worker is claiming slot nodes"):
            with claim_turn(short):
                pass
    with claim_turn(short) as concurrent:
        assert concurrent is True


def test_missing_tekton_names_how_to_install_it() -> None:
    assert missing_crds({"taskruns", "pipelineruns", "tasks"}) == []
    missing = missing_crds({"taskruns"})
    assert missing == ["pipelineruns.tekton.dev"]
    message = tekton_missing_message("ci", missing)
    assert "Tekton Pipelines is not installed on context ci" in message
    assert "kubectl apply -f https://" in message and "release.yaml" in message


def test_existing_pools_are_shared_and_down_without_up_does_nothing(tmp_path: Path) -> None:
    cluster = ExistingCluster(tmp_path / "kubeconfig.yaml")
    assert cluster.kind == "existing" and cluster.exclusive_pools is False
    assert cluster.logs_dir() is None
    cluster.down()  # nothing created, nothing to delete, no API call


def test_taints_on_shared_nodes_are_refused() -> None:
    from harness.cluster.slot_pools import claim_slot_pool

    with pytest.raises(HarnessError, match=r"asks for taints, .*--cluster local"):
        claim_slot_pool(None, "p", count=1, taints=[{"key": "k", "effect": "NoSchedule"}])  # type: ignore[arg-type]


def _pod(namespace: str, phase: str = "Running") -> dict[str, object]:
    return {"metadata": {"namespace": namespace, "name": "p"}, "status": {"phase": phase}}


def test_foreign_pod_count_leaves_out_test_pods_and_finished_pods() -> None:
    from harness.cluster.slot_pools import foreign_pod_count

    pods = [_pod("kube-system"), _pod("tekton-pipelines"), _pod("conf-x"), _pod("kube-system", "Succeeded")]
    # kube-proxy and a Tekton pod hold a slot each; the scenario's pod and a finished pod do not count.
    assert foreign_pod_count(pods, {"conf-x"}) == 2


@pytest.mark.parametrize(
    "wanted, allocatable, daemons, expected",
    [
        pytest.param(3, 110, 1, 4, id="three-slots-beside-kube-proxy"),
        pytest.param(3, 110, 0, 3, id="no-daemons"),
        pytest.param(110, 110, 1, None, id="default-pool-keeps-the-kubelet-limit"),
        pytest.param(109, 110, 1, None, id="exactly-what-is-left"),
        pytest.param(108, 110, 1, 109, id="one-fewer-than-left"),
    ],
)
def test_kubelet_max_pods(wanted: int, allocatable: int, daemons: int, expected: int | None) -> None:
    from harness.cluster.slot_pools import kubelet_max_pods

    assert kubelet_max_pods(wanted, allocatable, daemons) == expected


@pytest.mark.parametrize(
    ("config_map", "mode"),
    [
        (None, "workspaces"),
        ({"data": {}}, "workspaces"),
        ({"data": {"coschedule": "Disabled "}}, "disabled"),
        ({"data": {"coschedule": "isolate-pipelinerun"}}, "isolate-pipelinerun"),
    ],
)
def test_coschedule_is_read_as_tekton_reads_it(config_map: dict[str, object] | None, mode: str) -> None:
    assert coschedule_of(config_map) == mode


def test_a_coschedule_other_than_the_judged_one_names_the_patch_and_the_baseline_flag() -> None:
    assert coschedule_mismatch_message("disabled", "disabled", namespace="tekton-pipelines", context="ci") is None
    message = coschedule_mismatch_message("workspaces", "disabled", namespace="openshift-pipelines", context="ci")
    assert message is not None and "\n" not in message
    assert message.startswith("Tekton's coschedule is 'workspaces' on context ci (openshift-pipelines/feature-flags), but the suite judges against 'disabled'")
    assert """kubectl -n openshift-pipelines patch configmap feature-flags --type merge -p '{"data":{"coschedule":"disabled"}}'""" in message
    assert message.endswith("or pass --coschedule workspaces to judge that mode as a baseline")


def test_a_claim_that_fails_after_limiting_pods_gives_the_kubelets_their_maxpods_back_before_the_label(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from harness.cluster import slot_pools

    steps: list[str] = []
    chosen = [SlotNode(f"w{i}", str(i), allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}) for i in range(3)]
    monkeypatch.delenv(slot_pools.CLAIM_LOCK_ENV, raising=False)
    monkeypatch.setattr(slot_pools, "_free_slots", lambda *a, **k: chosen)
    monkeypatch.setattr(slot_pools, "_test_namespaces", lambda kube: set())
    monkeypatch.setattr(slot_pools, "_pods_on", lambda kube, node: [])
    monkeypatch.setattr(slot_pools, "release_slot_pool", lambda kube, name, extra=None: steps.append(f"release {name}"))
    kube = SimpleNamespace(core=SimpleNamespace(patch_node=lambda name, body: steps.append(f"label {name}")))

    def limit_pods(node: str, max_pods: int | None) -> None:
        if max_pods is None:
            steps.append(f"unlimit {node}")
            return
        if node == "w1":
            raise HarnessError("setting maxPods on w1: the kubelet did not come back")
        steps.append(f"limit {node} {max_pods}")

    with pytest.raises(HarnessError, match="kubelet did not come back"):
        slot_pools.claim_slot_pool(
            kube, "p", count=3, pods=4, timeouts=DEFAULT_TIMEOUTS,  # type: ignore[arg-type]
            limit_pods=limit_pods,
        )
    assert steps == ["label w0", "label w1", "label w2", "limit w0 4", "unlimit w0", "unlimit w1", "release p"]
