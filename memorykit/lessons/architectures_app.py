"""Lesson 10: seed 003's four memory architectures on inject / distract / probe.

Pure computation (tested, benchmarked):

* ``probe_run()``: ONE seeded conversation (four facts at the start, then
  ``max(DISTRACTORS)`` distractor turns). The conversation with N distractors
  is a prefix of it (``probe_conversation`` is seeded turn by turn; a test
  checks it), so "recall after N distractor turns" is measured by asking the
  four questions at each checkpoint while the architectures ingest the
  conversation once, incrementally, as a running agent would.
* ``curve(letter, window, factor, episodic_threshold, semantic_threshold)``:
  recall (the fact's key in the built context) and mean tokens per call at
  every checkpoint for one architecture, built with the library's own
  ``make_architectures`` classes (no re-implementation of their logic).
  Memoized per architecture on the parameters it depends on; the embedder and
  the summarizer are wrapped in caches (same text -> same vector / summary), so
  a slider move re-runs only the architectures it changes, without
  re-embedding or re-summarizing text already seen.
* ``why_missed(distractors, ...)``: for B and C, every probe with the reason
  it was or was not recalled (score vs threshold, key dropped by the summary,
  still in the window): the computed explanation of the table's differences
  from seed 003.
* ``learned_rules(distractors)``: what D's critic learned in the booking
  (adaptability) scenario, with the messages each rule cites, and what each
  architecture's actor replied to the second booking request.

Explorer: ``ArchitecturesExplorer`` (sliders: window, consolidation factor,
episodic threshold, semantic threshold; recall and tokens per call vs
distractor turns for A-D). Everything is offline: the embedder is the lexical
hashing embedder (word overlap, not meaning), the summarizer extractive, the
critic and actor scripted; none of them is a language model.
Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_real
from memorykit.embeddings import LexicalHashingEmbedder
from memorykit.lessons._app import LessonExplorer, _go, float_slider, int_slider
from memorykit.lessons._figure import legend_below
from memorykit.longterm._context import Part, fit, request_time
from memorykit.longterm.architectures import (
    ContextWindowArchitecture,
    EpisodicArchitecture,
    ReflectionArchitecture,
    SemanticArchitecture,
    make_architectures,
    window_parts,
)
from memorykit.longterm.episodic import EpisodicSettings, explain
from memorykit.longterm.protocol import (
    SEED_003_RECALL,
    adaptability_scenario,
    asks_for_confirmation,
    booking_actor,
    booking_critic,
    probe_conversation,
    run_benchmark,
)
from memorykit.longterm.semantic import SemanticSettings
from memorykit.summary import ExtractiveSummarizer
from memorykit.tokens import Tokenizer

DISTRACTORS: tuple[int, ...] = (0, 5, 10, 15, 20, 30, 40, 50, 75, 100)
"""Checkpoints of the explorer's x axis (distractor turns after the facts)."""
BUDGET = 2000
"""Context budget in billed tokens (as in ``bench.architectures``)."""
LETTERS = ("A", "B", "C", "D")
NAMES = {"A": "A context window", "B": "B episodic", "C": "C semantic", "D": "D reflection"}


# ------------------------------------------------------------ cached components
class CachedEmbedder:
    """The offline lexical embedder with a memo: a text seen before is not embedded again."""

    def __init__(self) -> None:
        self.inner = LexicalHashingEmbedder()
        self.dimension = self.inner.dimension
        self.name = self.inner.name
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Any) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            for t, v in zip(missing, self.inner.embed(missing)):
                self._memo[t] = v
        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])


class CachedSummarizer:
    """The extractive summarizer (not an LLM) with a memo keyed by the messages and the cap."""

    is_llm = False

    def __init__(self, counter: Any) -> None:
        self.inner = ExtractiveSummarizer(counter)
        self.name = getattr(self.inner, "name", "extractive")
        self._memo: dict[tuple[Any, ...], str] = {}

    def summarize(self, messages: Any, max_tokens: int) -> str:
        key = (tuple(m.id for m in messages), max_tokens)
        text = self._memo.get(key)
        if text is None:
            text = self._memo[key] = self.inner.summarize(messages, max_tokens)
        return text


