"""Volume binding, the bind half: selecting the node on a claim, waiting for it, undoing it (volume spec V2, V4)."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.core.volume_binding import SELECTED_NODE_ANNOTATION
from reference_scheduler.core.volume_provisioning import (
    BOUND_ELSEWHERE_MESSAGE,
    CLAIM_DELETING_MESSAGE,
    CLAIM_GONE_MESSAGE,
    NODE_GONE_MESSAGE,
    SELECTED_ELSEWHERE_MESSAGE,
    SELECTION_REMOVED_MESSAGE,
    ProvisionState,
    SelectionStep,
    provisioning_check,
    selection_patch,
    selection_step,
    should_unselect,
    timed_out_message,
)

pytestmark = pytest.mark.unit

Obj = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
N1 = {"metadata": {"name": "n1", "labels": {HOSTNAME: "n1"}}}


def claim(*, selected: str | None = None, bound_to: str | None = None, deleting: bool = False) -> Obj:
    meta: Obj = {"name": "src", "namespace": "ns", "resourceVersion": "7"}
    if selected is not None:
        meta["annotations"] = {SELECTED_NODE_ANNOTATION: selected}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T10:00:00Z"
    spec: Obj = {"storageClassName": "standard", **({"volumeName": bound_to} if bound_to else {})}
    return {"metadata": meta, "spec": spec, "status": {"phase": "Bound" if bound_to else "Pending"}}


def volume(name: str, host: str) -> Obj:
    terms = [{"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [host]}]}]
    return {"metadata": {"name": name}, "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": terms}}}}


@pytest.mark.parametrize(
    ("found", "pv", "target", "fresh", "state", "failure"),
    [
        pytest.param(claim(selected="n1"), None, N1, True, ProvisionState.WAITING, "", id="selected-still-pending"),
        pytest.param(claim(selected="n1", bound_to="pv-1"), volume("pv-1", "n1"), N1, True, ProvisionState.BOUND, "", id="bound-on-the-node"),
        pytest.param(claim(selected="n1", bound_to="pv-1"), None, N1, True, ProvisionState.WAITING, "", id="bound-volume-not-seen-yet"),
        pytest.param(
            claim(selected="n1", bound_to="pv-1"), volume("pv-1", "n2"), N1, True, ProvisionState.FAILED,
            BOUND_ELSEWHERE_MESSAGE.format(claim="src", volume="pv-1", node="n1"), id="bound-to-a-volume-elsewhere",
        ),
        pytest.param(
            claim(), None, N1, True, ProvisionState.FAILED, SELECTION_REMOVED_MESSAGE.format(claim="src", node="n1"),
            id="provisioner-took-the-annotation-off",
        ),
        pytest.param(
            claim(selected="n2"), None, N1, True, ProvisionState.FAILED,
            SELECTED_ELSEWHERE_MESSAGE.format(claim="src", selected="n2", node="n1"), id="selected-for-another-node",
        ),
        pytest.param(None, None, N1, True, ProvisionState.FAILED, CLAIM_GONE_MESSAGE.format(claim="src"), id="claim-deleted"),
        pytest.param(
            claim(selected="n1", deleting=True), None, N1, True, ProvisionState.FAILED, CLAIM_DELETING_MESSAGE.format(claim="src"),
            id="claim-being-deleted",
        ),
        pytest.param(claim(selected="n1"), None, None, True, ProvisionState.FAILED, NODE_GONE_MESSAGE.format(node="n1"), id="node-deleted"),
        # A cached copy older than our own annotation write says nothing about the annotation yet.
        pytest.param(claim(), None, N1, False, ProvisionState.WAITING, "", id="stale-copy-without-our-annotation-waits"),
        pytest.param(None, None, N1, False, ProvisionState.WAITING, "", id="stale-cache-without-the-claim-waits"),
        pytest.param(
            claim(bound_to="pv-1"), volume("pv-1", "n1"), N1, False, ProvisionState.BOUND, "", id="stale-copy-already-bound-is-bound",
        ),
    ],
)  # fmt: skip
def test_provisioning_check(found: Obj | None, pv: Obj | None, target: Obj | None, fresh: bool, state: ProvisionState, failure: str) -> None:
    check = provisioning_check("src", found, pv, target, "n1", fresh=fresh)
    assert (check.state, check.failure) == (state, failure)


def test_failure_messages_are_one_line_and_name_the_claim() -> None:
    for check in (
        provisioning_check("src", claim(), None, N1, "n1"),
        provisioning_check("src", claim(selected="n1", bound_to="pv-1"), volume("pv-1", "n2"), N1, "n1"),
    ):
        assert "\n" not in check.failure and '"src"' in check.failure
    assert timed_out_message("src", "n1", 60) == 'persistentvolumeclaim "src" was not Bound within 60s of selecting node n1'
    assert timed_out_message("src", "n1", 0.5) == 'persistentvolumeclaim "src" was not Bound within 0.5s of selecting node n1'


@pytest.mark.parametrize(
    ("found", "step"),
    [
        pytest.param(claim(), SelectionStep.ANNOTATE, id="pending-unselected"),
        pytest.param(claim(selected="n1"), SelectionStep.NOTHING, id="already-selects-the-node"),
        pytest.param(claim(selected="n2"), SelectionStep.REFUSE, id="selects-another-node"),
        pytest.param(claim(bound_to="pv-1"), SelectionStep.NOTHING, id="already-bound"),
    ],
)
def test_selection_step(found: Obj, step: SelectionStep) -> None:
    assert selection_step(found, "n1") is step


@pytest.mark.parametrize(
    ("found", "undo"),
    [
        pytest.param(claim(selected="n1"), True, id="unbound-naming-the-node"),
        pytest.param(claim(selected="n2"), False, id="naming-another-node"),
        pytest.param(claim(), False, id="no-annotation"),
        pytest.param(claim(selected="n1", bound_to="pv-1"), False, id="bound-meanwhile"),
        pytest.param(None, False, id="deleted"),
    ],
)
def test_should_unselect(found: Obj | None, undo: bool) -> None:
    assert should_unselect(found, "n1") is undo


def test_selection_patch_sets_or_removes_the_annotation_with_compare_and_swap() -> None:
    assert selection_patch("n1", "42") == {"metadata": {"resourceVersion": "42", "annotations": {SELECTED_NODE_ANNOTATION: "n1"}}}
    assert selection_patch(None, "43") == {"metadata": {"resourceVersion": "43", "annotations": {SELECTED_NODE_ANNOTATION: None}}}
