"""Unit tests for the harness's volumes: pre-bound PVs for named claims, spare PVs of a scenario's own class for Tekton's."""

from __future__ import annotations

import pytest

from harness.cluster.volumes import STORAGE_CLASS, TEST_NAMESPACE_LABEL, spare_volume_manifest, template_storage_class, volume_manifests

pytestmark = pytest.mark.unit


def test_a_named_claim_and_its_volume_name_each_other() -> None:
    pv, pvc = volume_manifests("conf-x-1", "source", "1Gi")
    assert pv["spec"]["claimRef"] == {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "conf-x-1", "name": "source"}
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] == "conf-x-1-source"
    assert pv["spec"]["storageClassName"] == pvc["spec"]["storageClassName"] == STORAGE_CLASS


def test_a_spare_volume_is_unclaimed_in_the_namespaces_own_class() -> None:
    """A volumeClaimTemplate's PVC is named by Tekton, so the spare PV names no claim; only its class keeps other scenarios' claims off it."""
    pv = spare_volume_manifest("conf-x-1", 1)
    assert "claimRef" not in pv["spec"]
    assert pv["spec"]["storageClassName"] == template_storage_class("conf-x-1") == "rescon-template-conf-x-1"
    assert template_storage_class("conf-y-2") != template_storage_class("conf-x-1")
    assert pv["metadata"]["labels"] == {TEST_NAMESPACE_LABEL: "conf-x-1"}
    assert pv["metadata"]["name"] == "conf-x-1-template-1"
    assert pv["spec"]["hostPath"]["path"].endswith("/conf-x-1/template-1")
    assert pv["spec"]["accessModes"] == ["ReadWriteOnce"] and pv["spec"]["capacity"] == {"storage": "1Gi"}
