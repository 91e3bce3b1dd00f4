"""Lesson 10: D3's four memory architectures on inject / distract / probe.

* ``probe_run()``: the lesson's ``ProbeCheckpoints`` (one seeded conversation whose prefixes
  are those with fewer distractors), its components memoized.
* ``curve(letter, window, factor, episodic_threshold, semantic_threshold, embedder)``: recall
  (the key in the built context) and tokens per call at every checkpoint, memoized on the
  parameters the architecture depends on: a threshold move re-selects captured probes.
* ``recall_table``, ``why_missed``, ``seed_comparison``: the benchmark beside D3's
  numbers, and for B and C every probe with the computed reason it was or was not recalled.
* ``learned_rules(distractors)``: what D's critic learned in the booking scenario, with
  the messages each rule cites, and every architecture's reply to the second request.

Explorer: ``ArchitecturesExplorer`` (window, consolidation factor, episodic and semantic
thresholds; recall and tokens per call vs distractor turns for A-D). Everything is offline.
C and D embed with all-MiniLM-L6-v2 (numpy, vectors cached on disk) by default, the embedder
D3 chose its 0.65 for; ``embedder="lexical"`` (word overlap, not meaning) is the
baseline, ``embedder_comparison`` the two side by side. The summarizer is extractive, the
critic and actor scripted: none of the components is a language model.
Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_int
from memorykit.classroom.replays.recall_benchmark import SEED_003_RECALL, run_benchmark
from memorykit.classroom.replays.recall_curves import Captured, Curve, ProbeCheckpoints
from memorykit.classroom.explorer import EMBEDDERS, LessonExplorer, Setting, _go, defaults, lesson_embedder
from memorykit.classroom.figure import legend_below
from memorykit.longterm.architectures import ReflectionArchitecture, make_architectures
from memorykit.longterm.episodic import EpisodicSettings, explain
from memorykit.longterm.semantic import SemanticSettings
from memorykit.classroom.scenarios.probes import (adaptability_scenario, asks_for_confirmation, booking_actor,
                                      booking_critic, probe_conversation)
from memorykit.summary import ExtractiveSummarizer, MemoSummarizer
from memorykit.tokens import MemoCounter

DISTRACTORS: tuple[int, ...] = (0, 5, 10, 15, 20, 30, 40, 50, 75, 100)
"""Checkpoints of the explorer's x axis (distractor turns after the facts)."""
BUDGET = 2000
"""Context budget in billed tokens (as in ``bench.architectures``)."""
LETTERS = ("A", "B", "C", "D")
NAMES = {"A": "A context window", "B": "B episodic", "C": "C semantic", "D": "D reflection"}
WINDOWS: tuple[int, ...] = tuple(range(4, 41, 4))
"""The window slider's values: the explorer captures them all up front."""
SETTINGS = (
    Setting("window", "window W (messages)", 20, WINDOWS[0], WINDOWS[-1], WINDOWS[1] - WINDOWS[0]),
    Setting("consolidation_factor", "B consolidation factor", 1.5, 1.0, 3.0, 0.25),
    Setting("episodic_threshold", "B episodic threshold", 0.7, 0.3, 0.95, 0.05),
    Setting("semantic_threshold", "C/D cosine threshold", 0.65, 0.2, 0.9, 0.05),
)
"""The explorer's sliders, at D3's settings."""
DEFAULTS = defaults(SETTINGS)


@lru_cache(maxsize=len(EMBEDDERS))
def probe_run(embedder: str = "minilm") -> ProbeCheckpoints:
    """The longest probe conversation, its checkpoints and the shared memoized components
    (C and D embed with ``embedder``, a key of ``EMBEDDERS``; A and B use none)."""
    counter = MemoCounter()
    return ProbeCheckpoints(DISTRACTORS, budget=BUDGET, counter=counter,
                            embedder=lesson_embedder(embedder),
                            summarizer=MemoSummarizer(ExtractiveSummarizer(counter)))


def check_params(window: int, factor: float, episodic_threshold: float,
                 semantic_threshold: float) -> tuple[int, float, float, float]:
    """The parameters as memo keys, once the settings classes accepted them (a ValueError
    or TypeError names a bad one)."""
    window = require_int("window", window, minimum=1)
    episodic = EpisodicSettings(stm_limit=window, consolidation_factor=factor,
                                threshold=episodic_threshold)
    semantic = SemanticSettings(threshold=semantic_threshold)
    return (window, round(float(episodic.consolidation_factor), 4),
            round(float(episodic.threshold), 4), round(float(semantic.threshold), 4))


