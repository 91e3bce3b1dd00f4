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
``safe_url`` is how an endpoint is shown. Without ``OPENAI_MODEL``, a server other than
api.openai.com is asked which models it serves (``served_model``).

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from memorykit._validate import require_int, require_positive
from memorykit.llm.chat import ChatModel, OpenAIChatModel, ScriptedChatModel
from memorykit.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    LLMCallFailed,
    call_deadline,
    classify_error,
    describe_error,
    make_client,
    openai_available,
    run_with_deadline,
    safe_url,
)
from memorykit.llm.critic import Critic, OpenAICritic, ScriptedCritic
from memorykit.llm.summarizer import OpenAISummarizer
from memorykit.summary import ExtractiveSummarizer, Summarizer

DEFAULT_MODEL = "gpt-4o-mini"
"""The model ``choose_backend`` asks OpenAI's own API for when ``OPENAI_MODEL`` is not set (any
other endpoint is asked which models it serves: ``served_model``)."""
OPENAI_HOST = "api.openai.com"
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


def served_model(client: Any, *, where: str) -> tuple[str, str]:
    """The model an OpenAI-compatible server serves, asked through ``client.models.list()``,
    and a note saying how it was chosen.

    A local server (llama.cpp, vLLM, Ollama) answers to the names it lists, not to an
    OpenAI model name, so the name is asked rather than guessed. With several, the
    first is used and the note lists the others. Raises ``LLMCallFailed`` naming
    ``where`` when the server cannot be asked (``kind`` from the error) or lists none
    (``kind="empty reply"``).
    """
    try:
        listed = run_with_deadline(client.models.list, call_deadline(client))
        ids = [str(m.id) for m in listed.data]
    except Exception as exc:  # noqa: BLE001 - every failure of the request is reported alike
        raise LLMCallFailed(f"could not ask {where} which models it serves ({describe_error(exc)});"
                            f" is the server running? (set {ENV_MODEL} to skip the question)",
                            kind=classify_error(exc), cause=exc) from exc
    if not ids:
        raise LLMCallFailed(f"{where} serves no model (GET /models listed none); set {ENV_MODEL} "
                            "to the model to ask for", kind="empty reply")
    if len(ids) == 1:
        return ids[0], "the one the server lists"
    return ids[0], f"the first of the {len(ids)} the server lists: {', '.join(ids)}; set " \
                   f"{ENV_MODEL} to choose"


def choose_backend(env: Mapping[str, str] | None = None, *,
                   offline: Callable[[], Backend] = offline_backend, timeout: float = 60.0,
                   max_retries: int = 2) -> Backend:
    """The OpenAI backend when OPENAI_API_KEY or OPENAI_BASE_URL is set, else ``offline()``.

    With only OPENAI_BASE_URL (a local server such as llama.cpp, vLLM or Ollama, which
    ignore the key) a placeholder key is sent. The model is OPENAI_MODEL; when it is
    unset, a server other than api.openai.com is asked which models it serves
    (``served_model``: a request made here, so a dead endpoint fails now, with
    ``LLMCallFailed`` naming it, not at the first chat), and api.openai.com gets
    ``DEFAULT_MODEL``. Never puts the key in ``description``.
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
    where = safe_url(url) if url else f"https://{OPENAI_HOST}/v1"
    model, how = (env.get(ENV_MODEL) or "").strip(), ""
    if not model and urlsplit(where).hostname == OPENAI_HOST:
        model = DEFAULT_MODEL
    elif not model:
        model, chosen = served_model(client, where=where)
        how = f" ({chosen}; {ENV_MODEL} unset)"
    backend = openai_backend(client, model, where=where)
    return replace(backend, description=backend.description + how)


__all__ = [
    "DEFAULT_MODEL", "ENV_MODEL", "Backend", "choose_backend", "memory_reader",
    "memory_reader_reply", "offline_backend", "openai_backend", "safe_url", "served_model",
]
