"""reference_scheduler/deploy: the manifests parse, grant least privilege, and agree with the scheduler's flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from reference_scheduler.config import SchedulerConfig, parse_config

pytestmark = pytest.mark.unit

DEPLOY = Path(__file__).resolve().parents[2] / "reference_scheduler" / "deploy"
NAMESPACE = "tkn-scheduler"

Obj = dict[str, Any]


def load(name: str) -> list[Obj]:
    with open(DEPLOY / name, encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def one(docs: list[Obj], kind: str) -> Obj:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def container() -> Obj:
    deployment = one(load("deployment.yaml"), "Deployment")
    containers: list[Obj] = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def test_rbac_has_the_expected_objects() -> None:
    kinds = sorted(d["kind"] for d in load("rbac.yaml"))
    assert kinds == sorted(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"])
    account = one(load("rbac.yaml"), "ServiceAccount")["metadata"]
    assert (account["name"], account["namespace"]) == ("tkn-scheduler", NAMESPACE)


def test_no_rule_grants_a_wildcard() -> None:
    for doc in load("rbac.yaml"):
        for rule in doc.get("rules") or []:
            for key in ("verbs", "resources", "apiGroups"):
                assert "*" not in rule.get(key, []), f"{doc['kind']} {doc['metadata']['name']} grants {key} *"


def grants(rules: list[Obj]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def test_the_cluster_role_grants_what_the_scheduler_uses_and_no_deletes() -> None:
    granted = grants(one(load("rbac.yaml"), "ClusterRole")["rules"])
    for needed in [
        ("", "pods", "watch"),
        ("", "pods/binding", "create"),
        ("", "pods/status", "patch"),
        ("", "pods/resize", "patch"),
        ("", "events", "create"),
        ("events.k8s.io", "events", "create"),
        ("", "nodes", "list"),
        ("", "namespaces", "watch"),
        ("", "limitranges", "watch"),
        ("tekton.dev", "pipelineruns", "watch"),
        ("tekton.dev", "taskruns", "watch"),
        ("tekton.dev", "customruns", "watch"),
        ("tekton.dev", "tasks", "watch"),
        ("resolution.tekton.dev", "resolutionrequests", "list"),
        ("resolution.tekton.dev", "resolutionrequests", "watch"),
        ("node.k8s.io", "runtimeclasses", "watch"),
        ("", "configmaps", "watch"),
        ("rescon.dev", "reservationrecords", "create"),
        ("rescon.dev", "reservationrecords", "update"),
        ("rescon.dev", "reservationrecords/status", "update"),
        ("", "persistentvolumeclaims", "watch"),
        ("", "persistentvolumeclaims", "get"),
        ("", "persistentvolumeclaims", "patch"),
        ("", "persistentvolumes", "watch"),
        ("storage.k8s.io", "storageclasses", "watch"),
    ]:
        assert needed in granted, f"missing {needed}"
    assert not any(v in ("delete", "deletecollection", "escalate", "bind", "impersonate") for _, _, v in granted)
    assert not any(r == "secrets" for _, r, _ in granted)
    configmaps = [rule for rule in one(load("rbac.yaml"), "ClusterRole")["rules"] if "configmaps" in rule["resources"]]
    assert [rule.get("resourceNames") for rule in configmaps] == [["feature-flags", "config-defaults"]]  # Tekton's flags and defaults, no other ConfigMap
    assert ("", "pods", "patch") not in granted  # binding and status are subresources
    # Volumes are read; only a claim's selected-node annotation is written, by patch.
    assert {v for g, r, v in granted if r in ("persistentvolumeclaims", "persistentvolumes", "storageclasses")} == {"get", "list", "watch", "patch"}
    assert not any(r in ("persistentvolumes", "storageclasses") and v not in ("list", "watch") for _, r, v in granted)


def test_the_lease_role_is_namespaced_and_names_the_lease() -> None:
    docs = load("rbac.yaml")
    role = one(docs, "Role")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert grants(role["rules"]) == {
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "get"),
        ("coordination.k8s.io", "leases", "update"),
    }
    named = [rule for rule in role["rules"] if "get" in rule["verbs"] or "update" in rule["verbs"]]
    config = parse_config(container()["args"])
    assert all(rule.get("resourceNames") == [config.lease_name] for rule in named)
    for binding in (one(docs, "RoleBinding"), one(docs, "ClusterRoleBinding")):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "tkn-scheduler", "namespace": NAMESPACE}]


def test_the_deployment_runs_two_electing_replicas_with_the_right_account() -> None:
    docs = load("deployment.yaml")
    deployment = one(docs, "Deployment")
    assert deployment["metadata"]["namespace"] == NAMESPACE
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "tkn-scheduler"
    config = parse_config(container()["args"])  # the args are valid flags
    assert config.leader_elect is True
    assert config.lease_namespace == NAMESPACE
    assert config.bind_address == "0.0.0.0"


def test_probes_and_service_point_at_the_metrics_port() -> None:
    c = container()
    config = parse_config(c["args"])
    assert config.metrics_port == SchedulerConfig().metrics_port
    assert {"name": "metrics", "containerPort": config.metrics_port, "protocol": "TCP"} in c["ports"]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert c[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}, probe
    service = one(load("deployment.yaml"), "Service")
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"


def test_the_container_is_locked_down() -> None:
    deployment = one(load("deployment.yaml"), "Deployment")
    pod_security = deployment["spec"]["template"]["spec"]["securityContext"]
    assert pod_security["runAsNonRoot"] is True and pod_security["runAsUser"] != 0
    c = container()
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]


def test_the_image_runs_as_a_non_root_user_with_leader_election() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines()]
    assert [line for line in lines if line.startswith("FROM ")][-1] == "FROM python:3.11-slim"
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and not users[-1].startswith(("root", "0"))
    assert "--no-leader-elect" not in "\n".join(lines)
    assert 'ENTRYPOINT ["tkn-scheduler"]' in lines
