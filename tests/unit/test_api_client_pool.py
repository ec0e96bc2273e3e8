"""main.api_client(): a pool as large as the requests the main client can have open, and one TLS context for all its connections."""

from __future__ import annotations

import base64
import shutil
import ssl
import subprocess
from pathlib import Path

import kubernetes
import pytest
import yaml

from reference_scheduler.config import parse_config
from reference_scheduler.main import api_client
from reference_scheduler.runtime import scheduler as scheduler_module
from reference_scheduler.runtime.scheduler import MAIN_CLIENT_CONNECTIONS, Scheduler

pytestmark = pytest.mark.unit

@pytest.fixture(scope="module")
def ca_pem(tmp_path_factory: pytest.TempPathFactory) -> str:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    tmp = tmp_path_factory.mktemp("ca")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(tmp / "ca.key"),
                    "-out", str(tmp / "ca.crt"), "-days", "2", "-subj", "/CN=ca"], check=True, capture_output=True)
    return (tmp / "ca.crt").read_text()


def _kubeconfig(tmp_path: Path, ca_pem: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": base64.b64encode(ca_pem.encode()).decode()}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    }))
    return path


def test_the_main_client_keeps_a_connection_for_each_request_it_can_have_open(tmp_path: Path, ca_pem: str) -> None:
    config = parse_config(["--kubeconfig", str(_kubeconfig(tmp_path, ca_pem)), "--burst", "100"])
    settings = api_client(config, connections=MAIN_CLIENT_CONNECTIONS).rest_client.pool_manager.connection_pool_kw
    assert settings["maxsize"] == MAIN_CLIENT_CONNECTIONS
    # The events client: at least 4, and a tenth of the burst, as before.
    assert api_client(config).rest_client.pool_manager.connection_pool_kw["maxsize"] == 10


def test_the_client_trusts_the_kubeconfig_ca_through_one_context(tmp_path: Path, ca_pem: str) -> None:
    config = parse_config(["--kubeconfig", str(_kubeconfig(tmp_path, ca_pem))])
    settings = api_client(config).rest_client.pool_manager.connection_pool_kw
    context = settings["ssl_context"]
    assert "ca_certs" not in settings and "cert_file" not in settings
    assert settings["cert_reqs"] == ssl.CERT_REQUIRED
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert [ca["subject"] for ca in context.get_ca_certs()] == [((("commonName", "ca"),),)]


def test_the_informers_are_as_many_as_the_pool_counts() -> None:
    scheduler = Scheduler(kubernetes.client.ApiClient(), scheduler_name="t")
    assert len(scheduler.informers) == scheduler_module.INFORMERS
