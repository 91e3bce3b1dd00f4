"""Seed 003's probe questions through seed 004's memory service, asked of a chat model.

* ``make_service(summarizer, budget=, threshold=, recall_limit=)``: seed 004's memory
  service: a ``SummaryBuffer`` working memory (target 0.2 under the threshold) plus the
  long-term store and auto-recall with the current input as query.
* ``run_loop(backend, conv, ...)``: every message of a ``ProbeConversation`` added to a
  fresh service; then, for every planted fact, the context ``[recalled] + [working
  memory] + [current input]`` built for its question is sent to the backend's chat
  model. A ``LoopResult`` says, per probe, the tokens sent by part, what was recalled,
  whether the fact's key was in the context and whether the reply quotes it.
* ``failure_case(server, behaviour, label)``: the same service on a loopback server
  whose summarizer calls fail (timeout, HTTP 500, malformed reply): the error the
  memory saw, and that every message added is still kept (``FailureCase.nothing_lost``).
* ``loopback_responder``: the scripted replies (not a model) of that loopback server
  for this loop: summaries, critiques, rule-following and memory reading.

Taught in ``notebooks/11_llm_in_the_loop.ipynb``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_optional_int, require_real, require_str
from memorykit.buffers.summary_buffer import SummaryBuffer
from memorykit.embeddings import Embedder
from memorykit.llm.backend import Backend, memory_reader_reply
from memorykit.llm.chat import ChatModel, OpenAIChatModel
from memorykit.llm.client import LLMError
from memorykit.llm.critic import DEFAULT_CRITIC_PROMPT
from memorykit.llm.summarizer import DEFAULT_SUMMARY_PROMPT, OpenAISummarizer
from memorykit.longterm.reflection import RULE_PREFIX
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.messages import MessageFactory
from memorykit.classroom.scenarios.probes import ProbeConversation
from memorykit.summary import Summarizer
from memorykit.tokens import TokenCounter


@dataclass(frozen=True)
class LoopProbe:
    """One question sent with the memory's context, and what came back."""

    fact_id: str
    question: str
    key: str
    tokens: int
    """Billed prompt tokens sent: recalled + working + current (reply primer included)."""
    recalled_tokens: int
    working_tokens: int
    current_tokens: int
    recalled_ids: tuple[str, ...]
    fact_in_context: bool
    fact_recalled: bool
    """The fact's own message is among what long-term recall brought back."""
    answered: bool
    """The reply quotes the fact's key."""
    reply: str
    error: str | None = None
    """How the chat call failed (type and kind), None when it answered; a failed call is
    recorded, never raised: the other probes still run."""


@dataclass(frozen=True)
class LoopResult:
    backend: str
    """"openai" or "offline"."""
    components: dict[str, str]
    probes: tuple[LoopProbe, ...]
    messages: int
    stored: int
    working: int
    summarizations: int
    chat_calls: int
    params: dict[str, Any] = field(default_factory=dict)
    summarized_facts: tuple[str, ...] = ()
    """Facts whose message working memory replaced by a summary (their first summaries are
    ``first_summaries``'s)."""
    kept_by_summary: tuple[str, ...] = ()
    """Of those, the facts whose key the first summary of them quotes (the rest it lost)."""
    fact_messages: dict[str, str] = field(default_factory=dict)
    """The message id of every planted fact, by fact id."""

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
            "failed_calls": sum(p.error is not None for p in self.probes),
            "facts_summarized": len(self.summarized_facts),
            "facts_kept_by_summary": len(self.kept_by_summary),
        }

    def rows(self) -> list[dict[str, Any]]:
        return [{"fact": p.fact_id, "tokens": p.tokens, "recalled": len(p.recalled_ids),
                 "in_context": p.fact_in_context, "answered": p.answered} for p in self.probes]


def make_service(summarizer: Summarizer, *, budget: int, threshold: float, recall_limit: int,
                 batch_size: int = 1, embedder: Embedder | None = None,
                 counter: TokenCounter | None = None) -> MemoryService:
    """Seed 004's memory service: a SummaryBuffer working memory plus auto-recall.

    ``embedder`` None is the service's default (``LexicalHashingEmbedder()``); ``counter``
    (default ``Tokenizer()``) prices the summaries and the context's items.
    """
    target = round(require_real("threshold", threshold) - 0.2, 4)
    factory = None if counter is None else MessageFactory(counter, id_prefix="summary")

    def working_memory() -> SummaryBuffer:
        return SummaryBuffer(budget, threshold, target, summarizer=summarizer, factory=factory)

    working_memory()  # made per session, later: bad settings fail here instead
    return MemoryService(working_memory,
                         LongTermSettings(recall_limit=recall_limit, batch_size=batch_size),
                         embedder=embedder, counter=counter)


