"""An LLM-written summary that fits the ``Summarizer`` protocol of ``memorykit.summary``.

``OpenAISummarizer`` renders the messages as a transcript (each line tagged
with its message id and role), asks the chat model for a faithful summary
that keeps every fact, number, name and decision, within ``max_tokens``, and
checks the reply. It never returns a doubtful summary: a timeout, an API
error, an empty or malformed reply, a reply cut off at the token limit, or a
reply longer than ``max_tokens`` (counted with ``counter``) raises
``SummarizationFailed`` carrying the cause. A summary buffer that calls it
therefore keeps its messages when the model fails -- nothing is lost, the
buffer is just over its threshold until the next try.

Its ``is_llm`` is True only when the chat model behind it is not scripted:
with a ``ScriptedChatModel`` the "summary" is whatever the script says.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memorykit._text import STOPWORDS, words
from memorykit._validate import require_fraction, require_int, require_optional_int, require_str
from memorykit.llm.chat import ChatModel, resolve_chat_model
from memorykit.llm.client import LLMError, describe_error
from memorykit.messages import Message
from memorykit.summary import ExtractiveSummarizer, Summarizer
from memorykit.tokens import TokenCounter, Tokenizer

DEFAULT_SUMMARY_PROMPT = (
    "You summarize part of a conversation so that it can replace the original messages "
    "in an assistant's memory. Be faithful: keep every fact, number, date, name, code, "
    "preference, decision and open question exactly as stated; attribute statements to "
    "the user or the assistant; do not add anything that is not in the messages; if a "
    "later message corrects an earlier one, keep the correction. Write plain sentences, "
    "no preamble. The summary must be at most {max_tokens} tokens."
)
"""System prompt; ``{max_tokens}`` is filled in per call."""


FAILURE_REASONS = ("model failed", "not text", "empty", "cut off", "too long", "off-topic")
"""Why ``OpenAISummarizer`` refused a reply (``SummarizationFailed.reason``)."""


class SummarizationFailed(LLMError):
    """The summarizer could not produce a trustworthy summary; ``cause`` says why.

    ``reason`` is one of ``FAILURE_REASONS``. The caller should keep the messages it meant
    to replace.
    """

    def __init__(self, message: str, *, cause: BaseException | None = None,
                 reason: str = "model failed") -> None:
        super().__init__(message, cause=cause)
        if reason not in FAILURE_REASONS:
            raise ValueError(f"reason must be one of {FAILURE_REASONS}, got {reason!r}")
        self.reason = reason


def render_transcript(messages: Sequence[Message]) -> str:
    """One line per message: ``[id] role: content`` (summaries marked as such)."""
    lines = []
    for m in messages:
        if type(m) is not Message:
            raise TypeError(f"messages must hold Message records, got {m!r}")
        role = f"summary of {len(m.sources)} earlier messages" if m.is_summary else m.role
        lines.append(f"[{m.id}] {role}: {m.content}")
    return "\n".join(lines)


def topic_overlap(summary: str, messages: Sequence[Message]) -> float:
    """The fraction of ``summary``'s distinct content words (stop words left out, case
    ignored) that occur in ``messages``; 1.0 for a summary with no content word."""
    said = {w.lower() for m in messages for w in words(m.content)}
    own = {w.lower() for w in words(summary)} - STOPWORDS
    return sum(w in said for w in own) / len(own) if own else 1.0


def refusal(reply: Any, finish_reason: str | None, messages: Sequence[Message], cap: int, *,
            counter: TokenCounter | None = None,
            min_overlap: float | None = None) -> tuple[str, str] | None:
    """Why a model's summary ``reply`` cannot be trusted, as ``(reason, explanation)`` with
    ``reason`` one of ``FAILURE_REASONS``; None when it can. Checked in this order: not text,
    empty (nothing but whitespace), cut off (``finish_reason == "length"``: the model hit the
    token cap mid-summary), too long (more than ``cap`` tokens of ``counter``, default
    cl100k_base), off-topic (with ``min_overlap``: under that share of its content words occur
    in ``messages``, ``topic_overlap``). ``OpenAISummarizer`` refuses exactly these."""
    require_int("cap", cap, minimum=1)
    if finish_reason is not None:
        require_str("finish_reason", finish_reason)
    if min_overlap is not None:
        require_fraction("min_overlap", min_overlap)
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a sequence of Message, got {messages!r}")
    if not isinstance(reply, str):
        return "not text", f"the chat model returned {type(reply).__name__}, expected str"
    text = reply.strip()
    if not text:
        return "empty", "the chat model returned an empty summary"
    if finish_reason == "length":
        return "cut off", (f"the summary was cut off at the {cap}-token limit "
                           "(finish_reason='length'); a truncated summary may silently drop facts")
    used = (counter if counter is not None else Tokenizer()).count(text)
    if used > cap:
        return "too long", f"the summary has {used} tokens, more than the limit {cap}"
    if min_overlap is not None:
        overlap = topic_overlap(text, messages)
        if overlap < min_overlap:
            return "off-topic", (f"the summary is off-topic: {overlap:.2f} of its content words "
                                 f"occur in the messages, under min_overlap {min_overlap:g}")
    return None


class OpenAISummarizer:
    """A summarizer that asks a chat model (an LLM when the model is real).

    Give it a ``chat_model`` (any ``ChatModel``), or a ``client`` and ``model``
    to build an ``OpenAIChatModel``. ``prompt`` is the system prompt (with a
    ``{max_tokens}`` field). ``max_tokens``, when set, caps every request below
    the cap the caller passes. ``counter`` counts the reply's tokens to enforce
    the protocol's limit (default: ``Tokenizer()``, cl100k_base; a model with
    another tokenizer may count differently, hence the check). ``min_overlap``, when
    set, refuses an off-topic reply: one where fewer than that fraction of the reply's
    content words occur in the summarized messages (a small model may answer a question
    of its own instead of summarizing).
    """

    def __init__(
        self,
        chat_model: ChatModel | None = None,
        *,
        client: Any = None,
        model: str | None = None,
        prompt: str = DEFAULT_SUMMARY_PROMPT,
        max_tokens: int | None = None,
        counter: TokenCounter | None = None,
        min_overlap: float | None = None,
    ) -> None:
        chat_model = resolve_chat_model(chat_model, client, model)
        self.min_overlap = None if min_overlap is None else require_fraction("min_overlap",
                                                                             min_overlap)
        self.chat_model = chat_model
        self.prompt = require_str("prompt", prompt, non_empty=True)
        if "{max_tokens}" not in self.prompt:
            raise ValueError("prompt must contain the field {max_tokens}")
        self.max_tokens = require_optional_int("max_tokens", max_tokens, minimum=1)
        if counter is not None and not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) method, got {counter!r}")
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.name = f"llm-summarizer({getattr(chat_model, 'name', type(chat_model).__name__)})"
        self.last_error: SummarizationFailed | None = None
        self.last_reply: str | None = None
        """The model's last reply, kept or refused (None when the call itself failed)."""

    @property
    def is_llm(self) -> bool:
        """True unless the chat model is scripted (then no language model wrote the text)."""
        return not getattr(self.chat_model, "is_scripted", False)

    def request(self, messages: Sequence[Message], max_tokens: int) -> list[dict[str, str]]:
        """The chat messages a call would send (for a notebook to show)."""
        return [
            {"role": "system", "content": self.prompt.replace("{max_tokens}", str(max_tokens))},
            {
                "role": "user",
                "content": "Summarize these messages:\n\n" + render_transcript(messages),
            },
        ]

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        require_int("max_tokens", max_tokens, minimum=0)
        if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
            raise TypeError(
                f"messages must be a sequence of Message, got {type(messages).__name__}"
            )
        if max_tokens == 0 or not messages:
            return ""
        cap = max_tokens if self.max_tokens is None else min(max_tokens, self.max_tokens)
        chat = self.request(messages, cap)
        self.last_reply = None
        try:
            text = self.chat_model.complete(chat, max_tokens=cap)
        except Exception as exc:  # any failure of the model: the caller keeps its messages
            kind = getattr(exc, "kind", None)
            raise self._fail(f"the chat model failed: {describe_error(exc)}", exc,
                             reason="empty" if kind == "empty reply" else "model failed") from exc
        self.last_reply = text if isinstance(text, str) else None
        refused = refusal(text, getattr(self.chat_model, "last_finish_reason", None), messages,
                          cap, counter=self.counter, min_overlap=self.min_overlap)
        if refused is not None:
            raise self._fail(refused[1], reason=refused[0])
        text = text.strip()
        self.last_error = None
        return text

    def _fail(self, message: str, cause: BaseException | None = None, *,
              reason: str) -> SummarizationFailed:
        error = SummarizationFailed(
            f"{self.name}: {message}; the messages were not summarized", cause=cause,
            reason=reason,
        )
        self.last_error = error
        return error

    def __repr__(self) -> str:
        return f"OpenAISummarizer({self.chat_model!r}, max_tokens={self.max_tokens})"


