"""Lesson 09: long-term memory and recall (episodic scoring, semantic threshold, auto-recall).

* ``score_surface`` / ``threshold_line`` / ``surface_facts``: D3's episodic score over
  keyword overlap x age, its threshold contour and the boundary (``memorykit.longterm.episodic``);
  ``probe_episodes()``: where D3's four probe episodes sit on that surface;
  ``query_tokens_comparison()``: the same episodes under D3's T_q and memorykit's variant.
* ``semantic_matrix()`` / ``semantic_recall(threshold)``: the fact bank's questions against
  its facts in a ``SemanticMemory``, embedded by all-MiniLM-L6-v2 (in numpy, offline; the
  embedder D3 chose its threshold for), and which facts ``SemanticMemory.recall`` returns
  at a threshold; ``embedder="lexical"`` gives the same with the lexical hashing baseline (word
  overlap, **not meaning**), ``embedder_comparison()`` the two side by side.
* ``service_demo()``: D4's memory service with two sessions (``GYM_SESSIONS``): what
  auto-recall injects for the last user message, and that nothing crosses sessions.

Explorers: ``EpisodicSurfaceExplorer`` and ``SemanticThresholdExplorer``. Offline, deterministic.
Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_int
from memorykit.buffers import SummaryBuffer
from memorykit.clock import StepClock
from memorykit.classroom.explorer import EMBEDDERS, LessonExplorer, Setting, _go, defaults, lesson_embedder
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.data import GYM_SESSIONS
from memorykit.longterm.episodic import (HOUR, EpisodicMemory, EpisodicSettings, episode_scores,
                                         full_match_horizon_seconds, overlap_needed)
from memorykit.longterm.semantic import SemanticMemory, SemanticSettings
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.messages import MessageFactory
from memorykit.classroom.replays.episode_probes import ProbeEpisode, probe_episodes, query_tokens_comparison
from memorykit.classroom.scenarios.probes import probe_conversation

OVERLAPS = np.linspace(0.0, 1.0, 101)
"""Keyword overlap |K_e & T_q| / |T_q| on the surface's y axis."""
AGES_H = np.linspace(0.0, 96.0, 193)
"""Episode age in hours on the x axis (four days, half-hour steps)."""


# ------------------------------------------------------------------ episodic
def _weights(alpha: float, beta: float, tau_hours: float, threshold: float = 0.7) -> dict[str, Any]:
    """The sliders as scoring keywords, checked by ``EpisodicSettings`` under the sliders' names."""
    s = EpisodicSettings(alpha=alpha, beta=beta, tau_hours=tau_hours, threshold=threshold)
    return dict(alpha=s.alpha, beta=s.beta, tau_seconds=s.tau_hours * HOUR, threshold=s.threshold)


def score_surface(alpha: float = 0.6, beta: float = 0.4, tau_hours: float = 24.0) -> np.ndarray:
    """S over (overlap, age): shape (len(OVERLAPS), len(AGES_H))."""
    w = _weights(alpha, beta, tau_hours)
    del w["threshold"]
    return episode_scores(OVERLAPS[:, None], AGES_H[None, :] * HOUR, **w)


def threshold_line(alpha: float, beta: float, tau_hours: float, threshold: float) -> np.ndarray:
    """The contour S = threshold on the surface (NaN where it leaves [0, 1])."""
    y = overlap_needed(AGES_H * HOUR, **_weights(alpha, beta, tau_hours, threshold))
    return np.where((y >= 0) & (y <= 1), y, np.nan)


def surface_facts(alpha: float = 0.6, beta: float = 0.4, tau_hours: float = 24.0,
                  threshold: float = 0.7) -> dict[str, Any]:
    """The recall boundary as rounded numbers."""
    weights = _weights(alpha, beta, tau_hours, threshold)
    s = score_surface(alpha, beta, tau_hours)
    old = full_match_horizon_seconds(**weights)
    out: dict[str, Any] = {"max_score": round(alpha + beta, 3),
                           "share_of_surface_recalled": round(float((s > threshold).mean()), 3)}
    for h in (0, 24, 72):
        v = float(overlap_needed(h * HOUR, **weights))
        out[f"overlap_needed_at_{h}h"] = ("any (even 0)" if v < 0 else "none suffices" if v >= 1
                                          else f"> {v:.3f}")
    out["full_match_recalled_up_to"] = ("never" if old is None else "any age" if old == math.inf
                                        else f"{old / HOUR:.1f} h")
    return out


