"""The kind provider's command-line options, as a pytest plugin of their own (entry point `rescon-kind`).

    --kind-node-image auto|stock|offline|IMAGE   which node image (default auto; see harness.cluster.kind)
    --kind-name NAME                             the kind cluster's name (default rescon)
    --tekton-manifest URL_OR_PATH                install Tekton from this manifest instead of the pinned module
    --tekton-manifest-sha256 HEX                 its sha256; a manifest that does not match is refused

They are stored in harness.cluster.kind.SESSION_OPTIONS, which KindProvider.from_options reads.
"""

from __future__ import annotations

import pytest

from harness.cluster import kind


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rescon-kind", "reservation-conformance on kind")
    group.addoption("--kind-node-image", default="auto", help="auto (default), stock, offline, or an image name")
    group.addoption("--kind-name", default=kind.DEFAULT_NAME, help=f"the kind cluster's name (default {kind.DEFAULT_NAME})")
    group.addoption("--tekton-manifest", default=None, help="install Tekton from this release manifest (URL or path), not the pinned module")
    group.addoption("--tekton-manifest-sha256", default=None, help="the sha256 --tekton-manifest must have")


def pytest_configure(config: pytest.Config) -> None:
    kind.SESSION_OPTIONS.update(
        node_image=config.getoption("--kind-node-image"),
        name=config.getoption("--kind-name"),
        tekton_manifest=config.getoption("--tekton-manifest"),
        tekton_manifest_sha256=config.getoption("--tekton-manifest-sha256"),
    )
