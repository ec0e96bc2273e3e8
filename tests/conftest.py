"""Shared test configuration: unit tests must never reach a network or an API server."""

from __future__ import annotations

import socket
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _no_network_in_unit_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit test that opens a non-loopback connection fails: pure logic needs no cluster."""
    if request.node.get_closest_marker("unit") is None:
        return
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"unit test tried to connect to {address!r}: unit tests must not use the network")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
