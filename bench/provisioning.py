"""The volumes mix's figures: a claim provisioned on the node chosen for its run, and what that adds to a pod's scheduling.

Each PipelineRun of the `volumes` mix (bench/workload.py) has a claim of its
own, of the cluster's default class (WaitForFirstConsumer). Its first pod's
scheduling goes: the pod is seen; a scheduler chooses a node and annotates the
claim `volume.kubernetes.io/selected-node` (ClaimTrace.selected); the
provisioner makes the volume on that node and the PV controller binds the claim
(ClaimTrace.bound); the scheduler sees the claim Bound and binds the pod. Only
the middle step is the provisioner's. So, per run's first pod:

    creation → bound  =  pod → selected-node  +  selected-node → Bound  +  Bound → pod bound
                          (the scheduler)        (the provisioner)          (the scheduler)

and the attempt's added cost, `added`, is the two scheduler steps: creation →
bound less the provisioning it waited for. Example: a pod seen at 10.00 s, its
claim annotated at 10.03 s and Bound at 12.03 s, the pod bound at 12.05 s: 2.05 s
creation → bound, 2.00 s provisioning, 0.05 s added (0.03 before the
annotation, 0.02 after the claim was Bound).

Pure: every stamp comes from the benchmark's watches (bench/observe.py), the
pods' and the claims' with the same clock.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from bench import metrics
from bench.observe import ClaimTrace, PodTrace


def spread(values: Iterable[float]) -> dict[str, float]:
    """spread([0.1, 0.3]) is metrics.Latency's fields of those durations (seconds): count, p50, p90, p99, max."""
    return metrics.latency((0.0, value) for value in values).as_dict()


def summarise_provisioning(pods: Iterable[PodTrace], claims: Iterable[ClaimTrace], claim_of_run: Mapping[str, str]) -> dict[str, Any]:
    """summarise_provisioning(pod traces, claim traces, {run: its claim}) is the volumes part of a run's result.

    `selected_to_bound`: each claim's selected-node → Bound; `first_pod_latency`:
    each run's first pod (the first seen) creation → bound; `added`: that less
    its claim's selected-node → Bound, split into `pod_to_selected` and
    `claim_bound_to_pod_bound`; `later_pod_latency`: the run's other pods
    (a fan-out's second and third), which wait for the same claim.
    `pods_off_claim_node` counts pods bound elsewhere than their claim's node
    (none, unless a scheduler ignored the annotation); `unselected` sums the
    claims' lost annotations.
    """
    by_name = {claim.name: claim for claim in claims}
    by_run: dict[str, list[PodTrace]] = {}
    for pod in pods:
        if pod.run in claim_of_run and pod.added is not None:
            by_run.setdefault(pod.run, []).append(pod)
    first_latency: list[float] = []
    added: list[float] = []
    before: list[float] = []
    after: list[float] = []
    later: list[float] = []
    off_node = 0
    for run, claim_name in sorted(claim_of_run.items()):
        claim = by_name.get(claim_name)
        run_pods = sorted(by_run.get(run, []), key=lambda pod: pod.added or 0.0)
        for pod in run_pods:
            if pod.bound is not None and claim is not None and claim.node is not None and pod.node != claim.node:
                off_node += 1
        later += [pod.bound - pod.added for pod in run_pods[1:] if pod.bound is not None and pod.added is not None]
        first = run_pods[0] if run_pods else None
        if first is None or first.bound is None or first.added is None:
            continue
        first_latency.append(first.bound - first.added)
        if claim is not None and claim.selected is not None and claim.bound is not None:
            added.append(first.bound - first.added - (claim.bound - claim.selected))
            before.append(claim.selected - first.added)
            after.append(first.bound - claim.bound)
    ours = [by_name[name] for name in sorted(set(claim_of_run.values())) if name in by_name]
    return {
        "claims": len(set(claim_of_run.values())),
        "claims_selected": sum(1 for claim in ours if claim.selected is not None),
        "claims_bound": sum(1 for claim in ours if claim.bound is not None),
        "nodes_selected": len({claim.node for claim in ours if claim.node}),
        "unselected": sum(claim.unselected for claim in ours),
        "pods_off_claim_node": off_node,
        "selected_to_bound": spread(c.bound - c.selected for c in ours if c.bound is not None and c.selected is not None),
        "first_pod_latency": spread(first_latency),
        "added": spread(added),
        "pod_to_selected": spread(before),
        "claim_bound_to_pod_bound": spread(after),
        "later_pod_latency": spread(later),
        "claims_detail": [claim.as_dict() for claim in ours],
    }
