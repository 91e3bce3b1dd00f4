"""The accounting every conversation buffer shares.

``MessageBuffer`` owns the budget arithmetic: add a message, then, while the
buffer is over its token or entry limit, ask the policy for a victim and evict
it. A policy (FIFO, importance, hybrid, recency...) overrides only
``_choose_victim`` and the index hooks. Eviction returns what it removed and
why, and every decision is appended to ``trace``.

Invariants every policy inherits (checked by one contract test suite):

* pinned messages (system instructions) are never evicted;
* the message just added is never its own victim: the current input always
  reaches the model, even when it alone is larger than the budget (the buffer
  then evicts everything else it may and records an ``OverBudget`` event);
* a tool call and its results leave together, and a call still waiting for its
  results is not evicted, so no result is ever kept without its call;
* every removed message appears in exactly one event.

Taught in ``notebooks/02_pruning_strategies.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import fields
from typing import Any

from memorykit._validate import require_int, require_optional_int
from memorykit.clock import Clock, time_basis
from memorykit.messages import Message, check_importance
from memorykit.tokens import ChatFormat
from memorykit.trace import Eviction, OverBudget, Trace, VictimTuple


class MessageBuffer:
    """A conversation window bounded by tokens and/or entries.

    Subclasses choose victims; this class does everything else. The token total
    is what the chat API would bill for the window as a prompt: each message's
    billed tokens plus the reply primer.

    ``clock`` (None by default) is where time-aware policies read "now"; without
    one they use the newest message's ``created_at`` ("message time", on the
    ``MessageFactory``'s clock), so a buffer never ages messages on a basis of its own.
    """

    rule = "fifo"

    def __init__(
        self,
        max_tokens: int | None = 8000,
        max_entries: int | None = None,
        *,
        chat_format: ChatFormat = ChatFormat(),
        clock: Clock | None = None,
        pin_system: bool = True,
        trace: Trace | None = None,
    ) -> None:
        self.max_tokens = require_optional_int("max_tokens", max_tokens, minimum=1)
        self.max_entries = require_optional_int("max_entries", max_entries, minimum=1)
        if not isinstance(chat_format, ChatFormat):
            raise TypeError(f"chat_format must be a ChatFormat, got {chat_format!r}")
        if clock is not None and not callable(getattr(clock, "now", None)):
            raise TypeError(f"clock must have a now() method, got {clock!r}")
        self.chat_format = chat_format
        self.clock = clock
        if type(pin_system) is not bool:
            # bool("false") is True: a string or number here is a mistake, not a flag
            raise TypeError(f"pin_system must be a bool, got {pin_system!r}")
        self.pin_system = pin_system
        if trace is not None and not isinstance(trace, Trace):
            raise TypeError(f"trace must be a Trace, got {trace!r}")
        # Injected so a long-running agent can bound it (Trace(max_events=...)); the
        # default keeps every event for the notebooks' timelines.
        self.trace = trace if trace is not None else Trace()
        self._messages: dict[str, Message] = {}
        self._tokens = chat_format.reply_primer
        self._content_tokens = 0
        self._added = 0
        # Tool-call bookkeeping: which message issued a call, which calls still
        # wait for results, and which messages travel together.
        self._call_owner: dict[str, str] = {}
        self._waiting: dict[str, set[str]] = {}
        self._companions: dict[str, list[str]] = {}
        self._newest: str | None = None

    # ----------------------------------------------------------------- reading
    @property
    def tokens(self) -> int:
        """Billed prompt tokens of the window: framing, contents and reply primer."""
        return self._tokens

    @property
    def content_tokens(self) -> int:
        """Tokens of the message contents alone."""
        return self._content_tokens

    @property
    def budget(self) -> int | None:
        return self.max_tokens

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages.values())

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def get(self, message_id: str) -> Message | None:
        return self._messages.get(message_id)

    def messages(self) -> tuple[Message, ...]:
        """The window, oldest first. Costs the window's size, never the history's."""
        return tuple(self._messages.values())

    def to_openai(self) -> list[dict[str, Any]]:
        return [m.to_openai() for m in self._messages.values()]

    @property
    def over_budget(self) -> bool:
        return self._over_limits()

    @property
    def added_count(self) -> int:
        """How many messages were ever added."""
        return self._added

    def stats(self) -> dict[str, Any]:
        """Entries, tokens and utilization, as D1's memory stats."""
        return {
            "entries": len(self._messages),
            "tokens": self._tokens,
            "content_tokens": self._content_tokens,
            "max_tokens": self.max_tokens,
            "utilization": (self._tokens / self.max_tokens) if self.max_tokens else None,
            "evictions": self.trace.counts.get("eviction", 0),
            "added": self._added,
        }

    # ----------------------------------------------------------------- writing
    def add(self, message: Message) -> list[Eviction]:
        """Add a message, then evict until the limits hold. Returns the evictions."""
        self._admit(message)
        return self._enforce(message)

    def extend(self, messages: Iterable[Message]) -> list[Eviction]:
        out: list[Eviction] = []
        for m in messages:
            out.extend(self.add(m))
        return out

    def set_importance(self, message_id: str, importance: float) -> Message:
        """Replace a kept message's importance (the record is replaced, not mutated)."""
        old = self._messages.get(message_id)
        if old is None:
            raise KeyError(f"message_id {message_id!r} is not in the buffer")
        new = old.with_importance(check_importance(importance))
        self._messages[message_id] = new
        self._on_update(old, new)
        return new

    def originals(self, message_id: str) -> tuple[str, ...]:
        """The original message ids a message in the window stands for (provenance).

        An original stands for itself, a summary for its sources. A buffer whose summaries
        cite the summary they replaced (``SummaryBuffer``) resolves the chain here, so a
        context built from the window still names originals.
        """
        message = self._messages.get(message_id)
        if message is None:
            raise KeyError(f"message_id {message_id!r} is not in the buffer")
        return message.covers

    def clear(self) -> list[Message]:
        """Remove everything (pinned messages included) and return it; not an eviction."""
        removed = list(self._messages.values())
        self._messages.clear()
        self._tokens = self.chat_format.reply_primer
        self._content_tokens = 0
        self._call_owner.clear()
        self._waiting.clear()
        self._companions.clear()
        self._newest = None
        self._on_clear()
        return removed

    # --------------------------------------------------------------- internals
    def _admit(self, message: Message) -> None:
        if type(message) is not Message:
            raise TypeError(f"message must be a Message, got {message!r}")
        mid = message.id
        if mid in self._messages:
            raise ValueError(f"message id {mid!r} is already in the buffer")
        if message.role == "tool":
            self._attach_result(message)
        if message.tool_calls:
            for call_id in message.tool_call_ids:
                if call_id in self._call_owner:
                    raise ValueError(f"tool call id {call_id!r} was already issued")
                self._call_owner[call_id] = mid
            self._waiting[mid] = set(message.tool_call_ids)
            self._companions[mid] = [mid]
        self._messages[mid] = message
        self._tokens += message.billed_tokens
        self._content_tokens += message.content_tokens
        self._added += 1
        self._newest = mid
        self._on_add(message)

    def _attach_result(self, message: Message) -> None:
        call_id = message.tool_call_id
        owner = self._call_owner.get(call_id)  # type: ignore[arg-type]
        if owner is None or owner not in self._messages:
            raise ValueError(
                f"tool_call_id {call_id!r} matches no tool call in the buffer: "
                "add the assistant message that issues the call first"
            )
        waiting = self._waiting.get(owner)
        if waiting is None or call_id not in waiting:
            raise ValueError(f"tool_call_id {call_id!r} has already been answered")
        waiting.discard(call_id)
        if not waiting:
            del self._waiting[owner]
        self._companions[owner].append(message.id)
        self._companions[message.id] = self._companions[owner]

    def _over_limits(self) -> bool:
        return ((self.max_tokens is not None and self._tokens > self.max_tokens)
                or (self.max_entries is not None and len(self._messages) > self.max_entries))

    def is_pinned(self, message: Message) -> bool:
        """Whether this buffer never evicts ``message``: ``Message.pinned`` (a system
        instruction, not a summary) when ``pin_system`` is on. The one statement of the rule."""
        return self.pin_system and message.pinned

    def _evictable(self, message_id: str) -> bool:
        """May this message leave now? Policies skip candidates for which this is False."""
        if message_id == self._newest or self.is_pinned(self._messages[message_id]):
            return False
        # A tool call leaves with its results: not while it still waits for one, and not
        # when the message just added is one of them.
        group = self._companions.get(message_id)
        return group is None or not (self._waiting.get(group[0]) or self._newest in group)

    def _now(self, trigger: Message) -> float:
        return self.clock.now() if self.clock is not None else trigger.created_at

    def _enforce(self, trigger: Message) -> list[Eviction]:
        """Over the limits: ask the policy for a victim, evict it, repeat."""
        if not self._over_limits():
            return []
        # Read once: every decision of one round is made, and traced, at the same moment.
        now = self._now(trigger)
        events: list[Eviction] = []
        while self._over_limits():
            victim = self._choose_victim(now)
            if victim is None:
                self._record_over_budget(trigger, now)
                break
            events.append(self._evict(victim, trigger, now))
        return events

    def _evict(self, victim: VictimTuple, trigger: Message, now: float) -> Eviction:
        message_id, rule, reason, score = victim
        before = self._tokens
        group = self._companions.get(message_id)
        if group is None:
            ids: tuple[str, ...] = (message_id,)
        else:  # a tool call and its results leave together: no result outlives its call
            ids = tuple(group)
            reason += f"; left together with its tool call/results {', '.join(ids)}"
        for mid in ids:
            self._remove(mid)
        event = _new_eviction(ids, rule, reason, score, before, self._tokens, self.max_tokens,
                              now, trigger.turn)
        self.trace.append(event)
        return event

    def _remove(self, message_id: str) -> Message:
        message = self._messages.pop(message_id)
        self._tokens -= message.billed_tokens
        self._content_tokens -= message.content_tokens
        if message.tool_calls:
            for call_id in message.tool_call_ids:
                self._call_owner.pop(call_id, None)
            self._waiting.pop(message_id, None)
        self._companions.pop(message_id, None)
        self._on_remove(message)
        return message

    def _record_over_budget(self, trigger: Message, now: float) -> None:
        protected = tuple(self._messages)
        limit = self.max_tokens if self.max_tokens is not None else -1
        self.trace.append(
            OverBudget(
                self._tokens,
                limit,
                protected,
                f"{self._tokens} tokens / {len(self._messages)} entries exceed the limits "
                f"(max_tokens={self.max_tokens}, max_entries={self.max_entries}) but every kept "
                "message is protected (pinned, just added, or a tool call awaiting results)",
                now,
                trigger.turn,
            )
        )

    def _limit_text(self) -> str:
        max_tokens, max_entries = self.max_tokens, self.max_entries
        tokens_over = max_tokens is not None and self._tokens > max_tokens
        if max_entries is not None and len(self._messages) > max_entries:
            entries = f"{len(self._messages)} entries > max_entries {max_entries}"
            if tokens_over:
                return f"{self._tokens} tokens > max_tokens {max_tokens} and {entries}"
            return entries
        return f"{self._tokens} tokens > max_tokens {max_tokens}" if tokens_over else ""

    # ------------------------------------------------------------ policy hooks
    def _choose_victim(self, now: float) -> VictimTuple | None:
        """The oldest evictable message (FIFO). Policies override this."""
        for mid in self._messages:
            if self._evictable(mid):
                return (mid, "fifo", f"oldest evictable message; {self._limit_text()}", None)
        return None

    def _on_add(self, message: Message) -> None:
        """Index a new message (policies with their own index override this)."""

    def _on_remove(self, message: Message) -> None:
        """Forget a removed message (lazy-deleting indexes need nothing)."""

    def _on_update(self, old: Message, new: Message) -> None:
        """A kept message's record was replaced (importance changed)."""

    def _on_clear(self) -> None:
        """Drop every index entry."""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(entries={len(self._messages)}, tokens={self._tokens}, "
            f"max_tokens={self.max_tokens}, max_entries={self.max_entries}, "
            f"time_basis={time_basis(self.clock)!r})"
        )


# _evict's record, built without Eviction(...): Eviction is a frozen dataclass, whose __init__
# sets each of its nine fields through object.__setattr__. A buffer evicts about once per
# message it adds, and the slots' own setters build the identical record in half the time;
# without them every buffer costs ~0.6 us more per message, ~0.03x of the tiktoken floor,
# which the importance and hybrid buffers (~1.45x of it) cannot spare (BENCHMARKS.md, issue 23).
(_set_ids, _set_rule, _set_reason, _set_score, _set_before, _set_after, _set_budget, _set_at,
 _set_turn) = (getattr(Eviction, f.name).__set__ for f in fields(Eviction))


def _new_eviction(ids: tuple[str, ...], rule: str, reason: str, score: float | None,
                  before: int, after: int, budget: int | None, at: float, turn: int) -> Eviction:
    event = object.__new__(Eviction)
    _set_ids(event, ids)
    _set_rule(event, rule)
    _set_reason(event, reason)
    _set_score(event, score)
    _set_before(event, before)
    _set_after(event, after)
    _set_budget(event, budget)
    _set_at(event, at)
    _set_turn(event, turn)
    return event
