"""RetiredPools: a scenario's pool goes only once its provisioned volumes are gone, later where pools are nodes of their own."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from harness.cluster.volumes import PROVISIONED_BY
from harness.errors import HarnessError
from harness.suite.retired_pools import RetiredPools
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


def _retired(defer: bool = True) -> tuple[RetiredPools, _Cluster, _Kube, _Clock]:
    cluster, kube, clock = _Cluster(), _Kube(), _Clock()
    return RetiredPools(cluster, kube, TimeoutConfig(volume_bound=30.0), defer=defer, clock=clock), cluster, kube, clock  # type: ignore[arg-type]


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


def test_shared_pools_wait_in_the_teardown() -> None:
    retired, cluster, _, _ = _retired(defer=False)
    retired.retire("slots-a", ("ns-a",))
    assert cluster.removed == ["slots-a"]
