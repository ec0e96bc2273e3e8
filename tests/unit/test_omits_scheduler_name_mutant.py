"""The omits_scheduler_name_annotation mutant: its records lack the mark, and it still releases them."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.partition import WorkspaceGroup
from reference_scheduler.core.resources import Resources
from reference_scheduler.runtime import records
from reference_scheduler.runtime.releaser import Releaser
from tests.mutants import faults

pytestmark = pytest.mark.unit

RUN: dict[str, Any] = {"apiVersion": "tekton.dev/v1", "metadata": {"name": "a", "namespace": "ci", "uid": "u"}}
GROUPS = (WorkspaceGroup("source", ("build",), ("source",), Resources(1000, 0)),)


def test_the_reference_marks_its_record_and_the_mutant_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "record_manifest", records.record_manifest)
    monkeypatch.setattr(Releaser, "owns", Releaser.owns)
    assert records.record_manifest(RUN, GROUPS, scheduler_name="tkn")["metadata"]["annotations"] == {records.SCHEDULER_ANNOTATION: "tkn"}
    faults.apply_omits_scheduler_name_annotation()
    manifest = records.record_manifest(RUN, GROUPS, scheduler_name="tkn")
    assert "annotations" not in manifest["metadata"]
    assert manifest["metadata"]["ownerReferences"][0]["uid"] == "u"  # nothing else changes

    releaser = Releaser.__new__(Releaser)
    releaser._scheduler_name = "tkn"
    assert releaser.owns(manifest)  # its own unmarked records are still released
    assert not releaser.owns({"metadata": {"annotations": {records.SCHEDULER_ANNOTATION: "other"}}})
