"""RetiredPools: a scenario's pool goes only once its provisioned volumes are gone, later or beside the next scenario."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from harness.cluster.volumes import PROVISIONED_BY
from harness.errors import HarnessError
import threading

from harness.suite.retired_pools import RetiredPools, Retirement
from harness.timeouts import TimeoutConfig

pytestmark = pytest.mark.unit


def _volume(name: str, namespace: str) -> Any:
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name, annotations={PROVISIONED_BY: "rancher.io/local-path"}),
        spec=SimpleNamespace(claim_ref=SimpleNamespace(namespace=namespace)),
        status=SimpleNamespace(phase="Released"),
    )


class _Cluster:
    def __init__(self) -> None:
        self.removed: list[str] = []

    def remove_node_pool(self, kube: Any, pool: str) -> None:
        self.removed.append(pool)


class _Kube:
    """Only the listing RetiredPools reads: the PersistentVolumes, as the test sets them."""

    def __init__(self) -> None:
        self.volumes: list[Any] = []
        self.core = SimpleNamespace(list_persistent_volume=lambda: SimpleNamespace(items=list(self.volumes)))


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _retired(when: Retirement = Retirement.LATER, volume_bound: float = 30.0) -> tuple[RetiredPools, _Cluster, _Kube, _Clock]:
    cluster, kube, clock = _Cluster(), _Kube(), _Clock()
    return RetiredPools(cluster, kube, TimeoutConfig(volume_bound=volume_bound), when=when, clock=clock), cluster, kube, clock  # type: ignore[arg-type]


def test_a_pool_whose_volumes_are_gone_goes_at_once() -> None:
    retired, cluster, _, _ = _retired()
    retired.retire("pool-a", ("ns-a",))
    assert cluster.removed == ["pool-a"]


def test_a_pool_with_volumes_left_stays_until_a_later_reap_finds_them_gone() -> None:
    retired, cluster, kube, _ = _retired()
    kube.volumes = [_volume("pvc-1", "ns-a")]
    retired.retire("pool-a", ("ns-a",))
    assert cluster.removed == []
    kube.volumes = [_volume("pvc-2", "ns-b")]
    retired.retire("pool-b", ("ns-b",))
    assert cluster.removed == ["pool-a"]
    kube.volumes = []
    retired.drain()
    assert cluster.removed == ["pool-a", "pool-b"]


def test_volumes_of_another_namespace_do_not_hold_a_pool() -> None:
    retired, cluster, kube, _ = _retired()
    kube.volumes = [_volume("pvc-1", "ns-other")]
    retired.retire("pool-a", ("ns-a", "ns-a-extra"))
    assert cluster.removed == ["pool-a"]


def test_volumes_that_outlive_volume_bound_are_an_error_and_the_pool_goes_anyway() -> None:
    retired, cluster, kube, clock = _retired()
    kube.volumes = [_volume("pvc-1", "ns-a")]
    retired.retire("pool-a", ("ns-a",))
    clock.now = 31.0
    with pytest.raises(HarnessError, match=r"outlived their claims by 30s \(volume_bound\).*ns-a: pvc-1 \(Released\)"):
        retired.reap()
    assert cluster.removed == ["pool-a"]
    retired.drain()  # nothing left to wait for
    assert cluster.removed == ["pool-a"]


# --- beside the next scenario: shared slot nodes (kind, existing) ---


class _Removals(_Cluster):
    """A cluster that tells the test when a pool is removed (the removal runs in RetiredPools' thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()

    def remove_node_pool(self, kube: Any, pool: str) -> None:
        super().remove_node_pool(kube, pool)
        self.event.set()


def _beside(volume_bound: float = 30.0) -> tuple[RetiredPools, _Removals, _Kube]:
    cluster, kube = _Removals(), _Kube()
    return RetiredPools(cluster, kube, TimeoutConfig(volume_bound=volume_bound), when=Retirement.BESIDE), cluster, kube  # type: ignore[arg-type]


def test_a_shared_pool_is_not_removed_by_the_teardown_but_once_its_volumes_are_gone() -> None:
    retired, cluster, kube = _beside()
    kube.volumes = [_volume("pvc-1", "ns-a")]
    retired.retire("slots-a", ("ns-a",))  # returns with the volume still there: the next scenario may start
    assert cluster.removed == []
    assert not cluster.event.wait(0.3)  # still held while the volume is there
    kube.volumes = []
    assert cluster.event.wait(5.0)
    assert cluster.removed == ["slots-a"]
    retired.drain()
    assert cluster.removed == ["slots-a"]


def test_drain_waits_for_every_shared_pool_still_being_removed() -> None:
    retired, cluster, kube = _beside()
    kube.volumes = [_volume("pvc-1", "ns-a"), _volume("pvc-2", "ns-b")]
    retired.retire("slots-a", ("ns-a",))
    retired.retire("slots-b", ("ns-b",))
    kube.volumes = []
    retired.drain()
    assert sorted(cluster.removed) == ["slots-a", "slots-b"]


def test_a_shared_pool_whose_volumes_outlive_volume_bound_fails_the_next_teardown() -> None:
    retired, cluster, kube = _beside(volume_bound=0.3)
    kube.volumes = [_volume("pvc-1", "ns-a")]
    retired.retire("slots-a", ("ns-a",))
    for removal in list(retired._removals):  # the first removal gives up after volume_bound
        removal.join(5.0)
    kube.volumes = []
    with pytest.raises(HarnessError, match=r"timed out after 0.3s \(volume_bound\).*namespace ns-a.*pvc-1 \(Released\)"):
        retired.retire("slots-b", ("ns-b",))
    retired.drain()  # slots-b still goes, and the failure is not reported twice
    assert cluster.removed == ["slots-a", "slots-b"]  # slots-a went anyway: its nodes serve the next scenarios


def test_a_shared_pool_failure_left_at_the_end_fails_drain() -> None:
    retired, cluster, kube = _beside(volume_bound=0.3)
    kube.volumes = [_volume("pvc-1", "ns-a")]
    retired.retire("slots-a", ("ns-a",))
    with pytest.raises(HarnessError, match=r"volume_bound"):
        retired.drain()
    assert cluster.removed == ["slots-a"]


def test_a_pool_left_at_the_end_whose_volumes_stay_goes_and_drain_says_so() -> None:
    retired, cluster, kube, _ = _retired(volume_bound=0.3)
    kube.volumes = [_volume("pvc-1", "ns-a")]
    retired.retire("pool-a", ("ns-a",))
    with pytest.raises(HarnessError, match=r"volume_bound"):
        retired.drain()
    assert cluster.removed == ["pool-a"]
