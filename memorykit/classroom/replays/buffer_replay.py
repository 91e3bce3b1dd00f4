"""A conversation replayed through one buffer: who was evicted, when, by which rule, and which
planted facts the final window still holds.

``replay_buffer(conv, buffer)`` adds every message of a simulated conversation to ``buffer``
and reads the buffer's trace afterwards, so the record is what the buffer decided, not a
re-derivation of it. Lesson 02 replays every registered pruning policy this way.
Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from memorykit.buffers.base import MessageBuffer
from memorykit.classroom.scenarios.conversation import SimulatedConversation
from memorykit.classroom.scenarios.facts import fact_survival


@dataclass(frozen=True)
class BufferReplay:
    """What one buffer did with one conversation."""

    policy: str
    """The policy's name (a registry name in lesson 02)."""
    params: dict[str, Any]
    """The settings the buffer ran with (budget and the policy's own settings)."""
    evict_turn: np.ndarray
    """Turn at which each eviction happened (one entry per evicted message)."""
    victim_turn: np.ndarray
    """Turn the evicted message was written in."""
    victim_importance: np.ndarray
    """Importance of the evicted message."""
    rules: tuple[str, ...]
    """Rule that chose each eviction."""
    evicted_at: dict[str, tuple[int, str]]
    """Message id -> (turn it was evicted at, rule)."""
    fact_alive: dict[str, bool]
    """Fact id -> is its key still in a message of the final window."""
    final_messages: int
    """Messages in the final window."""
    final_tokens: int
    """Billed tokens of the final window."""
    kept_turns: np.ndarray = field(repr=False)
    """Turns of the messages in the final window."""

    @property
    def facts_alive(self) -> int:
        return sum(self.fact_alive.values())

    def rule_mask(self, rule: str) -> np.ndarray:
        """Boolean mask of the evictions chosen by ``rule``."""
        return self._rule_array == rule

    @cached_property
    def _rule_array(self) -> np.ndarray:
        # one array per replay: the figure asks for a mask per rule on every redraw
        return np.asarray(self.rules, dtype=object)

    def rule_counts(self) -> dict[str, int]:
        return dict(Counter(self.rules))

    def oldest_kept_turn(self) -> int:
        """The earliest turn still in the window (0 when only system messages remain)."""
        kept = self.kept_turns[self.kept_turns > 0]
        return int(kept.min()) if kept.size else 0


def replay_buffer(conv: SimulatedConversation, buffer: MessageBuffer, *, policy: str,
                  params: dict[str, Any]) -> BufferReplay:
    """Add every message of ``conv`` to ``buffer`` (empty, with an unbounded trace) and record
    what it evicted and kept."""
    if not isinstance(buffer, MessageBuffer):
        raise TypeError(f"buffer must be a MessageBuffer, got {buffer!r}")
    if len(buffer):
        raise ValueError(f"buffer must start empty, got {len(buffer)} messages")
    if buffer.trace.max_events is not None:
        # a bounded trace forgets early evictions: the record would be silently incomplete
        raise ValueError("buffer must keep every trace event (Trace(max_events=None)), got "
                         f"max_events={buffer.trace.max_events}")
    add = buffer.add
    for m in conv.messages:
        add(m)
    by_id = {m.id: m for m in conv.messages}
    # (turn of the eviction, victim, rule) per evicted message, in eviction order
    gone = [(e.turn, by_id[mid], e.rule) for e in buffer.trace.evictions() for mid in e.message_ids]
    n = len(gone)
    evict_turn = np.fromiter((g[0] for g in gone), int, n)
    victim_turn = np.fromiter((g[1].turn for g in gone), int, n)
    victim_imp = np.fromiter((g[1].importance for g in gone), float, n)
    rules = tuple(g[2] for g in gone)
    evicted_at = {g[1].id: (g[0], g[2]) for g in gone}
    kept = buffer.messages()
    return BufferReplay(
        policy, dict(params), evict_turn, victim_turn, victim_imp, rules, evicted_at,
        fact_survival(conv.facts, kept), len(kept), buffer.tokens,
        np.asarray([m.turn for m in kept], int),
    )


__all__ = ["BufferReplay", "replay_buffer"]
