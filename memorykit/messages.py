"""The message record every memory in the toolkit stores.

A ``Message`` is immutable and carries its token counts, computed once when a
``MessageFactory`` creates it. A tool call (``ToolCall``: id, function name, JSON
arguments) and its results are linked by call id, so buffers can evict a call
together with its results and never leave half of the pair behind; the name and
arguments are billed and sent as the chat API's ``tool_calls``. ``validate_wire``
checks that a request's order is one the API accepts. Summaries are messages
too: ``sources`` names the original messages they stand for, so provenance
survives summarization.
Taught in ``notebooks/01_tokens_and_budgets.ipynb``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from collections.abc import Sequence
from typing import Any, Literal, Mapping

from memorykit._validate import require_int, require_str
from memorykit.clock import Clock, StepClock, TurnClock, time_basis
from memorykit.tokens import ChatFormat, TokenCounter, Tokenizer, role_tokens

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
_ROLE_SET = frozenset(ROLES)

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class OpenAIMessageError(TypeError, ValueError):
    """A chat message in the OpenAI shape that a memory cannot hold as it is.

    Both a TypeError and a ValueError, so code that catches either (as for ``factory.message``)
    catches it. ``field`` is the path of the field at fault (``tool_calls[0].function.arguments``,
    empty for the message as a whole); the text names it and the value."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call an assistant message issues, as the chat API carries it.

    Buffers pair a call with its ``tool`` result by ``id`` alone; the name and arguments are
    what the model wrote, sent back to it on every later request and billed there.
    """

    id: str
    """Unique within a conversation; the ``tool`` message answering it names it in
    ``tool_call_id``."""
    name: str
    """The function called: 1 to 64 letters, digits, ``_`` or ``-`` (the chat API's rule)."""
    arguments: str = "{}"
    """The arguments as JSON object text, exactly as the API carries them."""

    def __post_init__(self) -> None:
        if type(self.id) is not str or not self.id:
            raise ValueError(f"tool call id must be a non-empty str, got {self.id!r}")
        if type(self.name) is not str or not _FUNCTION_NAME.fullmatch(self.name):
            raise ValueError("tool call name must be 1-64 letters, digits, _ or -, "
                             f"got {self.name!r}")
        if type(self.arguments) is not str:
            raise TypeError(f"tool call arguments must be JSON text (a str), got {self.arguments!r}")
        try:
            parsed = json.loads(self.arguments)
        except json.JSONDecodeError as exc:
            raise ValueError(f"tool call arguments must be a JSON object, got {self.arguments!r} "
                             f"({exc.msg})") from None
        if not isinstance(parsed, dict):
            raise ValueError(f"tool call arguments must be a JSON object, got {self.arguments!r}")

    def to_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


def check_importance(value: Any, name: str = "importance") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number in [0, 1], got {value!r}")
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return float(value)


@dataclass(slots=True)
class Message:
    """One chat message as a memory sees it.

    Treat a message as a value: never assign to its fields. Buffers index messages
    by importance and time, so a change must go through the buffer (for example
    ``buffer.set_importance(id, value)``), which replaces the record. The class is
    not frozen only because frozen dataclasses cost 2.5 us more per message, and
    this record is created on every buffer's hot path.
    """

    id: str
    """Unique within a conversation; evictions and provenance refer to it."""
    role: Role
    content: str
    content_tokens: int
    """Tokens of ``content`` alone."""
    billed_tokens: int
    """Tokens the chat API bills for this message: content plus framing."""
    importance: float = 1.0
    """In [0, 1]; importance-based policies evict the lowest first."""
    created_at: float = 0.0
    """Seconds on the memory's clock when the message was created."""
    turn: int = 0
    """The conversation turn (one user message opens a turn)."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """Free annotations (topic, planted fact ids, ...); read-only."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The calls an assistant message issues; each needs a ``tool`` reply."""
    tool_call_id: str | None = None
    """For a ``tool`` message: the call id it answers."""
    sources: tuple[str, ...] = ()
    """For a summary: ids of the messages it stands for (originals, or, in a summary buffer's
    chain, the earlier summary it replaced: ``SummaryBuffer.originals`` resolves those)."""
    summary_depth: int = 0
    """0 for an original message, 1 for a summary, 2 for a summary of summaries, ..."""
    pinned: bool = field(init=False, repr=False, compare=False)
    """A system instruction (role system, not a summary): never evicted, forgotten or
    recalled. The one statement of the rule; computed once here because buffers read it
    for every candidate of every eviction."""
    tool_call_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The ids of ``tool_calls``: what buffers pair results by, computed once here."""

    def __post_init__(self) -> None:
        # Inline checks: this runs for every message on the hot path of every buffer.
        # (Fields are read into locals once: slot reads are not free at this rate.)
        mid, role, content_tokens, billed = self.id, self.role, self.content_tokens, self.billed_tokens
        if type(mid) is not str or not mid:
            raise ValueError(f"id must be a non-empty str, got {mid!r}")
        if role not in _ROLE_SET:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if type(self.content) is not str:
            raise TypeError(
                f"content must be a str, got {self.content!r} ({type(self.content).__name__})"
            )
        if type(content_tokens) is not int or content_tokens < 0:
            raise ValueError(f"content_tokens must be an int >= 0, got {content_tokens!r}")
        if type(billed) is not int or billed < content_tokens:
            raise ValueError(
                f"billed_tokens must be an int >= content_tokens ({content_tokens}), "
                f"got {billed!r}"
            )
        imp = self.importance
        if type(imp) is not float or not 0.0 <= imp <= 1.0:
            self.importance = check_importance(imp)
        created = self.created_at
        # x - x == 0.0 exactly for finite floats; NaN and inf give NaN (one float op)
        if type(created) is not float or created - created != 0.0:
            self.created_at = _check_created_at(created)
        turn = self.turn
        if type(turn) is not int or turn < 0:
            raise ValueError(f"turn must be an int >= 0, got {turn!r}")
        depth = self.summary_depth
        if type(depth) is not int or depth < 0:
            raise ValueError(f"summary_depth must be an int >= 0, got {depth!r}")
        calls, sources = self.tool_calls, self.sources
        if calls or sources or type(calls) is not tuple or type(sources) is not tuple:
            self.tool_calls = calls = _tool_calls(calls)
            self.sources = _str_tuple("sources", sources)
        self.tool_call_ids = tuple([c.id for c in calls]) if calls else ()
        if depth and not self.sources:
            # a summary without sources would drop the ids it stands for from provenance
            raise ValueError(f"a summary (summary_depth={depth}) needs the ids it stands for in "
                             "sources, got none")
        tool_call_id = self.tool_call_id
        if role == "tool":
            if not tool_call_id:
                raise ValueError(f"a tool message needs tool_call_id, got {tool_call_id!r}")
        elif tool_call_id is not None:
            raise ValueError(f"only tool messages answer calls, got role {role!r}")
        if self.tool_calls and role != "assistant":
            raise ValueError(f"only assistant messages issue tool_calls, got role {role!r}")
        if type(self.metadata) is not MappingProxyType:
            self.metadata = MappingProxyType(dict(self.metadata))
        self.pinned = role == "system" and not self.summary_depth

    @property
    def is_summary(self) -> bool:
        return self.summary_depth > 0

    @property
    def covers(self) -> tuple[str, ...]:
        """The message ids this message stands for: itself, or a summary's sources (which a
        buffer keeping a summary chain resolves to originals: ``MessageBuffer.originals``)."""
        return self.sources if self.summary_depth else (self.id,)

    def with_importance(self, importance: float) -> Message:
        return replace(self, importance=check_importance(importance))

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through the constructor, so a pickled or JSON state is checked like new input;
        # metadata travels as a dict (a read-only mapping proxy cannot be pickled).
        return (Message, (self.id, self.role, self.content, self.content_tokens,
                          self.billed_tokens, self.importance, self.created_at, self.turn,
                          dict(self.metadata), self.tool_calls, self.tool_call_id, self.sources,
                          self.summary_depth))

    def to_openai(self) -> dict[str, Any]:
        """The message as the chat API takes it: a call with its id, type, function name and
        arguments; a result with the ``tool_call_id`` it answers."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        elif self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class MessageFactory:
    """Makes messages with ids, turns, times and token counts, or from the openai client's.

    Each content is tokenized exactly once, here; buffers only add the numbers.
    The clock is read once per message. It defaults to a ``StepClock`` at 0 (the
    simulated basis, ``memorykit.clock``): messages stand still in time until the
    caller moves the clock. On a ``TurnClock`` the factory starts the clock's next
    turn at each new user turn, so every message of turn n is stamped ``n`` steps in.
    ``from_openai(message)`` takes a chat message as the ``openai`` client returns it or a
    log stores it (tool calls included), so an agent feeds a memory what it got.
    """

    def __init__(
        self,
        counter: TokenCounter | None = None,
        *,
        clock: Clock | None = None,
        chat_format: ChatFormat = ChatFormat(),
        id_prefix: str = "m",
    ) -> None:
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.clock: Clock = clock if clock is not None else StepClock()
        self.chat_format = chat_format
        self.id_prefix = require_str("id_prefix", id_prefix)
        self._next = 0
        self.turn = 0
        # Framing cost depends only on the role: work it out once, not per message.
        self._overhead = {
            role: chat_format.message_overhead(role_tokens(self.counter, role)) for role in ROLES
        }
        # A plain Tokenizer is counted through its encoder directly (same number, one call
        # less per message); any other counter, or a counter swapped in later, goes
        # through counter.count.
        self._fast_counter = self.counter if type(self.counter) is Tokenizer else None

    @property
    def time_basis(self) -> str:
        """The basis of the times this factory stamps ("simulated" by default; ``memorykit.clock``)."""
        return time_basis(self.clock)

    def __repr__(self) -> str:
        return f"MessageFactory(turn={self.turn}, clock={self.clock!r}, time_basis={self.time_basis!r})"

    def new_id(self) -> str:
        self._next += 1
        # Same text as f"{prefix}{n:06d}" (n > 0), at a third of the cost.
        return self.id_prefix + str(self._next).zfill(6)

    def message(
        self,
        role: str,
        content: str,
        *,
        importance: float = 1.0,
        metadata: Mapping[str, Any] | None = None,
        tool_calls: tuple[ToolCall, ...] = (),
        tool_call_id: str | None = None,
        sources: tuple[str, ...] = (),
        summary_depth: int = 0,
        created_at: float | None = None,
        turn: int | None = None,
        id: str | None = None,
    ) -> Message:
        overhead = self._overhead.get(role)
        if overhead is None:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        if type(content) is not str:
            raise TypeError(f"content must be a str, got {content!r} ({type(content).__name__})")
        if turn is None:
            if role == "user" and not summary_depth:
                self.turn += 1
                # The factory is where a user turn begins, so it is what moves a per-turn clock.
                if isinstance(self.clock, TurnClock):
                    self.clock.begin_turn()
            turn = self.turn
        counter = self.counter
        if counter is self._fast_counter:
            content_tokens = len(counter._encode(content))  # type: ignore[union-attr]
        else:
            content_tokens = counter.count(content)
        if tool_calls:
            tool_calls = _tool_calls(tool_calls)
            overhead += sum(self.chat_format.tool_call_tokens(counter, c.name, c.arguments)
                            for c in tool_calls)
        if id is None:
            self._next = n = self._next + 1
            id = self.id_prefix + str(n).zfill(6)
        return Message(
            id,
            role,  # type: ignore[arg-type]
            content,
            content_tokens,
            content_tokens + overhead,
            importance,
            self.clock.now() if created_at is None else created_at,
            turn,
            _EMPTY if metadata is None else metadata,
            tool_calls,
            tool_call_id,
            sources if type(sources) is tuple else tuple(sources),
            summary_depth,
        )

    def system(self, content: str, **kw: Any) -> Message:
        return self.message("system", content, **kw)

    def user(self, content: str, **kw: Any) -> Message:
        return self.message("user", content, **kw)

    def assistant(self, content: str, **kw: Any) -> Message:
        return self.message("assistant", content, **kw)

    def tool(self, content: str, *, call_id: str, **kw: Any) -> Message:
        return self.message("tool", content, tool_call_id=call_id, **kw)

    def from_openai(self, message: Any, *, omit_non_text: bool = False,
                    metadata: Mapping[str, Any] | None = None, **kw: Any) -> Message:
        """A chat message as the ``openai`` client returns it or a log stores it, as a Message.

        ``message``: a dict, or the client's ``ChatCompletionMessage`` (anything with pydantic's
        ``model_dump``); its ``tool_calls`` items likewise. Read: ``role`` (``developer`` is
        ``system``, the original kept as ``metadata["role"]``); ``content`` (a str, null for an
        assistant, or parts whose ``text``/``refusal`` parts are joined by newlines);
        ``tool_calls`` (``{"id", "type": "function", "function": {"name", "arguments"}}``);
        ``tool_call_id``; ``id`` (the message id unless ``id=`` is given). When an assistant's
        content is null, its ``refusal`` or ``audio.transcript`` is its content. Every other
        non-null field (``name``, ``refusal``, a server's own) is kept in ``metadata``, and
        ``audio`` as ``audio_id``; ``metadata=`` is laid over them. A part without text (an
        image, audio, a file) is refused unless ``omit_non_text``, which lists its type in
        ``metadata["omitted_parts"]``. The legacy ``function_call`` is refused: it has no id
        to pair a result with. Other keywords are ``message``'s.

        A method, not a free function: tokens, id, turn and time are the factory's. Raises
        ``OpenAIMessageError`` (a TypeError and a ValueError) naming the field and value.
        """
        mid, role, content, calls, call_id, meta = _openai_fields(message, omit_non_text)
        if metadata is not None:
            meta.update(metadata)
        kw.setdefault("id", mid)
        # metadata None, not {}, when there is nothing to keep: a chat log holds millions
        return self.message(role, content, tool_calls=calls, tool_call_id=call_id,
                            metadata=meta or None, **kw)

    def summary(
        self, content: str, covered: list[Message], *, cite_replaced: bool = False, **kw: Any
    ) -> Message:
        """A summary standing for ``covered`` (which may include earlier summaries).

        Its ``sources`` are the originals ``covered`` stand for (an earlier summary's sources
        taken over), or with ``cite_replaced`` the ids of ``covered`` themselves: an earlier
        summary is then cited by its id, so a summary of summaries of ... stays as short as
        one round, and whoever keeps the chain resolves it (``SummaryBuffer.originals``).
        """
        if not covered:
            raise ValueError("covered must name at least one message, got []")
        if type(cite_replaced) is not bool:
            raise TypeError(f"cite_replaced must be a bool, got {cite_replaced!r}")
        sources: list[str] = []
        for m in covered:
            if cite_replaced:
                sources.append(m.id)
            else:
                sources.extend(m.covers)
        depth = 1 + max(m.summary_depth for m in covered)
        kw.setdefault("turn", max(m.turn for m in covered))
        return self.message("system", content, sources=tuple(sources), summary_depth=depth, **kw)


