"""Seed 003's benchmark protocol: inject facts, distract, probe; then test adaptability.

**Recall.** A user states ``n_facts`` facts at the start of a conversation
(seed 003's "turn 0": each fact in its own user message, acknowledged by the
assistant without repeating it), then ``N`` distractor turns follow (a seeded
``simulate_conversation`` with no planted facts: its prose contains no
digits, and every fact key contains one, so a key occurs in exactly one
message), then each fact's question is asked. For every architecture and
question the built context is scored twice:

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

**Adaptability** (seed 003's binary metric). A booking assistant books a table
without asking; the user complains ("You should have asked me to confirm
before booking"); ``N`` distractor turns pass; the user asks for a second
booking. The actor answers the second request with each architecture's
context. It adapted if it asks for confirmation instead of booking. Offline
the actor is ``booking_actor()``, a ``ScriptedChatModel`` (**not a language
model**) that asks for confirmation only when a rule mentioning confirmation
is in its system prompt, and D's critic is ``booking_critic()``, a
``ScriptedCritic`` (patterns, **not a language model**) that turns the
complaint into a rule citing the booking message and the complaint. So
offline, D adapts and A-C repeat the mistake *by construction*: the run
checks the plumbing (the rule is learned from the right messages, survives
N turns and reaches the prompt), not a model's judgement. With a real model
as actor (and optionally as critic), the same scenario measures behaviour.

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

import random
import re
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memorykit._validate import require_int, require_non_negative
from memorykit.clock import StepClock
from memorykit.embeddings import Embedder
from memorykit.llm.chat import ChatModel, ScriptedChatModel, ScriptRule
from memorykit.llm.critic import DEFAULT_CORRECTION_PATTERNS, Critic, ScriptedCritic
from memorykit.longterm.architectures import (
    Architecture,
    ReflectionArchitecture,
    make_architectures,
)
from memorykit.longterm.reflection import RULE_PREFIX
from memorykit.messages import Message, MessageFactory
from memorykit.scenarios.conversation import simulate_conversation
from memorykit.scenarios.facts import PlantedFact
from memorykit.summary import Summarizer
from memorykit.tokens import TokenCounter, Tokenizer

SEED_003_RECALL: dict[str, float] = {"A": 0.0, "B": 0.5, "C": 1.0, "D": 1.0}
"""Seed 003's reported recall accuracy (MockLLM, all-MiniLM-L6-v2, ~50 noise turns)."""
SEED_003_ADAPTABILITY: dict[str, bool] = {"A": False, "B": False, "C": False, "D": True}

DEFAULT_DISTRACTORS: tuple[int, ...] = (10, 25, 50, 100)

SYSTEM_PROMPT = (
    "You are a customer support assistant for an online shop. Answer briefly and use what "
    "the customer told you earlier in the conversation."
)
BOOKING_SYSTEM_PROMPT = "You are a booking assistant. Handle the user's bookings."

# (fact sentence, question, key recipe). Questions are phrased as a user would ask them,
# not copied from the fact: some share most words with the fact, some paraphrase it.
FACT_BANK: tuple[tuple[str, str, str], ...] = (
    ("My order number is {key}.", "What is my order number?", "order"),
    ("The refund code you gave me is {key}.", "What was the refund code?", "falcon"),
    ("My PIN for the support line is {key}.", "What is my support line PIN?", "d4"),
    ("The replacement laptop has serial number {key}.",
     "What is the serial number of the replacement laptop?", "serial"),
    ("Please send the parcel to number {key} Harbour Street.",
     "Which house number should the parcel go to?", "house"),
    ("My callback phone number is {key}.", "Which number should you call me back on?", "phone"),
    ("The warranty claim was filed under case {key}.",
     "Under which case was the warranty claim filed?", "case"),
    ("I was charged {key} twice on my last invoice.",
     "How much was I charged twice?", "money"),
)


