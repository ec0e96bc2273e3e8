"""volume_provisioning: the bind phase of a pod's delayed claims (volume spec V2 and V4), decided over raw JSON.

Before a pod is bound to node N, each of its unbound WaitForFirstConsumer
claims is annotated ``volume.kubernetes.io/selected-node: N`` (the provisioner
then makes a volume there), and the bind waits until every such claim is
Bound to a volume that admits N. These functions decide each step; the
runtime (runtime/volume_binder.py) reads the caches, writes and waits.

* ``selection_step``: annotate the claim, or nothing to do, or refuse (it names another node);
* ``provisioning_check``: Bound there (done), still waiting, or failed, with a one-line reason;
* ``should_unselect``: after a failure, whether our annotation is to come off again.

Example: claim ``src`` annotated for n1 and still Pending is WAITING; once Bound
to a volume pinned to n1 it is BOUND; if the provisioner takes the annotation
off (its "reschedule" signal) it is FAILED at once, with
``the provisioner took the selected-node annotation off persistentvolumeclaim "src" ...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeAlias

from reference_scheduler.core import volume_binding
from reference_scheduler.core.volume_binding import is_being_deleted, is_bound, selected_node

Json: TypeAlias = Mapping[str, Any]
"""Json is a raw Kubernetes object: a claim, a volume or a node."""

DEFAULT_VOLUME_BINDING_TIMEOUT = 30.0
"""DEFAULT_VOLUME_BINDING_TIMEOUT is the default of ``--volume-binding-timeout``: seconds a bind waits for its claims."""

# One-line failure reasons of a bind whose volumes did not come; the runtime prefixes the node.

CLAIM_GONE_MESSAGE = 'persistentvolumeclaim "{claim}" was deleted while its volume was provisioned'
CLAIM_DELETING_MESSAGE = 'persistentvolumeclaim "{claim}" is being deleted'
SELECTION_REMOVED_MESSAGE = (
    'the provisioner took the selected-node annotation off persistentvolumeclaim "{claim}" (it cannot provision on node {node}; choosing again)'
)
SELECTED_ELSEWHERE_MESSAGE = 'persistentvolumeclaim "{claim}" selects node {selected}, not {node}'
BOUND_ELSEWHERE_MESSAGE = (
    'persistentvolumeclaim "{claim}" was bound to persistentvolume "{volume}", whose node affinity does not admit node {node}'
)
NODE_GONE_MESSAGE = "node {node} was deleted while the volumes were provisioned"
TIMED_OUT_MESSAGE = 'persistentvolumeclaim "{claim}" was not Bound within {timeout:g}s of selecting node {node}'


class ProvisionState(Enum):
    """ProvisionState is where one claim's provisioning for one node stands."""

    BOUND = "bound"  # Bound to a volume that admits the node: the pod may be bound
    WAITING = "waiting"
    FAILED = "failed"


@dataclass(frozen=True)
class ProvisionCheck:
    """ProvisionCheck is a claim's ProvisionState and, when FAILED, the one-line reason.

    Example: ``ProvisionCheck(ProvisionState.FAILED, 'persistentvolumeclaim "src" is being deleted')``.
    """

    state: ProvisionState
    failure: str = ""


BOUND = ProvisionCheck(ProvisionState.BOUND)
WAITING = ProvisionCheck(ProvisionState.WAITING)


def _failed(template: str, **fields: Any) -> ProvisionCheck:
    return ProvisionCheck(ProvisionState.FAILED, template.format(**fields))


