"""Lesson 09: long-term memory and recall (episodic scoring, semantic threshold, auto-recall).

Pure computation (tested, benchmarked):

* ``score_surface(alpha, beta, tau_hours)``: seed 003's episodic score
  S = alpha * overlap + beta * exp(-age / tau) over a grid of keyword overlap x
  age, with the library's vectorized ``episode_scores``; ``threshold_line``:
  the overlap an episode needs at each age to pass the threshold (the exact
  contour, solved for overlap); ``surface_facts``: the same boundary as
  numbers (minimum overlap at 0 h / 24 h / 72 h, the oldest full match that is
  still recalled).
* ``probe_episodes()``: the episodes of seed 003's protocol (four facts, 50
  distractor turns, episodic memory with the seed's defaults) scored for the
  four probe questions: where real episodes sit on the surface.
* ``semantic_matrix()``: cosine similarity of each of the fact bank's
  questions to every fact sentence, from a ``SemanticMemory`` with the
  offline ``LexicalHashingEmbedder`` (word overlap, **not meaning**);
  ``semantic_recall(threshold)`` says which facts each question recalls.
* ``service_demo()``: seed 004's memory service with two sessions: what
  auto-recall injects for the last user message, and that nothing crosses
  sessions.

Explorers: ``EpisodicSurfaceExplorer`` (alpha, beta, tau, threshold) and
``SemanticThresholdExplorer`` (cosine threshold). Offline and deterministic.
Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_non_negative, require_positive, require_real
from memorykit.buffers import SummaryBuffer
from memorykit.clock import StepClock
from memorykit.lessons._app import LessonExplorer, _go, float_slider
from memorykit.lessons._figure import heat_grid, legend_below
from memorykit.longterm.episodic import HOUR, EpisodicMemory, episode_scores
from memorykit.longterm.semantic import SemanticMemory, SemanticSettings
from memorykit.longterm.service import LongTermSettings, MemoryService
from memorykit.messages import MessageFactory
from memorykit.scenarios.probes import probe_conversation

OVERLAPS = np.linspace(0.0, 1.0, 101)
"""Keyword overlap |K_e & T_q| / |T_q| on the surface's y axis."""
AGES_H = np.linspace(0.0, 96.0, 193)
"""Episode age in hours on the x axis (four days, half-hour steps)."""


# ------------------------------------------------------------------ episodic
def check_weights(alpha: float, beta: float, tau_hours: float, threshold: float) -> tuple[float, ...]:
    """Validated episodic parameters (ValueError names the bad one)."""
    return (require_non_negative("alpha", alpha), require_non_negative("beta", beta),
            require_positive("tau_hours", tau_hours), require_real("threshold", threshold))


def score_surface(alpha: float = 0.6, beta: float = 0.4, tau_hours: float = 24.0) -> np.ndarray:
    """S over (overlap, age): shape (len(OVERLAPS), len(AGES_H))."""
    return episode_scores(OVERLAPS[:, None], AGES_H[None, :] * HOUR, alpha=alpha, beta=beta,
                          tau_seconds=tau_hours * HOUR)


def min_overlap(age_hours: Any, alpha: float, beta: float, tau_hours: float,
                threshold: float) -> np.ndarray:
    """Overlap at which S equals the threshold at each age (recalled when strictly above it).

    Values above 1 mean no overlap is enough; below 0, any overlap is (even none).
    With alpha 0 the keyword term cannot help: +inf where recency alone is not enough.
    """
    decay = beta * np.exp(-np.asarray(age_hours, dtype=float) / tau_hours)
    if alpha == 0:
        return np.where(decay > threshold, -np.inf, np.inf)
    return (threshold - decay) / alpha


def threshold_line(alpha: float, beta: float, tau_hours: float, threshold: float) -> np.ndarray:
    """The contour S = threshold on the surface (NaN where it leaves [0, 1])."""
    y = min_overlap(AGES_H, alpha, beta, tau_hours, threshold)
    return np.where((y >= 0) & (y <= 1), y, np.nan)


def oldest_full_match_hours(alpha: float, beta: float, tau_hours: float,
                            threshold: float) -> float | None:
    """The age up to which an episode matching every query word is recalled.

    ``math.inf``: at any age (alpha alone beats the threshold); None: never.
    """
    if alpha > threshold or (alpha == threshold and beta > 0):
        return math.inf
    if beta <= 0 or alpha + beta <= threshold:
        return None
    return -tau_hours * math.log((threshold - alpha) / beta)


