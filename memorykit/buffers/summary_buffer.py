"""The summary buffer: D4's default working memory.

Messages accumulate until the window passes ``threshold x budget`` (80% of
2,000 tokens by default). Then the oldest messages, except the last
``min_recent`` ones, are replaced by one summary, chosen so the window drops to
about ``target x budget`` (60%). The summary sits right after the pinned system
instructions; the next time the threshold is crossed it is the oldest message,
so it is summarized again together with what came after it: a summary of
summaries, whose ``summary_depth`` grows by one each round. Token use over time
is a sawtooth, which ``token_history`` records (the newest
``token_history_limit`` adds: a buffer that runs for days keeps a bounded record).

Nothing is silently lost. Each round is a ``Summarization`` event naming the
messages taken out (the previous summary included) and the originals the round
brought under the new summary; ``originals(summary_id)`` resolves everything a
kept summary stands for. A summary cites the summary it replaced by id rather
than repeating its sources, and the buffer keeps the resolved originals as
``IdRuns`` (a few runs of counters): provenance costs memory linear in one
round, not in the conversation, where repeating every covered id in every round
grew quadratically (1.6 GB of ids after 100k messages). When
summarizing cannot get under the hard budget (the recent messages alone are too
big), the buffer first summarizes the protected recent messages too (rule
``summary-overflow``), then, only if still over the hard budget, evicts oldest
first like ``FIFOBuffer`` (rule ``summary-fallback-fifo``), and records
``OverBudget`` when only pinned or just-added messages remain.

D4 tells the user before it summarizes (with an LLM summarizer the add
blocks for seconds): ``on_summarizing`` is called with a ``SummarizingNotice``
(its ``text`` the seed's status line) once per add that summarizes, before the
summarizer runs. The notice is for display: a callback that raises is counted
(``notice_failures``), never allowed to stop the add after the message was admitted.

Taught in ``notebooks/03_summary_buffer.ipynb``.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from memorykit._validate import require_fraction, require_int, require_real
from memorykit.buffers.base import MessageBuffer
from memorykit.trace import Victim
from memorykit.clock import Clock
from memorykit.messages import Message, MessageFactory
from memorykit.provenance import IdRuns
from memorykit.summary import ExtractiveSummarizer, Summarizer, check_summary_text
from memorykit.tokens import ChatFormat, role_tokens
from memorykit.trace import Eviction, Summarization


class TokenSample(NamedTuple):
    """Window tokens around one add: before and after compaction (the sawtooth)."""

    turn: int
    before: int
    """Tokens right after the message arrived, before any summarization."""
    after: int
    """Tokens once the buffer settled."""
    message_id: str


SUMMARIZING_NOTICE = "\N{THOUGHT BALLOON} Summarizing conversation history..."
"""The status line D4 shows the user, on its own line, while working memory summarizes."""


@dataclass(frozen=True, slots=True)
class SummarizingNotice:
    """Working memory is about to summarize: what a caller shows the user, and why now."""

    text: str
    """The line to show (``SUMMARIZING_NOTICE``)."""
    message_ids: tuple[str, ...]
    """The messages the first round will summarize, oldest first."""
    tokens: int
    """Billed tokens in the window, over the threshold."""
    threshold_tokens: float
    """``threshold x budget``, the line crossed."""
    turn: int
    """The turn of the message whose add triggered it."""


def splice(
    buffer: MessageBuffer,
    remove_ids: Iterable[str],
    insert: Sequence[Message],
    at: str,
) -> None:
    """Replace messages in place: drop ``remove_ids``, put ``insert`` where ``at`` was.

    ``at`` is the id of a message currently in the buffer (usually the first one
    removed). Messages of ``insert`` already in the buffer are moved there; new
    ones are admitted with exact token accounting (they are not counted as
    "added" and do not become the newest message). Records no event: callers do.
    """
    kept = buffer._messages
    if at not in kept:
        raise ValueError(f"at must name a message in the buffer, got {at!r}")
    remove = set(remove_ids)
    order = list(kept)
    new_ids = [m.id for m in insert if m.id not in kept]
    if len(set(m.id for m in insert)) != len(insert):
        raise ValueError("insert holds the same message id twice")
    for m in insert:
        if m.id in remove:
            raise ValueError(f"message {m.id!r} is both removed and inserted")
    for mid in order:
        if mid in remove:
            buffer._remove(mid)
    placed = {m.id for m in insert}
    rebuilt: dict[str, Message] = {}
    for mid in order:
        if mid == at:
            for m in insert:
                rebuilt[m.id] = kept.get(m.id, m)
        if mid in kept and mid not in placed:
            rebuilt[mid] = kept[mid]
    kept.clear()
    kept.update(rebuilt)
    for m in insert:
        if m.id in new_ids:
            buffer._tokens += m.billed_tokens
            buffer._content_tokens += m.content_tokens
            buffer._on_add(m)


def tool_units(messages: Sequence[Message]) -> list[list[Message]]:
    """Messages grouped so a tool call travels with its results; order of first members.

    A message without tool links is a unit of one. Results whose call is not in
    ``messages`` form their own unit (callers decide whether that is allowed).
    """
    owner: dict[str, int] = {}
    units: list[list[Message]] = []
    for m in messages:
        if m.role == "tool" and m.tool_call_id in owner:
            units[owner[m.tool_call_id]].append(m)
            continue
        units.append([m])
        for call_id in m.tool_call_ids:
            owner[call_id] = len(units) - 1
    return units


class SummaryBuffer(MessageBuffer):
    """Summarize the oldest messages once the window passes ``threshold x budget``.

    Parameters (D4's defaults):

    * ``budget=2000``: hard limit in billed prompt tokens (as ``MessageBuffer``
      counts them, reply primer included); it is the buffer's ``max_tokens``.
    * ``threshold=0.8``: summarize when tokens > threshold x budget (1,600).
    * ``target=0.6``: take enough old messages that, with their summary in
      their place, tokens <= target x budget (1,200); must be < threshold.
    * ``min_recent=3``: the last three non-pinned messages are never
      summarized in a normal round (nor is the message just added).
    * ``summarizer``: default ``ExtractiveSummarizer`` on the factory's counter.
    * ``summary_max_tokens``: cap on one summary's content, default
      ``max(1, budget // 4)`` (500 at the default budget): big enough for a
      few facts, small enough that summary + recent messages fit under target.
    * ``factory``: creates the summary messages, so their token counts are
      exact; its chat format must be the buffer's. Default: a
      ``MessageFactory`` with ids ``summary000001, ...``.
    * ``token_history_limit=10_000``: how many of the newest adds
      ``token_history`` keeps (older samples are dropped, so a long run stays
      bounded; lesson 03's sawtooth plots a few hundred).

    ``add`` returns every event that took messages out of the window
    (``Summarization`` and, in the fallback, ``Eviction``).
    """

    rule = "summary"

    def __init__(
        self,
        budget: int = 2000,
        threshold: float = 0.8,
        target: float = 0.6,
        min_recent: int = 3,
        *,
        summarizer: Summarizer | None = None,
        summary_max_tokens: int | None = None,
        factory: MessageFactory | None = None,
        chat_format: ChatFormat = ChatFormat(),
        token_history_limit: int = 10_000,
        on_summarizing: Callable[[SummarizingNotice], None] | None = None,
        **kw: Any,
    ) -> None:
        budget = require_int("budget", budget, minimum=1)
        limit = require_int("token_history_limit", token_history_limit, minimum=1,
                            maximum=sys.maxsize)
        self.threshold = require_fraction("threshold", threshold)
        self.target = require_real("target", target)
        if not 0.0 < self.target < 1.0:
            raise ValueError(f"target must be in (0, 1), got {target!r}")
        if self.target >= self.threshold:
            raise ValueError(f"target must be < threshold ({threshold!r}), got {target!r}")
        self.min_recent = require_int("min_recent", min_recent, minimum=0)
        if summary_max_tokens is None:
            summary_max_tokens = max(1, budget // 4)
        self.summary_max_tokens = require_int("summary_max_tokens", summary_max_tokens, minimum=1)
        # The base's keywords (clock, pin_system, trace) pass through untouched.
        super().__init__(budget, None, chat_format=chat_format, **kw)
        if factory is None:
            factory = MessageFactory(chat_format=chat_format, id_prefix="summary")
        elif not isinstance(factory, MessageFactory):
            raise TypeError(f"factory must be a MessageFactory, got {factory!r}")
        elif factory.chat_format != chat_format:
            raise ValueError(
                f"factory.chat_format must equal the buffer's chat_format ({chat_format!r}), "
                f"got {factory.chat_format!r}"
            )
        self.factory = factory
        if summarizer is None:
            summarizer = ExtractiveSummarizer(factory.counter)
        elif not callable(getattr(summarizer, "summarize", None)):
            raise TypeError(f"summarizer must have a summarize(messages, max_tokens) method, "
                            f"got {summarizer!r}")
        self.summarizer = summarizer
        self.summarizer_failures = 0
        """Rounds in which the summarizer failed and eviction took over (see ``add``)."""
        self.last_summarizer_error: BaseException | None = None
        """The summarizer's most recent failure, for a caller that wants the details."""
        if on_summarizing is not None and not callable(on_summarizing):
            raise TypeError(f"on_summarizing must be callable, got {on_summarizing!r}")
        self.on_summarizing = on_summarizing
        """Called with a ``SummarizingNotice`` before the summarizer runs (None: nobody told)."""
        self.notice_failures = 0
        """Notices whose callback raised (the add went on: a notice is display only)."""
        self._noticed = False
        self._failure: str | None = None
        self._summary_overhead = chat_format.message_overhead(
            role_tokens(factory.counter, "system")
        )
        self.token_history: deque[TokenSample] = deque(maxlen=limit)
        """One sample per add, the newest ``token_history_limit`` of them (the sawtooth)."""
        # Resolved originals of this buffer's own summaries in the window (normally one).
        self._originals: dict[str, IdRuns] = {}

    # ----------------------------------------------------------------- reading
    @property
    def threshold_tokens(self) -> float:
        return self.threshold * self.max_tokens  # type: ignore[operator]

    @property
    def target_tokens(self) -> float:
        return self.target * self.max_tokens  # type: ignore[operator]

    def summaries(self) -> list[Message]:
        """The summary messages in the window (at most one after every add)."""
        return [m for m in self._messages.values() if m.is_summary]

    def summary_depth(self) -> int:
        """Depth of the deepest summary kept: 0 none, 1 a summary, 2 a summary of summaries..."""
        return max((m.summary_depth for m in self._messages.values()), default=0)

    @property
    def token_history_limit(self) -> int:
        """How many samples ``token_history`` keeps (set at construction)."""
        return self.token_history.maxlen  # type: ignore[return-value]

    def originals(self, message_id: str) -> tuple[str, ...]:
        """The original message ids a message in the window stands for.

        For this buffer's summaries the whole chain is resolved (the summary it replaced,
        that one's, ...), in the order the originals arrived; a message in the window
        stands for itself. Costs one pass over the ids: ask on demand, do not store.
        """
        runs = self._originals.get(message_id)
        return super().originals(message_id) if runs is None else tuple(runs)

    def covered_ids(self) -> tuple[str, ...]:
        """Original message ids the window stands for: kept originals and summaries' originals."""
        return tuple(i for mid in self._messages for i in self.originals(mid))

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out.update(
            summarizations=self.trace.counts.get("summarization", 0),
            summary_depth=self.summary_depth(),
            summarizer=getattr(self.summarizer, "name", type(self.summarizer).__name__),
            summarizer_is_llm=bool(getattr(self.summarizer, "is_llm", False)),
            summarizer_failures=self.summarizer_failures,
        )
        return out

    # ----------------------------------------------------------------- writing
    def add(self, message: Message) -> list[Summarization | Eviction]:  # type: ignore[override]
        """Add a message, summarize if over threshold, evict only if over the hard budget.

        A summarizer that fails (raises, returns something other than a str, or an empty or
        blank summary, which would replace the messages by nothing) never makes
        ``add`` raise after the message was admitted: the oldest messages are evicted instead
        (rule ``summary-fallback-fifo``, the reason naming the failure) and
        ``summarizer_failures`` counts it.
        """
        self._failure = None
        self._noticed = False
        self._admit(message)
        before = self._tokens
        events: list[Summarization | Eviction] = []
        if self._tokens > self.threshold_tokens:
            now = self._now(message)
            events.extend(self._compact(message, now, self.min_recent, "summary-buffer"))
            if self._tokens > self.max_tokens:  # type: ignore[operator]
                # Recent messages alone break the hard budget: summarize them too.
                events.extend(self._compact(message, now, 0, "summary-overflow"))
        if self._over_limits():
            events.extend(self._enforce(message))
        self.token_history.append(TokenSample(message.turn, before, self._tokens, message.id))
        return events

    def clear(self) -> list[Message]:
        self.token_history.clear()
        return super().clear()

    # --------------------------------------------------------------- internals
    def _plan(self, trigger: Message, min_recent: int) -> list[Message]:
        """The oldest non-pinned messages to summarize now (whole tool groups only)."""
        window = [m for m in self._messages.values() if not self.is_pinned(m)]
        recent = window[max(0, len(window) - min_recent):] if min_recent else []
        protected = {m.id for m in recent}
        protected.add(trigger.id)
        goal = self.target_tokens
        taken: list[Message] = []
        taken_ids: set[str] = set()
        freed = 0
        content = 0
        for m in window:
            if m.id in taken_ids:
                continue
            group_ids = self._companions.get(m.id, [m.id])
            if (
                m.id in protected
                or any(g in protected for g in group_ids)
                or (m.id in self._companions and self._waiting.get(group_ids[0]))
            ):
                break  # keep the summarized part a prefix: never skip over a kept message
            group = [self._messages[g] for g in group_ids]
            taken.extend(group)
            taken_ids.update(group_ids)
            freed += sum(g.billed_tokens for g in group)
            content += sum(g.content_tokens for g in group)
            estimate = self._summary_overhead + min(self.summary_max_tokens, content)
            if self._tokens - freed + estimate <= goal:
                break
        return taken

    def _compact(
        self, trigger: Message, now: float, min_recent: int, rule: str
    ) -> list[Summarization]:
        events: list[Summarization] = []
        while self._tokens > self.target_tokens:
            taken = self._plan(trigger, min_recent)
            if not taken or (len(taken) == 1 and taken[0].is_summary
                             and taken[0].content_tokens <= self.summary_max_tokens):
                break  # nothing left to summarize but a summary that already fits the cap
            removed = sum(m.billed_tokens for m in taken)
            if not self._noticed:
                self._noticed = True
                self._notify(SummarizingNotice(SUMMARIZING_NOTICE, tuple(m.id for m in taken),
                                               self._tokens, self.threshold_tokens, trigger.turn))
            try:
                text = self.summarizer.summarize(taken, self.summary_max_tokens)
                check_summary_text(text, self.summarizer, len(taken))
            except Exception as exc:  # noqa: BLE001 - any failure: evict instead, never lose the add
                # The message is already admitted: raising now would leave the caller unsure
                # whether it was kept and could break the hard budget. Eviction takes over
                # (rule summary-fallback-fifo, its reason naming this failure).
                self.summarizer_failures += 1
                self.last_summarizer_error = exc
                # type and kind only: an error's text can carry a URL or a key into the trace
                kind = getattr(getattr(exc, "cause", None), "kind", None) or getattr(exc, "kind", None)
                self._failure = type(exc).__name__ + (f" ({kind})" if kind else "")
                break
            if self.factory.counter.count(text) + self._summary_overhead >= removed:
                break  # this round would not save anything: stop rather than loop
            summary = self.factory.summary(
                text,
                taken,
                cite_replaced=True,
                importance=max(m.importance for m in taken),
                created_at=max(m.created_at for m in taken),
            )
            if summary.id in self._messages:
                raise ValueError(
                    f"summary id {summary.id!r} is already in the buffer: give the SummaryBuffer "
                    "a factory whose ids do not collide with the conversation's"
                )
            originals, new = self._resolve(taken)
            before = self._tokens
            splice(self, [m.id for m in taken], [summary], at=taken[0].id)
            self._originals[summary.id] = originals
            kept_recent = "" if min_recent else (
                f"; min_recent={self.min_recent} overridden because the hard budget "
                f"{self.max_tokens} was exceeded"
            )
            reason = (
                f"{before} tokens > threshold {self.threshold:g} x {self.max_tokens} = "
                f"{self.threshold_tokens:g}; summarized the oldest {len(taken)} messages "
                f"({removed} tokens) into a {summary.billed_tokens}-token summary aiming at "
                f"target {self.target:g} x {self.max_tokens} = {self.target_tokens:g}, "
                f"keeping the last {min_recent} messages{kept_recent}"
            )
            event = Summarization(
                tuple(m.id for m in taken),
                summary.id,
                new,
                summary.summary_depth,
                rule,
                reason,
                before,
                self._tokens,
                self.max_tokens,
                now,
                trigger.turn,
            )
            self.trace.append(event)
            events.append(event)
        return events

    def _notify(self, notice: SummarizingNotice) -> None:
        if self.on_summarizing is None:
            return
        try:
            self.on_summarizing(notice)
        except Exception:  # noqa: BLE001 - a display that fails must not cost the add
            self.notice_failures += 1

    def _resolve(self, taken: list[Message]) -> tuple[IdRuns, tuple[str, ...]]:
        """Originals of the summary replacing ``taken``, and those this round adds.

        The first of this buffer's summaries among ``taken`` (normally ``taken[0]``) hands
        over its runs, which are extended in place: a round costs what it takes, not what
        the chain already stands for.
        """
        runs: IdRuns | None = None
        new: list[str] = []
        for m in taken:
            mine = self._originals.get(m.id)
            if runs is None and mine is not None and not new:
                runs = mine
            elif mine is not None:
                new.extend(mine)
            else:
                new.extend(m.covers)
        if runs is None:
            runs = IdRuns()
        runs.extend(new)
        return runs, tuple(new)

    def _on_remove(self, message: Message) -> None:
        self._originals.pop(message.id, None)

    def _on_clear(self) -> None:
        self._originals.clear()

    def _choose_victim(self, now: float) -> Victim | None:
        for mid in self._messages:
            if self._evictable(mid):
                why = (f"the summarizer failed ({self._failure})" if self._failure
                       else "summarizing could not get under the hard budget")
                return Victim(mid, "summary-fallback-fifo",
                              f"{why}, so the oldest message goes; {self._limit_text()}")
        return None

    def __repr__(self) -> str:
        return (
            f"SummaryBuffer(entries={len(self._messages)}, tokens={self._tokens}, "
            f"budget={self.max_tokens}, threshold={self.threshold:g}, target={self.target:g}, "
            f"min_recent={self.min_recent}, depth={self.summary_depth()})"
        )
