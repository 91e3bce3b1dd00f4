"""Lesson 12: parameter tuning: recall surfaces, Pareto fronts, per-category breakdowns.

* The data (``memorykit.classroom.data.load_tuning_data``): a local LoCoMo copy named by
  ``MEMORYKIT_LOCOMO``, else the bundled LoCoMo-*schema* fixture (invented text).
* The sweeps (``memorykit.classroom.lesson12_sweeps``, re-exported here): ``precompute(dataset)``
  runs every configuration once into ``TuningSweeps`` (arrays the explorer only re-slices);
  ``policy_table`` and ``comparison_notes`` print what they found, ``bm25_sensitivity`` why
  BM25's surface moves or not. The held-out figures (``memorykit.classroom.lesson12_heldout``,
  re-exported here) come from the same evaluations: ``heldout_table`` (picked on tuning
  conversations, scored on held-out ones, with intervals), ``fold_rows`` (how),
  ``conversation_sums`` (what the bootstrap resamples), ``paired_rows``, ``front_rows``.
* Your own logs: ``explore_file(conversations, questions)`` (``memorykit.evaluation.chatlog``).

Explorer: ``TuningExplorer`` (policy dropdown; sliders for its two parameters and the budget):
the recall surface as a heatmap (each cell's recall printed on it, colours spanning the policy's
own range), the Pareto front of recall against tokens across every policy
and budget, and recall per question category beside the default BM25 at the same budget.
``yours=MyRetrieval`` (a ``ScoredRetrieval`` subclass) adds the student's policy, evaluated on
the same data at every budget (``sweep_yours``): its points on the Pareto panel (the selected
budget's larger) and its bars beside the selection's.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit.classroom.explorer import Implementation, LessonExplorer, _widgets, yours_name
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.lesson12_sweeps import TuningSweeps, YourSweep, precompute, sweep_yours
from memorykit.classroom.lesson12_sweeps import (  # noqa: F401  (the notebook imports them here)
    BUDGETS, Surface, bm25_sensitivity, comparison_notes, policy_table)
from memorykit.classroom.lesson12_heldout import (  # noqa: F401  (the notebook imports them here)
    conversation_sums, fold_rows, front_rows, heldout_notes, heldout_table, paired_rows)
from memorykit.evaluation.pareto import cheapest_reaching
from memorykit.evaluation.chatlog import load_chat_logs
from memorykit.evaluation.scored import ScoredRetrieval

class _PolicyClass(Implementation):
    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, ScoredRetrieval):  # MyRetrieval() for MyRetrieval: say so
            raise TypeError(f"{name} must be your class itself, not an instance of it: pass "
                            f"{type(value).__name__}, not {type(value).__name__}()")
        return super().check(name, value)


YOURS = _PolicyClass("a ScoredRetrieval subclass (a retrieval policy writing score)",
                     ScoredRetrieval)


# ---------------------------------------------------------------- explorer
@dataclass(frozen=True)
class TuningView:
    policy: str
    i: int
    j: int
    k: int
    budget: int
    surface: np.ndarray
    recall: float
    tokens: float
    categories: np.ndarray
    bm25_categories: np.ndarray
    bm25_recall: float
    yours: dict[str, YourSweep] = field(default_factory=dict)
    """The student's policies at every budget, by name."""


_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31")


