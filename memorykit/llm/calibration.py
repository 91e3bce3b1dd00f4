"""Calibration: memorykit's billed count of a request against what the provider says it billed.

Every budget in memorykit rests on counting a prompt's tokens the way the provider bills them
(``memorykit.tokens``: content tokens with tiktoken, plus ``ChatFormat``'s framing per message,
per tool call and for the reply primer). Providers publish part of that framing and not the
rest (OpenAI documents 3 tokens per message and 3 for the reply primer, not how tool calls are
framed), and other servers (a local llama.cpp, vLLM) use their own chat templates and
tokenizers. ``calibrate`` measures the difference instead of trusting it: it sends each request
with ``max_tokens=1`` through an ``OpenAIChatModel``, reads the response's
``usage.prompt_tokens``, and compares it with ``count_chat_tokens`` of the same messages.

The offset of each request (provider minus memorykit) is then fitted as
``per_request + per_message x messages + per_tool_call x tool calls`` by least squares: a
constant offset is a template that adds a fixed preamble, a per-message one is framing counted
differently for every message, a per-call one is how the provider frames a tool call and its
result (the part nobody publishes). A budget can be corrected by them (``Calibration.corrected``), and a lesson shows them.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.llm.chat import ChatMessages, ChatModel, check_chat_messages
from memorykit.messages import Message, validate_wire
from memorykit.tokens import ChatFormat, TokenCounter, Tokenizer, count_chat_tokens


@dataclass(frozen=True)
class CalibrationRow:
    """One request: what memorykit counted and what the provider billed."""

    messages: int
    """Messages in the request."""
    tool_calls: int
    """Tool calls the request's assistant messages carry."""
    memorykit_tokens: int
    """``count_chat_tokens`` of the request (framing and reply primer included)."""
    provider_tokens: int
    """The provider's ``usage.prompt_tokens`` for the same request."""

    @property
    def offset(self) -> int:
        """Provider minus memorykit: positive when memorykit under-counts."""
        return self.provider_tokens - self.memorykit_tokens


@dataclass(frozen=True)
class Calibration:
    """Offsets of one provider against memorykit's count, per request and per message."""

    model: str
    rows: tuple[CalibrationRow, ...]
    per_request: float
    """Fitted constant offset of every request (tokens)."""
    per_message: float
    """Fitted offset added by each message (tokens)."""
    per_tool_call: float
    """Fitted offset added by each tool call, with its result (tokens)."""

    @property
    def exact(self) -> bool:
        """True when every request was counted exactly as the provider billed it."""
        return all(r.offset == 0 for r in self.rows)

    def corrected(self, memorykit_tokens: int, messages: int, tool_calls: int = 0) -> float:
        """memorykit's count of a request, corrected by the fit."""
        require_int("memorykit_tokens", memorykit_tokens, minimum=0)
        require_int("messages", messages, minimum=0)
        require_int("tool_calls", tool_calls, minimum=0)
        return (memorykit_tokens + self.per_request + self.per_message * messages
                + self.per_tool_call * tool_calls)

    def fit_line(self) -> str:
        """The fitted offsets in one printable line."""
        return (f"fitted offset: {self.per_request:+.1f} per request, {self.per_message:+.1f} per "
                f"message, {self.per_tool_call:+.1f} per tool call; exact: {self.exact}")

    def table(self) -> list[dict[str, Any]]:
        """One row per request, ready to print."""
        return [{"messages": r.messages, "tool calls": r.tool_calls,
                 "memorykit": r.memorykit_tokens, "provider": r.provider_tokens,
                 "offset": r.offset} for r in self.rows]


def calibrate(
    model: ChatModel,
    requests: Sequence[ChatMessages],
    *,
    counter: TokenCounter | None = None,
    chat_format: ChatFormat = ChatFormat(),
) -> Calibration:
    """Send each request (``max_tokens=1``) and compare the billed prompt with memorykit's count.

    ``model`` must report usage after a call (``last_usage``): an ``OpenAIChatModel``, or a
    ``RecordingChatModel`` / ``ReplayChatModel`` of one (``memorykit.classroom.doubles.transcript``).

    ``requests`` must hold at least two requests of different lengths (the fit needs them);
    each must be a history the chat API accepts (``validate_wire``). ``counter`` defaults to
    the ``Tokenizer`` of the model's encoding family (cl100k_base).
    """
    if not callable(getattr(model, "complete", None)) or not hasattr(model, "last_usage"):
        raise TypeError(f"model must be a chat model that reports usage (last_usage), "
                        f"got {model!r}")
    if isinstance(requests, (str, dict)) or not isinstance(requests, Sequence):
        raise TypeError(f"requests must be a list of message lists, got {type(requests).__name__}")
    for k, request in enumerate(requests):
        try:
            check_chat_messages(request)
        except ValueError as exc:
            raise ValueError(f"requests[{k}] is not a valid chat request: {exc}") from None
    if len({len(r) for r in requests}) < 2:
        raise ValueError(f"requests must hold at least two lengths of request to fit a "
                         f"per-message offset, got lengths {sorted({len(r) for r in requests})}")
    counter = counter if counter is not None else Tokenizer()
    rows = []
    for request in requests:
        model.complete(list(request), max_tokens=1)
        usage = model.last_usage
        billed = getattr(usage, "prompt_tokens", None)
        if type(billed) is not int:
            raise ValueError(f"{model.name} reported no usage.prompt_tokens (got {usage!r}): "
                             "it cannot be calibrated")
        rows.append(CalibrationRow(
            len(request), sum(len(m.get("tool_calls") or ()) for m in request),
            count_chat_tokens(list(request), counter, chat_format), billed))
    design = np.array([[1.0, r.messages, r.tool_calls] for r in rows])
    offsets = np.array([float(r.offset) for r in rows])
    fit, *_ = np.linalg.lstsq(design, offsets, rcond=None)
    per_request, per_message, per_tool_call = (round(float(x), 3) + 0.0 for x in fit)
    return Calibration(model.name, tuple(rows), per_request, per_message, per_tool_call)


def calibration_requests(messages: Sequence[Message], *, every: int = 3) -> list[ChatMessages]:
    """Requests of growing length from one conversation: every ``every``-th prefix the chat API
    accepts (a prefix that ends between a tool call and its result is skipped)."""
    if isinstance(messages, (str, Message)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of Message, got {type(messages).__name__}")
    # a step past the conversation would leave one request: nothing to fit
    require_int("every", every, minimum=1, maximum=max(1, len(messages)))
    wire = [m.to_openai() for m in messages]
    valid = []
    for n in range(1, len(wire) + 1):
        try:
            validate_wire(wire[:n])
        except ValueError:
            continue
        valid.append(wire[:n])
    return valid[::every]


__all__ = ["Calibration", "CalibrationRow", "calibrate", "calibration_requests"]
