"""placement: whether a run's pods have anywhere to go, judged before the run is applied.

A pod that no node of the pool admits (its nodeSelector, its tolerations
against the nodes' NoSchedule and NoExecute taints, a cordon) or that asks for
more than any admitting node allocates would wait until `replay_run_done` runs
out, and say nothing about the scheduler. So replay names it first, as bad
input: the nodes given do not fit the pipelines given.

A task's pod template is the run's `taskRunTemplate.podTemplate` with its
`taskRunSpecs[]` entry's fields over it, field by field, as Tekton merges them
(`MergePodTemplateWithDefault`). Node affinity is not read here.

    >>> from harness.replay.nodes import NodeSpec
    >>> node = NodeSpec("w1", {"cpu": "4", "memory": "8Gi"}, {}, labels={"pool": "ci"}, taints=({"key": "ci", "effect": "NoSchedule"},))
    >>> admits(node, {"nodeSelector": {"pool": "ci"}, "tolerations": [{"key": "ci", "operator": "Exists"}]})
    True
    >>> admits(node, {"nodeSelector": {"pool": "ci"}})
    False
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.generative.pod_requests import contract_pod_request, contract_requests
from harness.quantities import Amount
from harness.replay.nodes import NodeSpec

#: Taint effects that keep a pod that does not tolerate them off a node.
REPELLING_EFFECTS = ("NoSchedule", "NoExecute")


def pod_template_for(run_spec: Mapping[str, Any], task: str) -> dict[str, Any]:
    """pod_template_for() is the pod template Tekton gives `task`'s pod: the run's, with the task's taskRunSpecs entry field by field over it."""
    template = dict(((run_spec.get("taskRunTemplate") or {}).get("podTemplate")) or {})
    for entry in run_spec.get("taskRunSpecs") or []:
        if entry.get("pipelineTaskName") == task:
            template.update(entry.get("podTemplate") or {})
    return template


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """tolerates() is Kubernetes' rule: an empty key with Exists tolerates every taint; else the key, the value (Equal) and the effect (if given) match."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration.get("key") == taint.get("key")
    return toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def admits(node: NodeSpec, pod_template: Mapping[str, Any], ignore_labels: Sequence[str] = ()) -> bool:
    """admits() is True when a pod of this template may go to the node: not cordoned, its labels match, its taints tolerated.

    `ignore_labels` are left out of the match: the pool's own label, which the node gets when it is made.
    """
    if node.unschedulable:
        return False
    selector = {k: v for k, v in (pod_template.get("nodeSelector") or {}).items() if k not in ignore_labels}
    if any(node.labels.get(key) != value for key, value in selector.items()):
        return False
    tolerations = pod_template.get("tolerations") or []
    repelling = [t for t in node.taints if t.get("effect") in REPELLING_EFFECTS]
    return all(any(tolerates(toleration, taint) for toleration in tolerations) for taint in repelling)


def task_request(task_spec: Mapping[str, Any], run_spec: Mapping[str, Any], task: str) -> Amount:
    """task_request() is one pod's request for the task (docs/contract.md section 6.1, with no LimitRange)."""
    entry: Mapping[str, Any] = next((e for e in run_spec.get("taskRunSpecs") or [] if e.get("pipelineTaskName") == task), {})
    return contract_pod_request(contract_requests(task_spec, entry, None))


def placement_problem(task: str, request: Amount, pod_template: Mapping[str, Any], nodes: Sequence[NodeSpec], *, ignore_labels: Sequence[str] = ()) -> str | None:
    """placement_problem() says why the task's pod cannot go to any node; None when some node admits it and has room for it.

    `ignore_labels` are labels every node of the pool has (the pool's own): not matched, and not shown.

    >>> nodes = [NodeSpec("w1", {"cpu": "4", "memory": "8Gi"}, {})]
    >>> placement_problem("build", Amount(6000, 2**30), {}, nodes)
    'task build asks 6000m CPU, 1024Mi, more than any node that admits it allocates (w1: 4000m CPU, 8192Mi)'
    """
    admitting = [node for node in nodes if admits(node, pod_template, ignore_labels)]
    if not admitting:
        selector = {k: v for k, v in (pod_template.get("nodeSelector") or {}).items() if k not in ignore_labels}
        return (f"no node admits task {task}'s pod (nodeSelector {selector or 'none'}, "
                f"{len(pod_template.get('tolerations') or [])} tolerations; nodes' taints and cordons)")
    if all(request.exceeds(node.size()) for node in admitting):
        largest = ", ".join(f"{node.name}: {node.size().describe()}" for node in admitting[:3])
        return f"task {task} asks {request.describe()}, more than any node that admits it allocates ({largest})"
    return None
