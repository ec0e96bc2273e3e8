"""The offline kind node image: kind's node for Kubernetes v1.37, built on this machine with no registry.

`rescon kind node-image` (and the kind provider, when the image is missing)
builds it in steps, each cached and printed as a progress line:

1. the Go programs (harness.cluster.go_builds);
2. a Debian bookworm root file system, from Debian's packages with mmdebstrap;
3. the base image: that rootfs with kind's own `images/base/files` (from the kind
   module), containerd, runc, the CNI plugins, crictl, kubelet, kubeadm and
   kubectl, and the systemd trimming kind's base Dockerfile does;
4. the container images the node runs, each a one-layer `docker import`: the
   control plane, kube-proxy, etcd, CoreDNS, pause, a busybox for the task
   steps (and the storage provisioner's helper pods), the local-path provisioner
   (kind's default storage, with its manifest in /kind/manifests/default-storage.yaml,
   which `kind create cluster` applies: harness.cluster.storage) and Tekton's
   commands in ko's layout (/ko-app/<cmd>, user 65532);
5. the node image: a container of the base image imports those into its
   containerd, and is committed.

The image name carries a key over every version and recipe, so a changed pin
builds a new image and never reuses a stale one; an image is tagged only once
complete (docker commit is the rename). Heavy work runs under `nice -n 19`.

What differs from a stock kindest/node image, and why (see kind_config_patches()):
no CNI daemon (kindnetd's module cannot be built from served modules; the
provider writes a ptp CNI config and per-node routes itself), and etcd is the
local cluster's v3.6 (kubeadm is told its tag).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TextIO

import yaml

from harness.cluster import go_builds, storage
from harness.cluster.paths import cache_root
from harness.cluster.toolchain import Toolchain, _format_elapsed, program_named
from harness.errors import HarnessError

#: Bump when the recipe below changes in a way the versions do not show.
RECIPE_REVISION = 2
REPOSITORY = "rescon.local/kind-node"
#: Every image this module makes carries the recipe key in this label, so a stale image under the same name is rebuilt.
KEY_LABEL = "dev.rescon.recipe-key"
BASE_REPOSITORY = "rescon.local/kind-base"
SUITE = "bookworm"

#: The packages of kind's base image (images/base/Dockerfile), less curl and the storage clients (nfs-common, open-iscsi); jq is needed by kind's mount-product-files.sh hook.
PACKAGES = (
    "systemd", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux", "mount", "kmod",
    "libseccomp2", "pigz", "fuse-overlayfs", "e2fsprogs", "bash", "ca-certificates", "procps", "jq",
)

#: Images the node's containerd holds, by what kubeadm v1.37.2 and kind ask for.
PAUSE_IMAGES = ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10.2")
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.14.6"
#: The etcd the local cluster runs (tools/etcd); kubeadm is told this tag (kind_config_patches()).
ETCD_TAG = "3.6.16"
ETCD_IMAGE = f"registry.k8s.io/etcd:{ETCD_TAG}"
#: The task steps' image (harness.cluster.simulation.STEP_IMAGE) and Tekton's shell image: Debian's busybox.
BUSYBOX_IMAGE = "docker.io/library/busybox:1.37"
TEKTON_REPOSITORY = "rescon.local/tekton"
#: kind's default storage: the local-path provisioner's image (its helper pods run BUSYBOX_IMAGE).
LOCAL_PATH_REPOSITORY = "rescon.local/local-path-provisioner"

PAUSE_SOURCE = r"""
#include <signal.h>
#include <unistd.h>
static void stop(int sig) { (void)sig; _exit(0); }
int main(void) {
  signal(SIGINT, stop);
  signal(SIGTERM, stop);
  for (;;) pause();
}
"""


def kubernetes_version() -> str:
    return program_named("kube-apiserver").version()


def local_path_image() -> str:
    """local_path_image() is the local image of the pinned local-path provisioner: rescon.local/local-path-provisioner:v0.0.33."""
    return f"{LOCAL_PATH_REPOSITORY}:{program_named(storage.PROCESS).version()}"


def tekton_image(command: str, version: str) -> str:
    """tekton_image('controller', 'v1.15.0') is the local image name of one of Tekton's commands."""
    return f"{TEKTON_REPOSITORY}/{command}:{version}"


def image_key(parts: Iterable[str]) -> str:
    """image_key() is 12 hex digits over everything that shapes the image (versions, recipe keys, revision)."""
    digest = hashlib.sha256()
    for part in (f"revision {RECIPE_REVISION}", *parts):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:12]


