"""The memory service of seed 004: working memory per session plus a long-term store.

Each session has a **working memory** (any ``MessageBuffer``; by default a
``SummaryBuffer`` of 2,000 tokens, seed 004's default strategy) and shares one
**long-term store** (a ``VectorStore``) in which every entry carries its
``session_id``. The orchestration follows the seed:

1. ``add(session_id, message)``: the message goes to long-term storage
   **before** working memory processes it, so nothing working memory
   summarizes or evicts is lost. With ``batch_size > 1`` messages wait in a
   pending batch and are written when it is full (recall lags behind until
   then: the seed's trade-off); ``clear`` and ``flush`` write it at once.
2. ``get_context(session_id, current_input)``: with ``auto_recall`` the
   long-term store is searched with the **last user message** as the query
   (the current input when it is given, else the newest user message added),
   for at most ``recall_limit`` entries of **this session only**; the context
   is ``[recalled] + [working memory] + [current input]``.

What is stored is set by ``storage_scope``: ``"all"`` (every message, tool
results and system messages included), ``"conversational"`` (user and
assistant messages only) or ``"summaries_only"`` (only the summaries working
memory writes; originals are then *not* stored first, by definition of the
scope).

Decisions the seed leaves open, made here:

* recalled entries whose message is still verbatim in working memory are
  skipped (the model would read it twice); messages only a summary stands for
  can be recalled, which is the point: the summary may have lost the detail;
* ``min_score`` (default None: the top ``recall_limit`` whatever their score,
  as the seed describes) can require a minimum cosine similarity;
* entries are stored whole (``unit="message"``), as the seed stores messages;
  ``unit="sentence"`` stores sentences instead;
* sessions are isolated by a ``session_id`` filter on every search of the
  shared store (a property test checks that nothing crosses sessions).

``MemoryService`` is also a ``ContextPolicy``: ``build_context(history, query,
budget)`` runs ``history`` through a private session and answers for ``query``
as the current input.

Taught in ``notebooks/09_long_term_memory.ipynb`` (auto-recall for the last user message, session
isolation); the architectures it sits beside are in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_between, require_choice, require_int, require_str
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.clock import Clock
from memorykit.context import Context, ContextItem, check_request
from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.longterm._fitting import ItemPricer, Part, check_history, fit
from memorykit.longterm.events import Recall, Stored
from memorykit.longterm.semantic import UNITS, Recollection, SemanticMemory, SemanticSettings
from memorykit.longterm.vectorstore import NumpyVectorStore, VectorStore
from memorykit.messages import ROLES, Message
from memorykit.tokens import ChatFormat, TokenCounter
from memorykit.trace import Summarization, Trace

STORAGE_SCOPES = ("all", "conversational", "summaries_only")
_RECALLED_RANK = 1_000_000.0


@dataclass(frozen=True)
class LongTermSettings:
    """Every parameter of the long-term layer (seed 004 defaults)."""

    storage_scope: str = "all"
    """What is stored: 'all' messages, 'conversational' (user/assistant), or 'summaries_only'."""
    batch_size: int = 1
    """Messages are written to the store in batches of this size (1: immediately)."""
    auto_recall: bool = True
    """Search long-term memory before every context (query: the last user message)."""
    recall_limit: int = 5
    """At most this many entries are recalled."""
    min_score: float | None = None
    """Recall only entries with cosine similarity strictly above this (None: no minimum)."""
    unit: str = "message"
    """What one stored vector stands for: a whole 'message' or each 'sentence'."""
    collection: str = "memorykit_session_memory"
    """Collection name, for stores that have collections (Qdrant)."""

    def __post_init__(self) -> None:
        require_choice("storage_scope", self.storage_scope, STORAGE_SCOPES)
        require_int("batch_size", self.batch_size, minimum=1)
        if not isinstance(self.auto_recall, bool):
            raise TypeError(f"auto_recall must be a bool, got {self.auto_recall!r}")
        require_int("recall_limit", self.recall_limit, minimum=0)
        if self.min_score is not None:
            require_between("min_score", self.min_score, -1.0, 1.0)  # a cosine
        require_choice("unit", self.unit, UNITS)
        require_str("collection", self.collection, non_empty=True)


@dataclass
class Session:
    """One session's working memory and long-term bookkeeping."""

    id: str
    working: MessageBuffer
    semantic: SemanticMemory
    pending: list[Message] = field(default_factory=list)
    """Messages waiting for the batch to fill before they are stored."""
    last_user: Message | None = None
    added: list[str] = field(default_factory=list)
    """Ids of every message added to the session, in order."""


