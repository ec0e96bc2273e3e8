"""ExistingCluster against throwaway local clusters: its checks, its pools, and that it deletes only its own objects.

The clusters run no Tekton controller: ExistingCluster only checks that
Tekton's CRDs are served, so the "ready" cluster gets the CRDs alone.
"""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from harness.cluster import tekton
from harness.cluster.existing import ExistingCluster
from harness.cluster.local import LocalCluster
from harness.cluster.namespaces import TEST_NAMESPACE_LABEL, is_test_namespace, unique_name
from harness.cluster.node_pools import POOL_LABEL, node_manifest
from harness.cluster.slot_pools import POOL_SLOT_LABEL
from harness.cluster.toolchain import Toolchain
from harness.cluster.volumes import make_bound_pvc, volume_manifests, volumes_of_namespace
from harness.errors import HarnessError
from harness.kube import Kube
from harness.quantities import cpu_millis, memory_bytes
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

pytestmark = pytest.mark.integration

#: A namespace and PV that exist before the suite runs, as an owner's would: the suite must leave them.
OWNER_NAMESPACE = "owner-workloads"


@contextlib.contextmanager
def _throwaway(name: str, timeouts: TimeoutConfig) -> Iterator[tuple[LocalCluster, Kube]]:
    """_throwaway() is a local cluster without Tekton, taken down on exit whatever happened."""
    cluster = LocalCluster(name=unique_name("rescon-it", name, limit=30), timeouts=timeouts)
    try:
        kube = cluster.up(with_tekton=False)
        yield cluster, kube
        kube.close()
    finally:
        cluster.down()


@pytest.fixture(scope="module")
def bare_cluster(it_timeouts: TimeoutConfig) -> Iterator[tuple[LocalCluster, Kube]]:
    """bare_cluster has neither Tekton nor nodes."""
    with _throwaway("bare", it_timeouts) as made:
        yield made


@pytest.fixture(scope="module")
def borrowed_cluster(it_timeouts: TimeoutConfig) -> Iterator[tuple[LocalCluster, Kube]]:
    """borrowed_cluster looks like someone's cluster: Tekton's CRDs, two slot nodes, an owner's namespace and PV."""
    with _throwaway("borrowed", it_timeouts) as (cluster, kube):
        config_dir = tekton.module_dir(Toolchain()) / "config"
        kube.apply_all(tekton.crd_manifests(config_dir))
        # Tekton's ConfigMaps as a reservation scheduler's cluster has them: coschedule disabled.
        kube.apply_all([tekton.namespace_manifest(), *tekton.config_maps(config_dir, coschedule="disabled")])
        for slot in ("0", "1"):
            node = node_manifest(f"slot-{slot}", pool="unused", cpu="8", memory="16Gi", pods=110, labels={POOL_SLOT_LABEL: slot}, taints=())
            del node["metadata"]["labels"][POOL_LABEL]
            kube.core.create_node(node)
        kube.core.create_namespace({"metadata": {"name": OWNER_NAMESPACE, "labels": {TEST_NAMESPACE_LABEL: "true"}}})
        owner_pv, _ = volume_manifests(OWNER_NAMESPACE, "data", "1Gi")
        kube.core.create_persistent_volume(owner_pv)
        _wait_served(kube, it_timeouts)
        yield cluster, kube


def _wait_served(kube: Kube, timeouts: TimeoutConfig) -> None:
    """Tekton's CRDs are in discovery, and both slot nodes are Ready."""

    def served() -> None:
        resources = {r.name for r in kube.custom.get_api_resources("tekton.dev", "v1").resources}
        if not {"pipelineruns", "taskruns"} <= resources:
            raise NotYet(f"tekton.dev/v1 serves only {sorted(resources)}")
        for name in ("slot-0", "slot-1"):
            conditions = {c.type: c.status for c in (kube.core.read_node(name).status.conditions or [])}
            if conditions.get("Ready") != "True":
                raise NotYet(f"node {name} is not Ready")

    wait_for(served, what="the borrowed cluster's CRDs and nodes", timeout="crd_established", timeouts=timeouts)


def _node_labels(kube: Kube, name: str) -> dict[str, str]:
    return dict(kube.core.read_node(name).metadata.labels or {})


def test_a_cluster_without_tekton_names_how_to_install_it(bare_cluster: tuple[LocalCluster, Kube], it_timeouts: TimeoutConfig) -> None:
    cluster, _ = bare_cluster
    with pytest.raises(HarnessError, match=r"^Tekton Pipelines is not installed on context .*kubectl apply -f https://\S+/release\.yaml' and retry$"):
        ExistingCluster(cluster.kubeconfig, None, it_timeouts).up()


