"""Holding a node NotReady (harness.cluster.node_readiness): the pure parts and the shape of the hold policy (its CEL rule runs only on a real API server)."""

from __future__ import annotations

from harness.cluster import node_readiness as nr

NOW = "2026-12-01T17:00:00Z"


def node(ready: str | None = "True", taints: list[dict[str, str]] | None = None) -> dict[str, object]:
    conditions = [{"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready, "reason": "KubeletReady"})
    return {"metadata": {"name": "pool-0"}, "spec": {"taints": taints or []}, "status": {"conditions": conditions}}


def test_ready_false_replaces_only_the_ready_condition() -> None:
    before = node()
    after = nr.with_ready_false(before, now=NOW)
    assert nr.ready_status(after) == "False"
    assert nr.ready_status(before) == "True", "the node read is left as it was"
    conditions = after["status"]["conditions"]  # type: ignore[index]
    assert [c["type"] for c in conditions] == ["MemoryPressure", "Ready"]
    assert conditions[1] == {
        "type": "Ready", "status": "False", "reason": nr.HELD_REASON, "message": "the conformance suite holds this node NotReady",
        "lastHeartbeatTime": NOW, "lastTransitionTime": NOW,
    }


def test_ready_false_adds_the_condition_to_a_node_without_one() -> None:
    assert nr.ready_status(nr.with_ready_false({"metadata": {"name": "n"}}, now=NOW)) == "False"
    assert nr.ready_status(node(None)) is None


def test_the_not_ready_taint_is_told_by_key_and_effect() -> None:
    tainted = node("False", [{"key": nr.NOT_READY_TAINT_KEY, "effect": "NoExecute"}])
    assert not nr.has_taint(tainted, nr.NOT_READY_TAINT_KEY, "NoSchedule")
    assert nr.has_taint(tainted, nr.NOT_READY_TAINT_KEY, "NoExecute")
    assert nr.describe(tainted) == "Ready=False, taints [node.kubernetes.io/not-ready:NoExecute]"


def test_the_policy_binds_to_one_node_and_refuses_its_status_writes() -> None:
    policy, binding = nr.hold_policy("pool-0")
    assert policy["kind"] == "ValidatingAdmissionPolicy" and binding["kind"] == "ValidatingAdmissionPolicyBinding"
    assert policy["metadata"]["name"] == binding["metadata"]["name"] == binding["spec"]["policyName"] == "rescon-not-ready-pool-0"
    assert binding["spec"]["matchResources"] == {"objectSelector": {"matchLabels": {"kubernetes.io/hostname": "pool-0"}}}
    assert binding["spec"]["validationActions"] == ["Deny"]
    rules = policy["spec"]["matchConstraints"]["resourceRules"]
    assert rules == [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["nodes", "nodes/status"]}]
    assert [v["expression"] for v in policy["spec"]["validations"]] == [nr.KEEP_NOT_READY]
