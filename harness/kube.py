"""Thin helpers over the official kubernetes client: clients from a kubeconfig, server-side apply.

Nothing here decides anything; it only turns manifests into API calls, so that
providers and scenarios share one way of talking to a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypeVar, cast

import kubernetes
import urllib3
from kubernetes.client import ApiClient
from kubernetes.dynamic import DynamicClient

from harness.errors import HarnessError
from harness.waits import NotYet

#: The field manager every harness write uses, so server-side apply conflicts name us.
FIELD_MANAGER = "rescon-harness"

#: How many times a request is tried when the connection fails (a restarting API server drops a few).
CONNECT_ATTEMPTS = 3

_T = TypeVar("_T")


def present(value: _T | None) -> _T:
    """present(pod.status) is pod.status typed without None.

    For what the API server always sends but the generated client declares optional:
    an object's metadata, spec and status, its name, a node's allocatable.
    """
    assert value is not None, "the API server left out a field it always sends"
    return value


def json_object(answer: object) -> dict[str, Any]:
    """json_object(kube.custom.get_namespaced_custom_object(...)) is the answer as the JSON object it is.

    The generated CustomObjectsApi declares its answers `object`; they are decoded JSON objects.
    """
    return cast(dict[str, Any], answer)


def namespaced(obj: Mapping[str, Any]) -> tuple[str, str]:
    """namespaced() is an object's (namespace, name), as the API keys a namespaced object."""
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def decoded(response: Any) -> dict[str, Any]:
    """decoded(kube.core.read_node(name, _preload_content=False)) is the raw answer's JSON object, as the API sent it.

    The typed models drop fields they do not know; a raw read keeps every one.
    """
    import json

    return cast(dict[str, Any], json.loads(response.data))


