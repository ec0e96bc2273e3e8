"""Tekton Pipelines' in-cluster install for kind: rendered from the pinned module, or a release manifest the user pins.

Default: the pinned module's own `config/` directory (the one the local cluster
reads, in the Go module cache), with every `ko://github.com/tektoncd/pipeline/cmd/<x>`
reference replaced by the locally built image of that command
(harness.cluster.node_image.tekton_image) and the "devel" version labels by the
version. Nothing is downloaded and no digest is needed: the module's content
is already checked by the Go module cache against go.sum.

Option: `--tekton-manifest URL_OR_PATH --tekton-manifest-sha256 HEX`, e.g.
Tekton's published `release.yaml` for an online cluster. The file is read (or
downloaded once into the per-user cache, keyed by its digest) and refused unless
its sha256 is the one given: a moved tag or a tampered download cannot change what
the suite tests against.

Either way the feature flags are the local cluster's (harness.cluster.tekton.feature_flags),
so a scenario sees the same Tekton behaviour on every provider, and so are the
controller's API client limits (harness.cluster.tekton.CONTROLLER_CLIENT_FLAGS).
"""

from __future__ import annotations

import hashlib
import os
import re
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import kubernetes
import yaml

from harness.cluster import tekton
from harness.cluster.paths import cache_root
from harness.errors import HarnessError
from harness.kube import Kube, present
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

#: The Tekton Pipelines release; it must equal the version tools/tekton/go.mod pins (a unit test checks).
TEKTON_VERSION = "v1.15.0"
#: Where Tekton publishes that release's manifest (for docs and --tekton-manifest; its digest is the user's to pin).
RELEASE_URL = f"https://github.com/tektoncd/pipeline/releases/download/{TEKTON_VERSION}/release.yaml"

KO_PREFIX = "ko://github.com/tektoncd/pipeline/cmd/"
#: The controller's flag naming the image that writes step scripts; upstream's default is a digest
#: reference to a registry image, so the render points it at the steps' busybox.
SHELL_IMAGE_FLAG = "-shell-image"

Manifest = dict[str, Any]
Opener = Callable[..., Any]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


# --- the pinned module's config/, rendered ---


def module_documents(config_dir: Path) -> list[tuple[str, Manifest]]:
    """module_documents() are (relative path, object) for every manifest under config/, in path order."""
    found = []
    for path in sorted(config_dir.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind"):
                found.append((str(path.relative_to(config_dir)), doc))
    return found


def render_module(
    documents: Iterable[Manifest], *, images: Mapping[str, str], shell_image: str, version: str, coschedule: str
) -> list[Manifest]:
    """render_module() turns the module's config/ objects into an installable release.

    Example: `image: ko://github.com/tektoncd/pipeline/cmd/controller` becomes
    `image: <images['controller']>`; `app.kubernetes.io/version: devel` becomes the version.
    A ko:// reference with no image in `images` is an error naming the command.
    """
    missing: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: walk(value) for key, value in node.items()}
        if isinstance(node, list):
            rendered = [walk(item) for item in node]
            for index, item in enumerate(rendered[:-1]):
                if item == SHELL_IMAGE_FLAG:
                    rendered[index + 1] = shell_image
            return rendered
        if isinstance(node, str):
            if node.startswith(KO_PREFIX):
                command = node.removeprefix(KO_PREFIX)
                if command not in images:
                    missing.add(command)
                    return node
                return images[command]
            if node == "devel":
                return version
        return node

    rendered = [walk(doc) for doc in documents]
    if missing:
        raise HarnessError(f"the Tekton module's config/ names commands with no local image: {', '.join(sorted(missing))}")
    source = "the pinned Tekton module's config/"
    return with_controller_client_flags(with_feature_flags(rendered, coschedule=coschedule, source=source), source=source)


# --- a release manifest the user pins ---


def cached_manifest_path(sha256: str) -> Path:
    return cache_root() / "manifests" / f"tekton-{sha256[:16]}.yaml"


def verify(content: bytes, *, expected: str, source: str) -> None:
    """verify() refuses content whose sha256 is not `expected`, in one line naming the fix."""
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        raise HarnessError(
            f"{source} has sha256 {actual}, not {expected} (--tekton-manifest-sha256): "
            "pass the digest published with that manifest, or drop --tekton-manifest to install Tekton from the pinned module"
        )


