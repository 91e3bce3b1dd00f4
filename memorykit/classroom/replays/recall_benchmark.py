"""Seed 003's recall benchmark: A-D on inject / distract / probe, plus adaptability.

``run_benchmark(distractors)`` builds, for each distractor count N, seed 003's probe
conversation and booking scenario (``memorykit.classroom.scenarios.probes``), lets each
architecture ingest the history and scores the context it builds for every question:

* ``recall_key``: the fact's key (say "ORD-48213") appears in the text of the
  context. This is what a reader model needs to answer, and it is checked
  without a model;
* ``recall_evidence``: the message that stated the fact is among the
  context's provenance (``context.covered_ids()``). An episode summary that
  covers the message but dropped the key counts here and not above; that gap
  is seed 003's "abstracted ghost" measured.

With a ``ChatModel`` (``answer_model``) a third number, ``recall_model``, asks
the model the question with the context and checks that its answer contains
the key. Offline it is None: nothing pretends to be a reader model.

**Adaptability**: the actor answers the scenario's second booking request with each
architecture's context; it adapted if it asks for confirmation instead of booking.
Offline actor and critic are scripted (see ``memorykit.classroom.scenarios.probes``): D adapts
and A-C repeat the mistake by construction. With a real model as actor (and
optionally as critic), the same scenario measures behaviour.

**Cost.** ``tokens_per_call``: billed prompt tokens of the built context
(``memorykit.tokens`` accounting, reply primer included), mean over the
probes. ``latency_ms``: ``time.perf_counter`` around ``build_context`` once
the memory has ingested the history (so it is the per-question cost: recall
and assembly), median over the probes; ``ingest_ms``: the time to ingest the
history (consolidation, embedding, reflection). Absolute times depend on the
machine; compare ratios. ``critic_tokens``: what D's critic read (what an LLM
critic would be billed; the scripted critic costs nothing).

Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_int
from memorykit.embeddings import Embedder
from memorykit.llm.chat import ChatModel
from memorykit.llm.critic import Critic
from memorykit.longterm.architectures import (
    Architecture,
    ReflectionArchitecture,
    make_architectures,
)
from memorykit.classroom.scenarios.probes import (
    adaptability_scenario,
    asks_for_confirmation,
    booking_actor,
    booking_critic,
    probe_conversation,
)
from memorykit.summary import Summarizer
from memorykit.tokens import TokenCounter, Tokenizer

SEED_003_RECALL: dict[str, float] = {"A": 0.0, "B": 0.5, "C": 1.0, "D": 1.0}
"""Seed 003's reported recall accuracy (MockLLM, all-MiniLM-L6-v2, ~50 noise turns)."""
SEED_003_ADAPTABILITY: dict[str, bool] = {"A": False, "B": False, "C": False, "D": True}

DEFAULT_DISTRACTORS: tuple[int, ...] = (10, 25, 50, 100)


@dataclass
class BenchmarkResult:
    """A tidy table (one row per distractor count and architecture) and how it was made."""

    rows: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)

    COLUMNS = (
        "architecture", "distractors", "recall_key", "recall_evidence", "recall_model",
        "tokens_per_call", "latency_ms", "ingest_ms", "adaptability", "critic_tokens",
    )

    def summary(self) -> list[dict[str, Any]]:
        """One row per architecture: means over the distractor counts."""
        out = []
        for arch in dict.fromkeys(r["architecture"] for r in self.rows):
            rows = [r for r in self.rows if r["architecture"] == arch]
            model = [r["recall_model"] for r in rows if r["recall_model"] is not None]
            out.append({
                "architecture": arch,
                "recall_key": statistics.fmean(r["recall_key"] for r in rows),
                "recall_evidence": statistics.fmean(r["recall_evidence"] for r in rows),
                "recall_model": statistics.fmean(model) if model else None,
                "tokens_per_call": statistics.fmean(r["tokens_per_call"] for r in rows),
                "latency_ms": statistics.median(r["latency_ms"] for r in rows),
                "adaptability": statistics.fmean(float(r["adaptability"]) for r in rows),
                "seed_003_recall": SEED_003_RECALL.get(arch[0]),
            })
        return out

    def to_markdown(self, *, summary: bool = False) -> str:
        rows = self.summary() if summary else self.rows
        cols = list(rows[0]) if rows else list(self.COLUMNS)
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in rows:
            lines.append("| " + " | ".join(_cell(c, r[c]) for c in cols) + " |")
        return "\n".join(lines)


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if column.startswith("recall") or column in ("adaptability", "seed_003_recall"):
        return f"{value:.0%}"
    if isinstance(value, float):
        return f"{value:.2f}" if value < 10 else f"{value:.0f}"
    return str(value)


