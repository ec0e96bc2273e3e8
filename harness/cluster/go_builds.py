"""Upstream programs for the offline kind images, built from Go modules into the per-user cache.

The local cluster's toolchain (harness.cluster.toolchain) builds what KWOK
needs. kind's node image and Tekton's in-cluster images need more: kind itself,
containerd, runc, the CNI plugins, crictl, kubelet, kubeadm, kube-proxy,
CoreDNS and Tekton's commands. Each GoBuild here names the upstream module and
version (pinned in this file) and is built from that module's own go.mod in the
Go module cache, exactly as upstream's Makefiles do; the Kubernetes programs
are built in a scratch copy of tools/kubernetes, so they share the local
cluster's pin.

A build writes into a temporary directory that is renamed into place once every
binary of it exists: a half-built entry is never trusted. Builds run under
`nice -n 19` (the machine is shared with timing-sensitive runs).
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
from typing import TextIO

from harness.cluster.paths import cache_root
from harness.cluster.toolchain import TOOLS_DIR, Program, _format_elapsed, _tail, _wait_with_heartbeat, find_go
from harness.errors import HarnessError

_K8S = "k8s.io/kubernetes"


@dataclass(frozen=True)
class GoBuild:
    """GoBuild is one upstream module's binaries: GoBuild('crictl', 'sigs.k8s.io/cri-tools', 'v1.36.0', {'crictl': './cmd/crictl'}).

    `outputs` maps each binary's file name to its package, relative to the module
    (or a full import path when `in_kubernetes_pin` is set).
    """

    name: str
    module: str
    version: str
    outputs: tuple[tuple[str, str], ...]
    cgo: bool = False
    tags: str = ""
    ldflags: str = "-s -w"
    #: Build in a copy of tools/kubernetes (the local cluster's pin) instead of the module itself.
    in_kubernetes_pin: bool = False

    def key(self, go_version: tuple[int, int]) -> str:
        """key() names the cache entry: '<name>-<version>-<hash of the recipe>'."""
        digest = hashlib.sha256(json.dumps([self.module, self.outputs, self.cgo, self.tags, self.ldflags, go_version]).encode())
        if self.in_kubernetes_pin:
            for name in ("go.mod", "go.sum"):
                digest.update((TOOLS_DIR / "kubernetes" / name).read_bytes())
        return f"{self.name}-{self.version}-{digest.hexdigest()[:12]}"


def _kubernetes(name: str) -> GoBuild:
    program = Program(name, "kubernetes", _K8S, f"{_K8S}/cmd/{name}", True)
    return GoBuild(name, _K8S, program.version(), ((name, program.package),), ldflags=program.ldflags(), in_kubernetes_pin=True)


TEKTON_COMMANDS = ("controller", "webhook", "events", "resolvers", "entrypoint", "nop", "workingdirinit", "sidecarlogresults")


def builds() -> dict[str, GoBuild]:
    """builds() are every GoBuild of the offline kind images, by name, in build order (small first)."""
    from harness.cluster import tekton  # the pinned Tekton version lives in tools/tekton/go.mod

    items = [
        GoBuild("kind", "sigs.k8s.io/kind", "v0.33.0", (("kind", "."),)),
        GoBuild(
            "cni-plugins",
            "github.com/containernetworking/plugins",
            "v1.9.1",
            tuple((p.rsplit("/", 1)[1], f"./plugins/{p}") for p in ("ipam/host-local", "main/loopback", "main/ptp", "main/bridge", "meta/portmap")),
        ),
        GoBuild("runc", "github.com/opencontainers/runc", "v1.4.3", (("runc", "."),), cgo=True, tags="seccomp"),
        GoBuild(
            "containerd",
            "github.com/containerd/containerd/v2",
            "v2.3.4",
            (("containerd", "./cmd/containerd"), ("containerd-shim-runc-v2", "./cmd/containerd-shim-runc-v2"), ("ctr", "./cmd/ctr")),
            tags="no_aufs no_zfs no_btrfs no_devmapper",
        ),
        GoBuild("crictl", "sigs.k8s.io/cri-tools", "v1.36.0", (("crictl", "./cmd/crictl"),)),
        _kubernetes("kube-proxy"),
        _kubernetes("kubeadm"),
        _kubernetes("kubelet"),
        GoBuild("coredns", "github.com/coredns/coredns", "v1.14.6", (("coredns", "."),)),
        GoBuild("tekton", "github.com/tektoncd/pipeline", tekton.version(), tuple((c, f"./cmd/{c}") for c in TEKTON_COMMANDS)),
    ]
    return {b.name: b for b in items}


@dataclass
class GoBuilder:
    """GoBuilder builds (or finds in the cache) the binaries of a GoBuild and says how it goes, one line per step."""

    out: TextIO = sys.stderr
    go: str = field(default="", init=False)
    go_version: tuple[int, int] = field(default=(0, 0), init=False)

    def __post_init__(self) -> None:
        self.go, self.go_version = find_go()

    def directory(self, build: GoBuild) -> Path:
        return cache_root() / "kind-images" / "bin" / build.key(self.go_version)

    def ensure(self, build: GoBuild) -> Path:
        """ensure() is the directory holding the build's binaries, building it first if it is not cached."""
        final = self.directory(build)
        if final.is_dir():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        for stale in final.parent.glob(f".{final.name}.partial-*"):
            shutil.rmtree(stale, ignore_errors=True)
        partial = final.with_name(f".{final.name}.partial-{os.getpid()}")
        partial.mkdir()
        log_path = final.parent / f"{build.name}.log"
        started = time.monotonic()
        self._say(f"{build.name} {build.version}: building {len(build.outputs)} binar{'y' if len(build.outputs) == 1 else 'ies'} (log: {log_path})")
        with log_path.open("w") as log, tempfile.TemporaryDirectory(prefix=f"rescon-{build.name}-") as scratch:
            cwd = self._workdir(build, Path(scratch), log)
            for output, package in build.outputs:
                command = ["nice", "-n", "19", self.go, "build", "-trimpath", "-ldflags", build.ldflags, "-o", str(partial / output)]
                if build.tags:
                    command += ["-tags", build.tags]
                env = {**os.environ, "CGO_ENABLED": "1" if build.cgo else "0", "GOFLAGS": "-buildvcs=false" + (" -mod=mod" if build.in_kubernetes_pin else "")}
                log.write(f"$ (cd {cwd} && {' '.join(command)} {package})\n")
                log.flush()
                process = subprocess.Popen([*command, package], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
                code = _wait_with_heartbeat(process, lambda: self._say(f"{build.name}: still building {output}, {_format_elapsed(time.monotonic() - started)}"))
                if code != 0:
                    shutil.rmtree(partial, ignore_errors=True)
                    raise HarnessError(f"building {output} of {build.module}@{build.version} failed (exit {code}): read {log_path}", detail=_tail(log_path, 20))
        partial.rename(final)
        self._say(f"{build.name} {build.version}: done in {_format_elapsed(time.monotonic() - started)} -> {final}")
        return final

    def _workdir(self, build: GoBuild, scratch: Path, log: TextIO) -> Path:
        if build.in_kubernetes_pin:
            for name in ("go.mod", "go.sum"):
                shutil.copy(TOOLS_DIR / "kubernetes" / name, scratch / name)
            return scratch
        try:
            out = subprocess.run(
                [self.go, "mod", "download", "-json", f"{build.module}@{build.version}"], capture_output=True, text=True, timeout=900, check=True, cwd=scratch
            ).stdout
        except subprocess.CalledProcessError as err:
            raise HarnessError(f"cannot download {build.module}@{build.version} into the Go module cache ({err.stderr.strip()[-200:]}): check GOPROXY") from err
        return Path(json.loads(out)["Dir"])

    def _say(self, line: str) -> None:
        print(f"kind-images: {line}", file=self.out, flush=True)
