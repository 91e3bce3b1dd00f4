"""Shared steps of the context policies that replay a history into a fresh memory.

``EntityContextPolicy`` (entity working memory) and ``WorkspaceContextPolicy`` (the
three columns) answer ``build_context`` the same way: build a fresh memory on a
``StepClock`` with the caller's factory, replay the history with the clock following
the messages' ``created_at``, render one system item, and fill the rest of the budget
with the newest messages. The steps they share live here, once; what each memory
does with a message stays in its own policy. Not taught by a notebook: it is plumbing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from memorykit.clock import StepClock
from memorykit.context import ContextItem
from memorykit.messages import Message, check_history
from memorykit.tokens import ChatFormat, TokenCounter, role_tokens

M = TypeVar("M")


def memory_on_fresh_clock(make_memory: Callable[[StepClock], Any], kind: type[M]) -> tuple[StepClock, M]:
    """A new ``StepClock`` and ``make_memory(clock)``, checked to be a ``kind`` on that clock."""
    clock = StepClock()
    memory = make_memory(clock)
    if not isinstance(memory, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"make_memory must return {article} {kind.__name__}, got {memory!r}")
    if memory.clock is not clock:
        raise ValueError("make_memory must build the memory on the clock it is given")
    return clock, memory


def timed_messages(history: Sequence[Message], clock: StepClock) -> Iterator[tuple[int, Message]]:
    """``(index, message)`` of a history, with ``clock`` moved to each message's ``created_at``
    first (never backwards: a message stamped earlier than the last one keeps the clock).
    The history is checked whole (``messages.check_history``: Message records, no id twice)
    before anything is replayed."""
    return _timed(check_history(history), clock)


def _timed(history: list[Message], clock: StepClock) -> Iterator[tuple[int, Message]]:
    for i, message in enumerate(history):
        if message.created_at > clock.now():
            clock.set(message.created_at)
        yield i, message


def system_tokens(content: str, counter: TokenCounter, chat_format: ChatFormat) -> int:
    """Billed tokens of ``content`` sent as a system message."""
    return counter.count(content) + chat_format.message_overhead(role_tokens(counter, "system"))


def newest_that_fit(history: Sequence[Message], room: int) -> list[ContextItem]:
    """The most recent messages whose billed tokens fit in ``room``, oldest first
    (stopping at the first that does not fit: the conversation is never cut in the middle)."""
    recent: list[ContextItem] = []
    for message in reversed(history):
        if message.billed_tokens > room:
            break
        recent.append(ContextItem.from_message(message))
        room -= message.billed_tokens
    recent.reverse()
    return recent
