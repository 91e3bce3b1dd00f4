"""Replay a summary buffer over a simulated conversation, and measure it.

A measurement (beside the other evaluations), not part of the buffer:
``replay_summary_buffer(conv, buffer)`` adds every message of a
``SimulatedConversation`` to a fresh ``SummaryBuffer`` and returns a ``SummaryRun``:

* the token sawtooth: the window's tokens right after each message arrived
  (``before``: over the threshold at the moment a round is due) and once the
  buffer settled (``after``);
* every summarization round (turn, depth, messages taken, tokens before and after),
  and the depth of the deepest kept summary after every message;
* for every planted fact, whether its key is still in the final window, summaries
  included (``fact_alive``), and the turn it dropped out (``fact_lost_turn``). A
  planted key occurs only in its own message (the simulator's guarantee, memorykit.classroom.scenarios.conversation), so a fact is
  known while that message, or a summary quoting the key, is kept.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.classroom.scenarios.conversation import SimulatedConversation
from memorykit.classroom.scenarios.facts import fact_survival


@dataclass(frozen=True)
class Round:
    """One summarization round."""

    turn: int
    index: int
    """Position of the triggering message in the replay (x of the sawtooth)."""
    depth: int
    taken: int
    """Messages (originals or the previous summary) replaced by the new summary."""
    tokens_before: int
    tokens_after: int
    rule: str


@dataclass(frozen=True)
class SummaryRun:
    budget: int
    threshold: float
    target: float
    min_recent: int
    turns: np.ndarray
    """Turn of every message added, in order."""
    before: np.ndarray
    """Window tokens right after each message arrived."""
    after: np.ndarray
    """Window tokens once the buffer settled."""
    depth: np.ndarray
    """Depth of the deepest kept summary after each message (0: no summary yet)."""
    rounds: list[Round]
    fact_alive: dict[str, bool]
    """Fact id -> is its key still in the final window (summaries included)."""
    fact_lost_turn: dict[str, int | None]
    """Fact id -> turn at which its key left the window (None: still there)."""
    fact_turn: dict[str, int]
    final_messages: int
    final_summary: str
    evictions: int
    """Fallback evictions (summarizing could not get under the hard budget)."""
    summarizer: str = field(default="")

    @property
    def n_summarizations(self) -> int:
        return len(self.rounds)

    @property
    def max_depth(self) -> int:
        """Deepest summary ever written (a summary of summaries of ... )."""
        return max((r.depth for r in self.rounds), default=0)

    @property
    def facts_alive(self) -> int:
        return sum(self.fact_alive.values())

    def stats(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "threshold_tokens": round(self.threshold * self.budget),
            "target_tokens": round(self.target * self.budget),
            "min_recent": self.min_recent,
            "summarizations": self.n_summarizations,
            "max_depth": self.max_depth,
            "mean_tokens_freed_per_round": round(float(np.mean(
                [r.tokens_before - r.tokens_after for r in self.rounds])), 1) if self.rounds else 0.0,
            "peak_tokens": int(self.before.max()),
            "peak_tokens_settled": int(self.after.max()),
            "fallback_evictions": self.evictions,
            "final_tokens": int(self.after[-1]),
            "facts_alive": self.facts_alive,
            "facts_planted": len(self.fact_alive),
        }


def replay_summary_buffer(conv: SimulatedConversation, buf: SummaryBuffer) -> SummaryRun:
    """Add every message of ``conv`` to ``buf`` (a fresh ``SummaryBuffer``) and measure it."""
    if not isinstance(buf, SummaryBuffer):
        raise TypeError(f"buf must be a SummaryBuffer, got {buf!r}")
    if len(buf):
        raise ValueError(f"buf must be empty (a fresh buffer), got one holding {len(buf)} messages")
    facts = conv.facts
    by_message: dict[str, list] = {}
    for f in facts:
        by_message.setdefault(f.message_id, []).append(f)
    planted: list = []
    present: dict[str, bool] = {}
    lost_turn: dict[str, int | None] = {}
    n = len(conv.messages)
    turns = np.empty(n, int)
    depth = np.zeros(n, int)
    rounds: list[Round] = []
    current_depth = 0
    before = np.empty(n, int)
    after = np.empty(n, int)
    for i, m in enumerate(conv.messages):
        events = buf.add(m)
        # read per add: token_history keeps only the newest token_history_limit samples
        sample = buf.token_history[-1]
        before[i], after[i] = sample.before, sample.after
        for f in by_message.get(m.id, ()):
            planted.append(f)
            present[f.id] = True
            lost_turn[f.id] = None
        if events:
            for e in events:
                if e.kind == "summarization":
                    rounds.append(Round(m.turn, i, e.depth, len(e.message_ids),
                                        e.tokens_before, e.tokens_after, e.rule))
            current_depth = buf.summary_depth()
            # A planted key occurs only in its own message (the simulator's guarantee, memorykit.classroom.scenarios.conversation), so a fact
            # is still known while that message or a summary quoting the key is kept.
            quoted = "\x00".join(s.content for s in buf.summaries())
            for f in planted:
                if present[f.id] and f.message_id not in buf and f.key not in quoted:
                    present[f.id] = False
                    lost_turn[f.id] = m.turn
        turns[i] = m.turn
        depth[i] = current_depth
    final = fact_survival(facts, buf.messages())
    summaries = buf.summaries()
    return SummaryRun(
        buf.max_tokens, buf.threshold, buf.target, buf.min_recent, turns, before, after, depth, rounds, final,
        {f.id: lost_turn.get(f.id) for f in facts}, {f.id: f.turn for f in facts},
        len(buf), summaries[-1].content if summaries else "", len(buf.trace.evictions()),
        getattr(buf.summarizer, "name", type(buf.summarizer).__name__),
    )


__all__ = ["Round", "SummaryRun", "replay_summary_buffer"]
