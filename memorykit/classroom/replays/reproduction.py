"""Seed 003's comparison reproduced faithfully: A-D answered by a reader model, with intervals.

``run_reproduction(settings, chat=..., embedder=...)`` follows seed 003's protocol as
written, where ``recall_benchmark`` (lesson 10's offline table) departs from it:

* **Inject**: ``n_facts`` facts stated by the user at the start (turn 0), one message
  each, phrased as the seed phrases them (``SEED_003_FACT_BANK``: "The code is
  Blue_Falcon_12." probed by "What is the code?", and "Where are keys?" verbatim).
* **Distract**: ``distractors`` noise turns (50, the seed's), at script speed: every
  message ``seconds_per_message`` after the previous one, so the whole conversation
  spans minutes, not the simulated hours that cost B its time-decay term.
* **Probe**: every fact's question, to each architecture, with no averaging over
  other distractor counts. Each architecture builds its context for the question and a
  **reader** model answers from that context alone. An answer is **correct** when it
  contains the fact's key (``answer_contains_key``: case and whitespace aside, the
  exact key: "a code" is wrong, "Blue_Falcon_12" right).
* B's episodes are written by the summarizer model, so a summary can drop a key; C
  and D embed with ``embedder`` at cosine threshold ``threshold`` (0.65); D's critic
  is the model too, run every ``reflect_every`` messages on the last ``critic_window``
  as the conversation is ingested (a running agent's reflection cycles).
* **Tokens**: input + output of every model call an architecture causes: the reader's
  for all four, plus the summarizer's for B and the critic's for D. With a real
  endpoint they are what it reported (its own tokenizer); otherwise counted with
  ``counter``.
* **Control**: the same reader is asked each question with nothing but the system
  prompt and the fact's own message before it. Its failures are the reader's, not the
  memory's: an architecture's recall cannot be expected above the control's.

Every probe is one Bernoulli trial; recall is reported with its Wilson 95% interval.
Model failures never stop the run: a failed summary becomes an episode that says so
(it holds no fact), a failed critique adds no rule, a failed answer counts as wrong,
and each is listed in ``failures``.

Without ``chat`` the offline stand-ins play the models (``memory_reader``, the
extractive summarizer, the scripted critic); they cost no model tokens except the
reader's, which are counted. Taught in ``notebooks/10_architectures.ipynb``; run by
``python -m bench.reproduce_003``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memorykit._validate import require_between, require_int, require_positive
from memorykit.embeddings import Embedder
from memorykit.classroom.replays.recall_benchmark import SEED_003_RECALL, answer_contains_key
from memorykit.llm.backend import memory_reader
from memorykit.llm.chat import ChatMessages, ChatModel
from memorykit.llm.client import LLMError, describe_error
from memorykit.llm.critic import Critic, OpenAICritic, Rule
from memorykit.llm.summarizer import OpenAISummarizer
from memorykit.longterm.architectures import (
    Architecture,
    EpisodicArchitecture,
    ReflectionArchitecture,
    make_architectures,
)
from memorykit.longterm.episodic import EpisodicSettings
from memorykit.longterm.reflection import ReflectionSettings
from memorykit.longterm.semantic import SemanticSettings
from memorykit.messages import Message
from memorykit.classroom.scenarios.prose import check_words
from memorykit.classroom.scenarios.probes import (
    SEED_003_FACT_BANK,
    ProbeConversation,
    booking_critic,
    probe_conversation,
)
from memorykit.summary import ExtractiveSummarizer, MemoSummarizer, Summarizer
from memorykit.tokens import TokenCounter, Tokenizer, count_chat_tokens

LETTERS = ("A", "B", "B'", "C", "D")
"""A-D as seed 003 defines them, and B' = B with T_q the question's content words
(memorykit's variant): with the seed's T_q (every word) a short probe sharing one keyword
cannot reach the threshold, so B' is where the summaries' losses show in recall. B' reads
the very summaries B's model wrote (memoized), so it costs no extra summarizer call."""


@dataclass(frozen=True)
class ReproductionSettings:
    """The protocol's sizes and thresholds (seed 003's values where it states them)."""

    conversations: int = 2
    """Independent conversations (seeds 0, 1, ...); probes = conversations x n_facts."""
    n_facts: int = 10
    """Facts injected at turn 0 of each conversation (at most the bank's 10)."""
    distractors: int = 50
    """Noise turns between the facts and the probes (seed 003: 50)."""
    seconds_per_message: float = 5.0
    """Script speed: the gap between consecutive messages, in seconds."""
    distractor_words: tuple[int, int] = (5, 40)
    """Bounds on a distractor reply's words (user turns are shorter): seed 003's noise
    turns are short scripted exchanges, and a 135M model on 2 cores reads ~30-300 prompt
    tokens a second, so every message of context costs seconds."""
    window: int = 20
    """Short-term window in messages, for all four (B's stm_limit too)."""
    threshold: float = 0.65
    """C and D recall a sentence when its cosine to the question is above this (seed 003)."""
    budget: int = 2000
    """Context budget in billed tokens (memorykit's count) per question."""
    reader_max_tokens: int = 32
    """Cap on the reader's answer: a key fits in a sentence."""
    summary_max_tokens: int = 120
    """Cap on one episode summary (a summary cut off at the cap fails and says so)."""
    reflect_every: int = 20
    """D's critic runs each time this many messages have arrived."""
    critic_window: int = 20
    """The critic reads the last this-many messages (a whole 50-turn history would not
    fit a small model's context)."""
    critic_max_tokens: int = 120
    """Cap on one critique (JSON rules)."""

    def __post_init__(self) -> None:
        # every conversation, turn and token is paid in model calls: the maxima keep a typo
        # from asking for a run of days
        require_int("conversations", self.conversations, minimum=1, maximum=100)
        require_int("n_facts", self.n_facts, minimum=1, maximum=len(SEED_003_FACT_BANK))
        require_int("distractors", self.distractors, minimum=0, maximum=10_000)
        require_positive("seconds_per_message", self.seconds_per_message)
        check_words(self.distractor_words, "distractor_words")
        require_int("window", self.window, minimum=1, maximum=10_000)
        require_between("threshold", self.threshold, -1.0, 1.0)
        for name in ("budget", "summary_max_tokens", "reflect_every", "critic_window"):
            require_int(name, getattr(self, name), minimum=1)
        for name in ("reader_max_tokens", "critic_max_tokens"):
            require_int(name, getattr(self, name), minimum=1, maximum=4096)


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% with z = 1.96).

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0/n
    or n/n, which is where a memory benchmark's scores tend to sit.
    """
    require_int("n", n, minimum=1)
    require_int("successes", successes, minimum=0, maximum=n)
    require_between("z", z, 0.0, 10.0)  # 10 standard errors: beyond any confidence in use
    if z == 0:
        raise ValueError(f"z must be > 0, got {z!r}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class MeteredChatModel:
    """A ``ChatModel`` that adds up the input and output tokens of every call it passes on.

    Tokens come from the endpoint's ``last_usage`` when the model reports it (a real
    server counts with the model's own tokenizer), else they are counted with
    ``counter`` (prompt as billed chat tokens, reply as text). One meter per role
    (reader, summarizer, critic) attributes the cost of a shared model.
    """

    def __init__(self, model: ChatModel, counter: TokenCounter) -> None:
        if not callable(getattr(model, "complete", None)):
            raise TypeError(f"model must have a complete() method, got {model!r}")
        self.model = model
        self.counter = counter
        self.name = getattr(model, "name", type(model).__name__)
        self.is_scripted = bool(getattr(model, "is_scripted", False))
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.seconds = 0.0
        self.reported_by_endpoint = True
        """False once any call's tokens had to be counted locally."""

    def complete(self, messages: ChatMessages, *, max_tokens: int | None = None) -> str:
        start = time.perf_counter()
        try:
            reply = self.model.complete(messages, max_tokens=max_tokens)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1
        usage = getattr(self.model, "last_usage", None)
        if usage is not None and usage.total_tokens is not None:
            self.input_tokens += usage.prompt_tokens
            self.output_tokens += usage.completion_tokens
        else:
            self.reported_by_endpoint = False
            self.input_tokens += count_chat_tokens(list(messages), self.counter)
            self.output_tokens += self.counter.count(reply)
        return reply

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass
class _Failures:
    """Every model failure of a run, in order (role, conversation, what happened)."""

    items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, role: str, conversation: int, exc: BaseException) -> None:
        self.items.append({"role": role, "conversation": conversation,
                           "error": describe_error(exc)})


