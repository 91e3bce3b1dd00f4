"""Lesson 01: exact token counts, billed tokens, the context budget, estimates that mislead.

Pure computation (tested, benchmarked):

* ``count_table``: exact counts of sample texts in cl100k_base and o200k_base, beside the
  "characters / 4" rule of thumb; ``chat_breakdown``: content vs billed tokens of a small chat.
* ``budget_picture``: D4's context-window picture for any window and memory share (a
  ``memorykit.tokens.ContextBudget`` that may overflow); ``recent_turns_that_fit``: how many
  of a conversation's latest turns a memory budget holds (measured on the real messages).
* ``char_estimate_errors``: the error of ``chars / k`` against exact counts, per message.
* ``yours_billed``: every message's bill by the student's ``billed_tokens`` (memoized).

Explorers: ``BudgetExplorer`` (window and memory-share sliders) and ``EstimateExplorer``
(characters-per-token slider; ``yours=billed_tokens`` adds the student's bill of every message
as markers of their own beside the library's billed count).
Taught in ``notebooks/01_tokens_and_budgets.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, takewhile
from typing import Any

import numpy as np

from memorykit._validate import require_positive
from memorykit.classroom.explorer import Implementation, LessonExplorer, Setting, _go, yours_name
from memorykit.classroom.figure import legend_below
from memorykit.classroom.memo import memo
from memorykit.messages import Message
from memorykit.tokens import ChatFormat, ContextBudget, Tokenizer, count_chat_tokens, role_tokens

ENCODINGS = ("cl100k_base", "o200k_base")

SAMPLE_TEXTS: tuple[tuple[str, str], ...] = (
    ("english", "The quick brown fox jumps over the lazy dog."),
    ("fact", "The locker code at the ski lodge is 4721."),
    ("numbers", "Invoice 2024-0315 totals $1,299.99 for 37 items."),
    ("code", "for i in range(10):\n    total += prices[i] * 1.2"),
    ("json", '{"user_id": 48213, "tags": ["vip", "beta"], "active": true}'),
    ("url", "https://example.com/api/v2/users?id=42&sort=desc"),
    ("german", "Die Kündigungsfrist beträgt drei Monate zum Quartalsende."),
    ("japanese", "東京駅から京都まで新幹線で約二時間です。"),
    ("emoji", "Great job team! 🎉🚀👏"),
    ("whitespace", "a        b\n\n\n\n        c"),
)
"""(label, text) pairs chosen so the two encodings and the estimate disagree."""

SAMPLE_CHAT: tuple[dict[str, str], ...] = (
    {"role": "system", "content": "You are a helpful travel assistant. Be brief."},
    {"role": "user", "content": "My flight to Lisbon is TP 1351 on Friday."},
    {"role": "assistant", "content": "Noted: TP 1351 to Lisbon on Friday."},
    {"role": "user", "content": "Which terminal?"},
    {"role": "assistant", "content": "Terminal 1."},
)
"""A small chat whose framing is a large share of what it costs."""


# ----------------------------------------------------------------- counts
@dataclass(frozen=True)
class TokenRow:
    label: str
    text: str
    chars: int
    counts: dict[str, int]  # exact tokens per encoding name
    estimate: float  # chars / chars_per_token

    def estimate_error(self, encoding: str = "cl100k_base") -> float:
        """Relative error of the estimate against the exact count (+ over, - under)."""
        exact = self.counts[encoding]
        return (self.estimate - exact) / exact if exact else 0.0


def count_table(texts: Sequence[tuple[str, str]] = SAMPLE_TEXTS,
                encodings: Sequence[str] = ENCODINGS, chars_per_token: float = 4.0
                ) -> list[TokenRow]:
    """Exact counts of each ``(label, text)`` in each encoding, with the chars/k estimate."""
    require_positive("chars_per_token", chars_per_token)
    tokenizers = [Tokenizer(e) for e in encodings]
    return [TokenRow(label, text, len(text), {t.encoding: t.count(text) for t in tokenizers},
                     len(text) / chars_per_token) for label, text in texts]


def print_count_table(rows: Sequence[TokenRow], encodings: Sequence[str] = ENCODINGS) -> None:
    """The table as fixed-width text (label, chars, exact counts, estimate, its error)."""
    head = f"{'text':<11}{'chars':>6}" + "".join(f"{e:>13}" for e in encodings)
    print(head + f"{'chars/4':>9}{'error vs ' + encodings[0]:>22}")
    for r in rows:
        line = f"{r.label:<11}{r.chars:>6}" + "".join(f"{r.counts[e]:>13}" for e in encodings)
        print(line + f"{r.estimate:>9.1f}{r.estimate_error(encodings[0]):>+21.0%}")


# ------------------------------------------------------------ billed tokens
@dataclass(frozen=True)
class ChatRow:
    role: str
    content_tokens: int
    framing_tokens: int

    @property
    def billed_tokens(self) -> int:
        return self.content_tokens + self.framing_tokens


@dataclass(frozen=True)
class ChatBreakdown:
    rows: list[ChatRow]
    reply_primer: int
    encoding: str

    @property
    def content_tokens(self) -> int:
        return sum(r.content_tokens for r in self.rows)

    @property
    def billed_tokens(self) -> int:
        """What the API bills for the prompt: contents, framing and the reply primer."""
        return sum(r.billed_tokens for r in self.rows) + self.reply_primer

    @property
    def overhead_share(self) -> float:
        return 1 - self.content_tokens / self.billed_tokens


def chat_breakdown(messages: Sequence[dict[str, str]] = SAMPLE_CHAT, encoding: str = "cl100k_base",
                   chat_format: ChatFormat = ChatFormat()) -> ChatBreakdown:
    """Content vs framing tokens per message; totals agree with ``count_chat_tokens``."""
    counter = Tokenizer(encoding)
    rows = [ChatRow(m["role"], counter.count(m["content"]),
                    chat_format.message_overhead(role_tokens(counter, m["role"]), "name" in m)
                    + (counter.count(m["name"]) if "name" in m else 0)) for m in messages]
    out = ChatBreakdown(rows, chat_format.reply_primer, encoding)
    assert out.billed_tokens == count_chat_tokens(list(messages), counter, chat_format)
    return out


# ------------------------------------------------------------------ budget
def budget_picture(context_window: int = 128_000, memory: int | None = None, *,
                   memory_share: float | None = None, **parts: int) -> ContextBudget:
    """Seed 004's picture, kept even when it overflows (``ContextBudget(strict=False)``); the
    memory part is given in tokens or as a share of the window."""
    if (memory is None) == (memory_share is None):
        raise ValueError(f"give exactly one of memory or memory_share, got memory={memory!r}, "
                         f"memory_share={memory_share!r}")
    if memory is None:
        return ContextBudget.with_memory_share(context_window, memory_share, strict=False, **parts)
    return ContextBudget(context_window, memory=memory, strict=False, **parts)


def recent_turns_that_fit(messages: Sequence[Message], memory: int) -> int:
    """How many of the conversation's latest whole turns fit in ``memory`` billed tokens
    (system messages, which have their own part of the budget, not counted)."""
    per_turn: dict[int, int] = {}
    for m in messages:
        if m.role != "system":
            per_turn[m.turn] = per_turn.get(m.turn, 0) + m.billed_tokens
    newest_first = accumulate(per_turn[turn] for turn in sorted(per_turn, reverse=True))
    return sum(1 for _ in takewhile(lambda used: used <= memory, newest_first))


def turn_tokens(messages: Sequence[Message], n_turns: int) -> int:
    """Billed tokens of the first ``n_turns`` turns (system messages excluded)."""
    return sum(m.billed_tokens for m in messages if m.role != "system" and 1 <= m.turn <= n_turns)


# --------------------------------------------------------------- estimates
@dataclass(frozen=True)
class EstimateErrors:
    chars_per_token: float
    exact: np.ndarray
    estimate: np.ndarray

    @property
    def relative_error(self) -> np.ndarray:
        """(estimate - exact) / exact per message."""
        return (self.estimate - self.exact) / self.exact

    def stats(self) -> dict[str, float]:
        rel = np.abs(self.relative_error)
        total_exact = float(self.exact.sum())
        return {"messages": int(self.exact.size), "mean_abs_error": round(float(rel.mean()), 3),
                "median_abs_error": round(float(np.median(rel)), 3),
                "max_abs_error": round(float(rel.max()), 3),
                "share_off_by_over_20pct": round(float((rel > 0.2).mean()), 3),
                "total_exact": int(total_exact),
                "total_estimate": int(round(float(self.estimate.sum()))),
                "total_error": round(float(self.estimate.sum() - total_exact) / total_exact, 3)}


def char_estimate_errors(messages: Sequence[Message], chars_per_token: float = 4.0,
                         encoding: str | None = None) -> EstimateErrors:
    """``len(content) / chars_per_token`` against exact counts, per non-empty message: the
    messages' own ``content_tokens`` (``encoding=None``), or their contents counted again."""
    require_positive("chars_per_token", chars_per_token)
    kept = [m for m in messages if m.content]
    if encoding is None:
        exact = np.fromiter((m.content_tokens for m in kept), float, len(kept))
    else:
        tok = Tokenizer(encoding)
        exact = np.fromiter((tok.count(m.content) for m in kept), float, len(kept))
    chars = np.fromiter((len(m.content) for m in kept), float, len(kept))
    return EstimateErrors(float(chars_per_token), exact, chars / chars_per_token)


