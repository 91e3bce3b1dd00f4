"""Lesson 10: D3's four memory architectures on inject / distract / probe.

* ``probe_run()``: the lesson's ``ProbeCheckpoints`` (one seeded conversation whose prefixes
  are those with fewer distractors), its components memoized.
* ``curve(letter, window, factor, episodic_threshold, semantic_threshold, embedder)``: recall
  (the key in the built context) and tokens per call at every checkpoint, memoized (``memo``)
  on the parameters the architecture depends on: a threshold move re-selects captured probes.
* ``yours_curve(rule, window, semantic_threshold)``: C with a student's ``select_recalled``
  choosing what it recalls, from the same captured probes.
* ``benchmark``, ``recall_table``: the benchmark beside D3's numbers; ``embedder_comparison``
  C with each embedder. Why each probe is missed, and what D learned: ``lesson10_reasons``.

Explorer: ``ArchitecturesExplorer`` (window, consolidation factor, episodic and semantic
thresholds; recall and tokens per call vs distractor turns for A-D); ``yours=select_recalled``
adds C run with the student's rule. Everything is offline.
C and D embed with all-MiniLM-L6-v2 (numpy, vectors cached on disk) by default, the embedder
D3 chose its 0.65 for; ``embedder="lexical"`` (word overlap, not meaning) is the
baseline, ``embedder_comparison`` the two side by side. The summarizer is extractive, the
critic and actor scripted: none of the components is a language model.
Taught in ``notebooks/10_architectures.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_int
from memorykit.classroom.explorer import (EMBEDDERS, Implementation, LessonExplorer, Setting, _go,
                                          defaults, lesson_embedder, yours_name)
from memorykit.classroom.figure import legend_below
from memorykit.classroom.memo import memo
from memorykit.classroom.replays.recall_benchmark import SEED_003_RECALL, run_benchmark
from memorykit.classroom.replays.recall_curves import Captured, Curve, ProbeCheckpoints
from memorykit.longterm.episodic import EpisodicSettings
from memorykit.longterm.semantic import SemanticSettings
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


def probe_run(embedder: str = "minilm") -> ProbeCheckpoints:
    """The longest probe conversation, its checkpoints and the shared memoized components
    (C and D embed with ``embedder``, a key of ``EMBEDDERS``; A and B use none). One per
    embedder for the whole process."""
    return _probe_run(require_choice("embedder", embedder, tuple(EMBEDDERS)))


@memo(maxsize=None)
def _probe_run(embedder: str) -> ProbeCheckpoints:
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


@memo(maxsize=64)
def _window_curve(window: int) -> Curve:
    return probe_run().window_curve(window)


@memo(maxsize=64)
def _episodic_capture(window: int, factor: float) -> Captured:
    return probe_run().capture_episodic(window, factor)


@memo(maxsize=128)
def _semantic_capture(window: int, embedder: str) -> tuple[Captured, Captured]:
    return probe_run(embedder).capture_semantic(window)


@memo(maxsize=2048)
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
def benchmark(distractors: Sequence[int] = (10, 25, 50, 100), embedder: str = "minilm") -> Any:
    """``run_benchmark`` offline with C and D on ``embedder`` (what ``python -m
    bench.architectures --embedder minilm`` runs; ``"lexical"``: its defaults). Memoized."""
    return _benchmark(tuple(distractors), require_choice("embedder", embedder, tuple(EMBEDDERS)))


@memo(maxsize=8)
def _benchmark(distractors: tuple[int, ...], embedder: str) -> Any:
    return run_benchmark(distractors, embedder=lesson_embedder(embedder))


def recall_table(distractors: Sequence[int] = (10, 25, 50, 100),
                 embedder: str = "minilm") -> list[dict[str, Any]]:
    """A-D: recall per distractor count and the mean, beside D3's reported recall."""
    result = benchmark(distractors, embedder)
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


# ------------------------------------------------------------ the student's
YOURS = Implementation("a function select_recalled(scores, threshold, limit)",
                       parameters=("scores", "threshold", "limit"))


def yours_curve(rule: Any, window: int = 20, semantic_threshold: float = 0.65,
                embedder: str = "minilm") -> Curve:
    """C with ``rule`` (a student's ``select_recalled``) choosing what it recalls from the
    captured candidates, in place of the library's rule (memoized, like ``curve``)."""
    w, _, _, s = check_params(window, 1.5, 0.7, semantic_threshold)
    return _yours_curve(YOURS.check("rule", rule), w, s,
                        require_choice("embedder", embedder, tuple(EMBEDDERS)))


@memo(maxsize=512)
def _yours_curve(rule: Any, window: int, threshold: float, embedder: str) -> Curve:
    c, _ = _semantic_capture(window, embedder)
    return probe_run(embedder).score_rule(c, threshold, _checked(rule))


def _checked(rule: Any) -> Any:
    """``rule`` whose answer must be positions in ``scores``, or an error saying what came back."""
    name = getattr(rule, "__name__", repr(rule))

    def positions(scores: list[float], threshold: float, limit: int) -> list[int]:
        out = rule(list(scores), threshold, limit)
        call = f"{name}({[round(x, 3) for x in scores]}, {threshold:g}, {limit})"
        if not isinstance(out, (list, tuple)):
            raise TypeError(f"yours: {call} returned {out!r}, not a list of positions")
        bad = [i for i in out if isinstance(i, bool) or not isinstance(i, (int, np.integer))
               or not 0 <= i < len(scores)]
        if bad:
            where = f"0..{len(scores) - 1}" if scores else "none: scores is empty"
            raise ValueError(f"yours: {call} returned {list(out)}: {bad} are not positions in "
                             f"scores ({where}); return indices, not scores")
        return [int(i) for i in out]

    return positions


