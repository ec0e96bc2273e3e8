"""Tekton Pipelines on a cluster without images: CRDs, ConfigMaps, and the controller as a local process.

Everything comes from the pinned module's own `config/` directory (read from the
Go module cache, never copied into this repository), with two changes that
running without Tekton's webhook needs: the CRDs' conversion webhook is
removed (we only use v1, the storage version), and the controller's image
flags get placeholder names, since no pod here pulls an image.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import kubernetes
import yaml

from harness.cluster.toolchain import Toolchain, program_named
from harness.errors import HarnessError
from harness.kube import Kube, json_object
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for

NAMESPACE = "tekton-pipelines"
MODULE = "github.com/tektoncd/pipeline"

#: Tekton checks the API server's version at start; ours is v1.37.2.
KUBERNETES_MIN_VERSION = "v1.28.0"

#: The feature-flags coschedule modes: ours (`disabled`) plus Tekton's own, run as baselines.
COSCHEDULE_MODES = ("disabled", "workspaces", "pipelineruns", "isolate-pipelinerun")

#: The six image flags; nothing pulls these names, but the controller refuses to start without them.
IMAGE_FLAGS = (
    "entrypoint-image",
    "nop-image",
    "sidecarlogresults-image",
    "workingdirinit-image",
    "shell-image",
    "shell-image-win",
)

#: knative's shared main always serves health probes on this port (not configurable in this
#: version), and the controller exits if it cannot listen there.
KNATIVE_HEALTH_PORT = 8080

#: ConfigMaps the controller looks up at start, by the env var that names each.
CONFIG_MAP_ENV = {
    "CONFIG_DEFAULTS_NAME": "config-defaults",
    "CONFIG_LOGGING_NAME": "config-logging",
    "CONFIG_OBSERVABILITY_NAME": "config-observability",
    "CONFIG_FEATURE_FLAGS_NAME": "feature-flags",
    "CONFIG_LEADERELECTION_NAME": "config-leader-election-controller",
    "CONFIG_SPIRE": "config-spire",
}


def version() -> str:
    return program_named("tekton-controller").version()


def module_dir(toolchain: Toolchain) -> Path:
    """module_dir() is the pinned Tekton module in the Go module cache, downloaded if missing."""
    program = program_named("tekton-controller")
    try:
        out = subprocess.run(
            [toolchain.go, "mod", "download", "-json", f"{MODULE}@{program.version()}"],
            cwd=program.module_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        ).stdout
    except subprocess.CalledProcessError as err:
        raise HarnessError(
            f"cannot download {MODULE}@{program.version()} into the Go module cache: {err.stderr.strip().splitlines()[-1:]}"
        ) from err
    directory = Path(json.loads(out)["Dir"])
    if not (directory / "config" / "300-crds").is_dir():
        raise HarnessError(f"{directory} has no config/300-crds: remove it from the Go module cache and retry")
    return directory


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    for doc in yaml.safe_load_all(path.read_text()):
        if isinstance(doc, dict) and doc.get("kind"):
            yield doc


def crd_manifests(config_dir: Path) -> list[dict[str, Any]]:
    """crd_manifests() are Tekton's CRDs with the conversion webhook removed (no webhook runs here)."""
    crds = []
    for path in sorted((config_dir / "300-crds").glob("*.yaml")):
        for doc in _documents(path):
            doc["spec"]["conversion"] = {"strategy": "None"}
            crds.append(doc)
    return crds


def feature_flags(coschedule: str) -> dict[str, str]:
    """feature_flags('disabled') are the feature-flags entries the harness sets over Tekton's defaults."""
    if coschedule not in COSCHEDULE_MODES:
        raise HarnessError(f"unknown coschedule mode {coschedule!r}: use one of {', '.join(COSCHEDULE_MODES)}")
    return {
        "coschedule": coschedule,
        # No sidecar injector runs here; with "true" Tekton would wait for a readiness annotation.
        "running-in-environment-with-injected-sidecars": "false",
        # Creds-init reads the ServiceAccount's secrets at pod creation; no credentials exist here.
        "disable-creds-init": "true",
    }


