"""Recall against distractor turns for A-D, from one ingest of one long probe conversation.

``run_benchmark`` (``recall_benchmark``) builds one conversation per distractor count and
fresh architectures for each. To draw recall as a curve of the distractor count, and
to sweep a recall threshold, ``ProbeCheckpoints`` does the same measurement with far
less work, and gives the same numbers (a test compares them with ``build_context``):

* the probe conversation with N distractor turns is a prefix of the longest one
  (``probe_conversation`` is seeded turn by turn; checked when the checkpoints are
  built), so every architecture ingests the longest conversation once, incrementally,
  as a running agent would, and the questions are asked at each checkpoint;
* B, C and D capture each question's request once (``Probe``: the fixed parts, and
  every recall candidate whatever its score: B's scored episodes, C's best units), so
  a threshold is applied afterwards by the architecture's own ``recalled_parts`` and
  the budget by ``fit``: the context ``build_context`` would build at that threshold
  (``score``); ``score_rule`` lets another recall rule, a student's, choose instead.

A probe is recalled when the fact's key is in the built context (``recall_key`` in
the benchmark). Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_real
from memorykit.context import Context
from memorykit.embeddings import Embedder
from memorykit.llm.critic import Critic
from memorykit.longterm._fitting import Part, fit, request_time
from memorykit.longterm.architectures import (
    Architecture,
    ContextWindowArchitecture,
    EpisodicArchitecture,
    ReflectionArchitecture,
    SemanticArchitecture,
)
from memorykit.longterm.episodic import EpisodicSettings
from memorykit.longterm.semantic import SemanticSettings
from memorykit.messages import Message
from memorykit.classroom.scenarios.probes import booking_critic, probe_conversation
from memorykit.classroom.scenarios.facts import PlantedFact
from memorykit.summary import Summarizer
from memorykit.tokens import TokenCounter, Tokenizer


@dataclass(frozen=True)
class Curve:
    """One architecture's recall and cost at every checkpoint."""

    letter: str
    recall: tuple[float, ...]
    """Share of the probes whose fact key is in the built context, per checkpoint."""
    tokens: tuple[float, ...]
    """Mean billed prompt tokens per call, per checkpoint."""
    missed: tuple[tuple[str, ...], ...]
    """Fact keys not recalled, per checkpoint."""


@dataclass(frozen=True)
class Probe:
    """One question at one checkpoint, captured once: everything but the threshold's choice."""

    key: str
    query: str
    now: float
    before: list[Part]
    """Instructions (and D's rules)."""
    after: list[Part]
    """The short-term window and the current input."""
    candidates: list[Any]
    """B: every episode's score; C/D: the best units outside the window (any score)."""


@dataclass(frozen=True)
class Captured:
    """An architecture's probes at every checkpoint; ``selector`` applies a threshold."""

    letter: str
    selector: EpisodicArchitecture | SemanticArchitecture
    """Whose ``recalled_parts`` choose among a probe's candidates (C's for D)."""
    probes: tuple[tuple[Probe, ...], ...]


