"""The active label of a ReservationRecord (docs/contract.md section 9): "true" while any group is Reserved.

The label is written apart from the status (a PATCH of the main resource; the status
subresource ignores labels), so a claim can land between the copy the label was decided
on and the PATCH. On kind, with five scenarios at a time, own_run_two_groups' record lost
its label for a whole reservation that way: group `source` released, the label's removal
decided, group `cache` claimed (its status write still saw the old "true" and queued
nothing), then the removal landed.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from reference_scheduler.runtime.records import ACTIVE_LABEL, CAS_ATTEMPTS, RecordWriter
from tests.unit.test_binding_cycle import FakeRecordsApi

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class RacingRecordsApi(FakeRecordsApi):
    """The records API, where `before_patch` changes the record as a write from elsewhere landing just before a label PATCH does."""

    def __init__(self, record: Obj, before_patch: Callable[[Obj], None] = lambda stored: None) -> None:
        super().__init__()
        self.put(record)
        self.before_patch = before_patch
        self.patches: list[str | None] = []

    @property
    def stored(self) -> Obj:
        return self.objects[("ns", "run-a")]

    def patch_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, name: str, body: Obj) -> Obj:
        self.before_patch(self.stored)
        self.patches.append(body["metadata"]["labels"][ACTIVE_LABEL])
        return super().patch_namespaced_custom_object(group, version, ns, plural, name, body)


def _record(label: str | None, **states: str) -> Obj:
    return {
        "metadata": {"namespace": "ns", "name": "run-a", "resourceVersion": "7", "labels": {ACTIVE_LABEL: label} if label else {}},
        "status": {"groups": [{"name": group, "state": state} for group, state in states.items()]},
    }


def _writer(api: RacingRecordsApi) -> RecordWriter:
    writer = RecordWriter(None, field_manager="s")  # type: ignore[arg-type]
    writer._custom = api  # type: ignore[assignment]  # noqa: SLF001
    return writer


def _claim_cache(stored: Obj) -> None:
    groups = [dict(g) for g in stored["status"]["groups"]]
    groups[1]["state"] = "Reserved"
    stored["status"] = {"groups": groups}


def test_a_claim_that_lands_before_the_label_removal_puts_the_label_back() -> None:
    api = RacingRecordsApi(_record("true", source="Released", cache="Pending"), before_patch=_claim_cache)
    _writer(api).settle_label("ns", "run-a")
    assert api.patches == [None, "true"]
    assert api.stored["metadata"]["labels"] == {ACTIVE_LABEL: "true"}


def test_a_label_that_agrees_with_the_answer_is_written_once() -> None:
    api = RacingRecordsApi(_record("true", source="Released", cache="Pending"))
    _writer(api).settle_label("ns", "run-a")
    assert api.patches == [None]
    assert api.stored["metadata"]["labels"] == {}


def test_a_label_that_agrees_with_the_status_is_not_written() -> None:
    api = RacingRecordsApi(_record("true", source="Reserved", cache="Pending"))
    _writer(api).settle_label("ns", "run-a")
    assert api.patches == []


def test_a_status_that_flips_under_every_label_write_stops_after_cas_attempts() -> None:
    def flip(stored: Obj) -> None:
        state = stored["status"]["groups"][0]["state"]
        stored["status"] = {"groups": [{"name": "source", "state": "Released" if state == "Reserved" else "Reserved"}]}

    api = RacingRecordsApi(_record(None, source="Reserved"), before_patch=flip)
    _writer(api).settle_label("ns", "run-a")
    assert len(api.patches) == CAS_ATTEMPTS