def check_sha256(text: str | None, *, manifest: str) -> str:
    """check_sha256() is the lower-case digest, or a one-line error when it is missing or malformed."""
    if not text:
        raise HarnessError(f"--tekton-manifest {manifest} needs --tekton-manifest-sha256 HEX: pass the manifest's sha256 (sha256sum prints it)")
    digest = text.strip().lower()
    if not _SHA256.match(digest):
        raise HarnessError(f"--tekton-manifest-sha256 {text!r} is not 64 hex digits: pass the manifest's sha256 (sha256sum prints it)")
    return digest


def fetch(source: str, sha256: str, *, timeouts: TimeoutConfig, opener: Opener = urllib.request.urlopen) -> bytes:
    """fetch() is the verified manifest: a local file, or a URL downloaded once into the cache.

    Only verified content is cached, written under a temporary name first, so the
    cache never holds a partial or unverified file.
    """
    if "://" not in source:
        path = Path(source).expanduser()
        if not path.is_file():
            raise HarnessError(f"--tekton-manifest {source} is not a file: pass a path or an https:// URL")
        content = path.read_bytes()
        verify(content, expected=sha256, source=source)
        return content
    cached = cached_manifest_path(sha256)
    if cached.is_file():
        content = cached.read_bytes()
        verify(content, expected=sha256, source=str(cached))
        return content
    content = _download(source, timeouts=timeouts, opener=opener)
    verify(content, expected=sha256, source=source)
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f".{cached.name}.partial-{os.getpid()}")
    partial.write_bytes(content)
    partial.rename(cached)
    return content


def _download(url: str, *, timeouts: TimeoutConfig, opener: Opener) -> bytes:
    try:
        with opener(url, timeout=timeouts.manifest_download) as response:
            return bytes(response.read())
    except OSError as err:  # URLError, timeouts and refused connections are all OSErrors
        raise HarnessError(f"cannot download {url} ({err}): check the network, or pass a local copy as --tekton-manifest PATH") from err


def release_manifests(content: bytes, *, coschedule: str) -> list[Manifest]:
    """release_manifests() are a release file's objects in apply order, with the harness's feature flags."""
    documents = [doc for doc in yaml.safe_load_all(content) if isinstance(doc, dict) and doc.get("kind")]
    source = "the --tekton-manifest file"
    return with_controller_client_flags(with_feature_flags(documents, coschedule=coschedule, source=source), source=source)


def with_feature_flags(documents: list[Manifest], *, coschedule: str, source: str) -> list[Manifest]:
    """with_feature_flags() sets the harness's flags and sorts: Namespaces, then CRDs, then the rest in order."""
    flags = [doc for doc in documents if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "feature-flags"]
    if len(flags) != 1:
        raise HarnessError(f"{source} has {len(flags)} feature-flags ConfigMaps, not 1: is it Tekton Pipelines?")
    # kind keeps "false" for injected sidecars until a kind run with Tekton's default ("true": each first step
    # waits for Tekton's readiness annotation) is measured; the local cluster runs Tekton's default.
    flags[0]["data"] = {**(flags[0].get("data") or {}), **tekton.feature_flags(coschedule, injected_sidecars=False)}

    def rank(doc: Manifest) -> int:
        return {"Namespace": 0, "CustomResourceDefinition": 1}.get(doc["kind"], 2)

    return sorted(documents, key=rank)  # sorted() is stable: file order within each rank


#: The Deployment, and its container, that runs Tekton's controller in a release.
CONTROLLER_DEPLOYMENT = "tekton-pipelines-controller"


def with_controller_client_flags(documents: list[Manifest], *, source: str) -> list[Manifest]:
    """with_controller_client_flags() gives the controller's container the local cluster's API client limits.

    Example: args ["-entrypoint-image", "e"] become ["-entrypoint-image", "e", "-kube-api-qps", "50",
    "-kube-api-burst", "50"] (harness.cluster.tekton.CONTROLLER_CLIENT_FLAGS). A flag the release already
    sets, as an argument or its environment variable (KUBE_API_QPS), keeps the release's value.
    """
    controllers = [
        container
        for doc in documents
        if doc["kind"] == "Deployment" and doc["metadata"]["name"] == CONTROLLER_DEPLOYMENT
        for container in doc["spec"]["template"]["spec"].get("containers") or []
        if container.get("name") == CONTROLLER_DEPLOYMENT
    ]
    if len(controllers) != 1:
        raise HarnessError(f"{source} has {len(controllers)} {CONTROLLER_DEPLOYMENT} containers in a {CONTROLLER_DEPLOYMENT} Deployment, not 1: is it Tekton Pipelines?")
    container = controllers[0]
    args = list(container.get("args") or [])
    env = {variable.get("name") for variable in container.get("env") or []}
    flags = tekton.CONTROLLER_CLIENT_FLAGS
    for flag, value in zip(flags[::2], flags[1::2]):
        variable = flag.lstrip("-").upper().replace("-", "_")
        if variable in env or any(arg.lstrip("-").split("=")[0] == flag.lstrip("-") for arg in args):
            continue
        args += [flag, value]
    container["args"] = args
    return documents


