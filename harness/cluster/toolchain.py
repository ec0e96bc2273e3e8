"""The local cluster's toolchain: upstream programs built from pinned Go modules.

Each program is built once into a per-user cache directory keyed by its
upstream version and a hash of the recipe (the pinning module's go.mod/go.sum,
the package, the link flags, the Go version), so a fresh clone or a CI run on
the same machine reuses it and a changed pin never reuses a stale binary.

A binary is written under a temporary name and renamed into place only after it
built and answered `--version`: a half-written cache entry is never trusted.
Programs are linked one at a time because a Kubernetes link needs several GiB.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, TextIO

from harness.cluster.paths import SUITE_ROOT, cache_root
from harness.errors import HarnessError

#: The Go modules that pin the programs: tools/ of the checkout, or of the installed wheel's bundle.
TOOLS_DIR = SUITE_ROOT / "tools"

#: The oldest Go that builds every pinned module (their go.mod files say go 1.26.0).
MINIMUM_GO = (1, 26)

#: Heartbeat period of the progress line while one program builds.
PROGRESS_EVERY_SECONDS = 30.0

#: A cold build of one Kubernetes program on 2 cores takes 10-20 minutes; this bounds a hung one.
BUILD_TIMEOUT_SECONDS = 60 * 60


@dataclass(frozen=True)
class Program:
    """Program is one binary of the toolchain: which pinning module builds which package.

    Example: Program("kube-apiserver", "kubernetes", "k8s.io/kubernetes",
    "k8s.io/kubernetes/cmd/kube-apiserver") builds the package with the
    module version that tools/kubernetes/go.mod requires.
    """

    name: str
    module_dir: str
    upstream_module: str
    package: str
    stamp_kubernetes_version: bool = False
    #: The arguments that make the program print its version (or usage) and exit 0: its health check.
    probe_args: tuple[str, ...] = ("--version",)

    @property
    def module_path(self) -> Path:
        return TOOLS_DIR / self.module_dir

    def version(self) -> str:
        """version() reads the pinned upstream version from the pinning module's go.mod."""
        gomod_path = self.module_path / "go.mod"
        if not gomod_path.is_file():
            raise HarnessError(
                f"{gomod_path} is missing: install reservation-conformance from a wheel built from the repository "
                "(its build ships tools/), or run from a clone"
            )
        gomod = gomod_path.read_text()
        match = re.search(rf"^\s*(?:require\s+)?{re.escape(self.upstream_module)}\s+(v\S+)", gomod, re.M)
        if not match:
            raise HarnessError(f"{self.module_path}/go.mod does not require {self.upstream_module}: restore the pin")
        return match.group(1)

    def ldflags(self) -> str:
        flags = ["-s", "-w"]
        if self.stamp_kubernetes_version:
            version = self.version()
            major, minor = version.lstrip("v").split(".")[:2]
            # Tekton's controller refuses to start against an API server whose
            # /version is the unstamped "v0.0.0-master+$Format:%H$".
            for base in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
                flags += [
                    f"-X {base}.gitVersion={version}",
                    f"-X {base}.gitMajor={major}",
                    f"-X {base}.gitMinor={minor}",
                    f"-X {base}.gitTreeState=clean",
                ]
        return " ".join(flags)


_K8S = "k8s.io/kubernetes"

#: PROGRAMS in build order: small ones first, so an early failure is cheap.
PROGRAMS: tuple[Program, ...] = (
    Program("etcd", "etcd", "go.etcd.io/etcd/server/v3", "./etcd"),
    Program("kwok", "kwok", "sigs.k8s.io/kwok", "sigs.k8s.io/kwok/cmd/kwok"),
    Program("kwokctl", "kwok", "sigs.k8s.io/kwok", "sigs.k8s.io/kwok/cmd/kwokctl"),
    Program("kube-apiserver", "kubernetes", _K8S, f"{_K8S}/cmd/kube-apiserver", True),
    Program("kube-controller-manager", "kubernetes", _K8S, f"{_K8S}/cmd/kube-controller-manager", True),
    Program("kube-scheduler", "kubernetes", _K8S, f"{_K8S}/cmd/kube-scheduler", True),
    Program("kubectl", "kubernetes", _K8S, f"{_K8S}/cmd/kubectl", True, ("version", "--client")),
    # The controller has no version flag; -h prints its flags and exits 0 without contacting a cluster.
    Program(
        "tekton-controller",
        "tekton",
        "github.com/tektoncd/pipeline",
        "github.com/tektoncd/pipeline/cmd/controller",
        probe_args=("-h",),
    ),
    # Tekton's resolvers (upstream's five), with knative's fixed-port health probes off: see tools/tekton/resolvers.
    Program(
        "tekton-resolvers",
        "tekton",
        "github.com/tektoncd/pipeline",
        "rescon.dev/tools/tekton/resolvers",
        probe_args=("-h",),
    ),
    # kind's default storage: the provisioner behind the `standard` StorageClass (WaitForFirstConsumer).
    Program(
        "local-path-provisioner",
        "local-path-provisioner",
        "github.com/rancher/local-path-provisioner",
        "github.com/rancher/local-path-provisioner",
    ),
)


def find_go() -> tuple[str, tuple[int, int]]:
    """find_go() returns the go binary and its (major, minor), or fails naming the fix."""
    go = shutil.which("go")
    if go is None:
        raise HarnessError(
            f"'go' is not on PATH: install Go >= {MINIMUM_GO[0]}.{MINIMUM_GO[1]} (the local cluster builds its programs from source)"
        )
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60, check=True).stdout
    except (subprocess.SubprocessError, OSError) as err:
        raise HarnessError(f"'{go} env GOVERSION' failed ({err}): check the Go installation") from err
    return go, parse_go_version(out.strip())