def _check_created_at(value: Any) -> float:
    if type(value) is bool or not isinstance(value, (int, float)):
        raise TypeError(f"created_at must be a number of seconds, got {value!r} "
                        f"({type(value).__name__})")
    if not math.isfinite(value):
        raise ValueError(f"created_at must be finite, got {value!r}")
    return float(value)


def _str_tuple(name: str, value: Any) -> tuple[str, ...]:
    # one str would be read as its characters ("abc" -> three calls 'a', 'b', 'c')
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise TypeError(f"{name} must be a tuple of str, got {value!r}")
    for item in value:
        if type(item) is not str or not item:
            raise TypeError(f"{name} must hold non-empty str ids, got {item!r} in {value!r}")
    return tuple(value)


def _tool_calls(value: Any) -> tuple[ToolCall, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise TypeError(f"tool_calls must be a tuple of ToolCall, got {value!r}")
    ids: set[str] = set()
    calls = []
    for i, item in enumerate(value):
        if type(item) is not ToolCall:
            if not (isinstance(item, Mapping) or callable(getattr(item, "model_dump", None))):
                # a bare id names no function, and the chat API needs the name and arguments
                raise TypeError(f"tool_calls must hold ToolCall(id, name, arguments) records, "
                                f"got {item!r} in {value!r}")
            item = _openai_call(item, f"tool_calls[{i}]")  # as the openai client gives it
        if item.id in ids:
            raise ValueError(f"tool_calls issues call id {item.id!r} twice")
        ids.add(item.id)
        calls.append(item)
    return tuple(calls)


# ------------------------------------------------------------ OpenAI messages in
_READ = frozenset({"id", "role", "content", "tool_calls", "tool_call_id", "function_call",
                   "audio"})
"""Fields ``from_openai`` reads; every other non-null one is kept in metadata."""
_TEXT_PARTS = frozenset({"text", "refusal"})
"""Content parts with text, under a key of the type's name (an assistant's refusal is text)."""


def _plain(value: Any, field: str, what: str) -> Mapping[str, Any]:
    """``value`` as a mapping: a dict as it is, a pydantic model (the client's) dumped."""
    if type(value) is dict:  # the common case, first: typing's isinstance is slow per message
        return value
    if not isinstance(value, Mapping) and callable(getattr(value, "model_dump", None)):
        value = value.model_dump()
    if not isinstance(value, Mapping):
        problem = f"must be {what}, got {value!r:.80}"
        raise OpenAIMessageError(field, problem if field else "message " + problem)
    return value


def _openai_call(raw: Any, at: str) -> ToolCall:
    call = _plain(raw, at, "a tool call {id, type, function} (a dict or the client's object)")
    kind = call.get("type", "function")
    if kind != "function":  # a custom tool's call carries free text, not a function's JSON
        raise OpenAIMessageError(f"{at}.type", f"must be 'function', got {kind!r}")
    function = _plain(call.get("function"), f"{at}.function",
                      "an object with name and arguments")
    try:
        return ToolCall(call.get("id"), function.get("name"),  # type: ignore[arg-type]
                        function.get("arguments", "{}"))
    except (TypeError, ValueError) as exc:  # "tool call <field> must ...": name that field
        field = str(exc).split(" must", 1)[0].removeprefix("tool call ")
        raise OpenAIMessageError(f"{at}.{field}" if field == "id" else f"{at}.function.{field}",
                                 str(exc)) from None


def _openai_content(raw: Any, role: str, omit_non_text: bool, meta: dict[str, Any]) -> str:
    if isinstance(raw, str):
        return raw
    if raw is None and role == "assistant":
        return ""  # an assistant message that only calls tools (or said nothing)
    if not isinstance(raw, list):
        raise OpenAIMessageError("content", "must be a str, null (for an assistant) or a list "
                                 f"of content parts, got {raw!r:.80}")
    texts, omitted = [], []
    for i, part in enumerate(raw):
        if type(part) is not dict and not isinstance(part, Mapping) or \
                not isinstance(part.get("type"), str):
            raise OpenAIMessageError(f"content[{i}]", f"must be a content part with a type, "
                                     f"got {part!r:.80}")
        key = part["type"]
        if key not in _TEXT_PARTS:
            if not omit_non_text:
                raise OpenAIMessageError(f"content[{i}]", f"is a part of type {key!r}: "
                                         "a memory holds text (omit_non_text=True keeps the "
                                         "text parts and lists the others in metadata)")
            omitted.append(key)
        elif not isinstance(part.get(key), str):
            raise OpenAIMessageError(f"content[{i}].{key}", f"must be a str, got "
                                     f"{part.get(key)!r:.80}")
        else:
            texts.append(part[key])
    if omitted:
        meta["omitted_parts"] = tuple(omitted)
    return "\n".join(texts)


def _openai_fields(raw: Any, omit_non_text: bool) -> tuple[
        str | None, str, str, tuple[ToolCall, ...], str | None, dict[str, Any]]:
    """(id, role, content, tool calls, tool_call_id, metadata) of one OpenAI chat message."""
    m = _plain(raw, "", "a chat message (a dict, or the openai client's message object)")
    given = m.get("role")
    role = "system" if given == "developer" else given
    if not isinstance(role, str) or role not in _ROLE_SET:
        raise OpenAIMessageError("role", f"must be system, developer, user, assistant or tool, "
                                 f"got {given!r}")
    extra = m.keys() - _READ  # most messages have none: no dict walk for them
    meta = {k: m[k] for k in extra if m[k] not in (None, [], {})} if extra else {}
    if role != given:
        meta["role"] = given
    if m.get("function_call") is not None:
        raise OpenAIMessageError("function_call", "is the legacy function calling, whose call "
                                 "has no id to pair a result with: send tool_calls instead, got "
                                 f"{m['function_call']!r:.80}")
    content, refusal, audio = m.get("content"), m.get("refusal"), m.get("audio")
    if refusal is not None and not isinstance(refusal, str):
        raise OpenAIMessageError("refusal", f"must be a str, got {refusal!r:.80}")
    if audio is not None:  # a spoken reply: its transcript is its text, its id is kept
        audio = _plain(audio, "audio", "an object with id and transcript")
        meta["audio_id"] = audio.get("id")
        if not isinstance(audio.get("transcript"), str):
            raise OpenAIMessageError("audio.transcript", f"must be a str, got "
                                     f"{audio.get('transcript')!r:.80}")
    if content is None and role == "assistant":  # what the assistant said instead
        content = refusal if refusal is not None else audio and audio["transcript"]
    text = _openai_content(content, role, omit_non_text, meta)
    raw_calls = m.get("tool_calls")
    if raw_calls and role != "assistant":
        raise OpenAIMessageError("tool_calls", f"only assistant messages issue tool calls, got "
                                 f"role {role!r}")
    if raw_calls is not None and not isinstance(raw_calls, (list, tuple)):
        raise OpenAIMessageError("tool_calls", f"must be a list of tool calls, got "
                                 f"{raw_calls!r:.80}")
    calls = tuple(_openai_call(c, f"tool_calls[{i}]") for i, c in enumerate(raw_calls or ()))
    try:
        calls = _tool_calls(calls) if calls else ()
    except ValueError as exc:  # one call id issued twice
        raise OpenAIMessageError("tool_calls", str(exc)) from None
    call_id = m.get("tool_call_id")
    if role == "tool" and (not isinstance(call_id, str) or not call_id):
        raise OpenAIMessageError("tool_call_id", f"a tool result must name the call it answers, "
                                 f"got {call_id!r}")
    if role != "tool" and call_id is not None:
        raise OpenAIMessageError("tool_call_id", f"only tool messages answer calls, got role "
                                 f"{role!r} answering {call_id!r}")
    mid = m.get("id")
    if mid is not None and (not isinstance(mid, str) or not mid):
        raise OpenAIMessageError("id", f"must be a non-empty str, got {mid!r}")
    return mid, role, text, calls, call_id, meta


def check_history(history: Any) -> list[Message]:
    """``history`` as a list of ``Message`` records: a TypeError names the first item that is
    not one, a ValueError the first message id that comes twice."""
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise TypeError(f"history must be a sequence of Message, got {type(history).__name__}")
    seen: set[str] = set()
    for i, m in enumerate(history):
        if type(m) is not Message:
            raise TypeError(f"history[{i}] must be a Message, got {m!r}")
        if m.id in seen:
            raise ValueError(f"history holds message id {m.id!r} twice")
        seen.add(m.id)
    return list(history)



def validate_wire(messages: Any, *, system_first: bool = True) -> None:
    """Check that ``messages`` (OpenAI-style dicts) is a history the chat API accepts.

    The one history check every memory's output passes (the contract suites run it):

    * each message is a dict with a known role and str content;
    * ``system_first``: a request holding a system message opens with one, so recalled
      memories never come before the instructions;
    * an assistant message with ``tool_calls`` is followed directly by one ``tool`` result
      for each of its call ids (the API refuses anything else in between), and every
      ``tool`` result answers a call so issued: no orphan call, no orphan result.

    Shapes of the fields (a call's ``type``, ``function`` name and arguments) are the
    ``openai`` package's request types' concern; this checks what they cannot: the order.
    Raises a ValueError naming the index and the call id.
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of dicts, got {type(messages).__name__}")
    waiting: dict[str, int] = {}  # call id -> index of the assistant message that issued it
    issued: set[str] = set()
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise TypeError(f"messages[{i}] must be a dict, got {m!r}")
        role = m.get("role")
        if role not in _ROLE_SET:
            raise ValueError(f"messages[{i}] has role {role!r}; roles are {', '.join(ROLES)}")
        if not isinstance(m.get("content"), str):
            raise TypeError(f"messages[{i}]['content'] must be a str, got {m.get('content')!r}")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in waiting:
                reason = "answers it a second time" if call_id in issued else \
                    "has no call issued directly before it"
                raise ValueError(f"messages[{i}] is a tool result for call {call_id!r} that "
                                 f"{reason}")
            del waiting[call_id]
            continue
        if waiting:
            call_id, at = next(iter(waiting.items()))
            raise ValueError(f"messages[{at}] issues tool call {call_id!r} with no result: "
                             f"messages[{i}] (role {role!r}) comes before one")
        if role == "system" and system_first and i and messages[0].get("role") != "system":
            raise ValueError(f"messages[{i}] is a system message but messages[0] has role "
                             f"{messages[0].get('role')!r}: instructions must open the request")
        for call in m.get("tool_calls") or ():
            call_id = call.get("id") if isinstance(call, Mapping) else None
            if role != "assistant":
                raise ValueError(f"messages[{i}] (role {role!r}) issues tool calls; only "
                                 "assistant messages may")
            if call_id in issued:
                raise ValueError(f"messages[{i}] issues tool call id {call_id!r} a second time")
            issued.add(call_id)  # type: ignore[arg-type]
            waiting[call_id] = i  # type: ignore[index]
    if waiting:
        call_id, at = next(iter(waiting.items()))
        raise ValueError(f"messages[{at}] issues tool call {call_id!r} with no result: the "
                         "request ends before one")
