"""API writes per pod, counted by the kube-apiserver, the same instrument for every scheduler.

The benchmark runs every scheduler (the reference, kube-scheduler, a user's
`BENCH_SCHEDULER_CMD`) under one identity of its own: the ServiceAccount
`bench-identity/bench-scheduler`, bound to cluster-admin, whose token is in a
kubeconfig made for the benchmark. FlowSchemas that match only that identity
route its requests to a priority level of their own, one FlowSchema per kind of
request, so the API server's `apiserver_flowcontrol_dispatched_requests_total`
counts exactly the scheduler's requests, by category, whatever else writes to
the cluster at the same time (KWOK's node heartbeats, Tekton, the benchmark's
own client, which uses the admin identity and so is never counted).

Why not `apiserver_request_total`: it has no label for the client, so on a
shared cluster the scheduler's writes drown in KWOK's lease renewals (about a
hundred a second at 1000 nodes) and a binding-side pod status patch by KWOK
cannot be told from one by the scheduler.

The priority level is Limited with a large share (about 170 of the server's
600 seats) and queuing, so it never throttles a single scheduler; every
scheduler gets the same level, where outside the benchmark kube-scheduler would
run as `system:kube-scheduler` in `workload-high`.

Worked example (measured, BENCH_SCALE=smoke at c31b8a2): a backlog of 60 pods of
36 PipelineRuns. kube-scheduler bound 60 pods (60 `binding`) and wrote one
`Scheduled` event each (60 `events`): 2.0 writes per pod. The reference made
the same binds and events and 168 writes to its records (create, status,
claims): (60 + 60 + 168) / 60 = 4.8 writes per pod.

`reads` counts get and list, not watch: kube-scheduler's informers start
with a streaming watch, so it shows almost no reads; the reference's claim
reads show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

#: Where the identity lives; deleted with the benchmark's other objects at the end.
NAMESPACE = "bench-identity"
SERVICE_ACCOUNT = "bench-scheduler"
PRIORITY_LEVEL = "bench-scheduler"
FLOW_PREFIX = "bench-scheduler-"

MUTATING = ["create", "update", "patch", "delete", "deletecollection"]


@dataclass(frozen=True)
class Category:
    """Category is one FlowSchema: which of the scheduler's requests it counts.

    `write` says whether it counts towards "API writes per pod" (the reads are
    reported beside them). Categories match in the order listed (their
    matchingPrecedence), so `other-writes` takes what the ones before it left.
    """

    name: str
    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    write: bool = True


CATEGORIES = (
    Category("binding", ("create",), ("",), ("pods/binding",)),
    Category("pods", ("update", "patch"), ("",), ("pods", "pods/status")),
    Category("records", tuple(MUTATING), ("rescon.dev",), ("*",)),
    Category("events", tuple(MUTATING), ("", "events.k8s.io"), ("events",)),
    Category("leases", tuple(MUTATING), ("coordination.k8s.io",), ("leases",)),
    Category("other-writes", tuple(MUTATING), ("*",), ("*",)),
    Category("reads", ("get", "list"), ("*",), ("*",), write=False),
)

#: FlowSchema precedences: below the built-in ones that could match a ServiceAccount (kube-system
#: service accounts at 900, all service accounts at 9000), above `exempt` (1) which needs system:masters.
FIRST_PRECEDENCE = 60


def flow_schema_name(category: Category) -> str:
    """flow_schema_name(CATEGORIES[0]) == 'bench-scheduler-binding'."""
    return f"{FLOW_PREFIX}{category.name}"


def flow_schemas() -> list[dict[str, Any]]:
    """flow_schemas() is one FlowSchema per category, matching only the benchmark's scheduler identity."""
    subject = {"kind": "ServiceAccount", "serviceAccount": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}}
    out = []
    for index, category in enumerate(CATEGORIES):
        out.append({
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "FlowSchema",
            "metadata": {"name": flow_schema_name(category)},
            "spec": {
                "priorityLevelConfiguration": {"name": PRIORITY_LEVEL},
                "matchingPrecedence": FIRST_PRECEDENCE + index,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{
                    "subjects": [subject],
                    "resourceRules": [{
                        "verbs": list(category.verbs),
                        "apiGroups": list(category.api_groups),
                        "resources": list(category.resources),
                        "namespaces": ["*"],
                        "clusterScope": True,
                    }],
                }],
            },
        })
    return out


def priority_level() -> dict[str, Any]:
    """priority_level() is the Limited level the scheduler's requests go to (large share, queued, never rejected early)."""
    return {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": PRIORITY_LEVEL},
        "spec": {
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 100,
                "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 4, "queueLengthLimit": 500}},
            },
        },
    }