def episode_verdicts(alpha: float, beta: float, tau_hours: float, threshold: float) -> list[bool]:
    """Is each probe episode above the threshold under these parameters?"""
    eps, w = probe_episodes(), _weights(alpha, beta, tau_hours, threshold)
    threshold = w.pop("threshold")
    s = episode_scores([e.overlap for e in eps], [e.age_hours * HOUR for e in eps], **w)
    return [bool(v > threshold) for v in s]


class EpisodicSurfaceExplorer(LessonExplorer):
    """D3's hybrid score over keyword overlap x age, with the threshold contour."""

    title = "Episodic score S = alpha·overlap + beta·exp(-age/tau)"

    settings = (Setting("alpha", "alpha (keyword weight)", 0.6, 0.0, 1.0, 0.05),
                Setting("beta", "beta (recency weight)", 0.4, 0.0, 1.0, 0.05),
                Setting("tau_hours", "tau (hours)", 24.0, 1.0, 96.0, 1.0, ".0f"),
                Setting("threshold", "threshold", 0.7, 0.0, 1.5, 0.05))

    def __init__(self, **settings: float) -> None:
        # the library validates: a bad weight fails here, before any slider is drawn
        surface_facts(**{**defaults(self.settings), **settings})
        super().__init__(**settings)

    def _make_figure(self) -> Any:
        go = _go()
        fig = go.FigureWidget()
        fig.add_heatmap(name="S", x=AGES_H, y=OVERLAPS, z=np.zeros((2, 2)), colorscale="Viridis", zmin=0,
                        zmax=2, colorbar=dict(title="S"),
                        hovertemplate="age %{x:.1f} h, overlap %{y:.2f}: S %{z:.3f}<extra></extra>")
        fig.add_scatter(name="S = threshold (white dashes)", x=AGES_H, y=np.zeros_like(AGES_H),
                        mode="lines", line=dict(color="white", width=3, dash="dash"))
        eps = probe_episodes()
        fig.add_scatter(name="probe episodes (red: recalled)", x=[e.age_hours for e in eps],
                        y=[e.overlap for e in eps], mode="markers", hovertext=[e.question for e in eps],
                        hoverinfo="text", cliponaxis=False,
                        marker=dict(size=12, symbol="circle", line=dict(color="white", width=2)))
        # The probes never move (only their colour does): label them once, on a dark ground
        # so the text reads over any colour of the surface.
        for e in eps:
            fig.add_annotation(x=e.age_hours, y=e.overlap, text=e.question, showarrow=False,
                               xanchor="left", xshift=10, font=dict(color="white", size=11),
                               bgcolor="rgba(0,0,0,0.55)", borderpad=2)
        fig.update_xaxes(title="episode age (hours)")
        fig.update_yaxes(title="keyword overlap (shared / question keywords)", range=[-0.1, 1.08])
        fig.update_layout(height=430, margin=dict(l=70, r=20, t=60, b=50), title=self.title,
                          legend=legend_below())
        return fig

    def _compute(self, **p: Any) -> dict[str, Any]:
        a, b, t, thr = p["alpha"], p["beta"], p["tau_hours"], p["threshold"]
        return {"z": score_surface(a, b, t), "line": threshold_line(a, b, t, thr),
                "verdicts": episode_verdicts(a, b, t, thr), "zmax": max(a + b, 1e-6)}

    def _draw(self, r: dict[str, Any]) -> None:
        surface = self.trace("S")
        surface.z = heat_grid(r["z"])
        surface.zmax = r["zmax"]
        self.trace("S = threshold (white dashes)").y = r["line"]
        self.trace("probe episodes (red: recalled)").marker.color = [
            "#d62728" if v else "#7f7f7f" for v in r["verdicts"]]

    def summary(self) -> dict[str, Any]:
        p = self.params
        out: dict[str, Any] = {k: p[k] for k in ("alpha", "beta", "tau_hours", "threshold")}
        out.update(surface_facts(p["alpha"], p["beta"], p["tau_hours"], p["threshold"]))
        eps = probe_episodes()
        verdicts = self.result["verdicts"]
        out["probe_episodes_above_threshold"] = f"{sum(verdicts)}/{len(verdicts)}"
        for e, v in zip(eps, verdicts):
            out[f"  {e.question}"] = (f"overlap {e.overlap:.3f}, age {e.age_hours:.1f} h: {'recalled' if v else 'not recalled'}"
                                      f"{'' if e.key_in_summary else ' (summary lost the key)'}")
        return out


