"""Tekton Pipelines on a cluster without images: CRDs, ConfigMaps, and the controller as a local process.

Everything comes from the pinned module's own `config/` directory (read from the
Go module cache, never copied into this repository), with two changes that
running without Tekton's webhook needs: the CRDs' conversion webhook is
removed (we only use v1, the storage version), and the controller's image
flags get placeholder names, since no pod here pulls an image.
"""

from __future__ import annotations

import hashlib
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

#: The controller's API client limits, as Tekton's own performance guide sets them
#: (docs/tekton-controller-performance-configuration.md in the module: "-kube-api-qps 50 -kube-api-burst 50", which
#: the controller doubles to 100 and 100). At the release's defaults (20 and 20 once doubled) the controller, not the
#: scheduler, paces a suite that runs eight scenarios at a time: in `make e2e` the waits for Tekton to create a task's
#: pod took 276 s in all against 58 s with these, and pytest 201.3 s against 179.4-182.7 s (docs/clusters.md).
CONTROLLER_CLIENT_FLAGS = ("-kube-api-qps", "50", "-kube-api-burst", "50")

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


def documents(path: Path) -> Iterator[dict[str, Any]]:
    """documents(path) are the manifests of one YAML file, skipping empty documents."""
    for doc in yaml.safe_load_all(path.read_text()):
        if isinstance(doc, dict) and doc.get("kind"):
            yield doc


def crd_manifests(config_dir: Path) -> list[dict[str, Any]]:
    """crd_manifests() are Tekton's CRDs with the conversion webhook removed (no webhook runs here)."""
    crds = []
    for path in sorted((config_dir / "300-crds").glob("*.yaml")):
        for doc in documents(path):
            doc["spec"]["conversion"] = {"strategy": "None"}
            crds.append(doc)
    return crds


def feature_flags(coschedule: str, *, injected_sidecars: bool = True) -> dict[str, str]:
    """feature_flags('disabled') are the feature-flags entries the harness sets over Tekton's defaults.

    injected_sidecars=True leaves `running-in-environment-with-injected-sidecars` at Tekton's default
    ("true", as operators install it: each pod is created without Tekton's readiness annotation, and Tekton
    adds it once the pod runs); False sets it "false", so the first step starts at once.
    """
    if coschedule not in COSCHEDULE_MODES:
        raise HarnessError(f"unknown coschedule mode {coschedule!r}: use one of {', '.join(COSCHEDULE_MODES)}")
    flags = {
        "coschedule": coschedule,
        # Creds-init reads the ServiceAccount's secrets at pod creation; no credentials exist here.
        "disable-creds-init": "true",
    }
    if not injected_sidecars:
        flags["running-in-environment-with-injected-sidecars"] = "false"
    return flags


def config_maps(config_dir: Path, *, coschedule: str) -> list[dict[str, Any]]:
    """config_maps() are Tekton's own config-*.yaml ConfigMaps, with the harness's feature flags."""
    maps = []
    for path in sorted(config_dir.glob("config-*.yaml")):
        for doc in documents(path):
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
    argv = [str(binary), "-kubeconfig", str(kubeconfig), "-disable-ha", *CONTROLLER_CLIENT_FLAGS]
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


# --- which coschedule mode Tekton acts on: a probe PipelineRun shows it ---

#: The TaskRun annotation that names a task's affinity assistant (tektoncd/pipeline v1.15.0,
#: workspace.AnnotationAffinityAssistantName); Tekton writes it when it creates the TaskRun.
AFFINITY_ASSISTANT_ANNOTATION = "pipeline.tekton.dev/affinity-assistant"
#: The probe PipelineRun's workspace; its PVC never exists, and its pods select no node.
COSCHEDULE_PROBE_WORKSPACE = "probe"


def affinity_assistant_name(workspace: str, pipelinerun: str) -> str:
    """affinity_assistant_name('source', 'build-x') is Tekton's name for that assistant.

    GetAffinityAssistantName in pkg/reconciler/pipelinerun/affinity_assistant.go:
    `affinity-assistant-` and the first 10 hex digits of sha256(workspace + run);
    the per-PipelineRun modes pass workspace ''.
    """
    return "affinity-assistant-" + hashlib.sha256((workspace + pipelinerun).encode()).hexdigest()[:10]


