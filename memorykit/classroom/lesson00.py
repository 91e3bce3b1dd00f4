"""The index notebook's two demonstrations: token explosion and "which page do you mean?".

* ``token_explosion``: billed prompt tokens per turn when every request resends
  the whole history, against a bounded buffer, and how many planted facts each
  still knows at the end (the trade-off the whole course is about).
* ``which_page``: D0's failure (docs/BIBLIOGRAPHY.md) replayed on a real buffer: "Show me page
  42", some chatter, then "Update that page's title"; does the memory still hold
  the page when the reference arrives?

Taught in ``notebooks/00_index.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit.buffers.policies import FIFOBuffer, ImportanceBuffer
from memorykit.clock import StepClock
from memorykit.classroom.figure import legend_below
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.conversation import SimulatedConversation


@dataclass(frozen=True)
class Explosion:
    turns: np.ndarray
    full_history: np.ndarray
    """Billed prompt tokens per turn when the whole history is resent (reply primer included)."""
    bounded: np.ndarray
    """Billed prompt tokens per turn of a FIFO buffer of ``budget`` tokens."""
    budget: int
    facts_full: int
    facts_bounded: int
    n_facts: int

    def summary(self) -> dict[str, Any]:
        at = {t: int(self.full_history[t - 1]) for t in (10, 100, len(self.turns))
              if t <= len(self.turns)}
        return {
            "turns": int(len(self.turns)),
            **{f"full_history_tokens_at_turn_{t}": v for t, v in at.items()},
            "total_billed_if_resent_every_turn": int(self.full_history.sum()),
            "bounded_budget": self.budget,
            "bounded_max_tokens": int(self.bounded.max()),
            "total_billed_bounded": int(self.bounded.sum()),
            "facts_known_full_history": f"{self.facts_full}/{self.n_facts}",
            "facts_known_bounded": f"{self.facts_bounded}/{self.n_facts}",
        }


def token_explosion(conversation: SimulatedConversation, budget: int = 2000) -> Explosion:
    """Prompt size per turn (measured at each turn's last message) with and without a bound."""
    buf = FIFOBuffer(budget)
    full = buf.chat_format.reply_primer
    last_turn = conversation.n_turns
    full_at = np.zeros(last_turn, dtype=np.int64)
    bounded_at = np.zeros(last_turn, dtype=np.int64)
    for m in conversation.messages:
        full += m.billed_tokens
        buf.add(m)
        if m.turn >= 1:
            full_at[m.turn - 1] = full
            bounded_at[m.turn - 1] = buf.tokens
    n_full = sum(conversation.fact_survival(conversation.messages).values())
    n_bounded = sum(conversation.fact_survival(buf.messages()).values())
    return Explosion(np.arange(1, last_turn + 1), full_at, bounded_at, budget, n_full, n_bounded,
                     len(conversation.facts))


def explosion_figure(result: Explosion) -> Any:
    """A static plotly figure of ``token_explosion``'s two curves."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_scatter(x=result.turns, y=result.full_history, name="resend the whole history",
                    mode="lines")
    fig.add_scatter(x=result.turns, y=result.bounded, name=f"FIFO buffer, {result.budget} tokens",
                    mode="lines")
    fig.update_layout(title="Prompt tokens per turn: the token explosion", height=420,
                      xaxis_title="turn", yaxis_title="billed prompt tokens",
                      margin=dict(l=60, r=20, t=50, b=50),
                      legend=legend_below())
    return fig


CHATTER: tuple[str, ...] = (
    "Thanks, that looks right.",
    "Can you also check the footer links?",
    "The footer links all work.",
    "What about the contact form?",
    "The contact form sends correctly.",
    "Great, and the images load fast?",
    "Images load in under a second.",
    "Nice. Give me a moment to think.",
)


@dataclass(frozen=True)
class WhichPage:
    policy: str
    budget: int
    chatter: int
    kept_page: bool
    reply: str
    tokens: int


def which_page(policy: str = "fifo", budget: int = 120, chatter: int = 6) -> WhichPage:
    """Replay D0's exchange through a buffer and answer the reference from memory.

    The page request is marked important (0.9), the chatter unimportant (0.2). The
    "agent" resolves "that page" to the most recent page number it still holds.
    """
    if policy not in ("fifo", "importance"):
        raise ValueError(f"policy must be 'fifo' or 'importance', got {policy!r}")
    factory = MessageFactory(clock=StepClock())
    buf = (FIFOBuffer if policy == "fifo" else ImportanceBuffer)(budget)
    buf.add(factory.system("You edit pages of a CMS."))
    buf.add(factory.user("Show me page 42", importance=0.9))
    buf.add(factory.assistant("Here's page 42: Home Page", importance=0.9))
    for i in range(chatter):
        buf.add(factory.message("user" if i % 2 == 0 else "assistant",
                                CHATTER[i % len(CHATTER)], importance=0.2))
    buf.add(factory.user("Update that page's title", importance=0.6))
    kept = any("page 42" in m.content for m in buf)
    reply = "Updating the title of page 42." if kept else "Which page do you mean?"
    return WhichPage(policy, budget, chatter, kept, reply, buf.tokens)


def print_which_page(results: Sequence[WhichPage]) -> None:
    for r in results:
        print(f"{r.policy:<10} budget {r.budget:>4}  chatter {r.chatter}  window {r.tokens:>3} "
              f"tokens  page 42 kept: {str(r.kept_page):<5}  agent: {r.reply!r}")
