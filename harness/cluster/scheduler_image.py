"""The reference scheduler's image, built with no registry, and its in-cluster deployment on kind.

reference_scheduler/deploy/Dockerfile starts from a registry's python image,
which cannot be pulled offline. This builds the same image another way: a
Debian bookworm rootfs with python3 (mmdebstrap, Debian's packages), the
project and its runtime dependencies installed into it by pip from this
checkout, a `tkn-scheduler` entry point, user 65532. It is tagged
`tkn-scheduler:dev`, the name reference_scheduler/deploy/deployment.yaml uses.

`deploy()` loads it into a kind cluster and applies rbac.yaml and
deployment.yaml unchanged, then waits for the rollout. The suite then runs
against it with `--scheduler external --scheduler-pod-selector
app.kubernetes.io/name=tkn-scheduler` (harness never imports the scheduler: it
only packages the checkout).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

import kubernetes
import yaml

from harness.cluster import node_image
from harness.cluster.paths import REPO_ROOT, cache_root, is_checkout
from harness.errors import HarnessError
from harness.kube import Kube, present
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

IMAGE = "tkn-scheduler:dev"
DEPLOY_DIR = REPO_ROOT / "reference_scheduler" / "deploy"
NAMESPACE = "tkn-scheduler"
POD_SELECTOR = "app.kubernetes.io/name=tkn-scheduler"
PACKAGES = ("python3", "ca-certificates")
#: The image's commands, as pip's console scripts would make them: the scheduler, and `rescon` (for the
#: in-cluster `rescon audit` of harness/audit/deploy/, which runs this image).
ENTRY_POINTS = {
    "tkn-scheduler": "#!/usr/bin/python3\nimport sys\nfrom reference_scheduler.main import main\nsys.exit(main())\n",
    "rescon": "#!/usr/bin/python3\nimport sys\nfrom harness.cli import main\nsys.exit(main())\n",
}


def source_key() -> str:
    """source_key() is 12 hex digits over the files the image packages (pyproject and both packages)."""
    digest = hashlib.sha256()
    files = [REPO_ROOT / "pyproject.toml", *sorted((REPO_ROOT / "reference_scheduler").rglob("*.py")), *sorted((REPO_ROOT / "harness").rglob("*.py"))]
    for path in files:
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes())
    return node_image.image_key([digest.hexdigest(), *PACKAGES])


def build(*, out: TextIO = sys.stderr, docker: str = "docker") -> str:
    """build() makes tkn-scheduler:dev from this checkout unless Docker has it from the same sources."""
    if not is_checkout():
        raise HarnessError(
            f"the reference scheduler's image is built from a clone of the repository, and {REPO_ROOT} is an installed copy: run this from a clone"
        )
    key = source_key()
    inspect = subprocess.run(
        [docker, "image", "inspect", "--format", f'{{{{index .Config.Labels "{node_image.KEY_LABEL}"}}}}', IMAGE], capture_output=True, text=True, timeout=60
    )
    if inspect.returncode == 0 and inspect.stdout.strip() == key:
        print(f"scheduler-image: {IMAGE} is current", file=out, flush=True)
        return IMAGE
    rootfs = cache_root() / "kind-images" / f"python-rootfs-{node_image.SUITE}-{node_image.image_key(PACKAGES)}.tar"
    if not rootfs.is_file():
        if shutil.which("mmdebstrap") is None:
            raise HarnessError("mmdebstrap is not on PATH: install Debian's mmdebstrap package to build the scheduler image offline")
        print("scheduler-image: [1/3] Debian rootfs with python3", file=out, flush=True)
        rootfs.parent.mkdir(parents=True, exist_ok=True)
        partial = rootfs.with_name(f".partial-{os.getpid()}-{rootfs.name}")
        _run(["nice", "-n", "19", "mmdebstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", node_image.SUITE, str(partial)], what="mmdebstrap")
        partial.rename(rootfs)
    with tempfile.TemporaryDirectory(prefix="rescon-scheduler-image-", dir=node_image.NodeImageBuilder._scratch_parent()) as scratch:
        root = Path(scratch) / "root"
        root.mkdir()
        _run(["tar", "-C", str(root), "-xf", str(rootfs)], what="unpacking the rootfs")
        print("scheduler-image: [2/3] the project and its dependencies (pip, from this checkout)", file=out, flush=True)
        site = root / "usr" / "lib" / "python3" / "dist-packages"
        _run(
            ["nice", "-n", "19", sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(site), str(REPO_ROOT)],
            what="pip install into the image",
        )
        for leftover in (site / "bin",):
            shutil.rmtree(leftover, ignore_errors=True)
        for command, script in ENTRY_POINTS.items():
            entry = root / "usr" / "local" / "bin" / command
            entry.parent.mkdir(parents=True, exist_ok=True)
            entry.write_text(script)
            entry.chmod(0o755)
        with (root / "etc" / "passwd").open("a") as passwd:
            passwd.write("scheduler:x:65532:65532:scheduler:/nonexistent:/usr/sbin/nologin\n")
        with (root / "etc" / "group").open("a") as group:
            group.write("scheduler:x:65532:\n")
        print(f"scheduler-image: [3/3] docker import {IMAGE}", file=out, flush=True)
        changes = [
            "ENV PYTHONDONTWRITEBYTECODE=1",
            "ENV PYTHONUNBUFFERED=1",
            "USER 65532:65532",
            "EXPOSE 10260",
            'ENTRYPOINT ["tkn-scheduler"]',
            'CMD ["--bind-address=0.0.0.0", "--lease-namespace=tkn-scheduler"]',
            f"LABEL {node_image.KEY_LABEL}={key}",
        ]
        argv = [docker, "import"]
        for change in changes:
            argv += ["--change", change]
        tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        result = subprocess.run([*argv, "-", IMAGE], stdin=tar.stdout, capture_output=True, text=True, timeout=1800)
        tar.wait()
        if result.returncode != 0:
            raise HarnessError(f"docker import {IMAGE} failed ({result.stderr.strip()[-200:]}): is docker running?")
    return IMAGE


def manifests() -> list[dict[str, Any]]:
    """manifests() are rbac.yaml then deployment.yaml, unchanged."""
    documents: list[dict[str, Any]] = []
    for name in ("rbac.yaml", "deployment.yaml"):
        documents += [d for d in yaml.safe_load_all((DEPLOY_DIR / name).read_text()) if isinstance(d, dict) and d.get("kind")]
    return documents


def deploy(kube: Kube, *, kind_bin: Path, cluster: str, timeouts: TimeoutConfig) -> None:
    """deploy() loads the image into the kind cluster, applies the deploy manifests and waits for the rollout."""
    from harness.contract.install import install_crd

    _run([str(kind_bin), "load", "docker-image", "--name", cluster, IMAGE], what="kind load docker-image")
    install_crd(kube, timeouts=timeouts)  # the scheduler's record informer needs the CRD
    kube.apply_all(manifests())
    apps = kubernetes.client.AppsV1Api(kube.api)

    def rolled_out() -> None:
        status = present(apps.read_namespaced_deployment("tkn-scheduler", NAMESPACE).status)
        if (status.ready_replicas or 0) < 2 or (status.updated_replicas or 0) < 2:
            raise NotYet(f"deployment tkn-scheduler has {status.ready_replicas or 0} ready of 2")

    wait_for(rolled_out, what="the reference scheduler's Deployment", timeout="tekton_ready", timeouts=timeouts, hint=f"kubectl -n {NAMESPACE} get pods")


def _run(argv: list[str], *, what: str) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise HarnessError(f"{what} failed ({reason}): the scheduler image cannot be built or loaded; fix that and retry")
    return result.stdout
