"""refresh_token_only(): the loader's hook still refreshes the token before a request, and no longer re-applies the rest."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from kubernetes.config.incluster_config import InClusterConfigLoader

from reference_scheduler.runtime.token_refresh import refresh_token_only

pytestmark = pytest.mark.unit


def _in_cluster(tmp_path: Path, token: str) -> tuple[kubernetes.client.Configuration, InClusterConfigLoader, Path]:
    token_file, ca_file = tmp_path / "token", tmp_path / "ca.crt"
    token_file.write_text(token)
    ca_file.write_text("not read here")
    loader = InClusterConfigLoader(str(token_file), str(ca_file), environ={"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"})
    configuration = kubernetes.client.Configuration()
    loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
    return configuration, loader, token_file


def _authorization(configuration: kubernetes.client.Configuration) -> Any:
    return configuration.auth_settings()["BearerToken"]["value"]


def test_an_expired_token_is_read_again_before_the_next_request(tmp_path: Path) -> None:
    configuration, loader, token_file = _in_cluster(tmp_path, "first")
    refresh_token_only(configuration)
    assert _authorization(configuration) == "bearer first"
    token_file.write_text("second")
    assert _authorization(configuration) == "bearer first", "not yet expired: the token read a minute ago stays"
    loader.token_expires_at = datetime.datetime.now() - datetime.timedelta(seconds=1)
    assert _authorization(configuration) == "bearer second"


def test_the_rest_of_the_config_is_not_set_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    configuration, _, _ = _in_cluster(tmp_path, "t")
    refresh_token_only(configuration)
    looked_up: list[int] = []
    # The host setter looks the proxy up in the environment again: what the stand-in spares every request.
    monkeypatch.setattr(kubernetes.client.configuration, "getproxies", lambda: looked_up.append(1) or {})
    for _ in range(3):
        _authorization(configuration)
    assert looked_up == []
    assert configuration.host == "https://10.0.0.1:443"


def test_a_configuration_without_a_hook_is_left_as_it_is() -> None:
    configuration = kubernetes.client.Configuration()
    refresh_token_only(configuration)
    assert configuration.refresh_api_key_hook is None