@lru_cache(maxsize=64)
def _window_curve(window: int) -> Curve:
    return probe_run().window_curve(window)


@lru_cache(maxsize=64)
def _episodic_capture(window: int, factor: float) -> Captured:
    return probe_run().capture_episodic(window, factor)


@lru_cache(maxsize=128)
def _semantic_capture(window: int, embedder: str) -> tuple[Captured, Captured]:
    return probe_run(embedder).capture_semantic(window)


@lru_cache(maxsize=2048)
def _curve(letter: str, window: int, factor: float, threshold: float, embedder: str) -> Curve:
    if letter == "A":
        return _window_curve(window)
    if letter == "B":
        return probe_run().score(_episodic_capture(window, factor), threshold)
    c, d = _semantic_capture(window, embedder)
    return probe_run(embedder).score(c if letter == "C" else d, threshold)


def curve(letter: str, window: int = 20, factor: float = 1.5, episodic_threshold: float = 0.7,
          semantic_threshold: float = 0.65, embedder: str = "minilm") -> Curve:
    """Recall and tokens per call of one architecture at every checkpoint (memoized).

    Only the parameters the architecture uses are part of its cache key: A
    depends on the window; B on window, factor and the episodic threshold; C and
    D on window, the semantic threshold and the embedder.
    """
    if letter not in LETTERS:
        raise ValueError(f"letter must be one of {LETTERS}, got {letter!r}")
    w, f, e, s = check_params(window, factor, episodic_threshold, semantic_threshold)
    if letter == "A":
        return _curve("A", w, 1.5, 0.0, "")
    if letter == "B":
        return _curve("B", w, f, e, "")
    return _curve(letter, w, 1.5, s, require_choice("embedder", embedder, tuple(EMBEDDERS)))


def warm(factor: float = 1.5) -> None:
    """Capture every window of the slider (A; C, D on MiniLM; B at ``factor``) so window moves
    are lookups: MiniLM embeds each text once here, never during a slider move."""
    for w in WINDOWS:
        _window_curve(w)
        _semantic_capture(w, "minilm")
        _episodic_capture(w, round(float(factor), 4))


def curves(window: int = 20, factor: float = 1.5, episodic_threshold: float = 0.7,
           semantic_threshold: float = 0.65, embedder: str = "minilm") -> dict[str, Curve]:
    return {k: curve(k, window, factor, episodic_threshold, semantic_threshold, embedder)
            for k in LETTERS}


def embedder_comparison(window: int = 20, threshold: float = 0.65) -> list[dict[str, Any]]:
    """C's recall at every checkpoint with each embedder of ``EMBEDDERS`` (D recalls what C
    does), and the mean recall of the benchmark's table with it."""
    return [{"embedder": probe_run(kind).embedder.name,
             "C recall % at " + ",".join(map(str, DISTRACTORS)): ",".join(
                 f"{v * 100:.0f}" for v in curve("C", window, semantic_threshold=threshold,
                                                 embedder=kind).recall),
             "C, D table mean": ", ".join(r["mean"] for r in recall_table(embedder=kind)[2:])}
            for kind in EMBEDDERS]


# ------------------------------------------------------------------ the table
@lru_cache(maxsize=8)
def benchmark(distractors: tuple[int, ...] = (10, 25, 50, 100), embedder: str = "minilm") -> Any:
    """``run_benchmark`` offline with C and D on ``embedder`` (what ``python -m
    bench.architectures --embedder minilm`` runs; ``"lexical"``: its defaults)."""
    return run_benchmark(distractors, embedder=lesson_embedder(embedder))


def recall_table(distractors: tuple[int, ...] = (10, 25, 50, 100),
                 embedder: str = "minilm") -> list[dict[str, Any]]:
    """A-D: recall per distractor count and the mean, beside D3's reported recall."""
    result = benchmark(tuple(distractors), embedder)
    out = []
    for s in result.summary():
        letter = s["architecture"][0]
        row: dict[str, Any] = {"arch": s["architecture"]}
        for r in result.rows:
            if r["architecture"] == s["architecture"]:
                row[f"N={r['distractors']}"] = f"{r['recall_key']:.0%}"
        row["mean"] = f"{s['recall_key']:.0%}"
        row["D3"] = f"{SEED_003_RECALL[letter]:.0%}"
        row["differs"] = "yes" if abs(s["recall_key"] - SEED_003_RECALL[letter]) > 1e-9 else "no"
        row["tokens/call"] = round(s["tokens_per_call"])
        row["adapts"] = "yes" if s["adaptability"] == 1 else "no"
        out.append(row)
    return out