class _KeepGoingSummarizer:
    """A summarizer that turns a failure into an episode saying so (it then holds no fact)."""

    is_llm = True

    def __init__(self, inner: Summarizer, failures: _Failures) -> None:
        self.inner = inner
        self.failures = failures
        self.name = getattr(inner, "name", type(inner).__name__)
        self.is_llm = bool(getattr(inner, "is_llm", False))
        self.conversation = 0

    def summarize(self, messages: Sequence[Message], max_tokens: int) -> str:
        try:
            return self.inner.summarize(messages, max_tokens)
        except LLMError as exc:
            self.failures.add("summarizer", self.conversation, exc)
            return f"(no summary: the summarizer failed: {type(exc).__name__})"


class _KeepGoingCritic:
    """A critic whose failure adds no rule instead of stopping the conversation."""

    def __init__(self, inner: Critic, failures: _Failures) -> None:
        self.inner = inner
        self.failures = failures
        self.name = getattr(inner, "name", type(inner).__name__)
        self.conversation = 0

    def critique(self, history: Sequence[Message]) -> list[Rule]:
        try:
            return self.inner.critique(history)
        except LLMError as exc:
            self.failures.add("critic", self.conversation, exc)
            return []


@dataclass
class ReproductionResult:
    """Per-architecture recall with intervals, the control, B's dropped keys, and the config."""

    rows: list[dict[str, Any]]
    control: dict[str, Any]
    probes: list[dict[str, Any]]
    """One record per (architecture, probe): key in context, answer, correct."""
    episodes: list[dict[str, Any]]
    """B: for each fact, the episode that covers it and whether its summary kept the key."""
    rules: list[dict[str, Any]]
    """D: the rules the critic learned, per conversation."""
    failures: list[dict[str, Any]]
    config: dict[str, Any]

    def table(self) -> list[dict[str, Any]]:
        """The comparison table: ours with its interval beside seed 003's figure."""
        out = []
        for r in self.rows:
            lo, hi = r["interval"]
            out.append({
                "arch": r["architecture"], "facts": r["facts"], "probes": r["probes"],
                "correct": r["correct"], "recall": f"{r['recall']:.0%}",
                "wilson 95%": f"{lo:.0%}-{hi:.0%}", "D3": f"{r['seed_003']:.0%}",
                "key in context": f"{r['key_in_context']:.0%}",
                "tokens/probe": round(r["tokens_per_probe"]),
            })
        c = self.control
        lo, hi = c["interval"]
        out.append({"arch": "control (fact in context)", "facts": c["facts"],
                     "probes": c["probes"], "correct": c["correct"], "recall": f"{c['recall']:.0%}",
                     "wilson 95%": f"{lo:.0%}-{hi:.0%}", "D3": "-",
                     "key in context": "100%", "tokens/probe": round(c["tokens_per_probe"])})
        return out

    def to_markdown(self) -> str:
        """``table()`` as a Markdown table, then ``explain()`` as a list."""
        rows = self.table()
        cols = list(rows[0])
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
        return "\n".join(lines + [""] + [f"- {line}" for line in self.explain()])

    def explain(self) -> list[str]:
        """One line per architecture: where ours differs from seed 003, the measured causes.

        Recall is (key in the context) x (the reader finds it there); each line gives both
        parts, and for B how many of the episodes that cover a fact kept its key.
        """
        c = self.control
        lines = [f"reader control: with only the fact before the question the reader answers "
                 f"{c['correct']}/{c['probes']} ({c['recall']:.0%}): what it does with the fact "
                 "plainly in front of it"]
        for r in self.rows:
            letter = r["architecture"].split()[0]
            same = r["interval"][0] <= r["seed_003"] <= r["interval"][1]
            head = (f"{letter}: {r['correct']}/{r['probes']} = {r['recall']:.0%} "
                    f"[{r['interval'][0]:.0%}, {r['interval'][1]:.0%}] vs D3 "
                    f"{r['seed_003']:.0%} ({'inside' if same else 'outside'} the interval); "
                    f"key in context {r['key_in_context']:.0%}, "
                    f"{r['missed_with_key_in_context']} answer(s) wrong with the key in context")
            if letter == "B":
                covered = [e for e in self.episodes if e["episode"] is not None]
                kept = sum(e["summary_kept_key"] for e in covered)
                failed = sum(f["role"] == "summarizer" for f in self.failures)
                dropped = [e["key"] for e in covered if not e["summary_kept_key"]]
                above = sum(e["above_threshold"] for e in covered)
                top = max((e["score"] for e in covered), default=0.0)
                head += (f"; {above} of {len(covered)} covering episodes scored above the "
                         f"threshold (best {top:.3f})"
                         f"; summaries kept {kept} of {len(covered)} keys"
                         + (f" (dropped: {', '.join(dropped[:6])}"
                            f"{', ...' if len(dropped) > 6 else ''})" if dropped else "")
                         + f"; {failed} summary call(s) failed")
            if letter == "D":
                failed = sum(f["role"] == "critic" for f in self.failures)
                head += (f"; the critic left {len(self.rules)} rule(s) in the prompt, "
                         f"{failed} critique(s) failed")
            unanswered = sum(f["role"] == f"reader {letter}" for f in self.failures)
            if unanswered:  # a failed call is a wrong answer that bills nothing: say so
                head += f"; {unanswered} reader call(s) failed (counted wrong)"
            lines.append(head)
        return lines

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReproductionResult:
        fields = ("rows", "control", "probes", "episodes", "rules", "failures", "config")
        missing = [f for f in fields if f not in data]
        if missing:
            raise ValueError(f"not a reproduction result: missing {missing!r}")
        return cls(**{f: data[f] for f in fields})