def best_chars_per_token(messages: Sequence[Message]) -> float:
    """The single ratio that makes the conversation's total estimate exact."""
    return sum(len(m.content) for m in messages) / sum(m.content_tokens for m in messages)


YOURS = Implementation("a function billed_tokens(messages, counter) -> int",
                       parameters=("messages", "counter"))


@memo(maxsize=32)
def yours_billed(messages: Sequence[Message], billed_tokens: Callable[..., int],
                 encoding: str = ENCODINGS[0]) -> np.ndarray:
    """Each message's share of the bill by a student's ``billed_tokens``, as ``Message``'s
    ``billed_tokens`` stores it: the request of that message alone minus the empty request."""
    billed_tokens = YOURS.check("billed_tokens", billed_tokens)
    counter, out = Tokenizer(encoding), []
    for request in ([], *([m.to_openai()] for m in messages)):
        out.append(n := billed_tokens(request, counter))
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"billed_tokens must return an int number of tokens, got {n!r} "
                            f"for the request {request!r}")
    return np.asarray(out[1:], dtype=int) - int(out[0])


# ---------------------------------------------------------------- explorers
_PART_COLORS = {"system prompt": "#636efa", "tools": "#ab63fa", "retrieved": "#19d3f3",
                "memory": "#ef553b", "user input": "#ffa15a", "response reserve": "#b6e880"}


