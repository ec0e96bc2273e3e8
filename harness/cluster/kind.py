"""The `kind` cluster: Kubernetes v1.37 in Docker, with Tekton's real Deployments and real containers.

pytest-kind's KindCluster drives the kind binary. Its own kind download is too
old for v1.37 node images (and needs network), so the provider always hands it
a kind binary: `--kind-bin`, else `kind` on PATH, else kind built from its Go
module into the per-user cache. The cluster shape (one control plane, two
workers offered as pool slots) is kind-config.yaml at the repository root; the
provider adds only what this host and image need (node_image.kind_config_patches).

The node image (`--kind-node-image`):
- `auto` (default): the stock image if Docker has it, else the offline image if it
  is built or can be built here (Go and mmdebstrap present), else the stock image
  (kind pulls it);
- `stock`: kind v0.33.0's own image for v1.37, pinned by digest (needs a registry);
- `offline`: built here with no registry (harness.cluster.node_image; `rescon kind node-image`);
- any other value: that image.

Tekton: rendered from the pinned module with the offline image's local Tekton
images, or `--tekton-manifest URL_OR_PATH --tekton-manifest-sha256 HEX`
(harness.cluster.tekton_release). A stock node image has no local Tekton
images, so it needs --tekton-manifest.

The offline image has no CNI daemon: the provider gives each node a ptp CNI
config for its podCIDR and routes to the other nodes' podCIDRs (network()). A
scenario that deletes a worker's Node (node_loss) gets it back before the next
one: restore_nodes(), at its pool's removal, restarts that node's kubelet, which registers it again
with its kind labels, then re-routes.

The provider deletes the kind cluster at the end only if it created it and
`keep` is off. A cluster that already exists under the name is reused only if
this provider made it (with --keep-cluster) from the same image and config.
One that an earlier session of this suite left behind with another image or
config (a session killed mid-run, another checkout) is deleted and made anew;
any other is refused, in one line naming the fix. A session holds its cluster's
lock file from up() to down(), so a cluster another live session is using is
never replaced under it: that, too, is refused in one line. With `pytest -n N`
the xdist controller holds the lock and brings the cluster up; its workers
attach() to it, each scenario on slot workers of its own (harness.cluster.slot_pools).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Mapping, Sequence

import yaml

from harness.cluster import namespaces, node_image, slot_pools, storage, tekton, tekton_release, volumes
from harness.cluster.node_pools import NodePool
from harness.cluster.paths import SUITE_ROOT, cache_root
from harness.errors import HarnessError
from harness.kube import Kube, api_ready, present
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig
from harness.waits import NotYet, wait_for

if TYPE_CHECKING:
    from pytest_kind import KindCluster

KIND_CONFIG = SUITE_ROOT / "kind-config.yaml"

#: The stock node image: the one kind v0.33.0's source names for Kubernetes v1.37
#: (pkg/apis/config/defaults/image.go), pinned by digest. kind publishes v1.37.0 for
#: v0.33.0, not v1.37.2; the offline image runs v1.37.2, the local cluster's version.
NODE_IMAGE = "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5"
#: The oldest kind whose release lists a v1.37 node image.
MINIMUM_KIND = (0, 33, 0)

DEFAULT_NAME = "rescon"
#: Seconds a quick kind or docker query may take (`kind get clusters`, `docker info`).
QUERY_SECONDS = 30.0
#: Seconds `kind create cluster` may take; creating 3 nodes here takes about 30 s.
CREATE_SECONDS = 600.0
#: The CNI config the provider writes on offline-image nodes.
CNI_CONFIG_PATH = "/etc/cni/net.d/10-rescon-ptp.conflist"
#: The kubelet's configuration file on a kind node (kubeadm writes it).
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
#: The label kind puts on its node containers.
KIND_CLUSTER_LABEL = "io.x-k8s.kind.cluster"

NODE_IMAGE_CHOICES = ("auto", "stock", "offline")


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


def parse_kind_version(text: str) -> tuple[int, int, int]:
    """parse_kind_version('kind v0.33.0 go1.26.8 linux/amd64') == (0, 33, 0)."""
    match = re.search(r"v(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        raise HarnessError(f"cannot read kind's version from {text.strip()[:80]!r}: pass --kind-bin with kind >= v0.33.0")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def check_kind_version(version: tuple[int, int, int], path: Path) -> None:
    if version < MINIMUM_KIND:
        found = ".".join(map(str, version))
        raise HarnessError(f"{path} is kind v{found}, too old for Kubernetes v1.37 nodes: install kind >= v0.33.0 or pass --kind-bin")


def say(line: str) -> None:
    # The real stderr: pytest captures sys.stderr during fixtures, and what happens to a cluster must be seen.
    print(f"kind: {line}", file=sys.__stderr__ or sys.stderr, flush=True)


def existing_cluster_action(*, recorded: Mapping[str, Any] | None, identity: Mapping[str, str], has_kubeconfig: bool, node_images: Sequence[str]) -> str:
    """existing_cluster_action() is what to do with a kind cluster of our name that exists already: reuse, replace or refuse.

    Reuse needs the marker this provider wrote to match the image and config and
    the cluster's kubeconfig to be there. Otherwise the cluster is this suite's
    (its marker, or every node from the offline image) and stale: replace it; or
    it is somebody else's: refuse.
    """
    if recorded is not None and {k: recorded.get(k) for k in identity} == dict(identity) and has_kubeconfig:
        return "reuse"
    ours = recorded is not None or (bool(node_images) and all(image.startswith(node_image.REPOSITORY + ":") for image in node_images))
    return "replace" if ours else "refuse"


def container_runtime() -> str:
    """container_runtime() is the program kind drives: docker, or $KIND_EXPERIMENTAL_PROVIDER (podman, nerdctl)."""
    return os.environ.get("KIND_EXPERIMENTAL_PROVIDER") or "docker"


def cluster_config(base: Mapping[str, Any], patches: Mapping[str, Any]) -> dict[str, Any]:
    """cluster_config() is kind-config.yaml with the patches: lists append, mappings merge, others replace."""
    merged: dict[str, Any] = json.loads(json.dumps(base))
    for key, value in patches.items():
        if isinstance(value, list):
            merged[key] = [*(merged.get(key) or []), *value]
        elif isinstance(value, dict):
            merged[key] = {**(merged.get(key) or {}), **value}
        else:
            merged[key] = value
    return merged


def ptp_conflist(pod_cidr: str) -> dict[str, Any]:
    """ptp_conflist('10.244.1.0/24') is the node's CNI config: a veth per pod, addresses from its podCIDR."""
    return {
        "cniVersion": "1.0.0",
        "name": "rescon-ptp",
        "plugins": [
            {
                "type": "ptp",
                "ipMasq": False,
                "ipam": {"type": "host-local", "ranges": [[{"subnet": pod_cidr}]], "routes": [{"dst": "0.0.0.0/0"}]},
                "mtu": 1500,
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def routes_for(node: str, nodes: Mapping[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """routes_for('w1', {'w1': ('10.244.1.0/24', '172.18.0.3'), 'w2': ('10.244.2.0/24', '172.18.0.4')}) == [('10.244.2.0/24', '172.18.0.4')]."""
    return sorted((cidr, ip) for name, (cidr, ip) in nodes.items() if name != node)


#: The inotify limits kind's known issues give for clusters of several nodes (fs.inotify.*).
INOTIFY_MINIMUM = {"max_user_instances": 512, "max_user_watches": 524288}
INOTIFY_DIR = Path("/proc/sys/fs/inotify")


def inotify_shortfall(current: Mapping[str, int], nodes: int) -> list[str]:
    """inotify_shortfall({'max_user_instances': 128, ...}, nodes=8) names each limit too low for that many kind nodes.

    Every node runs a kubelet, containerd and kube-proxy, each holding inotify
    instances of the one host user: at the kernel's default 128 instances, eight
    nodes left kube-proxy failing on two of them with "fsnotify watcher init: too
    many open files". Three nodes (kind's usual shape) ran on the default here, so
    small clusters are not held to it.
    """
    if nodes <= 3:
        return []
    return [f"fs.inotify.{key}={value}" for key, value in INOTIFY_MINIMUM.items() if key in current and current[key] < value]


def host_inotify_limits(directory: Path = INOTIFY_DIR) -> dict[str, int]:
    """host_inotify_limits() reads fs.inotify.* of this (Linux) host; an unreadable one is left out."""
    found = {}
    for key in INOTIFY_MINIMUM:
        try:
            found[key] = int((directory / key).read_text().strip())
        except (OSError, ValueError):
            continue
    return found


#: Options the pytest plugin (harness.cluster.kind_options) stores for the session's KindProvider.
SESSION_OPTIONS: dict[str, Any] = {}


@dataclass
class KindProvider:
    """KindProvider is one kind cluster: `up()` creates or reuses it and installs Tekton; `down()` deletes what it created."""

    name: str = DEFAULT_NAME
    coschedule: str = "disabled"
    kind_bin: str | Path | None = None
    keep: bool = False
    timeouts: TimeoutConfig = DEFAULT_TIMEOUTS
    image: str = "auto"
    config_file: Path = KIND_CONFIG
    tekton_manifest: str | None = None
    tekton_manifest_sha256: str | None = None
    kind: str = field(default="kind", init=False)
    exclusive_pools: bool = field(default=False, init=False)
    created_cluster: bool = field(default=False, init=False)
    offline: bool = field(default=False, init=False)
    node_image_name: str = field(default="", init=False)
    worker_labels: dict[str, dict[str, str]] = field(default_factory=dict, init=False)
    #: Workers whose kubelet maxPods set_max_pods() lowered, with the `pods` allocatable they had before.
    limited_pods: dict[str, int] = field(default_factory=dict, init=False)
    #: The cluster's lock file, held (flock) from up() to down() so no other session replaces or shares the cluster.
    session_lock: IO[str] | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_options(
        cls,
        *,
        coschedule: str,
        timeouts: TimeoutConfig = DEFAULT_TIMEOUTS,
        kind_bin: str | Path | None = None,
        name: str | None = None,
        keep: bool = False,
        image: str | None = None,
        tekton_manifest: str | None = None,
        tekton_manifest_sha256: str | None = None,
    ) -> KindProvider:
        tekton.feature_flags(coschedule)  # validates the mode before anything starts
        options = SESSION_OPTIONS
        manifest = tekton_manifest or options.get("tekton_manifest")
        digest = tekton_manifest_sha256 or options.get("tekton_manifest_sha256")
        if manifest:
            digest = tekton_release.check_sha256(digest, manifest=manifest)
        elif digest:
            raise HarnessError("--tekton-manifest-sha256 needs --tekton-manifest URL_OR_PATH: pass both, or neither")
        return cls(
            name=name or options.get("name") or DEFAULT_NAME,
            coschedule=coschedule,
            kind_bin=kind_bin,
            keep=keep,
            timeouts=timeouts,
            image=image or options.get("node_image") or "auto",
            tekton_manifest=manifest,
            tekton_manifest_sha256=digest,
        )

    @property
    def workdir(self) -> Path:
        return cache_root() / "kind" / self.name

    @property
    def kubeconfig(self) -> Path:
        """kubeconfig is the cluster's own file; kind is never allowed to write the user's ~/.kube/config."""
        return self.workdir / "kubeconfig.yaml"

    @property
    def marker(self) -> Path:
        """marker records the image and config of a cluster this provider created (reuse needs a match)."""
        return self.workdir / "created-by-rescon.json"

    def logs_dir(self) -> Path | None:
        return None

    # --- lifecycle ---

    def up(self) -> Kube:
        """up() returns a client of the kind cluster once its nodes are Ready and Tekton reconciles."""
        self.require_container_runtime()
        kind_path = self.kind_binary()
        self.node_image_name, self.offline = self.choose_node_image()
        # Locked before the config is written: the workdir's kind-config.yaml may be the one a
        # running session's cluster was created from.
        self.hold_cluster_lock()
        config = self.write_config()
        self.check_inotify(config)
        self.create_cluster(kind_path, config)
        kube = self._connected()
        if self.offline:
            self.network(kube)
        self._wait_nodes_ready(kube)
        tekton_release.install(kube, self.tekton_manifests(), timeouts=self.timeouts)
        storage.wait_provisioner_ready(kube, timeouts=self.timeouts)
        return kube

    def attach(self) -> Kube:
        """attach() is a client of the cluster an xdist controller brought up with up(): no lock, creation or install.

        The controller holds the cluster's lock for the whole session; its workers
        share the cluster (each scenario on slot workers of its own), so they only
        connect, and note what restore_nodes() needs.
        """
        self.require_container_runtime()
        self.node_image_name, self.offline = self.choose_node_image()
        if not self.kubeconfig.is_file():
            raise HarnessError(f"kind cluster {self.name} has no kubeconfig at {self.kubeconfig}: the session's controller did not bring it up")
        return self._connected()

    def _connected(self) -> Kube:
        """_connected() is a client of the cluster once its API server answers, with its workers' labels noted."""
        kube = Kube.connect(self.kubeconfig)
        # A kept cluster whose containers have just started again (a restarted Docker) is awaited, not judged.
        wait_for(
            lambda: api_ready(kube),
            what=f"the API server of kind cluster {self.name}",
            timeout="api_ready",
            timeouts=self.timeouts,
            hint=f"docker logs {self.name}-control-plane",
        )
        self.remember_workers(kube)
        return kube

    def down(self) -> None:
        """down() deletes the kind cluster if up() created it (and keep is off), then lets go of its lock; idempotent."""
        try:
            if self.created_cluster and not self.keep:
                self.kind_cluster(self.kind_binary()).delete()  # type: ignore[no-untyped-call]
                self.marker.unlink(missing_ok=True)
                self.created_cluster = False
            elif self.created_cluster and self.marker.is_file():
                # Kept on purpose: the next session reuses it and leaves it (a killed session's marker says kept: false).
                self.marker.write_text(json.dumps({**json.loads(self.marker.read_text()), "kept": True}))
        finally:
            self.release_cluster_lock()

    @property
    def lock_file(self) -> Path:
        return self.workdir / "session.lock"

    def hold_cluster_lock(self) -> None:
        """hold_cluster_lock() takes the cluster's lock without waiting; another live session holding it is a one-line setup error."""
        if self.session_lock is not None:
            return
        self.workdir.mkdir(parents=True, exist_ok=True)
        handle = self.lock_file.open("a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise HarnessError(
                f"kind cluster {self.name} is in use by another suite session (pid {holder}, lock {self.lock_file}): "
                f"wait for it to end, or pass --kind-name OTHER"
            ) from None
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self.session_lock = handle

    def release_cluster_lock(self) -> None:
        if self.session_lock is not None:
            self.session_lock.close()  # closing the file lets go of the flock
            self.session_lock = None

    def kind_binary(self) -> Path:
        """kind_binary() is --kind-bin, else kind on PATH, else kind built from its module; checked to know v1.37."""
        try:
            path = resolve_kind_bin(self.kind_bin)
        except HarnessError:
            if self.kind_bin or shutil.which("go") is None:
                raise
            from harness.cluster import go_builds

            path = go_builds.GoBuilder().ensure(go_builds.builds()["kind"]) / "kind"
        result = self._run([str(path), "version"], what=f"{path} version")
        check_kind_version(parse_kind_version(result.stdout), path)
        return path

    def choose_node_image(self) -> tuple[str, bool]:
        """choose_node_image() is (image, whether it is the offline one), building the offline image if it is chosen and missing."""
        if self.image == "stock":
            return NODE_IMAGE, False
        if self.image not in NODE_IMAGE_CHOICES:
            if not self._image_present(self.image):
                raise HarnessError(f"node image {self.image} is not in {container_runtime()}: load or build it, or pass --kind-node-image auto")
            return self.image, self.image.startswith(node_image.REPOSITORY + ":")
        if self.image == "auto" and self._image_present(NODE_IMAGE):
            return NODE_IMAGE, False
        can_build = all(shutil.which(tool) for tool in ("go", "mmdebstrap", "gcc", "busybox"))
        if self.image == "offline" or can_build:
            builder = node_image.NodeImageBuilder()
            if self.image == "auto" and not can_build and not builder.exists():
                return NODE_IMAGE, False
            try:
                return builder.ensure(), True
            except HarnessError as err:
                raise HarnessError(f"the offline node image cannot be built: {err}") from err
        return NODE_IMAGE, False

    def write_config(self) -> Path:
        """write_config() is kind-config.yaml with this host's and image's patches, in the cluster's workdir."""
        if not self.config_file.is_file():
            raise HarnessError(f"{self.config_file} is missing: restore kind-config.yaml at the repository root")
        base = yaml.safe_load(self.config_file.read_text())
        patches = node_image.kind_config_patches(
            offline_image=self.offline,
            cgroup_v1=node_image.host_cgroup_v1(),
            has_sys_resource=node_image.host_has_capability(node_image.CAP_SYS_RESOURCE),
        )
        self.workdir.mkdir(parents=True, exist_ok=True)
        path = self.workdir / "kind-config.yaml"
        partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
        partial.write_text(yaml.safe_dump(cluster_config(base, patches), sort_keys=False))
        partial.rename(path)
        return path

    def check_inotify(self, config: Path) -> None:
        """check_inotify() fails in one line, before any node starts, when the host's inotify limits are too low for the config's nodes."""
        nodes = len(yaml.safe_load(config.read_text()).get("nodes") or [])
        low = inotify_shortfall(host_inotify_limits(), nodes)
        if low:
            raise HarnessError(
                f"this host's inotify limits are too low for {nodes} kind nodes (kube-proxy fails with 'too many open files'): "
                f"run 'sysctl -w {' '.join(low)}' as root (.ci/docker-setup.sh does)"
            )

    def tekton_manifests(self) -> list[dict[str, Any]]:
        if self.tekton_manifest:
            assert self.tekton_manifest_sha256 is not None
            content = tekton_release.fetch(self.tekton_manifest, self.tekton_manifest_sha256, timeouts=self.timeouts)
            return tekton_release.release_manifests(content, coschedule=self.coschedule)
        if not self.offline:
            raise HarnessError(
                f"the stock node image {NODE_IMAGE.split('@')[0]} has no local Tekton images: pass --tekton-manifest URL_OR_PATH "
                "--tekton-manifest-sha256 HEX (e.g. Tekton's release.yaml), or --kind-node-image offline"
            )
        from harness.cluster.toolchain import Toolchain

        version = tekton.version()
        config_dir = tekton.module_dir(Toolchain()) / "config"
        documents = [doc for _, doc in tekton_release.module_documents(config_dir)]
        from harness.cluster import go_builds

        images = {command: node_image.tekton_image(command, version) for command in go_builds.TEKTON_COMMANDS}
        return tekton_release.render_module(documents, images=images, shell_image=node_image.BUSYBOX_IMAGE, version=version, coschedule=self.coschedule)

    def create_cluster(self, kind_path: Path, config: Path) -> KindCluster:
        """create_cluster() runs `kind create cluster` with our image, config and kubeconfig, or reuses our own kept cluster."""
        identity = self._identity(config)
        cluster = self.kind_cluster(kind_path)
        if self.name in self.existing_clusters(kind_path):
            recorded = json.loads(self.marker.read_text()) if self.marker.is_file() else None
            action = existing_cluster_action(
                recorded=recorded, identity=identity, has_kubeconfig=self.kubeconfig.is_file(), node_images=self.node_container_images()
            )
            if action == "reuse":
                if recorded is not None and not recorded.get("kept"):
                    # Left by a session that ended before its down() (killed): this session owns it now, and deletes it
                    # at its end unless --keep-cluster, as if it had made it. A cluster kept on purpose stays kept.
                    self.created_cluster = True
                    say(f"cluster {self.name} was left by a session that did not finish; reusing it, and deleting it at the end unless --keep-cluster")
                return cluster
            if action == "refuse":
                raise HarnessError(
                    f"a kind cluster named {self.name} already exists and this suite did not make it: "
                    f"delete it with 'kind delete cluster --name {self.name}', or pass --kind-name OTHER"
                )
            say(f"cluster {self.name} was left by an earlier session of this suite with another image or config; deleting it")
            self._run([str(kind_path), "delete", "cluster", f"--name={self.name}"], what=f"kind delete cluster --name {self.name}", timeout=CREATE_SECONDS)
            self.marker.unlink(missing_ok=True)
        started = time.monotonic()
        cluster.create(config_file=config)
        self.created_cluster = True
        # "kept": made to outlive this session (--keep-cluster); a cluster that outlives a session that wanted it gone was left by a kill.
        self.marker.write_text(json.dumps({**identity, "kept": self.keep}))
        say(f"cluster {self.name} created in {time.monotonic() - started:.0f}s from {self.node_image_name}")
        return cluster

    def _identity(self, config: Path) -> dict[str, str]:
        return {"image": self.node_image_name, "config": hashlib.sha256(config.read_bytes()).hexdigest()}

    def kind_cluster(self, kind_path: Path) -> KindCluster:
        try:
            from pytest_kind import KindCluster
        except ImportError as err:
            raise HarnessError("pytest-kind is not installed: run pip install -e '.[kind]' (make venv does)") from err
        self.workdir.mkdir(parents=True, exist_ok=True)
        return KindCluster(self.name, kubeconfig=self.kubeconfig, image=self.node_image_name or NODE_IMAGE, kind_path=kind_path)

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

    # --- nodes: the offline image's network, and workers a scenario deleted ---

    def node_container_images(self) -> list[str]:
        """node_container_images() is the image of each of the cluster's node containers, stopped ones too."""
        runtime = container_runtime()
        result = self._run(
            [runtime, "ps", "-a", "--filter", f"label={KIND_CLUSTER_LABEL}={self.name}", "--format", "{{.Image}}"], what=f"{runtime} ps -a"
        )
        return [line.strip() for line in result.stdout.splitlines() if line.strip()]

    def node_containers(self) -> dict[str, str]:
        """node_containers() maps each kind node (container) name to its role."""
        runtime = container_runtime()
        result = self._run(
            [runtime, "ps", "--filter", f"label={KIND_CLUSTER_LABEL}={self.name}", "--format", '{{.Names}} {{.Label "io.x-k8s.kind.role"}}'],
            what=f"{runtime} ps",
        )
        return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)

    def remember_workers(self, kube: Kube) -> None:
        """remember_workers() notes each slot worker's kind labels, to check a restored worker against."""
        for node in kube.core.list_node(label_selector=slot_pools.POOL_SLOT_LABEL).items:
            labels = present(node.metadata).labels or {}
            self.worker_labels[present(node.metadata).name or ""] = {slot_pools.POOL_SLOT_LABEL: labels[slot_pools.POOL_SLOT_LABEL]}

    def network(self, kube: Kube) -> None:
        """network() writes each node's CNI config and its routes to the other nodes' podCIDRs (offline image only)."""
        runtime = container_runtime()

        def addressed() -> dict[str, tuple[str, str]]:
            found: dict[str, tuple[str, str]] = {}
            for node in kube.core.list_node().items:
                name = present(node.metadata).name or ""
                cidr = node.spec.pod_cidr if node.spec else None
                ips = [a.address for a in ((node.status.addresses if node.status else None) or []) if a.type == "InternalIP"]
                if not cidr or not ips:
                    raise NotYet(f"node {name} has no podCIDR or InternalIP yet")
                found[name] = (cidr, ips[0])
            if set(found) != set(self.node_containers()):
                raise NotYet(f"nodes {sorted(found)} are not yet all of kind's {sorted(self.node_containers())}")
            return found

        nodes = wait_for(addressed, what="every kind node's podCIDR", timeout="nodes_ready", timeouts=self.timeouts)
        for name, (cidr, _) in nodes.items():
            script = f"mkdir -p /etc/cni/net.d && cat > {CNI_CONFIG_PATH}.tmp && mv {CNI_CONFIG_PATH}.tmp {CNI_CONFIG_PATH}"
            for dst, via in routes_for(name, nodes):
                script += f" && ip route replace {dst} via {via}"
            result = subprocess.run(
                [runtime, "exec", "-i", name, "sh", "-c", script], input=json.dumps(ptp_conflist(cidr)), capture_output=True, text=True, timeout=QUERY_SECONDS
            )
            if result.returncode != 0:
                raise HarnessError(f"writing the CNI config on kind node {name} failed ({result.stderr.strip()[-200:]}): is the node running?")

    def restore_nodes(self, kube: Kube, nodes: Sequence[str]) -> None:
        """restore_nodes() brings back each of `nodes` whose Node object is gone (node_loss), with its kind labels, Ready.

        Only a pool's own nodes: a worker lost on purpose by a scenario running beside
        (`-n N`) is that scenario's to bring back.
        """
        present_nodes = {present(n.metadata).name for n in kube.core.list_node().items}
        lost = [name for name in nodes if name in self.worker_labels and name not in present_nodes]
        if not lost:
            return
        runtime = container_runtime()
        for name in lost:
            self._run([runtime, "exec", name, "systemctl", "restart", "kubelet"], what=f"restarting the kubelet of {name}")

        def back() -> None:
            for name in lost:
                try:
                    node = kube.core.read_node(name)
                except Exception as err:  # noqa: BLE001 - a 404 until the kubelet registers again
                    raise NotYet(f"node {name} has not registered again yet") from err
                labels = present(node.metadata).labels or {}
                missing = {k: v for k, v in self.worker_labels[name].items() if labels.get(k) != v}
                if missing:
                    raise HarnessError(f"node {name} registered again without its kind labels {missing}: recreate the cluster")

        wait_for(back, what=f"lost worker(s) {', '.join(lost)} to register again", timeout="nodes_ready", timeouts=self.timeouts)
        if self.offline:
            self.network(kube)
        self._wait_nodes_ready(kube)

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
        return slot_pools.claim_slot_pool(
            kube, name, count=count, labels=labels, taints=taints, timeouts=self.timeouts, pods=pods,
            limit_pods=functools.partial(self.set_max_pods, kube),
        )

    def remove_node_pool(self, kube: Kube, pool: NodePool) -> None:
        # The nodes go back as the next pool expects them, before the label that keeps other workers off them.
        self.restore_nodes(kube, pool.nodes)
        for node in [n for n in pool.nodes if n in self.limited_pods]:
            self.set_max_pods(kube, node, None)
        slot_pools.release_slot_pool(kube, pool)

    def set_max_pods(self, kube: Kube, node: str, max_pods: int | None) -> None:
        """set_max_pods() sets a worker's kubelet maxPods (None: the kubelet's default again) and waits for its `pods` allocatable.

        A real node's `pods` allocatable is the kubelet's maxPods, which only a
        kubelet restart changes (a Node status patch is overwritten at the next
        heartbeat). Running containers survive the restart.
        """
        if max_pods is None:
            wanted = self.limited_pods.pop(node, None)
            if wanted is None:
                return
            expected = str(wanted)
            edit = f"sed -i '/^maxPods:/d' {KUBELET_CONFIG}"
        else:
            if node not in self.limited_pods:
                original = (present(kube.core.read_node(node).status).allocatable or {}).get("pods", "110")
                self.limited_pods[node] = int(original)
            expected = str(max_pods)
            edit = f"sed -i '/^maxPods:/d' {KUBELET_CONFIG} && echo 'maxPods: {max_pods}' >> {KUBELET_CONFIG}"
        self._run([container_runtime(), "exec", node, "sh", "-c", f"{edit} && systemctl restart kubelet"], what=f"setting maxPods on {node}")

        def limited() -> None:
            status = present(kube.core.read_node(node).status)
            pods = (status.allocatable or {}).get("pods")
            ready = {c.type: c.status for c in (status.conditions or [])}.get("Ready")
            if pods != expected or ready != "True":
                raise NotYet(f"node {node} allows {pods} pods (Ready={ready}), not yet {expected}")

        wait_for(limited, what=f"kubelet of {node} to allow {expected} pods", timeout="nodes_ready", timeouts=self.timeouts)

    # --- test namespaces: made for one scenario, deleted with their volumes ---

    def create_test_namespace(self, kube: Kube, name: str) -> str:
        return namespaces.create_test_namespace(kube, name, timeouts=self.timeouts)

    def delete_test_namespace(self, kube: Kube, name: str) -> None:
        namespaces.delete_test_namespace(kube, name, timeouts=self.timeouts, wait=False)
        volumes.delete_test_volumes(kube, name)

    # --- helpers ---

    def _image_present(self, image: str) -> bool:
        runtime = container_runtime()
        return self._run([runtime, "image", "inspect", image], what=f"{runtime} image inspect", check=False).returncode == 0

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

    def _run(self, argv: list[str], *, what: str, check: bool = True, timeout: float = QUERY_SECONDS) -> subprocess.CompletedProcess[str]:
        try:
            result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as err:
            raise HarnessError(f"{what} took longer than {timeout:g}s: is {container_runtime()} responding?") from err
        except OSError as err:
            raise HarnessError(f"{what} could not run ({err}): check the path") from err
        if check and result.returncode != 0:
            reason = (result.stderr.strip().splitlines() or ["no output"])[-1][:200]
            raise HarnessError(f"{what} failed ({reason}): is {container_runtime()} running?")
        return result