def why_missed(distractors: int = 50, window: int = 20, embedder: str = "minilm") -> list[dict[str, Any]]:
    """For B and C at one distractor count: each probe, recalled or not, and why (computed)."""
    require_int("distractors", distractors, minimum=0)
    run = probe_run(embedder)
    conv = probe_conversation(distractors, counter=run.counter)
    archs = make_architectures(window=window, counter=run.counter, embedder=run.embedder)
    out: list[dict[str, Any]] = []
    b, c = archs["B"], archs["C"]
    for f in conv.facts:
        b.sync(conv.messages)
        now = conv.messages[-1].created_at
        in_stm = any(m.id == f.message_id for m in b.memory.stm)
        scores = [s for s in b.memory.score(f.question, now) if f.message_id in s.episode.source_message_ids]
        ctx = b.build_context(conv.messages, f.question, BUDGET)
        hit = f.key in "\n".join(i.content for i in ctx.items)
        if in_stm:
            why = "still in short-term memory (the window)"
        elif not scores:
            why = "no episode covers it"
        else:
            s = scores[0]
            kept = f.key in s.episode.summary
            chosen = {x.episode.id for x in b.memory.recall(f.question, now)}
            why = (f"episode {s.episode.id}: " + explain(s, b.settings, s.episode.id in chosen)
                   + ("" if kept else "; its summary dropped the key (the abstracted ghost)"))
        out.append({"arch": "B", "question": f.question, "key": f.key, "recalled": hit, "why": why})
    c.sync(conv.messages)
    in_window = {m.id for m in c.short_term_messages()}
    for f in conv.facts:
        ctx = c.build_context(conv.messages, f.question, BUDGET)
        hit = f.key in "\n".join(i.content for i in ctx.items)
        if f.message_id in in_window:
            why = "still in the window"
        else:
            q = c.memory.embed_query(f.question)
            v = c.memory.embedder.embed([f.text])[0]
            cos = float(np.dot(q, v) / (np.linalg.norm(q) * np.linalg.norm(v)))
            op = ">" if cos > c.settings.threshold else "<="
            why = (f"cosine(question, fact sentence) = {cos:.3f} {op} threshold "
                   f"{c.settings.threshold:g} ({run.embedder.name}: {EMBEDDERS[embedder]})")
        out.append({"arch": "C", "question": f.question, "key": f.key, "recalled": hit, "why": why})
    return out


def seed_comparison(distractors: int = 50, embedder: str = "minilm") -> list[str]:
    """One line per architecture: our mean recall against D3's, and where they differ,
    the computed reason (from ``why_missed`` at ``distractors`` turns)."""
    table = {r["arch"][0]: r for r in recall_table(embedder=embedder)}
    why = why_missed(distractors, embedder=embedder)
    name = probe_run(embedder).embedder.name
    lines = []
    for letter in LETTERS:
        r = table[letter]
        head = f"{letter}: ours {r['mean']} (mean over N=10,25,50,100), D3 {r['D3']}"
        if r["differs"] == "no":
            lines.append(head + ": same")
            continue
        own = [w for w in why if w["arch"] == ("B" if letter == "B" else "C")]
        missed = [w for w in own if not w["recalled"]]
        reason = f"at N={distractors} {len(missed)} of {len(own)} probes missed: "
        if letter == "B":
            below = sum("<=" in w["why"] for w in missed)
            ghost = sum("dropped the key" in w["why"] for w in missed)
            reason += (f"{below} episode(s) scored at or below the threshold (few query words among "
                       f"its keywords), {ghost} summary(ies) lost the key")
        else:
            below = sum("<=" in w["why"] for w in missed)
            reason += (f"{below} fact sentence(s) at or below the cosine threshold with {name} ("
                       + ("D3's embedder, but these questions paraphrase their facts)"
                          if embedder == "minilm" else "word overlap; D3 used all-MiniLM-L6-v2)"))
            if letter == "D":
                reason += "; D recalls what C recalls (its rules change behaviour, not recall)"
        lines.append(f"{head}: differs; {reason}")
    return lines


