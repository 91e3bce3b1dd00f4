"""The buffer policies the contract suite runs over: every policy in the registry.

``memorykit.buffers.registry.POLICIES`` is the one list of policies; a policy registered
there joins the contract here with its defaults. The settings below only shrink a few
defaults so a short random stream reaches the limits (a 20-message window or 100 entries
would never fill).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memorykit.buffers import MessageBuffer
from memorykit.buffers.registry import POLICIES as REGISTRY
from memorykit.clock import StepClock

BufferMaker = Callable[[int, StepClock], MessageBuffer]

CONTRACT_SETTINGS: dict[str, Callable[[int], dict[str, Any]]] = {
    "window": lambda budget: {"window_size": max(1, budget // 60)},
    "token": lambda budget: {"max_entries": 12},
    "summary": lambda budget: {"min_recent": 2},
}


def _maker(name: str) -> BufferMaker:
    spec = REGISTRY[name]
    settings = CONTRACT_SETTINGS.get(name, lambda budget: {})
    return lambda budget, clock: spec.build(budget, clock=clock, **settings(budget))


POLICIES: dict[str, BufferMaker] = {name: _maker(name) for name in REGISTRY}
