"""Lesson 09: episodic recall, D3's score over keyword overlap and age, and its threshold.

* ``score_surface`` / ``threshold_line`` / ``surface_facts``: D3's episodic score over
  keyword overlap x age, its threshold contour and the boundary (``memorykit.longterm.episodic``);
  ``probe_episodes()``: where D3's four probe episodes sit on that surface;
  ``query_tokens_comparison()``: the same episodes under D3's T_q and memorykit's variant.
* ``your_surface(score_function, alpha, beta, tau_hours)``: a student's ``episodic_score`` on a
  grid of made-up episodes (``YOUR_OVERLAPS`` x ``YOUR_AGES_H``) and on the probe episodes, with
  the library's S at the same points; ``your_threshold_line``: its contour S = threshold.

The surfaces are memoized (``memo``) by the weights, so a threshold move only re-reads them.
The semantic threshold lives in ``lesson09_semantic``, the memory service in ``lesson09_service``.

Explorer: ``EpisodicSurfaceExplorer`` (alpha, beta, tau, threshold); ``yours=episodic_score``
adds the student's surface as a second heat map, and both thresholds' contours on both.
Offline, deterministic. Taught in ``notebooks/09_long_term_memory.ipynb``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit.classroom.explorer import (Implementation, LessonExplorer, Setting, _go, defaults,
                                          yours_name)
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.memo import memo
from memorykit.classroom.replays.episode_probes import probe_episodes, query_tokens_comparison
from memorykit.longterm.episodic import (HOUR, EpisodicSettings, episode_scores,
                                         full_match_horizon_seconds, overlap_needed)

OVERLAPS = np.linspace(0.0, 1.0, 101)
"""Keyword overlap |K_e & T_q| / |T_q| on the surface's y axis."""
AGES_H = np.linspace(0.0, 96.0, 193)
"""Episode age in hours on the x axis (four days, half-hour steps)."""


# ------------------------------------------------------------------ episodic
def _weights(alpha: float, beta: float, tau_hours: float, threshold: float = 0.7) -> dict[str, Any]:
    """The sliders as scoring keywords, checked by ``EpisodicSettings`` under the sliders' names."""
    s = EpisodicSettings(alpha=alpha, beta=beta, tau_hours=tau_hours, threshold=threshold)
    return dict(alpha=s.alpha, beta=s.beta, tau_seconds=s.tau_hours * HOUR, threshold=s.threshold)


@memo(maxsize=256)
def score_surface(alpha: float = 0.6, beta: float = 0.4, tau_hours: float = 24.0) -> np.ndarray:
    """S over (overlap, age): shape (len(OVERLAPS), len(AGES_H)), read-only."""
    w = _weights(alpha, beta, tau_hours)
    del w["threshold"]
    z = episode_scores(OVERLAPS[:, None], AGES_H[None, :] * HOUR, **w)
    z.flags.writeable = False
    return z


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


# ------------------------------------------------------------ the student's
YOURS = Implementation(
    "a function episodic_score(keywords, query_words, age_hours, alpha, beta, tau_hours)",
    parameters=("keywords", "query_words", "age_hours", "alpha", "beta", "tau_hours"))
YOUR_QUERY = ("what", "was", "the", "locker", "code", "at", "gym", "refund", "order", "number",
              "pin", "support", "line", "callback", "phone", "flight", "seat", "booking",
              "parcel", "tracking")
"""T_q of the made-up episodes a student's score is drawn on (20 words: overlap steps of 0.05)."""
YOUR_OTHER_KEYWORDS = ("running", "weather", "coffee", "weekend")
"""Keywords of every made-up episode that are not query words (an episode knows more)."""
YOUR_OVERLAPS = np.arange(len(YOUR_QUERY) + 1) / len(YOUR_QUERY)
YOUR_AGES_H = AGES_H[::4]
"""Ages of the student's grid: every 2 hours (a Python function is called once per cell)."""


@dataclass(frozen=True, eq=False)
class YourSurface:
    """A student's score on the grid and on the probe episodes, beside the library's."""

    z: np.ndarray
    """Their S over (YOUR_OVERLAPS, YOUR_AGES_H)."""
    library: np.ndarray
    """The library's S at the same points."""
    probes: tuple[float, ...]
    """Their S of each probe episode (``probe_episodes()``)."""

    def max_difference(self) -> float:
        return float(np.max(np.abs(self.z - self.library)))


def _score(fn: Any, keywords: list[str], query: frozenset[str], age_hours: float,
           w: dict[str, float]) -> float:
    """``fn``'s S of one episode; an error names the episode, a non-number what came back."""
    name = getattr(fn, "__name__", repr(fn))
    try:
        s = fn(list(keywords), frozenset(query), float(age_hours), **w)
    except Exception as error:
        error.add_note(f"while the explorer scored keywords {keywords}, query_words "
                       f"{sorted(query)}, age_hours {age_hours:g} with yours: {name} ({w})")
        raise
    if isinstance(s, bool) or not isinstance(s, (int, float, np.integer, np.floating)):
        raise TypeError(f"yours: {name} must return a number (S), returned {s!r} for keywords "
                        f"{keywords}, query_words {sorted(query)}, age_hours {age_hours:g}")
    return float(s)


