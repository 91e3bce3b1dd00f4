"""A free TCP port on the loopback interface, for the tests that start or dial servers."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the system says is free now (closed again, so a server may take it, or a client
    dialling it finds nobody): never ``./run model``'s port, never another test run's."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
