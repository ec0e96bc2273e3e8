"""Tekton Pipelines from its published release manifest, pinned by URL and sha256 (kind; install hint for existing).

The local cluster runs Tekton from the pinned Go module; kind runs the real
Deployments from `release.yaml` of the same version. The file is fetched once
into the per-user cache and checked against RELEASE_SHA256 every time it is
used: a manifest that does not match is refused, never applied, so a moved tag
or a tampered download cannot change what the suite tests against.

The feature flags are the local cluster's (harness.cluster.tekton.feature_flags),
so a scenario sees the same Tekton behaviour on both providers.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterable

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
RELEASE_URL = f"https://github.com/tektoncd/pipeline/releases/download/{TEKTON_VERSION}/release.yaml"

#: PLACEHOLDER_SHA256 marks a digest nobody has filled in yet.
PLACEHOLDER_SHA256 = "0" * 64
#: The sha256 of RELEASE_URL's content. It is a PLACEHOLDER: the first time this runs with
#: network, the install refuses the download and prints its digest; compare that digest with
#: the one published for the release (or `sha256sum` of a copy fetched by other means),
#: then write it here. Fill it again whenever TEKTON_VERSION changes.
RELEASE_SHA256 = PLACEHOLDER_SHA256

Manifest = dict[str, Any]
Opener = Callable[..., Any]


def cached_release_path() -> Path:
    return cache_root() / "manifests" / f"tekton-pipeline-{TEKTON_VERSION}-release.yaml"


def verify(content: bytes, *, expected: str = RELEASE_SHA256, source: str = RELEASE_URL) -> None:
    """verify() refuses content whose sha256 is not `expected`, saying what to do about it."""
    actual = hashlib.sha256(content).hexdigest()
    if expected == PLACEHOLDER_SHA256:
        raise HarnessError(
            f"RELEASE_SHA256 in harness/cluster/tekton_release.py is still a placeholder; {source} has sha256 {actual}: "
            "check it against the published release and write it there"
        )
    if actual != expected:
        raise HarnessError(
            f"{source} has sha256 {actual}, not the pinned {expected}: refusing to install it "
            f"(delete {cached_release_path()} if it is a bad download; update RELEASE_SHA256 only for a new pin)"
        )


def fetch(*, timeouts: TimeoutConfig, expected: str = RELEASE_SHA256, url: str = RELEASE_URL, opener: Opener = urllib.request.urlopen) -> bytes:
    """fetch() returns the verified release manifest, from the cache or downloaded into it.

    Only verified content is cached, and it is written under a temporary
    name first, so the cache never holds a partial or unverified file.
    """
    cached = cached_release_path()
    if cached.is_file():
        content = cached.read_bytes()
        verify(content, expected=expected, source=str(cached))
        return content
    content = _download(url, timeouts=timeouts, opener=opener)
    verify(content, expected=expected, source=url)
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
        raise HarnessError(
            f"cannot download {url} ({err}): check the network, or put the file at {cached_release_path()}"
        ) from err


def release_manifests(content: bytes, *, coschedule: str) -> list[Manifest]:
    """release_manifests() are the release's objects in apply order, with the harness's feature flags.

    Namespaces first, then CRDs, then the rest in file order: each later
    object may live in, or be an instance of, an earlier one.
    """
    documents = [doc for doc in yaml.safe_load_all(content) if isinstance(doc, dict) and doc.get("kind")]
    flags = [doc for doc in documents if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "feature-flags"]
    if len(flags) != 1:
        raise HarnessError(f"the Tekton release has {len(flags)} feature-flags ConfigMaps, not 1: is RELEASE_URL a Tekton Pipelines release?")
    flags[0]["data"] = {**(flags[0].get("data") or {}), **tekton.feature_flags(coschedule)}

    def rank(doc: Manifest) -> int:
        return {"Namespace": 0, "CustomResourceDefinition": 1}.get(doc["kind"], 2)

    return sorted(documents, key=rank)  # sorted() is stable: file order within each rank


def deployments(manifests: Iterable[Manifest]) -> list[tuple[str, str]]:
    """deployments() are the (namespace, name) of every Deployment the release installs."""
    return [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in manifests if d["kind"] == "Deployment"]


def install(kube: Kube, manifests: list[Manifest], *, timeouts: TimeoutConfig) -> None:
    """install() applies the release and returns once its Deployments are Available and Tekton reconciles."""
    foundations = [m for m in manifests if m["kind"] in ("Namespace", "CustomResourceDefinition")]
    kube.apply_all(foundations)
    crds = [m["metadata"]["name"] for m in foundations if m["kind"] == "CustomResourceDefinition"]
    _wait_established(kube, crds, timeouts=timeouts)
    kube.apply_all(m for m in manifests if m["kind"] not in ("Namespace", "CustomResourceDefinition"))
    _wait_available(kube, deployments(manifests), timeouts=timeouts)
    tekton.wait_reconciles(kube, timeouts=timeouts, hint=f"kubectl -n {tekton.NAMESPACE} logs deploy/tekton-pipelines-controller")


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
        hint=f"kubectl -n {tekton.NAMESPACE} get pods (image pulls need network)",
    )