class CachedCounter:
    """cl100k_base token counts with a memo (the same text is priced many times)."""

    def __init__(self) -> None:
        self.inner = Tokenizer()
        self.encoding = self.inner.encoding
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._memo.get(text)
        if n is None:
            n = self._memo[text] = self.inner.count(text)
        return n


@dataclass(frozen=True)
class ProbeRun:
    messages: list[Any]
    facts: list[Any]
    cuts: tuple[int, ...]
    """Messages in the conversation with DISTRACTORS[k] distractor turns."""
    counter: CachedCounter
    embedder: CachedEmbedder
    summarizer: CachedSummarizer


@lru_cache(maxsize=1)
def probe_run() -> ProbeRun:
    """The longest probe conversation and the checkpoint of each distractor count."""
    counter = CachedCounter()
    full = probe_conversation(max(DISTRACTORS), counter=counter)
    cuts = []
    for n in DISTRACTORS:
        part = probe_conversation(n, counter=counter)
        if [m.content for m in part.messages] != [m.content for m in full.messages[: len(part.messages)]]:
            raise RuntimeError(f"probe_conversation({n}) is not a prefix of the longest one")
        cuts.append(len(part.messages))
    return ProbeRun(full.messages, full.facts, tuple(cuts), counter, CachedEmbedder(),
                    CachedSummarizer(counter))


def check_params(window: int, factor: float, episodic_threshold: float,
                 semantic_threshold: float) -> tuple[int, float, float, float]:
    """Validated parameters (ValueError names the bad one)."""
    window = require_int("window", window, minimum=1)
    factor = require_real("consolidation_factor", factor)
    if factor < 1:
        raise ValueError(f"consolidation_factor must be >= 1, got {factor!r}")
    e = require_real("episodic_threshold", episodic_threshold)
    s = require_real("semantic_threshold", semantic_threshold)
    return window, round(float(factor), 4), round(float(e), 4), round(float(s), 4)


@dataclass(frozen=True)
class Curve:
    letter: str
    recall: tuple[float, ...]
    """Share of the probes whose fact key is in the built context, per checkpoint."""
    tokens: tuple[float, ...]
    """Mean billed prompt tokens per call, per checkpoint."""
    missed: tuple[tuple[str, ...], ...]
    """Fact keys not recalled, per checkpoint."""


@dataclass(frozen=True)
class _Probe:
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


def _score(probes: list[list[_Probe]], arch: Any, threshold: float) -> Curve:
    """Select with ``threshold`` (the architecture's own ``recalled_parts``), fit the budget
    with the library's ``fit``: the same context ``build_context`` would return (a test checks)."""
    recall, tokens, missed = [], [], []
    fmt = arch.pricer.chat_format
    for row in probes:
        hits, toks, miss = 0, [], []
        for p in row:
            parts = p.before + arch.recalled_parts(p.query, p.now, None, p.candidates, threshold) + p.after
            ctx = fit(parts, BUDGET, arch.name, fmt, None)
            if any(p.key in item.content for item in ctx.items):
                hits += 1
            else:
                miss.append(p.key)
            toks.append(ctx.tokens)
        recall.append(hits / len(row))
        tokens.append(float(np.mean(toks)))
        missed.append(tuple(miss))
    return Curve(arch.letter, tuple(recall), tuple(tokens), tuple(missed))


@lru_cache(maxsize=64)
def _window_curve(window: int) -> Curve:
    """A: the library's ``build_context`` at every checkpoint (it is cheap)."""
    run = probe_run()
    arch = ContextWindowArchitecture(window, counter=run.counter)
    recall, tokens, missed = [], [], []
    for cut in run.cuts:
        ctxs = [(f.key, arch.build_context(run.messages[:cut], f.question, BUDGET)) for f in run.facts]
        hit = [any(k in i.content for i in c.items) for k, c in ctxs]
        recall.append(sum(hit) / len(hit))
        tokens.append(float(np.mean([c.tokens for _, c in ctxs])))
        missed.append(tuple(k for (k, _), h in zip(ctxs, hit) if not h))
    return Curve("A", tuple(recall), tuple(tokens), tuple(missed))


