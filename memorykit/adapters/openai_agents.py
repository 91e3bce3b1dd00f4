"""A tuned memory policy inside the OpenAI Agents SDK (``pip install 'memorykit[agents]'``).

    from agents import Agent, RunConfig, Runner, SQLiteSession
    from memorykit.adapters.openai_agents import TunedContextFilter

    tuned = TunedContextFilter(memorykit.load_policy("best.json"))   # or any policy + budget
    config = RunConfig(call_model_input_filter=tuned)
    await Runner.run(agent, "Where did we park?", session=SQLiteSession("chat"), run_config=config)

Which hook, and why. The SDK offers three places to shape what the model sees:

* a ``Session`` (what is stored and handed back by ``get_items``): it cannot choose by
  relevance, because it never sees the new input, the query the policy ranks by;
* ``RunConfig.session_input_callback(history, new_items)``: it sees the query, but it runs once
  per ``Runner.run`` (not before the second model call of a turn that used a tool), and what it
  returns is diffed against the history to decide what to *store*: a summary or a call sent as
  text would be written back into the session as if the user had said it;
* ``RunConfig.call_model_input_filter`` (``TunedContextFilter`` here): it runs immediately before
  every model call, sees the whole input and the instructions, and what it returns is sent and
  never stored.

So the adapter is that filter, and nothing else: the session (the SDK's ``SQLiteSession``, or any
other) keeps every item losslessly, and the filter decides, per model call, what the model reads.
Nothing is ever dropped from storage; ``session.get_items()`` gives back every item.

What one model call gets. The input is split at the latest user message: before it is the
history, from it on is this turn (the user's input, and the tool calls and results the agent made
since). The policy builds its context from the history with the user's text as the query, within
``budget`` tokens (memorykit's count, what ``tune`` measured); the agent's instructions and this
turn's items are sent in full beside it, outside the budget. Tool calls stay paired: the context
is sent as ``Context.to_openai()`` makes it (a call with its results, or both halves as text), so
the messages on the wire pass ``memorykit.messages.validate_wire``.

Conversion. ``items_to_messages`` turns the SDK's input items (Responses-style dicts: messages with
str or content-part content, ``function_call``, ``function_call_output``) into memorykit
``Message`` records, one per chat message: consecutive ``function_call`` items become one assistant
message with those ``ToolCall``s, as the chat API pairs them. Each message keeps the items it came
from (JSON text in ``metadata["agents_items"]``), so ``messages_to_items`` gives them back
unchanged. An item of another type (reasoning, a hosted tool's call, an image part) is refused with
an ``UnconvertibleItem`` naming its type, never dropped; so is text that is not valid Unicode
(a lone surrogate), naming the item. ``context_to_items`` turns a policy's
``Context`` into items the SDK's chat-completions converter sends as exactly
``Context.to_openai()``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents.run_config import CallModelData, ModelInputData

from memorykit._validate import require_int, unicode_problem
from memorykit.context import Context, ContextPolicy
from memorykit.messages import Message, MessageFactory, ToolCall

__all__ = ["TunedContextFilter", "UnconvertibleItem", "context_to_items", "items_to_messages",
           "messages_to_items"]

ITEMS_KEY = "agents_items"
"""The metadata key under which a Message keeps the SDK items it came from (JSON text)."""

_MESSAGE_ROLES = {"user": "user", "system": "system", "developer": "system",
                  "assistant": "assistant"}
_TEXT_PARTS = ("input_text", "output_text", "text")


class UnconvertibleItem(TypeError, ValueError):
    """An SDK input item (or a part of one) that a memorykit Message cannot hold: its text says
    which item, and its type. Both a TypeError and a ValueError, like ``OpenAIMessageError``."""


# ------------------------------------------------------------ items -> messages
def _item_type(item: Any, at: str) -> str:
    if not isinstance(item, dict):
        raise UnconvertibleItem(f"{at} must be a dict (an SDK input item), got "
                                f"{type(item).__name__}: {item!r:.80}")
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise UnconvertibleItem(f"{at} has no type and no role: {item!r:.80}")
    return kind


def _unicode(text: str, at: str) -> str:
    problem = unicode_problem(text)
    if problem:
        raise UnconvertibleItem(f"{at} is {problem}")
    return text


def _text(content: Any, at: str, field: str = "content") -> str:
    """The text of a message's content (or a tool output's ``output``): a str, or text parts
    joined by newlines (as the SDK's converter joins them); any other part is refused, named."""
    at = f"{at}.{field}"
    if isinstance(content, str):
        return _unicode(content, at)
    if not isinstance(content, list):
        raise UnconvertibleItem(f"{at} must be a str or a list of parts, got "
                                f"{content!r:.80}")
    texts = []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
        else:
            raise UnconvertibleItem(f"{at}[{i}] is a part of type {kind!r}: a memory "
                                    "holds text (input_text, output_text, refusal)")
    return _unicode("\n".join(texts), at)


def _key(item: dict[str, Any], at: str) -> str:
    # sorted keys: the same item read back from a session in another key order is the same key
    try:
        key = json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        key.encode("utf-8")  # a lone surrogate anywhere (a call's arguments too) is refused
        return key
    except (TypeError, ValueError) as exc:  # kept as JSON text: what JSON cannot hold is refused
        raise UnconvertibleItem(f"{at} ({item.get('type', 'message')}) holds a value JSON cannot "
                                f"keep: {exc}") from None


def _groups(items: Sequence[Any]) -> list[tuple[int, list[dict[str, Any]]]]:
    """``items`` cut into chat messages: (index of the first item, the items). A run of
    ``function_call`` items is one group (one assistant message issuing those calls), and so is
    an assistant message followed by calls: the model said it and called them in one turn, and
    the SDK's converter sends them as one chat message."""
    groups: list[tuple[int, list[dict[str, Any]]]] = []
    previous = None
    for i, item in enumerate(items):
        kind = _item_type(item, f"items[{i}]")
        if kind == "function_call" and previous in ("function_call", "assistant"):
            groups[-1][1].append(item)
        else:
            groups.append((i, [item]))
        previous = "assistant" if kind == "message" and item.get("role") == "assistant" else kind
    return groups


def _message(factory: MessageFactory, start: int, group: list[dict[str, Any]],
             keys: list[str]) -> Message:
    first, at = group[0], f"items[{start}]"
    kind = _item_type(first, at)
    meta = {ITEMS_KEY: "[" + ",".join(keys) + "]"}
    if kind == "function_call" or (kind == "message" and len(group) > 1):
        # calls, maybe after the text the model said before them (an assistant message)
        said, first_call = (_text(first.get("content"), at), 1) if kind == "message" else ("", 0)
        calls = []
        for j, call in enumerate(group[first_call:], start=first_call):
            try:
                calls.append(ToolCall(call.get("call_id"), call.get("name"),
                                      call.get("arguments") or "{}"))
            except (TypeError, ValueError) as exc:
                raise UnconvertibleItem(f"items[{start + j}] (function_call): {exc}") from None
        return factory.assistant(said, tool_calls=tuple(calls), metadata=meta)
    if kind == "message":
        role = _MESSAGE_ROLES.get(first.get("role"))  # type: ignore[arg-type]
        if role is None:
            raise UnconvertibleItem(f"{at} is a message with role {first.get('role')!r}: roles "
                                    f"are {', '.join(_MESSAGE_ROLES)}")
        return factory.message(role, _text(first.get("content"), at), metadata=meta)
    if kind == "function_call_output":
        call_id = first.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise UnconvertibleItem(f"{at} (function_call_output) must name its call_id, got "
                                    f"{call_id!r}")
        return factory.tool(_text(first.get("output"), at, "output"), call_id=call_id,
                            metadata=meta)
    raise UnconvertibleItem(f"{at} has type {kind!r}: memorykit converts message, function_call "
                            "and function_call_output items")


def items_to_messages(items: Sequence[Any], factory: MessageFactory | None = None) -> list[Message]:
    """The SDK's input items as memorykit Messages, one per chat message (module docstring).

    ``factory`` gives ids, turns and token counts (a fresh ``MessageFactory`` by default).
    Raises ``UnconvertibleItem`` naming the first item (index and type) it cannot hold."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(f"items must be a list of SDK input items, got {type(items).__name__}")
    factory = factory if factory is not None else MessageFactory()
    return [_message(factory, start, group,
                     [_key(item, f"items[{start + j}]") for j, item in enumerate(group)])
            for start, group in _groups(items)]


def messages_to_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The SDK items each message came from, unchanged (``items_to_messages``'s inverse). A
    message memorykit made itself (no items kept) is sent as ``context_to_items`` sends it."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if type(m) is not Message:
            raise TypeError(f"messages[{i}] must be a Message, got {m!r:.80}")
        kept = m.metadata.get(ITEMS_KEY)
        out.extend(json.loads(kept) if isinstance(kept, str) else _wire_items(m.to_openai()))
    return out


# ------------------------------------------------------------ context -> items
def _wire_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """One chat-completions message as the items the SDK's converter sends as exactly it."""
    role, content = message["role"], message["content"]
    if role == "tool":
        return [{"type": "function_call_output", "call_id": message["tool_call_id"],
                 "output": content}]
    calls = message.get("tool_calls")
    if not calls:
        return [{"role": role, "content": content}]
    # An output message (it has an id) followed by calls: the converter merges them into one
    # assistant message with this content and these calls, as the context has it.
    text = {"type": "output_text", "text": content, "annotations": []}
    return [{"type": "message", "role": "assistant", "id": "__fake_id__", "status": "completed",
             "content": [text]}] + [
        {"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
         "arguments": c["function"]["arguments"]} for c in calls]


def context_to_items(context: Context) -> list[dict[str, Any]]:
    """A policy's context as SDK input items: sent by the SDK's chat-completions model as
    exactly ``context.to_openai()`` (calls paired with their results, or both as text)."""
    if not isinstance(context, Context):
        raise TypeError(f"context must be a memorykit Context, got {context!r:.80}")
    return [item for message in context.to_openai() for item in _wire_items(message)]


# ------------------------------------------------------------ the hook
def _latest_user(items: Sequence[Any]) -> int | None:
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if isinstance(item, dict) and item.get("role") == "user" and \
                item.get("type", "message") == "message":
            return i
    return None


class TunedContextFilter:
    """``RunConfig(call_model_input_filter=TunedContextFilter(policy, budget))``: before every
    model call, the history becomes ``policy``'s context for the user's latest text.

    ``policy``: any ``ContextPolicy`` (a ``TunedPolicy`` from ``memorykit.load_policy`` too).
    ``budget``: tokens for the history's context (memorykit's count); None takes
    ``policy.budget`` and refuses a policy without one. ``factory`` makes the history's
    messages (default: the policy's ``message_factory()`` when it has one, as a ``TunedPolicy``
    does, so tokens are counted as its budget was; else a plain ``MessageFactory``). The agent's
    instructions and this turn's items (the user's input, the tool calls and results since) are
    sent in full beside it.

    Each history item is converted once: the filter remembers the Messages it made (by the
    item's JSON text and its occurrence), so ids stay stable across turns (a policy's caches keep
    working) and tokens are counted once; the model calls of one turn (before and after a tool
    result) share one context. ``last_context`` is the context of the latest call.
    One filter serves one conversation at a time (it is not locked for concurrent runs).
    """

    def __init__(self, policy: ContextPolicy, budget: int | None = None, *,
                 factory: MessageFactory | None = None) -> None:
        if not callable(getattr(policy, "build_context", None)):
            raise TypeError(f"policy must be a ContextPolicy (with build_context), got "
                            f"{policy!r:.80}")
        if budget is None:
            budget = getattr(policy, "budget", None)
            if budget is None:
                raise ValueError(f"budget is None and policy {policy!r:.80} has no budget: pass "
                                 "budget= (tokens for the history's context)")
        self.policy = policy
        self.budget = require_int("budget", budget, minimum=1)
        if factory is not None and not isinstance(factory, MessageFactory):
            raise TypeError(f"factory must be a MessageFactory, got {factory!r:.80}")
        if factory is None:  # a TunedPolicy knows how its budget was counted: count the same way
            make = getattr(policy, "message_factory", None)
            factory = make(id_prefix="agents-") if callable(make) else \
                MessageFactory(id_prefix="agents-")
        self.factory = factory
        self._seen: dict[str, list[Message]] = {}
        self._last: tuple[tuple[str, ...], str] | None = None
        self.last_context: Context | None = None

    def history_messages(self, items: Sequence[Any]) -> list[Message]:
        """``items`` as Messages, each made once and then remembered (see the class)."""
        occurrence: dict[str, int] = {}
        out = []
        for start, group in _groups(items):
            keys = [_key(item, f"items[{start + j}]") for j, item in enumerate(group)]
            key = "\n".join(keys)
            n = occurrence.get(key, 0)
            occurrence[key] = n + 1
            made = self._seen.setdefault(key, [])
            if n == len(made):  # first time this item (or this repeat of it) is seen
                made.append(_message(self.factory, start, group, keys))
            out.append(made[n])
        return out

    def model_input(self, items: Sequence[Any]) -> list[dict[str, Any]]:
        """What the model gets instead of ``items``: the policy's context of the history, then
        this turn's items unchanged. No user message: nothing to rank by, ``items`` as they are."""
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"items must be a list of SDK input items, got "
                            f"{type(items).__name__}")
        start = _latest_user(items)
        if start is None:
            return list(items)
        query = _text(items[start].get("content"), f"items[{start}]")
        history = self.history_messages(items[:start])
        request = (tuple([m.id for m in history]), query)
        # the model calls after a tool result within one turn ask the same: answer as before
        if request != self._last or self.last_context is None:
            self.last_context = self.policy.build_context(history, query, self.budget)
            self._last = request
        context = self.last_context
        return context_to_items(context) + list(items[start:])

    def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        return ModelInputData(input=self.model_input(model_data.input),
                              instructions=model_data.instructions)

    def __repr__(self) -> str:
        name = getattr(self.policy, "name", self.policy)
        return f"TunedContextFilter({name!r}, budget={self.budget})"