_SAMPLE = re.compile(r'^apiserver_flowcontrol_dispatched_requests_total\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)\s*$')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_dispatched(metrics_text: str) -> dict[str, float]:
    """parse_dispatched(the API server's /metrics) is {category: requests dispatched so far} for the benchmark's FlowSchemas.

    Example: the line
    `apiserver_flowcontrol_dispatched_requests_total{flow_schema="bench-scheduler-binding",priority_level="bench-scheduler"} 12`
    gives {'binding': 12.0}; other FlowSchemas' lines are ignored. A category
    with no line yet (nothing dispatched) is absent.
    """
    found: dict[str, float] = {}
    for line in metrics_text.splitlines():
        match = _SAMPLE.match(line)
        if not match:
            continue
        labels = dict(_LABEL.findall(match.group("labels")))
        schema = labels.get("flow_schema", "")
        if not schema.startswith(FLOW_PREFIX):
            continue
        category = schema[len(FLOW_PREFIX):]
        found[category] = found.get(category, 0.0) + float(match.group("value"))
    return found


@dataclass(frozen=True)
class Requests:
    """Requests is what the scheduler sent between two scrapes, by category, and per pod it bound."""

    by_category: Mapping[str, int]
    pods: int

    @property
    def writes(self) -> int:
        written = {c.name for c in CATEGORIES if c.write}
        return sum(n for name, n in self.by_category.items() if name in written)

    @property
    def writes_per_pod(self) -> float | None:
        """writes_per_pod: writes ÷ pods bound (None when no pod was bound)."""
        return self.writes / self.pods if self.pods else None

    def as_dict(self) -> dict[str, Any]:
        per_pod = {name: round(n / self.pods, 3) for name, n in self.by_category.items()} if self.pods else {}
        return {
            "by_category": dict(self.by_category),
            "pods": self.pods,
            "writes": self.writes,
            "writes_per_pod": None if self.writes_per_pod is None else round(self.writes_per_pod, 3),
            "per_pod_by_category": per_pod,
        }


def requests_between(before: Mapping[str, float], after: Mapping[str, float], *, pods: int) -> Requests:
    """requests_between({'binding': 10}, {'binding': 310, 'events': 300}, pods=300) counts 300 binds and 300 events: 2.0 writes per pod.

    Every category appears (0 when nothing was sent); a counter that went
    backwards (the API server restarted between the scrapes) raises.
    """
    counts: dict[str, int] = {}
    for category in CATEGORIES:
        delta = after.get(category.name, 0.0) - before.get(category.name, 0.0)
        if delta < 0:
            raise ValueError(f"the API server's counter for {category.name} went back from {before.get(category.name)} to {after.get(category.name)}: did it restart?")
        counts[category.name] = int(round(delta))
    return Requests(counts, pods)


def identity_kubeconfig(admin_kubeconfig: Mapping[str, Any], token: str) -> dict[str, Any]:
    """identity_kubeconfig(admin's kubeconfig, token) is a kubeconfig for the same server as the scheduler's identity.

    It keeps the admin kubeconfig's current cluster (server, CA) and replaces
    the user with the ServiceAccount token.
    """
    contexts = {c["name"]: c["context"] for c in admin_kubeconfig.get("contexts") or []}
    current = contexts.get(str(admin_kubeconfig.get("current-context"))) or next(iter(contexts.values()), None)
    if current is None:
        raise ValueError("the admin kubeconfig has no context")
    clusters = {c["name"]: c["cluster"] for c in admin_kubeconfig.get("clusters") or []}
    cluster = clusters[current["cluster"]]
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "bench", "cluster": dict(cluster)}],
        "users": [{"name": SERVICE_ACCOUNT, "user": {"token": token}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": SERVICE_ACCOUNT}}],
        "current-context": "bench",
    }


def write_kubeconfig(path: Path, admin_path: Path, token: str) -> Path:
    """write_kubeconfig() writes the identity's kubeconfig beside the benchmark's other files (mode 0600)."""
    admin = yaml.safe_load(admin_path.read_text())
    # The admin kubeconfig may name its CA by a relative path: make it absolute, from the admin file's directory.
    text = identity_kubeconfig(admin, token)
    cluster = text["clusters"][0]["cluster"]
    ca = cluster.get("certificate-authority")
    if ca and not Path(ca).is_absolute():
        cluster["certificate-authority"] = str((admin_path.parent / ca).resolve())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(text))
    path.chmod(0o600)
    return path


def identity_manifests() -> list[dict[str, Any]]:
    """identity_manifests() is what the benchmark applies for its scheduler identity, in apply order."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{NAMESPACE}-{SERVICE_ACCOUNT}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}],
        },
        priority_level(),
        *flow_schemas(),
    ]


def flow_schema_active(flow_schema: Mapping[str, Any]) -> bool:
    """flow_schema_active(a FlowSchema as read back) is True once the API server has taken it up (condition Dangling False)."""
    for condition in (flow_schema.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Dangling":
            return condition.get("status") == "False"
    return False