@lru_cache(maxsize=64)
def _episodic_capture(window: int, factor: float) -> tuple[Any, list[list[_Probe]]]:
    """B ingests the conversation once; at each checkpoint every episode is scored per question."""
    run = probe_run()
    arch = EpisodicArchitecture(EpisodicSettings(stm_limit=window, consolidation_factor=factor),
                                summarizer=run.summarizer, counter=run.counter)
    probes = []
    for cut in run.cuts:
        history = run.messages[:cut]
        arch.sync(history)
        now = request_time(history, None)
        row = []
        for f in run.facts:
            row.append(_Probe(f.key, f.question, now, arch._instruction_parts(),
                              window_parts(arch.memory.stm, arch.pricer) + arch._query_parts(f.question),
                              arch.memory.score(f.question, now)))
        probes.append(row)
    return arch, probes


@lru_cache(maxsize=64)
def _semantic_capture(window: int) -> tuple[Any, Any, list[list[_Probe]], list[list[_Probe]]]:
    """D wraps C (the library's D *is* C plus rules): one ingest gives both captures."""
    run = probe_run()
    c = SemanticArchitecture(window, SemanticSettings(), embedder=run.embedder, counter=run.counter)
    d = ReflectionArchitecture(c, booking_critic(), counter=run.counter)
    pc, pd = [], []
    for cut in run.cuts:
        history = run.messages[:cut]
        d.sync(history)  # syncs C as well
        now = request_time(history, None)
        rules = d.rule_parts()
        rc, rd = [], []
        for f in run.facts:
            cands = c.recall_candidates(f.question)
            after = window_parts(c._recent, c.pricer) + c._query_parts(f.question)
            instr = c._instruction_parts()
            rc.append(_Probe(f.key, f.question, now, instr, after, cands))
            rd.append(_Probe(f.key, f.question, now, instr + rules, after, cands))
        pc.append(rc)
        pd.append(rd)
    return c, d.base, pc, pd


@lru_cache(maxsize=2048)
def _curve(letter: str, window: int, factor: float, threshold: float) -> Curve:
    if letter == "A":
        return _window_curve(window)
    if letter == "B":
        arch, probes = _episodic_capture(window, factor)
        return _score(probes, arch, threshold)
    c, base, pc, pd = _semantic_capture(window)
    curve_ = _score(pc if letter == "C" else pd, c, threshold)
    return Curve(letter, curve_.recall, curve_.tokens, curve_.missed)


def curve(letter: str, window: int = 20, factor: float = 1.5, episodic_threshold: float = 0.7,
          semantic_threshold: float = 0.65) -> Curve:
    """Recall and tokens per call of one architecture at every checkpoint (memoized).

    Only the parameters the architecture uses are part of its cache key: A
    depends on the window; B on window, factor and the episodic threshold; C and
    D on window and the semantic threshold.
    """
    if letter not in LETTERS:
        raise ValueError(f"letter must be one of {LETTERS}, got {letter!r}")
    w, f, e, s = check_params(window, factor, episodic_threshold, semantic_threshold)
    if letter == "A":
        return _curve("A", w, 1.5, 0.0)
    if letter == "B":
        return _curve("B", w, f, e)
    return _curve(letter, w, 1.5, s)


WINDOWS: tuple[int, ...] = tuple(range(4, 41, 4))
"""The window slider's values: the explorer captures them all up front."""


def warm(factor: float = 1.5) -> None:
    """Capture every window of the slider (A, C, D; B at ``factor``) so window moves are lookups."""
    for w in WINDOWS:
        _window_curve(w)
        _semantic_capture(w)
        _episodic_capture(w, round(float(factor), 4))


def curves(window: int = 20, factor: float = 1.5, episodic_threshold: float = 0.7,
           semantic_threshold: float = 0.65) -> dict[str, Curve]:
    return {k: curve(k, window, factor, episodic_threshold, semantic_threshold) for k in LETTERS}


