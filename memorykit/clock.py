"""Clocks: where a memory gets "now" from, and which of three time bases it runs on.

Every time-dependent rule (recency weighting, TTL, decay) reads an injected
Clock once per operation, so a simulation can run hours of conversation in
microseconds and a test can pin time exactly. A memory runs on one of three
**time bases**, each a clock here with a ``basis`` name:

* ``"wall"`` (``WallClock``): real seconds. What a live agent wants: five idle
  minutes are five minutes of the user's day. Never reproducible.
* ``"simulated"`` (``StepClock``): time moves only when code says so
  (``advance``, ``set``). Scenarios and replays move it to each turn's scripted
  time; left alone it stands still, so nothing ages and no TTL fires.
* ``"per turn"`` (``TurnClock``): time moves a fixed step per user turn, so
  "5 minutes idle" means "5 turns without a mention" at 60 s a turn. A turn is
  one user message that is not a summary: the boundary at which
  ``MessageFactory`` counts turns; a factory on a ``TurnClock`` starts the
  clock's next turn as it stamps that message.

A memory built without a clock has no basis of its own: buffers, the long-term
architectures, the memory service and the critics then read "now" from the
messages' ``created_at`` (``"message time"``), which the ``MessageFactory``'s
clock stamped. ``time_basis`` names the basis of any memory's clock.

**The default is simulated, everywhere** (``MessageFactory``, ``EntityMemory``,
``WorkingMemory``: a ``StepClock`` at 0). memorykit is a teaching toolkit whose
notebooks are compared output for output: a wall-clock default would make any
TTL or recency figure depend on how fast the machine ran the cell, and a
per-turn default would move time behind the back of a script that sets it. A
live agent passes ``WallClock()``; an agent loop without timestamps shares one
``TurnClock`` between its ``MessageFactory`` and its memories. The three bases
side by side: ``notebooks/04_entity_memory.ipynb`` (which clock?); recency over
simulated time: ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

from memorykit._validate import require_non_negative, require_positive, require_real


@runtime_checkable
class Clock(Protocol):
    """Anything with ``now()`` returning seconds as a float."""

    def now(self) -> float: ...


MESSAGE_TIME = "message time"
"""The basis of a memory built without a clock: the messages' ``created_at``."""


def time_basis(clock: Any) -> str:
    """The name of a clock's time basis: "wall", "simulated", "per turn", "message time" for
    no clock (``None``), "custom" for a clock of your own that does not name one."""
    if clock is None:
        return MESSAGE_TIME
    if not callable(getattr(clock, "now", None)):
        raise TypeError(f"clock must have a now() method, got {clock!r}")
    basis = getattr(clock, "basis", None)
    return basis if isinstance(basis, str) else "custom"


class WallClock:
    """Real time: seconds since the epoch, from ``time.time``."""

    basis = "wall"

    def now(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "WallClock()"


class StepClock:
    """Simulated time that moves only when told to.

    ``advance(seconds)`` moves it forward; ``set(t)`` jumps to an absolute time
    that must not be in the past (time never runs backwards in a memory).
    """

    basis = "simulated"

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


class TurnClock:
    """Time that moves ``seconds_per_turn`` at each user turn, and only then.

    ``now()`` is ``start + turn * seconds_per_turn``. ``begin_turn()`` starts the
    next turn; a ``MessageFactory`` on this clock calls it when it stamps a user
    message that is not a summary, so memories sharing the clock age by turns. It
    cannot be set or advanced otherwise: a turn is its only unit of time. Give one
    conversation (one factory) its own ``TurnClock``: two factories on one clock
    would each start a turn.
    """

    basis = "per turn"

    def __init__(self, seconds_per_turn: float = 60.0, start: float = 0.0) -> None:
        self.seconds_per_turn = require_positive("seconds_per_turn", seconds_per_turn)
        self.start = require_real("start", start)
        self.turn = 0
        """User turns begun so far (0 before the first user message)."""

    def now(self) -> float:
        return self.start + self.turn * self.seconds_per_turn

    def begin_turn(self) -> float:
        """Start the next user turn; returns the new time."""
        self.turn += 1
        return self.now()

    def __repr__(self) -> str:
        return f"TurnClock(turn={self.turn}, seconds_per_turn={self.seconds_per_turn}, now={self.now()})"


__all__ = ["MESSAGE_TIME", "Clock", "StepClock", "TurnClock", "WallClock", "time_basis"]