def _fmt_overlap(v: float) -> str:
    if v < 0:
        return "any (even 0)"
    if v >= 1:
        return "none suffices"
    return f"> {v:.3f}"


def surface_facts(alpha: float = 0.6, beta: float = 0.4, tau_hours: float = 24.0,
                  threshold: float = 0.7) -> dict[str, Any]:
    """The recall boundary as rounded numbers."""
    a, b, t, thr = check_weights(alpha, beta, tau_hours, threshold)
    s = score_surface(a, b, t)
    old = oldest_full_match_hours(a, b, t, thr)
    out: dict[str, Any] = {
        "max_score": round(a + b, 3),
        "share_of_surface_recalled": round(float((s > thr).mean()), 3),
    }
    for h in (0, 24, 72):
        out[f"overlap_needed_at_{h}h"] = _fmt_overlap(float(min_overlap(h, a, b, t, thr)))
    out["full_match_recalled_up_to"] = ("never" if old is None else "any age" if old == math.inf
                                        else f"{old:.1f} h")
    return out


@dataclass(frozen=True)
class ProbeEpisode:
    question: str
    key: str
    episode: str
    overlap: float
    age_hours: float
    key_in_summary: bool


@lru_cache(maxsize=1)
def probe_episodes(distractors: int = 50) -> tuple[ProbeEpisode, ...]:
    """For each probe question: the episode holding its fact (seed defaults, window 20)."""
    conv = probe_conversation(distractors)
    mem = EpisodicMemory()
    for m in conv.messages:
        mem.add(m)
    now = conv.messages[-1].created_at
    out = []
    for f in conv.facts:
        for s in mem.score(f.question, now):
            if f.message_id in s.episode.source_message_ids:
                out.append(ProbeEpisode(f.question, f.key, s.episode.id, s.overlap,
                                        s.age_seconds / HOUR, f.key in s.episode.summary))
    return tuple(out)


def episode_verdicts(alpha: float, beta: float, tau_hours: float, threshold: float) -> list[bool]:
    """Is each probe episode above the threshold under these parameters?"""
    eps = probe_episodes()
    s = episode_scores([e.overlap for e in eps], [e.age_hours * HOUR for e in eps],
                       alpha=alpha, beta=beta, tau_seconds=tau_hours * HOUR)
    return [bool(v > threshold) for v in s]


