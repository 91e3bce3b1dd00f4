"""Lesson 11: the same memory driving a model over the OpenAI API, or the offline stand-ins.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.

* ``choose_backend(env)``: when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set
  (and ``openai`` is installed) the chat model, summarizer and critic are
  ``OpenAIChatModel`` / ``OpenAISummarizer`` / ``OpenAICritic`` on a real
  client; otherwise the deterministic offline components:
  ``ScriptedChatModel`` (a "memory reader": it quotes the context sentence that
  shares most words with the question; **not a language model**),
  ``ExtractiveSummarizer`` and the scripted correction critic. ``Backend.kind``
  says which ("openai" or "offline"); ``Backend.description`` never holds the key.
* ``run_loop(backend, ...)``: seed 003's inject / distract / probe conversation
  through seed 004's memory service (a ``SummaryBuffer`` working memory, long-term
  store, auto-recall with the question as query). For every probe the context
  ``[recalled] + [working memory] + [current input]`` is sent to the backend's chat
  model: tokens sent, what was recalled, whether the fact's key was in the
  context and in the reply. ``reflect_demo(backend)``: architecture D's critic on
  the booking mistake, and the actor's next reply with the learned rule injected.
* ``loopback_demo()``: the **real** ``openai`` client against memorykit's local
  scripted server (``memorykit.llm.testing.FakeOpenAIServer`` on 127.0.0.1: a
  script, not a model): the same loop over HTTP, embeddings, and the failure
  cases (timeout, HTTP 500, malformed reply), each showing that the memory
  service kept every message when summarizing failed.
* ``LoopExplorer``: sliders for the working-memory budget, the summary threshold
  and ``recall_limit``; stacked bars of the tokens sent per probe (recalled /
  working memory / current input). Always offline: a slider never calls a model.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from memorykit._validate import require_fraction, require_int
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.lessons._app import LessonExplorer, _go, float_slider, int_slider
from memorykit.llm.chat import ScriptedChatModel
from memorykit.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    LLMError,
    make_client,
    openai_available,
    redact,
)
from memorykit.llm.critic import DEFAULT_CRITIC_PROMPT
from memorykit.llm.summarizer import DEFAULT_SUMMARY_PROMPT
from memorykit.longterm.protocol import (
    ProbeConversation,
    adaptability_scenario,
    asks_for_confirmation,
    booking_actor,
    booking_critic,
    probe_conversation,
)
from memorykit.longterm.reflection import RULE_PREFIX, ReflectionMemory
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.summary import ExtractiveSummarizer

SESSION = "lesson-11"
DEFAULT_MODEL = "gpt-4o-mini"
ENV_MODEL = "OPENAI_MODEL"
LOOPBACK_MODEL = "memorykit-fake-chat"
DEFAULTS = {"budget": 600, "threshold": 0.8, "recall_limit": 3, "distractor_turns": 30, "seed": 0}
"""The lesson's default scenario (the explorer starts here)."""

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
    """The offline chat model of this lesson: a ``ScriptedChatModel`` wrapping ``memory_reader_reply``."""
    return ScriptedChatModel(default=memory_reader_reply, label="memory-reader")


# ------------------------------------------------------------------ backends
@dataclass(frozen=True)
class Backend:
    """Which components drive the loop; ``description`` is safe to print (no key)."""

    kind: str
    """"openai" (requests to an OpenAI-compatible endpoint) or "offline" (scripted, local)."""
    description: str
    chat: Any
    summarizer: Any
    critic: Any
    actor: Any

    def components(self) -> dict[str, str]:
        return {
            "chat": getattr(self.chat, "name", type(self.chat).__name__),
            "summarizer": getattr(self.summarizer, "name", type(self.summarizer).__name__),
            "critic": getattr(self.critic, "name", type(self.critic).__name__),
        }


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment, key-shaped strings redacted."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return redact(urlunsplit((parts.scheme, host, parts.path, "", "")))


def offline_backend() -> Backend:
    """The deterministic offline components (no network, no key)."""
    return Backend(
        "offline",
        "offline: scripted components, no model and no network (set OPENAI_API_KEY or "
        "OPENAI_BASE_URL to use a real model)",
        memory_reader(), ExtractiveSummarizer(), booking_critic(), booking_actor(),
    )