def deployments(manifests: Iterable[Manifest]) -> list[tuple[str, str]]:
    """deployments() are the (namespace, name) of every Deployment the release installs."""
    return [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in manifests if d["kind"] == "Deployment"]


def install(kube: Kube, manifests: list[Manifest], *, timeouts: TimeoutConfig) -> None:
    """install() applies the release and returns once its Deployments are Available and Tekton reconciles."""
    foundations = [m for m in manifests if m["kind"] in ("Namespace", "CustomResourceDefinition")]
    kube.apply_all(foundations)
    crds = [m["metadata"]["name"] for m in foundations if m["kind"] == "CustomResourceDefinition"]
    _wait_established(kube, crds, timeouts=timeouts)
    _apply_once_webhooks_answer(kube, [m for m in manifests if m["kind"] not in ("Namespace", "CustomResourceDefinition")], timeouts=timeouts)
    _wait_available(kube, deployments(manifests), timeouts=timeouts)
    tekton.wait_reconciles(kube, timeouts=timeouts, hint=f"kubectl -n {tekton.NAMESPACE} logs deploy/tekton-pipelines-controller")


def webhook_not_serving(status: int, body: str) -> bool:
    """webhook_not_serving(500, body) is true when the API server refused a write because an admission webhook did not answer."""
    return status == 500 and "failed calling webhook" in body


def _apply_once_webhooks_answer(kube: Kube, manifests: list[Manifest], *, timeouts: TimeoutConfig) -> None:
    """_apply_once_webhooks_answer() applies the release, again while Tekton's webhook does not answer yet.

    A kept cluster keeps Tekton's webhook configurations across a restart of its
    nodes (a Docker daemon restarted), while the webhook's pod starts again: until
    it serves, the API server refuses every ConfigMap and CRD object it validates.
    Server-side apply is idempotent, so the whole release is applied again.
    """

    def applied() -> None:
        try:
            kube.apply_all(manifests)
        except kubernetes.dynamic.exceptions.DynamicApiError as err:
            if webhook_not_serving(int(err.status or 0), str(err.body or "")):
                raise NotYet(f"Tekton's webhook does not answer yet ({_first_cause(str(err.body))})") from err
            raise

    wait_for(
        applied,
        what="Tekton's release applied (its webhook answering)",
        timeout="tekton_ready",
        timeouts=timeouts,
        hint=f"kubectl -n {tekton.NAMESPACE} get pods -l app.kubernetes.io/component=webhook",
    )


def _first_cause(body: str) -> str:
    match = re.search(r'failed calling webhook \\?"([^"\\]+)', body)
    return f"webhook {match.group(1)}" if match else body[:160]


def _wait_established(kube: Kube, names: list[str], *, timeouts: TimeoutConfig) -> None:
    ext = kubernetes.client.ApiextensionsV1Api(kube.api)

    def established() -> None:
        for name in names:
            conditions = {c.type: c.status for c in (present(ext.read_custom_resource_definition(name).status).conditions or [])}
            if conditions.get("Established") != "True":
                raise NotYet(f"CRD {name} is not Established yet")

    wait_for(established, what="Tekton's CRDs", timeout="crd_established", timeouts=timeouts)


def _wait_available(kube: Kube, names: list[tuple[str, str]], *, timeouts: TimeoutConfig) -> None:
    apps = kubernetes.client.AppsV1Api(kube.api)

    def available() -> None:
        for namespace, name in names:
            status = present(apps.read_namespaced_deployment(name, namespace).status)
            conditions = {c.type: c.status for c in (status.conditions or [])}
            if conditions.get("Available") != "True":
                raise NotYet(f"Deployment {namespace}/{name} is not Available ({status.ready_replicas or 0} ready)")

    wait_for(
        available,
        what="Tekton's Deployments",
        timeout="tekton_ready",
        timeouts=timeouts,
        hint=f"kubectl -n {tekton.NAMESPACE} get pods (a stock node image pulls Tekton's images: it needs network)",
    )
