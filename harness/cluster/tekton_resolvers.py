"""Tekton's remote resolvers on the local cluster: their namespace, ConfigMaps and process.

The process is tools/tekton/resolvers: upstream's five resolvers (cluster, git,
hub, bundles, http) from the pinned module, with knative's health probes off,
since the Tekton controller already holds their fixed port 8080 on this host.
Of the five, only the cluster resolver can answer here: git, hub and bundles
need a server or a registry that an offline local cluster does not have, and
fail their requests as they would on a cluster without egress.

The ConfigMaps are the module's own `config/resolvers/*.yaml`, unchanged; kind
installs the upstream Deployment from the same directory (harness.cluster.tekton_release).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import kubernetes

from harness.cluster.tekton import documents
from harness.errors import HarnessError
from harness.kube import Kube, json_object
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, WaitTimeout, wait_for

NAMESPACE = "tekton-pipelines-resolvers"
#: The process name of the resolvers, as the toolchain builds them and the cluster supervises them.
PROCESS = "tekton-resolvers"

RESOLUTION_GROUP = "resolution.tekton.dev"
RESOLUTION_VERSION = "v1beta1"
#: The label by which a resolver picks the ResolutionRequests it answers (resolution/common.LabelKeyResolverType).
RESOLVER_TYPE_LABEL = "resolution.tekton.dev/type"
PROBE_LABEL = "rescon.dev/readiness-probe"
#: The Task the probe asks the cluster resolver for; the probe creates it, and both go afterwards.
PROBE_TASK = "rescon-resolver-probe"

#: ConfigMaps the resolvers' Deployment names by env var; the others the resolvers find by their own names.
CONFIG_MAP_ENV = {
    "CONFIG_LOGGING_NAME": "config-logging",
    "CONFIG_OBSERVABILITY_NAME": "config-observability",
    "CONFIG_FEATURE_FLAGS_NAME": "feature-flags",
    "CONFIG_LEADERELECTION_NAME": "config-leader-election-resolvers",
}
#: The ConfigMaps without which the cluster resolver does not serve.
REQUIRED_CONFIG_MAPS = ("resolvers-feature-flags", "cluster-resolver-config", "config-logging", "config-leader-election-resolvers")


def namespace_manifest() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def config_maps(config_dir: Path) -> list[dict[str, Any]]:
    """config_maps(module/config) are the ConfigMaps of `config/resolvers/`, in the resolvers' namespace."""
    maps = []
    for path in sorted((config_dir / "resolvers").glob("*.yaml")):
        for doc in documents(path):
            if doc["kind"] == "ConfigMap":
                doc["metadata"]["namespace"] = NAMESPACE
                maps.append(doc)
    missing = sorted(set(REQUIRED_CONFIG_MAPS) - {m["metadata"]["name"] for m in maps})
    if missing:
        raise HarnessError(f"{config_dir}/resolvers lacks ConfigMaps {missing}: the pinned Tekton module is incomplete")
    return maps


def resolvers_argv(binary: Path, kubeconfig: Path) -> list[str]:
    return [str(binary), "-kubeconfig", str(kubeconfig), "-disable-ha"]


def resolvers_env(base: Mapping[str, str], *, metrics_port: int, profiling_port: int) -> dict[str, str]:
    """resolvers_env() is what the upstream Deployment sets, with free ports instead of fixed ones."""
    env = {
        **base,
        "SYSTEM_NAMESPACE": NAMESPACE,
        "KUBERNETES_MIN_VERSION": "v1.28.0",
        "METRICS_DOMAIN": "tekton.dev/resolution",
        "METRICS_PORT": str(metrics_port),
        "METRICS_PROMETHEUS_PORT": str(metrics_port),
        "PROFILING_PORT": str(profiling_port),
        **CONFIG_MAP_ENV,
    }
    env.pop("KUBECONFIG", None)
    return env