def as_plain_watch(list_fn: Callable[..., Any]) -> Callable[..., Any]:
    """as_plain_watch(core.list_pod_for_all_namespaces) is list_fn as kubernetes.watch.Watch().stream hands its events over plainly.

    Watch reads a model type from the function it is given and builds that
    model for every event (for custom objects it encodes and decodes the
    JSON again), though our watchers read only `raw_object`; it reads no
    type from this wrapper, so each event is decoded once, as it came.
    Building V1Pods took a third of each pytest worker's CPU in `make e2e`.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return list_fn(*args, **kwargs)

    return call


def _transport_reason(err: BaseException) -> str:
    """_transport_reason() is the innermost cause of a failed request: 'Connection refused', 'timed out'."""
    cause: BaseException = getattr(err, "reason", None) or err
    text = str(cause)
    for known in ("Connection refused", "timed out", "Name or service not known", "No route to host", "certificate verify failed"):
        if known in text:
            return known
    return f"{cause.__class__.__name__}: {text[:160]}"


@dataclass
class Kube:
    """Kube bundles the clients of one cluster, made once from a kubeconfig."""

    api: ApiClient
    kubeconfig: Path
    context: str | None = None

    @classmethod
    def connect(
        cls, kubeconfig: Path, context: str | None = None, *, qps_timeout: float = 10.0, reachable_within: float | None = None
    ) -> Kube:
        """connect() loads a kubeconfig; it fails with one line if the file is missing or unusable.

        With reachable_within=15, it also asks the API server for /version and
        fails within about 15 seconds, naming the server, if it cannot be reached
        or rejects the credentials. Without it nothing is sent (a cluster that is
        still starting is awaited by its provider instead).
        """
        if not kubeconfig.is_file():
            raise HarnessError(f"kubeconfig {kubeconfig} does not exist: pass --kubeconfig with a valid file")
        configuration = kubernetes.client.Configuration()
        try:
            kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=str(kubeconfig), context=context, client_configuration=configuration
            )
        except (kubernetes.config.ConfigException, ValueError, OSError) as err:
            raise HarnessError(f"cannot use kubeconfig {kubeconfig} (context {context or 'current'}): {err}") from err
        configuration.retries = urllib3.Retry(total=CONNECT_ATTEMPTS - 1, connect=CONNECT_ATTEMPTS - 1, read=0, backoff_factor=0.2)
        kube = cls(ApiClient(configuration), kubeconfig, context)
        if reachable_within is not None:
            kube.check_reachable(reachable_within)
        return kube

    def check_reachable(self, within: float) -> None:
        """check_reachable(15) GETs /version with every attempt bounded, so the whole check ends in about 15s."""
        server = self.api.configuration.host
        where = f"the API server {server} (kubeconfig {self.kubeconfig}, context {self.context or 'current'})"
        per_attempt = max(within / CONNECT_ATTEMPTS, 0.5)
        try:
            kubernetes.client.VersionApi(self.api).get_code(_request_timeout=(per_attempt, per_attempt))
        except kubernetes.client.ApiException as err:
            if err.status in (401, 403):
                raise HarnessError(f"{where} rejected our credentials ({err.status} {err.reason}): refresh the kubeconfig's user") from err
            raise HarnessError(f"{where} answered /version with {err.status} {err.reason}: check the server address") from err
        except (urllib3.exceptions.HTTPError, OSError) as err:
            reason = _transport_reason(err)
            raise HarnessError(f"cannot reach {where} within {within:g}s ({reason}): is the cluster running, and is that its address?") from err

    @property
    def core(self) -> kubernetes.client.CoreV1Api:
        return kubernetes.client.CoreV1Api(self.api)

    @property
    def custom(self) -> kubernetes.client.CustomObjectsApi:
        return kubernetes.client.CustomObjectsApi(self.api)

    @property
    def dynamic(self) -> DynamicClient:
        if not hasattr(self, "_dynamic"):
            self._dynamic = DynamicClient(self.api)  # type: ignore[no-untyped-call]
        return self._dynamic

    def apply(self, manifest: Mapping[str, Any], *, namespace: str | None = None) -> Any:
        """apply() server-side-applies one manifest (force: the harness owns what it applies)."""
        body = dict(manifest)
        resource = self.dynamic.resources.get(api_version=body["apiVersion"], kind=body["kind"])
        ns = namespace or body.get("metadata", {}).get("namespace")
        if resource.namespaced and ns is None:
            raise HarnessError(f"{body['kind']} {body['metadata'].get('name')} needs a namespace")
        if not resource.namespaced:
            body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "namespace"}
        return resource.server_side_apply(
            body=body,
            name=body["metadata"]["name"],
            namespace=ns if resource.namespaced else None,
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
        )

    def create(self, manifest: Mapping[str, Any], *, namespace: str) -> dict[str, Any]:
        """create() creates one namespaced manifest as `kubectl create` does, and returns the object the server stored.

        For manifests with `metadata.generateName` (what `tkn pipeline start` and Tekton
        Triggers create), which server-side apply cannot take: the server picks the name.
        """
        resource = self.dynamic.resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"])
        created = resource.create(body=dict(manifest), namespace=namespace)
        return dict(created.to_dict())

    def delete(self, manifest: Mapping[str, Any], *, namespace: str | None = None) -> None:
        """delete() removes the object a manifest names; an object already gone is fine."""
        resource = self.dynamic.resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"])
        ns = namespace or manifest.get("metadata", {}).get("namespace")
        try:
            resource.delete(name=manifest["metadata"]["name"], namespace=ns if resource.namespaced else None)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
        except kubernetes.dynamic.exceptions.NotFoundError:
            pass

    def is_namespaced(self, manifest: Mapping[str, Any]) -> bool:
        return bool(self.dynamic.resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"]).namespaced)

    def apply_all(self, manifests: Iterable[Mapping[str, Any]], *, namespace: str | None = None) -> None:
        for manifest in manifests:
            self.apply(manifest, namespace=namespace)

    def server_version(self) -> str:
        info = kubernetes.client.VersionApi(self.api).get_code()
        return str(info.git_version)

    def close(self) -> None:
        self.api.close()  # type: ignore[no-untyped-call]


def api_ready(kube: Kube) -> None:
    """api_ready() returns when the API server's /readyz answers 200; otherwise NotYet says what it answered.

    A starting API server answers 403 to every path until its authorizer has synced:
    inside a wait that is "not yet", never bad credentials.
    """
    try:
        method, url, headers, _body, _ = kube.api.param_serialize("GET", "/readyz", auth_settings=["BearerToken"])
        response = kube.api.call_api(method, url, header_params=headers, _request_timeout=5)
        if response.status != 200:
            raise NotYet(f"/readyz answered {response.status}")
    except NotYet:
        raise
    except Exception as err:  # any transport or HTTP error means: not ready yet
        raise NotYet(f"/readyz: {err.__class__.__name__}: {str(err)[:120]}") from err
