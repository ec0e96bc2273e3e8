"""token_refresh: the kubeconfig's token refreshed before each request, without re-applying the rest of the kubeconfig.

kubernetes.config's loaders (KubeConfigLoader, InClusterConfigLoader) give the client's Configuration a
`refresh_api_key_hook` that runs before every request: it reloads the token if it has expired, then
writes the whole loaded config into the Configuration again: the token, and also the host, the
certificate files, the proxy. Setting `host` makes the Configuration look up the proxy again from the
environment (urllib.request.getproxies walks all of os.environ), about 50 µs on a 2-core machine, three
times per bound pod. Only the token can reach a request: the REST client made its connection pool with the
host's proxy and the certificate files when the client was made, and the loader's host never changes.

refresh_token_only() keeps the hook and its timing (the same loader, the same expiry check, the same
reload) but gives it a stand-in to write into, which passes the API keys through to the Configuration and
drops the other settings, which are already in place.

Example: with an in-cluster token file rewritten after the token's refresh period, the next request's
Authorization header is the new token, as before; `configuration.host` is not set again.
"""

from __future__ import annotations

from typing import Any

from kubernetes.client import Configuration


class _TokenOnly:
    """_TokenOnly is what the loader's hook writes into: its API keys are the Configuration's; other settings are dropped, reads are the Configuration's."""

    def __init__(self, configuration: Configuration) -> None:
        object.__setattr__(self, "_configuration", configuration)
        object.__setattr__(self, "api_key", configuration.api_key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._configuration, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # host, ssl_ca_cert, cert_file, key_file, verify_ssl, tls_server_name, proxy, and the hook itself:
        # the same values as when the client was made, which its pool already holds.
        pass


def refresh_token_only(configuration: Configuration) -> None:
    """refresh_token_only(configuration) makes its refresh hook, if any, update only the API keys (see the module docstring)."""
    hook = configuration.refresh_api_key_hook
    if hook is None:
        return
    stand_in = _TokenOnly(configuration)
    configuration.refresh_api_key_hook = lambda _configuration: hook(stand_in)