def _ingest(arch: Architecture, messages: Sequence[Message], step: int) -> None:
    """Feed the history ``step`` messages at a time, as a running agent receives it (D's
    critic runs on the way, not once on the whole)."""
    for k in range(step, len(messages), step):
        arch.sync(messages[:k])
    arch.sync(messages)


def _control_request(conv: ProbeConversation, fact_message_id: str,
                     question: str) -> list[dict[str, Any]]:
    """System prompt, the fact's message and its acknowledgement, then the question."""
    k = next(i for i, m in enumerate(conv.messages) if m.id == fact_message_id)
    shown = [conv.messages[0], conv.messages[k], conv.messages[k + 1]]
    return [m.to_openai() for m in shown] + [{"role": "user", "content": question}]


def _covering_episodes(arch: EpisodicArchitecture, conv: ProbeConversation,
                       conversation: int) -> list[dict[str, Any]]:
    """For each fact: the episode covering it, its score for the fact's question, whether that
    passes the threshold, and whether the summary kept the key."""
    out = []
    now = conv.messages[-1].created_at
    for f in conv.facts:
        scored = next((x for x in arch.memory.score(f.question, now)
                       if f.message_id in x.episode.source_message_ids), None)
        out.append({
            "conversation": conversation, "fact": f.text, "key": f.key,
            "episode": scored.episode.id if scored else None,
            "score": round(scored.score, 4) if scored else None,
            "above_threshold": bool(scored and scored.score > arch.settings.threshold),
            "summary_kept_key": bool(scored and f.key in scored.episode.summary),
            "summary": scored.episode.summary if scored else None,
        })
    return out