class EpisodicSurfaceExplorer(LessonExplorer):
    """Seed 003's hybrid score over keyword overlap x age, with the threshold contour."""

    title = "Episodic score S = alpha·overlap + beta·exp(-age/tau)"

    def __init__(self, alpha: float = 0.6, beta: float = 0.4, tau_hours: float = 24.0,
                 threshold: float = 0.7) -> None:
        check_weights(alpha, beta, tau_hours, threshold)
        super().__init__(alpha=alpha, beta=beta, tau_hours=tau_hours, threshold=threshold)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "alpha": float_slider("alpha (keyword weight)", params["alpha"], 0.0, 1.0, 0.05),
            "beta": float_slider("beta (recency weight)", params["beta"], 0.0, 1.0, 0.05),
            "tau_hours": float_slider("tau (hours)", params["tau_hours"], 1.0, 96.0, 1.0, ".0f"),
            "threshold": float_slider("threshold", params["threshold"], 0.0, 1.5, 0.05),
        }

    def _make_figure(self) -> Any:
        go = _go()
        fig = go.FigureWidget()
        fig.add_heatmap(x=AGES_H, y=OVERLAPS, z=np.zeros((2, 2)), colorscale="Viridis", zmin=0,
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
        fig.update_yaxes(title="keyword overlap (shared / question keywords)", range=[-0.04, 1.08])
        fig.update_layout(height=430, margin=dict(l=70, r=20, t=60, b=50), title=self.title,
                          legend=legend_below())
        return fig

    def _compute(self, **p: Any) -> dict[str, Any]:
        a, b, t, thr = check_weights(p["alpha"], p["beta"], p["tau_hours"], p["threshold"])
        return {"z": score_surface(a, b, t), "line": threshold_line(a, b, t, thr),
                "verdicts": episode_verdicts(a, b, t, thr), "zmax": max(a + b, 1e-6)}

    def _draw(self, r: dict[str, Any]) -> None:
        self.fig.data[0].z = heat_grid(r["z"])
        self.fig.data[0].zmax = r["zmax"]
        self.fig.data[1].y = r["line"]
        self.fig.data[2].marker.color = ["#d62728" if v else "#7f7f7f" for v in r["verdicts"]]

    def summary(self) -> dict[str, Any]:
        p = self.params
        out: dict[str, Any] = {k: p[k] for k in ("alpha", "beta", "tau_hours", "threshold")}
        out.update(surface_facts(p["alpha"], p["beta"], p["tau_hours"], p["threshold"]))
        eps = probe_episodes()
        verdicts = self.result["verdicts"]
        out["probe_episodes_above_threshold"] = f"{sum(verdicts)}/{len(verdicts)}"
        for e, v in zip(eps, verdicts):
            out[f"  {e.question}"] = (f"overlap {e.overlap:.3f}, age {e.age_hours:.1f} h: "
                                      f"{'recalled' if v else 'not recalled'}"
                                      f"{'' if e.key_in_summary else ' (summary lost the key)'}")
        return out


# ------------------------------------------------------------------ semantic
@dataclass(frozen=True)
class SemanticMatrix:
    questions: tuple[str, ...]
    facts: tuple[str, ...]
    keys: tuple[str, ...]
    cosine: np.ndarray
    """cosine[i, j]: question i vs fact sentence j (lexical embedder)."""
    embedder: str
    recall_limit: int


@lru_cache(maxsize=1)
def semantic_matrix() -> SemanticMatrix:
    """All eight fact-bank facts stored in a ``SemanticMemory``; every question scored against all."""
    conv = probe_conversation(0, n_facts=8)
    mem = SemanticMemory(SemanticSettings())
    mem.add([m for m in conv.messages if m.metadata.get("kind") == "fact"])
    index = {f.message_id: j for j, f in enumerate(conv.facts)}
    cos = np.zeros((len(conv.facts), len(conv.facts)))
    for i, f in enumerate(conv.facts):
        for r in mem.recall(f.question, limit=len(conv.facts), threshold=None):
            cos[i, index[r.message_id]] = r.score
    return SemanticMatrix(tuple(f.question for f in conv.facts), tuple(f.text for f in conv.facts),
                          tuple(f.key for f in conv.facts), cos, mem.embedder.name,
                          mem.settings.recall_limit)


def semantic_recall(threshold: float = 0.65) -> dict[str, Any]:
    """Which facts each question recalls (strictly above ``threshold``, at most recall_limit)."""
    thr = require_real("threshold", threshold)
    m = semantic_matrix()
    recalled = np.zeros_like(m.cosine, dtype=bool)
    for i in range(len(m.questions)):
        order = np.argsort(-m.cosine[i], kind="stable")[: m.recall_limit]
        recalled[i, order] = m.cosine[i, order] > thr
    own = np.diag(recalled)
    wrong = recalled & ~np.eye(len(m.questions), dtype=bool)
    return {"recalled": recalled, "own": int(own.sum()), "wrong": int(wrong.sum()),
            "questions_with_own_fact": [q for q, ok in zip(m.questions, own) if ok]}


def separating_thresholds() -> dict[str, float]:
    """The numbers behind the threshold: every own-fact cosine and the best wrong one."""
    m = semantic_matrix()
    own = np.diag(m.cosine)
    off = m.cosine[~np.eye(len(own), dtype=bool)]
    return {"lowest_own_cosine": round(float(own.min()), 3),
            "highest_own_cosine": round(float(own.max()), 3),
            "highest_wrong_cosine": round(float(off.max()), 3)}


class SemanticThresholdExplorer(LessonExplorer):
    """Cosine of each question to each fact; which ones pass the threshold."""

    title = "Semantic recall: cosine(question, fact) with the offline LEXICAL embedder"

    def __init__(self, threshold: float = 0.65) -> None:
        require_real("threshold", threshold)
        super().__init__(threshold=threshold)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"threshold": float_slider("cosine threshold", params["threshold"], 0.0, 1.0, 0.01)}

    def _make_figure(self) -> Any:
        go = _go()
        m = semantic_matrix()
        labels = [f"F{j + 1}: {k}" for j, k in enumerate(m.keys)]
        qs = [f"Q{i + 1}: {q}" for i, q in enumerate(m.questions)]
        fig = go.FigureWidget()
        fig.add_heatmap(x=labels, y=qs, z=m.cosine, colorscale="Blues", zmin=0, zmax=1,
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
        ii, jj = np.nonzero(rec & np.eye(len(rec), dtype=bool))
        self.fig.data[1].x = [self._labels[j] for j in jj]
        self.fig.data[1].y = [self._qs[i] for i in ii]
        ii, jj = np.nonzero(rec & ~np.eye(len(rec), dtype=bool))
        self.fig.data[2].x = [self._labels[j] for j in jj]
        self.fig.data[2].y = [self._qs[i] for i in ii]

    def summary(self) -> dict[str, Any]:
        m = semantic_matrix()
        r = self.result
        out: dict[str, Any] = {
            "embedder": f"{m.embedder} (offline, word overlap, not meaning)",
            "threshold": self.params["threshold"],
            "questions_recalling_their_fact": f"{r['own']}/{len(m.questions)}",
            "wrong_facts_recalled": r["wrong"],
        }
        for i, q in enumerate(m.questions):
            got = [f"F{j + 1}" for j in np.nonzero(r["recalled"][i])[0]]
            out[f"  Q{i + 1} ({q})"] = ", ".join(got) if got else "nothing"
        return out


# ------------------------------------------------------------------ service
def service_demo(recall_limit: int = 3, working_tokens: int = 150) -> dict[str, Any]:
    """Two sessions in one ``MemoryService``: auto-recall for the last user message, isolation.

    Alice states her locker code, then talks about other things until her
    working memory (a ``SummaryBuffer`` of ``working_tokens``) has summarized it
    away; Bob, in another session of the same service and store, talks about
    his own gym. Both then ask for "the locker code".
    """
    clock = StepClock(0.0)
    factory = MessageFactory(clock=clock)
    svc = MemoryService(lambda: SummaryBuffer(working_tokens),
                        LongTermSettings(recall_limit=recall_limit), counter=factory.counter)
    alice = [
        ("user", "My locker code at the gym is 4721."),
        ("assistant", "Got it, locker code 4721."),
        ("user", "I want to train for a half marathon in the spring."),
        ("assistant", "A sixteen-week plan with three runs a week works well for most people."),
        ("user", "My knees hurt after long runs on asphalt."),
        ("assistant", "Try softer surfaces, shorter strides and a rest day after every long run."),
        ("user", "Which running shoes suit heavy mileage?"),
        ("assistant", "Cushioned trainers with a firm heel counter; replace them every 700 km."),
        ("user", "Should I stretch before or after running?"),
        ("assistant", "Dynamic warm-ups before, gentle static stretches after."),
    ]
    bob = [
        ("user", "I just joined the gym near the station."),
        ("assistant", "Welcome! Do you have a training goal?"),
        ("user", "Mostly swimming, three mornings a week."),
    ]
    for role, text in alice:
        clock.advance(60)
        svc.add("alice", getattr(factory, role)(text))
    for role, text in bob:
        clock.advance(60)
        svc.add("bob", getattr(factory, role)(text))
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
        working = [m for m in svc.session(sid).working]
        recalled = [i for i in ctx.items if i.kind == "recalled"]
        out[sid] = {
            "recall_query": svc.last_recall_query,
            "working_memory": [f"{m.role}{' (summary)' if m.is_summary else ''}: {m.content}"
                               for m in working],
            "code_verbatim_in_working_memory": any("4721" in m.content and not m.is_summary
                                                   for m in working),
            "recalled": [f"{i.score:.3f}  {i.content}" for i in recalled],
            "code_in_context": any("4721" in i.content for i in ctx.items),
            "context_kinds": [i.kind for i in ctx.items],
        }
        out[sid]["recalled_ids_all_from_this_session"] = all(
            s in svc.session(sid).added for i in recalled for s in i.sources)
    return out


__all__ = [
    "AGES_H", "OVERLAPS", "EpisodicSurfaceExplorer", "SemanticThresholdExplorer",
    "episode_verdicts", "min_overlap", "oldest_full_match_hours", "probe_episodes",
    "score_surface", "semantic_matrix", "semantic_recall", "separating_thresholds",
    "service_demo", "surface_facts", "threshold_line",
]