def run_benchmark(
    distractors: Sequence[int] = DEFAULT_DISTRACTORS,
    *,
    n_facts: int = 4,
    seed: int = 0,
    budget: int = 2000,
    window: int = 20,
    embedder: Embedder | None = None,
    summarizer: Summarizer | None = None,
    critic: Critic | None = None,
    actor: ChatModel | None = None,
    answer_model: ChatModel | None = None,
    counter: TokenCounter | None = None,
    architectures: Callable[[], Mapping[str, Architecture]] | None = None,
) -> BenchmarkResult:
    """Seed 003's protocol over ``distractors`` (one conversation per count), A-D.

    Offline defaults: lexical embedder, extractive summarizer, scripted critic
    and actor, no answer model. Pass an ``OpenAIEmbedder`` /
    ``SentenceTransformerEmbedder``, ``OpenAISummarizer``, ``OpenAICritic`` and
    ``OpenAIChatModel`` (as ``actor`` and ``answer_model``) to measure with real
    models. ``architectures`` builds a fresh set per conversation (default:
    ``make_architectures`` with these components).
    """
    if isinstance(distractors, int) or not distractors:
        raise ValueError(f"distractors must be a non-empty list of turn counts, got {distractors!r}")
    for n in distractors:
        require_int("distractors[]", n, minimum=0)
    require_int("budget", budget, minimum=1)
    counter = counter if counter is not None else Tokenizer()
    actor = actor if actor is not None else booking_actor()
    critic_factory: Callable[[], Critic] = (lambda: critic) if critic is not None else booking_critic

    def build() -> Mapping[str, Architecture]:
        if architectures is not None:
            return architectures()
        return make_architectures(window=window, embedder=embedder, summarizer=summarizer,
                                  critic=critic_factory(), counter=counter)

    rows: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for n in distractors:
        conv = probe_conversation(n, n_facts=n_facts, seed=seed, counter=counter)
        scenario = adaptability_scenario(n, seed=seed, counter=counter)
        for label, arch in build().items():
            t0 = time.perf_counter()
            arch.sync(conv.messages)
            ingest = (time.perf_counter() - t0) * 1000
            key_hits, evidence_hits, model_hits, tokens, latencies = [], [], [], [], []
            for fact in conv.facts:
                t0 = time.perf_counter()
                ctx = arch.build_context(conv.messages, fact.question, budget)
                latencies.append((time.perf_counter() - t0) * 1000)
                tokens.append(ctx.tokens)
                text = "\n".join(item.content for item in ctx.items)
                key_hits.append(fact.key in text)
                evidence_hits.append(fact.message_id in ctx.covered_ids())
                if answer_model is not None:
                    answer = answer_model.complete(ctx.to_openai(), max_tokens=80)
                    model_hits.append(answer_contains_key(answer, fact.key))
            ctx = arch.build_context(scenario.messages, scenario.second_request, budget)
            reply = actor.complete(ctx.to_openai(), max_tokens=120)
            critic_tokens = (
                arch.reflection.critic_input_tokens if isinstance(arch, ReflectionArchitecture)
                else 0
            )
            names[label] = arch.name
            rows.append({
                "architecture": f"{label} {arch.name.split('-', 1)[1]}",
                "distractors": n,
                "recall_key": statistics.fmean(key_hits),
                "recall_evidence": statistics.fmean(evidence_hits),
                "recall_model": statistics.fmean(model_hits) if model_hits else None,
                "tokens_per_call": statistics.fmean(tokens),
                "latency_ms": statistics.median(latencies),
                "ingest_ms": ingest,
                "adaptability": asks_for_confirmation(reply),
                "critic_tokens": critic_tokens,
            })
    d = build()["D"] if architectures is None else None
    config = {
        "distractors": list(distractors), "n_facts": n_facts, "seed": seed, "budget": budget,
        "window": window,
        "embedder": getattr(embedder, "name", "lexical-hashing-512+bigrams (default)"),
        "summarizer": getattr(summarizer, "name", "extractive (default, not an LLM)"),
        "critic": getattr(d.critic if d is not None else critic, "name", "?"),
        "actor": getattr(actor, "name", "?"),
        "answer_model": getattr(answer_model, "name", None),
        "architectures": names,
    }
    return BenchmarkResult(rows, config)


def answer_contains_key(answer: str, key: str) -> bool:
    """The scoring rule for a reader's answer: the fact's key occurs in it, compared without
    case and with runs of whitespace as one space ("blue_falcon_12" answers Blue_Falcon_12;
    "Blue Falcon 12" does not: the key is exact, as a code must be)."""
    def normal(text: str) -> str:
        return " ".join(text.lower().split())

    return normal(key) in normal(answer)


__all__ = [
    "DEFAULT_DISTRACTORS",
    "SEED_003_ADAPTABILITY",
    "SEED_003_RECALL",
    "BenchmarkResult",
    "answer_contains_key",
    "run_benchmark",
]