@memo(maxsize=128)
def your_surface(score_function: Any, alpha: float = 0.6, beta: float = 0.4,
                 tau_hours: float = 24.0) -> YourSurface:
    """``score_function`` (a student's ``episodic_score``) on the grid: an episode whose
    keywords hold k of ``YOUR_QUERY``'s 20 words (plus ``YOUR_OTHER_KEYWORDS``), at each of
    ``YOUR_AGES_H``; and on the probe episodes' own keywords and question words."""
    fn = YOURS.check("score_function", score_function)
    lib = _weights(alpha, beta, tau_hours)
    w = {"alpha": lib["alpha"], "beta": lib["beta"], "tau_hours": lib["tau_seconds"] / HOUR}
    query = frozenset(YOUR_QUERY)
    z = np.array([[_score(fn, [*YOUR_QUERY[:k], *YOUR_OTHER_KEYWORDS], query, age, w)
                   for age in YOUR_AGES_H] for k in range(len(YOUR_QUERY) + 1)])
    library = episode_scores(YOUR_OVERLAPS[:, None], YOUR_AGES_H[None, :] * HOUR,
                             alpha=lib["alpha"], beta=lib["beta"], tau_seconds=lib["tau_seconds"])
    probes = tuple(_score(fn, list(e.keywords), e.query_words, e.age_hours, w)
                   for e in probe_episodes())
    for a in (z, library):
        a.flags.writeable = False
    return YourSurface(z, library, probes)


def your_threshold_line(z: np.ndarray, threshold: float) -> np.ndarray:
    """The overlap at which a grid's S first rises above ``threshold``, per age (linear
    between grid rows; NaN where even overlap 0 passes or no overlap does)."""
    above = z > threshold
    first = np.where(above.any(axis=0), above.argmax(axis=0), -1)
    out = np.full(z.shape[1], np.nan)
    for j, k in enumerate(first):
        if k > 0:  # between rows k-1 (at or under) and k (above)
            lo, hi = z[k - 1, j], z[k, j]
            t = (threshold - lo) / (hi - lo) if hi != lo else 1.0
            out[j] = YOUR_OVERLAPS[k - 1] + t * (YOUR_OVERLAPS[k] - YOUR_OVERLAPS[k - 1])
    return out


# ------------------------------------------------------------------ explorer
LINE = "S = threshold (white dashes)"
PROBES = "probe episodes (red: recalled)"
_YOUR_LINE = dict(color="#ff7f0e", width=5)