def learned_rules(distractors: int = 50) -> dict[str, Any]:
    """The adaptability scenario: D's rules (with their sources) and every actor reply."""
    require_int("distractors", distractors, minimum=0)
    run = probe_run()
    sc = adaptability_scenario(distractors, counter=run.counter)
    archs = make_architectures(critic=booking_critic(), counter=run.counter, embedder=run.embedder)
    actor = booking_actor()
    by_id = {m.id: m for m in sc.messages}
    replies, rules = {}, []
    for letter, arch in archs.items():
        ctx = arch.build_context(sc.messages, sc.second_request, BUDGET)
        reply = actor.complete(ctx.to_openai(), max_tokens=120)
        replies[letter] = {"reply": reply, "asks_first": asks_for_confirmation(reply)}
        if isinstance(arch, ReflectionArchitecture):
            for r in arch.reflection.active():
                rules.append({"rule": arch.reflection.render(r),
                              "cites": [f"{i} ({by_id[i].role}): {by_id[i].content}"
                                        for i in r.source_message_ids],
                              "cites_the_mistake": set(r.source_message_ids) == set(sc.mistake_ids)})
    return {"distractors": distractors, "messages": len(sc.messages), "rules": rules,
            "replies": replies}


# ---------------------------------------------------------------- explorer
_COLORS = {"A": "#7f7f7f", "B": "#ff7f0e", "C": "#1f77b4", "D": "#2ca02c"}


class ArchitecturesExplorer(LessonExplorer):
    """Recall and tokens per call vs distractor turns for A-D."""

    title = "Recall and tokens per call vs distractor turns (C, D on all-MiniLM-L6-v2)"

    settings = SETTINGS

    def __init__(self, **params: Any) -> None:
        start = {**DEFAULTS, **params}
        check_params(start["window"], start["consolidation_factor"],
                     start["episodic_threshold"], start["semantic_threshold"])
        warm(start["consolidation_factor"])
        super().__init__(**params)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=(
            "recall (fact key in the context)", "billed prompt tokens per call")))
        for col in (1, 2):
            for k in LETTERS:
                # C and D often coincide: D is drawn thinner and dotted on top of a wider C
                fig.add_scatter(name=NAMES[k] if col == 1 else f"{NAMES[k]}: tokens",
                                legendgroup=k, x=list(DISTRACTORS), y=[0] * len(DISTRACTORS),
                                mode="lines+markers", row=1, col=col, showlegend=col == 1,
                                marker=dict(size=5 if k == "D" else 8,
                                            symbol="diamond" if k == "D" else "circle"),
                                line=dict(color=_COLORS[k], width=2 if k == "D" else 4 if k == "C"
                                          else 2, dash="dot" if k == "D" else "solid"))
        fig.update_yaxes(range=[-0.05, 1.05], tickformat=".0%", title_text="recall", row=1, col=1)
        fig.update_yaxes(title_text="tokens per call", row=1, col=2)
        fig.update_xaxes(title="distractor turns after the facts")
        fig.update_layout(height=400, margin=dict(l=60, r=20, t=70, b=50), title=self.title,
                          legend=legend_below())
        return fig

    def _compute(self, **p: Any) -> dict[str, Curve]:
        return curves(p["window"], p["consolidation_factor"], p["episodic_threshold"],
                      p["semantic_threshold"])

    def _draw(self, result: dict[str, Curve]) -> None:
        for k in LETTERS:
            self.trace(NAMES[k]).y = list(result[k].recall)
            self.trace(f"{NAMES[k]}: tokens").y = list(result[k].tokens)

    def summary(self) -> dict[str, Any]:
        r: dict[str, Curve] = self.result
        out: dict[str, Any] = {s.name: self.params[s.name] for s in SETTINGS}
        out["distractors"] = ",".join(map(str, DISTRACTORS))
        out.update({f"{k}_recall_%": ",".join(f"{v * 100:.0f}" for v in r[k].recall) for k in LETTERS})
        out.update({f"{k}_tokens_per_call": ",".join(f"{v:.0f}" for v in r[k].tokens) for k in LETTERS})
        return out

    def readout_numbers(self) -> dict[str, Any]:
        r: dict[str, Curve] = self.result
        out: dict[str, Any] = {s.name: self.params[s.name] for s in SETTINGS}
        out.update({f"{k} recall after {DISTRACTORS[-1]} distractors": f"{r[k].recall[-1]:.0%}"
                    for k in LETTERS})
        out.update({f"{k} tokens per call, mean": f"{float(np.mean(r[k].tokens)):.0f}" for k in LETTERS})
        return out

__all__ = ["ArchitecturesExplorer", "BUDGET", "DEFAULTS", "DISTRACTORS", "EMBEDDERS", "SETTINGS", "curve",
           "curves", "embedder_comparison", "learned_rules", "probe_run", "recall_table",
           "seed_comparison", "why_missed"]
