"""The `existing` cluster: any kubeconfig with Tekton installed, which the suite borrows and leaves as it found it.

The suite never deletes what it did not create. It keeps a ledger of what it
made here (test namespaces, the PersistentVolumes of their claims, the pool
labels on nodes) and `down()` removes exactly that. Node pools are nodes the
cluster's owner offers by labelling them `rescon.dev/pool-slot=<n>`
(harness.cluster.slot_pools); they are shared, so `exclusive_pools` is False.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import kubernetes

from harness.cluster import namespaces, slot_pools, tekton_release, volumes
from harness.cluster.node_pools import NodePool
from harness.errors import HarnessError
from harness.kube import Kube
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig

#: The Tekton resources the suite creates or reads; their absence means Tekton Pipelines is not installed.
TEKTON_RESOURCES = ("pipelineruns", "taskruns")
TEKTON_GROUP_VERSION = ("tekton.dev", "v1")


@dataclass
class Ledger:
    """Ledger is what the suite created on a cluster it does not own; down() deletes exactly this."""

    namespaces: list[str] = field(default_factory=list)
    pools: dict[str, NodePool] = field(default_factory=dict)


def missing_crds(present: set[str], required: Sequence[str] = TEKTON_RESOURCES) -> list[str]:
    """missing_crds({'taskruns'}) == ['pipelineruns.tekton.dev']: the CRDs whose resources discovery lacks."""
    group = TEKTON_GROUP_VERSION[0]
    return [f"{name}.{group}" for name in required if name not in present]


def tekton_missing_message(context: str, missing: Sequence[str]) -> str:
    """tekton_missing_message() is the one-line error for a cluster without Tekton, naming how to install it."""
    return (
        f"Tekton Pipelines is not installed on context {context} (missing CRDs: {', '.join(missing)}): "
        f"install {tekton_release.TEKTON_VERSION} with 'kubectl apply -f {tekton_release.RELEASE_URL}' and retry"
    )


#: Tekton's own default for `coschedule` when feature-flags does not set it (v1.15, pkg/apis/config/feature_flags.go).
TEKTON_DEFAULT_COSCHEDULE = "workspaces"


def coschedule_of(feature_flags: Mapping[str, Any] | None) -> str:
    """coschedule_of(the feature-flags ConfigMap) is Tekton's coschedule mode, as Tekton reads it (lower-cased; its default when unset).

    Example: coschedule_of({'data': {'coschedule': 'Disabled'}}) == 'disabled'; coschedule_of(None) == 'workspaces'.
    """
    data = (feature_flags or {}).get("data") or {}
    value = str(data.get("coschedule") or "").strip().lower()
    return value or TEKTON_DEFAULT_COSCHEDULE


def coschedule_mismatch_message(found: str, expected: str, *, namespace: str, context: str) -> str | None:
    """coschedule_mismatch_message() is the one-line setup error when Tekton's coschedule is not the one the suite judges against; None when it is.

    A reservation scheduler co-locates a group's tasks itself and needs `disabled`
    (docs/contract.md, section 4, Tekton's coschedule); another mode is judged only
    as the baseline the user asked for (--coschedule).
    """
    if found == expected:
        return None
    patch = f"kubectl -n {namespace} patch configmap feature-flags --type merge -p '{{\"data\":{{\"coschedule\":\"{expected}\"}}}}'"
    return (
        f"Tekton's coschedule is {found!r} on context {context} ({namespace}/feature-flags), but the suite judges against {expected!r}: "
        f"a reservation scheduler co-locates tasks itself, and Tekton's affinity assistant would pick each group's node first; "
        f"run '{patch}', or pass --coschedule {found} to judge that mode as a baseline"
    )


@dataclass
class ExistingCluster:
    """ExistingCluster is a cluster reached through a kubeconfig; `up()` checks it, `down()` undoes only the suite's work."""

    kubeconfig: Path
    context: str | None = None
    timeouts: TimeoutConfig = DEFAULT_TIMEOUTS
    #: The coschedule mode Tekton must have there (the suite's --coschedule); up() refuses a cluster with another.
    coschedule: str = "disabled"
    #: Where Tekton runs (its feature-flags ConfigMap); OpenShift Pipelines installs into openshift-pipelines.
    tekton_namespace: str = "tekton-pipelines"
    kind: str = field(default="existing", init=False)
    exclusive_pools: bool = field(default=False, init=False)
    created: Ledger = field(default_factory=Ledger, init=False)
    _kube: Kube | None = field(default=None, init=False, repr=False)

    def up(self) -> Kube:
        """up() returns a client once the API server answers (bounded) and Tekton's CRDs exist."""
        kube = Kube.connect(Path(self.kubeconfig), self.context, reachable_within=self.timeouts.api_reachable)
        self._require_tekton(kube)
        self._require_coschedule(kube)
        self._kube = kube
        return kube

    def attach(self) -> Kube:
        """attach() is an xdist worker's client: the same checks as up(), which change nothing on the cluster."""
        return self.up()

    def down(self) -> None:
        """down() deletes the namespaces (and their PVs) and pool labels the suite made; nothing else."""
        if self._kube is None:
            return
        for pool in list(self.created.pools.values()):
            self.remove_node_pool(self._kube, pool)
        for name in list(self.created.namespaces):
            self._delete_namespace(self._kube, name)
        self._kube.close()
        self._kube = None

    def logs_dir(self) -> Path | None:
        return None

    # --- what the suite creates here, recorded so that down() can undo it ---

    def create_test_namespace(self, kube: Kube, name: str) -> str:
        """create_test_namespace() makes a labelled namespace and records it; down() deletes it if a test did not."""
        namespaces.create_test_namespace(kube, name, timeouts=self.timeouts)
        self.created.namespaces.append(name)
        return name

    def delete_test_namespace(self, kube: Kube, name: str) -> None:
        """delete_test_namespace() deletes a namespace this provider created, with its PVs; others are refused."""
        if name not in self.created.namespaces:
            raise HarnessError(f"namespace {name} was not created by this suite run: the existing cluster's objects are never deleted")
        self._delete_namespace(kube, name)

    def _delete_namespace(self, kube: Kube, name: str) -> None:
        namespaces.delete_test_namespace(kube, name, timeouts=self.timeouts)
        volumes.delete_test_volumes(kube, name)
        self.created.namespaces.remove(name)

    # --- node pools: free nodes labelled rescon.dev/pool-slot ---

    def add_node_pool(
        self,
        kube: Kube,
        name: str,
        *,
        count: int,
        cpu: str = "4",
        memory: str = "8Gi",
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
    ) -> NodePool:
        """add_node_pool() claims `count` free slot nodes; cpu/memory/pods are theirs, not the arguments."""
        pool = slot_pools.claim_slot_pool(kube, name, count=count, labels=labels, taints=taints)
        self.created.pools[pool.name] = pool
        return pool

    def remove_node_pool(self, kube: Kube, pool: NodePool) -> None:
        slot_pools.release_slot_pool(kube, pool)
        self.created.pools.pop(pool.name, None)

    # --- checks ---

    def _require_coschedule(self, kube: Kube) -> None:
        """Tekton's feature-flags as Tekton reads them; a user who may not read them is told, and the run goes on."""
        try:
            flags = kube.core.read_namespaced_config_map("feature-flags", self.tekton_namespace, _request_timeout=self.timeouts.api_reachable)
            found = coschedule_of({"data": flags.data})
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                found = TEKTON_DEFAULT_COSCHEDULE  # Tekton runs on its defaults without the ConfigMap
            elif err.status == 403:
                print(
                    f"rescon: cannot read {self.tekton_namespace}/feature-flags (403): Tekton's coschedule is not checked; it must be {self.coschedule!r}",
                    file=sys.__stderr__ or sys.stderr, flush=True,
                )
                return
            else:
                raise
        message = coschedule_mismatch_message(found, self.coschedule, namespace=self.tekton_namespace, context=self.context or "current")
        if message is not None:
            raise HarnessError(message)

    def _require_tekton(self, kube: Kube) -> None:
        """Discovery, not the CRD objects: any authenticated user may read it, while CRDs often need a cluster role."""
        group, version = TEKTON_GROUP_VERSION
        try:
            found = kube.custom.get_api_resources(group, version, _request_timeout=self.timeouts.api_reachable)
            present = {resource.name for resource in found.resources}
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise HarnessError(f"cannot read API discovery for {group}/{version} ({err.status} {err.reason}): check the kubeconfig's permissions") from err
            present = set()
        missing = missing_crds(present)
        if missing:
            raise HarnessError(tekton_missing_message(self.context or "current", missing))
