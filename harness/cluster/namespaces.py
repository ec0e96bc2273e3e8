"""Test namespaces: every object a test makes lives in a namespace of its own, labelled as the suite's.

The label is how a provider that does not own the cluster (`existing`) tells
what the suite made from what it found, and how a person finds leftovers:
`kubectl get ns -l rescon.dev/test=true`.
"""

from __future__ import annotations

import kubernetes

from harness.kube import Kube
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

TEST_NAMESPACE_LABEL = "rescon.dev/test"


def create_test_namespace(kube: Kube, name: str, *, timeouts: TimeoutConfig) -> str:
    """create_test_namespace(kube, 'it-retry-x1') returns the name once pods can be created there.

    A namespace is usable only when the ServiceAccount controller has made its
    `default` ServiceAccount: a pod created before that is rejected.
    """
    kube.core.create_namespace({"metadata": {"name": name, "labels": {TEST_NAMESPACE_LABEL: "true"}}})

    def default_service_account() -> None:
        try:
            kube.core.read_namespaced_service_account("default", name)
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                raise NotYet(f"namespace {name} has no ServiceAccount 'default' yet") from err
            raise

    wait_for(
        default_service_account,
        what=f"namespace {name} to be usable",
        timeout="namespace_ready",
        timeouts=timeouts,
        hint="is kube-controller-manager running?",
    )
    return name


def delete_test_namespace(kube: Kube, name: str, *, timeouts: TimeoutConfig, wait: bool = True) -> None:
    """delete_test_namespace() deletes the namespace and, with wait=True, waits until it is gone; idempotent.

    The namespace controller takes about ten seconds to empty a namespace, so a
    test suite deletes without waiting and awaits all its namespaces once, at the end.
    """
    try:
        kube.core.delete_namespace(name)
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise
    if wait:
        wait_namespaces_gone(kube, [name], timeouts=timeouts)


def wait_namespaces_gone(kube: Kube, names: list[str], *, timeouts: TimeoutConfig) -> None:
    """wait_namespaces_gone() returns once none of `names` exists any more."""

    def gone() -> None:
        existing = {ns.metadata.name: ns.status.phase for ns in kube.core.list_namespace().items}
        left = [f"{name} ({existing[name]})" for name in names if name in existing]
        if left:
            raise NotYet(f"namespaces still exist: {', '.join(left)}")

    wait_for(
        gone,
        what=f"{len(names)} namespace(s) to be deleted",
        timeout="namespace_deleted",
        timeouts=timeouts,
        hint="look for objects with finalizers: kubectl get all -n <namespace>",
    )


def is_test_namespace(kube: Kube, name: str) -> bool:
    """is_test_namespace() says whether `name` exists and carries the suite's label."""
    try:
        namespace = kube.core.read_namespace(name)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return False
        raise
    return (namespace.metadata.labels or {}).get(TEST_NAMESPACE_LABEL) == "true"
