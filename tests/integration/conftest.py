"""Integration fixtures: the local cluster (reused if it is up), a namespace and a node pool per test.

The cluster is `rescon` unless RESCON_IT_CLUSTER names another. It is brought
up if needed and left running at the end, like `make cluster-up`: other
sessions (the conformance suite, a developer's shell) may be using it, and
`make cluster-down` removes it. Tests that need a cluster of their own start
a throwaway one without Tekton, whose controller must have port 8080 to itself.

Fixture names carry an `it_` prefix so they never shadow the conformance
plugin's `cluster` and `kube`, whose teardown takes its cluster down.
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from harness.cluster.cluster_lock import local_cluster_lock
from harness.cluster.local import LocalCluster
from harness.cluster.namespaces import create_test_namespace, delete_test_namespace, unique_name, wait_namespaces_gone, wait_pods_gone
from harness.cluster.node_pools import NodePool
from harness.cluster.volumes import delete_test_volumes
from harness.kube import Kube
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig

#: The environment variable naming the cluster the integration tests use (default: rescon).
IT_CLUSTER_ENV = "RESCON_IT_CLUSTER"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is an integration test: it fails loudly if one forgot the marker."""
    ours = [item for item in items if "tests/integration/" in str(item.path).replace(os.sep, "/")]
    unmarked = [item.nodeid for item in ours if item.get_closest_marker("integration") is None]
    if unmarked:
        raise pytest.UsageError(f"integration tests without pytestmark = pytest.mark.integration: {', '.join(unmarked)}")


@pytest.fixture(scope="session")
def it_timeouts() -> TimeoutConfig:
    return DEFAULT_TIMEOUTS


@pytest.fixture(scope="session")
def it_cluster(it_timeouts: TimeoutConfig) -> LocalCluster:
    return LocalCluster(name=os.environ.get(IT_CLUSTER_ENV, "rescon"), timeouts=it_timeouts)


@pytest.fixture(scope="session")
def it_namespaces() -> list[str]:
    """it_namespaces collects every namespace the session made, so the end of the session can await them all."""
    return []


@pytest.fixture(scope="session")
def it_kube(it_cluster: LocalCluster, it_namespaces: list[str], it_timeouts: TimeoutConfig) -> Iterator[Kube]:
    """it_kube is a client of the running cluster, held for the session; at the end, every test namespace is gone."""
    with local_cluster_lock(timeouts=it_timeouts, purpose="the integration tests"):
        kube = it_cluster.up()
        try:
            yield kube
            if it_namespaces:
                wait_namespaces_gone(kube, it_namespaces, timeouts=it_timeouts)
        finally:
            kube.close()


@pytest.fixture
def namespace(request: pytest.FixtureRequest, it_kube: Kube, it_namespaces: list[str], it_timeouts: TimeoutConfig) -> Iterator[str]:
    """namespace is a fresh namespace labelled rescon.dev/test=true, deleted (with its PVs) afterwards.

    delete_test_namespace() removes the pods at once, without grace: a namespace
    holding a running pod is requeued by the namespace controller only after
    the pod's 30s grace period. Teardown then waits for the pods to be gone,
    so that node_pool (torn down next) never deletes a node under a pod. The
    namespace itself is awaited once for the whole session.
    """
    name = create_test_namespace(it_kube, unique_name("it", request.node.name), timeouts=it_timeouts)
    it_namespaces.append(name)
    try:
        yield name
    finally:
        delete_test_namespace(it_kube, name, timeouts=it_timeouts, wait=False)
        delete_test_volumes(it_kube, name)
        wait_pods_gone(it_kube, name, timeouts=it_timeouts)


@pytest.fixture
def node_pool(request: pytest.FixtureRequest, it_cluster: LocalCluster, it_kube: Kube, namespace: str) -> Iterator[NodePool]:
    """node_pool is two KWOK nodes of 4 CPU / 8Gi that only this test's pods select.

    It depends on `namespace` so that it is torn down after it: pods first, then nodes.
    """
    pool = it_cluster.add_node_pool(it_kube, unique_name("itpool", request.node.name, limit=30), count=2, cpu="4", memory="8Gi")
    try:
        yield pool
    finally:
        it_cluster.remove_node_pool(it_kube, pool)
