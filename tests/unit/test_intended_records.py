"""IntendedRecords: the state queued writes lead to, until the last of them ends; a failure drops the chain."""

from __future__ import annotations

import pytest

from reference_scheduler.runtime.intended_records import IntendedRecords

pytestmark = pytest.mark.unit

KEY = ("ns", "run-a")


def _record(state: str) -> dict[str, object]:
    return {"metadata": {"namespace": "ns", "name": "run-a", "resourceVersion": "7"}, "status": {"groups": [{"name": "g0", "state": state}]}}


def test_the_latest_decision_counts_until_every_write_of_the_chain_ends() -> None:
    intents = IntendedRecords()
    first = intents.intend(_record("Pending"))
    second = intents.intend(_record("Reserved"))
    assert first == second  # one chain: the join was decided on top of the create
    found = intents.get(KEY)
    assert found is not None and found["status"] == {"groups": [{"name": "g0", "state": "Reserved"}]}
    assert "resourceVersion" not in found["metadata"]  # no version the API holds
    intents.settle(KEY, first)
    assert intents.get(KEY) is not None  # one write still queued
    intents.settle(KEY, second)
    assert intents.get(KEY) is None and intents.items() == []


def test_an_abandoned_chain_stops_its_queued_writes_and_a_new_chain_starts_afresh() -> None:
    intents = IntendedRecords()
    old = intents.intend(_record("Reserved"))
    intents.intend(_record("Reserved"))
    intents.abandon(KEY)
    assert not intents.current(KEY, old) and intents.get(KEY) is None
    new = intents.intend(_record("Pending"))
    assert new != old and intents.current(KEY, new)
    intents.settle(KEY, old)  # the old chain's writes ending later must not end the new one
    intents.settle(KEY, old)
    assert intents.current(KEY, new)
    intents.settle(KEY, new)
    assert intents.get(KEY) is None