def provisioning_check(
    claim_name: str, claim: Json | None, volume: Json | None, node: Json | None, node_name: str, *, fresh: bool = True
) -> ProvisionCheck:
    """provisioning_check says whether a claim selected for node ``node_name`` is Bound there yet (V2), or never will be (V4).

    ``claim`` is the claim as cached now (None: deleted), ``volume`` its
    ``spec.volumeName``'s volume (None: none yet, or not seen yet), ``node``
    the node object (None: deleted). A Bound claim whose volume is not seen yet
    is still WAITING: the volume's own event is on its way. ``fresh`` False
    says the cached claim is older than our own write of its annotation: it
    tells only whether the claim is Bound (claims never unbind), so anything
    else is WAITING until the cache catches up.

    Example: a claim annotated for n1, Pending, is WAITING; the same claim
    without the annotation is FAILED (the provisioner's reschedule signal);
    Bound to a volume pinned to n2 it is FAILED, naming the volume.
    """
    if node is None:
        return _failed(NODE_GONE_MESSAGE, node=node_name)
    if claim is not None and is_bound(claim) and not is_being_deleted(claim):
        if volume is None:
            return WAITING
        if volume_binding.pv_admits_node(volume, node):
            return BOUND
        meta = volume.get("metadata")
        volume_name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
        return _failed(BOUND_ELSEWHERE_MESSAGE, claim=claim_name, volume=volume_name, node=node_name)
    if not fresh:
        return WAITING
    if claim is None:
        return _failed(CLAIM_GONE_MESSAGE, claim=claim_name)
    if is_being_deleted(claim):
        return _failed(CLAIM_DELETING_MESSAGE, claim=claim_name)
    selected = selected_node(claim)
    if selected is None:
        return _failed(SELECTION_REMOVED_MESSAGE, claim=claim_name, node=node_name)
    if selected != node_name:
        return _failed(SELECTED_ELSEWHERE_MESSAGE, claim=claim_name, selected=selected, node=node_name)
    return WAITING


class SelectionStep(Enum):
    """SelectionStep is what selecting a node on a claim takes (``selection_step``)."""

    ANNOTATE = "annotate"  # unbound, no selected node yet: write the annotation
    NOTHING = "nothing"  # already selects this node, or already Bound: nothing to write
    REFUSE = "refuse"  # unbound and selects another node: never overwrite it


def selection_step(claim: Json, node_name: str) -> SelectionStep:
    """selection_step decides the write that makes a claim select ``node_name``.

    A claim already selecting another node is refused, not overwritten: another
    attempt (or scheduler) chose first, and the next attempt will see it.

    Example: Pending without the annotation: ANNOTATE; annotated n1, for n1:
    NOTHING; annotated n2, for n1: REFUSE; Bound: NOTHING (the wait checks its volume).
    """
    if is_bound(claim):
        return SelectionStep.NOTHING
    selected = selected_node(claim)
    if selected is None:
        return SelectionStep.ANNOTATE
    return SelectionStep.NOTHING if selected == node_name else SelectionStep.REFUSE


def should_unselect(claim: Json | None, node_name: str) -> bool:
    """should_unselect says a failed bind is to take the selected-node annotation off the claim (V4).

    Only off a claim that is still unbound and still names ``node_name``: one
    Bound meanwhile keeps its volume, and another node's selection is not ours.

    Example: Pending, annotated n1, for n1: True; annotated n2: False; Bound: False; deleted (None): False.
    """
    return claim is not None and not is_bound(claim) and selected_node(claim) == node_name


def selection_patch(node_name: str | None, resource_version: str) -> dict[str, Any]:
    """selection_patch is the JSON merge patch that sets (or, with None, removes) the selected-node annotation.

    The claim's resourceVersion makes it a compare-and-swap: a claim changed
    since it was read answers 409, and is read again.

    Example: ``selection_patch("n1", "42") == {"metadata": {"resourceVersion": "42",
    "annotations": {"volume.kubernetes.io/selected-node": "n1"}}}``.
    """
    return {"metadata": {"resourceVersion": resource_version, "annotations": {volume_binding.SELECTED_NODE_ANNOTATION: node_name}}}


def timed_out_message(claim_name: str, node_name: str, timeout: float) -> str:
    """timed_out_message is the failure of a wait that ran out (``--volume-binding-timeout``).

    Example: ``timed_out_message("src", "n1", 60) == 'persistentvolumeclaim "src" was not Bound within 60s of selecting node n1'``.
    """
    return TIMED_OUT_MESSAGE.format(claim=claim_name, node=node_name, timeout=timeout)
