"""The `kind` cluster: Kubernetes v1.37 in Docker, with Tekton's real Deployments from its pinned release.

pytest-kind's KindCluster drives the kind binary. Its own kind download is
too old for v1.37 node images (and needs network), so the provider always
hands it a kind binary: `--kind-bin`, else `kind` on PATH. The cluster shape
(one control plane, two workers offered as pool slots) is kind-config.yaml at
the repository root; the Tekton manifest is pinned by URL and sha256
(harness.cluster.tekton_release) and gets the local cluster's feature flags.

The provider deletes the kind cluster at the end only if it created it and
`keep` is off: a cluster that already existed under the name is reused as is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from harness.cluster import namespaces, slot_pools, tekton, tekton_release, volumes
from harness.cluster.node_pools import NodePool
from harness.cluster.paths import REPO_ROOT, cache_root
from harness.errors import HarnessError
from harness.kube import Kube, present
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig
from harness.waits import NotYet, wait_for

if TYPE_CHECKING:
    from pytest_kind import KindCluster

KIND_CONFIG = REPO_ROOT / "kind-config.yaml"

#: The node image: Kubernetes v1.37, the minor the local cluster runs (a unit test checks).
#: kind tags node images `kindest/node:vX.Y.Z`, and each kind release's notes list the images
#: built for it as `kindest/node:vX.Y.Z@sha256:<digest>`. When bumping, check that the kind
#: you use lists this version, and prefer its exact `@sha256:` line: an image built for
#: another kind release may not boot.
NODE_IMAGE = "kindest/node:v1.37.2"

DEFAULT_NAME = "rescon"
#: Seconds a quick kind or docker query may take (`kind get clusters`, `docker info`).
QUERY_SECONDS = 30.0


def resolve_kind_bin(explicit: str | Path | None, *, which: Any = shutil.which) -> Path:
    """resolve_kind_bin(None) is `kind` on PATH; resolve_kind_bin('/opt/kind') that file, if executable."""
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise HarnessError(f"--kind-bin {explicit} is not an executable file: pass the path of a kind binary")
        return path
    found = which("kind")
    if found is None:
        raise HarnessError(
            "kind is not on PATH: install a kind release whose notes list a v1.37 node image, or pass --kind-bin /path/to/kind"
        )
    return Path(found)


def container_runtime() -> str:
    """container_runtime() is the program kind drives: docker, or $KIND_EXPERIMENTAL_PROVIDER (podman, nerdctl)."""
    return os.environ.get("KIND_EXPERIMENTAL_PROVIDER") or "docker"


@dataclass
class KindProvider:
    """KindProvider is one kind cluster: `up()` creates or reuses it and installs Tekton; `down()` deletes what it created."""

    name: str = DEFAULT_NAME
    coschedule: str = "disabled"
    kind_bin: str | Path | None = None
    keep: bool = False
    timeouts: TimeoutConfig = DEFAULT_TIMEOUTS
    image: str = NODE_IMAGE
    config_file: Path = KIND_CONFIG
    kind: str = field(default="kind", init=False)
    exclusive_pools: bool = field(default=False, init=False)
    created_cluster: bool = field(default=False, init=False)

    @classmethod
    def from_options(
        cls,
        *,
        coschedule: str,
        timeouts: TimeoutConfig = DEFAULT_TIMEOUTS,
        kind_bin: str | Path | None = None,
        name: str = DEFAULT_NAME,
        keep: bool = False,
    ) -> KindProvider:
        tekton.feature_flags(coschedule)  # validates the mode before anything starts
        return cls(name=name, coschedule=coschedule, kind_bin=kind_bin, keep=keep, timeouts=timeouts)

    @property
    def workdir(self) -> Path:
        return cache_root() / "kind" / self.name

    @property
    def kubeconfig(self) -> Path:
        """kubeconfig is the cluster's own file; kind is never allowed to write the user's ~/.kube/config."""
        return self.workdir / "kubeconfig.yaml"

    def logs_dir(self) -> Path | None:
        return None

    # --- lifecycle ---

    def up(self) -> Kube:
        """up() returns a client of the kind cluster once its nodes are Ready and Tekton reconciles."""
        kind_path = resolve_kind_bin(self.kind_bin)
        self.require_container_runtime()
        self.create_cluster(kind_path)
        kube = Kube.connect(self.kubeconfig, reachable_within=self.timeouts.api_reachable)
        self._wait_nodes_ready(kube)
        content = tekton_release.fetch(timeouts=self.timeouts)
        tekton_release.install(kube, tekton_release.release_manifests(content, coschedule=self.coschedule), timeouts=self.timeouts)
        return kube

    def down(self) -> None:
        """down() deletes the kind cluster if up() created it (and keep is off); idempotent."""
        if not self.created_cluster or self.keep:
            return
        self.kind_cluster(resolve_kind_bin(self.kind_bin)).delete()  # type: ignore[no-untyped-call]
        self.created_cluster = False

    def create_cluster(self, kind_path: Path) -> KindCluster:
        """create_cluster() runs `kind create cluster` with our image, config and kubeconfig, unless it exists.

        pytest-kind runs kind without a time limit (pulling the node image is the
        slow part); the session's --timeout bounds it, and every wait after it
        has its own named timeout.
        """
        if not self.config_file.is_file():
            raise HarnessError(f"{self.config_file} is missing: restore kind-config.yaml at the repository root")
        existed = self.name in self.existing_clusters(kind_path)
        cluster = self.kind_cluster(kind_path)
        cluster.create(config_file=self.config_file)
        self.created_cluster = self.created_cluster or not existed
        return cluster

    def kind_cluster(self, kind_path: Path) -> KindCluster:
        try:
            from pytest_kind import KindCluster
        except ImportError as err:
            raise HarnessError("pytest-kind is not installed: run pip install -e '.[kind]' (make venv does)") from err
        self.workdir.mkdir(parents=True, exist_ok=True)
        return KindCluster(self.name, kubeconfig=self.kubeconfig, image=self.image, kind_path=kind_path)

    def existing_clusters(self, kind_path: Path) -> list[str]:
        """existing_clusters() is `kind get clusters`, bounded."""
        result = self._run([str(kind_path), "get", "clusters"], what="kind get clusters")
        return [line.strip() for line in result.stdout.splitlines() if line.strip()]

    def require_container_runtime(self) -> None:
        """require_container_runtime() fails in one line when kind has no Docker (or podman) to run nodes in."""
        runtime = container_runtime()
        if shutil.which(runtime) is None:
            raise HarnessError(f"kind needs {runtime}, which is not on PATH: install it, or run the suite with --cluster local")
        result = self._run([runtime, "info", "--format", "{{.ServerVersion}}"], what=f"{runtime} info", check=False)
        if result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["no output"])[-1][:200]
            raise HarnessError(f"{runtime} is not running ({reason}): start it, or run the suite with --cluster local")

    # --- node pools: kind's workers, by their pool-slot labels ---

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
        return slot_pools.claim_slot_pool(kube, name, count=count, labels=labels, taints=taints)

    def remove_node_pool(self, kube: Kube, pool: NodePool) -> None:
        slot_pools.release_slot_pool(kube, pool)

    # --- test namespaces: made for one scenario, deleted with their volumes ---

    def create_test_namespace(self, kube: Kube, name: str) -> str:
        return namespaces.create_test_namespace(kube, name, timeouts=self.timeouts)

    def delete_test_namespace(self, kube: Kube, name: str) -> None:
        namespaces.delete_test_namespace(kube, name, timeouts=self.timeouts, wait=False)
        volumes.delete_test_volumes(kube, name)

    # --- helpers ---

    def _wait_nodes_ready(self, kube: Kube) -> None:
        def all_ready() -> None:
            nodes = kube.core.list_node().items
            if not nodes:
                raise NotYet("the cluster has no nodes yet")
            for node in nodes:
                ready = {c.type: c.status for c in (present(node.status).conditions or [])}.get("Ready")
                if ready != "True":
                    raise NotYet(f"node {present(node.metadata).name} is not Ready (Ready={ready})")

        wait_for(all_ready, what=f"the nodes of kind cluster {self.name}", timeout="nodes_ready", timeouts=self.timeouts, hint=f"docker ps --filter name={self.name}")

    def _run(self, argv: list[str], *, what: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=QUERY_SECONDS)
        except subprocess.TimeoutExpired as err:
            raise HarnessError(f"{what} took longer than {QUERY_SECONDS:g}s: is {container_runtime()} responding?") from err
        if check and result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["no output"])[-1][:200]
            raise HarnessError(f"{what} failed ({reason}): is {container_runtime()} running?")
        return result
