"""Which components drive a memory: a real model over the OpenAI API, or the offline stand-ins.

``choose_backend(env)``: when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set (and
``openai`` is installed) the chat model, summarizer, critic and actor are
``OpenAIChatModel`` / ``OpenAISummarizer`` / ``OpenAICritic`` on a real client
(``openai_backend``); otherwise the deterministic offline components
(``offline_backend``): ``memory_reader()``, a ``ScriptedChatModel`` that quotes the
context sentence sharing most words with the question (**not a language model**: it
can answer only when memory put the fact into what it was sent), the
``ExtractiveSummarizer`` and a ``ScriptedCritic``. ``Backend.kind`` says which
("openai" or "offline"); ``Backend.description`` never holds the key, and
``safe_url`` is how an endpoint is shown.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memorykit._validate import require_int, require_positive
from memorykit.llm.chat import ChatModel, OpenAIChatModel, ScriptedChatModel
from memorykit.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    make_client,
    openai_available,
    safe_url,
)
from memorykit.llm.critic import Critic, OpenAICritic, ScriptedCritic
from memorykit.llm.summarizer import OpenAISummarizer
from memorykit.summary import ExtractiveSummarizer, Summarizer

DEFAULT_MODEL = "gpt-4o-mini"
"""The model ``choose_backend`` asks when ``OPENAI_MODEL`` is not set."""
ENV_MODEL = "OPENAI_MODEL"

_WORD = re.compile(r"[a-z0-9$.:#-]+")
_STOP = frozenset("a an the is my of to at in on for what which was and i me you your it do did "
                  "does that this with be are have has".split())


# ------------------------------------------------------------------ the reader
def _words(text: str) -> set[str]:
    return {w.strip(".:") for w in _WORD.findall(text.lower())} - _STOP - {""}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def memory_reader_reply(messages: Sequence[Mapping[str, Any]]) -> str:
    """The offline "model": quote the context sentence sharing most words with the question.

    Deterministic and scripted (not a language model): it reads only what it was
    sent, so it can answer only when memory put the fact into the context.
    """
    question = next((str(m["content"]) for m in reversed(messages) if m["role"] == "user"), "")
    asked = _words(question)
    best, best_score = "", 0
    for m in messages[:-1] if messages and messages[-1].get("content") == question else messages:
        for sentence in _sentences(str(m.get("content") or "")):
            score = len(asked & _words(sentence))
            if score > best_score:
                best, best_score = sentence, score
    if best_score < 2:
        return "(scripted memory reader) I cannot find that in what I was sent."
    return f"(scripted memory reader) From the context: {best}"


def memory_reader() -> ScriptedChatModel:
    """The offline chat model: a ``ScriptedChatModel`` wrapping ``memory_reader_reply``."""
    return ScriptedChatModel(default=memory_reader_reply, label="memory-reader")


# ------------------------------------------------------------------ backends
@dataclass(frozen=True)
class Backend:
    """Which components drive the loop; ``description`` is safe to print (no key)."""

    kind: str
    """"openai" (requests to an OpenAI-compatible endpoint) or "offline" (scripted, local)."""
    description: str
    chat: ChatModel
    """Answers the questions asked with a memory's context."""
    summarizer: Summarizer
    """Writes the working memory's summaries."""
    critic: Critic
    """Draws rules from mistakes (a reflecting memory's)."""
    actor: ChatModel
    """Acts on requests (the agent whose behaviour the rules should change)."""

    def components(self) -> dict[str, str]:
        return {
            "chat": getattr(self.chat, "name", type(self.chat).__name__),
            "summarizer": getattr(self.summarizer, "name", type(self.summarizer).__name__),
            "critic": getattr(self.critic, "name", type(self.critic).__name__),
        }


def offline_backend(*, critic: Critic | None = None, actor: ChatModel | None = None) -> Backend:
    """The deterministic offline components (no network, no key): the memory reader, the
    extractive summarizer, ``critic`` (default ``ScriptedCritic()``) and ``actor``
    (default the memory reader)."""
    reader = memory_reader()
    return Backend(
        "offline",
        "offline: scripted components, no model and no network (set OPENAI_API_KEY or "
        "OPENAI_BASE_URL to use a real model)",
        reader, ExtractiveSummarizer(), critic if critic is not None else ScriptedCritic(),
        actor if actor is not None else reader,
    )


def openai_backend(client: Any, model: str, *, where: str) -> Backend:
    """Chat, summarizer, critic and actor all asking ``model`` through ``client``."""
    chat = OpenAIChatModel(model, client)
    return Backend("openai", f"openai: model {model} at {where}", chat,
                   OpenAISummarizer(chat), OpenAICritic(chat), chat)


def choose_backend(env: Mapping[str, str] | None = None, *,
                   offline: Callable[[], Backend] = offline_backend, timeout: float = 60.0,
                   max_retries: int = 2) -> Backend:
    """The OpenAI backend when OPENAI_API_KEY or OPENAI_BASE_URL is set, else ``offline()``.

    With only OPENAI_BASE_URL (a local server such as vLLM or Ollama, which
    ignore the key) a placeholder key is sent. The model is OPENAI_MODEL, default
    ``gpt-4o-mini``. Never puts the key in ``description``.
    """
    # checked even when the offline backend is chosen: the same call must not fail later,
    # only once a key is set
    require_positive("timeout", timeout)
    require_int("max_retries", max_retries, minimum=0)
    env = os.environ if env is None else env
    key = (env.get(ENV_API_KEY) or "").strip()
    url = (env.get(ENV_BASE_URL) or "").strip()
    if not (key or url) or not openai_available():
        return offline()
    client = make_client(base_url=url or None, api_key=key or "no-key-needed", timeout=timeout,
                         max_retries=max_retries, env=env)
    where = safe_url(url) if url else "https://api.openai.com/v1"
    return openai_backend(client, (env.get(ENV_MODEL) or DEFAULT_MODEL).strip(), where=where)


__all__ = [
    "DEFAULT_MODEL", "ENV_MODEL", "Backend", "choose_backend", "memory_reader",
    "memory_reader_reply", "offline_backend", "openai_backend", "safe_url",
]