def run_reproduction(
    settings: ReproductionSettings | None = None,
    *,
    chat: ChatModel | None = None,
    embedder: Embedder | None = None,
    counter: TokenCounter | None = None,
    progress: Callable[[str], None] | None = None,
) -> ReproductionResult:
    """Seed 003's protocol (module docstring) with ``chat`` as reader, summarizer and critic.

    ``chat`` None: the offline stand-ins. ``embedder`` None: the architectures' default
    (lexical hashing). ``progress`` receives a line per finished step.
    """
    s = settings if settings is not None else ReproductionSettings()
    if not isinstance(s, ReproductionSettings):
        raise TypeError(f"settings must be ReproductionSettings, got {settings!r}")
    counter = counter if counter is not None else Tokenizer()
    say = progress if progress is not None else (lambda line: None)
    failures = _Failures()
    meters = {role: MeteredChatModel(chat if chat is not None else memory_reader(), counter)
              for role in ("reader", "summarizer", "critic")}
    reader = meters["reader"]
    if chat is not None:
        summarizer = _KeepGoingSummarizer(OpenAISummarizer(meters["summarizer"], counter=counter),
                                          failures)
        memo = MemoSummarizer(summarizer)
        critic = _KeepGoingCritic(OpenAICritic(meters["critic"],
                                               max_tokens=s.critic_max_tokens), failures)
    else:
        summarizer = _KeepGoingSummarizer(ExtractiveSummarizer(counter), failures)
        memo = MemoSummarizer(summarizer)
        critic = _KeepGoingCritic(booking_critic(), failures)
    per_arch_tokens = {k: 0 for k in LETTERS}
    hits: dict[str, list[bool]] = {k: [] for k in LETTERS}
    in_context: dict[str, list[bool]] = {k: [] for k in LETTERS}
    names: dict[str, str] = {}
    probes: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    rules: list[dict[str, Any]] = []
    control_hits: list[bool] = []
    control_tokens = 0
    ingest_seconds = {k: 0.0 for k in LETTERS}
    b_ingest_tokens = 0

    def ask(messages: list[dict[str, Any]], role: str, conversation: int) -> tuple[str, int]:
        before = reader.tokens
        try:
            answer = reader.complete(messages, max_tokens=s.reader_max_tokens)
        except LLMError as exc:
            failures.add(role, conversation, exc)
            answer = ""
        return answer, reader.tokens - before

    for conversation in range(s.conversations):
        summarizer.conversation = critic.conversation = conversation
        conv = probe_conversation(s.distractors, n_facts=s.n_facts, seed=conversation,
                                  counter=counter, bank=SEED_003_FACT_BANK,
                                  seconds_per_message=s.seconds_per_message,
                                  distractor_words=s.distractor_words)
        archs: dict[str, Architecture] = make_architectures(
            window=s.window, summarizer=memo, embedder=embedder, critic=critic,
            counter=counter,
            episodic=EpisodicSettings(stm_limit=s.window, summary_max_tokens=s.summary_max_tokens),
            semantic=SemanticSettings(threshold=s.threshold),
            reflection=ReflectionSettings(reflect_every=s.reflect_every,
                                          critic_window=s.critic_window),
        )
        archs = {**archs, "B'": EpisodicArchitecture(
            EpisodicSettings(stm_limit=s.window, summary_max_tokens=s.summary_max_tokens,
                             query_tokens="content"),
            summarizer=memo, counter=archs["A"].counter)}
        archs = {k: archs[k] for k in LETTERS}
        for letter, arch in archs.items():
            names[letter] = arch.name if letter != "B'" else "B'-episodic, content-word query"
            spent = meters["summarizer"].tokens + meters["critic"].tokens
            t0 = time.perf_counter()
            _ingest(arch, conv.messages, s.reflect_every)
            ingest_seconds[letter] += time.perf_counter() - t0
            ingest_tokens = meters["summarizer"].tokens + meters["critic"].tokens - spent
            # B' reuses B's memoized summaries: it is billed what B paid to write them
            per_arch_tokens[letter] += ingest_tokens if letter != "B'" else b_ingest_tokens
            b_ingest_tokens = ingest_tokens if letter == "B" else b_ingest_tokens
            if letter == "B":
                episodes += _covering_episodes(arch, conv, conversation)
            if isinstance(arch, ReflectionArchitecture):
                rules += [{"conversation": conversation, "rule": arch.reflection.render(r)}
                          for r in arch.reflection.active()]
            for f in conv.facts:
                ctx = arch.build_context(conv.messages, f.question, s.budget)
                present = f.key in "\n".join(item.content for item in ctx.items)
                answer, tokens = ask(ctx.to_openai(), f"reader {letter}", conversation)
                per_arch_tokens[letter] += tokens
                correct = answer_contains_key(answer, f.key)
                hits[letter].append(correct)
                in_context[letter].append(present)
                probes.append({"architecture": letter, "conversation": conversation,
                               "question": f.question, "key": f.key, "key_in_context": present,
                               "answer": answer, "correct": correct})
            say(f"conversation {conversation}: {letter} {sum(hits[letter])}/{len(hits[letter])}")
        for f in conv.facts:
            answer, tokens = ask(_control_request(conv, f.message_id, f.question), "reader control",
                                 conversation)
            control_tokens += tokens
            correct = answer_contains_key(answer, f.key)
            control_hits.append(correct)
            probes.append({"architecture": "control", "conversation": conversation,
                           "question": f.question, "key": f.key, "key_in_context": True,
                           "answer": answer, "correct": correct})
        say(f"conversation {conversation}: control {sum(control_hits)}/{len(control_hits)}")

    n = s.conversations * s.n_facts
    rows = []
    for letter in LETTERS:
        k = sum(hits[letter])
        missed_with_key = sum(p and not h for p, h in zip(in_context[letter], hits[letter]))
        rows.append({
            "architecture": f"{letter} {names[letter].split('-', 1)[1]}",
            "facts": s.n_facts, "conversations": s.conversations, "probes": n, "correct": k,
            "recall": k / n, "interval": list(wilson_interval(k, n)),
            "seed_003": SEED_003_RECALL[letter[0]],
            "key_in_context": statistics.fmean(in_context[letter]),
            "missed_with_key_in_context": missed_with_key,
            "tokens": per_arch_tokens[letter], "tokens_per_probe": per_arch_tokens[letter] / n,
            "ingest_seconds": round(ingest_seconds[letter], 3),
        })
    k = sum(control_hits)
    control = {"facts": s.n_facts, "probes": n, "correct": k, "recall": k / n,
               "interval": list(wilson_interval(k, n)), "tokens": control_tokens,
               "tokens_per_probe": control_tokens / n}
    config = {
        "settings": asdict(s),
        "reader": reader.name, "summarizer": summarizer.name, "critic": critic.name,
        "embedder": getattr(embedder, "name", "lexical-hashing (default)"),
        "tokens_reported_by_endpoint": all(m.reported_by_endpoint for m in meters.values()
                                           if m.calls),
        "model_calls": {role: m.calls for role, m in meters.items()},
        "model_seconds": {role: round(m.seconds, 3) for role, m in meters.items()},
        "scoring": "correct when the answer contains the fact's key (case and whitespace aside)",
    }
    return ReproductionResult(rows, control, probes, episodes, rules, failures.items, config)


__all__ = [
    "LETTERS",
    "MeteredChatModel",
    "ReproductionResult",
    "ReproductionSettings",
    "run_reproduction",
    "wilson_interval",
]