def kind_config_patches(*, offline_image: bool, cgroup_v1: bool, has_sys_resource: bool) -> dict[str, Any]:
    """kind_config_patches() are the kind Cluster fields this host and image need, and only those.

    Example: a cgroup v1 host gets a KubeletConfiguration patch with failCgroupV1: false;
    a host whose bounding set lacks CAP_SYS_RESOURCE gets containerd's restrict_oom_score_adj.
    """
    patches: dict[str, Any] = {}
    kubeadm: list[str] = []
    containerd: list[str] = []
    if offline_image:
        patches["networking"] = {"disableDefaultCNI": True}
        kubeadm.append(f"kind: ClusterConfiguration\netcd:\n  local:\n    imageTag: \"{ETCD_TAG}\"\n")
    if cgroup_v1:
        kubeadm.append("kind: KubeletConfiguration\nfailCgroupV1: false\n")
    if not has_sys_resource:
        containerd.append('[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n')
    if kubeadm:
        patches["kubeadmConfigPatches"] = kubeadm
    if containerd:
        patches["containerdConfigPatches"] = containerd
    return patches


def host_cgroup_v1(root: Path = Path("/sys/fs/cgroup")) -> bool:
    """host_cgroup_v1() is True where /sys/fs/cgroup is not the unified (v2) hierarchy."""
    return not (root / "cgroup.controllers").is_file()


def host_has_capability(number: int, status: Path = Path("/proc/self/status")) -> bool:
    """host_has_capability(24) is whether CAP_SYS_RESOURCE is in this process's bounding set."""
    for line in status.read_text().splitlines():
        if line.startswith("CapBnd:"):
            return bool(int(line.split()[1], 16) >> number & 1)
    return True


CAP_SYS_RESOURCE = 24


def cri_base_spec(default_spec: dict[str, Any]) -> dict[str, Any]:
    """cri_base_spec() is kind's /etc/containerd/cri-base.json: `ctr oci spec` with kind's mount hook and no rlimits."""
    spec: dict[str, Any] = json.loads(json.dumps(default_spec))
    hooks = spec.setdefault("hooks", {}).setdefault("createContainer", [])
    hooks.append({"path": "/kind/bin/mount-product-files.sh"})
    spec.get("process", {}).pop("rlimits", None)
    return spec