def openai_backend(client: Any, model: str, *, where: str) -> Backend:
    """Chat, summarizer, critic and actor all asking ``model`` through ``client``."""
    from memorykit.llm import OpenAIChatModel, OpenAICritic, OpenAISummarizer

    chat = OpenAIChatModel(model, client)
    return Backend("openai", f"openai: model {model} at {where}", chat,
                   OpenAISummarizer(chat), OpenAICritic(chat), chat)


def choose_backend(env: Mapping[str, str] | None = None, *, timeout: float = 60.0,
                   max_retries: int = 2) -> Backend:
    """The OpenAI backend when OPENAI_API_KEY or OPENAI_BASE_URL is set, else the offline one.

    With only OPENAI_BASE_URL (a local server such as vLLM or Ollama, which
    ignore the key) a placeholder key is sent. The model is OPENAI_MODEL, default
    ``gpt-4o-mini``. Never puts the key in ``description``.
    """
    env = os.environ if env is None else env
    key = (env.get(ENV_API_KEY) or "").strip()
    url = (env.get(ENV_BASE_URL) or "").strip()
    if not (key or url) or not openai_available():
        return offline_backend()
    client = make_client(base_url=url or None, api_key=key or "no-key-needed", timeout=timeout,
                         max_retries=max_retries, env=env)
    where = safe_url(url) if url else "https://api.openai.com/v1"
    return openai_backend(client, (env.get(ENV_MODEL) or DEFAULT_MODEL).strip(), where=where)


# ------------------------------------------------------------------ the loop
@dataclass(frozen=True)
class Probe:
    """One question sent with the memory's context, and what came back."""

    fact_id: str
    question: str
    key: str
    tokens: int
    recalled_tokens: int
    working_tokens: int
    current_tokens: int
    recalled_ids: tuple[str, ...]
    fact_in_context: bool
    fact_recalled: bool
    answered: bool
    reply: str


@dataclass(frozen=True)
class LoopResult:
    backend: str
    """"openai" or "offline"."""
    components: dict[str, str]
    probes: tuple[Probe, ...]
    messages: int
    stored: int
    working: int
    summarizations: int
    chat_calls: int
    params: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        n = len(self.probes)
        return {
            "backend": self.backend,
            "messages_added": self.messages,
            "stored_long_term": self.stored,
            "in_working_memory": self.working,
            "summarizations": self.summarizations,
            "probes": n,
            "facts_in_context": sum(p.fact_in_context for p in self.probes),
            "facts_recalled": sum(p.fact_recalled for p in self.probes),
            "answered": sum(p.answered for p in self.probes),
            "mean_tokens_per_call": round(sum(p.tokens for p in self.probes) / n, 1) if n else 0.0,
            "chat_calls": self.chat_calls,
        }

    def rows(self) -> list[dict[str, Any]]:
        return [{"fact": p.fact_id, "tokens": p.tokens, "recalled": len(p.recalled_ids),
                 "in_context": p.fact_in_context, "answered": p.answered} for p in self.probes]


def _check_params(budget: int, threshold: float, recall_limit: int, distractor_turns: int,
                  seed: int) -> None:
    require_int("budget", budget, minimum=100)
    require_fraction("threshold", threshold)
    if not 0.3 <= threshold <= 0.95:
        raise ValueError(f"threshold must be in [0.3, 0.95], got {threshold!r}")
    require_int("recall_limit", recall_limit, minimum=0)
    require_int("distractor_turns", distractor_turns, minimum=0)
    require_int("seed", seed, minimum=0)


@lru_cache(maxsize=8)
def _conversation(distractor_turns: int, seed: int) -> ProbeConversation:
    return probe_conversation(distractor_turns, n_facts=4, seed=seed)


