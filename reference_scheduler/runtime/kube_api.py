"""KubeApi: the scheduler's API calls, sent as kubernetes.client's generated API classes send them, without those classes.

The scheduler reads and writes raw JSON; it never wants the generated models. But the generated
classes cost it CPU all the same: importing CoreV1Api (over 400 methods, each wrapped by pydantic's
validate_call) and CustomObjectsApi took about 0.6 s of a 1.1 s start, the first call of each method
builds its pydantic validator, and every call validates its arguments (and a V1Binding or a
CoreV1Event body is validated into a model before it is dumped back to JSON). At 300 pods that was
about 3 ms of CPU per bound pod, a third of what the scheduler spent.

KubeApi keeps each method's name, arguments and answer, and sends the very request the generated
method sends: the same method, path, query, Accept and Content-Type, the same JSON body, through the
same ApiClient (its configuration, authentication, REST client and token bucket: runtime/ratelimit.py),
raising the same ApiException for an answer outside 2xx. tests/unit/test_kube_api.py compares the two
request by request. The answer is the decoded JSON, or with ``_preload_content=False`` the raw urllib3
response (as the generated methods give it); where a generated core method would build a model, KubeApi
gives the JSON, which is all the scheduler ever read.

Example: ``KubeApi(api).create_namespaced_pod_binding('p', 'ns', binding, _preload_content=False)`` POSTs
``binding`` to /api/v1/namespaces/ns/pods/p/binding with ``Accept: application/json``.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes.client import ApiClient, ApiException

Obj = dict[str, Any]

#: The query parameters the scheduler's calls pass, by their Python name, in the generated methods' order.
QUERY_NAMES = {
    "allow_watch_bookmarks": "allowWatchBookmarks",
    "_continue": "continue",
    "field_selector": "fieldSelector",
    "label_selector": "labelSelector",
    "limit": "limit",
    "resource_version": "resourceVersion",
    "timeout_seconds": "timeoutSeconds",
    "watch": "watch",
}
#: The generated core methods' default Content-Type for a PATCH (the REST client sends a map as a
#: strategic merge patch under it, as it does for the generated methods).
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
CUSTOM = "/apis/{group}/{version}/namespaces/{namespace}/{plural}"


class KubeApi:
    """KubeApi(api_client) makes the scheduler's calls, named and answered as CoreV1Api, CustomObjectsApi,
    NodeV1Api and StorageV1Api name and answer them (see the module docstring)."""

    def __init__(self, api_client: ApiClient | None = None) -> None:
        # As the generated classes: no client given, the process-wide default one.
        self.api_client = api_client if api_client is not None else ApiClient.get_default()  # type: ignore[no-untyped-call]

    # --- lists and watches (the informers': runtime/informer.py raw_lister) ---

    def list_pod_for_all_namespaces(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/pods", {}, None, options)

    def list_node(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/nodes", {}, None, options)

    def list_namespace(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/namespaces", {}, None, options)

    def list_limit_range_for_all_namespaces(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/limitranges", {}, None, options)

    def list_persistent_volume_claim_for_all_namespaces(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/persistentvolumeclaims", {}, None, options)

    def list_persistent_volume(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/persistentvolumes", {}, None, options)

    def list_namespaced_config_map(self, namespace: str, **options: Any) -> Any:
        return self._call("GET", "/api/v1/namespaces/{namespace}/configmaps", {"namespace": namespace}, None, options)

    def list_runtime_class(self, **options: Any) -> Any:
        return self._call("GET", "/apis/node.k8s.io/v1/runtimeclasses", {}, None, options)

    def list_storage_class(self, **options: Any) -> Any:
        return self._call("GET", "/apis/storage.k8s.io/v1/storageclasses", {}, None, options)

    def list_cluster_custom_object(self, group: str, version: str, plural: str, **options: Any) -> Any:
        return self._call("GET", "/apis/{group}/{version}/{plural}", {"group": group, "version": version, "plural": plural}, None, options)

    # --- pods, events, claims ---

    def create_namespaced_pod_binding(self, name: str, namespace: str, body: Obj, **options: Any) -> Any:
        return self._call("POST", "/api/v1/namespaces/{namespace}/pods/{name}/binding", {"name": name, "namespace": namespace}, body, options)

    def patch_namespaced_pod_status(self, name: str, namespace: str, body: Obj, **options: Any) -> Any:
        path = "/api/v1/namespaces/{namespace}/pods/{name}/status"
        return self._call("PATCH", path, {"name": name, "namespace": namespace}, body, {"_content_type": JSON_PATCH, **options})

    def patch_namespaced_pod_resize(self, name: str, namespace: str, body: Obj, **options: Any) -> Any:
        path = "/api/v1/namespaces/{namespace}/pods/{name}/resize"
        return self._call("PATCH", path, {"name": name, "namespace": namespace}, body, {"_content_type": JSON_PATCH, **options})

    def create_namespaced_event(self, namespace: str, body: Obj, **options: Any) -> Any:
        return self._call("POST", "/api/v1/namespaces/{namespace}/events", {"namespace": namespace}, body, options)

    def read_namespaced_persistent_volume_claim(self, name: str, namespace: str, **options: Any) -> Any:
        path = "/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
        return self._call("GET", path, {"name": name, "namespace": namespace}, None, options)

    def patch_namespaced_persistent_volume_claim(self, name: str, namespace: str, body: Obj, **options: Any) -> Any:
        path = "/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
        return self._call("PATCH", path, {"name": name, "namespace": namespace}, body, {"_content_type": JSON_PATCH, **options})

    # --- custom objects (records, leases) ---

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, body: Obj, **options: Any) -> Any:
        return self._call("POST", CUSTOM, _custom(group, version, namespace, plural), body, options)

    def get_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, **options: Any) -> Any:
        return self._call("GET", CUSTOM + "/{name}", {**_custom(group, version, namespace, plural), "name": name}, None, options)

    def replace_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, body: Obj, **options: Any) -> Any:
        return self._call("PUT", CUSTOM + "/{name}", {**_custom(group, version, namespace, plural), "name": name}, body, options)

    def replace_namespaced_custom_object_status(
        self, group: str, version: str, namespace: str, plural: str, name: str, body: Obj, **options: Any
    ) -> Any:
        return self._call("PUT", CUSTOM + "/{name}/status", {**_custom(group, version, namespace, plural), "name": name}, body, options)

    def patch_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, body: Obj, **options: Any) -> Any:
        path_params = {**_custom(group, version, namespace, plural), "name": name}
        return self._call("PATCH", CUSTOM + "/{name}", path_params, body, {"_content_type": MERGE_PATCH, **options})

    # --- the one way every call goes ---

    def _call(self, method: str, path: str, path_params: dict[str, str], body: Obj | None, options: dict[str, Any]) -> Any:
        """_call() sends one request as the generated methods do (param_serialize, then call_api) and reads its answer."""
        options = dict(options)
        preload = options.pop("_preload_content", True)
        timeout = options.pop("_request_timeout", None)
        content_type = options.pop("_content_type", None)
        headers = {"Accept": "application/json"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        # The body is JSON already (dicts, lists, strings, numbers): param_serialize would only copy it
        # (sanitize_for_serialization) before the REST client encodes it, so it goes to call_api as it is.
        method, url, headers, _, post = self.api_client.param_serialize(
            method=method, resource_path=path, path_params=path_params, query_params=_query(options), header_params=headers,
            auth_settings=["BearerToken"],
        )
        response = self.api_client.call_api(method, url, headers, body, post, _request_timeout=timeout)
        if not 200 <= response.status <= 299:
            response.read()
            raise ApiException.from_response(http_resp=response, body=None, data=None)
        if not preload:
            return response.response
        return json.loads(response.read())


def _custom(group: str, version: str, namespace: str, plural: str) -> dict[str, str]:
    return {"group": group, "version": version, "namespace": namespace, "plural": plural}


def _query(options: dict[str, Any]) -> list[tuple[str, Any]]:
    """_query({'watch': True, 'resource_version': '7'}) == [('resourceVersion', '7'), ('watch', True)]: the query, in QUERY_NAMES' order.

    An option the scheduler never passes is a TypeError, as the generated method's own signature would make it.
    """
    unknown = sorted(set(options) - set(QUERY_NAMES))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)}")
    return [(name, options[key]) for key, name in QUERY_NAMES.items() if options.get(key) is not None]
