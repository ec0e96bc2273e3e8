"""as_plain_watch: the harness's watchers get each event as the JSON it came as, never a client model."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from kubernetes.client import V1PodList

from harness.kube import as_plain_watch

pytestmark = pytest.mark.unit

EVENTS = [
    {"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7"}, "spec": {"nodeName": "n1", "futureField": 1}}},
    {"type": "DELETED", "object": {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "8"}}},
]


class StreamedAnswer:
    status = 200

    def stream(self, amt: Any = None, decode_content: bool = False) -> Any:
        yield "".join(json.dumps(e) + "\n" for e in EVENTS).encode()

    def close(self) -> None:
        pass

    def release_conn(self) -> None:
        pass


def test_a_typed_list_function_watched_plainly_gives_dicts_with_every_field() -> None:
    calls: list[dict[str, Any]] = []

    def list_pod_for_all_namespaces(**kwargs: Any) -> V1PodList:
        calls.append(kwargs)
        return StreamedAnswer()  # type: ignore[return-value]

    watch: Any = kubernetes.watch.Watch()  # type: ignore[no-untyped-call]
    assert watch.get_return_type(list_pod_for_all_namespaces) in ("V1Pod", kubernetes.client.V1Pod)  # what the wrapper keeps Watch from seeing
    events = list(watch.stream(as_plain_watch(list_pod_for_all_namespaces), resource_version="6", timeout_seconds=5))
    assert [(e["type"], e["object"]) for e in events] == [(e["type"], e["object"]) for e in EVENTS]
    assert all(type(e["object"]) is dict and e["raw_object"] is e["object"] for e in events)
    assert calls == [{"resource_version": "6", "timeout_seconds": 5, "watch": True, "_preload_content": False}]


def test_positional_arguments_reach_the_list_function() -> None:
    seen: list[tuple[Any, ...]] = []

    def list_namespaced_custom_object(*args: Any, **kwargs: Any) -> object:
        seen.append(args)
        return StreamedAnswer()

    watch: Any = kubernetes.watch.Watch()  # type: ignore[no-untyped-call]
    events = list(watch.stream(as_plain_watch(list_namespaced_custom_object), "g", "v1", "ns", "things", timeout_seconds=5))
    assert seen == [("g", "v1", "ns", "things")] and len(events) == 2
