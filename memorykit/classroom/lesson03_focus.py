"""Lesson 03, second half: showing the model less than the window, and one window per task.

Pure computation over the default conversation (tested; the notebook only prints it):

* ``attention_recall(conv, settings)``: seed 001's attention window
  (``memorykit.buffers.attention.AttentionWindow``) over the whole conversation, asked every
  planted fact's question: per (window_tokens, neighbours), how many fact messages the
  selection holds, beside a recency window of the same tokens (the newest messages that fit).
* ``context_story(conv)``: seed 001's ``ContextManager`` driven through switch, stack, return
  and merge with the conversation's messages, one row per step.
* ``boost_survival(conv, boosts, after)``: whether the message a context was left at is still
  in it ``after`` messages past the return, per ``boost_to``; ``kept_for(conv, boost_to)``: how
  many messages past the return it lasts.
* ``FocusExplorer``: sliders for the attention window's tokens and neighbours and for the
  boost a context's last message gets on leaving; bars of the facts each window finds and of how
  long the left-off message lasts. ``attention_hits`` and ``kept_for`` check their arguments,
  then read memoized replays (``_attention_hits``, ``_kept_for``: ``memorykit.classroom.memo``),
  so a slider recomputes only what it changes.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memorykit._validate import require_fraction, require_int
from memorykit.buffers.attention import AttentionWindow
from memorykit.buffers.context_manager import ContextManager
from memorykit.buffers.policies import FIFOBuffer
from memorykit.embeddings import MemoEmbedder
from memorykit.classroom.explorer import LessonExplorer, Setting, _go
from memorykit.classroom.memo import memo
from memorykit.messages import Message
from memorykit.classroom.scenarios.conversation import SimulatedConversation

ATTENTION_SETTINGS: tuple[tuple[int, int], ...] = (
    (250, 0), (250, 1), (500, 0), (500, 1), (500, 2), (1000, 0), (1000, 1),
)
"""(window_tokens, neighbours) pairs the lesson's table compares; seed 001's default is (2000, 1)."""

CONTEXT_BUDGET = 1500
"""Tokens per context in the context-switching section (as lesson 02's budget)."""
MAIN_MESSAGES, SIDE_MESSAGES = 60, 40
"""The story: 60 messages in "main", then an interruption of 40 in "side", then back."""


_EMBEDDER = MemoEmbedder(maxsize=8192)
"""Remembers each message's vector: a slider move re-selects, it does not re-embed."""


def attention_hits(conv: SimulatedConversation, window_tokens: int, neighbours: int
                   ) -> tuple[int, float]:
    """(planted facts whose message the attention window selects for the fact's question,
    mean billed tokens selected) over the whole conversation."""
    # checked before the memo is read: a memo key cannot tell True or 500.0 from 1 or 500
    require_int("window_tokens", window_tokens, minimum=1)
    require_int("neighbours", neighbours, minimum=0)
    return _attention_hits(conv, window_tokens, neighbours)


@memo(maxsize=256)
def _attention_hits(conv: SimulatedConversation, window_tokens: int, neighbours: int
                    ) -> tuple[int, float]:
    """``attention_hits`` with its arguments checked (the 50 selections, remembered)."""
    buffer = FIFOBuffer(max_tokens=None)
    buffer.extend(conv.messages)
    window = AttentionWindow(buffer, _EMBEDDER, window_tokens=window_tokens,
                             neighbours=neighbours)
    found, tokens = 0, 0
    for fact in conv.facts:
        selection = window.select_with_scores(fact.question)
        found += fact.message_id in selection.ids
        tokens += selection.tokens
    return found, tokens / len(conv.facts)


def recency_hits(conv: SimulatedConversation, window_tokens: int) -> int:
    """Planted facts among the newest messages that fit ``window_tokens`` (the same budget
    spent on recency instead of relevance)."""
    require_int("window_tokens", window_tokens, minimum=1)
    held: set[str] = set()
    used = 0
    for m in reversed(conv.messages):
        if used + m.billed_tokens > window_tokens:
            break
        held.add(m.id)
        used += m.billed_tokens
    return sum(f.message_id in held for f in conv.facts)


def attention_recall(conv: SimulatedConversation,
                     settings: Sequence[tuple[int, int]] = ATTENTION_SETTINGS) -> list[dict[str, Any]]:
    """One row per (window_tokens, neighbours): facts found by the attention window and by a
    recency window of the same budget, and the tokens the attention window used."""
    rows = []
    for window_tokens, neighbours in settings:
        found, tokens = attention_hits(conv, window_tokens, neighbours)
        rows.append({"window_tokens": window_tokens, "neighbours": neighbours,
                     "facts found": f"{found}/{len(conv.facts)}",
                     "mean tokens used": f"{tokens:.0f}",
                     "recency window": f"{recency_hits(conv, window_tokens)}/{len(conv.facts)}"})
    return rows


def _context_row(step: str, cm: ContextManager, watched: Message) -> dict[str, Any]:
    main = cm["main"]
    kept = main.get(watched.id)
    return {"step": step, "active": cm.active_context, "stack": ",".join(cm.stack) or "-",
            "contexts": " ".join(f"{n}:{len(b)}" for n, b in cm.contexts.items()),
            "left-off message": "evicted" if kept is None else f"importance {kept.importance:.2f}"}


def _story(conv: SimulatedConversation, *, boost_to: float, merge_factor: float,
           after: int, merge: bool) -> tuple[ContextManager, Message, list[dict[str, Any]]]:
    """The context-switching story (see ``context_story``), ``after`` messages to "main"
    past the return, merged at the end only if ``merge``; returns the manager, the message
    "main" was left at, and one row per step."""
    require_int("after", after, minimum=0)
    cm = ContextManager(CONTEXT_BUDGET, boost_to=boost_to, merge_factor=merge_factor)
    messages = conv.messages
    main_end, side_end = MAIN_MESSAGES, MAIN_MESSAGES + SIDE_MESSAGES
    for m in messages[:main_end]:
        cm.add(m)
    watched = cm["main"].messages()[-1]
    rows = [_context_row(f"add {main_end} messages to main", cm, watched)]
    cm.switch("side")
    rows.append(_context_row("switch('side')", cm, watched))
    for m in messages[main_end:side_end]:
        cm.add(m)
    rows.append(_context_row(f"add {SIDE_MESSAGES} messages to side", cm, watched))
    cm.return_to_previous()
    rows.append(_context_row("return_to_previous()", cm, watched))
    for m in messages[side_end:side_end + after]:
        cm.add(m)
    rows.append(_context_row(f"add {after} messages to main", cm, watched))
    if merge:
        cm.merge("side", "main")
        rows.append(_context_row("merge('side', 'main')", cm, watched))
    return cm, watched, rows


def context_story(conv: SimulatedConversation, *, boost_to: float = 0.9,
                  merge_factor: float = 0.7) -> list[dict[str, Any]]:
    """Switch, stack, return and merge on the conversation's messages: "main" takes the first
    60, an interruption ("side") the next 40, "main" 10 more after the return, then "side" is
    merged into "main". Each row: the active context, the stack, each context's message
    count, and the message "main" was left at (boosted on the way out)."""
    return _story(conv, boost_to=boost_to, merge_factor=merge_factor, after=10, merge=True)[2]


def boost_survival(conv: SimulatedConversation, boosts: Sequence[float],
                   after: Sequence[int]) -> list[dict[str, Any]]:
    """Per ``boost_to``: is the message "main" was left at still in "main" ``n`` messages
    after the return, for each ``n`` in ``after``."""
    rows = []
    for boost in boosts:
        row: dict[str, Any] = {"boost_to": f"{boost:.2f}"}
        for n in after:
            cm, watched, _ = _story(conv, boost_to=boost, merge_factor=0.7, after=n, merge=False)
            row[f"after {n}"] = "kept" if watched.id in cm["main"] else "evicted"
        rows.append(row)
    return rows


def kept_for(conv: SimulatedConversation, boost_to: float, *, step: int = 5,
             limit: int | None = None) -> int:
    """The most messages past the return (a multiple of ``step`` up to ``limit``: default 80,
    or fewer if the conversation ends sooner) after which the message "main" was left at is
    still in "main"."""
    require_fraction("boost_to", boost_to)
    room = max(0, len(conv.messages) - MAIN_MESSAGES - SIDE_MESSAGES)  # messages after the return
    limit = min(80, room) if limit is None else require_int("limit", limit, minimum=0,
                                                            maximum=room)
    step = require_int("step", step, minimum=1, maximum=max(1, limit))
    return _kept_for(conv, boost_to, step, limit)


@memo(maxsize=256)
def _kept_for(conv: SimulatedConversation, boost_to: float, step: int, limit: int) -> int:
    """``kept_for`` with its arguments checked (the stories it replays, remembered)."""
    kept = 0
    for n in range(0, limit + 1, step):
        cm, watched, _ = _story(conv, boost_to=boost_to, merge_factor=0.7, after=n, merge=False)
        if watched.id not in cm["main"]:
            break
        kept = n
    return kept


class FocusExplorer(LessonExplorer):
    """The attention window against the newest messages, and how long a boost lasts."""

    title = "Showing less than the window: attention, and named contexts"
    settings = (Setting("window_tokens", "attention window (tokens)", 500, 250, 2000, 250),
                Setting("neighbours", "neighbours of each hit", 0, 0, 2, 1),
                Setting("boost_to", "boost on leaving a context", 0.9, 0.5, 1.0, 0.05))

    def __init__(self, conversation: SimulatedConversation, **settings: Any) -> None:
        self.conversation = conversation
        super().__init__(**settings)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.18, subplot_titles=(
            "planted facts found (of their questions)", "left-off message lasts (messages)"))
        fig.add_trace(go.Bar(name="facts found", x=["attention window", "newest messages"],
                             y=[0, 0], marker_color=["#1f77b4", "#7f7f7f"], texttemplate="%{y}",
                             textposition="outside", cliponaxis=False), row=1, col=1)
        fig.add_trace(go.Bar(name="kept after return", x=["after the return"], y=[0],
                             marker_color="#2ca02c", texttemplate="%{y}", textposition="outside",
                             cliponaxis=False), row=1, col=2)
        fig.update_yaxes(range=[0, len(self.conversation.facts) * 1.15], row=1, col=1)
        fig.update_yaxes(range=[0, 92], row=1, col=2)
        fig.update_layout(height=380, showlegend=False, title=self.title,
                          margin=dict(l=50, r=20, t=80, b=40))
        return fig

    def _compute(self, **p: Any) -> dict[str, Any]:
        found, tokens = attention_hits(self.conversation, p["window_tokens"], p["neighbours"])
        return {"found": found, "tokens": tokens,
                "recency": recency_hits(self.conversation, p["window_tokens"]),
                "kept": kept_for(self.conversation, p["boost_to"])}

    def _draw(self, r: dict[str, Any]) -> None:
        if self.moved("window_tokens", "neighbours"):
            self.trace("facts found").y = [r["found"], r["recency"]]
        if self.moved("boost_to"):
            self.trace("kept after return").y = [r["kept"]]

    def summary(self) -> dict[str, Any]:
        r, n = self.result, len(self.conversation.facts)
        return {**{k: self.params[k] for k in ("window_tokens", "neighbours", "boost_to")},
                "attention window finds": f"{r['found']}/{n} facts, {r['tokens']:.0f} tokens",
                "newest messages find": f"{r['recency']}/{n} facts",
                "left-off message lasts": f"{r['kept']} messages after the return"}


__all__ = ["ATTENTION_SETTINGS", "FocusExplorer", "attention_hits", "attention_recall",
           "boost_survival", "context_story", "kept_for", "recency_hits"]
