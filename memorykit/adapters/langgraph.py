"""A tuned memory policy as LangGraph's ``pre_model_hook``: the model sees the policy's context.

``memorykit_pre_model_hook(policy, budget)`` returns a hook for
``langgraph.prebuilt.create_react_agent(model, tools, prompt=..., pre_model_hook=hook)``. Before
every model call it reads the graph state's ``messages`` and returns
``{"llm_input_messages": [...]}``: LangGraph sends those to the model and leaves ``messages``, the
full history, untouched in the state (nothing is lost; the next turn sees everything again).
What the model gets, in order:

1. the agent's instructions in full: ``prompt=`` (LangGraph prepends it itself) and any
   ``SystemMessage`` at the head of the state's messages;
2. the policy's context for the history before the latest human message, within ``budget``
   tokens as memorykit counts them (``Context.tokens``): this is what ``memorykit tune`` measured;
3. the current turn in full: the latest human message and what followed it (the model's tool
   calls and their results within this turn), so a tool loop never loses its own results.

The query the policy ranks by is the latest human message's text. The budget bounds part 2
only: instructions and the current turn are sent in full beside it.

Messages are converted both ways without loss (``to_memorykit`` / ``from_memorykit``): text,
role, tool calls (ids, names, arguments as JSON text), tool results with their call ids, and
every other field a langchain message carries (id, name, additional_kwargs, response_metadata,
usage_metadata, a tool result's status and artifact, extra fields) kept in
``Message.metadata["langchain"]``. Ids: a message's langchain id when it has one (LangGraph's
``add_messages`` gives every state message a uuid), else ``"lc-<position>"`` from its index in
the state's message list (stable, since the state only grows). Refused, with a ValueError or
TypeError naming the value: content parts that are not text (images, audio, files), text
that is not valid Unicode (a lone surrogate), invalid tool calls, arguments that are not a JSON
object, chunks and message classes other than System/Human/AI/ToolMessage, duplicate ids.

On LangGraph's versions (read in langgraph 1.2.24 / langgraph-prebuilt 1.1.3 source):
``pre_model_hook`` itself is not deprecated, but ``create_react_agent`` is, with
``LangGraphDeprecatedSinceV10`` (removal expected in 2.0): "create_react_agent has been moved to
`langchain.agents`. Please update your import to `from langchain.agents import create_agent`."
LangChain v1's migration guide replaces pre-model hooks by middleware (``before_model``).
``create_agent`` lives in the ``langchain`` package, which this project does not install, so
that path is not tested here. Note that a ``before_model`` middleware updates the *state*: to
change only what the model sees while the state keeps everything (what ``llm_input_messages``
does here), the middleware to write would be a ``wrap_model_call`` that replaces the request's
messages with this hook's output (our reading of the docs, not verified against the package).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from memorykit._validate import require_int, unicode_problem
from memorykit.context import Context, ContextPolicy
from memorykit.messages import Message, MessageFactory, ToolCall
from memorykit.tokens import ChatFormat, Tokenizer

_ROLE_OF = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant",
            ToolMessage: "tool"}
_CLASS_OF = {role: cls for cls, role in _ROLE_OF.items()}
# Fields rebuilt from the memorykit Message itself; everything else travels in metadata.
_OWN_FIELDS = frozenset({"content", "type", "id", "tool_calls", "invalid_tool_calls",
                         "tool_call_id"})
_EMPTY_DEFAULTS: dict[str, Any] = {"additional_kwargs": {}, "response_metadata": {},
                                   "name": None, "usage_metadata": None, "artifact": None,
                                   "status": "success"}
MAX_POSITION = 10**9
"""No state holds a billion messages: a larger position or turn is a mistake, refused."""
METADATA_KEY = "langchain"
"""Where a converted message keeps its langchain fields: ``message.metadata["langchain"]``."""


def position_id(position: int) -> str:
    """The id of a message without a langchain id: its index in the state's message list."""
    return f"lc-{require_int('position', position, minimum=0, maximum=MAX_POSITION):06d}"


