"""D3's four memory architectures, each a ``ContextPolicy``.

* **A, context window**: the last ``window`` messages; everything older is
  erased ("hard forgetting").
* **B, episodic**: short-term memory plus episodes consolidated from its
  overflow, recalled by keyword overlap and recency (``episodic``).
* **C, semantic**: the same short-term window plus raw sentences recalled by
  cosine similarity from a vector store (``semantic``).
* **D, reflection**: C plus rules a critic drew from the actor's mistakes,
  injected into the system prompt (``reflection``). D3 calls D "the
  optimal blend": it recalls like C and also adapts its behaviour.

``AttentionArchitecture`` adapts the query-aware ``AttentionWindow`` buffer to the
same interface, so notebooks can put it in the same table.

Every architecture answers ``build_context(history, query, budget)`` with the
items it would send, in this order: system instructions, rules (D), recalled
memories (episodes for B, sentences for C/D), the short-term window, and the
current input (the query, as a ``user`` item of kind ``"query"`` with no
sources; an empty query adds nothing). Items cite the original messages they
stand for; nothing cites a message outside ``history``.

State is incremental: an architecture remembers the history it has seen, and
when the next ``history`` extends it (same messages first) only the new
messages are processed; any other history starts it afresh. So a result
depends only on ``(history, query, budget)``, but asking many questions of one
long conversation costs one pass over it, as a running agent would pay.

Budget: when the items exceed ``budget`` billed tokens (reply primer
included), the oldest short-term messages leave first (a tool call with its
results), then the lowest-scored recalled memories, then rules; instructions
and the current input always stay, and if they alone exceed the budget the
context's ``notes`` say so. Each left-out item is a ``Trimmed`` event in
``last_trace``, next to a ``Recall`` event per scored candidate.

"Now", for time decay, is the injected ``clock`` if any, else the newest
message's ``created_at`` (the moment the question is asked).

Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

import sys

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from memorykit._validate import require_int
from memorykit.buffers.attention import AttentionWindow
from memorykit.buffers.base import MessageBuffer
from memorykit.clock import Clock, time_basis
from memorykit.context import Context, ContextItem, check_request
from memorykit.embeddings import Embedder
from memorykit.llm.critic import Critic, ScriptedCritic
from memorykit.longterm._fitting import (
    ItemPricer,
    Part,
    check_history,
    fit,
    is_instruction,
    request_time,
)
from memorykit.longterm.episodic import EpisodicMemory, EpisodicSettings, explain
from memorykit.longterm.events import Recall
from memorykit.longterm.reflection import ReflectionMemory, ReflectionSettings
from memorykit.longterm.semantic import SemanticMemory, SemanticSettings, select_recalled
from memorykit.longterm.vectorstore import VectorStore
from memorykit.messages import Message
from memorykit.summary import Summarizer
from memorykit.tokens import ChatFormat, TokenCounter
from memorykit.trace import Trace

_RECALLED_RANK = 1_000_000.0
_RULE_RANK = 2_000_000.0


def window_parts(messages: Iterable[Message], pricer: ItemPricer) -> list[Part]:
    """The short-term window as parts: oldest dropped first, tool calls with their results.

    A tool result whose call is not in the window is left out (a result
    without its call is not a valid prompt).
    """
    msgs = list(messages)
    owner: dict[str, str] = {}
    parts: list[Part] = []
    for rank, m in enumerate(msgs):
        group = None
        if m.tool_calls:
            for call in m.tool_call_ids:
                owner[call] = m.id
            group = m.id
        elif m.role == "tool":
            group = owner.get(m.tool_call_id or "")
            if group is None:
                continue
        parts.append(Part(ContextItem.from_message(m), float(rank), group))
    return parts


class Architecture:
    """What every architecture shares: incremental sync, request handling, budget fitting."""

    name = "architecture"
    letter = "?"

    def __init__(
        self,
        *,
        counter: TokenCounter | None = None,
        chat_format: ChatFormat = ChatFormat(),
        clock: Clock | None = None,
    ) -> None:
        if clock is not None and not callable(getattr(clock, "now", None)):
            raise TypeError(f"clock must have a now() method, got {clock!r}")
        self.pricer = ItemPricer(counter, chat_format)
        self.counter = self.pricer.counter
        self.clock = clock
        self.trace = Trace()
        """Lasting decisions: consolidations (B), rules learned (D)."""
        self.last_trace = Trace()
        """Decisions of the last request: recall scores and budget trims."""
        self.instructions: list[Message] = []
        self._seen: list[Message] = []
        self._ids: set[str] = set()

    # ------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget everything seen (the next request replays its history)."""
        self._seen = []
        self._ids = set()
        self.instructions = []
        self.trace = Trace()
        self._reset()

    def sync(self, history: Sequence[Message]) -> None:
        """Bring the memory up to ``history``: process only what is new, or start afresh."""
        history = check_history(history)
        k = len(self._seen)
        if k > len(history) or any(a is not b and a != b for a, b in zip(self._seen, history)):
            self.reset()
            k = 0
        for m in history[k:]:
            if m.id in self._ids:
                raise ValueError(f"history has message id {m.id!r} twice")
            self._ids.add(m.id)
            self._seen.append(m)
            if is_instruction(m):
                self.instructions.append(m)
            else:
                self._observe(m)
        self._after_sync(history)

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        self.sync(history)
        now = request_time(self._seen, self.clock)
        self.last_trace = Trace()
        parts = self._parts(query, now, self.last_trace)
        return fit(parts, budget, self.name, self.pricer.chat_format, self.last_trace)

    # ------------------------------------------------------------ hooks
    def _reset(self) -> None:
        """Drop subclass state."""

    def _observe(self, message: Message) -> None:
        """A new non-instruction message arrived."""

    def _after_sync(self, history: Sequence[Message]) -> None:
        """Every new message has been observed."""

    def _parts(self, query: str, now: float, trace: Trace) -> list[Part]:
        """Every candidate part, in the order items are sent (see the module docstring)."""
        return (
            self.instruction_parts()
            + self.recalled_parts(query, now, trace)
            + self.short_term_parts()
            + self.query_parts(query)
        )

    def recalled_parts(self, query: str, now: float, trace: Trace | None,
                       candidates: list[Any] | None = None,
                       threshold: float | None = None) -> list[Part]:
        """The memories recalled for ``query`` (none by default; B and C recall)."""
        return []

    def short_term_messages(self) -> list[Message]:
        """The messages of the short-term window, oldest first (none by default)."""
        return []

    # ------------------------------------------------------------ parts
    # The pieces every context is assembled from, public so a measurement can capture a
    # request's fixed pieces once and re-select its recalled ones for many thresholds.
    def instruction_parts(self) -> list[Part]:
        """The system instructions seen so far (always sent)."""
        return [Part(ContextItem.from_message(m), None) for m in self.instructions]

    def query_parts(self, query: str) -> list[Part]:
        """The current input (nothing for an empty query; always sent)."""
        return [Part(item, None) for item in self.pricer.query(query)]

    def short_term_parts(self) -> list[Part]:
        """The short-term window as parts (``window_parts``: oldest trimmed first)."""
        return window_parts(self.short_term_messages(), self.pricer)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}, seen={len(self._seen)}, "
                f"time_basis={time_basis(self.clock)!r})")


