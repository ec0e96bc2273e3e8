"""The kind provider without Docker: its command lines, its config, and the pinned Tekton manifest handling."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cluster import kind, node_image, tekton, tekton_release
from harness.cluster.kind import KIND_CONFIG, NODE_IMAGE, KindProvider, existing_cluster_action, resolve_kind_bin
from harness.cluster.slot_pools import POOL_SLOT_LABEL
from harness.cluster.toolchain import program_named
from harness.errors import HarnessError
from harness.timeouts import DEFAULT_TIMEOUTS

pytestmark = pytest.mark.unit


# --- the cluster's shape and pins ---


def test_kind_config_has_one_control_plane_and_twelve_slot_workers() -> None:
    config = yaml.safe_load(KIND_CONFIG.read_text())
    assert config["kind"] == "Cluster" and config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    roles = [node["role"] for node in config["nodes"]]
    assert roles == ["control-plane"] + ["worker"] * 12
    slots = [node.get("labels", {}).get(POOL_SLOT_LABEL) for node in config["nodes"] if node["role"] == "worker"]
    assert slots == [str(n) for n in range(12)]  # strings: kind rejects numbers as label values


def test_kind_has_a_slot_worker_for_every_node_of_the_largest_pool() -> None:
    from tests.unit.test_scenario_catalogue import SCENARIOS

    config = yaml.safe_load(KIND_CONFIG.read_text())
    workers = sum(1 for node in config["nodes"] if node["role"] == "worker")
    largest = max(SCENARIOS, key=lambda item: item[1].pool.count)[1]
    assert workers >= largest.pool.count, f"{largest.name} asks for {largest.pool.count} nodes; kind-config.yaml offers {workers} workers"


def test_node_image_runs_the_local_clusters_kubernetes_minor() -> None:
    repository, _, tag = NODE_IMAGE.partition(":")
    assert repository == "kindest/node"
    local_minor = ".".join(program_named("kube-apiserver").version().split(".")[:2])
    assert tag.split("@")[0].startswith(local_minor + ".")


def test_tekton_release_is_the_version_the_local_cluster_builds() -> None:
    assert tekton_release.TEKTON_VERSION == tekton.version() == "v1.15.0"
    assert tekton_release.RELEASE_URL.startswith("https://")
    assert f"/{tekton_release.TEKTON_VERSION}/release.yaml" in tekton_release.RELEASE_URL


# --- the kind binary and the container runtime ---


def _executable(path: Path, body: str = "exit 0") -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_kind_bin_is_the_explicit_path_or_kind_on_path(tmp_path: Path) -> None:
    explicit = _executable(tmp_path / "kind-v0.99")
    assert resolve_kind_bin(explicit) == explicit
    assert resolve_kind_bin(None, which=lambda name: f"/usr/bin/{name}") == Path("/usr/bin/kind")


def test_missing_kind_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"kind is not on PATH: .*--kind-bin"):
        resolve_kind_bin(None, which=lambda name: None)
    with pytest.raises(HarnessError, match=r"--kind-bin .* is not an executable file"):
        resolve_kind_bin(tmp_path / "absent")


def test_a_stopped_docker_is_one_line_naming_the_alternative(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _executable(tmp_path / "docker", 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock" >&2; exit 1')
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KIND_EXPERIMENTAL_PROVIDER", raising=False)
    with pytest.raises(HarnessError, match=r"docker is not running \(Cannot connect to the Docker daemon.*\): start it, or .*--cluster local"):
        KindProvider().require_container_runtime()


# --- command lines, captured instead of run ---


class Recorder:
    """Recorder stands in for subprocess.run/check_output: it records argv and plays a kind with given clusters."""

    def __init__(self, clusters: list[str]) -> None:
        self.clusters = clusters
        self.node_images: list[str] = []
        self.calls: list[list[str]] = []

    def run(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append([str(a) for a in argv])
        if argv[1:3] == ["ps", "-a"]:
            return subprocess.CompletedProcess(argv, 0, stdout="".join(f"{image}\n" for image in self.node_images), stderr="")
        if argv[1:3] == ["delete", "cluster"]:
            name = next(str(a).split("=", 1)[1] for a in argv if str(a).startswith("--name="))
            self.clusters = [c for c in self.clusters if c != name]
        if argv[1:3] == ["create", "cluster"]:
            kubeconfig = next(a.split("=", 1)[1] for a in argv if str(a).startswith("--kubeconfig="))
            Path(kubeconfig).write_text(yaml.safe_dump(_kubeconfig()))
        return subprocess.CompletedProcess(argv, 0, stdout="\n".join(self.clusters) + "\n", stderr="")

    def check_output(self, argv: list[str], **kwargs: Any) -> str:
        self.calls.append([str(a) for a in argv])
        return "\n".join(self.clusters) + "\n"


def _kubeconfig() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kind", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "kind", "user": {"token": "x"}}],
        "contexts": [{"name": "kind", "context": {"cluster": "kind", "user": "kind"}}],
        "current-context": "kind",
    }


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Recorder:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # KindCluster makes .pytest-kind/ in the working directory
    recorder = Recorder(clusters=[])
    monkeypatch.setattr(subprocess, "run", recorder.run)
    monkeypatch.setattr(subprocess, "check_output", recorder.check_output)
    return recorder


def _provider(**kwargs: Any) -> tuple[KindProvider, Path]:
    provider = KindProvider(name="rescon-unit", **kwargs)
    provider.node_image_name = NODE_IMAGE
    return provider, provider.write_config()


def test_create_passes_our_image_config_and_kubeconfig(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind")
    provider, config = _provider()
    provider.create_cluster(kind_bin, config)
    create = next(call for call in recorder.calls if call[1:3] == ["create", "cluster"])
    assert create[0] == str(kind_bin)
    assert "--name=rescon-unit" in create
    assert f"--kubeconfig={provider.kubeconfig}" in create
    assert f"--image={NODE_IMAGE}" in create
    assert create[create.index("--config") + 1] == str(config)
    written = yaml.safe_load(config.read_text())
    assert written["nodes"] == yaml.safe_load(KIND_CONFIG.read_text())["nodes"]
    assert provider.kubeconfig.is_relative_to(tmp_path / "cache")  # never ~/.kube/config
    assert provider.created_cluster


def test_an_occupied_cluster_name_is_refused_in_one_line(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind")
    recorder.clusters.append("rescon-unit")
    provider, config = _provider()
    with pytest.raises(HarnessError, match=r"kind cluster named rescon-unit already exists .*kind delete cluster --name rescon-unit.*--kind-name"):
        provider.create_cluster(kind_bin, config)
    assert not [call for call in recorder.calls if call[1:3] == ["create", "cluster"]]


def test_a_cluster_an_earlier_session_left_with_another_config_is_made_anew(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind")
    recorder.clusters.append("rescon-unit")
    provider, config = _provider()
    provider.marker.write_text(json.dumps({"image": NODE_IMAGE, "config": "the sha-256 of another checkout's kind-config"}))
    provider.create_cluster(kind_bin, config)
    verbs = [call[1:3] for call in recorder.calls if call[1:3] in (["delete", "cluster"], ["create", "cluster"])]
    assert verbs == [["delete", "cluster"], ["create", "cluster"]]
    assert json.loads(provider.marker.read_text())["config"] != "the sha-256 of another checkout's kind-config"
    assert provider.created_cluster


def test_a_cluster_of_offline_nodes_with_no_marker_is_made_anew(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind")
    recorder.clusters.append("rescon-unit")
    recorder.node_images = [f"{node_image.REPOSITORY}:v1.37.2-0123456789ab"] * 3  # a session killed before it wrote its marker
    provider, config = _provider()
    provider.create_cluster(kind_bin, config)
    assert [call[1:3] for call in recorder.calls if call[1:3] in (["delete", "cluster"], ["create", "cluster"])] == [
        ["delete", "cluster"],
        ["create", "cluster"],
    ]


@pytest.mark.parametrize(
    ("recorded", "has_kubeconfig", "node_images", "action"),
    [
        ({"image": "i", "config": "c"}, True, [], "reuse"),
        ({"image": "i", "config": "c"}, False, [], "replace"),
        ({"image": "i", "config": "other"}, True, ["kindest/node:v1.37.0"], "replace"),
        (None, True, [f"{node_image.REPOSITORY}:v1.37.2-x", f"{node_image.REPOSITORY}:v1.37.2-x"], "replace"),
        (None, True, [f"{node_image.REPOSITORY}:v1.37.2-x", "kindest/node:v1.37.0"], "refuse"),
        (None, True, ["kindest/node:v1.37.0"], "refuse"),
        (None, True, [], "refuse"),
    ],
)
def test_existing_cluster_action(recorded: dict[str, str] | None, has_kubeconfig: bool, node_images: list[str], action: str) -> None:
    identity = {"image": "i", "config": "c"}
    assert existing_cluster_action(recorded=recorded, identity=identity, has_kubeconfig=has_kubeconfig, node_images=node_images) == action


def test_a_cluster_another_live_session_holds_is_refused_in_one_line(recorder: Recorder) -> None:
    first, _ = _provider()
    second, _ = _provider()
    first.hold_cluster_lock()
    with pytest.raises(HarnessError, match=rf"kind cluster rescon-unit is in use by another suite session \(pid {os.getpid()}, .*--kind-name OTHER"):
        second.hold_cluster_lock()
    first.down()  # lets go of the lock, though it created nothing
    second.hold_cluster_lock()
    second.release_cluster_lock()


def test_down_deletes_only_a_cluster_up_created(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind", 'echo "kind v0.33.0 go1.26.8 linux/amd64"')
    kept, config = _provider(kind_bin=kind_bin, keep=True)
    kept.create_cluster(kind_bin, config)
    kept.down()
    assert not [call for call in recorder.calls if call[1:3] == ["delete", "cluster"]]

    recorder.calls.clear()
    recorder.clusters.append("rescon-unit")  # the kept cluster, reused: same image and config
    reused, config = _provider(kind_bin=kind_bin)
    reused.create_cluster(kind_bin, config)
    reused.down()
    assert not [call for call in recorder.calls if call[1:3] in (["create", "cluster"], ["delete", "cluster"])]

    recorder.clusters.clear()
    made, config = _provider(kind_bin=kind_bin)
    made.create_cluster(kind_bin, config)
    made.kind_binary = lambda: kind_bin  # type: ignore[method-assign]
    made.down()
    deletes = [call for call in recorder.calls if call[1:3] == ["delete", "cluster"]]
    assert deletes == [[str(kind_bin), "delete", "cluster", "--name=rescon-unit", f"--kubeconfig={made.kubeconfig}"]]


def test_a_cluster_a_killed_session_left_is_reused_and_deleted_at_the_end(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind", 'echo "kind v0.33.0 go1.26.8 linux/amd64"')
    killed, config = _provider(kind_bin=kind_bin)
    killed.create_cluster(kind_bin, config)  # ... and never reaches its down()
    assert json.loads(killed.marker.read_text())["kept"] is False

    recorder.calls.clear()
    recorder.clusters.append("rescon-unit")
    next_session, config = _provider(kind_bin=kind_bin)
    next_session.create_cluster(kind_bin, config)
    next_session.kind_binary = lambda: kind_bin  # type: ignore[method-assign]
    next_session.down()
    assert not [call for call in recorder.calls if call[1:3] == ["create", "cluster"]], "same image and config: reused"
    assert [call[1:3] for call in recorder.calls if call[1:3] == ["delete", "cluster"]] == [["delete", "cluster"]]


def test_a_kept_cluster_stays_kept_through_sessions_that_reuse_it(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind", 'echo "kind v0.33.0 go1.26.8 linux/amd64"')
    kept, config = _provider(kind_bin=kind_bin, keep=True)
    kept.create_cluster(kind_bin, config)
    assert json.loads(kept.marker.read_text())["kept"] is True, "kept from its creation: rescon kind deploy-reference never calls down()"
    recorder.clusters.append("rescon-unit")
    reused, config = _provider(kind_bin=kind_bin)
    reused.create_cluster(kind_bin, config)
    reused.down()
    assert not [call for call in recorder.calls if call[1:3] == ["delete", "cluster"]]


def test_keep_leaves_a_created_cluster(recorder: Recorder, tmp_path: Path) -> None:
    kind_bin = _executable(tmp_path / "kind")
    provider, config = _provider(kind_bin=kind_bin, keep=True)
    provider.create_cluster(kind_bin, config)
    provider.down()
    assert not [call for call in recorder.calls if call[1:3] == ["delete", "cluster"]]


def test_from_options_rejects_an_unknown_coschedule_mode() -> None:
    with pytest.raises(HarnessError, match="unknown coschedule mode"):
        KindProvider.from_options(coschedule="sometimes")
    assert KindProvider.from_options(coschedule="workspaces", kind_bin="/opt/kind").kind_bin == "/opt/kind"
    assert KindProvider().exclusive_pools is False and KindProvider().kind == "kind"


# --- the release manifest: pinned, verified, patched ---

RELEASE = b"""\
apiVersion: v1
kind: Namespace
metadata: {name: tekton-pipelines}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tekton-pipelines-controller, namespace: tekton-pipelines}
spec:
  template:
    spec:
      containers:
      - {name: tekton-pipelines-controller, image: controller, args: [-entrypoint-image, entrypoint]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: taskruns.tekton.dev}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: feature-flags, namespace: tekton-pipelines}