# ------------------------------------------------------------------------- conversion
def _text_of(content: Any, where: str) -> tuple[str, bool]:
    """The text of a langchain content, and whether it came as a list of parts.

    Parts are joined by newlines (as ``MessageFactory.from_openai`` does); a part that is not
    text is refused, naming its type."""
    if isinstance(content, str):
        return _unicode(content, where), False
    if not isinstance(content, list):
        raise TypeError(f"{where}: content must be a str or a list of text parts, "
                        f"got {content!r}")
    texts = []
    for i, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(
                part.get("text"), str):
            texts.append(part["text"])
        else:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise ValueError(f"{where}: content part {i} of type {kind!r} is not text; only "
                             f"text parts can be converted, got {part!r}")
    return _unicode("\n".join(texts), where), True


def _unicode(text: str, where: str) -> str:
    problem = unicode_problem(text)
    if problem:
        raise ValueError(f"{where}: content is {problem}")
    return text


def _tool_calls_of(message: AIMessage, where: str) -> tuple[ToolCall, ...]:
    if message.invalid_tool_calls:
        raise ValueError(f"{where}: invalid tool calls cannot be paired with results, got "
                         f"{message.invalid_tool_calls!r}")
    calls = []
    for call in message.tool_calls:
        args = call.get("args")
        if not isinstance(args, dict):
            raise ValueError(f"{where}: tool call arguments must be a dict, got {args!r}")
        try:
            text = json.dumps(args)  # as ChatOpenAI writes them on the wire
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: tool call arguments must be JSON data, got {args!r} "
                             f"({exc})") from None
        if json.loads(text) != args:  # a tuple or a non-str key would come back changed
            raise ValueError(f"{where}: tool call arguments do not survive JSON unchanged, "
                             f"got {args!r}")
        if call.get("type", "tool_call") != "tool_call":
            raise ValueError(f"{where}: tool call type must be 'tool_call', got {call!r}")
        try:  # ToolCall checks the id and the name; say which message and call they were in
            calls.append(ToolCall(call.get("id"), call.get("name"), text))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}, in tool call {call!r}") from None
    return tuple(calls)