def make_service(summarizer: Any, *, budget: int, threshold: float, recall_limit: int,
                 batch_size: int = 1, embedder: Any = None) -> MemoryService:
    """Seed 004's memory service: a SummaryBuffer working memory plus auto-recall.

    ``embedder`` None is the service's default (``LexicalHashingEmbedder()``).
    """
    target = round(threshold - 0.2, 4)
    return MemoryService(
        lambda: SummaryBuffer(budget, threshold, target, summarizer=summarizer),
        LongTermSettings(recall_limit=recall_limit, batch_size=batch_size),
        embedder=embedder,
    )


def replay(summarizer: Any, *, budget: int, threshold: float, recall_limit: int,
           distractor_turns: int, seed: int,
           embedder: Any = None) -> tuple[MemoryService, ProbeConversation]:
    """The probe conversation added message by message to a fresh memory service."""
    _check_params(budget, threshold, recall_limit, distractor_turns, seed)
    conv = _conversation(distractor_turns, seed)
    service = make_service(summarizer, budget=budget, threshold=threshold,
                           recall_limit=recall_limit, embedder=embedder)
    for m in conv.messages:
        service.add(SESSION, m)
    return service, conv


def probe(service: MemoryService, conv: ProbeConversation, chat: Any) -> tuple[Probe, ...]:
    """Ask every planted fact's question with the service's context; ``chat`` answers."""
    out = []
    for fact in conv.facts:
        ctx = service.get_context(SESSION, fact.question)
        parts = {"recalled": 0, "query": 0}
        for item in ctx.items:
            parts[item.kind if item.kind in parts else "working"] = parts.get(
                item.kind if item.kind in parts else "working", 0) + item.tokens
        recalled = tuple(s for i in ctx.items if i.kind == "recalled" for s in i.sources)
        in_context = any(fact.key in i.content for i in ctx.items if i.kind != "query")
        reply = chat.complete(ctx.to_openai()) if chat is not None else ""
        out.append(Probe(fact.id, fact.question, fact.key, ctx.tokens, parts["recalled"],
                         parts.get("working", 0), parts["query"] + ctx.chat_format.reply_primer,
                         recalled, in_context, fact.message_id in recalled,
                         fact.key in reply, reply))
    return tuple(out)


def run_loop(backend: Backend | None = None, *, budget: int = DEFAULTS["budget"],
             threshold: float = DEFAULTS["threshold"], recall_limit: int = DEFAULTS["recall_limit"],
             distractor_turns: int = DEFAULTS["distractor_turns"],
             seed: int = DEFAULTS["seed"], embedder: Any = None) -> LoopResult:
    """Replay the conversation through the memory service and send every probe to ``backend``.

    ``embedder`` None is the memory service's default ``LexicalHashingEmbedder()``.
    """
    backend = backend if backend is not None else offline_backend()
    if not isinstance(backend, Backend):
        raise TypeError(f"backend must be a Backend, got {backend!r}")
    service, conv = replay(backend.summarizer, budget=budget, threshold=threshold,
                           recall_limit=recall_limit, distractor_turns=distractor_turns, seed=seed,
                           embedder=embedder)
    before = getattr(backend.chat, "calls", 0)
    probes = probe(service, conv, backend.chat)
    working = service.session(SESSION).working
    return LoopResult(
        backend.kind, backend.components(), probes, len(conv.messages),
        len(service.stored_ids(SESSION)), len(working), len(working.trace.summarizations()),
        getattr(backend.chat, "calls", 0) - before,
        {"budget": budget, "threshold": threshold, "recall_limit": recall_limit,
         "distractor_turns": distractor_turns, "seed": seed},
    )


@dataclass(frozen=True)
class ReflectResult:
    rules: tuple[str, ...]
    cited: tuple[tuple[str, ...], ...]
    mistake_ids: tuple[str, ...]
    reply: str
    asks_first: bool

    def summary(self) -> dict[str, Any]:
        return {"rules_learned": len(self.rules),
                "rules_cite_the_mistake": all(set(c) & set(self.mistake_ids) for c in self.cited)
                if self.cited else False,
                "next_reply_asks_first": self.asks_first}


