"""Node readiness: hold one node NotReady, as a kubelet reporting Ready=False would, then let it go.

A node is NotReady when its Ready condition is False. Whoever plays its kubelet
writes Ready=True again at its next status write: on the local cluster KWOK's
`rescon-node-initialize` Stage answers a Ready=False within milliseconds (it
matches any node whose Ready is not True), and its heartbeat Stage rewrites
every condition every 20-45 s; on kind the kubelet does the same at its next
status update. KWOK reads its Stages only when it starts, and it manages every
node (`--manage-all-nodes`), so a Stage of our own cannot take one node out of
its hands on a running cluster.

hold_policy() does it at the API server instead: a ValidatingAdmissionPolicy,
bound to this one node by its `kubernetes.io/hostname` label, that refuses any
write leaving the node Ready=True. With it in force the harness writes
Ready=False through the status subresource; KWOK's answering patch is refused
(422, which KWOK does not retry: its Stage job ends there), and nothing else
writes Ready=True, so the node stays NotReady. Its Lease is still renewed, so
the node lifecycle controller (kube-controller-manager) sees a node that
reports NotReady, not one that went silent: it adds the taint
`node.kubernetes.io/not-ready:NoSchedule` on the node update, and
`:NoExecute` at its next monitor pass (pods tolerate that one for 300 s by
default), never Unknown.

Letting go: delete the policy, then touch the node (an annotation) until it is
Ready again, because KWOK acts on node events only and its last job was
refused; the kubelet on kind writes Ready=True at its next status update anyway.
"""

from __future__ import annotations

import copy
import time
from datetime import datetime, timezone
from typing import Any

import kubernetes

from harness.kube import Kube, json_object
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

Obj = dict[str, Any]

#: The taint the node lifecycle controller puts on a node whose Ready condition is False.
NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"
#: The reason the harness writes into the Ready=False condition.
HELD_REASON = "ResconHeldNotReady"
#: Touched on the node to make KWOK replay its Stages once the hold is lifted.
NUDGE_ANNOTATION = "rescon.dev/readiness-nudge"
ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1"
#: Refuses a write that leaves the node Ready=True (a node with no Ready condition yet passes).
KEEP_NOT_READY = "!has(object.status) || !has(object.status.conditions) || object.status.conditions.all(c, c.type != 'Ready' || c.status != 'True')"


def policy_name(node: str) -> str:
    """policy_name('pool-0') == 'rescon-not-ready-pool-0': the policy and its binding."""
    return f"rescon-not-ready-{node}"


def hold_policy(node: str) -> list[Obj]:
    """hold_policy('pool-0') is the ValidatingAdmissionPolicy and binding that keep node pool-0 from being Ready=True.

    It matches updates of `nodes` and `nodes/status` (KWOK's Stages and the
    kubelet patch the status subresource) of the node labelled
    `kubernetes.io/hostname: pool-0`; every other node passes unevaluated.
    """
    name = policy_name(node)
    policy = {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["nodes", "nodes/status"]}],
            },
            "validations": [{"expression": KEEP_NOT_READY, "message": f"rescon fault injection: node {node} is held NotReady"}],
        },
    }
    binding = {
        "apiVersion": ADMISSION_API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"objectSelector": {"matchLabels": {"kubernetes.io/hostname": node}}},
        },
    }
    return [policy, binding]