def parse_go_version(text: str) -> tuple[int, int]:
    """parse_go_version('go1.26.8') == (1, 26); fails on a version older than MINIMUM_GO."""
    match = re.match(r"go(\d+)\.(\d+)", text)
    if not match:
        raise HarnessError(f"cannot read the Go version from {text!r}: install Go >= 1.26")
    found = (int(match.group(1)), int(match.group(2)))
    if found < MINIMUM_GO:
        raise HarnessError(
            f"Go {found[0]}.{found[1]} is too old: the pinned modules need Go >= {MINIMUM_GO[0]}.{MINIMUM_GO[1]}; install a newer Go"
        )
    return found


def recipe_key(program: Program, go_version: tuple[int, int]) -> str:
    """recipe_key() names a cache entry: '<version>-<hash of everything that shapes the binary>'."""
    version = program.version()  # first: it says what to do when the pinning module is missing
    digest = hashlib.sha256()
    for part in (program.package, program.ldflags(), f"go{go_version[0]}.{go_version[1]}"):
        digest.update(part.encode() + b"\0")
    for name in ("go.mod", "go.sum"):
        digest.update((program.module_path / name).read_bytes())
    for source in sorted(program.module_path.rglob("*.go")):
        digest.update(source.read_bytes())
    return f"{version}-{digest.hexdigest()[:12]}"


def binary_path(program: Program, go_version: tuple[int, int]) -> Path:
    return cache_root() / "bin" / f"{program.name}-{recipe_key(program, go_version)}" / program.name


def answers_version(path: Path, probe_args: tuple[str, ...]) -> bool:
    """answers_version() is the health check of a built binary: it runs and prints its version (or usage)."""
    try:
        result = subprocess.run([str(path), *probe_args], capture_output=True, timeout=60)
    except (subprocess.SubprocessError, OSError):
        return False
    return result.returncode == 0


class Toolchain:
    """Toolchain resolves (and builds when missing) every program of the local cluster."""

    def __init__(self, *, out: TextIO = sys.stderr) -> None:
        self.out = out
        self.go, self.go_version = find_go()

    def path(self, name: str) -> Path:
        """path('kube-apiserver') is where the cached binary lives (it may not exist yet)."""
        return binary_path(program_named(name), self.go_version)

    def missing(self) -> list[Program]:
        return [p for p in PROGRAMS if not self.path(p.name).is_file()]

    def ensure(self, names: Iterable[str] | None = None) -> dict[str, Path]:
        """ensure() builds whatever is missing and returns {program name: binary path}."""
        wanted = [program_named(n) for n in names] if names is not None else list(PROGRAMS)
        todo = [p for p in wanted if not self.path(p.name).is_file()]
        started = time.monotonic()
        for index, program in enumerate(todo, start=1):
            self._build(program, f"[{index}/{len(todo)}]")
        if todo:
            self._say(f"toolchain: built {len(todo)} program(s) in {_format_elapsed(time.monotonic() - started)}")
        return {p.name: self.path(p.name) for p in wanted}

    def _build(self, program: Program, counter: str) -> None:
        final = self.path(program.name)
        final.parent.mkdir(parents=True, exist_ok=True)
        partial = final.with_name(f".{program.name}.partial-{os.getpid()}")
        for stale in final.parent.glob(f".{program.name}.partial-*"):
            stale.unlink(missing_ok=True)
        label = f"{counter} {program.name} {program.version()}"
        command = [
            self.go, "build", "-trimpath", "-ldflags", program.ldflags(), "-o", str(partial), program.package,
        ]
        # buildvcs off: the pinning modules sit in this git checkout, and VCS stamps
        # would make the binary depend on unrelated commits.
        goflags = f"{os.environ.get('GOFLAGS', '')} -mod=readonly -buildvcs=false".strip()
        env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": goflags}
        log_path = final.parent / "build.log"
        self._say(f"{label}: building (log: {log_path})")
        started = time.monotonic()
        with log_path.open("w") as log:
            process = subprocess.Popen(command, cwd=program.module_path, env=env, stdout=log, stderr=subprocess.STDOUT)
            returncode = _wait_with_heartbeat(
                process, lambda: self._say(f"{label}: still building, {_format_elapsed(time.monotonic() - started)}")
            )
        elapsed = _format_elapsed(time.monotonic() - started)
        if returncode != 0:
            partial.unlink(missing_ok=True)
            tail = _tail(log_path, 20)
            raise HarnessError(
                f"building {program.name} failed after {elapsed} (exit {returncode}): read {log_path}, fix it, and run 'make tools' again",
                detail=tail,
            )
        if not answers_version(partial, program.probe_args):
            partial.unlink(missing_ok=True)
            probe = " ".join(program.probe_args)
            raise HarnessError(f"the freshly built {program.name} fails '{probe}': read {log_path}")
        partial.rename(final)
        self._say(f"{label}: done in {elapsed} -> {final}")

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def program_named(name: str) -> Program:
    for program in PROGRAMS:
        if program.name == name:
            return program
    raise HarnessError(f"unknown program {name!r}: choose one of {', '.join(p.name for p in PROGRAMS)}")


def _wait_with_heartbeat(process: subprocess.Popen[bytes], heartbeat: Callable[[], None]) -> int:
    """Wait for process, calling heartbeat every PROGRESS_EVERY_SECONDS; kill it at BUILD_TIMEOUT_SECONDS."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(PROGRESS_EVERY_SECONDS):
            heartbeat()

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        return process.wait(timeout=BUILD_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise HarnessError(
            f"a build ran longer than {BUILD_TIMEOUT_SECONDS // 60} minutes and was stopped: check memory and the Go module proxy"
        ) from None
    finally:
        done.set()
        thread.join()


def _format_elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