def reflect_demo(backend: Backend | None = None, *, distractor_turns: int = 6) -> ReflectResult:
    """D's critic reads the booking mistake; the actor answers the next request with the rule."""
    backend = backend if backend is not None else offline_backend()
    scenario = adaptability_scenario(distractor_turns)
    memory = ReflectionMemory(backend.critic)
    rules = memory.reflect(scenario.messages, scenario.messages[-1].created_at)
    prompt = [scenario.messages[0].to_openai()]
    prompt += [{"role": "system", "content": memory.render(r)} for r in memory.active()]
    prompt.append({"role": "user", "content": scenario.second_request})
    reply = backend.actor.complete(prompt)
    return ReflectResult(tuple(r.text for r in rules), tuple(r.source_message_ids for r in rules),
                         scenario.mistake_ids, reply, asks_for_confirmation(reply))


# ------------------------------------------------------------------ loopback
_LINE = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<role>[^:]+): (?P<text>.*)$")
_COMPLAINT = re.compile(r"^\W*(you should|you forgot|no,|actually)", re.IGNORECASE)


def loopback_responder(messages: Sequence[Mapping[str, Any]]) -> str:
    """The scripted server's replies (not a model): summaries, critiques, memory reading.

    A summary request gets the first words of the transcript; a critique request
    gets one JSON rule citing the first complaint and the assistant message
    before it; anything else is answered by ``memory_reader_reply``.
    """
    system = str(messages[0].get("content") or "") if messages else ""
    last = str(messages[-1].get("content") or "") if messages else ""
    if system.startswith(DEFAULT_SUMMARY_PROMPT[:40]):
        words = " ".join(line.split(": ", 1)[-1] for line in last.splitlines()).split()
        return "Scripted summary (first words only): " + " ".join(words[:25])
    if system.startswith(DEFAULT_CRITIC_PROMPT[:40]):
        previous = None
        for line in last.splitlines():
            m = _LINE.match(line)
            if not m:
                continue
            if m["role"] == "user" and previous and _COMPLAINT.search(m["text"]):
                return ('{"rules": [{"text": "Ask the user to confirm before acting on a request.",'
                        f' "source_message_ids": ["{previous}", "{m["id"]}"]}}]}}')
            if m["role"] == "assistant":
                previous = m["id"]
        return '{"rules": []}'
    if any(str(m.get("content", "")).startswith(RULE_PREFIX) for m in messages):
        return "(scripted) Before I book that: shall I go ahead? Please confirm."
    return memory_reader_reply(messages)


@dataclass(frozen=True)
class FailureCase:
    behaviour: str
    error: str
    """The exception type and ``kind`` the memory saw."""
    added: int
    kept_in_working: int
    stored_long_term: int

    @property
    def nothing_lost(self) -> bool:
        return self.kept_in_working == self.added == self.stored_long_term


@dataclass(frozen=True)
class LoopbackReport:
    loop: LoopResult
    reflect: ReflectResult
    requests: dict[str, int]
    """Requests the server received, by endpoint (recorded server-side)."""
    embedding_shape: tuple[int, int]
    embeddings_match: bool
    streamed_pieces: int
    streamed_equals_complete: bool
    failures: tuple[FailureCase, ...]

    def lines(self) -> list[str]:
        out = ["server: memorykit FakeOpenAIServer on 127.0.0.1 (scripted replies, NOT a model)",
               "client: the real openai package, over HTTP"]
        out += [f"{k}: {v}" for k, v in self.loop.summary().items()]
        out += [f"requests {k}: {v}" for k, v in sorted(self.requests.items())]
        out.append(f"embeddings: shape {self.embedding_shape}, equal to the server's vectors: "
                   f"{self.embeddings_match}")
        out.append(f"streaming: {self.streamed_pieces} pieces, joined equal to the plain reply: "
                   f"{self.streamed_equals_complete}")
        out += [f"critic over HTTP: {k}: {v}" for k, v in self.reflect.summary().items()]
        for f in self.failures:
            out.append(f"failure {f.behaviour}: {f.error}; added {f.added}, kept in working memory "
                       f"{f.kept_in_working}, stored long-term {f.stored_long_term}, nothing lost: "
                       f"{f.nothing_lost}")
        return out