@dataclass(frozen=True)
class SummaryAttempt:
    """One call of a ``FallbackSummarizer``: who wrote the summary, and why not the model."""

    message_ids: tuple[str, ...]
    """The messages summarized."""
    written_by: str
    """"model" or "fallback"."""
    reason: str | None
    """``SummarizationFailed.reason`` of the model's reply when the fallback wrote it."""
    model_reply: str | None = None
    """The reply the model gave and was refused for (None: no reply, or it was kept)."""


class FallbackSummarizer:
    """A model's summary when it can be trusted, the ``fallback``'s when it cannot.

    A small model's summary fails in ways a buffer must survive: cut off at the token
    limit, empty, off-topic, or the server is down. ``OpenAISummarizer`` refuses each
    (``SummarizationFailed`` with its ``reason``); this wrapper then asks ``fallback``
    (default ``ExtractiveSummarizer``: the messages' own sentences, numbers kept) so the
    buffer still gets a summary instead of evicting, and records every call in
    ``attempts``, saying who wrote it and why. It never raises for a model failure.
    """

    def __init__(self, model: OpenAISummarizer, fallback: Summarizer | None = None) -> None:
        if not isinstance(model, OpenAISummarizer):
            raise TypeError(f"model must be an OpenAISummarizer, got {model!r}")
        self.model = model
        self.fallback: Summarizer = (fallback if fallback is not None
                                     else ExtractiveSummarizer(model.counter))
        self.name = f"{model.name} else {getattr(self.fallback, 'name', 'fallback')}"
        self.attempts: list[SummaryAttempt] = []

    @property
    def is_llm(self) -> bool:
        return self.model.is_llm

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        ids = tuple(getattr(m, "id", "?") for m in messages)
        try:
            text = self.model.summarize(messages, max_tokens)
        except SummarizationFailed as exc:
            self.attempts.append(SummaryAttempt(ids, "fallback", exc.reason, self.model.last_reply))
            return self.fallback.summarize(messages, max_tokens)
        self.attempts.append(SummaryAttempt(ids, "model", None))
        return text

    def outcomes(self) -> dict[str, int]:
        """Summaries the model wrote ("accepted"), and those the fallback wrote, by the
        reason the model's reply was refused."""
        out = {"accepted": sum(a.written_by == "model" for a in self.attempts)}
        for a in self.attempts:
            if a.reason is not None:
                out[a.reason] = out.get(a.reason, 0) + 1
        return out

    def refused(self, width: int = 150) -> dict[str, str]:
        """The first refused reply of each reason, on one line, cut to ``width`` characters."""
        require_int("width", width, minimum=10)
        out: dict[str, str] = {}
        for a in self.attempts:
            if a.reason is not None and a.reason not in out:
                text = " ".join((a.model_reply or "").split()) or "(no reply)"
                out[a.reason] = text if len(text) <= width else text[:width - 3] + "..."
        return out

    def writer_of(self, message_id: str) -> str | None:
        """Who wrote the summary that first replaced ``message_id`` ("model", "fallback"),
        None if none did."""
        return next((a.written_by for a in self.attempts if message_id in a.message_ids), None)

    def __repr__(self) -> str:
        return f"FallbackSummarizer({self.model!r}, fallback={self.fallback!r})"


__all__ = ["DEFAULT_SUMMARY_PROMPT", "FAILURE_REASONS", "FallbackSummarizer", "OpenAISummarizer",
           "SummarizationFailed", "SummaryAttempt", "render_transcript", "topic_overlap"]