class EpisodicSurfaceExplorer(LessonExplorer):
    """D3's hybrid score over keyword overlap x age, with the threshold contour."""

    title = "Episodic score S = alpha·overlap + beta·exp(-age/tau)"
    implementation = YOURS

    settings = (Setting("alpha", "alpha (keyword weight)", 0.6, 0.0, 1.0, 0.05),
                Setting("beta", "beta (recency weight)", 0.4, 0.0, 1.0, 0.05),
                Setting("tau_hours", "tau (hours)", 24.0, 1.0, 96.0, 1.0, ".0f"),
                Setting("threshold", "threshold", 0.7, 0.0, 1.5, 0.05))

    def __init__(self, yours: Any = None, **settings: float) -> None:
        # the library validates: a bad weight fails here, before any slider is drawn
        surface_facts(**{**defaults(self.settings), **settings})
        super().__init__(yours=yours, **settings)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        rows = 1 + len(self.yours)
        fig = _go().Figure() if rows == 1 else make_subplots(
            rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.1, subplot_titles=(
                "the library's S", *(f"{yours_name(n)} (every 2 h, overlap steps of 0.05)"
                                     for n in self.yours)))
        at = {} if rows == 1 else dict(row=1, col=1)
        fig.add_heatmap(name="S", x=AGES_H, y=OVERLAPS, z=np.zeros((2, 2)), colorscale="Viridis",
                        zmin=0, zmax=2, colorbar=dict(title="S"), **at,
                        hovertemplate="age %{x:.1f} h, overlap %{y:.2f}: S %{z:.3f}<extra></extra>")
        line = dict(color="white", width=3, dash="dash")
        for name in self.yours:
            # the student's line under the library's dashes: orange between white dashes where
            # the two agree, orange alone where they part
            fig.add_scatter(name=f"{yours_name(name)}: S = threshold (orange)", x=YOUR_AGES_H,
                            y=np.zeros_like(YOUR_AGES_H), mode="lines", line=_YOUR_LINE,
                            legendgroup=name, row=1, col=1)
        fig.add_scatter(name=LINE, x=AGES_H, y=np.zeros_like(AGES_H), mode="lines", line=line,
                        **at, **({"legendgroup": "library"} if self.yours else {}))
        eps = probe_episodes()
        probe = dict(x=[e.age_hours for e in eps], y=[e.overlap for e in eps], mode="markers",
                     hovertext=[e.question for e in eps], hoverinfo="text", cliponaxis=False,
                     marker=dict(size=12, symbol="circle", line=dict(color="white", width=2)))
        fig.add_scatter(name=PROBES, **probe, **at)
        # The probes never move (only their colour does): label them once, on a dark ground
        # so the text reads over any colour of the surface.
        for e in eps:
            fig.add_annotation(x=e.age_hours, y=e.overlap, text=e.question, showarrow=False,
                               xanchor="left", xshift=10, font=dict(color="white", size=11),
                               bgcolor="rgba(0,0,0,0.55)", borderpad=2, **at)
        for i, name in enumerate(self.yours, start=2):
            fig.add_heatmap(name=yours_name(name), x=YOUR_AGES_H, y=YOUR_OVERLAPS,
                            z=np.zeros((2, 2)), colorscale="Viridis", zmin=0, zmax=2,
                            showscale=False, row=i, col=1, hovertemplate=(
                                "age %{x:.0f} h, overlap %{y:.2f}: your S %{z:.3f}<extra></extra>"))
            fig.add_scatter(name=f"{yours_name(name)}: S = threshold (on yours)", x=YOUR_AGES_H,
                            y=np.zeros_like(YOUR_AGES_H), mode="lines", line=_YOUR_LINE,
                            legendgroup=name, showlegend=False, row=i, col=1)
            fig.add_scatter(name=f"{LINE} (on {yours_name(name)})", x=AGES_H, line=line,
                            y=np.zeros_like(AGES_H), mode="lines", legendgroup="library",
                            showlegend=False, row=i, col=1)
            fig.add_scatter(name=f"{yours_name(name)}: probe episodes", **probe, row=i, col=1)
        bottom = {} if rows == 1 else dict(row=rows, col=1)
        fig.update_xaxes(title="episode age (hours)", **bottom)
        fig.update_yaxes(title="keyword overlap (shared / question keywords)", range=[-0.1, 1.08])
        if rows > 1:
            fig.update_yaxes(title="keyword overlap")
        fig.update_layout(height=430 if rows == 1 else 100 + 340 * rows,
                          margin=dict(l=70, r=20, t=60 if rows == 1 else 90, b=50),
                          title=self.title,
                          legend=legend_below())
        return fig

    def _compute(self, **p: Any) -> dict[str, Any]:
        a, b, t, thr = p["alpha"], p["beta"], p["tau_hours"], p["threshold"]
        yours = {name: your_surface(fn, a, b, t) for name, fn in self.yours.items()}
        return {"z": score_surface(a, b, t), "line": threshold_line(a, b, t, thr),
                "verdicts": episode_verdicts(a, b, t, thr), "zmax": max(a + b, 1e-6),
                "yours": yours,
                "your_lines": {n: your_threshold_line(y.z, thr) for n, y in yours.items()},
                "your_verdicts": {n: [s > thr for s in y.probes] for n, y in yours.items()}}

    def _draw(self, r: dict[str, Any]) -> None:
        colours = {True: "#d62728", False: "#7f7f7f"}
        if self.moved("alpha", "beta", "tau_hours"):  # the surfaces ignore the threshold
            surface = self.trace("S")
            surface.z = heat_grid(r["z"])
            surface.zmax = r["zmax"]
            for name, y in r["yours"].items():
                heat = self.trace(yours_name(name))
                heat.z = heat_grid(y.z)
                heat.zmax = r["zmax"]
        self.trace(LINE).y = r["line"]
        self.trace(PROBES).marker.color = [colours[v] for v in r["verdicts"]]
        for name in self.yours:
            self.trace(f"{LINE} (on {yours_name(name)})").y = r["line"]
            for where in ("(orange)", "(on yours)"):
                self.trace(f"{yours_name(name)}: S = threshold {where}").y = r["your_lines"][name]
            self.trace(f"{yours_name(name)}: probe episodes").marker.color = [
                colours[v] for v in r["your_verdicts"][name]]

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
        for name, y in self.result["yours"].items():
            mine = self.result["your_verdicts"][name]
            out[f"{yours_name(name)}_probe_episodes_above_threshold"] = f"{sum(mine)}/{len(mine)}"
            out[f"{yours_name(name)}_max_difference_from_library"] = f"{y.max_difference():.3f}"
        return out


__all__ = ["AGES_H", "OVERLAPS", "EpisodicSurfaceExplorer", "episode_verdicts", "probe_episodes",
           "query_tokens_comparison", "score_surface", "surface_facts", "threshold_line"]
