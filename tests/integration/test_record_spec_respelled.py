"""The CRD's spec immutability survives Go's Quantity respelling, on the real API server (docs/contract.md section 2).

A scheduler written in Go reads a record into typed structs and writes it back
to change the active label. `resource.Quantity` marshals in canonical form, so
a peak created as "2000m" / "1.5Gi" goes back as "2" / "1536Mi": the same
amounts in other spellings, which a string comparison (`self == oldSelf`)
refused with HTTP 422 (measured once on this API server with the previous
CRD: "spec is immutable"). The rule now compares peaks as amounts: that update is
accepted, and any change of value, of tasks, of workspaces, of the run or of
the set of groups is still refused with 422.

The CRD is installed under a group of its own (same schema, same rules), so
this test never replaces the CRD that other sessions on the shared cluster use.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any, Callable, Iterator

import kubernetes
import pytest

from harness.contract.record import PLURAL, VERSION, crd_manifest
from harness.kube import Kube, json_object, present
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

pytestmark = pytest.mark.integration

Obj = dict[str, Any]


@pytest.fixture
def crd_group(it_kube: Kube, it_timeouts: TimeoutConfig) -> Iterator[str]:
    """crd_group is a fresh API group serving the contract's CRD, deleted afterwards."""
    group = f"it{uuid.uuid4().hex[:8]}.rescon.dev"
    crd = crd_manifest()
    crd["metadata"]["name"] = f"{PLURAL}.{group}"
    crd["spec"]["group"] = group
    ext = kubernetes.client.ApiextensionsV1Api(it_kube.api)
    ext.create_custom_resource_definition(crd)

    def served() -> None:
        obj = ext.read_custom_resource_definition(crd["metadata"]["name"])
        if {c.type: c.status for c in (present(obj.status).conditions or [])}.get("Established") != "True":
            raise NotYet(f"CRD {crd['metadata']['name']} is not Established yet")
        try:  # Established can come a moment before the group is in discovery
            it_kube.custom.list_cluster_custom_object(group, VERSION, PLURAL)
        except kubernetes.client.ApiException as err:
            raise NotYet(f"{group} is not served yet ({err.status})") from err

    try:
        wait_for(served, what=f"the contract's CRD under {group}", timeout="crd_established", timeouts=it_timeouts)
        yield group
    finally:
        ext.delete_custom_resource_definition(crd["metadata"]["name"])


def _record(group: str, name: str) -> Obj:
    """_record is a record as a hand-writing scheduler creates it: peaks "2000m" and "1.5Gi"."""
    return {
        "apiVersion": f"{group}/{VERSION}",
        "kind": "ReservationRecord",
        "metadata": {"name": name},
        "spec": {
            "pipelineRun": {"name": name, "uid": str(uuid.uuid4())},
            "groups": [
                {"name": "source", "tasks": ["build", "test"], "workspaces": ["source"], "peak": {"cpu": "2000m", "memory": "1.5Gi"}},
                {"name": "cache", "tasks": ["lint"], "workspaces": ["cache"], "peak": {"cpu": "500m", "memory": "512Mi"}},
            ],
        },
    }


def _go_round_trip(obj: Obj) -> Obj:
    """_go_round_trip is what a typed Go read-modify-write sends back: canonical quantities, the label added.

    Canonical forms, as resource.Quantity marshals them: 2000m → "2",
    1.5Gi = 1610612736 bytes = 1536 × 2^20 → "1536Mi", 500m → "500m",
    512Mi → "512Mi" (checked once with a json.Unmarshal/json.Marshal round
    trip of k8s.io/apimachinery v0.37.2's resource.Quantity, which also gave
    "0.5" → "500m").
    """
    sent = copy.deepcopy(obj)
    sent["metadata"].setdefault("labels", {})["rescon.dev/active"] = "true"
    canonical = {"2000m": "2", "1.5Gi": "1536Mi"}
    for group in sent["spec"]["groups"]:
        for resource in ("cpu", "memory"):
            group["peak"][resource] = canonical.get(group["peak"][resource], group["peak"][resource])
    return sent


def _replace(kube: Kube, group: str, namespace: str, body: Obj) -> Obj:
    return json_object(kube.custom.replace_namespaced_custom_object(group, VERSION, namespace, PLURAL, body["metadata"]["name"], body))


def _get(kube: Kube, group: str, namespace: str, name: str) -> Obj:
    return json_object(kube.custom.get_namespaced_custom_object(group, VERSION, namespace, PLURAL, name))