# ------------------------------------------------------------------ semantic
@dataclass(frozen=True)
class SemanticMatrix:
    questions: tuple[str, ...]
    facts: tuple[str, ...]
    keys: tuple[str, ...]
    cosine: np.ndarray
    """cosine[i, j]: question i vs fact sentence j."""
    embedder: str
    recall_limit: int


@lru_cache(maxsize=None)
def _semantic_memory(embedder: str = "minilm") -> tuple[Any, SemanticMemory, np.ndarray]:
    """The fact bank's eight facts in a ``SemanticMemory``, and each question's vector."""
    require_choice("embedder", embedder, tuple(EMBEDDERS))
    conv = probe_conversation(0, n_facts=8)
    mem = SemanticMemory(SemanticSettings(), embedder=lesson_embedder(embedder))
    mem.add([m for m in conv.messages if m.metadata.get("kind") == "fact"])
    vectors = np.stack([mem.embed_query(f.question) for f in conv.facts])
    vectors.flags.writeable = False
    return conv, mem, vectors


@lru_cache(maxsize=None)
def semantic_matrix(embedder: str = "minilm") -> SemanticMatrix:
    """Every question's cosine to every stored fact sentence (recall with no threshold)."""
    conv, mem, vectors = _semantic_memory(embedder)
    index = {f.message_id: j for j, f in enumerate(conv.facts)}
    cos = np.zeros((len(conv.facts), len(conv.facts)))
    for i, f in enumerate(conv.facts):
        for r in mem.recall(f.question, vector=vectors[i], limit=len(conv.facts), threshold=None):
            cos[i, index[r.message_id]] = r.score
    return SemanticMatrix(tuple(f.question for f in conv.facts), tuple(f.text for f in conv.facts),
                          tuple(f.key for f in conv.facts), cos, mem.embedder.name, mem.settings.recall_limit)


def semantic_recall(threshold: float = 0.65, embedder: str = "minilm") -> dict[str, Any]:
    """Which facts each question recalls: ``SemanticMemory.recall`` at ``threshold`` (scores
    strictly above it, at most ``recall_limit`` per question). Remembered per threshold."""
    found = _semantic_recall(SemanticSettings(threshold=threshold).threshold,
                             require_choice("embedder", embedder, tuple(EMBEDDERS)))
    return {**found, "recalled": found["recalled"].copy()}


@lru_cache(maxsize=512)
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
    return {"lowest_own_cosine": round(float(own.min()), 3), "highest_own_cosine": round(float(own.max()), 3),
            "highest_wrong_cosine": round(float(off.max()), 3)}


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
                     "a threshold separates them": sep["lowest_own_cosine"] > sep["highest_wrong_cosine"]})
    return rows


