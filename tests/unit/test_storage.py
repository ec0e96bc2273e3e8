"""The default storage the local cluster and the offline kind image carry: kind's, as data (harness/cluster/storage.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cluster import storage
from harness.suite.scenario import Scenario, storage_skip_reason, volume_admits
from harness.suite.features import Feature

pytestmark = pytest.mark.unit


def test_the_default_class_waits_for_the_first_consumer_as_kinds_does() -> None:
    sc = storage.storage_class_manifest()
    assert sc["metadata"]["name"] == "standard"
    assert sc["metadata"]["annotations"] == {storage.DEFAULT_CLASS_ANNOTATION: "true"}
    assert (sc["provisioner"], sc["volumeBindingMode"], sc["reclaimPolicy"]) == ("rancher.io/local-path", "WaitForFirstConsumer", "Delete")


def test_every_node_keeps_volumes_under_one_path_unless_nodes_are_listed() -> None:
    assert storage.provisioner_config() == {"nodePathMap": [{"node": storage.ANY_NODE, "paths": [storage.NODE_PATH]}]}
    assert storage.provisioner_config({"n1": ["/data"]}) == {"nodePathMap": [{"node": "n1", "paths": ["/data"]}]}


def test_the_config_files_are_the_configmap_kind_mounts(tmp_path: Path) -> None:
    written = storage.write_config_dir(tmp_path / "cfg")
    assert sorted(p.name for p in written.iterdir()) == ["config.json", "helperPod.yaml", "setup", "teardown"]
    helper = json.loads((written / "helperPod.yaml").read_text())
    assert helper["spec"]["containers"][0]["image"] == storage.HELPER_IMAGE
    assert 'mkdir -m 0777 -p "$VOL_DIR"' in (written / "setup").read_text()
    assert "annotations" not in helper["metadata"]


def test_the_local_clusters_helper_pods_carry_the_simulators_annotations(tmp_path: Path) -> None:
    written = storage.write_config_dir(tmp_path / "cfg", helper_annotations={"sim.rescon.dev/run-for": "0s"})
    helper = json.loads((written / "helperPod.yaml").read_text())
    assert helper["metadata"] == {"name": "helper-pod", "annotations": {"sim.rescon.dev/run-for": "0s"}}


def test_the_process_runs_out_of_cluster_with_the_clusters_kubeconfig(tmp_path: Path) -> None:
    argv = storage.provisioner_argv(Path("/bin/lpp"), tmp_path / "kubeconfig.yaml", tmp_path / "cfg")
    assert argv[:3] == ["/bin/lpp", "--debug", "start"]
    assert argv[argv.index("--kubeconfig") + 1] == str(tmp_path / "kubeconfig.yaml")
    assert argv[argv.index("--config") + 1] == str(tmp_path / "cfg" / "config.json")
    env = storage.provisioner_env({"HOME": "/root"}, tmp_path / "cfg")
    assert env["CONFIG_MOUNT_PATH"] == f"{tmp_path / 'cfg'}/" and env["POD_NAMESPACE"] == storage.NAMESPACE and env["HOME"] == "/root"


def test_the_in_cluster_manifests_run_the_given_images_and_carry_the_class() -> None:
    docs = storage.in_cluster_manifests(provisioner_image="rescon.local/lpp:v1", helper_image="busybox:1.37")
    kinds = [d["kind"] for d in docs]
    assert kinds.count("StorageClass") == 1 and kinds.count("Deployment") == 1 and "ClusterRole" in kinds
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "rescon.local/lpp:v1"
    assert container["command"][container["command"].index("--helper-image") + 1] == "busybox:1.37"
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    assert yaml.safe_load(config["data"]["helperPod.yaml"])["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert yaml.safe_load_all(yaml.safe_dump_all(docs))  # one file kind can apply


def _scenario(**fields: object) -> Scenario:
    return Scenario(name="s", description="d", features=(Feature.VOLUMES,), fixtures=(), **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "default_class", "skipped"),
    [
        ({}, None, False),
        ({"default_storage_class": True}, None, True),
        ({"default_storage_class": True}, ("standard", "rancher.io/local-path"), False),
        ({"default_storage_class": True}, ("gp3", "ebs.csi.aws.com"), False),
        ({"local_path_faults": True}, ("gp3", "ebs.csi.aws.com"), True),
        ({"local_path_faults": True}, ("standard", "rancher.io/local-path"), False),
    ],
    ids=["no-storage-needed", "no-default-class", "kinds-class", "another-provisioner-serves-claims", "faults-need-local-path", "faults-on-local-path"],
)
def test_storage_skip_reason(fields: dict[str, object], default_class: tuple[str, str] | None, skipped: bool) -> None:
    reason = storage_skip_reason(_scenario(**fields), "kind", default_class)
    assert (reason is not None) is skipped, reason


def test_a_pinned_volume_admits_a_pool_node_by_hostname_or_a_label() -> None:
    assert volume_admits(1, ("p-0", "p-1")) == ("kubernetes.io/hostname", ("p-1",))
    assert volume_admits(("topology.kubernetes.io/zone", "b"), ("p-0",)) == ("topology.kubernetes.io/zone", ("b",))