def test_a_go_style_round_trip_is_accepted(it_kube: Kube, namespace: str, crd_group: str) -> None:
    created = json_object(it_kube.custom.create_namespaced_custom_object(crd_group, VERSION, namespace, PLURAL, _record(crd_group, "run-a")))

    sent = _go_round_trip(created)
    assert sent["spec"]["groups"][0]["peak"] == {"cpu": "2", "memory": "1536Mi"}
    _replace(it_kube, crd_group, namespace, sent)

    stored = _get(it_kube, crd_group, namespace, "run-a")
    assert stored["metadata"]["labels"]["rescon.dev/active"] == "true"
    assert stored["spec"]["groups"][0]["peak"] == {"cpu": "2", "memory": "1536Mi"}
    print(f"generation after the respelled write: {stored['metadata']['generation']}")


def _peak(group_index: int, resource: str, value: str) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        obj["spec"]["groups"][group_index]["peak"][resource] = value

    return change


def _field(group_index: int, field: str, value: list[str]) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        obj["spec"]["groups"][group_index][field] = value

    return change


def _uid(obj: Obj) -> None:
    obj["spec"]["pipelineRun"]["uid"] = str(uuid.uuid4())


def _drop_group(obj: Obj) -> None:
    del obj["spec"]["groups"][1]


def _rename_group(obj: Obj) -> None:
    obj["spec"]["groups"][1]["name"] = "other"


# Each change alters a value, not a spelling: 2001m ≠ 2000m; 1537Mi ≠ 1536Mi = 1.5Gi; 0.5 = 500m is a
# respelling, so "0.6" (600m) is the change for the second group.
REAL_CHANGES: list[tuple[str, Callable[[Obj], None]]] = [
    ("cpu 2001m", _peak(0, "cpu", "2001m")),
    ("memory 1537Mi", _peak(0, "memory", "1537Mi")),
    ("cpu 0.6 for 500m", _peak(1, "cpu", "0.6")),
    ("tasks", _field(0, "tasks", ["build"])),
    ("workspaces", _field(1, "workspaces", ["other"])),
    ("run uid", _uid),
    ("a group dropped", _drop_group),
    ("a group renamed", _rename_group),
]


@pytest.mark.parametrize("change", [c for _, c in REAL_CHANGES], ids=[n for n, _ in REAL_CHANGES])
def test_a_real_change_is_still_refused(it_kube: Kube, namespace: str, crd_group: str, change: Callable[[Obj], None]) -> None:
    created = json_object(it_kube.custom.create_namespaced_custom_object(crd_group, VERSION, namespace, PLURAL, _record(crd_group, "run-b")))
    sent = _go_round_trip(created)
    change(sent)

    with pytest.raises(kubernetes.client.ApiException) as refused:
        _replace(it_kube, crd_group, namespace, sent)

    assert refused.value.status == 422, refused.value.body
    assert "immutable" in str(refused.value.body)
    assert _get(it_kube, crd_group, namespace, "run-b")["spec"] == created["spec"]


def test_a_label_patch_carrying_resource_version_is_a_compare_and_swap(it_kube: Kube, namespace: str, crd_group: str) -> None:
    """The label write the contract prescribes: a merge patch of metadata alone, with the resourceVersion read.

    It sends no spec, so no spelling can trip the immutability rule; with a
    stale resourceVersion it is refused with 409, like an update.
    """
    created = json_object(it_kube.custom.create_namespaced_custom_object(crd_group, VERSION, namespace, PLURAL, _record(crd_group, "run-c")))
    read_version = created["metadata"]["resourceVersion"]
    # Someone else writes in between: the version read is stale now.
    _replace(it_kube, crd_group, namespace, {**created, "metadata": {**created["metadata"], "annotations": {"x": "y"}}})

    def patch(version: str) -> Obj:
        body = {"metadata": {"resourceVersion": version, "labels": {"rescon.dev/active": "true"}}}
        return json_object(it_kube.custom.patch_namespaced_custom_object(crd_group, VERSION, namespace, PLURAL, "run-c", body))

    with pytest.raises(kubernetes.client.ApiException) as refused:
        patch(read_version)
    assert refused.value.status == 409, refused.value.body

    current = _get(it_kube, crd_group, namespace, "run-c")
    patched = patch(current["metadata"]["resourceVersion"])
    assert patched["metadata"]["labels"] == {"rescon.dev/active": "true"}
    assert patched["spec"] == created["spec"]
