"""Chat models: a list of chat messages in, one reply out.

``ChatModel`` is the small protocol the LLM-backed components call:
``complete(messages, *, max_tokens=None) -> str`` plus a ``name``. Two
implementations ship:

* ``OpenAIChatModel`` calls ``client.chat.completions.create`` on any
  OpenAI-compatible endpoint (temperature 0 by default). Every failure --
  timeout, connection error, HTTP error, a reply that is not the expected
  JSON, no choices, empty content -- becomes one ``LLMCallFailed`` carrying
  the original exception, so callers handle one error type.
* ``ScriptedChatModel`` is **not a language model**. It replies from a script
  and from pattern rules, deterministically and offline, and says so: its
  ``name`` starts with "scripted" and ``is_scripted`` is True. It is the honest
  counterpart of the "MockLLM" that research reports benchmark with: useful
  to test plumbing and to make notebooks reproducible, never evidence of what
  a real model would do.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from memorykit._validate import require_between, require_int, require_optional_int, require_str
from memorykit.llm.client import (
    DeadlinePassed,
    LLMCallFailed,
    call_deadline,
    classify_error,
    client_base_url,
    describe_error,
    iterate_with_deadline,
    require_openai,
    resolve_client,
    run_with_deadline,
)
from memorykit.messages import validate_wire

ChatMessages = list[dict[str, Any]]


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers a list of ``{"role", "content"}`` dicts with one string."""

    name: str

    def complete(self, messages: ChatMessages, *, max_tokens: int | None = None) -> str: ...


def check_chat_messages(messages: Any) -> ChatMessages:
    """A copy of ``messages`` once it is a request the chat API accepts, checked before the network.

    A non-empty list that passes ``memorykit.messages.validate_wire``, the one history validator
    (dicts with a known role and str content, the system message first, each tool result right
    after the call that issued it, no orphan): a request the API would reject with a 400 fails
    here, naming the message, instead of costing a round trip.
    """
    validate_wire(messages)
    if not messages:
        raise ValueError("messages must not be empty, got []")
    return [dict(m) for m in messages]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens the endpoint reported for one call (None when it reported none)."""

    prompt_tokens: int | None
    completion_tokens: int | None

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible endpoint.

    ``client`` is an ``openai.OpenAI``; without one, ``make_client`` builds it
    from OPENAI_BASE_URL / OPENAI_API_KEY (raising ``LLMNotConfigured`` if no
    key). ``timeout`` (seconds per attempt) and ``max_retries`` override the
    client's own settings when given; when this model builds the client they
    default to ``make_client``'s (30 s, 2 retries). ``token_limit_param`` names
    the request field that carries ``max_tokens``: "max_tokens" (accepted by
    most OpenAI-compatible servers) or "max_completion_tokens" (required by
    OpenAI's reasoning models).

    After each successful call ``last_usage`` and ``last_finish_reason`` hold
    what the endpoint reported; ``calls`` counts calls (not HTTP attempts).
    """

    is_scripted = False

    def __init__(
        self,
        model: str,
        client: Any = None,
        *,
        timeout: float | None = None,
        max_retries: int | None = None,
        temperature: float = 0.0,
        token_limit_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
    ) -> None:
        self.model = require_str("model", model, non_empty=True)
        self.temperature = require_between("temperature", temperature, 0.0, 2.0)  # OpenAI's range
        if token_limit_param not in ("max_tokens", "max_completion_tokens"):
            raise ValueError(
                "token_limit_param must be 'max_tokens' or 'max_completion_tokens', "
                f"got {token_limit_param!r}"
            )
        self.token_limit_param = token_limit_param
        client = resolve_client(client, timeout=timeout, max_retries=max_retries, needs="chat")
        self.client = client
        self.name = f"openai:{self.model}"
        self.calls = 0
        self.last_usage: Usage | None = None
        self.last_finish_reason: str | None = None

    def _request(self, messages: Any, max_tokens: int | None, **extra: Any) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": check_chat_messages(messages),
            "temperature": self.temperature,
        }
        if require_optional_int("max_tokens", max_tokens, minimum=1) is not None:
            kwargs[self.token_limit_param] = max_tokens
        kwargs.update(extra)
        return kwargs

    def _fail(self, exc: BaseException) -> LLMCallFailed:
        kind = classify_error(exc)
        return LLMCallFailed(
            f"{self.name} at {client_base_url(self.client)}: request failed ({kind}): "
            f"{describe_error(exc)}",
            kind=kind,
            cause=exc,
        )

    def complete(self, messages: ChatMessages, *, max_tokens: int | None = None) -> str:
        """The reply text; raises ``LLMCallFailed`` on any failure, including an empty reply."""
        kwargs = self._request(messages, max_tokens)
        openai = require_openai()
        self.calls += 1
        self.last_usage, self.last_finish_reason = None, None  # never the previous call's
        try:
            response = run_with_deadline(partial(self.client.chat.completions.create, **kwargs),
                                         call_deadline(self.client))
        except (openai.OpenAIError, ValueError, TypeError, KeyError, DeadlinePassed) as exc:
            raise self._fail(exc) from exc
        if isinstance(response, (str, bytes)):  # openai hands back a body that is not JSON
            raise LLMCallFailed(f"{self.name} at {client_base_url(self.client)}: malformed "
                                f"reply: {_not_json(response)}", kind="malformed reply")
        choices = getattr(response, "choices", None)
        if not choices:
            raise LLMCallFailed(
                f"{self.name}: the reply has no choices (got {_short(response)})",
                kind="empty reply",
            )
        choice = choices[0]
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str) or not content.strip():
            raise LLMCallFailed(
                f"{self.name}: the reply's content is empty (finish_reason="
                f"{getattr(choice, 'finish_reason', None)!r}, content={content!r})",
                kind="empty reply",
            )
        usage = getattr(response, "usage", None)
        self.last_usage = Usage(
            getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
        )
        self.last_finish_reason = getattr(choice, "finish_reason", None)
        return content

    def stream(self, messages: ChatMessages, *, max_tokens: int | None = None) -> Iterator[str]:
        """Yield the reply in pieces as the endpoint streams it (server-sent events).

        Raises ``LLMCallFailed`` on failure, also part-way through; an empty
        stream raises ``LLMCallFailed(kind="empty reply")`` at its end, and one that stops
        without a finish reason (a dropped connection) ``LLMCallFailed(kind="cut off")``.
        """
        kwargs = self._request(messages, max_tokens, stream=True)
        openai = require_openai()
        self.calls += 1
        self.last_usage, self.last_finish_reason = None, None  # never the previous call's
        produced = False
        try:
            for chunk in iterate_with_deadline(partial(self._open_stream, kwargs),
                                               call_deadline(self.client)):
                for choice in getattr(chunk, "choices", None) or ():
                    piece = getattr(getattr(choice, "delta", None), "content", None)
                    if choice.finish_reason is not None:
                        self.last_finish_reason = choice.finish_reason
                    if piece:
                        produced = True
                        yield piece
        except (openai.OpenAIError, ValueError, TypeError, KeyError, DeadlinePassed) as exc:
            raise self._fail(exc) from exc
        if not produced:
            raise LLMCallFailed(f"{self.name}: the streamed reply is empty", kind="empty reply")
        if self.last_finish_reason is None:
            # a complete stream ends with a finish reason; without one the connection was cut
            raise LLMCallFailed(f"{self.name}: the stream ended before the reply did (no "
                                "finish_reason): the pieces so far are not a whole reply",
                                kind="cut off")

    def _open_stream(self, kwargs: dict[str, Any]) -> Any:
        stream = self.client.chat.completions.create(**kwargs)
        headers = getattr(getattr(stream, "response", None), "headers", None) or {}
        if "html" in str(headers.get("content-type", "")).lower():  # no event would ever come
            stream.close()
            raise ValueError(f"the reply is {_not_json('<html>')}")
        return stream

    def __repr__(self) -> str:
        return (
            f"OpenAIChatModel(model={self.model!r}, base_url={client_base_url(self.client)!r}, "
            f"temperature={self.temperature:g})"
        )


