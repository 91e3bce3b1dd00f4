"""Whether an optional, locally installed piece (a model, a server) can run here, and why not.

``minilm_available()`` and ``local_model_available()`` answer with an ``Availability``: truthy
when the piece can run, with the reason either way, so a caller can skip (or fail, in CI) and
say exactly what is missing and how to install it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Availability:
    """Whether an optional piece can run here; true in a boolean context when it can."""

    ok: bool
    """True when every file and package it needs is installed."""
    reason: str
    """Why not (the missing piece and how to install it), or what will run; may be empty."""

    def __bool__(self) -> bool:
        return self.ok


__all__ = ["Availability"]
