"""What a fact statement and an update are: the two records every supersession mechanism shares.

A ``Statement`` is one message saying one value of one fact (``key``: what it is about,
normalised, e.g. ``"deadline of the apollo report"``; ``value``: what it says, e.g.
``"friday"``). An ``Update`` links an earlier message to a later one that replaces it: the
later statement is current, the earlier one is *superseded* from the later one's time on.
Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memorykit._validate import require_choice, require_str

__all__ = ["UPDATE_KINDS", "Statement", "Update"]

UPDATE_KINDS = ("update", "correction", "cancellation", "contradiction")
"""How a later statement replaces an earlier one: a new value (a deadline moved), a fix of a
mistake ("4712, not 4721"), the fact ended ("cancel the order"), or a different value stated
with no cue at all."""


@dataclass(frozen=True)
class Statement:
    """One message's value for one fact."""

    key: str
    """What the fact is about, normalised (lower case, single spaces)."""
    value: str
    """What the message says it is ("" for a cancellation: the fact no longer holds)."""
    message_id: str
    """The message that says it."""
    at: float
    """When it was said (the message's ``created_at``)."""
    strength: float = 1.0
    """How strongly it is held, in (0, 1] (D2's belief strength; 1.0 when nothing says)."""

    def __post_init__(self) -> None:
        require_str("key", self.key, non_empty=True)
        require_str("value", self.value)
        require_str("message_id", self.message_id, non_empty=True)
        if type(self.at) is bool or not isinstance(self.at, (int, float)) or not math.isfinite(self.at):
            raise ValueError(f"at must be a finite number of seconds, got {self.at!r}")
        if type(self.strength) is bool or not isinstance(self.strength, (int, float)) or \
                not 0.0 < self.strength <= 1.0:
            raise ValueError(f"strength must be a number in (0, 1], got {self.strength!r}")


@dataclass(frozen=True)
class Update:
    """A later message that replaces an earlier one's value of the same fact."""

    old: str
    """Id of the earlier message, superseded from ``new`` on."""
    new: str
    """Id of the later message, current until something replaces it in turn."""
    key: str
    """What the fact is about (as ``Statement.key``)."""
    kind: str
    """One of ``UPDATE_KINDS``."""
    cue: str
    """What said so, for a reader: the pattern matched ("not X but Y", "moved to"), or
    "same key, new value" when nothing but the value changed."""

    def __post_init__(self) -> None:
        require_str("old", self.old, non_empty=True)
        require_str("new", self.new, non_empty=True)
        if self.old == self.new:
            raise ValueError(f"an update links two messages, got old == new == {self.old!r}")
        require_str("key", self.key, non_empty=True)
        require_choice("kind", self.kind, UPDATE_KINDS)
        require_str("cue", self.cue)
