"""Which pod watch events the contract monitor skips undecoded (harness.monitor.pod_event_filter)."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.kube import as_plain_watch
from harness.monitor.pod_event_filter import SKIPPED, FilteredWatch, PodEventFilter

pytestmark = pytest.mark.unit


def _pod(namespace: str, node: str = "", *, version: str = "7", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    # The API server's order: metadata (resourceVersion before labels and annotations), spec, status.
    metadata: dict[str, Any] = {"name": "p", "namespace": namespace, "uid": "u1", "resourceVersion": version, "creationTimestamp": "2026-12-06T10:00:00Z"}
    if annotations:
        metadata["annotations"] = annotations
    spec: dict[str, Any] = {"containers": [{"name": "step", "image": "x"}], "schedulerName": "tkn-scheduler"}
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec, "status": {"phase": "Pending"}}


def _line(event_type: str, obj: dict[str, Any]) -> str:
    """_line() is a watch event as the API server writes it: compact JSON, one line."""
    return json.dumps({"type": event_type, "object": obj}, separators=(",", ":"))


def _filter(pool: tuple[str, ...] | None = ("pool-1", "pool-2")) -> PodEventFilter:
    pod_filter = PodEventFilter(["conf-a", "conf-a-extra"])
    if pool is not None:
        pod_filter.add_pool_nodes(pool)
    return pod_filter


def test_nothing_is_skipped_before_the_pool_is_known() -> None:
    assert _filter(pool=None).skipped_version(_line("MODIFIED", _pod("other", "elsewhere"))) is None


@pytest.mark.parametrize("event_type", ["ADDED", "MODIFIED", "DELETED"])
def test_another_namespaces_pod_off_the_pool_is_skipped_with_its_version(event_type: str) -> None:
    pod_filter = _filter()
    assert pod_filter.skipped_version(_line(event_type, _pod("other", "elsewhere", version="4242"))) == "4242"
    assert pod_filter.skipped_version(_line(event_type, _pod("other", version="4243"))) == "4243"  # not bound yet
    assert pod_filter.skipped == 2


@pytest.mark.parametrize(
    ("pod", "why"),
    [
        (_pod("conf-a"), "the scenario's own pod, unbound"),
        (_pod("conf-a-extra", "elsewhere"), "a pod of the scenario's other namespace, wherever it is"),
        (_pod("other", "pool-2"), "another namespace's pod bound to a pool node"),
    ],
)
def test_what_the_monitor_keeps_is_decoded(pod: dict[str, Any], why: str) -> None:
    assert _filter().skipped_version(_line("MODIFIED", pod)) is None, why


def test_a_namespace_or_node_whose_name_starts_like_ours_is_not_ours() -> None:
    pod_filter = _filter()
    assert pod_filter.skipped_version(_line("MODIFIED", _pod("conf-ab", "pool-10"))) == "7"


@pytest.mark.parametrize(
    "line",
    [
        _line("BOOKMARK", {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}}),
        _line("ERROR", {"kind": "Status", "apiVersion": "v1", "code": 410, "message": "too old resource version"}),
        json.dumps({"type": "MODIFIED", "object": _pod("other", "elsewhere")}),  # not compact: not the form the filter reads
        "",
    ],
)
def test_other_lines_are_decoded(line: str) -> None:
    assert _filter().skipped_version(line) is None


def test_a_version_in_an_annotation_is_not_taken_for_the_pods() -> None:
    pod = _pod("other", "elsewhere", version="31", annotations={"note": '{"resourceVersion":"1","namespace":"conf-a","nodeName":"pool-1"}'})
    assert _filter().skipped_version(_line("MODIFIED", pod)) == "31"


def test_a_node_that_joins_the_pool_later_asks_for_a_fresh_list() -> None:
    pod_filter = PodEventFilter(["conf-a"])
    assert pod_filter.add_pool_nodes(["pool-1"]) is False  # the first pool: nothing was skipped before
    assert pod_filter.add_pool_nodes(["pool-1"]) is False
    assert pod_filter.add_pool_nodes([]) is False  # a node that leaves stays kept: its pods may still be deleted
    assert pod_filter.skipped_version(_line("ADDED", _pod("other", "pool-3"))) == "7"
    assert pod_filter.add_pool_nodes(["pool-1", "pool-3"]) is True
    assert pod_filter.skipped_version(_line("ADDED", _pod("other", "pool-3"))) is None
    assert pod_filter.skipped_version(_line("ADDED", _pod("other", "pool-1"))) is None


_names = st.sampled_from(["conf-a", "conf-a-extra", "conf-ab", "other", "kube-system"])
_nodes = st.sampled_from(["", "pool-1", "pool-2", "pool-10", "elsewhere"])
_texts = st.lists(st.sampled_from(list('ab:"\\,{}') + ["resourceVersion", "namespace", "nodeName", "conf-a", "pool-1"]), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(namespace=_names, node=_nodes, version=st.integers(1, 10**12), note=_texts, event_type=st.sampled_from(["ADDED", "MODIFIED", "DELETED"]))
def test_a_pod_is_skipped_only_when_the_monitor_would_drop_it(namespace: str, node: str, version: int, note: str, event_type: str) -> None:
    pod = _pod(namespace, node, version=str(version), annotations={"note": note})
    skipped = _filter().skipped_version(_line(event_type, pod))
    kept_by_monitor = namespace in ("conf-a", "conf-a-extra") or node in ("pool-1", "pool-2")
    if kept_by_monitor:
        assert skipped is None
    else:
        assert skipped == str(version)


class _Response:
    """_Response is the urllib3 answer a watch reads: its lines in chunks cut anywhere."""

    status = 200

    def __init__(self, lines: list[str]) -> None:
        self._body = "".join(line + "\n" for line in lines).encode()

    def stream(self, amt: Any = None, decode_content: bool = False) -> Iterator[bytes]:
        for start in range(0, len(self._body), 1000):
            yield self._body[start:start + 1000]

    def close(self) -> None:
        pass

    def release_conn(self) -> None:
        pass


def test_the_clients_watch_hands_a_skipped_line_over_as_its_version_alone() -> None:
    lines = [
        _line("ADDED", _pod("other", "elsewhere", version="11")),
        _line("MODIFIED", _pod("conf-a", version="12")),
        _line("BOOKMARK", {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "13"}}),
    ]

    def list_pods(**_: Any) -> _Response:
        return _Response(lines)

    events = list(FilteredWatch(_filter()).stream(as_plain_watch(list_pods), timeout_seconds=5))
    assert [e["type"] for e in events] == [SKIPPED, "MODIFIED", "BOOKMARK"]
    assert events[0]["raw_object"] == {"metadata": {"resourceVersion": "11"}}
    assert events[1]["raw_object"]["metadata"]["namespace"] == "conf-a"