def observed_coschedule(pipelinerun: str, annotation: str | None, required_anti_affinity: bool | None) -> str | None:
    """observed_coschedule(run, the TaskRun's assistant annotation, its StatefulSet's kind of anti-affinity) is the mode Tekton used.

    No annotation: `disabled`. The per-workspace name of the probe's workspace:
    `workspaces`. The per-PipelineRun name: `isolate-pipelinerun` if the
    assistant repels the others by a required term, `pipelineruns` if by a
    preferred one; None while its StatefulSet is not there to tell.
    """
    if not annotation:
        return "disabled"
    if annotation == affinity_assistant_name(COSCHEDULE_PROBE_WORKSPACE, pipelinerun):
        return "workspaces"
    if annotation == affinity_assistant_name("", pipelinerun):
        if required_anti_affinity is None:
            return None
        return "isolate-pipelinerun" if required_anti_affinity else "pipelineruns"
    raise HarnessError(f"Tekton named the probe's affinity assistant {annotation!r}, which no coschedule mode gives run {pipelinerun}")


def coschedule_probe() -> dict[str, Any]:
    """coschedule_probe() is a PipelineRun whose TaskRun shows which coschedule mode Tekton acts on.

    Its one workspace is a PVC, so every mode but `disabled` gives it an
    affinity assistant; its pods select no node, so nothing ever runs.
    """
    nowhere = {"nodeSelector": {"rescon.dev/pool": "rescon-coschedule-probe-nowhere"}}
    return {
        "apiVersion": "tekton.dev/v1",
        "kind": "PipelineRun",
        "metadata": {"generateName": "rescon-coschedule-", "namespace": NAMESPACE, "labels": {PROBE_LABEL: "true"}},
        "spec": {
            "pipelineSpec": {
                "workspaces": [{"name": COSCHEDULE_PROBE_WORKSPACE}],
                "tasks": [
                    {
                        "name": "probe",
                        "workspaces": [{"name": "w", "workspace": COSCHEDULE_PROBE_WORKSPACE}],
                        "taskSpec": {"workspaces": [{"name": "w"}], "steps": [{"name": "noop", "image": "rescon.invalid/noop", "command": ["true"]}]},
                    }
                ],
            },
            "workspaces": [{"name": COSCHEDULE_PROBE_WORKSPACE, "persistentVolumeClaim": {"claimName": "rescon-coschedule-probe"}}],
            "taskRunTemplate": {"podTemplate": nowhere},
        },
    }


def wait_coschedule(kube: Kube, mode: str, *, timeouts: TimeoutConfig, check_alive: Callable[[], None] = lambda: None, hint: str = "") -> None:
    """wait_coschedule(kube, 'workspaces') returns once Tekton runs new PipelineRuns in that coschedule mode.

    Tekton reads feature-flags through an informer, and decides a run's
    assistants once, at its first reconcile: a run created right after the
    ConfigMap changed can still get the old mode (measured: for about 15 s after
    a switch to `workspaces`, scenarios got no assistant). So a probe
    PipelineRun is created, read and, while it shows another mode, deleted and
    made again.
    """
    created: list[str] = []
    apps = kubernetes.client.AppsV1Api(kube.api)

    def acts_on_mode() -> None:
        check_alive()
        if not created:
            obj = json_object(kube.custom.create_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", coschedule_probe()))
            created.append(str(obj["metadata"]["name"]))
        run = created[0]
        taskruns = json_object(kube.custom.list_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "taskruns", label_selector=f"tekton.dev/pipelineRun={run}"))["items"]
        if not taskruns:
            raise NotYet(f"probe PipelineRun {run} has no TaskRun yet")
        annotation = (taskruns[0]["metadata"].get("annotations") or {}).get(AFFINITY_ASSISTANT_ANNOTATION)
        required: bool | None = None
        if annotation:
            try:
                statefulset = apps.read_namespaced_stateful_set(annotation, NAMESPACE)
            except kubernetes.client.ApiException as err:
                if err.status != 404:
                    raise
            else:
                affinity = statefulset.spec.template.spec.affinity if statefulset.spec and statefulset.spec.template.spec else None
                anti = affinity.pod_anti_affinity if affinity else None
                required = bool(anti and anti.required_during_scheduling_ignored_during_execution)
        seen = observed_coschedule(run, annotation, required)
        if seen is None:
            raise NotYet(f"probe PipelineRun {run}: the StatefulSet of affinity assistant {annotation} is not there yet")
        if seen != mode:
            kube.custom.delete_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", run)
            created.clear()
            raise NotYet(f"Tekton still runs new PipelineRuns with coschedule {seen}")

    try:
        wait_for(acts_on_mode, what=f"Tekton to run new PipelineRuns with coschedule {mode}", timeout="tekton_ready", timeouts=timeouts, hint=hint)
    finally:
        kube.custom.delete_collection_namespaced_custom_object("tekton.dev", "v1", NAMESPACE, "pipelineruns", label_selector=PROBE_LABEL)