data: {coschedule: workspaces, enable-api-fields: beta}
---
apiVersion: v1
kind: Namespace
metadata: {name: tekton-pipelines-resolvers}
---
# a comment-only document
"""


def _sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def test_verify_accepts_only_the_given_digest() -> None:
    tekton_release.verify(RELEASE, expected=_sha(RELEASE), source="release.yaml")
    with pytest.raises(HarnessError, match=r"release.yaml has sha256 [0-9a-f]{64}, not [0-9a-f]{64} \(--tekton-manifest-sha256\): pass the digest"):
        tekton_release.verify(RELEASE + b"\n# tampered\n", expected=_sha(RELEASE), source="release.yaml")


def test_a_manifest_needs_a_well_formed_digest() -> None:
    with pytest.raises(HarnessError, match=r"needs --tekton-manifest-sha256 HEX"):
        tekton_release.check_sha256(None, manifest="release.yaml")
    with pytest.raises(HarnessError, match=r"is not 64 hex digits"):
        tekton_release.check_sha256("abc", manifest="release.yaml")
    assert tekton_release.check_sha256("A" * 64, manifest="release.yaml") == "a" * 64
    with pytest.raises(HarnessError, match=r"--tekton-manifest-sha256 needs --tekton-manifest"):
        KindProvider.from_options(coschedule="disabled", tekton_manifest_sha256="a" * 64)


class FakeResponse(io.BytesIO):
    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


URL = "https://example.invalid/release.yaml"


def test_fetch_caches_only_verified_content(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    opened: list[tuple[str, float]] = []

    def opener(url: str, *, timeout: float) -> FakeResponse:
        opened.append((url, timeout))
        return FakeResponse(RELEASE)

    with pytest.raises(HarnessError, match="not f{64}"):
        tekton_release.fetch(URL, "f" * 64, timeouts=DEFAULT_TIMEOUTS, opener=opener)
    assert not tekton_release.cached_manifest_path("f" * 64).exists()

    assert tekton_release.fetch(URL, _sha(RELEASE), timeouts=DEFAULT_TIMEOUTS, opener=opener) == RELEASE
    assert opened == [(URL, DEFAULT_TIMEOUTS.manifest_download)] * 2
    assert tekton_release.fetch(URL, _sha(RELEASE), timeouts=DEFAULT_TIMEOUTS, opener=opener) == RELEASE
    assert len(opened) == 2  # the third came from the cache
    assert list(tekton_release.cached_manifest_path(_sha(RELEASE)).parent.glob(".*partial*")) == []


def test_a_local_manifest_is_verified_too(tmp_path: Path) -> None:
    path = tmp_path / "release.yaml"
    path.write_bytes(RELEASE)
    assert tekton_release.fetch(str(path), _sha(RELEASE), timeouts=DEFAULT_TIMEOUTS) == RELEASE
    with pytest.raises(HarnessError, match=r"has sha256 .* not 0{64}"):
        tekton_release.fetch(str(path), "0" * 64, timeouts=DEFAULT_TIMEOUTS)
    with pytest.raises(HarnessError, match=r"is not a file: pass a path or an https:// URL"):
        tekton_release.fetch(str(tmp_path / "absent.yaml"), _sha(RELEASE), timeouts=DEFAULT_TIMEOUTS)


def test_a_tampered_cache_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    cached = tekton_release.cached_manifest_path(_sha(RELEASE))
    cached.parent.mkdir(parents=True)
    cached.write_bytes(RELEASE + b"# edited\n")
    with pytest.raises(HarnessError, match=rf"{cached} has sha256 "):
        tekton_release.fetch(URL, _sha(RELEASE), timeouts=DEFAULT_TIMEOUTS, opener=lambda *a, **k: pytest.fail("no download"))


def test_an_offline_download_names_the_local_alternative(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))

    def offline(url: str, *, timeout: float) -> FakeResponse:
        raise OSError("Network is unreachable")

    with pytest.raises(HarnessError, match=r"cannot download .*Network is unreachable.*--tekton-manifest PATH"):
        tekton_release.fetch(URL, _sha(RELEASE), timeouts=DEFAULT_TIMEOUTS, opener=offline)


@pytest.mark.parametrize("mode", tekton.COSCHEDULE_MODES)
def test_release_manifests_get_the_local_feature_flags_in_apply_order(mode: str) -> None:
    manifests = tekton_release.release_manifests(RELEASE, coschedule=mode)
    kinds = [m["kind"] for m in manifests]
    assert kinds == ["Namespace", "Namespace", "CustomResourceDefinition", "Deployment", "ConfigMap"]
    flags = next(m for m in manifests if m["kind"] == "ConfigMap")["data"]
    assert flags == {"enable-api-fields": "beta", **tekton.feature_flags(mode, injected_sidecars=False)}
    assert tekton_release.deployments(manifests) == [("tekton-pipelines", "tekton-pipelines-controller")]


def _controller_container(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = next(m for m in manifests if m["kind"] == "Deployment")
    return dict(deployment["spec"]["template"]["spec"]["containers"][0])


def test_the_release_controller_gets_the_local_client_limits() -> None:
    container = _controller_container(tekton_release.release_manifests(RELEASE, coschedule="disabled"))
    assert container["args"] == ["-entrypoint-image", "entrypoint", "-kube-api-qps", "50", "-kube-api-burst", "50"]


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["-kube-api-qps", "30"], [], ["-kube-api-qps", "30", "-kube-api-burst", "50"]),
        (["--kube-api-burst=80"], [], ["--kube-api-burst=80", "-kube-api-qps", "50"]),
        ([], [{"name": "KUBE_API_QPS", "value": "30"}, {"name": "KUBE_API_BURST", "value": "30"}], []),
    ],
    ids=["qps-argument", "burst-argument-with-equals", "both-by-environment"],
)
def test_a_release_that_sets_a_client_limit_keeps_its_own(args: list[str], env: list[dict[str, str]], expected: list[str]) -> None:
    container = {"name": "tekton-pipelines-controller", "args": args, "env": env}
    deployment = {"kind": "Deployment", "metadata": {"name": "tekton-pipelines-controller"}, "spec": {"template": {"spec": {"containers": [container]}}}}
    tekton_release.with_controller_client_flags([deployment], source="the test")
    assert container["args"] == expected


def test_a_release_without_the_controller_container_is_named() -> None:
    other = {"kind": "Deployment", "metadata": {"name": "tekton-pipelines-webhook"}, "spec": {"template": {"spec": {"containers": [{"name": "webhook"}]}}}}
    with pytest.raises(HarnessError, match=r"the test has 0 tekton-pipelines-controller containers .* is it Tekton Pipelines\?"):
        tekton_release.with_controller_client_flags([other], source="the test")


def test_a_manifest_without_feature_flags_is_not_tekton() -> None:
    with pytest.raises(HarnessError, match="0 feature-flags ConfigMaps"):
        tekton_release.release_manifests(b"apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", coschedule="disabled")


def test_no_placeholder_digest_remains() -> None:
    assert not hasattr(tekton_release, "RELEASE_SHA256") and not hasattr(tekton_release, "PLACEHOLDER_SHA256")
    tag, _, digest = kind.NODE_IMAGE.partition("@sha256:")
    assert tag.startswith("kindest/node:v1.37.") and len(digest) == 64 and digest != "0" * 64


def test_inotify_defaults_are_too_low_for_eight_nodes_and_name_the_sysctl() -> None:
    from harness.cluster.kind import inotify_shortfall

    defaults = {"max_user_instances": 128, "max_user_watches": 192536}
    assert inotify_shortfall(defaults, nodes=8) == ["fs.inotify.max_user_instances=512", "fs.inotify.max_user_watches=524288"]
    assert inotify_shortfall({"max_user_instances": 512, "max_user_watches": 524288}, nodes=8) == []
    assert inotify_shortfall(defaults, nodes=3) == []  # kind's usual three nodes fit the defaults
    assert inotify_shortfall({}, nodes=8) == []  # not Linux, or unreadable: nothing to say


def test_host_inotify_limits_reads_proc(tmp_path: Path) -> None:
    from harness.cluster.kind import host_inotify_limits

    (tmp_path / "max_user_instances").write_text("128\n")
    assert host_inotify_limits(tmp_path) == {"max_user_instances": 128}


def test_kind_kubelets_retry_a_failed_pod_sync_within_a_second() -> None:
    # Not for the releases (a pod update is synced at once, its downward-API volume rewritten): a sync
    # that fails is tried again after min(10 s, syncFrequency), and a pod bound just before the node
    # authorizer lets its kubelet read the claim fails its first one (kind-config.yaml).
    config = yaml.safe_load(KIND_CONFIG.read_text())
    kubelet = [yaml.safe_load(p) for p in config.get("kubeadmConfigPatches", []) if "KubeletConfiguration" in p]
    assert [p.get("syncFrequency") for p in kubelet] == ["1s"]


def test_a_worker_attaches_without_the_lock_and_refuses_a_cluster_not_brought_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path / "cache"))
    provider = KindProvider(name="rescon-unit", image="stock")
    monkeypatch.setattr(provider, "require_container_runtime", lambda: None)
    with pytest.raises(HarnessError, match=r"kind cluster rescon-unit has no kubeconfig at .*: the session's controller did not bring it up"):
        provider.attach()
    # Attaching never takes the cluster's lock: the controller holds it for the whole session.
    assert provider.session_lock is None and not provider.lock_file.exists()
