"""The reference refuses to start, in one line naming the fix, when it cannot publish its records."""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
import urllib3

from reference_scheduler import main

pytestmark = pytest.mark.unit


class FakeCustomObjects:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.calls: list[tuple[Any, ...]] = []

    def list_cluster_custom_object(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append(args)
        if self.error is not None:
            raise self.error


def check_with(monkeypatch: pytest.MonkeyPatch, error: Exception | None) -> FakeCustomObjects:
    fake = FakeCustomObjects(error)
    monkeypatch.setattr(main, "KubeApi", lambda api: fake)
    main.check_records_api(kubernetes.client.ApiClient())
    return fake


def test_a_missing_crd_names_the_manifest_to_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError) as raised:
        check_with(monkeypatch, kubernetes.client.ApiException(status=404, reason="Not Found"))
    message = str(raised.value)
    assert "\n" not in message
    assert "reservationrecords.rescon.dev" in message and "kubectl apply -f harness/contract/reservationrecord.crd.yaml" in message


def test_a_forbidden_list_points_at_rbac(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="HTTP 403.*RBAC"):
        check_with(monkeypatch, kubernetes.client.ApiException(status=403, reason="Forbidden"))


def test_an_unreachable_server_points_at_the_kubeconfig(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="cannot reach the API server.*--kubeconfig"):
        check_with(monkeypatch, urllib3.exceptions.MaxRetryError(None, "/apis", "refused"))  # type: ignore[arg-type]


def test_an_installed_crd_passes_with_one_cheap_list(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_with(monkeypatch, None).calls == [("rescon.dev", "v1alpha1", "reservationrecords")]
