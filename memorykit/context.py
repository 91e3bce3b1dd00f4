"""One question every memory answers: what would you send the model?

``ContextPolicy.build_context(history, query, budget)`` takes the conversation
so far, the current query and a token budget, and returns a ``Context``: the
items it would send, each carrying the ids of the original messages it stands
for (its provenance). Buffers, entity memories, episodic and semantic stores
and the memory service all answer through it, so evaluation can score any of
them the same way: a question's evidence is covered when some item's
``sources`` include it, directly or through a summary, episode or rule.
Taught in ``notebooks/10_architectures.ipynb`` and ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from memorykit._validate import require_int, require_str, require_texts
from memorykit.buffers.base import MessageBuffer
from memorykit.messages import Message, ToolCall
from memorykit.tokens import ChatFormat


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One thing placed in the prompt."""

    role: str
    content: str
    tokens: int
    """Billed tokens of this item as a chat message (content plus framing)."""
    sources: tuple[str, ...]
    """Ids of the original messages this item stands for (provenance)."""
    kind: str = "message"
    """What it is: message, summary, episode, fact, rule, entity, note, ..."""
    score: float | None = None
    """Why it was chosen, when a score decided it (similarity, relevance...)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls an assistant message issued (sent as calls when their results follow)."""
    tool_call_id: str | None = None
    """For a tool result: the call it answers."""

    @classmethod
    def from_message(cls, message: Message, score: float | None = None,
                     sources: tuple[str, ...] | None = None) -> ContextItem:
        """``message`` as an item; ``sources`` overrides ``message.covers`` (a buffer's
        ``originals``, when its summaries cite earlier summaries)."""
        kind = "summary" if message.is_summary else "message"
        return cls(message.role, message.content, message.billed_tokens,
                   message.covers if sources is None else sources, kind, score,
                   message.tool_calls, message.tool_call_id)

    def to_openai(self) -> dict[str, str]:
        """The item alone, as plain text: a tool result becomes system text, a call its
        content (one item cannot carry a call and its results; ``Context.to_openai`` can)."""
        role = self.role if self.role in ("system", "user", "assistant") else "system"
        return {"role": role, "content": self.content}


@dataclass(frozen=True)
class Context:
    """What a policy would send for one query, with the budget it was given."""

    items: tuple[ContextItem, ...]
    budget: int
    policy: str
    chat_format: ChatFormat = field(default_factory=ChatFormat)
    notes: tuple[str, ...] = ()
    """Plain-language remarks: e.g. that the budget could not be met and why."""

    @property
    def tokens(self) -> int:
        """Billed prompt tokens: every item plus the reply primer."""
        return sum(item.tokens for item in self.items) + self.chat_format.reply_primer

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.budget

    def covered_ids(self) -> frozenset[str]:
        return frozenset(source for item in self.items for source in item.sources)

    def to_openai(self) -> list[dict[str, Any]]:
        """The request: a tool call travels as a call, with its results, when every result
        follows it directly (``Message.to_openai``); a call or result whose other half the
        policy left out travels as plain text (``ContextItem.to_openai``), so the request
        always passes ``validate_wire``."""
        items, out, i = self.items, [], 0
        while i < len(items):
            item = items[i]
            ids = [call.id for call in item.tool_calls]
            answers = [r.tool_call_id for r in items[i + 1:i + 1 + len(ids)]]
            if ids and sorted(ids) == sorted(a for a in answers if a is not None):
                out.append({"role": "assistant", "content": item.content,
                            "tool_calls": [call.to_openai() for call in item.tool_calls]})
                out.extend({"role": "tool", "content": r.content, "tool_call_id": r.tool_call_id}
                           for r in items[i + 1:i + 1 + len(ids)])
                i += 1 + len(ids)
            else:
                out.append(item.to_openai())
                i += 1
        return out

    def __len__(self) -> int:
        return len(self.items)


@runtime_checkable
class ContextPolicy(Protocol):
    """Anything that can say what it would send for a query under a budget."""

    name: str

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context: ...


def check_request(query: Any, budget: Any) -> None:
    require_str("query", query)
    require_int("budget", budget, minimum=1)


class BufferPolicy:
    """Any conversation buffer as a ContextPolicy: replay the history, send the window.

    ``make_buffer(budget)`` builds a fresh buffer for each request, so requests
    never share state. The query is not used: a buffer keeps what its rule
    keeps, whatever is asked next. That is the point of comparing it with
    query-aware memories.

    ``signals`` names the message fields the buffer's rule weighs besides arrival order
    (``("importance",)``), so an evaluation can say why two buffers coincide on data
    where such a field takes one value.
    """

    def __init__(self, make_buffer: Callable[[int], MessageBuffer], name: str,
                 signals: tuple[str, ...] = ()) -> None:
        if not callable(make_buffer):
            raise TypeError(f"make_buffer must be callable, got {make_buffer!r}")
        self.make_buffer = make_buffer
        self.name = require_str("name", name, non_empty=True)
        self.signals: tuple[str, ...] = tuple(require_texts("signals", signals))

    def build_context(self, history: Sequence[Message], query: str, budget: int) -> Context:
        check_request(query, budget)
        buffer = self.make_buffer(budget)
        for message in history:
            buffer.add(message)
        return context_from_messages(buffer, budget, self.name, buffer.chat_format)

    def __repr__(self) -> str:
        return f"BufferPolicy({self.name!r})"


def context_from_messages(
    messages: Iterable[Message], budget: int, policy: str, chat_format: ChatFormat = ChatFormat()
) -> Context:
    """A context sending ``messages``; a buffer's items name the originals it resolves."""
    resolve = messages.originals if isinstance(messages, MessageBuffer) else None
    items = tuple(ContextItem.from_message(m, sources=None if resolve is None else resolve(m.id))
                  for m in messages)
    return with_budget_note(Context(items, budget, policy, chat_format))


def with_budget_note(ctx: Context) -> Context:
    """``ctx``, with a note saying why when it is over its budget and says nothing yet: only
    what a memory never drops (system instructions, the newest message, pending tool calls, the
    reply primer) is left, and that alone does not fit."""
    if not ctx.over_budget or ctx.notes:
        return ctx
    note = (f"{ctx.tokens} tokens exceed the budget of {ctx.budget}: only protected messages "
            "(system instructions, the newest message, pending tool calls) and the reply primer "
            f"({ctx.chat_format.reply_primer} tokens) remain")
    return Context(ctx.items, ctx.budget, ctx.policy, ctx.chat_format, (note,))
