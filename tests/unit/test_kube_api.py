"""KubeApi sends each of the scheduler's calls exactly as kubernetes.client's generated API classes send it."""

from __future__ import annotations

import io
import json
from typing import Any, Callable

import kubernetes
import pytest
import urllib3

from reference_scheduler.runtime.kube_api import KubeApi

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class RecordingPool:
    """RecordingPool stands in for urllib3's PoolManager: it keeps each request and answers `status` with `answer`."""

    def __init__(self, status: int = 200, answer: Obj | None = None) -> None:
        self.sent: list[tuple[str, str, dict[str, str], Any]] = []
        self.status, self.answer = status, answer if answer is not None else {"kind": "Status", "metadata": {}}

    def request(self, method: str, url: str, *, body: Any = None, headers: dict[str, str] | None = None, **_: Any) -> urllib3.HTTPResponse:
        self.sent.append((method, url, {k: v for k, v in (headers or {}).items() if k.lower() in ("accept", "content-type", "authorization")}, json.loads(body) if body else None))
        data = json.dumps(self.answer).encode()
        return urllib3.HTTPResponse(body=io.BytesIO(data), headers={"content-type": "application/json"}, status=self.status, preload_content=False)


def _client(pool: RecordingPool) -> kubernetes.client.ApiClient:
    configuration = kubernetes.client.Configuration()
    configuration.host = "https://api.invalid:6443"
    configuration.api_key = {"authorization": "Bearer t0ken"}
    api = kubernetes.client.ApiClient(configuration)
    api.rest_client.pool_manager = pool  # type: ignore[assignment]
    return api


BINDING = {
    "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
}
EVENT = {
    "apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "p.", "namespace": "ns"},
    "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "ns", "uid": "u"},
    "type": "Normal", "reason": "Scheduled", "message": "Successfully assigned ns/p to n1", "source": {"component": "s"},
    "reportingComponent": "s", "reportingInstance": "s", "count": 1,
}
RECORD = {"apiVersion": "rescon.dev/v1alpha1", "kind": "ReservationRecord", "metadata": {"name": "r", "resourceVersion": "7"}, "status": {"groups": []}}
WATCH = {"watch": True, "resource_version": "12", "timeout_seconds": 240, "allow_watch_bookmarks": True, "_preload_content": False}
CR = ("rescon.dev", "v1alpha1", "ns", "reservationrecords")

#: (generated API class, method, positional arguments, the arguments given to the generated method where they differ, options).
CALLS: list[tuple[str, str, tuple[Any, ...], tuple[Any, ...] | None, dict[str, Any]]] = [
    ("CoreV1Api", "list_pod_for_all_namespaces", (), None, {"_preload_content": False}),
    ("CoreV1Api", "list_pod_for_all_namespaces", (), None, WATCH),
    ("CoreV1Api", "list_node", (), None, WATCH),
    ("CoreV1Api", "list_namespace", (), None, {"_preload_content": False}),
    ("CoreV1Api", "list_limit_range_for_all_namespaces", (), None, WATCH),
    ("CoreV1Api", "list_persistent_volume_claim_for_all_namespaces", (), None, WATCH),
    ("CoreV1Api", "list_persistent_volume", (), None, WATCH),
    ("CoreV1Api", "list_namespaced_config_map", ("tekton-pipelines",), None, {"field_selector": "metadata.name=feature-flags", **WATCH}),
    ("NodeV1Api", "list_runtime_class", (), None, WATCH),
    ("StorageV1Api", "list_storage_class", (), None, {"_preload_content": False}),
    ("CustomObjectsApi", "list_cluster_custom_object", ("tekton.dev", "v1", "pipelineruns"), None, WATCH),
    ("CustomObjectsApi", "list_cluster_custom_object", ("rescon.dev", "v1alpha1", "reservationrecords"), None,
     {"limit": 1, "_preload_content": False, "_request_timeout": 10}),
    ("CoreV1Api", "create_namespaced_pod_binding", ("p", "ns", BINDING), ("p", "ns", kubernetes.client.V1Binding.model_validate(BINDING)),
     {"_preload_content": False}),
    ("CoreV1Api", "create_namespaced_event", ("ns", EVENT), ("ns", kubernetes.client.CoreV1Event.model_validate(EVENT)), {"_preload_content": False}),
    ("CoreV1Api", "patch_namespaced_pod_status", ("p", "ns", {"status": {"conditions": [{"type": "PodScheduled"}]}}), None, {"_preload_content": False}),
    ("CoreV1Api", "patch_namespaced_pod_resize", ("p", "ns", {"spec": {"containers": [{"name": "c"}]}}), None, {"_preload_content": False}),
    ("CoreV1Api", "read_namespaced_persistent_volume_claim", ("ws", "ns"), None, {"_preload_content": False}),
    ("CoreV1Api", "patch_namespaced_persistent_volume_claim", ("ws", "ns", {"metadata": {"annotations": {"a": "n1"}}}), None,
     {"_preload_content": False, "_content_type": "application/merge-patch+json"}),
    ("CustomObjectsApi", "create_namespaced_custom_object", (*CR, RECORD), None, {}),
    ("CustomObjectsApi", "get_namespaced_custom_object", (*CR, "r"), None, {}),
    ("CustomObjectsApi", "replace_namespaced_custom_object_status", (*CR, "r", RECORD), None, {}),
    ("CustomObjectsApi", "patch_namespaced_custom_object", (*CR, "r", {"metadata": {"labels": {"rescon.dev/active": "true"}}}), None, {}),
    ("CustomObjectsApi", "get_namespaced_custom_object", ("coordination.k8s.io", "v1", "kube-system", "leases", "l"), None,
     {"_preload_content": False, "_request_timeout": 5}),
    ("CustomObjectsApi", "create_namespaced_custom_object", ("coordination.k8s.io", "v1", "kube-system", "leases", {"metadata": {"name": "l"}}), None,
     {"_preload_content": False, "_request_timeout": 5}),
    ("CustomObjectsApi", "replace_namespaced_custom_object", ("coordination.k8s.io", "v1", "kube-system", "leases", "l", {"metadata": {"name": "l"}}), None,
     {"_preload_content": False, "_request_timeout": 5}),
]