def _failure_case(server: Any, behaviour: Any, label: str) -> FailureCase:
    from memorykit.llm import OpenAIChatModel, OpenAISummarizer
    from memorykit.messages import MessageFactory

    chat = OpenAIChatModel(LOOPBACK_MODEL, server.client(timeout=0.5, max_retries=0))
    service = make_service(OpenAISummarizer(chat), budget=200, threshold=0.8, recall_limit=3)
    factory = MessageFactory()
    server.default = behaviour
    added, error = 0, "no failure"
    try:
        for i in range(40):
            added += 1
            service.add(SESSION, factory.user(f"Fact {i}: the locker code is {1000 + i}."))
    except LLMError as exc:
        cause = getattr(exc, "cause", None)
        kind = getattr(cause, "kind", None) or getattr(exc, "kind", "?")
        error = f"{type(exc).__name__} ({kind})"
    finally:
        server.default = type(behaviour).normal()
    working = service.session(SESSION).working
    return FailureCase(label, error, added, len(working), len(service.stored_ids(SESSION)))


def loopback_demo(*, budget: int = DEFAULTS["budget"], threshold: float = DEFAULTS["threshold"],
                  recall_limit: int = DEFAULTS["recall_limit"],
                  distractor_turns: int = DEFAULTS["distractor_turns"],
                  seed: int = DEFAULTS["seed"]) -> LoopbackReport:
    """Everything above through the real ``openai`` client and memorykit's loopback server."""
    import numpy as np

    from memorykit.llm import OpenAIEmbedder
    from memorykit.llm.testing import Behaviour, FakeOpenAIServer

    with FakeOpenAIServer(chat=loopback_responder) as server:
        client = server.client(timeout=5.0, max_retries=0)
        backend = openai_backend(client, LOOPBACK_MODEL, where="a loopback scripted server")
        loop = run_loop(backend, budget=budget, threshold=threshold, recall_limit=recall_limit,
                        distractor_turns=distractor_turns, seed=seed)
        reflect = reflect_demo(backend)
        texts = [p.question for p in loop.probes]
        vectors = OpenAIEmbedder(LOOPBACK_MODEL.replace("chat", "embedding"), client,
                                 dimension=64).embed(texts)
        match = bool(np.allclose(vectors, server.embedder.embed(texts), atol=1e-6))
        question = [{"role": "user", "content": loop.probes[0].question}]
        plain = backend.chat.complete(question)
        pieces = list(backend.chat.stream(question))
        failures = (
            _failure_case(server, Behaviour.slow(2.0), "timeout"),
            _failure_case(server, Behaviour.error(500), "HTTP 500"),
            _failure_case(server, Behaviour.malformed(), "malformed reply"),
        )
        counts: dict[str, int] = {}
        for r in server.requests:
            name = r.path.rstrip("/").rsplit("/v1/", 1)[-1]
            counts[name] = counts.get(name, 0) + 1
    return LoopbackReport(loop, reflect, counts, tuple(vectors.shape), match, len(pieces),
                          "".join(pieces) == plain, failures)


# ------------------------------------------------------------------ explorer
# A slider move replays the whole conversation through a fresh memory service. Most of
# that time went to work that depends only on a text, redone on every replay: the
# extractive summarizer's per-sentence analysis and token counts, and the embedding of
# each stored message and question. The explorer's offline components keep it per text:
# lesson 03's FastExtractiveSummarizer (identical output to ExtractiveSummarizer), a
# remembering token counter and embedder (tests/test_lessons_llm_memo.py compares the
# explorer's results with run_loop's).
class _MemoCounter:
    """A ``TokenCounter`` remembering the count of every text it has seen."""

    def __init__(self, counter: Any) -> None:
        self.encoding = counter.encoding
        self._count = lru_cache(maxsize=65536)(counter.count)

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {text!r} ({type(text).__name__})")
        return self._count(text)