def probe(service: MemoryService, session: str, conv: ProbeConversation,
          chat: ChatModel | None, *, reply_tokens: int | None = None) -> tuple[LoopProbe, ...]:
    """Ask every planted fact's question with the session's context; ``chat`` answers
    (None: nothing is asked, replies are empty) in at most ``reply_tokens`` tokens (None: the
    model's own limit, which for a small local model can be its whole context window)."""
    require_optional_int("reply_tokens", reply_tokens, minimum=1, maximum=1_000_000)
    out = []
    for fact in conv.facts:
        ctx = service.get_context(session, fact.question)
        parts = {"recalled": 0, "working": 0, "query": 0}
        for item in ctx.items:
            parts[item.kind if item.kind in ("recalled", "query") else "working"] += item.tokens
        recalled = tuple(s for i in ctx.items if i.kind == "recalled" for s in i.sources)
        in_context = any(fact.key in i.content for i in ctx.items if i.kind != "query")
        reply, error = "", None
        try:
            reply = (chat.complete(ctx.to_openai(), max_tokens=reply_tokens)
                     if chat is not None else "")
        except LLMError as exc:  # a dead endpoint fails this probe, not the run
            error = f"{type(exc).__name__} ({getattr(exc, 'kind', 'error')})"
            reply = f"(no reply: {exc})"
        out.append(LoopProbe(fact.id, fact.question, fact.key, ctx.tokens, parts["recalled"],
                             parts["working"], parts["query"] + ctx.chat_format.reply_primer,
                             recalled, in_context, fact.message_id in recalled,
                             error is None and fact.key in reply, reply, error))
    return tuple(out)


def run_loop(backend: Backend, conv: ProbeConversation, *, budget: int, threshold: float,
             recall_limit: int, embedder: Embedder | None = None,
             counter: TokenCounter | None = None, session: str = "probes",
             reply_tokens: int | None = None) -> LoopResult:
    """Add ``conv`` to a fresh memory service (``make_service`` with the backend's
    summarizer, ``embedder`` and ``counter``) and send every probe to the backend's chat
    model (replies capped at ``reply_tokens``)."""
    if not isinstance(backend, Backend):
        raise TypeError(f"backend must be a Backend, got {backend!r}")
    require_str("session", session, non_empty=True)
    service = make_service(backend.summarizer, budget=budget, threshold=threshold,
                           recall_limit=recall_limit, embedder=embedder, counter=counter)
    kept = first_summaries(service, session, conv)
    before = getattr(backend.chat, "calls", 0)
    probes = probe(service, session, conv, backend.chat, reply_tokens=reply_tokens)
    working = service.session(session).working
    return LoopResult(
        backend.kind, backend.components(), probes, len(conv.messages),
        len(service.stored_ids(session)), len(working), len(working.trace.summarizations()),
        getattr(backend.chat, "calls", 0) - before,
        {"budget": budget, "threshold": threshold, "recall_limit": recall_limit,
         "distractor_turns": conv.distractor_turns, "seed": conv.seed},
        tuple(kept), tuple(f for f, k in kept.items() if k),
        {f.id: f.message_id for f in conv.facts},
    )


def survival_by_writer(result: LoopResult,
                       writer_of: Callable[[str], str | None]) -> dict[str, int]:
    """The facts whose first summary ``writer_of(message_id)`` says the model wrote, how
    many of them that summary kept and lost, and how many another writer summarized
    (a ``FallbackSummarizer``'s fallback)."""
    mine = [f for f in result.summarized_facts
            if writer_of(result.fact_messages[f]) == "model"]
    kept = sum(f in result.kept_by_summary for f in mine)
    return {"facts_summarized_by_the_model": len(mine), "kept": kept, "lost": len(mine) - kept,
            "facts_summarized_by_the_fallback": len(result.summarized_facts) - len(mine)}


