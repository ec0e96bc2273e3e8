"""harness/audit/deploy: the in-cluster auditor's manifests parse, and its ClusterRole only reads (get, list, watch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.unit

DEPLOY = Path(__file__).resolve().parents[2] / "harness" / "audit" / "deploy"
READ_VERBS = {"get", "list", "watch"}

Obj = dict[str, Any]


def load(name: str) -> list[Obj]:
    with open(DEPLOY / name, encoding="utf-8") as handle:
        return [doc for doc in yaml.safe_load_all(handle) if doc is not None]


def test_the_rbac_has_a_service_account_a_cluster_role_and_its_binding() -> None:
    docs = {d["kind"]: d for d in load("rbac.yaml")}
    assert sorted(docs) == ["ClusterRole", "ClusterRoleBinding", "Namespace", "ServiceAccount"]
    binding = docs["ClusterRoleBinding"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": docs["ClusterRole"]["metadata"]["name"]}
    account = docs["ServiceAccount"]["metadata"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}]


def test_the_cluster_role_grants_only_get_list_watch_and_no_wildcard() -> None:
    roles = [d for d in load("rbac.yaml") if d["kind"] in ("ClusterRole", "Role")]
    assert len(roles) == 1
    for rule in roles[0]["rules"]:
        assert set(rule["verbs"]) <= READ_VERBS, f"{rule} grants {set(rule['verbs']) - READ_VERBS}"
        assert "*" not in rule["resources"] and "*" not in rule["apiGroups"]
        assert not any("/" in resource for resource in rule["resources"]), f"{rule} grants a subresource"


def test_the_cluster_role_reads_every_kind_the_auditor_calls() -> None:
    granted = {(group, resource) for rule in load("rbac.yaml")[2]["rules"] for group in rule["apiGroups"] for resource in rule["resources"]}
    assert granted == {
        ("", "pods"), ("", "nodes"), ("", "persistentvolumeclaims"), ("", "persistentvolumes"),
        ("tekton.dev", "pipelineruns"), ("tekton.dev", "taskruns"), ("tekton.dev", "customruns"), ("rescon.dev", "reservationrecords"),
    }


def test_claims_and_volumes_are_only_read_one_by_one() -> None:
    """The volume rules GET a claim, its volume and the record after a bind or a claim: no list, no watch."""
    verbs = {
        resource: set(rule["verbs"]) for rule in load("rbac.yaml")[2]["rules"] for resource in rule["resources"]
        if resource in ("persistentvolumeclaims", "persistentvolumes")
    }
    assert verbs == {"persistentvolumeclaims": {"get"}, "persistentvolumes": {"get"}}


def test_the_deployment_runs_rescon_audit_as_the_service_account() -> None:
    deployment = next(d for d in load("deployment.yaml") if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "rescon-audit" and deployment["metadata"]["namespace"] == "rescon-audit"
    container = pod["containers"][0]
    assert container["command"] == ["rescon", "audit"]
    assert any(arg.startswith("--scheduler-name=") for arg in container["args"])
    port = next(arg for arg in container["args"] if arg.startswith("--metrics-port="))
    assert int(port.split("=")[1]) == container["ports"][0]["containerPort"]
    assert deployment["spec"]["replicas"] == 1