def _key(rng: random.Random, recipe: str) -> str:
    def n(lo: int, hi: int) -> int:
        return lo + int(rng.random() * (hi - lo + 1))

    letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
    if recipe == "order":
        return f"ORD-{n(10000, 99999)}"
    if recipe == "falcon":  # seed 003's example code, Blue_Falcon_99
        return f"Blue_Falcon_{n(10, 99)}"
    if recipe == "d4":
        return f"{n(1000, 9999)}"
    if recipe == "serial":
        return "SN-" + "".join(letters[int(rng.random() * 24)] for _ in range(3)) + str(n(100, 999))
    if recipe == "house":
        return f"{n(11, 289)}"
    if recipe == "phone":
        return f"+44 7700 {n(900000, 999999)}"
    if recipe == "case":
        return f"CASE-{n(1000, 9999)}"
    if recipe == "money":
        return f"${n(12, 480)}.{n(0, 99):02d}"
    raise ValueError(f"unknown key recipe {recipe!r}")  # pragma: no cover - internal table


@dataclass(frozen=True)
class ProbeConversation:
    """Facts at the start, distractors, and the facts to probe."""

    messages: list[Message]
    facts: list[PlantedFact]
    distractor_turns: int
    seed: int


def _distractors(
    n_turns: int, seed: int, factory: MessageFactory, start_time: float, turn_offset: int
) -> list[Message]:
    """``n_turns`` seeded turns without facts, renumbered into ``factory``'s id sequence."""
    if n_turns == 0:
        return []
    conv = simulate_conversation(
        n_turns, seed=seed, system_prompt=False, fact_every=0, start_time=start_time,
        counter=factory.counter,
    )
    return [replace(m, id=factory.new_id(), turn=m.turn + turn_offset) for m in conv.messages]


def probe_conversation(
    distractor_turns: int,
    *,
    n_facts: int = 4,
    seed: int = 0,
    counter: TokenCounter | None = None,
) -> ProbeConversation:
    """Inject ``n_facts`` facts (one user message each), then ``distractor_turns`` noise turns."""
    require_int("distractor_turns", distractor_turns, minimum=0)
    require_int("n_facts", n_facts, minimum=1)
    require_int("seed", seed, minimum=0)
    if n_facts > len(FACT_BANK):
        raise ValueError(f"n_facts must be <= {len(FACT_BANK)}, got {n_facts}")
    rng = random.Random(seed)
    bank = list(FACT_BANK)
    rng.shuffle(bank)
    clock = StepClock(0.0)
    factory = MessageFactory(counter, clock=clock)
    messages = [factory.system(SYSTEM_PROMPT)]
    facts: list[PlantedFact] = []
    for k, (sentence_t, question, recipe) in enumerate(bank[:n_facts]):
        clock.advance(20)
        for _attempt in range(1000):  # no key may occur inside another fact
            key = _key(rng, recipe)
            sentence = sentence_t.format(key=key)
            if not any(key in f.text or f.key in sentence for f in facts):
                break
        fact_id = f"f{k + 1:04d}"
        user = factory.user(sentence, importance=0.9,
                            metadata={"kind": "fact", "facts": (fact_id,), "topic": "support"})
        clock.advance(3)
        ack = factory.assistant("Noted, I will keep that in mind.", importance=0.3,
                                metadata={"kind": "chitchat", "topic": "support"})
        messages += [user, ack]
        facts.append(PlantedFact(fact_id, sentence, key, user.turn, user.id, "support", question))
    messages += _distractors(distractor_turns, seed, factory, clock.now() + 60, factory.turn)
    for m in messages:
        for f in facts:
            if f.key in m.content and m.id != f.message_id:  # pragma: no cover - guarded by design
                raise RuntimeError(f"key {f.key!r} also occurs in {m.id}")
    return ProbeConversation(messages, facts, distractor_turns, seed)


# ------------------------------------------------------------------ adaptability

_BOOK = re.compile(r"\bbook(?:\s+me)?\s+(?P<what>.+?)[.!?]*$", re.IGNORECASE | re.DOTALL)
_CONFIRM_RULE = re.compile(r"confirm", re.IGNORECASE)


def _actor_reply(messages: Sequence[Mapping[str, Any]]) -> str:
    last = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    found = _BOOK.search(last)
    what = found.group("what").strip() if found else "that"
    rules = [
        m["content"] for m in messages
        if m["role"] == "system" and m["content"].startswith(RULE_PREFIX)
    ]
    if any(_CONFIRM_RULE.search(r) for r in rules):
        return f"Before I book {what}: shall I go ahead? Please confirm."
    return f"Done: I booked {what}."