def reference_curve(letter: str, window: int = 20, factor: float = 1.5,
                    episodic_threshold: float = 0.7, semantic_threshold: float = 0.65) -> Curve:
    """The same curve the slow, obvious way: fresh architectures, ``build_context`` per question.

    Used by the tests to prove the captured fast path returns the same contexts."""
    w, f, e, s = check_params(window, factor, episodic_threshold, semantic_threshold)
    arch = make_architectures(window=w, episodic=EpisodicSettings(stm_limit=w, consolidation_factor=f,
                                                                  threshold=e),
                              semantic=SemanticSettings(threshold=s), critic=booking_critic(),
                              counter=probe_run().counter)[letter]
    run = probe_run()
    recall, tokens, missed = [], [], []
    for cut in run.cuts:
        ctxs = [(fact.key, arch.build_context(run.messages[:cut], fact.question, BUDGET))
                for fact in run.facts]
        hit = [any(k in i.content for i in c.items) for k, c in ctxs]
        recall.append(sum(hit) / len(hit))
        tokens.append(float(np.mean([c.tokens for _, c in ctxs])))
        missed.append(tuple(k for (k, _), h in zip(ctxs, hit) if not h))
    return Curve(letter, tuple(recall), tuple(tokens), tuple(missed))


# ------------------------------------------------------------------ the table
@lru_cache(maxsize=4)
def benchmark(distractors: tuple[int, ...] = (10, 25, 50, 100)) -> Any:
    """``run_benchmark`` with its offline defaults (what ``python -m bench.architectures`` runs)."""
    return run_benchmark(distractors)


def recall_table(distractors: tuple[int, ...] = (10, 25, 50, 100)) -> list[dict[str, Any]]:
    """A-D: recall per distractor count and the mean, beside seed 003's reported recall."""
    result = benchmark(tuple(distractors))
    out = []
    for s in result.summary():
        letter = s["architecture"][0]
        row: dict[str, Any] = {"arch": s["architecture"]}
        for r in result.rows:
            if r["architecture"] == s["architecture"]:
                row[f"N={r['distractors']}"] = f"{r['recall_key']:.0%}"
        row["mean"] = f"{s['recall_key']:.0%}"
        row["seed_003"] = f"{SEED_003_RECALL[letter]:.0%}"
        row["differs"] = "yes" if abs(s["recall_key"] - SEED_003_RECALL[letter]) > 1e-9 else "no"
        row["tokens/call"] = round(s["tokens_per_call"])
        row["adapts"] = "yes" if s["adaptability"] == 1 else "no"
        out.append(row)
    return out


def why_missed(distractors: int = 50, window: int = 20) -> list[dict[str, Any]]:
    """For B and C at one distractor count: each probe, recalled or not, and why (computed)."""
    require_int("distractors", distractors, minimum=0)
    counter = probe_run().counter
    conv = probe_conversation(distractors, counter=counter)
    archs = make_architectures(window=window, counter=counter)
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
    in_window = {m.id for m in c._recent}
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
                   f"{c.settings.threshold:g} (lexical embedder: shared words, not meaning)")
        out.append({"arch": "C", "question": f.question, "key": f.key, "recalled": hit, "why": why})
    return out


def seed_comparison(distractors: int = 50) -> list[str]:
    """One line per architecture: our mean recall against seed 003's, and where they differ,
    the computed reason (from ``why_missed`` at ``distractors`` turns)."""
    table = {r["arch"][0]: r for r in recall_table()}
    why = why_missed(distractors)
    lines = []
    for letter in LETTERS:
        r = table[letter]
        head = f"{letter}: ours {r['mean']} (mean over N=10,25,50,100), seed 003 {r['seed_003']}"
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
            reason += (f"{below} fact sentence(s) at or below the cosine threshold with the lexical "
                       "embedder (seed 003 used all-MiniLM-L6-v2, a semantic one)")
            if letter == "D":
                reason += "; D recalls what C recalls (its rules change behaviour, not recall)"
        lines.append(f"{head}: differs; {reason}")
    return lines


