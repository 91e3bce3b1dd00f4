"""Fixtures for the LLM client tests in this folder: a loopback server, a clean env, a network guard.

pytest finds them here without imports. ``loopback_only`` is autouse for this folder only, so
every LLM test (present and future) runs with no credentials, no proxies and no route off
127.0.0.1, while the rest of the suite is untouched.
"""

from __future__ import annotations

import threading

import pytest

from memorykit.classroom.doubles.openai_server import FakeOpenAIServer
from offline import leave_only_loopback


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch):
    """No real credentials, no proxies, and any connection off 127.0.0.1 fails the test."""
    attempts = leave_only_loopback(monkeypatch)
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