class TuningExplorer(LessonExplorer):
    """Recall surface, Pareto front and per-category recall of one configuration; ``yours=``
    a student's retrieval policy adds its points and bars beside the library's."""

    title = "Evidence recall at a token budget"
    implementation = YOURS

    def __init__(self, sweeps: TuningSweeps, policy: str = "bm25", budget: int = 1000,
                 yours: Any = None) -> None:
        if policy not in sweeps.surfaces:
            raise ValueError(f"policy must be one of {', '.join(sweeps.surfaces)}, got {policy!r}")
        if budget not in sweeps.budgets:
            raise ValueError(f"budget must be one of {sweeps.budgets}, got {budget!r}")
        if yours is not None and sweeps.dataset is None:
            raise ValueError("these sweeps do not say which data they ran on: make them with "
                             "precompute(data) to draw your policy beside them")
        self.sweeps = sweeps
        p1, p2 = sweeps.surfaces[policy].knobs.default_index
        super().__init__(yours=yours, policy=policy, p1=p1, p2=p2, budget=budget)

    def _options(self, policy: str, axis: int) -> list[tuple[str, int]]:
        return [(str(v), n) for n, v in enumerate(self.sweeps.surfaces[policy].knobs.values[axis])]

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        w = _widgets()
        policy = params["policy"]
        names = self.sweeps.surfaces[policy].knobs.names
        style = {"description_width": "initial"}

        def slider(options: list[Any], value: Any, description: str) -> Any:
            return w.SelectionSlider(options=options, value=value, description=description,
                                     continuous_update=False, style=style,
                                     layout=w.Layout(width="420px"))

        return {"policy": w.Dropdown(options=list(self.sweeps.surfaces), value=policy,
                                     description="policy", style=style),
                "p1": slider(self._options(policy, 0), params["p1"], names[0]),
                "p2": slider(self._options(policy, 1), params["p2"], names[1]),
                "budget": slider(list(self.sweeps.budgets), params["budget"], "budget (tokens)")}

    def _merge(self, params: dict[str, Any]) -> dict[str, Any]:
        """A new policy resets the two parameter sliders to its defaults; indices are checked."""
        merged = {**self.params, **params}
        if merged["policy"] not in self.sweeps.surfaces:
            raise ValueError(f"policy must be one of {', '.join(self.sweeps.surfaces)}, "
                             f"got {merged['policy']!r}")
        k = self.sweeps.surfaces[merged["policy"]].knobs
        if merged["policy"] != self.params.get("policy") and not {"p1", "p2"} & set(params):
            merged["p1"], merged["p2"] = k.default_index
        for axis in (0, 1):
            key = f"p{axis + 1}"
            if not (isinstance(merged[key], int) and 0 <= merged[key] < len(k.values[axis])):
                raise ValueError(f"{key} must be an index into {k.names[axis]} values "
                                 f"{k.values[axis]}, got {merged[key]!r}")
        return merged

    def _sync_sliders(self, params: dict[str, Any]) -> None:
        k = self.sweeps.surfaces[params["policy"]].knobs
        if self.sliders["p1"].description != k.names[0] or self.sliders["policy"].value != params["policy"]:
            for axis in (0, 1):
                s = self.sliders[f"p{axis + 1}"]
                s.options = self._options(params["policy"], axis)
                s.description = k.names[axis]
        super()._sync_sliders(params)

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        fig = make_subplots(
            rows=2, cols=2, column_widths=[0.45, 0.55], row_heights=[0.45, 0.55],
            specs=[[{}, {}], [{"colspan": 2}, None]], horizontal_spacing=0.25,
            vertical_spacing=0.16,
            subplot_titles=("recall surface", "recall by category",
                            "Pareto front: recall vs tokens"))
        fig.add_heatmap(name="recall surface", z=[[0.0]], x=["."], y=["."], zmin=0, zmax=1,
                        colorscale="Viridis", texttemplate="%{z:.3f}", textfont=dict(size=10),
                        colorbar=dict(title=dict(text="recall", side="top"), x=0.36,
                                      xanchor="left", len=0.42, y=1.0, yanchor="top",
                                      thickness=12), row=1, col=1,
                        hovertemplate="%{y}, %{x}: recall %{z:.3f}<extra></extra>")
        fig.add_scatter(x=["."], y=["."], mode="markers", name="selected cell", showlegend=False,
                        marker=dict(symbol="square-open", size=34, color="red", line=dict(width=2)),
                        row=1, col=1, hoverinfo="skip")
        pts = self.sweeps.points
        names = list(dict.fromkeys(p["policy"] for p in pts))
        for n, name in enumerate(names):
            mine = [p for p in pts if p["policy"] == name]
            fig.add_scatter(x=[p["tokens"] for p in mine], y=[p["recall"] for p in mine],
                            mode="markers", name=name, marker=dict(size=6, color=_COLORS[n % 13],
                                                                   opacity=0.6),
                            text=[f"{p['label']} @ {p['budget']}" for p in mine],
                            hovertemplate="%{text}<br>%{x:.0f} tokens, recall %{y:.3f}<extra></extra>",
                            row=2, col=1)
        front = self.sweeps.front
        fig.add_scatter(x=[p["tokens"] for p in front], y=[p["recall"] for p in front],
                        mode="lines", name="Pareto front", line=dict(color="black", dash="dot"),
                        hoverinfo="skip", row=2, col=1)
        fig.add_scatter(x=[0], y=[0], mode="markers", name="selected configuration",
                        marker=dict(symbol="star", size=16, color="red"), row=2, col=1)
        for name in self.yours:  # the student's policy: black crosses joined budget to budget
            fig.add_scatter(x=[], y=[], mode="lines+markers", name=yours_name(name), text=[],
                            line=dict(color="black", width=1),
                            marker=dict(symbol="x-thin-open", size=10, color="black",
                                        line=dict(width=2)),
                            hovertemplate="%{text}<br>%{x:.0f} tokens, recall %{y:.3f}"
                                          "<extra></extra>", row=2, col=1)
        for name, color in (("selected", "red"), ("bm25 default", "gray"),
                            *((_by_category(name), "black") for name in self.yours)):
            fig.add_bar(x=list(self.sweeps.categories), y=[0] * len(self.sweeps.categories),
                        name=name, marker_color=color, row=1, col=2)
        fig.update_xaxes(type="log", dtick=1, title="mean context tokens (log)", row=2, col=1)
        fig.update_yaxes(range=[-0.02, 1.05], title="recall", row=2, col=1)
        fig.update_yaxes(range=[0, 1.05], title="recall", row=1, col=2)
        fig.update_layout(height=760, margin=dict(l=60, r=10, t=70, b=40), title=self.title,
                          barmode="group", legend=legend_below(font=dict(size=10)))
        return fig

    def _compute(self, **p: Any) -> TuningView:
        s = self.sweeps.surfaces[p["policy"]]
        k = self.sweeps.budgets.index(p["budget"])
        i, j = p["p1"], p["p2"]
        bm = self.sweeps.surfaces["bm25"]
        bi, bj = bm.knobs.default_index
        yours = {name: sweep_yours(self.sweeps.dataset, cls, self.sweeps.budgets,
                                   self.sweeps.categories) for name, cls in self.yours.items()}
        return TuningView(p["policy"], i, j, k, p["budget"], s.recall[:, :, k],
                          float(s.recall[i, j, k]), float(s.tokens[i, j, k]),
                          s.category_recall[:, i, j, k], bm.category_recall[:, bi, bj, k],
                          float(bm.recall[bi, bj, k]), yours)

    def _draw(self, v: TuningView) -> None:
        k = self.sweeps.surfaces[v.policy].knobs
        xs = [str(x) for x in k.values[1]]
        ys = [str(y) for y in k.values[0]]
        if self.moved("policy", "budget"):  # the surface; the two parameters only move the cell
            heat = self.trace("recall surface")
            # to the summary's 3 decimals: the text on a cell is the number the summary prints
            heat.z, heat.x, heat.y = heat_grid(v.surface, decimals=3), xs, ys
            heat.zmin, heat.zmax = _colour_range(self.sweeps.surfaces[v.policy].recall)
            self.fig.layout.xaxis.title = k.names[1]
            self.fig.layout.yaxis.title = k.names[0]
        cell = self.trace("selected cell")
        cell.x, cell.y = [xs[v.j]], [ys[v.i]]
        star = self.trace("selected configuration")
        star.x, star.y = [v.tokens], [v.recall]
        self.trace("selected").y = np.nan_to_num(v.categories)
        if self.moved("budget"):  # the default BM25 and the student's policy have no parameters
            self.trace("bm25 default").y = np.nan_to_num(v.bm25_categories)
            for name, mine in v.yours.items():
                points = self.trace(yours_name(name))
                points.x, points.y = mine.tokens, np.nan_to_num(mine.recall)
                points.text = [f"{name} @ {b}" for b in self.sweeps.budgets]
                points.marker.size = [18 if b == v.budget else 10 for b in self.sweeps.budgets]
                self.trace(_by_category(name)).y = np.nan_to_num(mine.category_recall[:, v.k])

    def summary(self, **params: Any) -> dict[str, Any]:
        """What the figure shows now; with ``params`` (``policy="attention"``...), what it would
        show at those settings, computed without moving the sliders or the figure."""
        unknown = set(params) - set(self.sliders)
        if unknown:
            raise TypeError(f"unknown parameter(s) {', '.join(sorted(unknown))}; "
                            f"expected some of {', '.join(self.sliders)}")
        v: TuningView = self._compute(**self._merge(params)) if params else self.result
        sw = self.sweeps
        k = sw.surfaces[v.policy].knobs
        config = f"{k.names[0]}={k.values[0][v.i]}, {k.names[1]}={k.values[1][v.j]}"
        best = np.unravel_index(int(np.argmax(v.surface)), v.surface.shape)
        cats = ", ".join(f"{c} {x:.3f}" for c, x in zip(sw.categories, v.categories) if not np.isnan(x))
        target = 0.9
        cheapest = cheapest_reaching(sw.points, target)
        return {
            "data": sw.description,
            "selected": f"{v.policy}({config}) at {v.budget} tokens",
            "recall": round(v.recall, 3),
            f"mean_{sw.units}_tokens": int(round(v.tokens)),
            "recall_by_category": cats,
            "bm25_default_recall_at_this_budget": round(v.bm25_recall, 3),
            "beats_bm25_default": v.recall > v.bm25_recall,
            "surface_best": (f"{k.names[0]}={k.values[0][best[0]]}, {k.names[1]}={k.values[1][best[1]]}"
                             f": recall {float(v.surface[best]):.3f}"),
            "surface_worst_recall": round(float(v.surface.min()), 3),
            "evaluations_precomputed": sw.n_evaluations,
            "pareto_front": len(sw.front),
            f"cheapest_reaching_{target:.0%}": (
                "none" if cheapest is None else
                f"{cheapest['label']} at {cheapest['budget']}: {cheapest['tokens']:.0f} tokens, "
                f"recall {cheapest['recall']:.3f}"),
        } | ({"note": f"{', '.join(sw.separate)} questions are left out of recall "
                      "(shown as a bar)"} if sw.separate else {}) | self._yours_summary(v)

    def print_summary(self, **params: Any) -> None:
        """Print ``summary(**params)``: with ``params``, the numbers at other settings while the
        explorer a student sees stays where its cell put it."""
        for key, value in self.summary(**params).items():
            print(f"{key}: {value}")

    def _yours_summary(self, v: TuningView) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, mine in v.yours.items():
            recall = float(mine.recall[v.k])
            cats = ", ".join(f"{c} {x:.3f}" for c, x in
                             zip(self.sweeps.categories, mine.category_recall[:, v.k])
                             if not np.isnan(x))
            out |= {f"{yours_name(name)}_recall": round(recall, 3),
                    f"{yours_name(name)}_mean_{self.sweeps.units}_tokens":
                        int(round(float(mine.tokens[v.k]))),
                    f"{yours_name(name)}_recall_by_category": cats,
                    f"{yours_name(name)}_beats_bm25_default": recall > v.bm25_recall}
        return out


def _colour_range(recall: np.ndarray) -> tuple[float, float]:
    """The colour bar's range: the policy's recall over its grid at every budget (one scale
    while the budget moves), widened to 0.01 when the surface is flat, so a flat surface reads
    as one colour with its value printed on every cell, not as a fixed 0-1 scale's mid-tone."""
    lo, hi = float(np.nanmin(recall)), float(np.nanmax(recall))
    pad = max(0.0, 0.01 - (hi - lo)) / 2
    return float(np.floor((lo - pad) * 1e4) / 1e4), float(np.ceil((hi + pad) * 1e4) / 1e4)


def _by_category(name: str) -> str:
    """The trace name of a student's per-category bars (its points are ``yours_name(name)``)."""
    return yours_name(f"{name} by category")


def explore_file(conversations: Any, questions: Any, *, progress: bool = False) -> TuningExplorer:
    """The explorer on your own OpenAI-format logs and questions (``.jsonl``/``.json`` paths);
    ``python -m memorykit tune`` runs the same sweeps without a notebook."""
    data = load_chat_logs(conversations, questions)
    return TuningExplorer(precompute(data, f"{data.name}: {len(data)} conversations, "
                                     f"{data.n_questions:,} questions", progress=progress))