def ready_status(node: Obj) -> str | None:
    """ready_status(node) is its Ready condition's status ('True', 'False', 'Unknown'), or None without one."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return str(condition.get("status"))
    return None


def has_taint(node: Obj, key: str, effect: str) -> bool:
    """has_taint(node, 'node.kubernetes.io/not-ready', 'NoSchedule') says whether the node carries that taint."""
    return any(t.get("key") == key and t.get("effect") == effect for t in (node.get("spec") or {}).get("taints") or [])


def with_ready_false(node: Obj, *, now: str) -> Obj:
    """with_ready_false(node, now=...) is a copy of the node whose Ready condition is False (HELD_REASON); other conditions stay.

    Example: conditions [MemoryPressure False, Ready True] become
    [MemoryPressure False, Ready False (ResconHeldNotReady, since `now`)].
    """
    held = {
        "type": "Ready",
        "status": "False",
        "reason": HELD_REASON,
        "message": "the conformance suite holds this node NotReady",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }
    changed = copy.deepcopy(node)
    status = changed.setdefault("status", {})
    others = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
    status["conditions"] = [*others, held]
    return changed


def describe(node: Obj) -> str:
    """describe(node) == 'Ready=True, taints [rescon.dev/x:NoSchedule]': what a wait on readiness reports."""
    taints = [f"{t.get('key')}:{t.get('effect')}" for t in (node.get("spec") or {}).get("taints") or []]
    return f"Ready={ready_status(node)}, taints [{', '.join(taints)}]"


def _read(kube: Kube, node: str) -> Obj:
    return json_object(kube.api.sanitize_for_serialization(kube.core.read_node(node)))  # type: ignore[no-untyped-call]


def _refused(err: kubernetes.client.ApiException) -> bool:
    return err.status in (403, 422)


def hold_not_ready(kube: Kube, node: str, *, timeouts: TimeoutConfig) -> list[Obj]:
    """hold_not_ready(kube, 'pool-0', timeouts=t) makes the node NotReady and keeps it so; it returns the policy objects to delete.

    Two bounded waits (`node_readiness` each): the policy refuses Ready=True
    on the node (a server-side dry run of the node as it is); then the node
    reports Ready=False (written by the harness, again if it was changed
    meanwhile, 409) and carries the node lifecycle controller's not-ready
    NoSchedule taint.
    """
    docs = hold_policy(node)
    kube.apply_all(docs)

    def refuses() -> None:
        current = kube.core.read_node(node)
        try:
            kube.core.replace_node_status(node, current, dry_run="All")
        except kubernetes.client.ApiException as err:
            if _refused(err):
                return
            if err.status == 409:
                raise NotYet(f"node {node} changed during the dry run") from err
            raise
        raise NotYet(f"the hold policy does not refuse node {node} Ready=True yet ({describe(_read(kube, node))})")

    wait_for(refuses, what=f"the policy holding node {node} NotReady to take effect", timeout="node_readiness", timeouts=timeouts)

    def not_ready() -> None:
        current = _read(kube, node)
        if ready_status(current) != "False":
            now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            try:
                kube.core.replace_node_status(node, kubernetes.client.V1Node.model_validate(with_ready_false(current, now=now)))
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise
            raise NotYet(f"node {node} was {describe(current)}; Ready=False written")
        if not has_taint(current, NOT_READY_TAINT_KEY, "NoSchedule"):
            raise NotYet(f"node {node} is {describe(current)}: no {NOT_READY_TAINT_KEY}:NoSchedule taint yet")

    wait_for(not_ready, what=f"node {node} to be NotReady and tainted {NOT_READY_TAINT_KEY}", timeout="node_readiness", timeouts=timeouts,
             hint="is kube-controller-manager running? its node lifecycle controller adds the taint")
    return docs


def let_ready(kube: Kube, node: str, docs: list[Obj], *, timeouts: TimeoutConfig) -> None:
    """let_ready(kube, 'pool-0', docs, timeouts=t) deletes the hold policy and waits (`node_readiness`) for Ready=True without the not-ready taint."""
    for doc in reversed(docs):
        kube.delete(doc)

    def ready() -> None:
        current = _read(kube, node)
        if ready_status(current) != "True":
            # KWOK acts on node events only, and its last answer was refused: give it one more.
            kube.core.patch_node(node, {"metadata": {"annotations": {NUDGE_ANNOTATION: f"{time.time():.3f}"}}})
            raise NotYet(f"node {node} is {describe(current)}; touched it for its kubelet to report again")
        if has_taint(current, NOT_READY_TAINT_KEY, "NoSchedule"):
            raise NotYet(f"node {node} is {describe(current)}: the not-ready NoSchedule taint is still on")

    wait_for(ready, what=f"node {node} to be Ready again", timeout="node_readiness", timeouts=timeouts,
             hint="on the local cluster KWOK's rescon-node-initialize Stage makes it Ready")