@dataclass
class NodeImageBuilder:
    """NodeImageBuilder builds (or finds) the offline node image; `ensure()` returns its name."""

    out: TextIO = sys.stderr
    docker: str = "docker"
    go: go_builds.GoBuilder = field(init=False)

    def __post_init__(self) -> None:
        self.go = go_builds.GoBuilder(out=self.out)

    # --- names ---

    def binaries(self) -> dict[str, Path]:
        """binaries() builds every Go program (cached) and returns {binary name: path}."""
        found: dict[str, Path] = {}
        for build in go_builds.builds().values():
            directory = self.go.ensure(build)
            for output, _ in build.outputs:
                found[output] = directory / output
        wanted = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", storage.PROCESS]
        toolchain = Toolchain(out=self.out).ensure(wanted)
        found.update(toolchain)
        return found

    def key(self) -> str:
        builds = [b.key(self.go.go_version) for b in go_builds.builds().values()]
        return image_key([kubernetes_version(), SUITE, *PACKAGES, *builds, ETCD_TAG, local_path_image()])

    def image_name(self) -> str:
        return f"{REPOSITORY}:{kubernetes_version()}-{self.key()}"

    def exists(self, image: str | None = None) -> bool:
        result = subprocess.run([self.docker, "image", "inspect", image or self.image_name()], capture_output=True, timeout=60)
        return result.returncode == 0

    def current(self, image: str) -> bool:
        """current() is whether Docker has `image` from this recipe: its KEY_LABEL is this key (names without a key, e.g. registry.k8s.io/..., need it)."""
        result = subprocess.run(
            [self.docker, "image", "inspect", "--format", f'{{{{index .Config.Labels "{KEY_LABEL}"}}}}', image], capture_output=True, text=True, timeout=60
        )
        return result.returncode == 0 and result.stdout.strip() == self.key()

    # --- the build ---

    def ensure(self) -> str:
        """ensure() returns the node image's name, building what is missing first."""
        name = self.image_name()
        if self.exists(name):
            self._say(f"node image {name} is cached")
            return name
        started = time.monotonic()
        self._say(f"[1/5] Go programs (cached under {cache_root() / 'kind-images' / 'bin'})")
        bins = self.binaries()
        self._say("[2/5] Debian root file system")
        rootfs = self.rootfs()
        with tempfile.TemporaryDirectory(prefix="rescon-node-image-", dir=self._scratch_parent()) as scratch:
            work = Path(scratch)
            self._say("[3/5] base image")
            base = self.base_image(rootfs, bins, work)
            self._say("[4/5] the node's container images")
            images = self.container_images(rootfs, bins, work)
            self._say(f"[5/5] node image {name}: importing {len(images)} images into its containerd")
            self.node_image(base, images, name, work)
        self._say(f"node image {name} built in {_format_elapsed(time.monotonic() - started)}")
        return name

    def rootfs(self) -> Path:
        """rootfs() is the cached bookworm rootfs tarball, made with mmdebstrap from Debian's packages."""
        final = cache_root() / "kind-images" / f"rootfs-{SUITE}-{image_key(PACKAGES)}.tar"
        if final.is_file():
            return final
        if shutil.which("mmdebstrap") is None:
            raise HarnessError("mmdebstrap is not on PATH: install Debian's mmdebstrap package to build the offline node image")
        # mmdebstrap picks the output format by the name's extension: the partial name must end in .tar.
        partial = final.with_name(f".partial-{os.getpid()}-{final.name}")
        log = final.with_suffix(".log")
        self._run(
            ["nice", "-n", "19", "mmdebstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(partial)],
            what="mmdebstrap",
            log=log,
        )
        partial.rename(final)
        return final

    def base_image(self, rootfs: Path, bins: dict[str, Path], work: Path) -> str:
        name = f"{BASE_REPOSITORY}:{kubernetes_version()}-{self.key()}"
        if self.exists(name):
            return name
        root = work / "base"
        root.mkdir()
        self._run(["tar", "-C", str(root), "-xf", str(rootfs)], what="unpacking the rootfs")
        kind_dir = self.go._workdir(go_builds.builds()["kind"], work, sys.stderr)
        files = kind_dir / "images" / "base" / "files"
        self._copy_tree(files / "usr" / "local" / "bin", root / "usr" / "local" / "bin", mode=0o755)
        self._copy_tree(files / "kind", root / "kind", mode=0o644)
        self._copy_tree(files / "kind" / "bin", root / "kind" / "bin", mode=0o755)
        self._copy_tree(files / "etc", root / "etc", mode=0o644)
        for directory in (root / "kind", root / "kind" / "bin"):
            directory.chmod(0o755)
        for binary, target in (
            ("containerd", "usr/local/bin"), ("containerd-shim-runc-v2", "usr/local/bin"), ("ctr", "usr/local/bin"),
            ("crictl", "usr/local/bin"), ("runc", "usr/local/sbin"),
            ("kubelet", "usr/bin"), ("kubeadm", "usr/bin"), ("kubectl", "usr/bin"),
            ("host-local", "opt/cni/bin"), ("loopback", "opt/cni/bin"), ("ptp", "opt/cni/bin"), ("bridge", "opt/cni/bin"), ("portmap", "opt/cni/bin"),
        ):
            self._install(bins[binary], root / target / binary)
        spec = json.loads(self._run([str(bins["ctr"]), "oci", "spec"], what="ctr oci spec"))
        (root / "etc" / "containerd" / "cri-base.json").write_text(json.dumps(cri_base_spec(spec), indent=2))
        # kind's base Dockerfile: trim systemd's units, then enable kind's own.
        for pattern in (
            "lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
            "lib/systemd/system/multi-user.target.wants/*",
            "etc/systemd/system/*.wants/*",
            "lib/systemd/system/local-fs.target.wants/*",
            "lib/systemd/system/sockets.target.wants/*udev*",
            "lib/systemd/system/sockets.target.wants/*initctl*",
            "lib/systemd/system/basic.target.wants/*",
        ):
            for path in root.glob(pattern):
                path.unlink()
        with (root / "etc" / "systemd" / "journald.conf").open("a") as journald:
            journald.write("ReadKMsg=no\n")
        init = root / "sbin" / "init"
        if not init.exists() and not init.is_symlink():
            init.symlink_to("/usr/lib/systemd/systemd")
        self._run(["chroot", str(root), "systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service"], what="systemctl enable")
        self._run(["chroot", str(root), "systemctl", "mask", "systemd-binfmt.service"], what="systemctl mask")
        (root / "etc" / "kubernetes" / "manifests").mkdir(parents=True, exist_ok=True)
        (root / "kind" / "version").write_text(kubernetes_version())
        # As kind's own images: `kind create cluster` applies this as the cluster's default storage.
        manifests = storage.in_cluster_manifests(provisioner_image=local_path_image(), helper_image=BUSYBOX_IMAGE)
        (root / "kind" / "manifests").mkdir(parents=True, exist_ok=True)
        (root / "kind" / "manifests" / "default-storage.yaml").write_text(yaml.safe_dump_all(manifests, sort_keys=False))
        imported = self._import(root, f"{name}-unsigned", ["ENV container=docker", 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]'])
        # docker import cannot set STOPSIGNAL; a one-line build on the imported image can (it pulls nothing).
        context = work / "base-context"
        context.mkdir()
        (context / "Dockerfile").write_text(f"FROM {imported}\nSTOPSIGNAL SIGRTMIN+3\n")
        self._run(["nice", "-n", "19", self.docker, "build", "--quiet", "-t", name, str(context)], what="docker build (STOPSIGNAL)")
        self._run([self.docker, "rmi", imported], what="docker rmi", check=False)
        shutil.rmtree(root, ignore_errors=True)
        return name

    def container_images(self, rootfs: Path, bins: dict[str, Path], work: Path) -> list[str]:
        """container_images() imports every image the node needs into Docker and returns their names."""
        version = kubernetes_version()
        images: list[str] = []

        def static(name: str, files: dict[str, Path], changes: list[str], *, user: str | None = None) -> None:
            if not self.current(name):
                root = work / f"img-{len(images)}"
                self._skeleton(root)
                for target, source in files.items():
                    self._install(source, root / target.lstrip("/"))
                self._import(root, name, [*changes, *([f"USER {user}"] if user else [])])
                shutil.rmtree(root, ignore_errors=True)
            images.append(name)

        path_env = "ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        for component in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            static(f"registry.k8s.io/{component}:{version}", {f"/usr/local/bin/{component}": bins[component]}, [path_env])
        static(ETCD_IMAGE, {"/usr/local/bin/etcd": bins["etcd"]}, [path_env])
        static(COREDNS_IMAGE, {"/coredns": bins["coredns"]}, ['ENTRYPOINT ["/coredns"]'])
        static(local_path_image(), {f"/usr/local/bin/{storage.PROCESS}": bins[storage.PROCESS]}, [path_env])
        pause = self._pause(work)
        for tag in PAUSE_IMAGES:
            static(tag, {"/pause": pause}, ['ENTRYPOINT ["/pause"]'])
        # kube-proxy drives iptables: it goes on the Debian rootfs.
        proxy = f"registry.k8s.io/kube-proxy:{version}"
        if not self.current(proxy):
            root = work / "kube-proxy"
            root.mkdir()
            self._run(["tar", "-C", str(root), "-xf", str(rootfs)], what="unpacking the rootfs")
            self._install(bins["kube-proxy"], root / "usr" / "local" / "bin" / "kube-proxy")
            self._import(root, proxy, [path_env])
            shutil.rmtree(root, ignore_errors=True)
        images.append(proxy)
        if not self.current(BUSYBOX_IMAGE):
            busybox = shutil.which("busybox")
            if busybox is None:
                raise HarnessError("busybox is not on PATH: install Debian's busybox-static package to build the task steps' image")
            root = work / "busybox"
            self._skeleton(root)
            self._install(Path(busybox), root / "bin" / "busybox")
            applets = self._run([busybox, "--list"], what="busybox --list").split()
            for applet in applets:
                if applet != "busybox":
                    (root / "bin" / applet).symlink_to("busybox")
            self._import(root, BUSYBOX_IMAGE, ["ENV PATH=/bin", 'CMD ["sh"]'])
            shutil.rmtree(root, ignore_errors=True)
        images.append(BUSYBOX_IMAGE)
        tekton_version = go_builds.builds()["tekton"].version
        tini = shutil.which("tini-static")
        for command in go_builds.TEKTON_COMMANDS:
            files = {f"/ko-app/{command}": bins[command]}
            if command == "resolvers":
                if tini is None:
                    raise HarnessError("tini-static is not on PATH: install Debian's tini package (Tekton's resolvers image runs /sbin/tini)")
                files["/sbin/tini"] = Path(tini)
            static(
                tekton_image(command, tekton_version),
                files,
                ["ENV PATH=/ko-app:/usr/local/bin:/usr/bin:/bin", "ENV KO_DATA_PATH=/var/run/ko", f'ENTRYPOINT ["/ko-app/{command}"]'],
                user="65532",
            )
        return images

    def node_image(self, base: str, images: list[str], name: str, work: Path) -> None:
        archive = work / "images.tar"
        self._run(["nice", "-n", "19", self.docker, "save", "-o", str(archive), *images], what="docker save")
        container = f"rescon-node-image-build-{os.getpid()}"
        self._run(
            [self.docker, "run", "-d", "--name", container, "--entrypoint", "sleep", "--security-opt", "seccomp=unconfined", base, "infinity"],
            what="docker run (build container)",
        )
        try:
            self._run([self.docker, "cp", str(archive), f"{container}:/images.tar"], what="docker cp")
            script = (
                "set -e; (containerd >/var/log/containerd-build.log 2>&1 &); "
                "for i in $(seq 60); do ctr version >/dev/null 2>&1 && break; sleep 1; done; "
                "nice -n 19 ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack - </images.tar; "
                "rm /images.tar; ctr --namespace=k8s.io images list -q; pkill containerd; "
                "for i in $(seq 30); do pgrep containerd >/dev/null || break; sleep 1; done"
            )
            listed = self._run([self.docker, "exec", container, "bash", "-c", script], what="importing images into the node's containerd")
            missing = [i for i in images if not any(line.strip() == i for line in listed.splitlines())]
            if missing:
                raise HarnessError(f"the node's containerd lacks {missing} after the import: read the build container's /var/log/containerd-build.log")
            self._run(
                # The container keeps the base image's STOPSIGNAL (docker commit cannot set one); the
                # entrypoint was `sleep` for the build, so it is put back, as kind's own builder does.
                [self.docker, "commit", "--change", 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]', container, name],
                what="docker commit",
            )
        finally:
            subprocess.run([self.docker, "rm", "-f", "-v", container], capture_output=True, timeout=120)

    # --- helpers ---

    def _pause(self, work: Path) -> Path:
        gcc = shutil.which("gcc")
        if gcc is None:
            raise HarnessError("gcc is not on PATH: install Debian's gcc and libc6-dev to build the static pause program")
        source = work / "pause.c"
        source.write_text(PAUSE_SOURCE)
        binary = work / "pause"
        self._run([gcc, "-static", "-Os", "-o", str(binary), str(source)], what="gcc (pause)")
        return binary

    @staticmethod
    def _skeleton(root: Path) -> None:
        """_skeleton() is the little a static program's image needs: /etc/passwd, /tmp and a CA bundle."""
        (root / "etc" / "ssl" / "certs").mkdir(parents=True)
        (root / "tmp").mkdir(mode=0o1777)
        (root / "tmp").chmod(0o1777)
        (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
        (root / "etc" / "group").write_text("root:x:0:\nnonroot:x:65532:\n")
        (root / "home" / "nonroot").mkdir(parents=True)
        os.chown(root / "home" / "nonroot", 65532, 65532)
        bundle = Path("/etc/ssl/certs/ca-certificates.crt")
        if bundle.is_file():
            shutil.copy(bundle, root / "etc" / "ssl" / "certs" / "ca-certificates.crt")

    @staticmethod
    def _install(source: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        target.chmod(0o755)

    @staticmethod
    def _copy_tree(source: Path, target: Path, *, mode: int) -> None:
        for path in source.rglob("*"):
            if path.is_file():
                destination = target / path.relative_to(source)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, destination)
                destination.chmod(mode)

    def _import(self, root: Path, name: str, changes: list[str]) -> str:
        argv = [self.docker, "import"]
        for change in [*changes, f"LABEL {KEY_LABEL}={self.key()}"]:
            argv += ["--change", change]
        tar = subprocess.Popen(["nice", "-n", "19", "tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        result = subprocess.run([*argv, "-", name], stdin=tar.stdout, capture_output=True, text=True, timeout=1800)
        tar.wait()
        if result.returncode != 0 or tar.returncode != 0:
            raise HarnessError(f"docker import {name} failed ({result.stderr.strip()[-200:]}): is docker running and is there disk space?")
        return name

    def _run(self, argv: list[str], *, what: str, log: Path | None = None, check: bool = True) -> str:
        if log is not None:
            with log.open("w") as handle:
                result = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, text=True, timeout=3600)
            if result.returncode != 0 and check:
                raise HarnessError(f"{what} failed (exit {result.returncode}): read {log}")
            return ""
        done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0 and check:
            reason = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            raise HarnessError(f"{what} failed ({reason}): the offline node image cannot be built; fix that and run 'rescon kind node-image' again")
        return done.stdout

    @staticmethod
    def _scratch_parent() -> Path:
        parent = cache_root() / "kind-images" / "scratch"
        parent.mkdir(parents=True, exist_ok=True)
        return parent

    def _say(self, line: str) -> None:
        print(f"kind node-image: {line}", file=self.out, flush=True)