def _not_json(body: str | bytes) -> str:
    """What a reply that is not JSON looks like, for the error message."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    head = text.lstrip()[:200].lower()
    if head.startswith(("<!doctype html", "<html")) or "<html" in head:
        return ("an HTML page, not JSON: is base_url an OpenAI-compatible API (it usually "
                "ends in /v1)?")
    return f"not JSON (starts {_short(text.lstrip()[:80])})"


def resolve_chat_model(chat_model: Any = None, client: Any = None, model: str | None = None) -> Any:
    """The chat model a component talks to: ``chat_model`` as given, or an ``OpenAIChatModel``
    for ``model`` (over ``client``, else a default OpenAI client); never both ways at once."""
    if chat_model is None:
        if model is None:
            raise ValueError("give a chat_model, or a model name (and optionally a client)")
        chat_model = OpenAIChatModel(model, client)
    elif client is not None or model is not None:
        raise ValueError("give either chat_model or client/model, not both")
    if not callable(getattr(chat_model, "complete", None)):
        raise TypeError(f"chat_model must have a complete(messages) method, got {chat_model!r}")
    return chat_model


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


Reply = str | Callable[[ChatMessages], str]

_FIELD = re.compile(r"\{(\d+|last|n)\}")


def _fill(template: str, groups: Sequence[str | None], last: str, n: int) -> str:
    """Replace ``{0}``, ``{1}``..., ``{last}``, ``{n}``; leave every other brace alone (JSON)."""

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if key == "last":
            return last
        if key == "n":
            return str(n)
        i = int(key)
        return (groups[i] or "") if i < len(groups) else m.group(0)

    return _FIELD.sub(sub, template)


_RE_FLAGS = int(functools.reduce(operator.or_, re.RegexFlag, 0))  # an int: ~ of a Flag stays in it


@dataclass(frozen=True, slots=True)
class ScriptRule:
    """When ``pattern`` matches the last user message, reply with ``reply``.

    ``reply`` is a string (``{0}``, ``{1}``... are filled from the regex groups,
    ``{last}`` with the whole last user message, ``{n}`` with the call number;
    other braces, as in JSON, are left alone) or a function of the messages.
    """

    pattern: str
    reply: Reply
    flags: int = re.IGNORECASE
    """``re`` flags, combined with ``|``."""

    def __post_init__(self) -> None:
        require_str("pattern", self.pattern)
        if not (isinstance(self.reply, str) or callable(self.reply)):
            raise TypeError(f"reply must be a str or a function of the messages, got {self.reply!r}")
        # re.compile would take unknown bits silently, and refuse a huge int with an OverflowError
        if require_int("flags", self.flags, minimum=0) & ~_RE_FLAGS:
            raise ValueError(f"flags must combine re flags (re.IGNORECASE | ...), got {self.flags!r}")

    def match(self, text: str) -> re.Match[str] | None:
        return re.search(self.pattern, text, self.flags)


class ScriptedChatModel:
    """A scripted stand-in for a chat model: **not a language model**, deterministic, offline.

    How a reply is chosen, first match wins:

    1. ``script``: a list of replies handed out in order, one per call, until
       it runs out;
    2. ``rules``: ``ScriptRule``s (or ``(pattern, reply)`` pairs) tried in order
       against the last user message;
    3. ``default``: a string (format fields ``{last}`` and ``{n}``, the call
       number) or a function of the messages.

    With ``max_tokens`` the reply is cut to that many tokens of ``counter``
    (a ``Tokenizer`` by default), as an endpoint would cut it. ``history`` keeps
    every message list it was given, so a notebook can show what was "sent".
    """

    is_scripted = True

    def __init__(
        self,
        script: Sequence[str] = (),
        *,
        rules: Sequence[ScriptRule | tuple[str, Reply]] = (),
        default: Reply = "(scripted reply {n}; no rule matched)",
        label: str = "chat",
        counter: Any = None,
    ) -> None:
        if isinstance(script, str):
            raise TypeError(f"script must be a list of replies, not one str: got {script!r}")
        self.script = [require_str(f"script[{i}]", s) for i, s in enumerate(script)]
        self.rules: list[ScriptRule] = []
        for i, rule in enumerate(rules):
            if isinstance(rule, tuple) and len(rule) == 2:
                rule = ScriptRule(rule[0], rule[1])
            if not isinstance(rule, ScriptRule):
                raise TypeError(
                    f"rules[{i}] must be a ScriptRule or (pattern, reply), got {rule!r}"
                )
            re.compile(rule.pattern)
            self.rules.append(rule)
        if not (isinstance(default, str) or callable(default)):
            raise TypeError(f"default must be a str or a function, got {default!r}")
        self.default = default
        self.label = require_str("label", label, non_empty=True)
        self.name = f"scripted-{self.label} (not an LLM)"
        self._counter = counter
        self.history: list[ChatMessages] = []
        self._position = 0

    @property
    def calls(self) -> int:
        return len(self.history)

    def reset(self) -> None:
        """Rewind the script and forget the history."""
        self.history.clear()
        self._position = 0

    def _reply(self, messages: ChatMessages) -> str:
        if self._position < len(self.script):
            self._position += 1
            return self.script[self._position - 1]
        last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        for rule in self.rules:
            found = rule.match(last)
            if found:
                if callable(rule.reply):
                    return rule.reply(messages)
                return _fill(rule.reply, found.groups(), last, self.calls)
        if callable(self.default):
            return self.default(messages)
        return _fill(self.default, (), last, self.calls)

    def complete(self, messages: ChatMessages, *, max_tokens: int | None = None) -> str:
        messages = check_chat_messages(messages)
        require_optional_int("max_tokens", max_tokens, minimum=1)
        self.history.append(messages)
        reply = self._reply(messages)
        if not isinstance(reply, str):
            raise TypeError(f"a scripted reply must be a str, got {reply!r}")
        if max_tokens is not None:
            if self._counter is None:
                from memorykit.tokens import Tokenizer

                self._counter = Tokenizer()
            ids = self._counter.encode(reply)
            if len(ids) > max_tokens:
                reply = self._counter.decode(ids[:max_tokens])
        return reply

    def __repr__(self) -> str:
        return (
            f"ScriptedChatModel(label={self.label!r}, script={len(self.script)} replies, "
            f"rules={len(self.rules)})"
        )


__all__ = [
    "ChatMessages",
    "ChatModel",
    "OpenAIChatModel",
    "ScriptRule",
    "ScriptedChatModel",
    "Usage",
    "check_chat_messages",
]