def to_memorykit(messages: Sequence[BaseMessage], factory: MessageFactory | None = None,
                 ) -> list[Message]:
    """Langchain messages as memorykit Messages, losing nothing (``from_memorykit`` undoes it).

    ``factory`` counts the tokens (default: a ``MessageFactory`` on cl100k_base). Turn numbers
    count the human messages so far; ids are langchain's or ``position_id(i)``."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of langchain messages, got {messages!r}")
    factory = factory if factory is not None else MessageFactory()
    out: list[Message] = []
    seen: set[str] = set()
    turn = 0
    for position, message in enumerate(messages):
        turn += type(message) is HumanMessage
        converted = message_to_memorykit(message, position, factory, turn=turn)
        if converted.id in seen:
            raise ValueError(f"messages[{position}]: id {converted.id!r} appears twice; a memory "
                             "needs one id per message")
        seen.add(converted.id)
        out.append(converted)
    return out


def message_to_memorykit(message: BaseMessage, position: int, factory: MessageFactory,
                         *, turn: int = 0) -> Message:
    """One langchain message as a memorykit Message (see the module docstring for what is kept)."""
    require_int("position", position, minimum=0, maximum=MAX_POSITION)
    require_int("turn", turn, minimum=0, maximum=MAX_POSITION)
    role = _ROLE_OF.get(type(message))  # exact classes: a chunk is not a message
    where = f"messages[{position}]"
    if role is None:
        raise TypeError(f"{where}: only SystemMessage, HumanMessage, AIMessage and ToolMessage "
                        f"can be converted, got {type(message).__name__}: {message!r}")
    text, as_parts = _text_of(message.content, where)
    kept: dict[str, Any] = {"id": message.id}
    if as_parts:
        kept["content"] = message.content
    for name in type(message).model_fields:
        if name not in _OWN_FIELDS:
            value = getattr(message, name)
            if name not in _EMPTY_DEFAULTS or value != _EMPTY_DEFAULTS[name]:
                kept[name] = value
    if message.model_extra:
        kept["extra"] = dict(message.model_extra)
    mid = message.id if isinstance(message.id, str) and message.id else position_id(position)
    calls = _tool_calls_of(message, where) if isinstance(message, AIMessage) else ()
    call_id = message.tool_call_id if isinstance(message, ToolMessage) else None
    return factory.message(role, text, tool_calls=calls, tool_call_id=call_id, id=mid,
                           turn=turn, created_at=0.0, metadata={METADATA_KEY: kept})


def from_memorykit(messages: Sequence[Message]) -> list[BaseMessage]:
    """Memorykit Messages as langchain messages: the inverse of ``to_memorykit``.

    A message that came from langchain gets every field back; any other (one memorykit made,
    a summary) becomes the message class of its role with its id and content."""
    return [message_from_memorykit(m) for m in messages]


def message_from_memorykit(message: Message) -> BaseMessage:
    if not isinstance(message, Message):
        raise TypeError(f"message must be a memorykit Message, got {message!r}")
    kept = dict(message.metadata.get(METADATA_KEY) or {})
    fields: dict[str, Any] = {"content": kept.pop("content", message.content),
                              "id": kept.pop("id", message.id)}
    fields.update(kept.pop("extra", {}))
    fields.update(kept)
    if message.tool_calls:
        fields["tool_calls"] = [{"name": c.name, "args": json.loads(c.arguments), "id": c.id,
                                 "type": "tool_call"} for c in message.tool_calls]
    if message.tool_call_id is not None:
        fields["tool_call_id"] = message.tool_call_id
    return _CLASS_OF[message.role](**fields)


def from_openai_dict(message: dict[str, Any], *, id: str | None = None) -> BaseMessage:
    """A chat-completions message (as ``Context.to_openai`` writes it) as a langchain message."""
    role, content = message.get("role"), message.get("content")
    if role not in _CLASS_OF or not isinstance(content, str):
        raise ValueError(f"message must have a role among {', '.join(_CLASS_OF)} and str "
                         f"content, got {message!r}")
    if role == "tool":
        return ToolMessage(content=content, tool_call_id=message["tool_call_id"], id=id)
    if role == "assistant" and message.get("tool_calls"):
        calls = [{"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"]),
                  "id": c["id"], "type": "tool_call"} for c in message["tool_calls"]]
        return AIMessage(content=content, tool_calls=calls, id=id)
    return _CLASS_OF[role](content=content, id=id)


def context_to_langchain(context: Context, history: Sequence[Message],
                         originals: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The context's messages (``context.to_openai()``) as langchain messages.

    An item that is one history message sent as it was comes back as the original langchain
    message (its name and other fields travel as LangGraph would have sent them); anything
    else (a summary, a tool call whose result the policy left out, sent as text) is built from
    its chat-completions dict. ``to_openai`` writes one dict per item, in order."""
    by_id = {m.id: (m, lc) for m, lc in zip(history, originals)}
    out: list[BaseMessage] = []
    for item, wire in zip(context.items, context.to_openai()):
        found = by_id.get(item.sources[0]) if len(item.sources) == 1 else None
        if found is not None and item.kind == "message" and wire == found[0].to_openai():
            out.append(found[1])
        else:
            # one source names the message it came from; a summary's first source would not
            out.append(from_openai_dict(wire, id=item.sources[0] if len(item.sources) == 1
                                        else None))
    return out