def _default_working() -> MessageBuffer:
    return SummaryBuffer(2000)


class MemoryService:
    """Working memory per session + one long-term store shared by all sessions, filtered by session."""

    name = "memory-service"

    def __init__(
        self,
        working_memory: Callable[[], MessageBuffer] | None = None,
        settings: LongTermSettings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        counter: TokenCounter | None = None,
        chat_format: ChatFormat = ChatFormat(),
        clock: Clock | None = None,
    ) -> None:
        self.working_memory = working_memory if working_memory is not None else _default_working
        if not callable(self.working_memory):
            raise TypeError(f"working_memory must be a callable returning a MessageBuffer, "
                            f"got {working_memory!r}")
        self.settings = settings if settings is not None else LongTermSettings()
        if not isinstance(self.settings, LongTermSettings):
            raise TypeError(f"settings must be LongTermSettings, got {settings!r}")
        self.embedder: Embedder = embedder if embedder is not None else LexicalHashingEmbedder()
        self.store: VectorStore = (
            store if store is not None else NumpyVectorStore(self.embedder.dimension)
        )
        if clock is not None and not callable(getattr(clock, "now", None)):
            raise TypeError(f"clock must have a now() method, got {clock!r}")
        self.clock = clock
        self.pricer = ItemPricer(counter, chat_format)
        scope = self.settings.storage_scope
        roles = ("user", "assistant") if scope == "conversational" else ROLES
        self._semantic_settings = SemanticSettings(
            threshold=-2.0, recall_limit=self.settings.recall_limit, unit=self.settings.unit,
            roles=tuple(roles),
        )
        self.sessions: dict[str, Session] = {}
        self.trace = Trace()
        """Stores, held batches and recalls, for every session."""
        self.last_recall_query: str | None = None
        self._policy_seen: list[Message] = []

    # ------------------------------------------------------------- sessions
    def session(self, session_id: str) -> Session:
        """The session's state, created on first use."""
        require_str("session_id", session_id, non_empty=True)
        s = self.sessions.get(session_id)
        if s is None:
            working = self.working_memory()
            if not isinstance(working, MessageBuffer):
                raise TypeError(f"working_memory() must return a MessageBuffer, got {working!r}")
            semantic = SemanticMemory(self._semantic_settings, embedder=self.embedder,
                                      store=self.store, key_prefix=f"{session_id}/")
            s = self.sessions[session_id] = Session(session_id, working, semantic)
        return s

    def _now(self, message: Message | None = None) -> float:
        if self.clock is not None:
            return float(self.clock.now())
        return message.created_at if message is not None else 0.0

    def _stores(self, message: Message) -> bool:
        scope = self.settings.storage_scope
        if scope == "summaries_only":
            return message.is_summary
        if scope == "conversational":
            return message.role in ("user", "assistant")
        return True

    # ------------------------------------------------------------- writing
    def add(self, session_id: str, message: Message) -> list[Any]:
        """Store ``message`` long-term (or hold it for the batch), then give it to working memory.

        Returns working memory's events (evictions, summarizations).
        """
        if type(message) is not Message:
            raise TypeError(f"message must be a Message, got {message!r}")
        s = self.session(session_id)
        if self._stores(message):
            self._pend(s, message)
        try:
            events = s.working.add(message)
        finally:
            # Even when working memory fails (its summarizer raised), the message was
            # admitted and stored: the session must still count it and query with it.
            s.added.append(message.id)
            if message.role == "user" and not message.is_summary:
                s.last_user = message
        if self.settings.storage_scope == "summaries_only":
            for e in events:
                if isinstance(e, Summarization):
                    summary = s.working.get(e.summary_id)
                    if summary is not None:
                        self._pend(s, summary)
        return events

    def _pend(self, s: Session, message: Message) -> None:
        s.pending.append(message)
        if len(s.pending) >= self.settings.batch_size:
            self.flush(s.id, reason=f"batch of {len(s.pending)} reached batch_size "
                                    f"{self.settings.batch_size}")
        else:
            self.trace.append(Stored((), s.id, f"{message.id} held: batch has {len(s.pending)} of "
                                     f"{self.settings.batch_size}", self._now(message)))

    def flush(self, session_id: str, *, reason: str = "flush requested") -> list[str]:
        """Write the session's pending batch to the long-term store; returns the message ids."""
        s = self.session(session_id)
        if not s.pending:
            return []
        batch, s.pending = s.pending, []
        s.semantic.add(batch, payload={"session_id": s.id})
        ids = [m.id for m in batch]
        self.trace.append(Stored(tuple(ids), s.id, reason, self._now(batch[-1])))
        return ids

    def clear(self, session_id: str) -> list[Message]:
        """Flush the pending batch (nothing is lost), then empty working memory.

        Long-term memories of the session stay: they outlive working memory.
        """
        s = self.session(session_id)
        self.flush(session_id, reason="clear: pending batch written before working memory empties")
        removed = s.working.clear()
        return removed

    def forget(self, session_id: str) -> int:
        """Drop the session entirely, long-term entries included; returns how many were deleted."""
        require_str("session_id", session_id, non_empty=True)
        self.sessions.pop(session_id, None)
        return self.store.delete({"session_id": session_id}) if len(self.store) else 0

    # ------------------------------------------------------------- reading
    def stored_ids(self, session_id: str) -> set[str]:
        """Message ids the store holds for the session (sources of every stored unit)."""
        s = self.session(session_id)
        return {mid for mid, n in s.semantic.units_of.items() if n}

    def recall(
        self, session_id: str, query: str, limit: int | None = None
    ) -> list[Recollection]:
        """Search this session's long-term entries (pending ones are not searchable yet)."""
        require_str("query", query)
        s = self.session(session_id)
        exclude = {m.id for m in s.working if not m.is_summary}
        return s.semantic.recall(
            query,
            limit=self.settings.recall_limit if limit is None else limit,
            threshold=self.settings.min_score,
            where={"session_id": s.id},
            exclude=exclude,
        )

    def get_context(
        self, session_id: str, current_input: str | None = None, *, budget: int | None = None
    ) -> Context:
        """``[recalled] + [working memory] + [current input]`` for the session."""
        s = self.session(session_id)
        if current_input is not None:
            require_str("current_input", current_input)
        if budget is not None:
            require_int("budget", budget, minimum=1)
        query = current_input if current_input else (s.last_user.content if s.last_user else "")
        now = self._now(s.last_user)
        recalled: list[Part] = []
        if self.settings.auto_recall and query:
            self.last_recall_query = query
            for r in self.recall(session_id, query):
                self.trace.append(Recall(query, r.unit_id, r.sources, r.score,
                                         self.settings.min_score, True,
                                         f"cosine {r.score:.3f}, among the top "
                                         f"{self.settings.recall_limit} of session {s.id!r}", now))
                recalled.append(Part(
                    self.pricer.item("system", f"Recalled from earlier ({r.role}): {r.text}",
                                     r.sources, "recalled", r.score),
                    _RECALLED_RANK + r.score,
                ))
        working = []
        for rank, m in enumerate(s.working):
            pinned = m.pinned
            working.append(Part(ContextItem.from_message(m), None if pinned else float(rank)))
        current = [Part(i, None) for i in self.pricer.query(current_input or "")]
        parts = recalled + working + current
        if budget is None:  # no trimming: working memory already keeps to its own limits
            budget = sum(p.item.tokens for p in parts) + self.pricer.chat_format.reply_primer
        return fit(parts, budget, self.name, self.pricer.chat_format, None)

    # ------------------------------------------------------ ContextPolicy
    _POLICY_SESSION = "__context_policy__"

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        """Run ``history`` through a private session; answer with ``query`` as the current input."""
        check_request(query, budget)
        history = check_history(history)
        seen = self._policy_seen
        k = len(seen)
        if k > len(history) or any(a is not b and a != b for a, b in zip(seen, history)):
            self.forget(self._POLICY_SESSION)
            self._policy_seen = seen = []
            k = 0
        ids = {m.id for m in seen}
        for m in history[k:]:
            if m.id in ids:
                raise ValueError(f"history has message id {m.id!r} twice")
            ids.add(m.id)
            self.add(self._POLICY_SESSION, m)
            seen.append(m)
        self.flush(self._POLICY_SESSION, reason="build_context: the whole history is stored")
        return self.get_context(self._POLICY_SESSION, query, budget=budget)

    def __repr__(self) -> str:
        return (
            f"MemoryService(sessions={len(self.sessions)}, stored={len(self.store)}, "
            f"scope={self.settings.storage_scope!r}, batch_size={self.settings.batch_size})"
        )


__all__ = ["STORAGE_SCOPES", "LongTermSettings", "MemoryService", "Session"]
