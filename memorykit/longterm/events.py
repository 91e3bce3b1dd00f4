"""Trace records of long-term memory: what was recalled, learned, stored or trimmed, and why.

They sit in a ``memorykit.trace.Trace`` next to the buffers' events
(consolidating messages into an episode is recorded as a ``Summarization``
with rule ``"episodic-consolidation"``), so ``trace.records()`` gives one table
of every decision. Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Recall:
    """A candidate memory scored against a query: chosen or not, and why."""

    query: str
    candidate_id: str
    """Episode id, stored unit id or message id."""
    sources: tuple[str, ...]
    """Original message ids the candidate stands for."""
    score: float
    threshold: float | None
    chosen: bool
    reason: str
    """A sentence with the numbers that decided it."""
    at: float

    kind = "recall"


@dataclass(frozen=True, slots=True)
class RuleLearned:
    """The critic produced a rule that was not known before."""

    rule_id: str
    text: str
    sources: tuple[str, ...]
    critic: str
    at: float

    kind = "rule"


@dataclass(frozen=True, slots=True)
class Stored:
    """Messages written to the long-term store (one batch), or held back, and why."""

    message_ids: tuple[str, ...]
    session_id: str
    reason: str
    at: float

    kind = "store"


@dataclass(frozen=True, slots=True)
class StoreFailed:
    """A write to the long-term store failed: the messages stay pending and are tried again."""

    message_ids: tuple[str, ...]
    session_id: str
    error: str
    """The error's type (and kind), never its text: it may carry a URL or a key."""
    pending: int
    """Messages of the session waiting to be stored after this failure."""
    at: float

    kind = "store-failed"


@dataclass(frozen=True, slots=True)
class Superseded:
    """A stored message whose fact a later message replaced, and what the update policy did."""

    message_id: str
    superseded_by: str
    """The message now current for the fact (the one that replaced it, or that the policy kept)."""
    key: str
    session_id: str
    action: str
    """'dropped' (deleted from the store on purpose) or 'dated' (kept, marked superseded)."""
    reason: str
    """The update policy's sentence: old value, new value, and until when the old one held."""
    at: float

    kind = "superseded"


@dataclass(frozen=True, slots=True)
class Trimmed:
    """An item left out of a context to meet the token budget."""

    item_kind: str
    sources: tuple[str, ...]
    tokens: int
    reason: str

    kind = "trim"


__all__ = ["Recall", "RuleLearned", "StoreFailed", "Stored", "Superseded", "Trimmed"]
