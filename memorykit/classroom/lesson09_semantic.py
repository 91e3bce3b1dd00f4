"""Lesson 09's semantic recall: a cosine threshold, and what it lets in and keeps out.

* ``semantic_matrix()`` / ``semantic_recall(threshold)``: the fact bank's questions against
  its facts in a ``SemanticMemory``, embedded by all-MiniLM-L6-v2 (in numpy, offline; the
  embedder D3 chose its threshold for), and which facts ``SemanticMemory.recall`` returns
  at a threshold; ``embedder="lexical"`` gives the same with the lexical hashing baseline (word
  overlap, **not meaning**), ``embedder_comparison()`` the two side by side,
  ``separating_thresholds()`` the cosines that decide whether a threshold separates them.
  Memoized (``memo``): the fact bank per embedder, its matrix, the recall per threshold.

Explorer: ``SemanticThresholdExplorer`` (a threshold slider; the cosine matrix with the right
fact recalled framed in solid green and a wrong one in dashed red: ``cell_frames`` draws each
frame along its cell's border, in the cell's units, so the value inside stays readable).
Offline, deterministic. Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_choice
from memorykit.classroom.explorer import EMBEDDERS, LessonExplorer, Setting, _go, lesson_embedder
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.memo import memo
from memorykit.classroom.scenarios.probes import probe_conversation
from memorykit.longterm.semantic import SemanticMemory, SemanticSettings


@dataclass(frozen=True)
class SemanticMatrix:
    questions: tuple[str, ...]
    facts: tuple[str, ...]
    keys: tuple[str, ...]
    cosine: np.ndarray
    """cosine[i, j]: question i vs fact sentence j (read-only)."""
    embedder: str
    recall_limit: int


def _embedder(embedder: str) -> str:
    return require_choice("embedder", embedder, tuple(EMBEDDERS))


@memo(maxsize=None)
def _semantic_memory(embedder: str) -> tuple[Any, SemanticMemory, np.ndarray]:
    """The fact bank's eight facts in a ``SemanticMemory``, and each question's vector."""
    conv = probe_conversation(0, n_facts=8)
    mem = SemanticMemory(SemanticSettings(), embedder=lesson_embedder(embedder))
    mem.add([m for m in conv.messages if m.metadata.get("kind") == "fact"])
    vectors = np.stack([mem.embed_query(f.question) for f in conv.facts])
    vectors.flags.writeable = False
    return conv, mem, vectors


def semantic_matrix(embedder: str = "minilm") -> SemanticMatrix:
    """Every question's cosine to every stored fact sentence (recall with no threshold)."""
    return _semantic_matrix(_embedder(embedder))


@memo(maxsize=None)
def _semantic_matrix(embedder: str) -> SemanticMatrix:
    conv, mem, vectors = _semantic_memory(embedder)
    index = {f.message_id: j for j, f in enumerate(conv.facts)}
    cos = np.zeros((len(conv.facts), len(conv.facts)))
    for i, f in enumerate(conv.facts):
        for r in mem.recall(f.question, vector=vectors[i], limit=len(conv.facts), threshold=None):
            cos[i, index[r.message_id]] = r.score
    cos.flags.writeable = False
    return SemanticMatrix(tuple(f.question for f in conv.facts), tuple(f.text for f in conv.facts),
                          tuple(f.key for f in conv.facts), cos, mem.embedder.name,
                          mem.settings.recall_limit)


def semantic_recall(threshold: float = 0.65, embedder: str = "minilm") -> dict[str, Any]:
    """Which facts each question recalls: ``SemanticMemory.recall`` at ``threshold`` (scores
    strictly above it, at most ``recall_limit`` per question). Remembered per threshold."""
    found = _semantic_recall(SemanticSettings(threshold=threshold).threshold, _embedder(embedder))
    return {**found, "recalled": found["recalled"].copy()}


@memo(maxsize=512)
def _semantic_recall(threshold: float, embedder: str) -> dict[str, Any]:
    conv, mem, vectors = _semantic_memory(embedder)
    index = {f.message_id: j for j, f in enumerate(conv.facts)}
    n = len(conv.facts)
    recalled = np.zeros((n, n), dtype=bool)
    for i, f in enumerate(conv.facts):
        for r in mem.recall(f.question, vector=vectors[i], threshold=threshold):
            recalled[i, index[r.message_id]] = True
    own = np.diag(recalled)
    wrong = recalled & ~np.eye(n, dtype=bool)
    return {"recalled": recalled, "own": int(own.sum()), "wrong": int(wrong.sum()),
            "questions_with_own_fact": [f.question for f, ok in zip(conv.facts, own) if ok]}


def separating_thresholds(embedder: str = "minilm") -> dict[str, float]:
    """The numbers behind the threshold: every own-fact cosine and the best wrong one."""
    m = semantic_matrix(embedder)
    own = np.diag(m.cosine)
    off = m.cosine[~np.eye(len(own), dtype=bool)]
    return {"lowest_own_cosine": round(float(own.min()), 3),
            "highest_own_cosine": round(float(own.max()), 3),
            "highest_wrong_cosine": round(float(off.max()), 3)}