def learned_rules(distractors: int = 50) -> dict[str, Any]:
    """The adaptability scenario: D's rules (with their sources) and every actor reply."""
    require_int("distractors", distractors, minimum=0)
    counter = probe_run().counter
    sc = adaptability_scenario(distractors, counter=counter)
    archs = make_architectures(critic=booking_critic(), counter=counter)
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


def print_rows(rows: list[dict[str, Any]]) -> None:
    """A list of flat dicts as a fixed-width table."""
    keys = list(rows[0])
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    print("  ".join(k.ljust(w) for k, w in zip(keys, widths)))
    for r in rows:
        print("  ".join(str(r[k]).ljust(w) for k, w in zip(keys, widths)))


# ---------------------------------------------------------------- explorer
_COLORS = {"A": "#7f7f7f", "B": "#ff7f0e", "C": "#1f77b4", "D": "#2ca02c"}


class ArchitecturesExplorer(LessonExplorer):
    """Recall and tokens per call vs distractor turns for A-D."""

    title = "Recall and tokens per call vs distractor turns (offline components)"

    def __init__(self, window: int = 20, consolidation_factor: float = 1.5,
                 episodic_threshold: float = 0.7, semantic_threshold: float = 0.65) -> None:
        check_params(window, consolidation_factor, episodic_threshold, semantic_threshold)
        warm(consolidation_factor)
        super().__init__(window=window, consolidation_factor=consolidation_factor,
                         episodic_threshold=episodic_threshold, semantic_threshold=semantic_threshold)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "window": int_slider("window W (messages)", params["window"], WINDOWS[0], WINDOWS[-1],
                                 WINDOWS[1] - WINDOWS[0]),
            "consolidation_factor": float_slider("B consolidation factor", params["consolidation_factor"],
                                                 1.0, 3.0, 0.25),
            "episodic_threshold": float_slider("B episodic threshold", params["episodic_threshold"],
                                               0.3, 0.95, 0.05),
            "semantic_threshold": float_slider("C/D cosine threshold", params["semantic_threshold"],
                                               0.2, 0.9, 0.05),
        }

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        fig = go.FigureWidget(make_subplots(rows=1, cols=2, subplot_titles=(
            "recall (fact key in the context)", "billed prompt tokens per call")))
        for col in (1, 2):
            for k in LETTERS:
                # C and D often coincide: D is drawn thinner and dotted on top of a wider C
                fig.add_scatter(name=NAMES[k], x=list(DISTRACTORS), y=[0] * len(DISTRACTORS),
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
        for i, k in enumerate(LETTERS):
            self.fig.data[i].y = list(result[k].recall)
            self.fig.data[4 + i].y = list(result[k].tokens)

    def summary(self) -> dict[str, Any]:
        r: dict[str, Curve] = self.result
        p = self.params
        out: dict[str, Any] = {
            "window": p["window"], "consolidation_factor": p["consolidation_factor"],
            "episodic_threshold": p["episodic_threshold"], "semantic_threshold": p["semantic_threshold"],
            "distractors": ",".join(map(str, DISTRACTORS)),
        }
        for k in LETTERS:
            out[f"{k}_recall_%"] = ",".join(f"{v * 100:.0f}" for v in r[k].recall)
        for k in LETTERS:
            out[f"{k}_tokens_per_call"] = ",".join(f"{v:.0f}" for v in r[k].tokens)
        return out

    def readout_numbers(self) -> dict[str, Any]:
        r: dict[str, Curve] = self.result
        p = self.params
        out: dict[str, Any] = {k: p[k] for k in ("window", "consolidation_factor",
                                                 "episodic_threshold", "semantic_threshold")}
        last = DISTRACTORS[-1]
        for k in LETTERS:
            out[f"{k} recall after {last} distractors"] = f"{r[k].recall[-1]:.0%}"
        for k in LETTERS:
            out[f"{k} tokens per call, mean"] = f"{float(np.mean(r[k].tokens)):.0f}"
        return out


__all__ = [
    "ArchitecturesExplorer", "BUDGET", "DISTRACTORS", "curve", "curves", "learned_rules",
    "print_rows", "probe_run", "recall_table", "seed_comparison", "why_missed",
]