class ContextWindowArchitecture(Architecture):
    """A: the last ``window`` messages (instructions kept apart and always sent)."""

    letter = "A"

    def __init__(self, window: int = 20, **kw: Any) -> None:
        super().__init__(**kw)
        self.window = require_int("window", window, minimum=1, maximum=sys.maxsize)
        """Messages kept; every older message is erased."""
        self.name = "A-context-window"
        self._recent: deque[Message] = deque(maxlen=self.window)

    def _reset(self) -> None:
        self._recent = deque(maxlen=self.window)

    def _observe(self, message: Message) -> None:
        self._recent.append(message)

    def short_term_messages(self) -> list[Message]:
        return list(self._recent)


class EpisodicArchitecture(Architecture):
    """B: short-term memory plus episodes recalled by D3's hybrid score."""

    letter = "B"

    def __init__(
        self,
        settings: EpisodicSettings | None = None,
        *,
        summarizer: Summarizer | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.settings = settings if settings is not None else EpisodicSettings()
        self.memory = EpisodicMemory(self.settings, summarizer, self.counter)
        self.name = "B-episodic"

    def _reset(self) -> None:
        self.memory.reset()

    def _observe(self, message: Message) -> None:
        if self.memory.add(message) is not None:
            self.trace.append(self.memory.trace[len(self.memory.trace) - 1])

    def short_term_messages(self) -> list[Message]:
        return list(self.memory.stm)

    def recalled_parts(
        self,
        query: str,
        now: float,
        trace: Trace | None,
        scores: list[Any] | None = None,
        threshold: float | None = None,
    ) -> list[Part]:
        """The recalled episodes as parts. ``scores`` (from ``memory.score``) and ``threshold``
        (default: the settings') let a lesson score once and select for many thresholds;
        ``trace`` None records nothing."""
        scores = self.memory.score(query, now) if scores is None else scores
        chosen = self.memory.select(scores, threshold)
        chosen_ids = {s.episode.id for s in chosen}
        if trace is not None and threshold is None:
            for s in scores:
                picked = s.episode.id in chosen_ids
                trace.append(Recall(query, s.episode.id, s.episode.source_message_ids, s.score,
                                    self.settings.threshold, picked,
                                    explain(s, self.settings, picked), now))
        return [
            Part(
                self.pricer.item(
                    "system", f"Earlier in this conversation (episode {s.episode.id}): "
                    f"{s.episode.summary}", s.episode.source_message_ids, "episode", s.score,
                ),
                _RECALLED_RANK + s.score,
            )
            for s in sorted(chosen, key=lambda s: s.episode.end_time)
        ]


class SemanticArchitecture(Architecture):
    """C: the last ``window`` messages plus sentences recalled by cosine similarity.

    Every user/assistant message is embedded when it arrives; a unit whose
    message is still in the window is not recalled (it is already there).
    """

    letter = "C"

    def __init__(
        self,
        window: int = 20,
        settings: SemanticSettings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.window = require_int("window", window, minimum=1, maximum=sys.maxsize)
        self.settings = settings if settings is not None else SemanticSettings()
        self.memory = SemanticMemory(self.settings, embedder=embedder, store=store)
        self.name = "C-semantic"
        self._recent: deque[Message] = deque(maxlen=self.window)
        self._pending: list[Message] = []

    def _reset(self) -> None:
        self._recent = deque(maxlen=self.window)
        self._pending = []
        self.memory.reset()

    def _observe(self, message: Message) -> None:
        self._recent.append(message)
        self._pending.append(message)

    def _after_sync(self, history: Sequence[Message]) -> None:
        if self._pending:
            self.memory.add(self._pending)
            self._pending = []

    def recall_candidates(self, query: str) -> list[Any]:
        """The best units not in the window, whatever their score (recall_limit + 3 of them)."""
        s = self.settings
        if not query or s.recall_limit == 0:
            return []
        in_window = {m.id for m in self._recent}
        return self.memory.recall(query, limit=s.recall_limit + 3, threshold=None,
                                  exclude=in_window)

    def recalled_parts(
        self,
        query: str,
        now: float,
        trace: Trace | None,
        candidates: list[Any] | None = None,
        threshold: float | None = None,
    ) -> list[Part]:
        """The recalled units as parts. ``candidates`` (from ``recall_candidates``) and
        ``threshold`` (default: the settings') let a lesson search once and select for many
        thresholds; ``trace`` None records nothing."""
        s = self.settings
        if not query or s.recall_limit == 0:
            return []
        candidates = self.recall_candidates(query) if candidates is None else candidates
        thr = s.threshold if threshold is None else threshold
        chosen = [candidates[i] for i in
                  select_recalled([c.score for c in candidates], thr, s.recall_limit)]
        chosen_ids = {c.unit_id for c in chosen}
        for c in candidates if trace is not None else ():
            picked = c.unit_id in chosen_ids
            trace.append(Recall(
                query, c.unit_id, c.sources, c.score, thr, picked,
                f"cosine {c.score:.3f} {'>' if c.score > thr else '<='} threshold "
                f"{thr:g}" + ("" if picked or c.score <= thr
                              else f"; beyond recall_limit {s.recall_limit}"),
                now,
            ))
        return [
            Part(
                self.pricer.item("system", f"Recalled from earlier ({c.role}): {c.text}",
                                 c.sources, "recalled", c.score),
                _RECALLED_RANK + c.score,
            )
            for c in sorted(chosen, key=lambda c: (c.turn, c.unit_id))
        ]

    def short_term_messages(self) -> list[Message]:
        return list(self._recent)


class ReflectionArchitecture(Architecture):
    """D: a base architecture (C by default) plus rules from a critic, in the system prompt.

    The critic runs during ``sync`` whenever ``reflect_every`` new messages
    have arrived; ``critic`` defaults to ``ScriptedCritic()`` (correction
    patterns, not an LLM).
    """

    letter = "D"

    def __init__(
        self,
        base: Architecture | None = None,
        critic: Critic | None = None,
        settings: ReflectionSettings | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.base = base if base is not None else SemanticArchitecture(
            counter=self.counter, chat_format=self.pricer.chat_format, clock=self.clock
        )
        if not isinstance(self.base, Architecture):
            raise TypeError(f"base must be an Architecture, got {base!r}")
        self.reflection = ReflectionMemory(
            critic if critic is not None else ScriptedCritic(), settings, counter=self.counter
        )
        self.settings = self.reflection.settings
        self.name = "D-reflection"

    @property
    def critic(self) -> Critic:
        return self.reflection.critic

    def _reset(self) -> None:
        self.base.reset()
        self.reflection.reset()

    def _after_sync(self, history: Sequence[Message]) -> None:
        self.base.sync(history)
        if self.reflection.due(len(history)):
            before = len(self.reflection.trace)
            self.reflection.reflect(history, request_time(history, self.clock))
            for event in list(self.reflection.trace)[before:]:
                self.trace.append(event)

    def short_term_messages(self) -> list[Message]:
        return self.base.short_term_messages()

    def rule_parts(self) -> list[Part]:
        """The active rules, as system items (trimmed after recalled memories)."""
        return [
            Part(self.pricer.item("system", self.reflection.render(r), r.source_message_ids,
                                  "rule"), _RULE_RANK + k)
            for k, r in enumerate(self.reflection.active())
        ]

    def _parts(self, query: str, now: float, trace: Trace) -> list[Part]:
        base = self.base._parts(query, now, trace)
        n_instructions = len(self.base.instructions)
        return base[:n_instructions] + self.rule_parts() + base[n_instructions:]


class AttentionArchitecture(Architecture):
    """The query-aware ``AttentionWindow`` as a ``ContextPolicy``.

    The whole history is the attention window's buffer; for each request the
    window gets what the budget leaves after the instructions, the current
    input and the reply primer, and the selected messages carry their cosine
    similarity to the query as their score.
    """

    letter = "attention"

    def __init__(
        self, embedder: Embedder | None = None, neighbours: int = 1, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.neighbours = require_int("neighbours", neighbours, minimum=0)
        self._embedder = embedder
        self.name = "attention-window"
        self._budget = 1
        self._buffer = MessageBuffer(None, None, chat_format=self.pricer.chat_format)
        self.window = AttentionWindow(self._buffer, embedder, 1, self.neighbours,
                                      include_pinned=False)

    def _reset(self) -> None:
        self._buffer = MessageBuffer(None, None, chat_format=self.pricer.chat_format)
        self.window = AttentionWindow(self._buffer, self._embedder, 1, self.neighbours,
                                      include_pinned=False)

    def _observe(self, message: Message) -> None:
        self._buffer.add(message)

    def _parts(self, query: str, now: float, trace: Trace) -> list[Part]:
        fixed = self.instruction_parts() + self.query_parts(query)
        # The budget isn't known here; build_context passes it through _budget.
        room = self._budget - self.pricer.chat_format.reply_primer - sum(
            p.item.tokens for p in fixed
        )
        parts = list(fixed[: len(self.instructions)])
        if room >= 1 and len(self._buffer):
            self.window.window_tokens = room
            selection = self.window.select_with_scores(query)
            hits = set(selection.hits)
            for m in selection.messages:
                score = selection.scores[m.id]
                trace.append(Recall(query, m.id, m.covers, score, None, True,
                                    f"cosine {score:.3f}: " + ("a hit" if m.id in hits
                                                               else "a neighbour of a hit"),
                                    now))
                parts.append(Part(ContextItem.from_message(m, score), score))
        return parts + fixed[len(self.instructions):]

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        self._budget = budget
        return super().build_context(history, query, budget)


def make_architectures(
    *,
    window: int = 20,
    episodic: EpisodicSettings | None = None,
    semantic: SemanticSettings | None = None,
    reflection: ReflectionSettings | None = None,
    summarizer: Summarizer | None = None,
    embedder: Embedder | None = None,
    critic: Critic | None = None,
    counter: TokenCounter | None = None,
    chat_format: ChatFormat = ChatFormat(),
    clock: Clock | None = None,
) -> dict[str, Architecture]:
    """A, B, C and D with one short-term size (B's ``stm_limit`` defaults to ``window``)."""
    window = require_int("window", window, minimum=1, maximum=sys.maxsize)
    common: dict[str, Any] = {"counter": counter, "chat_format": chat_format, "clock": clock}
    if episodic is None:
        episodic = EpisodicSettings(stm_limit=window)
    a = ContextWindowArchitecture(window, **common)
    common["counter"] = a.counter  # one tokenizer for all four
    b = EpisodicArchitecture(episodic, summarizer=summarizer, **common)
    c = SemanticArchitecture(window, semantic, embedder=embedder, **common)
    d = ReflectionArchitecture(
        SemanticArchitecture(window, semantic, embedder=embedder, **common),
        critic, reflection, **common,
    )
    return {"A": a, "B": b, "C": c, "D": d}


__all__ = [
    "Architecture",
    "AttentionArchitecture",
    "ContextWindowArchitecture",
    "EpisodicArchitecture",
    "ReflectionArchitecture",
    "SemanticArchitecture",
    "make_architectures",
    "window_parts",
]
