"""Plumbing shared by the architectures: pricing context items and fitting them to a budget.

Not taught by a notebook.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memorykit.clock import Clock
from memorykit.context import Context, ContextItem
from memorykit.longterm.events import Trimmed
from memorykit.messages import Message, check_history  # noqa: F401 (re-exported for service, architectures)
from memorykit.tokens import ChatFormat, TokenCounter, Tokenizer, role_tokens
from memorykit.trace import Trace


class ItemPricer:
    """Builds ``ContextItem``s whose ``tokens`` are exact billed chat-message tokens."""

    def __init__(self, counter: TokenCounter | None = None, chat_format: ChatFormat = ChatFormat()):
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        if not isinstance(chat_format, ChatFormat):
            raise TypeError(f"chat_format must be a ChatFormat, got {chat_format!r}")
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.chat_format = chat_format

    def item(
        self,
        role: str,
        content: str,
        sources: Sequence[str],
        kind: str,
        score: float | None = None,
    ) -> ContextItem:
        tokens = self.counter.count(content) + self.chat_format.message_overhead(
            role_tokens(self.counter, role)
        )
        return ContextItem(role, content, tokens, tuple(sources), kind, score)

    def query(self, query: str) -> list[ContextItem]:
        """The current input as the last item (none for an empty query)."""
        return [self.item("user", query, (), "query")] if query else []


@dataclass
class Part:
    """A candidate item with what may happen to it under budget pressure."""

    item: ContextItem
    drop_rank: float | None
    """None: never dropped (instructions, current input); lower ranks are dropped first."""
    group: str | None = None
    """Parts sharing a group leave together (a tool call and its results)."""


def fit(
    parts: Sequence[Part], budget: int, policy: str, chat_format: ChatFormat, trace: Trace | None
) -> Context:
    """Drop droppable parts, lowest rank first, until the context fits ``budget``.

    Order is preserved. If only protected parts remain and they still exceed
    the budget, the context says so in its notes.
    """
    kept = list(parts)
    total = sum(p.item.tokens for p in kept) + chat_format.reply_primer
    notes: list[str] = []
    if total > budget:
        victims = sorted(
            (p for p in kept if p.drop_rank is not None), key=lambda p: p.drop_rank  # type: ignore[arg-type,return-value]
        )
        dropped = 0
        for victim in victims:
            if total <= budget:
                break
            if not any(p is victim for p in kept):
                continue  # already left with its group
            together = [victim] if victim.group is None else [
                p for p in kept if p.group == victim.group
            ]
            for part in together:
                kept = [p for p in kept if p is not part]
                before = total
                total -= part.item.tokens
                dropped += 1
                if trace is not None:
                    why = "the lowest keep rank" if part is victim else (
                        f"its tool-call group {victim.group!r}"
                    )
                    trace.append(
                        Trimmed(
                            part.item.kind,
                            part.item.sources,
                            part.item.tokens,
                            f"{before} tokens > budget {budget}: left out the "
                            f"{part.item.kind} with {why} (rank {victim.drop_rank:g})",
                        )
                    )
        if dropped:
            notes.append(f"{dropped} item(s) left out to fit the budget of {budget} tokens")
        if total > budget:
            notes.append(
                f"{total} tokens exceed the budget of {budget}: only protected items "
                "(system instructions and the current input) remain"
            )
    return Context(tuple(p.item for p in kept), budget, policy, chat_format, tuple(notes))


def request_time(history: Sequence[Message], clock: Clock | None) -> float:
    """'Now' for a request: the clock if one was injected, else the newest message's time."""
    if clock is not None:
        return float(clock.now())
    return max((m.created_at for m in history), default=0.0)


def is_instruction(message: Message) -> bool:
    """A pinned system message: sent every time, never forgotten or recalled."""
    return message.pinned
