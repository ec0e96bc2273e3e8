"""Test namespaces: every object a test makes lives in a namespace of its own, labelled as the suite's.

The label is how a provider that does not own the cluster (`existing`) tells
what the suite made from what it found, and how a person finds leftovers:
`kubectl get ns -l rescon.dev/test=true`.
"""

from __future__ import annotations

import re
import uuid

import kubernetes

from harness.kube import Kube, present
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

TEST_NAMESPACE_LABEL = "rescon.dev/test"
#: The finalizer a fixture puts on a pod that a scenario holds Terminating (ScenarioRun.hold_terminating); deleting
#: the namespace takes it off first, so a scenario that failed with such a pod held never blocks its cleanup.
HOLD_TERMINATING_FINALIZER = "rescon.dev/hold-terminating"


def unique_name(prefix: str, text: str, *, limit: int = 40) -> str:
    """unique_name('it', 'test_held_task[x]') == 'it-held-task-x-1a2b3c': a DNS label, unique per call."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower().removeprefix("test_")).strip("-")
    suffix = uuid.uuid4().hex[:6]
    return f"{prefix}-{slug[: max(limit - len(prefix) - len(suffix) - 2, 1)].strip('-')}-{suffix}".replace("--", "-")


def create_test_namespace(kube: Kube, name: str, *, timeouts: TimeoutConfig) -> str:
    """create_test_namespace(kube, 'it-retry-x1') returns the name once pods can be created there.

    A namespace is usable only when the ServiceAccount controller has made its
    `default` ServiceAccount: a pod created before that is rejected.
    """
    kube.core.create_namespace(kubernetes.client.V1Namespace.model_validate({"metadata": {"name": name, "labels": {TEST_NAMESPACE_LABEL: "true"}}}))

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
        release_held_pods(kube, name)
        # Pods first, without grace: test pods hold nothing worth a graceful stop, and the
        # namespace controller alone takes far longer to empty a namespace.
        kube.core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
        kube.core.delete_namespace(name)
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise
    if wait:
        wait_namespaces_gone(kube, [name], timeouts=timeouts)


def hold_removal(finalizers: list[str] | None) -> list[dict[str, object]]:
    """hold_removal(['a', HOLD]) is the JSON patch that takes the suite's finalizer off, and only if it is still where it was read."""
    index = (finalizers or []).index(HOLD_TERMINATING_FINALIZER) if HOLD_TERMINATING_FINALIZER in (finalizers or []) else None
    if index is None:
        return []
    path = f"/metadata/finalizers/{index}"
    return [{"op": "test", "path": path, "value": HOLD_TERMINATING_FINALIZER}, {"op": "remove", "path": path}]


def release_pod_hold(kube: Kube, namespace: str, pod: str) -> None:
    """release_pod_hold() takes the suite's finalizer off one pod (a JSON patch: other finalizers stay); a pod already gone is fine."""
    try:
        patch = hold_removal(present(kube.core.read_namespaced_pod(pod, namespace).metadata).finalizers)
        if patch:
            kube.core.patch_namespaced_pod(pod, namespace, patch)
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise


def release_held_pods(kube: Kube, namespace: str) -> None:
    """release_held_pods() lets go of every pod of the namespace that the suite holds with its finalizer."""
    for pod in kube.core.list_namespaced_pod(namespace).items:
        meta = present(pod.metadata)
        if meta.name and HOLD_TERMINATING_FINALIZER in (meta.finalizers or []):
            release_pod_hold(kube, namespace, meta.name)


def wait_pods_gone(kube: Kube, name: str, *, timeouts: TimeoutConfig) -> None:
    """wait_pods_gone() returns once namespace `name` has no pods left.

    Call it before removing the nodes the pods ran on: a pod whose node is gone
    is only collected by the pod garbage collector, about 40 seconds later, and
    its namespace stays Terminating until then.
    """

    def no_pods() -> None:
        pods = kube.core.list_namespaced_pod(name).items
        if pods:
            listed = ", ".join(f"{present(p.metadata).name} ({present(p.status).phase})" for p in pods[:5])
            raise NotYet(f"namespace {name} still has {len(pods)} pod(s): {listed}")

    wait_for(no_pods, what=f"the pods of namespace {name} to be deleted", timeout="namespace_deleted", timeouts=timeouts)


def wait_namespaces_gone(kube: Kube, names: list[str], *, timeouts: TimeoutConfig) -> None:
    """wait_namespaces_gone() returns once none of `names` exists any more."""

    def gone() -> None:
        existing = {present(ns.metadata).name: present(ns.status).phase for ns in kube.core.list_namespace().items}
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
    return (present(namespace.metadata).labels or {}).get(TEST_NAMESPACE_LABEL) == "true"