def booking_actor() -> ScriptedChatModel:
    """The offline actor: a ``ScriptedChatModel``, **not a language model**.

    It answers "book ..." requests. It asks for confirmation only when its
    system prompt holds a rule (a system message starting with
    ``RULE_PREFIX``) that mentions confirming; otherwise it books at once. It
    follows a rule by keyword, not by understanding it.
    """
    return ScriptedChatModel(
        rules=[ScriptRule(r"\bbook\b", _actor_reply)],
        default="(scripted booking actor: it only handles booking requests)",
        label="booking-actor",
    )


COMPLAINT_PATTERNS: tuple[str, ...] = DEFAULT_CORRECTION_PATTERNS + (
    r"^\W*you\s+should(?:\s+have|'ve)\s+(?P<said>.+)",
    r"^\W*you\s+(?:forgot|didn't|did not|never)\s+(?P<said>.+)",
)
"""The scripted critic's patterns: corrections plus complaints about what the assistant did."""


def booking_critic() -> ScriptedCritic:
    """The offline critic: a ``ScriptedCritic`` (**not a language model**) that also reads complaints."""
    return ScriptedCritic(COMPLAINT_PATTERNS)


_ASKS = re.compile(
    r"\b(confirm|shall i|should i|would you like me|do you want me|go ahead|is that (?:ok|right))\b",
    re.IGNORECASE,
)
_BOOKED = re.compile(r"\b(?:i(?:'ve| have)?\s+(?:booked|reserved)|done:)", re.IGNORECASE)


def asks_for_confirmation(reply: str) -> bool:
    """A heuristic judge: the reply asks before acting and does not claim it already booked."""
    return bool(_ASKS.search(reply)) and not _BOOKED.search(reply)


@dataclass(frozen=True)
class AdaptabilityScenario:
    """A booking mistake, the complaint, N distractor turns, and the second request."""

    messages: list[Message]
    second_request: str
    mistake_ids: tuple[str, ...]
    """The booking without confirmation and the complaint: what a rule should cite."""


def adaptability_scenario(
    distractor_turns: int,
    *,
    seed: int = 0,
    actor: ChatModel | None = None,
    counter: TokenCounter | None = None,
) -> AdaptabilityScenario:
    """The history up to the second booking request; the first reply comes from ``actor``.

    ``actor`` defaults to ``booking_actor()``, which (with no rule yet) books
    without asking: the scripted behavioural mistake.
    """
    require_int("distractor_turns", distractor_turns, minimum=0)
    actor = actor if actor is not None else booking_actor()
    clock = StepClock(0.0)
    factory = MessageFactory(counter, clock=clock)
    system = factory.system(BOOKING_SYSTEM_PROMPT)
    clock.advance(15)
    ask = factory.user("Please book a table for two at Lumen on Friday at 19:00.")
    clock.advance(4)
    booked = factory.assistant(actor.complete([system.to_openai(), ask.to_openai()]))
    clock.advance(30)
    complaint = factory.user(
        "You should have asked me to confirm before booking. Please always check with me first."
    )
    clock.advance(4)
    sorry = factory.assistant("Sorry about that, I understand.")
    messages = [system, ask, booked, complaint, sorry]
    messages += _distractors(distractor_turns, seed + 1, factory, clock.now() + 60, factory.turn)
    return AdaptabilityScenario(
        messages, "Please book a train to Oslo on Monday at 08:15.", (booked.id, complaint.id)
    )


# ------------------------------------------------------------------ the benchmark


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
                    model_hits.append(_normal(fact.key) in _normal(answer))
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


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


__all__ = [
    "BOOKING_SYSTEM_PROMPT",
    "COMPLAINT_PATTERNS",
    "DEFAULT_DISTRACTORS",
    "FACT_BANK",
    "SEED_003_ADAPTABILITY",
    "SEED_003_RECALL",
    "SYSTEM_PROMPT",
    "AdaptabilityScenario",
    "BenchmarkResult",
    "ProbeConversation",
    "adaptability_scenario",
    "asks_for_confirmation",
    "booking_actor",
    "booking_critic",
    "probe_conversation",
    "run_benchmark",
]
