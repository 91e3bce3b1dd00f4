"""Fixtures for the LLM client tests in this folder: a loopback server, a clean env, a network guard.

pytest finds them here without imports. ``loopback_only`` is autouse for this folder only, so
every LLM test (present and future) runs with no credentials, no proxies and no route off
127.0.0.1, while the rest of the suite is untouched.
"""

from __future__ import annotations

import ipaddress
import socket
import threading

import pytest

from memorykit.classroom.doubles.openai_server import FakeOpenAIServer

_ENV = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
    "OPENAI_ADMIN_KEY", "OPENAI_WEBHOOK_SECRET",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
)


def _is_loopback(address: object) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0] if isinstance(address, tuple) else None
    try:
        return ipaddress.ip_address(host).is_loopback  # type: ignore[arg-type]
    except ValueError:
        return host == "localhost"


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch):
    """No real credentials, no proxies, and any connection off 127.0.0.1 fails the test."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    real_connect = socket.socket.connect
    attempts: list[object] = []

    def guarded_connect(self: socket.socket, address: object) -> None:
        if not _is_loopback(address):
            attempts.append(address)
            raise OSError(f"test tried to reach {address!r}: only 127.0.0.1 is allowed")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    yield
    assert not attempts, f"a test tried to leave the machine: {attempts}"


@pytest.fixture
def server():
    """A running FakeOpenAIServer; after the test, no server or handler thread survives."""
    before = set(threading.enumerate())
    with FakeOpenAIServer() as srv:
        yield srv
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not leaked, f"threads left running: {leaked}"

