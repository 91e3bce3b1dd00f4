"""Clocks: where a memory gets "now" from.

Every time-dependent rule (recency weighting, TTL, decay) reads an injected
Clock once per operation, so a simulation can run hours of conversation in
microseconds and a test can pin time exactly. Taught in
``notebooks/02_pruning_strategies.ipynb`` (recency weighting over simulated time).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

from memorykit._validate import require_non_negative, require_real


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now()`` returning seconds as a float."""

    def now(self) -> float: ...


class WallClock:
    """Real time: seconds since the epoch, from ``time.time``."""

    def now(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "WallClock()"


class StepClock:
    """Simulated time that moves only when told to.

    ``advance(seconds)`` moves it forward; ``set(t)`` jumps to an absolute time
    that must not be in the past (time never runs backwards in a memory).
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = require_real("start", start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        self._now += require_non_negative("seconds", seconds)
        return self._now

    def advance_minutes(self, minutes: float) -> float:
        return self.advance(require_non_negative("minutes", minutes) * 60.0)

    def set(self, t: float) -> float:
        t = require_real("t", t)
        if t < self._now:
            raise ValueError(f"t must not be earlier than the current time {self._now}, got {t}")
        self._now = t
        return self._now

    def __repr__(self) -> str:
        return f"StepClock(now={self._now})"
