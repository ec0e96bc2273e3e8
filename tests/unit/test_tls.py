"""share_tls_context() verifies what urllib3 verified on its own: real handshakes with a loopback server, each way."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import urllib3

from reference_scheduler.runtime.tls import share_tls_context, tls_context

pytestmark = [pytest.mark.unit, pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make certificates")]


@dataclass(frozen=True)
class Certificates:
    ca: Path
    other_ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _openssl(*args: str | Path) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def _signed(tmp: Path, name: str, ca: str, extensions: str) -> tuple[Path, Path]:
    key, request, cert, ext = (tmp / f"{name}.{suffix}" for suffix in ("key", "csr", "crt", "ext"))
    ext.write_text(extensions)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request, "-subj", f"/CN={name}")
    _openssl("x509", "-req", "-in", request, "-CA", tmp / f"{ca}.crt", "-CAkey", tmp / f"{ca}.key", "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext)
    return cert, key


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    tmp = tmp_path_factory.mktemp("tls")
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", tmp / f"{ca}.key",
                 "-out", tmp / f"{ca}.crt", "-days", "2", "-subj", f"/CN={ca}")
    server_cert, server_key = _signed(tmp, "server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    client_cert, client_key = _signed(tmp, "client", "ca", "extendedKeyUsage=clientAuth\n")
    return Certificates(tmp / "ca.crt", tmp / "other-ca.crt", server_cert, server_key, client_cert, client_key)


@pytest.fixture
def server(certificates: Certificates) -> Iterator[tuple[int, list[str]]]:
    """server is a loopback HTTPS server that wants a client certificate of the CA; it answers `{}` and notes each client's name."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates.server_cert, certificates.server_key)
    context.load_verify_locations(certificates.ca)
    context.verify_mode = ssl.CERT_REQUIRED
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)  # accept() looks for the end of the test this often
    clients: list[str] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                raw, _ = listener.accept()
            except OSError:
                continue
            raw.settimeout(5)
            try:
                with context.wrap_socket(raw, server_side=True) as conn:
                    peer = conn.getpeercert() or {}
                    clients.extend(value for rdn in peer.get("subject", ()) for key, value in rdn if key == "commonName")
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            except (ssl.SSLError, OSError):
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], clients
    done.set()
    thread.join(timeout=5)
    listener.close()


def _pool_manager(certificates: Certificates, *, ca: Path, shared: bool) -> urllib3.PoolManager:
    # The settings kubernetes.client's REST client gives urllib3 for a kubeconfig with a CA and a client certificate.
    manager = urllib3.PoolManager(cert_reqs=ssl.CERT_REQUIRED, ca_certs=str(ca), cert_file=str(certificates.client_cert),
                                  key_file=str(certificates.client_key), ca_cert_data=None, retries=False)
    if shared:
        share_tls_context(manager)
    return manager


@pytest.mark.parametrize("shared", [False, True], ids=["urllib3-per-connection", "shared"])
def test_a_server_of_the_ca_is_reached_with_the_client_certificate(certificates: Certificates, server: tuple[int, list[str]], shared: bool) -> None:
    port, clients = server
    manager = _pool_manager(certificates, ca=certificates.ca, shared=shared)
    for _ in range(2):
        assert manager.request("GET", f"https://127.0.0.1:{port}/").data == b"{}"
    assert clients == ["client", "client"]


@pytest.mark.parametrize("shared", [False, True], ids=["urllib3-per-connection", "shared"])
def test_a_server_of_another_ca_is_refused(certificates: Certificates, server: tuple[int, list[str]], shared: bool) -> None:
    port, _ = server
    with pytest.raises(urllib3.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        _pool_manager(certificates, ca=certificates.other_ca, shared=shared).request("GET", f"https://127.0.0.1:{port}/")


@pytest.mark.parametrize("shared", [False, True], ids=["urllib3-per-connection", "shared"])
def test_a_name_the_certificate_does_not_hold_is_refused(certificates: Certificates, server: tuple[int, list[str]], shared: bool) -> None:
    port, _ = server
    manager = _pool_manager(certificates, ca=certificates.ca, shared=shared)
    manager.connection_pool_kw["server_hostname"] = "kubernetes.example"
    with pytest.raises(urllib3.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED|doesn't match|Hostname mismatch"):
        manager.request("GET", f"https://127.0.0.1:{port}/")


def test_the_shared_context_is_the_one_urllib3_makes_per_connection(certificates: Certificates, server: tuple[int, list[str]]) -> None:
    port, _ = server
    manager = _pool_manager(certificates, ca=certificates.ca, shared=False)
    pool = manager.connection_from_url(f"https://127.0.0.1:{port}/")
    connection = pool._get_conn()  # noqa: SLF001 - the connection urllib3 would use, to read its context
    connection.connect()
    assert connection.sock is not None
    theirs = connection.sock.context  # type: ignore[union-attr]
    connection.close()
    ours = tls_context(dict(manager.connection_pool_kw))
    for attribute in ("verify_mode", "check_hostname", "options", "minimum_version", "maximum_version", "verify_flags",
                      "hostname_checks_common_name", "post_handshake_auth", "protocol"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours.get_ca_certs() == theirs.get_ca_certs()


def test_settings_urllib3_would_read_otherwise_are_left_alone() -> None:
    manager = urllib3.PoolManager(cert_reqs=ssl.CERT_REQUIRED, ssl_minimum_version=ssl.TLSVersion.TLSv1_3)
    share_tls_context(manager)
    assert "ssl_context" not in manager.connection_pool_kw


def test_without_a_ca_the_system_ones_are_trusted_as_urllib3_trusts_them() -> None:
    assert tls_context({"cert_reqs": ssl.CERT_REQUIRED}).cert_store_stats() == _default_context_stats()


def _default_context_stats() -> dict[str, int]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_default_certs()
    return context.cert_store_stats()