def first_summaries(service: MemoryService, session: str,
                    conv: ProbeConversation) -> dict[str, bool]:
    """Add ``conv``'s messages to ``session``; for every fact whose message working memory
    summarized, whether the summary that first replaced it quotes the fact's key (the
    fact-survival probe of the summarizer itself: later rounds or evictions are not its
    doing). Facts never summarized are left out."""
    fact_of = {f.message_id: f for f in conv.facts}
    kept: dict[str, bool] = {}
    seen = 0
    for m in conv.messages:
        service.add(session, m)
        working = service.session(session).working
        events = working.trace.summarizations()
        for event in events[seen:]:
            text = next((s.content for s in working.summaries() if s.id == event.summary_id), "")
            for fact in (fact_of[i] for i in event.covered_ids if i in fact_of):
                kept.setdefault(fact.id, fact.key in text)
        seen = len(events)
    return kept


# ------------------------------------------------------------------ loopback
@dataclass(frozen=True)
class FailureCase:
    behaviour: str
    error: str
    """The exception type and ``kind`` of the summarizer's failure, as the buffer recorded it."""
    added: int
    kept_in_working: int
    evicted_from_working: int
    """Messages the summary buffer evicted instead of summarizing (rule summary-fallback-fifo)."""
    stored_long_term: int
    within_budget: bool
    """Whether the working memory stayed within its hard budget after every add."""

    @property
    def nothing_lost(self) -> bool:
        """Every message added is still in working memory or was evicted on the record, and
        every one is stored long-term."""
        return self.kept_in_working + self.evicted_from_working == self.added == self.stored_long_term

    def describe(self) -> str:
        """One printable line."""
        return (f"failure {self.behaviour}: {self.error}; added {self.added}, kept in working "
                f"memory {self.kept_in_working}, evicted instead of summarized "
                f"{self.evicted_from_working}, stored long-term {self.stored_long_term}, within "
                f"budget {self.within_budget}, nothing lost: {self.nothing_lost}")


def failure_case(server: Any, behaviour: Any, label: str, *, model: str) -> FailureCase:
    """Add numbered facts to a small service whose summarizer asks ``model`` on ``server``
    (a ``FakeOpenAIServer``) misbehaving as ``behaviour``, until a summary call has failed and
    the summary buffer has evicted instead of summarizing; ``add`` never raises."""
    chat = OpenAIChatModel(model, server.client(timeout=0.5, max_retries=0))
    service = make_service(OpenAISummarizer(chat), budget=200, threshold=0.8, recall_limit=3)
    factory = MessageFactory()
    session = "failures"
    server.default = behaviour
    added, within = 0, True
    try:
        for i in range(40):
            added += 1
            service.add(session, factory.user(f"Fact {i}: the locker code is {1000 + i}."))
            working = service.session(session).working
            within = within and working.tokens <= working.max_tokens
            if working.summarizer_failures and working.trace.counts.get("eviction", 0):
                break  # a failure, and the eviction that replaced summarizing
    finally:
        server.default = type(behaviour).normal()
    working = service.session(session).working
    exc = working.last_summarizer_error
    kind = getattr(getattr(exc, "cause", None), "kind", None) or getattr(exc, "kind", "?")
    error = "no failure" if exc is None else f"{type(exc).__name__} ({kind})"
    evicted = sum(len(e.message_ids) for e in working.trace.evictions())
    return FailureCase(label, error, added, len(working), evicted,
                       len(service.stored_ids(session)), within)


_LINE = re.compile(r"^\[(?P<id>[^\]]+)\] (?P<role>[^:]+): (?P<text>.*)$")
_COMPLAINT = re.compile(r"^\W*(you should|you forgot|no,|actually)", re.IGNORECASE)


def loopback_responder(messages: Sequence[Mapping[str, Any]]) -> str:
    """The scripted server's replies (not a model): summaries, critiques, memory reading.

    A summary request gets the first words of the transcript; a critique request
    gets one JSON rule citing the first complaint and the assistant message
    before it; a prompt holding a rule gets a reply asking to confirm; anything else
    is answered by ``memory_reader_reply``.
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


__all__ = [
    "FailureCase", "LoopProbe", "LoopResult", "failure_case", "first_summaries", "loopback_responder",
    "make_service", "probe", "run_loop", "survival_by_writer",
]