def config_maps(config_dir: Path, *, coschedule: str) -> list[dict[str, Any]]:
    """config_maps() are Tekton's own config-*.yaml ConfigMaps, with the harness's feature flags."""
    maps = []
    for path in sorted(config_dir.glob("config-*.yaml")):
        for doc in _documents(path):
            if doc["kind"] != "ConfigMap":
                continue
            doc["metadata"]["namespace"] = NAMESPACE
            if doc["metadata"]["name"] == "feature-flags":
                doc["data"] = {**(doc.get("data") or {}), **feature_flags(coschedule)}
            maps.append(doc)
    names = {m["metadata"]["name"] for m in maps}
    missing = sorted(set(CONFIG_MAP_ENV.values()) - names)
    if missing:
        raise HarnessError(f"{config_dir} lacks ConfigMaps {missing}: the pinned Tekton module is incomplete")
    return maps


def namespace_manifest() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def controller_argv(binary: Path, kubeconfig: Path) -> list[str]:
    argv = [str(binary), "-kubeconfig", str(kubeconfig), "-disable-ha"]
    for flag in IMAGE_FLAGS:
        argv += [f"-{flag}", f"rescon.invalid/tekton-placeholder/{flag.removesuffix('-image')}:{version()}"]
    return argv


def controller_env(base: Mapping[str, str], *, probes_port: int, metrics_port: int, profiling_port: int) -> dict[str, str]:
    """controller_env() is what the in-cluster Deployment would set, with free ports instead of fixed ones."""
    env = {
        **base,
        "SYSTEM_NAMESPACE": NAMESPACE,
        "KUBERNETES_MIN_VERSION": KUBERNETES_MIN_VERSION,
        "METRICS_DOMAIN": "tekton.dev/pipeline",
        "PROBES_PORT": str(probes_port),
        "METRICS_PORT": str(metrics_port),
        # knative's Prometheus exporter ignores METRICS_PORT and defaults to 9090, which
        # would make a second local cluster's controller (or anything on 9090) collide.
        "METRICS_PROMETHEUS_PORT": str(metrics_port),
        "PROFILING_PORT": str(profiling_port),
        **CONFIG_MAP_ENV,
    }
    env.pop("KUBECONFIG", None)
    return env


#: The label that marks the probe TaskRun used to see Tekton reconcile.
PROBE_LABEL = "rescon.dev/readiness-probe"


def probe_taskrun() -> dict[str, Any]:
    """probe_taskrun() is a TaskRun created cancelled: Tekton gives it a condition without ever making a pod."""
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "TaskRun",
        "metadata": {"generateName": "rescon-readiness-", "namespace": NAMESPACE, "labels": {PROBE_LABEL: "true"}},
        "spec": {
            "status": "TaskRunCancelled",
            "taskSpec": {"steps": [{"name": "noop", "image": "rescon.invalid/noop", "command": ["true"]}]},
        },
    }


def wait_reconciles(kube: Kube, *, timeouts: TimeoutConfig, check_alive: Callable[[], None] = lambda: None, hint: str = "") -> None:
    """wait_reconciles() returns once Tekton has reconciled a probe TaskRun, i.e. Tekton is really working.

    The probe is created inside the poll because, where Tekton's admission
    webhook runs (kind), creation fails until the webhook serves. check_alive()
    raises at once if the controller process has died.
    """
    created: list[str] = []

    def reconciled() -> None:
        check_alive()
        if not created:
            try:
                obj = json_object(kube.custom.create_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "taskruns", probe_taskrun()))
            except kubernetes.client.ApiException as err:
                if err.status >= 500:
                    raise NotYet(f"creating the probe TaskRun failed ({err.status} {err.reason}); is the webhook serving?") from err
                raise
            created.append(obj["metadata"]["name"])
        obj = json_object(kube.custom.get_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "taskruns", created[0]))
        if not (obj.get("status") or {}).get("conditions"):
            raise NotYet(f"TaskRun {NAMESPACE}/{created[0]} has no condition yet")

    try:
        wait_for(reconciled, what="Tekton to reconcile a probe TaskRun", timeout="tekton_ready", timeouts=timeouts, hint=hint)
    finally:
        kube.custom.delete_collection_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "taskruns", label_selector=PROBE_LABEL)
