"""AssumedClaims: our own claim writes count before the watch shows them, and only until it does."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core import volume_binding
from reference_scheduler.core.volume_binding import VolumeLookups
from reference_scheduler.runtime import volume_binder
from reference_scheduler.runtime.assumed_claims import MAX_ASSUMED, AssumedClaims, at_least_as_new
from reference_scheduler.runtime.volume_binder import Selection, VolumeBinder

pytestmark = pytest.mark.unit

SELECTED = "volume.kubernetes.io/selected-node"


def _claim(version: str, node: str | None = None, name: str = "cache") -> dict[str, Any]:
    annotations = {SELECTED: node} if node else {}
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": version, "annotations": annotations},
            "spec": {"storageClassName": "standard"}, "status": {"phase": "Pending"}}


def test_versions_are_ordered_as_numbers_and_otherwise_only_equal() -> None:
    assert at_least_as_new("42", "42") and at_least_as_new("100", "42")
    assert not at_least_as_new("41", "42") and not at_least_as_new("9", "10")
    assert not at_least_as_new("b", "a") and at_least_as_new("a", "a")


def test_the_written_copy_is_read_until_the_informer_reaches_its_version() -> None:
    informer = {("ns", "cache"): _claim("41")}
    claims = AssumedClaims(lambda ns, name: informer.get((ns, name)))
    claims.assume(_claim("42", "n2"))
    assert volume_binding.selected_node(claims.get("ns", "cache")) == "n2"  # the watch has not shown our write
    informer[("ns", "cache")] = _claim("42", "n2")
    assert claims.get("ns", "cache") is informer[("ns", "cache")]
    assert len(claims) == 0
    informer[("ns", "cache")] = _claim("43")  # a provisioner took the annotation off: the informer's word now
    assert volume_binding.selected_node(claims.get("ns", "cache")) is None


def test_a_newer_informer_copy_wins_and_a_claim_gone_from_it_is_gone() -> None:
    informer: dict[tuple[str, str], dict[str, Any]] = {("ns", "cache"): _claim("50", "n1")}
    claims = AssumedClaims(lambda ns, name: informer.get((ns, name)))
    claims.assume(_claim("42", "n2"))
    assert volume_binding.selected_node(claims.get("ns", "cache")) == "n1"
    claims.assume(_claim("60", "n2"))
    informer.clear()
    assert claims.get("ns", "cache") is None
    assert claims.get("ns", "other") is None


def test_nothing_written_is_nothing_assumed_and_the_overlay_is_bounded() -> None:
    claims = AssumedClaims(lambda ns, name: None)
    claims.assume(None)
    claims.assume({"metadata": {"namespace": "ns", "name": "x"}})
    assert len(claims) == 0
    for i in range(MAX_ASSUMED + 5):
        claims.assume(_claim(str(i + 1), "n1", name=f"c{i}"))
    assert len(claims) == MAX_ASSUMED


def test_the_binder_assumes_what_select_and_unselect_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    informer = {("ns", "cache"): _claim("41")}
    claims = AssumedClaims(lambda ns, name: informer.get((ns, name)))
    lookups = VolumeLookups(claims.get, lambda name: None, lambda name: {"volumeBindingMode": "WaitForFirstConsumer"})
    binder = VolumeBinder(None, lookups=lookups, node_named=lambda name: None, assume=claims.assume)
    monkeypatch.setattr(volume_binder, "select_node", lambda core, ns, name, node, cached: Selection(known_version="42", written=_claim("42", node)))
    assert binder.select("ns", ("cache",), "n2") == ({"cache": "42"}, None)
    assert volume_binding.selected_node(lookups.get_claim("ns", "cache")) == "n2"
    monkeypatch.setattr(volume_binder, "unselect_node", lambda core, ns, name, node: _claim("43"))
    binder.unselect("ns", ("cache",), "n2")
    assert volume_binding.selected_node(lookups.get_claim("ns", "cache")) is None