class BudgetExplorer(LessonExplorer):
    """The context window as a stacked bar; sliders for the window and the memory share."""

    settings = (Setting("context_window_k", "context window (K tokens)", 128, 8, 200, 8),
                Setting("memory_share", "memory share", 1 / 64, 0.0, 0.5, 1 / 320, ".2%"))
    digits = 6  # D4's 2,000 of 128,000 tokens is a share of 1/64: steps of 1/320 reach it

    def __init__(self, messages: Sequence[Message], *, parts: dict[str, int] | None = None,
                 **settings: Any) -> None:
        self.messages = list(messages)
        self.parts = dict(parts or {})
        super().__init__(**settings)

    def _make_figure(self) -> Any:
        fig = _go().Figure()
        for name, color in _PART_COLORS.items():
            fig.add_bar(name=name, y=["window"], x=[0], orientation="h", marker_color=color,
                        text=[""], textposition="inside", textangle=0)
        fig.add_scatter(name="window edge", x=[0, 0], y=[-0.5, 0.5], mode="lines",
                        line=dict(color="black", dash="dash"), yaxis="y2", showlegend=False)
        fig.update_layout(barmode="stack", height=280, uniformtext=dict(minsize=10, mode="hide"),
                          margin=dict(l=60, r=20, t=50, b=40), title="Who gets the context window",
                          xaxis_title="tokens", legend=legend_below(),
                          yaxis2=dict(overlaying="y", range=[-0.5, 0.5], visible=False))
        return fig

    def _compute(self, context_window_k: int, memory_share: float) -> ContextBudget:
        return budget_picture(context_window_k * 1000, memory_share=memory_share, **self.parts)

    def _draw(self, pic: ContextBudget) -> None:
        window_moved = self.moved("context_window_k")  # the memory share moves two bars only
        for name, tokens in pic.shares().items():
            if window_moved or name in ("memory", "response reserve"):
                bar = self.trace(name)
                bar.x = [tokens]
                bar.text = [f"{tokens / pic.context_window:.1%}"]
        if window_moved:
            self.trace("window edge").x = [pic.context_window, pic.context_window]

    def summary(self) -> dict[str, Any]:
        pic: ContextBudget = self.result
        return {"context_window": pic.context_window, "memory_tokens": pic.memory,
                "prompt_tokens": pic.prompt_tokens, "response_reserve": pic.response_reserve,
                "fits": pic.fits, "memory_pct": round(100 * pic.memory / pic.context_window, 1),
                "reserve_pct": round(100 * pic.response_reserve / pic.context_window, 1),
                "recent_turns_in_memory": recent_turns_that_fit(self.messages, pic.memory)}


