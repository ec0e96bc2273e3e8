"""The pure parts of the offline kind path: Tekton's render, kind config patches, CNI, slot sizes, the step script."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from harness.cluster import kind, node_image, slot_pools, tekton, tekton_release
from harness.cluster.slot_pools import SlotNode
from harness.cluster.simulation import IDLE_SIDECAR_COMMAND, LINGER_SCRIPT, PODINFO_DIR, STEP_SCRIPT
from harness.errors import HarnessError
from harness.quantities import Amount

pytestmark = pytest.mark.unit

CONFIG = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "feature-flags", "namespace": "tekton-pipelines"}, "data": {"coschedule": "workspaces"}},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "tekton-pipelines-controller", "namespace": "tekton-pipelines", "labels": {"app.kubernetes.io/version": "devel"}},
        "spec": {"template": {"spec": {"containers": [{
            "name": "tekton-pipelines-controller",
            "image": "ko://github.com/tektoncd/pipeline/cmd/controller",
            "args": ["-entrypoint-image", "ko://github.com/tektoncd/pipeline/cmd/entrypoint", "-shell-image", "cgr.dev/chainguard/busybox@sha256:19f0"],
        }]}}},
    },
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tekton-pipelines"}},
]


def test_render_replaces_every_ko_reference_the_shell_image_and_devel() -> None:
    images = {"controller": "local/controller:v1", "entrypoint": "local/entrypoint:v1"}
    rendered = tekton_release.render_module(CONFIG, images=images, shell_image="busybox:1.37", version="v1.15.0", coschedule="disabled")
    assert [d["kind"] for d in rendered] == ["Namespace", "ConfigMap", "Deployment"]
    container = rendered[2]["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "local/controller:v1"
    assert container["args"] == [
        "-entrypoint-image", "local/entrypoint:v1", "-shell-image", "busybox:1.37", "-kube-api-qps", "50", "-kube-api-burst", "50",
    ]
    assert rendered[2]["metadata"]["labels"] == {"app.kubernetes.io/version": "v1.15.0"}
    assert rendered[1]["data"] == tekton.feature_flags("disabled", injected_sidecars=False)
    assert "ko://" not in repr(rendered)


def test_a_ko_reference_without_a_local_image_is_named() -> None:
    with pytest.raises(HarnessError, match=r"no local image: entrypoint"):
        tekton_release.render_module(CONFIG, images={"controller": "c"}, shell_image="b", version="v1", coschedule="disabled")


def test_the_pinned_modules_config_renders_with_the_built_commands() -> None:
    from harness.cluster import go_builds

    module = Path.home() / "go" / "pkg" / "mod" / f"github.com/tektoncd/pipeline@{tekton.version()}" / "config"
    if not module.is_dir():
        pytest.skip("the pinned Tekton module is not in the Go module cache")
    documents = [doc for _, doc in tekton_release.module_documents(module)]
    images = {c: node_image.tekton_image(c, tekton.version()) for c in go_builds.TEKTON_COMMANDS}
    rendered = tekton_release.render_module(documents, images=images, shell_image=node_image.BUSYBOX_IMAGE, version=tekton.version(), coschedule="disabled")
    assert "ko://" not in repr(rendered) and "cgr.dev" not in repr(rendered)
    assert {name for _, name in tekton_release.deployments(rendered)} >= {"tekton-pipelines-controller", "tekton-pipelines-webhook"}
    controller = next(d for d in rendered if d["kind"] == "Deployment" and d["metadata"]["name"] == "tekton-pipelines-controller")
    args = controller["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[-4:] == ["-kube-api-qps", "50", "-kube-api-burst", "50"]


@pytest.mark.parametrize(
    ("offline", "v1", "sys_resource", "expected_keys"),
    [
        (False, False, True, set()),
        (False, True, True, {"kubeadmConfigPatches"}),
        (False, False, False, {"containerdConfigPatches"}),
        (True, True, False, {"networking", "kubeadmConfigPatches", "containerdConfigPatches"}),
    ],
    ids=["stock-on-a-modern-host", "cgroup-v1", "no-sys-resource", "offline-on-this-host"],
)
def test_config_patches_only_where_the_host_or_image_needs_them(offline: bool, v1: bool, sys_resource: bool, expected_keys: set[str]) -> None:
    patches = node_image.kind_config_patches(offline_image=offline, cgroup_v1=v1, has_sys_resource=sys_resource)
    assert set(patches) == expected_keys
    text = repr(patches)
    assert ("failCgroupV1: false" in text) == v1
    assert ("restrict_oom_score_adj = true" in text) == (not sys_resource)
    assert ("disableDefaultCNI" in text) == offline


def test_cluster_config_appends_patches_and_keeps_the_nodes() -> None:
    base = {"kind": "Cluster", "nodes": [{"role": "control-plane"}], "kubeadmConfigPatches": ["a"]}
    merged = kind.cluster_config(base, {"kubeadmConfigPatches": ["b"], "networking": {"disableDefaultCNI": True}})
    assert merged == {"kind": "Cluster", "nodes": [{"role": "control-plane"}], "kubeadmConfigPatches": ["a", "b"], "networking": {"disableDefaultCNI": True}}
    assert base["kubeadmConfigPatches"] == ["a"]


def test_host_probes_read_cgroups_and_capabilities(tmp_path: Path) -> None:
    assert node_image.host_cgroup_v1(tmp_path) is True
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")
    assert node_image.host_cgroup_v1(tmp_path) is False
    status = tmp_path / "status"
    status.write_text("Name:\tx\nCapBnd:\t000001fffeffffff\n")
    assert node_image.host_has_capability(24, status) is False and node_image.host_has_capability(21, status) is True


def test_kind_versions() -> None:
    assert kind.parse_kind_version("kind v0.33.0 go1.26.8 linux/amd64") == (0, 33, 0)
    kind.check_kind_version((0, 33, 0), Path("kind"))
    with pytest.raises(HarnessError, match=r"kind is kind v0.29.0, too old for Kubernetes v1.37 nodes: install kind >= v0.33.0"):
        kind.check_kind_version((0, 29, 0), Path("kind"))
    with pytest.raises(HarnessError, match="cannot read kind's version"):
        kind.parse_kind_version("garbage")


def test_cni_config_and_routes() -> None:
    conf = kind.ptp_conflist("10.244.1.0/24")
    assert conf["plugins"][0]["type"] == "ptp" and conf["plugins"][0]["ipam"]["ranges"] == [[{"subnet": "10.244.1.0/24"}]]
    nodes = {"cp": ("10.244.0.0/24", "172.18.0.2"), "w1": ("10.244.1.0/24", "172.18.0.3"), "w2": ("10.244.2.0/24", "172.18.0.4")}
    assert kind.routes_for("w1", nodes) == [("10.244.0.0/24", "172.18.0.2"), ("10.244.2.0/24", "172.18.0.4")]


def test_cri_base_spec_adds_kinds_hook_and_drops_rlimits() -> None:
    spec = node_image.cri_base_spec({"process": {"rlimits": [{"type": "RLIMIT_NOFILE"}], "args": ["sh"]}})
    assert spec == {"process": {"args": ["sh"]}, "hooks": {"createContainer": [{"path": "/kind/bin/mount-product-files.sh"}]}}


def _pod(namespace: str, cpu: str, phase: str = "Running") -> dict[str, Any]:
    return {"metadata": {"namespace": namespace, "name": f"p-{cpu}"}, "status": {"phase": phase}, "spec": {"containers": [{"resources": {"requests": {"cpu": cpu}}}]}}


def test_daemons_are_counted_and_the_suites_pods_are_not() -> None:
    pods = [_pod("kube-system", "100m"), _pod("conf-x", "2"), _pod("kube-system", "250m", phase="Succeeded"), _pod("tekton-pipelines", "50m")]
    assert slot_pools.foreign_requests(pods, {"conf-x"}) == Amount(150, 0)
    assert slot_pools.leftover_pods(pods, {"conf-x"}) == ["conf-x/p-2"]


def test_the_pool_size_is_the_least_room_daemons_leave() -> None:
    nodes = [SlotNode("w1", "0", allocatable={"cpu": "4", "memory": "8Gi"}), SlotNode("w2", "1", allocatable={"cpu": "4", "memory": "8Gi"})]
    size = slot_pools.usable_size(nodes, {"w1": Amount(100, 70 * 2**20)})
    assert size == Amount(3900, 8 * 2**30 - 70 * 2**20)


# --- the step script, run by a real shell against an annotations file ---

SHELL = shutil.which("busybox") or shutil.which("sh")


def _run_script(script: str, tmp_path: Path, annotations: dict[str, str], hostname: str = "tr-pod", *, timeout: float = 20) -> int:
    (tmp_path / "annotations").write_text("".join(f'{k}="{v}"\n' for k, v in annotations.items()))
    body = script.replace(PODINFO_DIR, str(tmp_path)).replace("$(hostname |", f"$(echo {hostname} |")
    argv = [SHELL, "sh", "-c", body] if SHELL and SHELL.endswith("busybox") else [str(SHELL), "-c", body]
    return subprocess.run(argv, timeout=timeout).returncode


@pytest.mark.parametrize(
    ("annotations", "hostname", "code"),
    [
        ({"sim.rescon.dev/run-for": "100ms"}, "tr-pod", 0),
        ({"sim.rescon.dev/run-for": "100ms", "sim.rescon.dev/exit-codes": "1,0"}, "tr-pod", 1),
        ({"sim.rescon.dev/run-for": "100ms", "sim.rescon.dev/exit-codes": "1,0"}, "tr-pod-retry1", 0),
        ({"sim.rescon.dev/run-for": "100ms", "sim.rescon.dev/exit-codes": "3,4"}, "tr-pod-retry5", 4),
        ({"sim.rescon.dev/hold": "true", "sim.rescon.dev/release": "true", "sim.rescon.dev/exit-codes": "2"}, "tr-pod", 2),
    ],
    ids=["run-for", "first-attempt-fails", "retry-passes", "last-code-repeats", "released-hold"],
)
def test_the_step_script_plays_the_vocabulary(tmp_path: Path, annotations: dict[str, str], hostname: str, code: int) -> None:
    assert _run_script(STEP_SCRIPT, tmp_path, annotations, hostname) == code


def test_a_held_step_does_not_end_until_released(tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        _run_script(STEP_SCRIPT, tmp_path, {"sim.rescon.dev/hold": "true"}, timeout=3)


def test_the_linger_script_runs_for_linger_for(tmp_path: Path) -> None:
    assert _run_script(LINGER_SCRIPT, tmp_path, {"sim.rescon.dev/linger-for": "200ms"}) == 0


def test_a_held_linger_runs_until_told_to_stop_and_then_ends_cleanly(tmp_path: Path) -> None:
    # linger-for is not read once the sidecar is held: a held one outlasts it.
    held = {"sim.rescon.dev/linger-held": "true", "sim.rescon.dev/linger-for": "100ms"}
    with pytest.raises(subprocess.TimeoutExpired):
        _run_script(LINGER_SCRIPT, tmp_path, held, timeout=3)
    assert _run_script(LINGER_SCRIPT, tmp_path, {**held, "sim.rescon.dev/stop-sidecars": "true"}) == 0


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def test_an_idle_sidecar_ends_cleanly_on_sigterm() -> None:
    # The kubelet stops a native sidecar with SIGTERM once the steps end; a bare sleep, as a container's first
    # process, ignored it and ran out the pod's 30 s grace period.
    command = list(IDLE_SIDECAR_COMMAND)
    argv = [str(SHELL), *command] if str(SHELL).endswith("busybox") else [str(SHELL), *command[1:]]
    process = subprocess.Popen(argv, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not _children(process.pid):  # its sleep starts once the trap is set
            assert time.monotonic() < deadline, f"{argv} started no sleep within 10 s"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=5) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the sleep it leaves behind, as a container's end would
        process.wait()


def test_the_step_script_writes_the_results_its_annotations_give(tmp_path: Path) -> None:
    # The downward API quotes each value as Go's %q does (json.dumps agrees for these).
    results = tmp_path / "results"
    results.mkdir()
    values = {"sim.rescon.dev/run-for": "100ms", "sim.rescon.dev/result.shards": '["a","b","c"]', "sim.rescon.dev/result.commit": "abc123"}
    (tmp_path / "annotations").write_text("".join(f"{k}={json.dumps(v)}\n" for k, v in values.items()))
    body = STEP_SCRIPT.replace(PODINFO_DIR, str(tmp_path)).replace("/tekton/results", str(results))
    argv = [SHELL, "sh", "-c", body] if SHELL and SHELL.endswith("busybox") else [str(SHELL), "-c", body]
    assert subprocess.run(argv, timeout=20).returncode == 0
    assert (results / "shards").read_text() == '["a","b","c"]'
    assert (results / "commit").read_text() == "abc123"
