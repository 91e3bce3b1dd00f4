"""The memory service of D4: working memory per session plus a long-term store.

Each session has a **working memory** (any ``MessageBuffer``; by default a
``SummaryBuffer`` of 2,000 tokens, D4's default strategy) and shares one
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
   is ``[system instructions] + [recalled] + [rest of working memory] + [current
   input]`` (the system prompt stays first, as the chat API expects).

Two settings of the seed's ``memory`` block shape every request (``MemorySettings``):
``include_history`` (default true: working memory is sent; false: only the
instructions, recalled entries and the current turn) and ``system_memory`` (a
system prompt placed first in every session's requests).

When a session's working memory is a ``SummaryBuffer``, ``on_summarizing(session_id,
notice)`` is called before it summarizes, so the caller can show that session's user
D4's "Summarizing conversation history..." line while the summarizer runs.

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

Changing facts. ``update_policy`` (default ``"keep-all"``: nothing is detected, every entry
stays) decides what the store does when a later message replaces a stored fact ("the deadline
moved to Monday"). Before the session is next read (``get_context``, ``recall``, ``flush``, or
``apply_updates``, which returns what it did) after a write, the service's ``detector`` (default
``memorykit.facts.detect.find_updates``, LLM-free) reads the session's stored messages: once per
read rather than once per write, as the detector's work grows with the history. Each new
``Update`` is recorded in the session's ``FactTimeline`` (``memorykit.facts.timeline``) and the
policy decides: ``"latest-wins"`` and ``"keep-strongest"`` delete what they do not keep (on
purpose: a ``Superseded`` event, traced, and returned by ``apply_updates``; a delete the store
refuses is tried again at the next run, and the entry is not recalled meanwhile);
``"keep-both-dated"`` keeps it, dates its payload (``valid_until``, ``superseded_by``, where the
store can) and recall marks it "[superseded on ...]", places it before the current statement,
brings the current one with it (beyond ``recall_limit``) and trims the marked one first. A detector failure is not a
store failure: the messages are stored, ``last_update_error`` says what failed, and the next
read finds the same updates again. An entry is a whole message: dropping it drops every fact
it stated (``keep-both-dated`` is the choice that never deletes). A statement's strength, for
``keep-strongest``, is the message's ``metadata["strength"]`` (1.0 without one: then the
latest wins ties). Taught in ``notebooks/13_changing_facts.ipynb``.

Faults. "Store first" holds when the store or the embedder fails: a message is
**pending** until the store has confirmed it. A failed write leaves the whole
batch pending (it is tried again on the next ``add`` that fills a batch, or on
``flush``), is recorded as a ``StoreFailed`` event (returned by ``add`` and in
``trace``; ``degraded()`` lists the sessions waiting on the store), and working
memory still gets the message. ``stored_ids`` lists only what the store has
confirmed. ``flush`` and ``clear`` raise ``LongTermWriteFailed`` when the write
fails (``clear`` then empties nothing); ``get_context`` answers from working
memory alone when recall fails, and says so in the context's ``notes``. A
fault-matrix test (``tests/test_longterm_faults.py``) injects every fault kind
into the embedder and both stores and counts messages lost: 0. While a store is
down, pending messages accumulate (memory grows with the outage) and each retry
embeds the whole pending batch again.

Threads. A ``MemoryService`` may be shared by several threads: sessions are
created under a lock, each session's calls hold that session's lock (calls for
one session run one at a time; different sessions run side by side), the shared
``trace`` is appended under the service's lock, and both vector stores lock
their own calls. ``forget`` takes the session's lock too, so it is atomic with
respect to an ``add`` for the same session: an add that holds the lock first lands
whole and is then forgotten with the rest; an add that reaches the lock after forget
is refused with ``SessionForgotten`` (nothing of it is stored: the caller can add it
again, to a fresh session of that id). Either way nothing of the session is recallable
once ``forget`` returns. Reads that reach a forgotten session's lock go to the fresh one.
The embedder is shared too: the library's embedders are safe
to call from several threads; a user's own embedder must be as well.

``MemoryService`` is also a ``ContextPolicy``: ``build_context(history, query,
budget)`` runs ``history`` through a private session and answers for ``query``
as the current input.

Taught in ``notebooks/09_long_term_memory.ipynb`` (auto-recall for the last user message, session
isolation); the architectures it sits beside are in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from dataclasses import dataclass, field, replace
from typing import Any

from memorykit._locks import without_locks
from memorykit._validate import (require_between, require_bool, require_choice, require_int,
                                 require_str)
from memorykit.buffers.base import MessageBuffer
from memorykit.buffers.summary_buffer import SummarizingNotice, SummaryBuffer
from memorykit.clock import Clock, time_basis
from memorykit.context import Context, ContextItem, check_request
from memorykit.embeddings import Embedder, LexicalHashingEmbedder
from memorykit.facts.statement import Statement, Update
from memorykit.facts.timeline import UPDATE_POLICIES, FactTimeline, Version, superseded_marker
from memorykit.longterm._fitting import ItemPricer, Part, check_history, fit, is_instruction
from memorykit.longterm.events import Recall, Stored, StoreFailed, Superseded
from memorykit.longterm.semantic import UNITS, Recollection, SemanticMemory, SemanticSettings
from memorykit.longterm.vectorstore import NumpyVectorStore, VectorStore
from memorykit.messages import ROLES, Message
from memorykit.tokens import ChatFormat, TokenCounter
from memorykit.trace import Summarization, Trace, error_label

STORAGE_SCOPES = ("all", "conversational", "summaries_only")
UPDATE_POLICY_NAMES = ("keep-all", *UPDATE_POLICIES)
"""``LongTermSettings.update_policy`` values: today's store, then ``memorykit.facts.timeline``'s."""
_RECALLED_RANK = 1_000_000.0


@dataclass(frozen=True)
class LongTermSettings:
    """Every parameter of the long-term layer (D4 defaults)."""

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
    update_policy: str = "keep-all"
    """What happens to a stored message whose fact a later one replaces: 'keep-all' (nothing
    is detected), 'latest-wins' or 'keep-strongest' (the one not kept is deleted, traced) or
    'keep-both-dated' (kept, dated and marked at recall). See the module docstring."""

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
        require_choice("update_policy", self.update_policy, UPDATE_POLICY_NAMES)


@dataclass(frozen=True)
class MemorySettings:
    """D4's memory-level settings that shape each request (beside ``long_term``)."""

    include_history: bool = True
    """Send working memory's conversation history. False: the request holds the instructions,
    what auto-recall brings back and the current turn only (the current input when one is
    given, else the newest user message and the calls and results after it); messages are
    still stored in working and long-term memory either way."""
    system_memory: str | None = None
    """The system prompt the memory places first in every request of every session (None:
    none). It is not a message of any session: never summarized, evicted or stored."""

    def __post_init__(self) -> None:
        require_bool("include_history", self.include_history)
        if self.system_memory is not None:
            require_str("system_memory", self.system_memory, non_empty=True)