class SemanticThresholdExplorer(LessonExplorer):
    """Cosine of each question to each fact; which ones pass the threshold."""

    title = "Semantic recall: cosine(question, fact) with all-MiniLM-L6-v2"

    settings = (Setting("threshold", "cosine threshold", 0.65, 0.0, 1.0, 0.01),)

    def _make_figure(self) -> Any:
        go = _go()
        m = semantic_matrix()
        labels = [f"F{j + 1}: {k}" for j, k in enumerate(m.keys)]
        qs = [f"Q{i + 1}: {q}" for i, q in enumerate(m.questions)]
        fig = go.FigureWidget()
        fig.add_heatmap(name="cosine", x=labels, y=qs, z=m.cosine, colorscale="Blues", zmin=0, zmax=1,
                        colorbar=dict(title="cosine"), text=np.round(m.cosine, 2),
                        texttemplate="%{text}", hovertemplate="%{y}<br>%{x}: %{z:.3f}<extra></extra>")
        fig.add_scatter(name="recalled (right fact)", x=[], y=[], mode="markers",
                        marker=dict(symbol="circle-open", size=30, color="#2ca02c", line=dict(width=3)))
        fig.add_scatter(name="recalled (wrong fact)", x=[], y=[], mode="markers",
                        marker=dict(symbol="x-open", size=26, color="#d62728", line=dict(width=3)))
        fig.update_yaxes(autorange="reversed")
        fig.update_layout(height=480, margin=dict(l=360, r=20, t=60, b=110), title=self.title,
                          legend=legend_below())
        self._labels, self._qs = labels, qs
        return fig

    def _compute(self, **p: Any) -> dict[str, Any]:
        return semantic_recall(p["threshold"])

    def _draw(self, r: dict[str, Any]) -> None:
        rec = r["recalled"]
        own = np.eye(len(rec), dtype=bool)
        for name, mask in (("recalled (right fact)", rec & own), ("recalled (wrong fact)", rec & ~own)):
            ii, jj = np.nonzero(mask)
            trace = self.trace(name)
            trace.x = [self._labels[j] for j in jj]
            trace.y = [self._qs[i] for i in ii]

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


# ------------------------------------------------------------------ service
def service_demo(recall_limit: int = 3, working_tokens: int = 150) -> dict[str, Any]:
    """``GYM_SESSIONS`` in one ``MemoryService`` (working memory: a ``SummaryBuffer`` of
    ``working_tokens``), then both users ask for "the locker code": auto-recall, isolation."""
    clock = StepClock(0.0)
    factory = MessageFactory(clock=clock)
    svc = MemoryService(lambda: SummaryBuffer(working_tokens),
                        LongTermSettings(recall_limit=recall_limit), counter=factory.counter)
    for session, script in GYM_SESSIONS.items():
        for role, text in script:
            clock.advance(60)
            svc.add(session, getattr(factory, role)(text))
    question = "What is my locker code at the gym?"
    out: dict[str, Any] = {"stored_entries": len(svc.store), "question": question}
    # What the shared store holds closest to the question if the session filter were dropped.
    best = svc.store.search(svc.session("bob").semantic.embed_query(question), 1)[0]
    out["unfiltered_best_match"] = (f"{best.payload['text']!r} from session "
                                    f"{best.payload['session_id']!r}, cosine {best.score:.3f}")
    for sid in ("alice", "bob"):
        clock.advance(60)
        svc.add(sid, factory.user(question))
        ctx = svc.get_context(sid)
        working = list(svc.session(sid).working)
        recalled = [i for i in ctx.items if i.kind == "recalled"]
        out[sid] = {
            "recall_query": svc.last_recall_query,
            "working_memory": [f"{m.role}{' (summary)' if m.is_summary else ''}: {m.content}"
                               for m in working],
            "code_verbatim_in_working_memory": any(
                "4721" in m.content and not m.is_summary for m in working),
            "recalled": [f"{i.score:.3f}  {i.content}" for i in recalled],
            "code_in_context": any("4721" in i.content for i in ctx.items),
            "context_kinds": [i.kind for i in ctx.items],
        }
        out[sid]["recalled_ids_all_from_this_session"] = all(
            s in svc.session(sid).added for i in recalled for s in i.sources)
    return out


__all__ = ["AGES_H", "EMBEDDERS", "OVERLAPS", "EpisodicSurfaceExplorer", "embedder_comparison", "SemanticThresholdExplorer", "episode_verdicts",
           "probe_episodes", "query_tokens_comparison", "score_surface", "semantic_matrix", "semantic_recall",
           "separating_thresholds", "service_demo", "surface_facts", "threshold_line"]
