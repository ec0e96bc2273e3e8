"""Thin helpers over the official kubernetes client: clients from a kubeconfig, server-side apply.

Nothing here decides anything; it only turns manifests into API calls, so that
providers and scenarios share one way of talking to a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import kubernetes
import urllib3
from kubernetes.client import ApiClient
from kubernetes.dynamic import DynamicClient

from harness.errors import HarnessError

#: The field manager every harness write uses, so server-side apply conflicts name us.
FIELD_MANAGER = "rescon-harness"


@dataclass
class Kube:
    """Kube bundles the clients of one cluster, made once from a kubeconfig."""

    api: ApiClient
    kubeconfig: Path
    context: str | None = None

    @classmethod
    def connect(cls, kubeconfig: Path, context: str | None = None, *, qps_timeout: float = 10.0) -> Kube:
        """connect() loads a kubeconfig; it fails with one line if the file is missing or unusable."""
        if not kubeconfig.is_file():
            raise HarnessError(f"kubeconfig {kubeconfig} does not exist: pass --kubeconfig with a valid file")
        configuration = kubernetes.client.Configuration()
        try:
            kubernetes.config.load_kube_config(
                config_file=str(kubeconfig), context=context, client_configuration=configuration
            )
        except (kubernetes.config.ConfigException, ValueError, OSError) as err:
            raise HarnessError(f"cannot use kubeconfig {kubeconfig} (context {context or 'current'}): {err}") from err
        configuration.retries = urllib3.Retry(total=2, connect=2, read=0, backoff_factor=0.2)
        return cls(ApiClient(configuration), kubeconfig, context)

    @property
    def core(self) -> kubernetes.client.CoreV1Api:
        return kubernetes.client.CoreV1Api(self.api)

    @property
    def custom(self) -> kubernetes.client.CustomObjectsApi:
        return kubernetes.client.CustomObjectsApi(self.api)

    @property
    def dynamic(self) -> DynamicClient:
        if not hasattr(self, "_dynamic"):
            self._dynamic = DynamicClient(self.api)
        return self._dynamic

    def apply(self, manifest: Mapping[str, Any], *, namespace: str | None = None) -> Any:
        """apply() server-side-applies one manifest (force: the harness owns what it applies)."""
        body = dict(manifest)
        resource = self.dynamic.resources.get(api_version=body["apiVersion"], kind=body["kind"])
        ns = namespace or body.get("metadata", {}).get("namespace")
        if resource.namespaced and ns is None:
            raise HarnessError(f"{body['kind']} {body['metadata'].get('name')} needs a namespace")
        return resource.server_side_apply(
            body=body,
            name=body["metadata"]["name"],
            namespace=ns if resource.namespaced else None,
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
        )

    def apply_all(self, manifests: Iterable[Mapping[str, Any]], *, namespace: str | None = None) -> None:
        for manifest in manifests:
            self.apply(manifest, namespace=namespace)

    def server_version(self) -> str:
        info = kubernetes.client.VersionApi(self.api).get_code()
        return str(info.git_version)

    def close(self) -> None:
        self.api.close()