class _MemoEmbedder:
    """A ``LexicalHashingEmbedder`` remembering the vector of every single text it embedded.

    Only one-text calls are remembered (the explorer's service stores in batches of
    one and embeds one question at a time); others go straight to the embedder.
    """

    def __init__(self) -> None:
        from memorykit.embeddings import LexicalHashingEmbedder

        self._inner = LexicalHashingEmbedder()
        self.dimension = self._inner.dimension
        self.name = self._inner.name
        self._rows: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        if isinstance(texts, str) or len(texts) != 1 or not isinstance(texts[0], str):
            return self._inner.embed(texts)
        row = self._rows.get(texts[0])
        if row is None:
            row = self._rows[texts[0]] = self._inner.embed(texts)
            row.flags.writeable = False
        return row.copy()


@lru_cache(maxsize=1)
def _explorer_components() -> tuple[Backend, _MemoEmbedder]:
    """The explorer's offline backend (memoizing summarizer) and embedder, built once."""
    from memorykit.lessons.summary_app import FastExtractiveSummarizer
    from memorykit.tokens import Tokenizer

    base = offline_backend()
    summarizer = FastExtractiveSummarizer(_MemoCounter(Tokenizer()))
    backend = Backend(base.kind, base.description, base.chat, summarizer, base.critic, base.actor)
    return backend, _MemoEmbedder()


@lru_cache(maxsize=64)
def _offline_loop(budget: int, threshold: float, recall_limit: int, distractor_turns: int,
                  seed: int) -> LoopResult:
    backend, embedder = _explorer_components()
    return run_loop(backend, budget=budget, threshold=threshold, recall_limit=recall_limit,
                    distractor_turns=distractor_turns, seed=seed, embedder=embedder)


class LoopExplorer(LessonExplorer):
    """Working-memory budget, summary threshold and recall_limit vs tokens sent per probe.

    Always the offline components (a slider never calls a model).
    """

    title = "Tokens sent per call"

    def __init__(self, distractor_turns: int = DEFAULTS["distractor_turns"],
                 seed: int = DEFAULTS["seed"], **params: Any) -> None:
        self.distractor_turns = require_int("distractor_turns", distractor_turns, minimum=0)
        self.seed = require_int("seed", seed, minimum=0)
        super().__init__(**params)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        p = {**DEFAULTS, **params}
        return {
            "budget": int_slider("working-memory budget", p["budget"], 300, 2000, 100),
            "threshold": float_slider("summary threshold", p["threshold"], 0.5, 0.95, 0.05),
            "recall_limit": int_slider("recall_limit", p["recall_limit"], 0, 8, 1),
        }

    def _make_figure(self) -> Any:
        go = _go()
        fig = go.FigureWidget()
        for name, color in (("recalled", "#d62728"), ("working memory", "#1f77b4"),
                            ("current input", "#7f7f7f")):
            fig.add_bar(name=name, x=[], y=[], marker_color=color)
        fig.update_layout(barmode="stack", height=360, title=self.title,
                          xaxis_title="probe (✓ fact in the context)",
                          yaxis_title="prompt tokens sent", margin=dict(t=50, b=40))
        return fig

    def _compute(self, budget: int, threshold: float, recall_limit: int) -> LoopResult:
        return _offline_loop(int(budget), float(threshold), int(recall_limit),
                             self.distractor_turns, self.seed)

    def _draw(self, result: LoopResult) -> None:
        x = [f"{p.fact_id} {'✓' if p.fact_in_context else '✗'}" for p in result.probes]
        for trace, attr in zip(self.fig.data, ("recalled_tokens", "working_tokens",
                                               "current_tokens")):
            trace.x = x
            trace.y = [getattr(p, attr) for p in result.probes]

    def summary(self) -> dict[str, Any]:
        s = self.result.summary()
        return {**self.params, **{k: s[k] for k in ("summarizations", "facts_in_context",
                                                     "facts_recalled", "answered",
                                                     "mean_tokens_per_call")}}


__all__ = [
    "DEFAULTS", "Backend", "FailureCase", "LoopExplorer", "LoopResult", "LoopbackReport", "Probe",
    "ReflectResult", "choose_backend", "loopback_demo", "loopback_responder", "make_service",
    "memory_reader", "memory_reader_reply", "offline_backend", "openai_backend", "reflect_demo",
    "run_loop", "safe_url",
]