def probe_task(namespace: str = NAMESPACE) -> dict[str, Any]:
    """probe_task() is the smallest Task there is, for the probe to resolve.

    The probe asks for a Task that exists, not one that does not: v1.15's
    ResolutionRequest CRD requires `status.refSource` and `status.source`, which
    a failed resolution leaves null, so the resolver cannot mark a request
    failed (the API server refuses the update; measured on the local cluster).
    """
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "Task",
        "metadata": {"name": PROBE_TASK, "namespace": namespace, "labels": {PROBE_LABEL: "true"}},
        "spec": {"steps": [{"name": "noop", "image": "rescon.invalid/noop", "command": ["true"]}]},
    }


def probe_request(namespace: str = NAMESPACE) -> dict[str, Any]:
    """probe_request() asks the cluster resolver for the probe Task in `namespace`."""
    return {
        "apiVersion": f"{RESOLUTION_GROUP}/{RESOLUTION_VERSION}",
        "kind": "ResolutionRequest",
        "metadata": {
            "generateName": "rescon-resolver-probe-",
            "namespace": namespace,
            "labels": {RESOLVER_TYPE_LABEL: "cluster", PROBE_LABEL: "true"},
        },
        "spec": {
            "params": [
                {"name": "kind", "value": "task"},
                {"name": "name", "value": PROBE_TASK},
                {"name": "namespace", "value": namespace},
            ]
        },
    }


def answered(request: Mapping[str, Any]) -> bool:
    """answered(request) is True once a resolver has set the request's Succeeded condition to True or False."""
    for condition in (request.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Succeeded" and condition.get("status") in ("True", "False"):
            return True
    return False


def wait_resolves(
    kube: Kube, *, namespace: str = NAMESPACE, timeouts: TimeoutConfig, check_alive: Callable[[], None] = lambda: None, hint: str = ""
) -> None:
    """wait_resolves() returns once the cluster resolver has answered a probe ResolutionRequest made in `namespace`."""
    created: list[str] = []
    kube.apply(probe_task(namespace))

    def resolves() -> None:
        check_alive()
        if not created:
            try:
                obj = json_object(kube.custom.create_namespaced_custom_object(RESOLUTION_GROUP, RESOLUTION_VERSION, namespace, "resolutionrequests", probe_request(namespace)))
            except kubernetes.client.ApiException as err:
                if err.status >= 500:
                    raise NotYet(f"creating the probe ResolutionRequest failed ({err.status} {err.reason})") from err
                raise
            created.append(str(obj["metadata"]["name"]))
        obj = json_object(kube.custom.get_namespaced_custom_object(RESOLUTION_GROUP, RESOLUTION_VERSION, namespace, "resolutionrequests", created[0]))
        if not answered(obj):
            raise NotYet(f"ResolutionRequest {namespace}/{created[0]} for Task {PROBE_TASK} has no answer from the cluster resolver yet")

    try:
        wait_for(resolves, what="Tekton's cluster resolver to answer a probe ResolutionRequest", timeout="tekton_ready", timeouts=timeouts, hint=hint)
    finally:
        kube.custom.delete_collection_namespaced_custom_object(RESOLUTION_GROUP, RESOLUTION_VERSION, namespace, "resolutionrequests", label_selector=PROBE_LABEL)
        kube.delete(probe_task(namespace))


#: The fix named when a cluster's resolver does not answer.
NO_CLUSTER_RESOLVER_FIX = (
    "install Tekton's resolvers (Deployment tekton-pipelines-remote-resolvers in namespace tekton-pipelines-resolvers, "
    "part of Tekton's release.yaml) and keep enable-cluster-resolver: \"true\" in its ConfigMap resolvers-feature-flags"
)


def require_cluster_resolver(kube: Kube, namespace: str, *, timeouts: TimeoutConfig) -> None:
    """require_cluster_resolver() is a setup check, never a verdict: it fails naming the fix if the cluster resolver does not answer in `namespace`."""
    try:
        wait_resolves(kube, namespace=namespace, timeouts=timeouts)
    except WaitTimeout as err:
        raise HarnessError(f"Tekton's cluster resolver answers no ResolutionRequest in namespace {namespace}: {NO_CLUSTER_RESOLVER_FIX}") from err
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            raise
        raise HarnessError(f"this cluster has no ResolutionRequest API ({RESOLUTION_GROUP}/{RESOLUTION_VERSION}): install Tekton Pipelines v1 with its resolvers") from err
