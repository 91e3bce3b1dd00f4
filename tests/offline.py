"""What every test that talks to a model shares: no way off the machine, and a real model that
runs or a clear reason why not.

``leave_only_loopback(monkeypatch, env=...)`` removes credentials and proxies from the
environment and makes any connection off 127.0.0.1 raise; it returns the list of attempts, which
the caller asserts empty after the test (a fixture: ``attempts = leave_only_loopback(mp); yield;
assert not attempts``). ``require(available)`` skips a real-model test when the model is not
installed, and fails it under ``CI=true``: CI must have run it.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable
from typing import Any

import pytest

CREDENTIALS_AND_PROXIES = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
    "OPENAI_ADMIN_KEY", "OPENAI_WEBHOOK_SECRET",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
)


def is_loopback(address: object) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0] if isinstance(address, tuple) else None
    try:
        return ipaddress.ip_address(host).is_loopback  # type: ignore[arg-type]
    except ValueError:
        return host == "localhost"


def leave_only_loopback(monkeypatch: pytest.MonkeyPatch,
                        env: Iterable[str] = CREDENTIALS_AND_PROXIES) -> list[object]:
    """Unset ``env``, refuse connections off 127.0.0.1; returns the refused addresses."""
    for name in env:
        monkeypatch.delenv(name, raising=False)
    real_connect = socket.socket.connect
    attempts: list[object] = []

    def guarded_connect(self: socket.socket, address: object) -> None:
        if not is_loopback(address):
            attempts.append(address)
            raise OSError(f"test tried to reach {address!r}: only 127.0.0.1 is allowed")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    return attempts


def require(available: Any) -> None:
    """Skip without the model (``available`` is an ``Availability``), fail under CI=true."""
    if available:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and a real-model test cannot run: {available.reason}")
    pytest.skip(f"the model is not installed: {available.reason}")