class LongTermWriteFailed(RuntimeError):
    """The long-term store did not accept a batch: its messages are still pending."""

    def __init__(self, session_id: str, message_ids: Sequence[str], error: str) -> None:
        self.session_id = session_id
        self.message_ids = tuple(message_ids)
        self.error = error
        super().__init__(
            f"long-term write of {len(self.message_ids)} message(s) of session {session_id!r} "
            f"failed ({error}); they stay pending and are tried again on the next add or flush"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.session_id, self.message_ids, self.error))


class SessionForgotten(RuntimeError):
    """An ``add`` reached its session after ``forget`` dropped it: the message was not stored."""

    def __init__(self, session_id: str, message_id: str) -> None:
        self.session_id = session_id
        self.message_id = message_id
        super().__init__(f"session {session_id!r} was forgotten while adding message "
                         f"{message_id!r}: the message was not stored (add it again to start "
                         f"a fresh session of that id)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.session_id, self.message_id))


@dataclass
class Session:
    """One session's working memory and long-term bookkeeping."""

    id: str
    working: MessageBuffer
    semantic: SemanticMemory
    pending: list[Message] = field(default_factory=list)
    """Messages not yet confirmed by the store: the batch filling up, and failed writes."""
    last_user: Message | None = None
    added: list[str] = field(default_factory=list)
    """Ids of every message added to the session, in order."""
    store_failures: int = 0
    """Writes to the long-term store that failed (their messages stayed pending)."""
    last_store_error: str | None = None
    """The error of the last write while it is not yet retried successfully (None: healthy)."""
    last_recall_error: str | None = None
    """The error of the last recall, when it failed (None: it worked)."""
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    """Held by every service call for this session (one call at a time per session)."""
    added_ids: set[str] = field(default_factory=set, repr=False)
    forgotten: bool = field(default=False, repr=False)
    """Set by ``forget`` under ``lock``: calls that were waiting on the lock must not use it."""
    timeline: FactTimeline | None = None
    """The facts the update policy tracks (None under 'keep-all')."""
    facts: list[Message] = field(default_factory=list, repr=False)
    """Stored messages the detector reads (not kept under 'keep-all')."""
    applied: set[tuple[str, str]] = field(default_factory=set, repr=False)
    """(old, new) updates already given to the timeline."""
    dated: dict[str, Version] = field(default_factory=dict, repr=False)
    """Superseded messages kept in the store, by id, with their interval ('keep-both-dated')."""
    to_drop: set[str] = field(default_factory=set, repr=False)
    """Messages the policy deleted whose delete the store has not confirmed yet."""
    last_update_error: str | None = None
    """The error of the last update detection, when it failed (None: it worked)."""
    unchecked: bool = False
    """Messages were stored since the update policy last ran."""

    def __getstate__(self) -> dict[str, Any]:
        return without_locks(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, lock=threading.RLock())



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
        trace: Trace | None = None,
        memory: MemorySettings | None = None,
        on_summarizing: Callable[[str, SummarizingNotice], None] | None = None,
        detector: Callable[[Sequence[Message]], Sequence[Update]] | Any | None = None,
    ) -> None:
        self.working_memory = working_memory if working_memory is not None else _default_working
        if not callable(self.working_memory):
            raise TypeError(f"working_memory must be a callable returning a MessageBuffer, "
                            f"got {working_memory!r}")
        self.settings = settings if settings is not None else LongTermSettings()
        if not isinstance(self.settings, LongTermSettings):
            raise TypeError(f"settings must be LongTermSettings, got {settings!r}")
        if on_summarizing is not None and not callable(on_summarizing):
            raise TypeError(f"on_summarizing must be callable, got {on_summarizing!r}")
        self.on_summarizing = on_summarizing
        """Called with (session id, ``SummarizingNotice``) before a session's summary buffer
        summarizes: D4's status line for that session's user."""
        if detector is not None and not callable(getattr(detector, "find", detector)):
            raise TypeError(f"detector must be a callable (messages -> updates) or have a "
                            f"find(messages) method, got {detector!r}")
        self.detector = detector
        """Finds the updates ``update_policy`` acts on (None: ``facts.detect.find_updates``)."""
        self.memory = memory if memory is not None else MemorySettings()
        if not isinstance(self.memory, MemorySettings):
            raise TypeError(f"memory must be MemorySettings, got {memory!r}")
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
        if trace is not None and not isinstance(trace, Trace):
            raise TypeError(f"trace must be a Trace, got {trace!r}")
        self.trace = trace if trace is not None else Trace()
        """Stores, held batches, failed writes and recalls, for every session (bound it with
        ``Trace(max_events=...)`` for a long-running service)."""
        self.last_recall_query: str | None = None
        self._policy_seen: list[Message] = []
        self._lock = threading.RLock()
        self._policy_lock = threading.RLock()

    # ------------------------------------------------------------- sessions
    def session(self, session_id: str) -> Session:
        """The session's state, created on first use."""
        require_str("session_id", session_id, non_empty=True)
        s = self.sessions.get(session_id)
        if s is None:
            with self._lock:  # check and create as one step: two threads get one session
                s = self.sessions.get(session_id)
                if s is None:
                    working = self.working_memory()
                    if not isinstance(working, MessageBuffer):
                        raise TypeError(f"working_memory() must return a MessageBuffer, "
                                        f"got {working!r}")
                    if self.on_summarizing is not None and isinstance(working, SummaryBuffer):
                        if working.on_summarizing is not None:
                            raise ValueError(
                                "working memory already has on_summarizing and the service was "
                                "given one too: give it to one of the two")
                        working.on_summarizing = partial(self.on_summarizing, session_id)
                    semantic = SemanticMemory(self._semantic_settings, embedder=self.embedder,
                                              store=self.store, key_prefix=f"{session_id}/")
                    s = self.sessions[session_id] = Session(session_id, working, semantic)
        return s

    @contextmanager
    def _live(self, session_id: str) -> Iterator[Session]:
        """The session, its lock held; a session ``forget`` dropped while this call waited on
        its lock is passed over for the fresh one (so a read never sees forgotten messages)."""
        while True:
            s = self.session(session_id)
            with s.lock:
                if not s.forgotten:
                    yield s
                    return

    def _record(self, event: Any) -> None:
        with self._lock:
            self.trace.append(event)

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

        Returns working memory's events (evictions, summarizations), followed by a
        ``StoreFailed`` when the long-term write failed (the message is then pending:
        nothing is lost, and the write is tried again). Raises ``SessionForgotten`` when
        ``forget`` dropped the session while this call waited for it: nothing was stored.
        """
        if type(message) is not Message:
            raise TypeError(f"message must be a Message, got {message!r}")
        s = self.session(session_id)
        with s.lock:
            if s.forgotten:
                raise SessionForgotten(s.id, message.id)
            if message.id in s.added_ids:
                raise ValueError(f"message id {message.id!r} was already added to session "
                                 f"{s.id!r}")
            failures: list[StoreFailed] = []
            if self._stores(message):
                failures += self._pend(s, message)
            try:
                events = s.working.add(message)
            finally:
                # Even when working memory fails, the message was admitted and is stored
                # or pending: the session must still count it and query with it.
                s.added.append(message.id)
                s.added_ids.add(message.id)
                if message.role == "user" and not message.is_summary:
                    s.last_user = message
            if self.settings.storage_scope == "summaries_only":
                for e in events:
                    if isinstance(e, Summarization):
                        summary = s.working.get(e.summary_id)
                        if summary is not None:
                            failures += self._pend(s, summary)
            return [*events, *failures]

    def _pend(self, s: Session, message: Message) -> list[StoreFailed]:
        s.pending.append(message)
        if len(s.pending) >= self.settings.batch_size:
            failure = self._write(s, f"batch of {len(s.pending)} reached batch_size "
                                     f"{self.settings.batch_size}")
            if failure is not None:
                return [failure[0]]
        else:
            self._record(Stored((), s.id, f"{message.id} held: batch has {len(s.pending)} of "
                                f"{self.settings.batch_size}", self._now(message)))
        return []

    def _write(self, s: Session, reason: str) -> tuple[StoreFailed, Exception] | None:
        """Write every pending message; they leave ``pending`` only once the store confirms.

        Returns the failure (recorded, messages kept pending), or None when stored.
        """
        batch = list(s.pending)
        ids = tuple(m.id for m in batch)
        try:
            s.semantic.add(batch, payload={"session_id": s.id})
        except Exception as exc:  # any failure of the embedder or the store: keep the batch
            s.store_failures += 1
            s.last_store_error = error_label(exc)
            event = StoreFailed(ids, s.id, s.last_store_error, len(s.pending),
                                self._now(batch[-1]))
            self._record(event)
            return event, exc
        del s.pending[:len(batch)]
        s.last_store_error = None
        self._record(Stored(ids, s.id, reason, self._now(batch[-1])))
        if self.settings.update_policy != "keep-all":
            s.facts += [m for m in batch if s.semantic.units_of.get(m.id)]
            s.unchecked = True  # the update policy runs before the session is next read
        return None

    # ------------------------------------------------------ changing facts
    def apply_updates(self, session_id: str) -> list[Superseded]:
        """Run the update policy on what the session stored since it last ran: returns what it
        dropped or dated (also traced). ``get_context``, ``recall`` and ``flush`` call it first,
        so the detector reads the history once per read, not once per write."""
        with self._live(session_id) as s:
            return self._supersede(s)

    def _supersede(self, s: Session) -> list[Superseded]:
        """Give the timeline every update the detector finds among the stored messages that it
        has not seen yet, and carry out what the policy decides (drop, or date)."""
        if s.to_drop:
            self._drop(s, sorted(s.to_drop))
        if not s.unchecked:
            return []
        if s.timeline is None:
            s.timeline = FactTimeline(self.settings.update_policy)
        try:
            found = self._detect(s.facts)
            s.last_update_error = None
        except Exception as exc:  # detection is an extra: the messages are stored already
            s.last_update_error = error_label(exc)
            return []  # still unchecked: the next read tries again
        s.unchecked = False
        by_id = {m.id: m for m in s.facts}
        order = {m.id: i for i, m in enumerate(s.facts)}
        events: list[Superseded] = []
        try:
            for u in sorted(found, key=lambda u: order.get(u.new, -1)):
                if (u.old, u.new) not in s.applied and u.old in by_id and u.new in by_id:
                    s.applied.add((u.old, u.new))
                    events += self._apply(s, u, by_id)
        except Exception as exc:  # a statement the timeline refuses (a bad strength): say so
            s.last_update_error = error_label(exc)
        finally:
            s.facts = [m for m in s.facts if m.id in by_id]
            for e in events:
                self._record(e)
        return events

    def _apply(self, s: Session, u: Update, by_id: dict[str, Message]) -> list[Superseded]:
        """Record one update's two statements; drop what the policy removed, date what it kept."""
        assert s.timeline is not None
        statements = [_statement(by_id[mid], u.key, cancels)  # all checked before any is recorded
                      for mid, cancels in ((u.old, False), (u.new, u.kind == "cancellation"))
                      if not s.timeline.stated(u.key, mid)]
        removed: list[Version] = []
        for statement in statements:
            removed += s.timeline.record(statement)
        now = self._now(by_id[u.new])
        events: list[Superseded] = []
        for v in removed:
            mid = v.statement.message_id
            events.append(Superseded(mid, v.superseded_by or u.new, u.key, s.id, "dropped",
                                     v.reason, now))
            del by_id[mid]
            self._drop(s, [mid])
        for v in s.timeline.versions(u.key):
            mid = v.statement.message_id
            if v.valid_until is not None and mid not in s.dated:
                s.dated[mid] = v
                try:
                    s.semantic.annotate([mid], {"valid_until": v.valid_until,
                                                "superseded_by": v.superseded_by})
                except Exception:  # noqa: BLE001 (the session's record still marks it)
                    pass
                events.append(Superseded(mid, v.superseded_by or u.new, u.key, s.id, "dated",
                                         v.reason, now))
        return events

    def _detect(self, messages: Sequence[Message]) -> list[Update]:
        if self.detector is None:
            from memorykit.facts.detect import find_updates  # the rules load on first use
            found = find_updates(messages)
        else:
            found = getattr(self.detector, "find", self.detector)(messages)
        updates = list(found)
        for u in updates:
            if not isinstance(u, Update):
                raise TypeError(f"detector must return Update records, got {u!r}")
        return updates

    def _drop(self, s: Session, message_ids: list[str]) -> None:
        """Delete superseded messages from the store; a refused delete waits in ``to_drop``."""
        s.to_drop.update(message_ids)
        try:
            s.semantic.drop(message_ids)
        except Exception:  # noqa: BLE001 (tried again on the next write; not recalled meanwhile)
            return
        s.to_drop.difference_update(message_ids)

    def flush(self, session_id: str, *, reason: str = "flush requested") -> list[str]:
        """Write the session's pending messages to the long-term store, then run the update
        policy (``apply_updates``); returns the ids written.

        Raises ``LongTermWriteFailed`` when the store or the embedder fails; the
        messages then stay pending.
        """
        with self._live(session_id) as s:
            ids = [m.id for m in s.pending]
            failure = self._write(s, reason) if ids else None
            if failure is not None:
                event, exc = failure
                raise LongTermWriteFailed(s.id, event.message_ids, event.error) from exc
            self._supersede(s)  # the update policy acts on what is stored now
            return ids

    def pending_ids(self, session_id: str) -> list[str]:
        """Messages of the session not yet confirmed by the store, oldest first."""
        with self._live(session_id) as s:
            return [m.id for m in s.pending]

    def degraded(self) -> dict[str, str]:
        """Sessions whose last long-term write failed (messages pending), with the error."""
        with self._lock:
            sessions = list(self.sessions.values())
        return {s.id: s.last_store_error for s in sessions
                if s.last_store_error is not None and s.pending}

    def clear(self, session_id: str) -> list[Message]:
        """Flush the pending batch (nothing is lost), then empty working memory.

        Long-term memories of the session stay: they outlive working memory. When
        the flush fails, ``LongTermWriteFailed`` is raised and nothing is emptied.
        """
        with self._live(session_id) as s:
            self.flush(session_id,
                       reason="clear: pending batch written before working memory empties")
            return s.working.clear()

    def forget(self, session_id: str) -> int:
        """Drop the session entirely, long-term entries included; returns how many were deleted.

        Holds the session's lock, so an ``add`` in flight for it lands first (and is deleted
        here) or is refused afterwards with ``SessionForgotten``; its pending messages are
        dropped with it. Other sessions are not held up but for the store's delete.
        """
        require_str("session_id", session_id, non_empty=True)
        while True:
            with self._lock:
                s = self.sessions.get(session_id)
                if s is None:  # nothing in memory: only the store may hold the session
                    return self._delete(session_id)
            with s.lock:  # same order as add: session lock, then the service's
                if s.forgotten:
                    continue  # another forget won the lock; a fresh session may exist now
                with self._lock:  # no fresh session of this id is made while the store deletes
                    deleted = self._delete(session_id)  # first: a failed delete changes nothing
                    s.forgotten = True
                    s.pending.clear()
                    del self.sessions[session_id]
                    return deleted

    def _delete(self, session_id: str) -> int:
        return self.store.delete({"session_id": session_id}) if len(self.store) else 0

    # ------------------------------------------------------------- reading
    def stored_ids(self, session_id: str) -> set[str]:
        """Message ids the store holds for the session (sources of every stored unit)."""
        with self._live(session_id) as s:
            return {mid for mid, n in s.semantic.units_of.items() if n}

    def recall(
        self, session_id: str, query: str, limit: int | None = None
    ) -> list[Recollection]:
        """Search this session's long-term entries (pending ones are not searchable yet)."""
        require_str("query", query)
        with self._live(session_id) as s:
            self._supersede(s)
            return self._search(s, query, limit, {m.id for m in s.working if not m.is_summary})

    def _search(
        self, s: Session, query: str, limit: int | None, exclude: set[str]
    ) -> list[Recollection]:
        """The session's entries for ``query``, leaving out ``exclude`` (what the model sees
        verbatim anyway)."""
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
        """``[instructions] + [recalled] + [working memory] + [current input]`` for the session.

        When recall fails (the embedder or the store is down), the context is built
        from working memory alone and its ``notes`` say so.
        """
        require_str("session_id", session_id, non_empty=True)
        if current_input is not None:
            require_str("current_input", current_input)
        if budget is not None:
            require_int("budget", budget, minimum=1)
        with self._live(session_id) as s:
            return self._context(s, current_input, budget)

    def _context(self, s: Session, current_input: str | None, budget: int | None) -> Context:
        self._supersede(s)
        query = current_input if current_input else (s.last_user.content if s.last_user else "")
        now = self._now(s.last_user)
        recalled: list[Part] = []
        notes: tuple[str, ...] = ()
        hits: list[Recollection] = []
        sent = self._sent(list(s.working), current_input)
        if self.settings.auto_recall and query:
            self.last_recall_query = query
            try:
                # what the request sends verbatim is not recalled a second time
                hits = self._search(s, query, None,
                                    {m.id for _, m, _ in sent if not m.is_summary})
                s.last_recall_error = None
            except Exception as exc:  # long-term memory is down: answer from working memory
                s.last_recall_error = error_label(exc)
                notes = (f"long-term recall failed ({s.last_recall_error}): this context holds "
                         f"working memory only",)
            hits = [r for r in hits if r.message_id not in s.to_drop]
            for r in hits:
                self._record(Recall(query, r.unit_id, r.sources, r.score,
                                         self.settings.min_score, True,
                                         f"cosine {r.score:.3f}, among the top "
                                         f"{self.settings.recall_limit} of session {s.id!r}", now))
                recalled.append(Part(
                    self.pricer.item("system", f"Recalled from earlier ({r.role}): {r.text}",
                                     r.sources, "recalled", r.score),
                    _RECALLED_RANK + r.score,
                ))
            if s.dated:
                recalled = self._mark_superseded(s, hits, recalled, sent)
        instructions: list[Part] = []
        if self.memory.system_memory is not None:
            instructions.append(Part(self.pricer.item("system", self.memory.system_memory, (),
                                                      "system_memory"), None))
        working: list[Part] = []
        for rank, m, leading in sent:
            item = ContextItem.from_message(m, sources=s.working.originals(m.id))
            part = Part(item, None if m.pinned else float(rank))
            # The system prompt opens the request; recalled memories follow it.
            (instructions if leading else working).append(part)
        current = [Part(i, None) for i in self.pricer.query(current_input or "")]
        parts = instructions + recalled + working + current
        if budget is None:  # no trimming: working memory already keeps to its own limits
            budget = sum(p.item.tokens for p in parts) + self.pricer.chat_format.reply_primer
        context = fit(parts, budget, self.name, self.pricer.chat_format, None)
        return replace(context, notes=context.notes + notes) if notes else context

    def _mark_superseded(self, s: Session, hits: list[Recollection], parts: list[Part],
                         sent: list[tuple[int, Message, bool]]) -> list[Part]:
        """'keep-both-dated' recall: a superseded entry is marked with its date, placed before
        the current statement and trimmed first; the current one comes with it when neither
        recall nor the request has it."""
        assert s.timeline is not None
        have = {r.message_id for r in hits} | {m.id for _, m, _ in sent}
        by_id = {m.id: m for m in s.facts}
        marked: list[Part] = []
        rest: list[Part] = []
        for r, part in zip(hits, parts):
            v = s.dated.get(r.message_id)
            if v is None:
                rest.append(part)
                continue
            marked.append(Part(replace(part.item, content=superseded_marker(v) + part.item.content,
                                       kind="superseded"), _RECALLED_RANK + r.score - 2.0))
            current = next((c for c in s.timeline.versions(v.statement.key) if c.is_current), None)
            m = None if current is None else by_id.get(current.statement.message_id)
            if m is not None and m.id not in have and m.id not in s.to_drop:
                have.add(m.id)
                rest.append(Part(self.pricer.item("system", f"Recalled from earlier ({m.role}): "
                                                  f"{m.content}", m.covers, "recalled", r.score),
                                 _RECALLED_RANK + r.score))
        return marked + rest

    def _sent(
        self, messages: list[Message], current_input: str | None
    ) -> list[tuple[int, Message, bool]]:
        """The working-memory messages the request sends: (rank, message, leading instruction).

        Leading instructions always go. Without history only the current turn goes with
        them: nothing when the caller gives the current input, else the newest user message
        and what followed it (an agent's calls and their results, which the model must see
        to go on)."""
        start = 0
        if not self.memory.include_history:
            start = len(messages)
            if current_input is None:
                start = next((i for i in range(len(messages) - 1, -1, -1)
                              if messages[i].role == "user" and not messages[i].is_summary),
                             start)
        out: list[tuple[int, Message, bool]] = []
        opened = False  # a conversational message came: later system messages are history
        for rank, m in enumerate(messages):
            leading = is_instruction(m) and not opened
            opened = not leading
            if leading or rank >= start:
                out.append((rank, m, leading))
        return out

    # ------------------------------------------------------ ContextPolicy
    _POLICY_SESSION = "__context_policy__"

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        """Run ``history`` through a private session; answer with ``query`` as the current input."""
        check_request(query, budget)
        history = check_history(history)
        with self._policy_lock:
            return self._policy_context(history, query, budget)

    def _policy_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
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

    def __getstate__(self) -> dict[str, Any]:
        return without_locks(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.RLock(), _policy_lock=threading.RLock())

    def __repr__(self) -> str:
        return (
            f"MemoryService(sessions={len(self.sessions)}, stored={len(self.store)}, "
            f"scope={self.settings.storage_scope!r}, batch_size={self.settings.batch_size}, "
            f"time_basis={time_basis(self.clock)!r})"
        )


def _statement(message: Message, key: str, cancels: bool) -> Statement:
    """A stored message's statement of ``key`` for the timeline (its text stands for the value;
    "" when it cancels the fact; strength from ``metadata["strength"]``, else 1.0)."""
    strength = message.metadata.get("strength", 1.0)
    text = " ".join(message.content.split())
    value = "" if cancels else (text if len(text) <= 60 else text[:57] + "...")
    return Statement(key, value, message.id, message.created_at, strength)


__all__ = ["STORAGE_SCOPES", "UPDATE_POLICY_NAMES", "LongTermSettings", "LongTermWriteFailed",
           "MemoryService", "MemorySettings", "Session", "SessionForgotten"]
