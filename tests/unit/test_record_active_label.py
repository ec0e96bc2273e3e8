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

pytestmark = pytest.mark.unit

Obj = dict[str, Any]


class RecordsApi:
    """One stored record; `before_patch` changes it as a write from elsewhere landing just before a label PATCH does."""

    def __init__(self, record: Obj, before_patch: Callable[[Obj], None] = lambda stored: None) -> None:
        self.stored = record
        self.before_patch = before_patch
        self.patches: list[str | None] = []

    def get_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, name: str) -> Obj:
        return _copy(self.stored)

    def patch_namespaced_custom_object(self, group: str, version: str, ns: str, plural: str, name: str, body: Obj) -> Obj:
        self.before_patch(self.stored)
        value = body["metadata"]["labels"][ACTIVE_LABEL]
        self.patches.append(value)
        labels = {**self.stored["metadata"].get("labels", {}), ACTIVE_LABEL: value}
        self.stored["metadata"]["labels"] = {k: v for k, v in labels.items() if v is not None}
        return _copy(self.stored)


def _copy(record: Obj) -> Obj:
    return {**record, "metadata": {**record["metadata"], "labels": dict(record["metadata"].get("labels", {}))}, "status": {"groups": [dict(g) for g in record["status"]["groups"]]}}


def _record(label: str | None, **states: str) -> Obj:
    return {
        "metadata": {"namespace": "ns", "name": "run-a", "resourceVersion": "7", "labels": {ACTIVE_LABEL: label} if label else {}},
        "status": {"groups": [{"name": group, "state": state} for group, state in states.items()]},
    }


def _writer(api: RecordsApi) -> RecordWriter:
    writer = RecordWriter(None, field_manager="s")  # type: ignore[arg-type]
    writer._custom = api  # type: ignore[assignment]  # noqa: SLF001
    return writer


def _claim_cache(stored: Obj) -> None:
    stored["status"]["groups"][1]["state"] = "Reserved"


def test_a_claim_that_lands_before_the_label_removal_puts_the_label_back() -> None:
    api = RecordsApi(_record("true", source="Released", cache="Pending"), before_patch=_claim_cache)
    _writer(api).settle_label("ns", "run-a")
    assert api.patches == [None, "true"]
    assert api.stored["metadata"]["labels"] == {ACTIVE_LABEL: "true"}


def test_a_label_that_agrees_with_the_answer_is_written_once() -> None:
    api = RecordsApi(_record("true", source="Released", cache="Pending"))
    _writer(api).settle_label("ns", "run-a")
    assert api.patches == [None]
    assert api.stored["metadata"]["labels"] == {}


def test_a_label_that_agrees_with_the_status_is_not_written() -> None:
    api = RecordsApi(_record("true", source="Reserved", cache="Pending"))
    _writer(api).settle_label("ns", "run-a")
    assert api.patches == []


def test_a_status_that_flips_under_every_label_write_stops_after_cas_attempts() -> None:
    def flip(stored: Obj) -> None:
        group = stored["status"]["groups"][0]
        group["state"] = "Released" if group["state"] == "Reserved" else "Reserved"

    api = RecordsApi(_record(None, source="Reserved"), before_patch=flip)
    _writer(api).settle_label("ns", "run-a")
    assert len(api.patches) == CAS_ATTEMPTS