def _without_times(body: Any) -> Any:
    """The generated method dumps an Event's times from a datetime model (its own format); the moment is the same."""
    if isinstance(body, dict):
        return {k: _without_times(v) for k, v in body.items() if k not in ("firstTimestamp", "lastTimestamp")}
    return body


def _send(call: Callable[..., Any], args: tuple[Any, ...], options: dict[str, Any]) -> Any:
    return call(*args, **options)


@pytest.mark.parametrize(("api_class", "method", "args", "generated_args", "options"), CALLS, ids=[f"{c[1]}-{i}" for i, c in enumerate(CALLS)])
def test_each_call_is_the_generated_methods_request(
    api_class: str, method: str, args: tuple[Any, ...], generated_args: tuple[Any, ...] | None, options: dict[str, Any]
) -> None:
    generated_pool, ours_pool = RecordingPool(), RecordingPool()
    generated = _send(getattr(getattr(kubernetes.client, api_class)(_client(generated_pool)), method), generated_args or args, options)
    ours = _send(getattr(KubeApi(_client(ours_pool)), method), args, options)
    (g_method, g_url, g_headers, g_body), = generated_pool.sent
    (o_method, o_url, o_headers, o_body), = ours_pool.sent
    assert (o_method, o_url, o_headers) == (g_method, g_url, g_headers)
    assert _without_times(o_body) == _without_times(g_body)
    if options.get("_preload_content", True):
        assert ours == {"kind": "Status", "metadata": {}}
    else:
        assert isinstance(ours, urllib3.HTTPResponse) and isinstance(generated, urllib3.HTTPResponse)


@pytest.mark.parametrize("preload", [True, False])
def test_an_answer_outside_2xx_raises_the_generated_methods_exception(preload: bool) -> None:
    answers = {}
    for name, api in (("generated", kubernetes.client.CustomObjectsApi), ("ours", KubeApi)):
        pool = RecordingPool(409, {"kind": "Status", "reason": "Conflict", "message": "the object has been modified", "code": 409})
        with pytest.raises(kubernetes.client.ApiException) as raised:
            getattr(api(_client(pool)), "replace_namespaced_custom_object_status")(*CR, "r", RECORD, _preload_content=preload)
        answers[name] = (type(raised.value), raised.value.status, raised.value.reason, json.loads(raised.value.body or "{}"))
    assert answers["ours"] == answers["generated"]


def test_an_option_no_call_takes_is_refused() -> None:
    with pytest.raises(TypeError, match="label_selectr"):
        KubeApi(_client(RecordingPool())).list_node(label_selectr="a=b")
