"""tls: one SSLContext per API client, made once, where urllib3 makes one for every connection it opens.

kubernetes.client's REST client gives urllib3 the kubeconfig's TLS settings as file names (the CA,
the client certificate and key) and no context, so for every new connection urllib3 creates an
SSLContext and reads and parses those files into it: about 2.5 ms of a new connection's 5 ms of CPU
on a 2-core machine (docs/benchmarks/findings.md, "Fixed costs at start"). Given a context, urllib3
uses it as it is, and still sets its verify_mode from `cert_reqs` and, where it checks the hostname
itself, turns the context's own check off, per connection as before.

share_tls_context() makes that context the way urllib3 makes it (its own `create_urllib3_context`
with the same arguments, then the same CA, or the system's when none is given, the same client
certificate, the same ALPN protocols) and hands it to the pool manager in place of the file names.
What is verified does not change: the same CA, the same hostname check, the same client certificate;
tests/unit/test_tls.py makes a real handshake each way.

Example: ``share_tls_context(api.rest_client.pool_manager)`` on a client loaded from a kubeconfig
with a CA file: every connection of `api` now uses one context that holds that CA.
"""

from __future__ import annotations

import ssl
from typing import Any

from urllib3 import PoolManager
from urllib3.exceptions import SSLError
from urllib3.util.ssl_ import ALPN_PROTOCOLS, create_urllib3_context, resolve_cert_reqs, resolve_ssl_version

#: The pool settings that name files urllib3 would read at every connection; the shared context holds them instead.
FILE_SETTINGS = ("ca_certs", "ca_cert_dir", "ca_cert_data", "cert_file", "key_file")


def share_tls_context(pool_manager: PoolManager) -> None:
    """share_tls_context(pool_manager) gives every HTTPS connection of the pool manager one context, made now.

    A manager that already has a context, or whose settings urllib3 would read differently
    (a key password, TLS version bounds, an SSL version), is left as it is.
    """
    settings: dict[str, Any] = pool_manager.connection_pool_kw
    if settings.get("ssl_context") is not None or any(
        settings.get(k) is not None for k in ("key_password", "ssl_version", "ssl_minimum_version", "ssl_maximum_version")
    ):
        return
    context = tls_context(settings)
    for name in FILE_SETTINGS:
        settings.pop(name, None)
    settings["ssl_context"] = context


def tls_context(settings: dict[str, Any]) -> ssl.SSLContext:
    """tls_context(pool settings) is the context urllib3 would make for one connection with those settings.

    As urllib3's connection.py (_ssl_wrap_socket_and_match_hostname) and util/ssl_.py
    (ssl_wrap_socket) make it, in their order.
    """
    context = create_urllib3_context(ssl_version=resolve_ssl_version(None), cert_reqs=resolve_cert_reqs(settings.get("cert_reqs")))
    ca_certs, ca_cert_dir, ca_cert_data = (settings.get(k) for k in ("ca_certs", "ca_cert_dir", "ca_cert_data"))
    if ca_certs or ca_cert_dir or ca_cert_data:
        try:
            context.load_verify_locations(ca_certs, ca_cert_dir, ca_cert_data)
        except OSError as err:
            raise SSLError(err) from err
    else:
        context.load_default_certs()
    cert_file = settings.get("cert_file")
    if cert_file:
        # urllib3 refuses an encrypted key without a password (rather than let OpenSSL ask on the terminal).
        context.load_cert_chain(cert_file, settings.get("key_file"), password=_no_password)
    context.set_alpn_protocols(ALPN_PROTOCOLS)
    return context


def _no_password() -> str:
    raise SSLError("Client private key is encrypted, password is required")