FRAME_INSET = 0.07
"""A recalled cell's frame runs this far inside the cell's edge (in cells): along the border,
clear of the cosine written at the cell's centre, at any notebook width."""


def cell_frames(mask: np.ndarray) -> tuple[list[float | None], list[float | None]]:
    """x, y of one closed rectangle per True cell of ``mask`` (row i, column j centred at
    (j, i)), ``None`` between rectangles: a frame around the cell's value, never across it."""
    h = 0.5 - FRAME_INSET
    xs: list[float | None] = []
    ys: list[float | None] = []
    for i, j in zip(*np.nonzero(mask)):
        xs += [j - h, j + h, j + h, j - h, j - h, None]
        ys += [i - h, i - h, i + h, i + h, i - h, None]
    return xs, ys


def embedder_comparison(threshold: float = 0.65) -> list[dict[str, Any]]:
    """Each embedder of ``EMBEDDERS`` on the fact bank: what ``threshold`` recalls, and whether
    any threshold separates right facts from wrong ones (lowest right cosine above the highest
    wrong one)."""
    rows = []
    for kind in EMBEDDERS:
        r, sep = semantic_recall(threshold, kind), separating_thresholds(kind)
        rows.append({"embedder": semantic_matrix(kind).embedder,
                     f"own facts at {threshold:g}": f"{r['own']}/{len(r['recalled'])}",
                     "wrong facts": r["wrong"], "lowest own cosine": sep["lowest_own_cosine"],
                     "highest wrong cosine": sep["highest_wrong_cosine"],
                     "a threshold separates them":
                         sep["lowest_own_cosine"] > sep["highest_wrong_cosine"]})
    return rows


class SemanticThresholdExplorer(LessonExplorer):
    """Cosine of each question to each fact; which ones pass the threshold."""

    title = "Semantic recall: cosine(question, fact) with all-MiniLM-L6-v2"

    settings = (Setting("threshold", "cosine threshold", 0.65, 0.0, 1.0, 0.01),)

    def _make_figure(self) -> Any:
        go = _go()
        m = semantic_matrix()
        n = len(m.keys)
        labels = [f"F{j + 1}: {k}" for j, k in enumerate(m.keys)]
        qs = [f"Q{i + 1}: {q}" for i, q in enumerate(m.questions)]
        fig = go.Figure()
        # Cells at whole-number positions (named by their ticks), so that a frame is drawn in
        # the cell's own units and shrinks with it at any notebook width.
        fig.add_heatmap(name="cosine", x=list(range(n)), y=list(range(n)),
                        z=heat_grid(m.cosine, decimals=3), colorscale="Blues", zmin=0, zmax=1,
                        colorbar=dict(title="cosine"), text=np.round(m.cosine, 2).tolist(),
                        texttemplate="%{text}", customdata=[[f"{q}<br>{f}" for f in labels]
                                                            for q in qs],
                        hovertemplate="%{customdata}: %{z:.3f}<extra></extra>")
        for name, colour, dash in (("recalled (right fact)", "#2ca02c", "solid"),
                                   ("recalled (wrong fact)", "#d62728", "dash")):
            fig.add_scatter(name=name, x=[], y=[], mode="lines", hoverinfo="skip",
                            line=dict(color=colour, width=3, dash=dash))
        fig.update_xaxes(tickvals=list(range(n)), ticktext=labels, range=[-0.5, n - 0.5],
                         showgrid=False, zeroline=False)
        fig.update_yaxes(tickvals=list(range(n)), ticktext=qs, range=[n - 0.5, -0.5],
                         showgrid=False, zeroline=False)
        # the legend stays when only one kind of mark is drawn (at D3's 0.65: no wrong fact)
        fig.update_layout(height=480, margin=dict(l=360, r=20, t=60, b=110), title=self.title,
                          legend=legend_below(), showlegend=True)
        return fig

    def _compute(self, **p: Any) -> dict[str, Any]:
        return semantic_recall(p["threshold"])

    def _draw(self, r: dict[str, Any]) -> None:
        rec = r["recalled"]
        own = np.eye(len(rec), dtype=bool)
        for name, mask in (("recalled (right fact)", rec & own),
                           ("recalled (wrong fact)", rec & ~own)):
            trace = self.trace(name)
            trace.x, trace.y = cell_frames(mask)

    def summary(self) -> dict[str, Any]:
        m = semantic_matrix()
        r = self.result
        out: dict[str, Any] = {"embedder": f"{m.embedder} ({EMBEDDERS['minilm']})",
                               "threshold": self.params["threshold"],
                               "questions_recalling_their_fact": f"{r['own']}/{len(m.questions)}",
                               "wrong_facts_recalled": r["wrong"]}
        for i, q in enumerate(m.questions):
            got = [f"F{j + 1}" for j in np.nonzero(r["recalled"][i])[0]]
            out[f"  Q{i + 1} ({q})"] = ", ".join(got) if got else "nothing"
        return out


__all__ = ["EMBEDDERS", "SemanticThresholdExplorer", "cell_frames", "embedder_comparison",
           "semantic_matrix", "semantic_recall", "separating_thresholds"]