class EstimateExplorer(LessonExplorer):
    """Exact tokens vs ``chars / k`` for every message; a slider for k. With
    ``yours=billed_tokens``, a panel below: each message's framing (billed minus content
    tokens) by the library and by the student's function."""

    settings = (Setting("chars_per_token", "characters per token", 4.0, 2.0, 6.0, 0.1, ".1f"),)
    implementation = YOURS

    def __init__(self, messages: Sequence[Message], yours: Any = None, **settings: Any) -> None:
        self.messages = [m for m in messages if m.content]
        self.exact = np.array([m.content_tokens for m in self.messages])
        self.billed = np.array([m.billed_tokens for m in self.messages])  # the library's count
        super().__init__(yours=yours, **settings)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        exact, top, ids = self.exact.tolist(), int(self.exact.max()), [m.id for m in self.messages]
        fig = make_subplots(rows=2, cols=1, row_heights=[0.64, 0.36], vertical_spacing=0.16,
                            subplot_titles=("", "framing (billed minus content tokens), per "
                                            "message: the library's and yours")) \
            if self.yours else _go().Figure()
        upper, lower = (dict(row=1, col=1), dict(row=2, col=1)) if self.yours else ({}, {})
        # WebGL markers: a move redraws ~1,000 points per panel, and SVG markers doubled the draw
        fig.add_scattergl(name="messages", x=exact, y=exact, mode="markers", hovertext=ids,
                          marker=dict(size=5, opacity=0.6, color="#636efa"), **upper)
        fig.add_scatter(name="exact = estimate", x=[0, top], y=[0, top], mode="lines",
                        line=dict(color="black", dash="dash"), **upper)
        fig.add_scatter(name="±20%", x=[0, top, None, 0, top], y=[0, 1.2 * top, None, 0, 0.8 * top],
                        mode="lines", line=dict(color="gray", dash="dot", width=1), **upper)
        if self.yours:
            fig.add_scattergl(name="billed (library)", x=exact, y=[], mode="markers",
                              hovertext=ids, marker=dict(size=10, symbol="circle-open",
                                                         color="#00a060"), **lower)
        for name in self.yours:
            fig.add_scattergl(name=yours_name(name), x=exact, y=[], mode="markers", hovertext=ids,
                              marker=dict(size=7, symbol="x", color="#d62728"), **lower)
        fig.update_layout(height=420, margin=dict(l=60, r=20, t=50, b=50),
                          title="chars / k against exact cl100k_base counts, per message",
                          xaxis_title="exact tokens", yaxis_title="estimated tokens")
        if self.yours:
            fig.update_layout(height=640, legend=legend_below())
            fig.update_xaxes(title_text="exact tokens (content)", row=2, col=1)
            fig.update_yaxes(title_text="framing tokens", rangemode="tozero", row=2, col=1)
        return fig

    def _compute(self, chars_per_token: float) -> dict[str, Any]:
        return {"errors": char_estimate_errors(self.messages, chars_per_token),
                "yours": {n: yours_billed(self.messages, f) for n, f in self.yours.items()}}

    def _draw(self, result: dict[str, Any]) -> None:
        self.trace("messages").y = result["errors"].estimate
        if self.yours and self.moved():  # exact counts depend on no slider: drawn once
            self.trace("billed (library)").y = self.billed - self.exact
            for name, billed in result["yours"].items():
                self.trace(yours_name(name)).y = billed - self.exact

    def summary(self) -> dict[str, Any]:
        errors: EstimateErrors = self.result["errors"]
        out = {"chars_per_token": round(errors.chars_per_token, 2), **errors.stats()}
        if self.yours:
            out["billed_total"] = int(self.billed.sum())
        for name, billed in self.result["yours"].items():
            out[f"{yours_name(name)}_billed_total"] = int(billed.sum())
            agree = int((billed == self.billed).sum())
            out[f"{yours_name(name)}_messages_agreeing"] = f"{agree}/{self.billed.size}"
        return out
