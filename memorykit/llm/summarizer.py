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
from typing import Any

from memorykit._validate import require_int, require_optional_int, require_str
from memorykit.llm.chat import ChatModel, resolve_chat_model
from memorykit.llm.client import LLMError, describe_error
from memorykit.messages import Message
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


class SummarizationFailed(LLMError):
    """The summarizer could not produce a trustworthy summary; ``cause`` says why.

    The caller should keep the messages it meant to replace.
    """

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message, cause=cause)


def render_transcript(messages: Sequence[Message]) -> str:
    """One line per message: ``[id] role: content`` (summaries marked as such)."""
    lines = []
    for m in messages:
        if type(m) is not Message:
            raise TypeError(f"messages must hold Message records, got {m!r}")
        role = f"summary of {len(m.sources)} earlier messages" if m.is_summary else m.role
        lines.append(f"[{m.id}] {role}: {m.content}")
    return "\n".join(lines)


class OpenAISummarizer:
    """A summarizer that asks a chat model (an LLM when the model is real).

    Give it a ``chat_model`` (any ``ChatModel``), or a ``client`` and ``model``
    to build an ``OpenAIChatModel``. ``prompt`` is the system prompt (with a
    ``{max_tokens}`` field). ``max_tokens``, when set, caps every request below
    the cap the caller passes. ``counter`` counts the reply's tokens to enforce
    the protocol's limit (default: ``Tokenizer()``, cl100k_base; a model with
    another tokenizer may count differently, hence the check).
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
    ) -> None:
        chat_model = resolve_chat_model(chat_model, client, model)
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
        try:
            text = self.chat_model.complete(chat, max_tokens=cap)
        except Exception as exc:  # any failure of the model: the caller keeps its messages
            raise self._fail(f"the chat model failed: {describe_error(exc)}", exc) from exc
        if not isinstance(text, str):
            raise self._fail(f"the chat model returned {type(text).__name__}, expected str")
        text = text.strip()
        if not text:
            raise self._fail("the chat model returned an empty summary")
        if getattr(self.chat_model, "last_finish_reason", None) == "length":
            raise self._fail(
                f"the summary was cut off at the {cap}-token limit (finish_reason='length'); "
                "a truncated summary may silently drop facts"
            )
        used = self.counter.count(text)
        if used > cap:
            raise self._fail(f"the summary has {used} tokens, more than the limit {cap}")
        self.last_error = None
        return text

    def _fail(self, message: str, cause: BaseException | None = None) -> SummarizationFailed:
        error = SummarizationFailed(
            f"{self.name}: {message}; the messages were not summarized", cause=cause
        )
        self.last_error = error
        return error

    def __repr__(self) -> str:
        return f"OpenAISummarizer({self.chat_model!r}, max_tokens={self.max_tokens})"


__all__ = ["DEFAULT_SUMMARY_PROMPT", "OpenAISummarizer", "SummarizationFailed", "render_transcript"]