class ProbeCheckpoints:
    """The longest probe conversation, its checkpoints, and A-D measured on it.

    ``counter``, ``embedder`` and ``summarizer`` are shared by every architecture built
    here (defaults: ``Tokenizer()``, the architectures' own); ``critic`` builds D's critic
    (default: the scripted ``booking_critic``).
    """

    def __init__(
        self,
        distractors: Sequence[int],
        *,
        budget: int = 2000,
        n_facts: int = 4,
        seed: int = 0,
        counter: TokenCounter | None = None,
        embedder: Embedder | None = None,
        summarizer: Summarizer | None = None,
        critic: Callable[[], Critic] = booking_critic,
    ) -> None:
        if isinstance(distractors, int) or not distractors:
            raise ValueError(f"distractors must be a non-empty list of turn counts, "
                             f"got {distractors!r}")
        for n in distractors:
            require_int("distractors[]", n, minimum=0)
        if list(distractors) != sorted(set(distractors)):
            raise ValueError(f"distractors must increase, got {distractors!r}")
        self.distractors = tuple(distractors)
        self.budget = require_int("budget", budget, minimum=1)
        self.counter: TokenCounter = counter if counter is not None else Tokenizer()
        self.embedder = embedder
        self.summarizer = summarizer
        self.critic = critic
        full = probe_conversation(self.distractors[-1], n_facts=n_facts, seed=seed,
                                  counter=self.counter)
        self.messages: list[Message] = full.messages
        self.facts: list[PlantedFact] = full.facts
        cuts = []
        for n in self.distractors:
            part = probe_conversation(n, n_facts=n_facts, seed=seed, counter=self.counter)
            if [m.content for m in part.messages] != [m.content for m in
                                                      self.messages[:len(part.messages)]]:
                raise RuntimeError(f"probe_conversation({n}) is not a prefix of the longest one")
            cuts.append(len(part.messages))
        self.cuts: tuple[int, ...] = tuple(cuts)
        """Messages in the conversation with ``distractors[k]`` distractor turns."""

    # ------------------------------------------------------------------ A
    def window_curve(self, window: int) -> Curve:
        """A: ``build_context`` at every checkpoint (it is cheap, and has no threshold)."""
        return self.reference_curve(ContextWindowArchitecture(window, counter=self.counter))

    # ------------------------------------------------------------ B, C, D
    def capture_episodic(self, window: int, factor: float) -> Captured:
        """B ingests the conversation once; at each checkpoint every episode is scored."""
        arch = EpisodicArchitecture(
            EpisodicSettings(stm_limit=window, consolidation_factor=factor),
            summarizer=self.summarizer, counter=self.counter)
        probes = []
        for cut in self.cuts:
            history = self.messages[:cut]
            arch.sync(history)
            now = request_time(history, None)
            instructions, short_term = arch.instruction_parts(), arch.short_term_parts()
            probes.append(tuple(
                Probe(f.key, f.question, now, instructions,
                      short_term + arch.query_parts(f.question),
                      arch.memory.score(f.question, now))
                for f in self.facts))
        return Captured("B", arch, tuple(probes))

    def capture_semantic(self, window: int) -> tuple[Captured, Captured]:
        """C and D from one ingest: D *is* C plus rules, so its probes add the rules to C's."""
        c = SemanticArchitecture(window, SemanticSettings(), embedder=self.embedder,
                                 counter=self.counter)
        d = ReflectionArchitecture(c, self.critic(), counter=self.counter)
        pc, pd = [], []
        for cut in self.cuts:
            history = self.messages[:cut]
            d.sync(history)  # syncs C as well
            now = request_time(history, None)
            instructions, rules = c.instruction_parts(), d.rule_parts()
            short_term = c.short_term_parts()
            rc, rd = [], []
            for f in self.facts:
                candidates = c.recall_candidates(f.question)
                after = short_term + c.query_parts(f.question)
                rc.append(Probe(f.key, f.question, now, instructions, after, candidates))
                rd.append(Probe(f.key, f.question, now, instructions + rules, after, candidates))
            pc.append(tuple(rc))
            pd.append(tuple(rd))
        return Captured("C", c, tuple(pc)), Captured("D", c, tuple(pd))

    def score(self, captured: Captured, threshold: float) -> Curve:
        """Select each probe's recalled parts at ``threshold`` and fit the budget: the
        contexts ``build_context`` returns with that threshold."""
        threshold = require_real("threshold", threshold)
        arch = captured.selector
        fmt = arch.pricer.chat_format
        return self._curve(captured.letter, [
            [(p.key, fit(p.before + arch.recalled_parts(p.query, p.now, None, p.candidates,
                                                        threshold) + p.after,
                         self.budget, arch.name, fmt, None))
             for p in row]
            for row in captured.probes
        ])

    def score_rule(self, captured: Captured, threshold: float,
                   rule: Callable[[list[float], float, int], Sequence[int]]) -> Curve:
        """``score`` with ``rule(scores, threshold, limit)`` (positions of the candidates to
        recall, best first) choosing in place of the library's ``select_recalled``: C's (or
        D's) contexts as they would be with that rule. Whatever positions it returns are
        recalled, more than ``recall_limit`` or one twice included, so a faulty rule shows in
        the curve; each recalled part is built by the architecture itself, in its order (by
        turn), so the library's own rule gives exactly ``score``'s curve."""
        threshold = require_real("threshold", threshold)
        arch = captured.selector
        if not isinstance(arch, SemanticArchitecture):
            raise TypeError(f"score_rule re-selects C's and D's candidates, not "
                            f"{captured.letter}'s")
        fmt, limit = arch.pricer.chat_format, arch.settings.recall_limit
        rows = []
        for row in captured.probes:
            contexts = []
            for p in row:
                chosen = [p.candidates[i] for i in
                          rule([c.score for c in p.candidates], threshold, limit)]
                # one candidate at a time, below every cosine: the architecture builds the
                # part it would recall, and selects nothing itself
                recalled = [part for c in sorted(chosen, key=lambda c: (c.turn, c.unit_id))
                            for part in arch.recalled_parts(p.query, p.now, None, [c], -2.0)]
                contexts.append((p.key, fit(p.before + recalled + p.after, self.budget,
                                            arch.name, fmt, None)))
            rows.append(contexts)
        return self._curve(captured.letter, rows)

    @staticmethod
    def _curve(letter: str, checkpoints: list[list[tuple[str, Context]]]) -> Curve:
        recall, tokens, missed = [], [], []
        for row in checkpoints:
            hit = [any(key in item.content for item in ctx.items) for key, ctx in row]
            recall.append(sum(hit) / len(hit))
            tokens.append(float(np.mean([ctx.tokens for _, ctx in row])))
            missed.append(tuple(key for (key, _), h in zip(row, hit) if not h))
        return Curve(letter, tuple(recall), tuple(tokens), tuple(missed))

    def reference_curve(self, arch: Architecture) -> Curve:
        """The slow, obvious way: ``arch.build_context`` for every question at every
        checkpoint (what the captured curves must equal)."""
        return self._curve(arch.letter, [
            [(f.key, arch.build_context(self.messages[:cut], f.question, self.budget))
             for f in self.facts]
            for cut in self.cuts
        ])


__all__ = ["Captured", "Curve", "Probe", "ProbeCheckpoints"]