# ------------------------------------------------------------------------- the hook
class MemorykitPreModelHook:
    """LangGraph ``pre_model_hook``: state -> ``{"llm_input_messages": instructions + the
    policy's context of the history + the current turn}`` (see the module docstring).

    ``last_context`` is the policy's ``Context`` of the latest call (for inspection and tests);
    the model calls of one turn (before and after its tool results) share it.
    Converted messages are cached by id for the current conversation, so a turn converts and
    counts only its new messages; a cached message is reused only while it equals the state's.
    """

    def __init__(self, policy: ContextPolicy, budget: int | None = None, *,
                 tokenizer: Tokenizer | None = None) -> None:
        if not callable(getattr(policy, "build_context", None)):
            raise TypeError(f"policy must be a ContextPolicy (with build_context), got {policy!r}")
        if budget is None:
            budget = getattr(policy, "budget", None)
            if budget is None:
                raise ValueError(f"budget is None and policy {policy!r} has no budget: pass "
                                 "budget=, or a TunedPolicy that carries one")
        require_int("budget", budget, minimum=1)
        self.policy = policy
        self.budget = budget
        encoding = getattr(policy, "encoding", None)
        if tokenizer is None:
            tokenizer = Tokenizer(encoding) if isinstance(encoding, str) else Tokenizer()
        chat_format = getattr(policy, "chat_format", None)
        self.factory = MessageFactory(tokenizer, chat_format=chat_format
                                      if isinstance(chat_format, ChatFormat) else ChatFormat())
        self.last_context: Context | None = None
        self.contexts_built = 0
        """How many contexts the policy built: one per turn, however many tool calls."""
        self._cache: dict[str, tuple[BaseMessage, Message]] = {}
        self._first_fresh = 0
        self._turn_key: tuple[Any, ...] | None = None
        self._picked: list[BaseMessage] = []

    def __repr__(self) -> str:
        return f"MemorykitPreModelHook(policy={self.policy!r}, budget={self.budget})"

    def convert(self, messages: Sequence[BaseMessage]) -> list[Message]:
        """``to_memorykit(messages)``, reusing this conversation's earlier conversions."""
        out: list[Message] = []
        cache: dict[str, tuple[BaseMessage, Message]] = {}
        turn = 0
        self._first_fresh = len(messages)  # the first position not taken from the cache
        for position, lc in enumerate(messages):
            turn += type(lc) is HumanMessage
            mid = lc.id if isinstance(lc.id, str) and lc.id else position_id(position)
            if mid in cache:
                raise ValueError(f"messages[{position}]: id {mid!r} appears twice; a memory "
                                 "needs one id per message")
            hit = self._cache.get(mid)
            if hit is None or not (hit[0] is lc or hit[0] == lc) or hit[1].turn != turn:
                hit = (lc, message_to_memorykit(lc, position, self.factory, turn=turn))
                self._first_fresh = min(self._first_fresh, position)
            cache[mid] = hit
            out.append(hit[1])
        self._cache = cache  # only the current conversation: the cache never outgrows the state
        return out

    def __call__(self, state: Any) -> dict[str, list[BaseMessage]]:
        messages = state.get("messages") if isinstance(state, dict) else getattr(
            state, "messages", None)
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
            raise TypeError(f"state must hold a list of messages under 'messages', got {state!r}")
        converted = self.convert(messages)
        head = 0  # leading system messages: the instructions, sent in full
        while head < len(messages) and type(messages[head]) is SystemMessage:
            head += 1
        last_human = max((i for i in range(head, len(messages))
                          if type(messages[i]) is HumanMessage), default=None)
        if last_human is None:
            raise ValueError("the state holds no HumanMessage after the instructions: the "
                             "policy ranks the history by the latest human message, got "
                             f"{[type(m).__name__ for m in messages]}")
        query = converted[last_human].content
        key = (head, last_human, converted[last_human].id, query)
        if key != self._turn_key or self._first_fresh < last_human:
            # A new turn (or an edited history): the policy picks again. Within a turn (the
            # calls before and after a tool result) history and query are the same, and so is
            # the context: it is built once per turn.
            history = converted[head:last_human]
            self.last_context = self.policy.build_context(history, query, self.budget)
            self.contexts_built += 1
            self._picked = context_to_langchain(self.last_context, history,
                                                messages[head:last_human])
            self._turn_key = key
        return {"llm_input_messages": [*messages[:head], *self._picked, *messages[last_human:]]}


def memorykit_pre_model_hook(policy: ContextPolicy, budget: int | None = None, *,
                             tokenizer: Tokenizer | None = None) -> MemorykitPreModelHook:
    """A ``pre_model_hook`` for ``create_react_agent`` giving the model ``policy``'s context.

    ``policy``: any ``ContextPolicy`` (a ``TunedPolicy`` from ``memorykit.load_policy``
    included). ``budget``: the history context's token budget; None takes ``policy.budget``
    and refuses a policy without one. Instructions and the current turn are sent in full
    beside it. ``tokenizer`` counts tokens (default: the policy's ``encoding``, else
    cl100k_base)."""
    return MemorykitPreModelHook(policy, budget, tokenizer=tokenizer)


__all__ = ["MAX_POSITION", "METADATA_KEY", "MemorykitPreModelHook", "context_to_langchain",
           "from_memorykit", "from_openai_dict", "memorykit_pre_model_hook", "message_from_memorykit",
           "message_to_memorykit", "position_id", "to_memorykit"]