# ---------------------------------------------------------------- explorer
_COLORS = {"A": "#7f7f7f", "B": "#ff7f0e", "C": "#1f77b4", "D": "#2ca02c"}
DRAW_ORDER = ("B", "C", "D", "A")
"""The curves' drawing order, later on top (the legend stays A-D)."""
_MOVES = {"A": ("window",), "B": ("window", "consolidation_factor", "episodic_threshold"),
          "C": ("window", "semantic_threshold"), "D": ("window", "semantic_threshold")}
"""The sliders each architecture's curves depend on (a move redraws only those)."""


class ArchitecturesExplorer(LessonExplorer):
    """Recall and tokens per call vs distractor turns for A-D; ``yours=select_recalled`` adds C
    with the student's recall rule."""

    title = "Recall and tokens per call vs distractor turns (C, D on all-MiniLM-L6-v2)"
    implementation = YOURS
    settings = SETTINGS

    def __init__(self, yours: Any = None, **params: Any) -> None:
        start = {**DEFAULTS, **params}
        check_params(start["window"], start["consolidation_factor"],
                     start["episodic_threshold"], start["semantic_threshold"])
        warm(start["consolidation_factor"])
        super().__init__(yours=yours, **params)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=1, cols=2, subplot_titles=(
            "recall (fact key in the context)", "billed prompt tokens per call"))
        for col in (1, 2):
            for k in DRAW_ORDER:
                # C and D often coincide: D is drawn thinner and dotted on top of a wider C; A,
                # thin with small markers, on top of all (under C's tokens, B's 0% recall, it hid)
                fig.add_scatter(name=NAMES[k] if col == 1 else f"{NAMES[k]}: tokens",
                                legendgroup=k, legendrank=LETTERS.index(k), x=list(DISTRACTORS),
                                y=[0] * len(DISTRACTORS), mode="lines+markers", row=1, col=col,
                                showlegend=col == 1,
                                marker=dict(size=5 if k in "AD" else 8,
                                            symbol="diamond" if k == "D" else "circle"),
                                line=dict(color=_COLORS[k], width=2 if k == "D" else 4 if k == "C"
                                          else 2, dash="dot" if k == "D" else "solid"))
            for name in self.yours:  # C with the student's rule: black crosses over C's line
                fig.add_scatter(name=yours_name(name) + ("" if col == 1 else ": tokens"),
                                legendgroup=yours_name(name), x=list(DISTRACTORS),
                                y=[0] * len(DISTRACTORS), mode="lines+markers", row=1, col=col,
                                showlegend=col == 1, marker=dict(size=9, symbol="x", color="black"),
                                line=dict(color="black", width=1.5, dash="dash"))
        fig.update_yaxes(range=[-0.05, 1.05], tickformat=".0%", title_text="recall", row=1, col=1)
        fig.update_yaxes(title_text="tokens per call", row=1, col=2)
        fig.update_xaxes(title="distractor turns after the facts")
        fig.update_layout(height=400, margin=dict(l=60, r=20, t=70, b=50), title=self.title,
                          legend=legend_below())
        return fig

    def _compute(self, **p: Any) -> dict[str, Curve]:
        out = curves(p["window"], p["consolidation_factor"], p["episodic_threshold"],
                     p["semantic_threshold"])
        for name, rule in self.yours.items():
            out[yours_name(name)] = yours_curve(rule, p["window"], p["semantic_threshold"])
        return out

    def _draw(self, result: dict[str, Curve]) -> None:
        lines = [(NAMES[k], result[k], _MOVES[k]) for k in LETTERS]
        lines += [(yours_name(n), result[yours_name(n)], _MOVES["C"]) for n in self.yours]
        for name, c, depends_on in lines:
            if self.moved(*depends_on):
                self.trace(name).y = list(c.recall)
                self.trace(f"{name}: tokens").y = list(c.tokens)

    def _shown(self) -> list[tuple[str, Curve]]:
        """(label, curve) of every architecture drawn, the student's after the library's."""
        r: dict[str, Curve] = self.result
        return [(k, r[k]) for k in LETTERS] + [(yours_name(n), r[yours_name(n)])
                                               for n in self.yours]

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {s.name: self.params[s.name] for s in SETTINGS}
        out["distractors"] = ",".join(map(str, DISTRACTORS))
        shown = self._shown()
        out.update({f"{k}_recall_%": ",".join(f"{v * 100:.0f}" for v in c.recall)
                    for k, c in shown})
        out.update({f"{k}_tokens_per_call": ",".join(f"{v:.0f}" for v in c.tokens)
                    for k, c in shown})
        return out

    def readout_numbers(self) -> dict[str, Any]:
        out: dict[str, Any] = {s.name: self.params[s.name] for s in SETTINGS}
        shown = self._shown()
        out.update({f"{k} recall after {DISTRACTORS[-1]} distractors": f"{c.recall[-1]:.0%}"
                    for k, c in shown})
        out.update({f"{k} tokens per call, mean": f"{float(np.mean(c.tokens)):.0f}"
                    for k, c in shown})
        return out


__all__ = ["ArchitecturesExplorer", "BUDGET", "DEFAULTS", "DISTRACTORS", "EMBEDDERS", "SETTINGS",
           "curve", "curves", "embedder_comparison", "probe_run", "recall_table"]