def test_a_cluster_whose_tekton_keeps_its_affinity_assistant_is_refused_with_the_patch(
    borrowed_cluster: tuple[LocalCluster, Kube], it_timeouts: TimeoutConfig
) -> None:
    cluster, kube = borrowed_cluster
    kube.core.patch_namespaced_config_map("feature-flags", tekton.NAMESPACE, {"data": {"coschedule": "workspaces"}})
    try:
        with pytest.raises(
            HarnessError,
            match=r"^Tekton's coschedule is 'workspaces' on context current \(tekton-pipelines/feature-flags\), but the suite judges against 'disabled': "
            r".*kubectl -n tekton-pipelines patch configmap feature-flags --type merge .*--coschedule workspaces to judge that mode as a baseline$",
        ):
            ExistingCluster(cluster.kubeconfig, None, it_timeouts).up()
        ExistingCluster(cluster.kubeconfig, None, it_timeouts, coschedule="workspaces").up().close()  # the baseline the user asks for
    finally:
        kube.core.patch_namespaced_config_map("feature-flags", tekton.NAMESPACE, {"data": {"coschedule": "disabled"}})


def test_pools_need_nodes_labelled_as_slots(bare_cluster: tuple[LocalCluster, Kube], it_timeouts: TimeoutConfig) -> None:
    cluster, kube = bare_cluster
    with pytest.raises(HarnessError, match=rf"no node is labelled {POOL_SLOT_LABEL}: .*kubectl label node <node> {POOL_SLOT_LABEL}=0"):
        ExistingCluster(cluster.kubeconfig, None, it_timeouts).add_node_pool(kube, "p", count=1)


def test_an_unreachable_existing_cluster_fails_within_its_timeout(tmp_path: Path, it_timeouts: TimeoutConfig) -> None:
    closed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    closed.bind(("127.0.0.1", 0))
    server = f"https://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "ci", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "ci",
            }
        )
    )
    started = time.monotonic()
    with pytest.raises(HarnessError, match=rf"cannot reach the API server {server} .*context ci"):
        ExistingCluster(kubeconfig, "ci", it_timeouts).up()
    assert time.monotonic() - started < it_timeouts.api_reachable + 5


def test_pools_claim_free_slot_nodes_and_give_them_back(borrowed_cluster: tuple[LocalCluster, Kube], it_timeouts: TimeoutConfig) -> None:
    cluster, _ = borrowed_cluster
    existing = ExistingCluster(cluster.kubeconfig, None, it_timeouts)
    kube = existing.up()
    assert existing.exclusive_pools is False

    pool = existing.add_node_pool(kube, "first", count=1, labels={"rescon.dev/extra": "yes"})
    try:
        assert pool.nodes == ("slot-0",)
        # The pool's size is what the slot leaves once daemons are counted (none here): 8 CPUs, 16Gi, 110 pods.
        assert (cpu_millis(pool.cpu), memory_bytes(pool.memory), pool.pods) == (8000, 16 << 30, 110)
        assert _node_labels(kube, "slot-0")[POOL_LABEL] == "first"
        assert pool.selector == {POOL_LABEL: "first"}
        with pytest.raises(HarnessError, match=r"needs 2 free node\(s\) .* 1 of 2 are free \(held: slot-0 \(pool first\)"):
            existing.add_node_pool(kube, "second", count=2)
    finally:
        existing.remove_node_pool(kube, pool)

    labels = _node_labels(kube, "slot-0")
    assert POOL_LABEL not in labels and "rescon.dev/extra" not in labels
    assert labels[POOL_SLOT_LABEL] == "0"


def test_down_deletes_only_what_the_suite_created(borrowed_cluster: tuple[LocalCluster, Kube], it_timeouts: TimeoutConfig) -> None:
    cluster, owner = borrowed_cluster
    existing = ExistingCluster(cluster.kubeconfig, None, it_timeouts)
    kube = existing.up()
    ours = existing.create_test_namespace(kube, unique_name("it", "existing-down"))
    make_bound_pvc(kube, ours, "source", timeouts=it_timeouts)
    existing.add_node_pool(kube, "held-at-down", count=2)
    with pytest.raises(HarnessError, match=f"namespace {OWNER_NAMESPACE} was not created by this suite run"):
        existing.delete_test_namespace(kube, OWNER_NAMESPACE)

    existing.down()

    assert not is_test_namespace(owner, ours)
    assert is_test_namespace(owner, OWNER_NAMESPACE)  # labelled like ours, but not made by this run
    assert volumes_of_namespace(owner, OWNER_NAMESPACE) == [f"{OWNER_NAMESPACE}-data"]
    assert {n.metadata.name for n in owner.core.list_node().items} == {"slot-0", "slot-1"}
    assert all(POOL_LABEL not in _node_labels(owner, n) for n in ("slot-0", "slot-1"))

    def our_volumes_gone() -> None:
        left = volumes_of_namespace(owner, ours)
        if left:
            raise NotYet(f"PVs {left} still exist")

    wait_for(our_volumes_gone, what=f"the PVs of {ours}", timeout="namespace_deleted", timeouts=it_timeouts)
