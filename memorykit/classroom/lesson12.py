"""Lesson 12: parameter tuning: recall surfaces, Pareto fronts, per-category breakdowns.

Pure computation (tested, benchmarked):

* The data (``memorykit.classroom.data.load_tuning_data``): a local LoCoMo copy named by
  ``MEMORYKIT_LOCOMO``, else the bundled LoCoMo-*schema* fixture (invented text).
* ``precompute(dataset)``: every sweep the explorer shows, run once with ``run_sweep``: the
  tunable policies of ``toolkit.TUNABLE`` over their two-parameter grids, and the toolkit's
  memories and the baselines with their defaults, at every budget of ``BUDGETS``.
  ``TuningSweeps`` holds numpy arrays indexed (parameter 1, parameter 2, budget), so a widget
  only re-slices them, and the comparison notes the sweeps' results give.
* Your own logs: ``explore_file(conversations, questions)`` (``memorykit.evaluation.chatlog``).

Explorer: ``TuningExplorer`` (policy dropdown; sliders for its two parameters and the budget):
the recall surface as a heatmap, the Pareto front of recall against tokens across every policy
and budget, and recall per question category beside the default BM25 at the same budget.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.evaluation import (EvalDataset, cheapest_reaching, compare_policies, grid,
                                  load_chat_logs, pareto_front, run_sweep)
from memorykit.evaluation.toolkit import FIXED_POLICIES, TUNABLE, Tunable, fixed_policy
from memorykit.classroom.explorer import LessonExplorer, _go, _widgets
from memorykit.classroom.lesson12_checks import EXERCISE_BUDGET
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.data import load_tuning_data

BUDGETS: tuple[int, ...] = (250, 500, 1000, 2000)
"""Token budgets every configuration is evaluated at."""


# ------------------------------------------------------------------ sweeps
@dataclass(frozen=True)
class Surface:
    """One tunable policy's sweep as arrays indexed (parameter 1, parameter 2, budget)."""

    name: str
    knobs: Tunable
    recall: np.ndarray
    tokens: np.ndarray
    answer_recall: np.ndarray
    over_budget: np.ndarray
    """Share of questions whose context exceeded the budget (they score 0)."""
    category_recall: np.ndarray
    """(category, parameter 1, parameter 2, budget); NaN where a category has no question."""


@dataclass(frozen=True)
class TuningSweeps:
    """Everything the explorer shows, computed once."""

    description: str
    budgets: tuple[int, ...]
    categories: tuple[str, ...]
    separate: tuple[str, ...]
    surfaces: dict[str, Surface]
    points: list[dict[str, Any]]
    """Every (policy, configuration, budget): label, policy, budget, tokens, recall,
    answer_recall, over_budget (the front and "cheapest" skip rows over their budget)."""
    front: list[dict[str, Any]]
    n_evaluations: int
    units: str
    """The tokens' unit (billed), printed with every table."""
    notes: dict[int, list[str]]
    """Per budget, the fixed-setting policies' comparison notes, read from the sweep's results."""


def _label(name: str, params: dict[str, Any]) -> str:
    return name + ("(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def precompute(dataset: EvalDataset | None = None, description: str | None = None, *,
               budgets: tuple[int, ...] = BUDGETS, progress: bool = True,
               executor: Any = None, workers: int = 0) -> TuningSweeps:
    """Run every sweep of the lesson (see the module docstring); ``progress`` shows tqdm bars.

    ``executor`` is any ``concurrent.futures.Executor`` (a Dask client's ``get_executor()``
    too); ``workers=n`` (n >= 2) instead opens a ``ProcessPoolExecutor(n)`` for the call, its
    workers started with ``spawn`` (forking a Jupyter kernel, which runs threads, is unsafe).
    The rows are the same either way (``run_sweep`` keeps configuration order).
    """
    if require_int("workers", workers, minimum=0) >= 2 and executor is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            return precompute(dataset, description, budgets=budgets, progress=progress,
                              executor=pool)
    if dataset is None:
        dataset, description = load_tuning_data()
    categories = tuple(dataset.categories())
    separate = tuple(c for c in ("adversarial",) if c in categories)
    surfaces: dict[str, Surface] = {}
    points: list[dict[str, Any]] = []
    n_eval = 0
    for name, k in TUNABLE.items():
        configs = grid({k.names[0]: list(k.values[0]), k.names[1]: list(k.values[1])})
        sweep = run_sweep(k.make, configs, dataset, list(budgets), progress=progress,
                          executor=executor, chunksize=1 if executor is None else len(budgets))
        n_eval += len(rows := sweep.to_records())
        columns = ("recall", "tokens", "answer_recall", "over_budget")
        arrays = sweep.grid_arrays(dict(zip(k.names, k.values)), budgets,
                                   (*columns, *(f"recall:{c}" for c in categories)))
        surfaces[name] = Surface(name, k, *(arrays[c] for c in columns),
                                 np.stack([arrays[f"recall:{c}"] for c in categories]))
        points += [_point(_label(name, {n: r[n] for n in k.names}), name, r) for r in rows]
    sweep = run_sweep(fixed_policy, [{"name": n} for n in FIXED_POLICIES], dataset, list(budgets),
                      progress=progress, executor=executor)
    points += [_point(r["name"], r["name"], r) for r in sweep.to_records()]
    n_eval += len(sweep)
    _SWEPT[:] = [(dataset, TuningSweeps(
        description or dataset.name, tuple(budgets), categories, separate, surfaces, points,
        pareto_front(points), n_eval, sweep.units, sweep.comparison_notes("name", FIXED_POLICIES,
                                                                          dataset)))]
    return _SWEPT[0][1]


_SWEPT: list[tuple[EvalDataset, TuningSweeps]] = []  # the last precompute (comparison_notes)


def _point(label: str, policy: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"label": label, "policy": policy,
            **{c: row[c] for c in ("budget", "tokens", "recall", "answer_recall", "over_budget")}}


def comparison_notes(dataset: EvalDataset, budget: int = EXERCISE_BUDGET) -> tuple[str, ...]:
    """The tokens' unit, and which fixed-setting policies coincide on every question and why:
    read from the last ``precompute`` of this dataset (no policy evaluated again), else computed."""
    swept = next((s for d, s in _SWEPT if d is dataset and budget in s.notes), None)
    return tuple(swept.notes[budget]) if swept else \
        compare_policies(FIXED_POLICIES, dataset, budget)[0].notes


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


_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31")


class TuningExplorer(LessonExplorer):
    """Recall surface, Pareto front and per-category recall of one configuration."""

    title = "Evidence recall at a token budget"

    def __init__(self, sweeps: TuningSweeps, policy: str = "bm25", budget: int = 1000) -> None:
        if policy not in sweeps.surfaces:
            raise ValueError(f"policy must be one of {', '.join(sweeps.surfaces)}, got {policy!r}")
        if budget not in sweeps.budgets:
            raise ValueError(f"budget must be one of {sweeps.budgets}, got {budget!r}")
        self.sweeps = sweeps
        p1, p2 = sweeps.surfaces[policy].knobs.default_index
        super().__init__(policy=policy, p1=p1, p2=p2, budget=budget)

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

        go = _go()
        fig = go.FigureWidget(make_subplots(
            rows=2, cols=2, column_widths=[0.45, 0.55], row_heights=[0.45, 0.55],
            specs=[[{}, {}], [{"colspan": 2}, None]], horizontal_spacing=0.25,
            vertical_spacing=0.16,
            subplot_titles=("recall surface", "recall by category",
                            "Pareto front: recall vs tokens")))
        fig.add_heatmap(name="recall surface", z=[[0.0]], x=["."], y=["."], zmin=0, zmax=1,
                        colorscale="Viridis",
                        colorbar=dict(title=dict(text="recall", side="top"), x=0.36,
                                      xanchor="left", len=0.42, y=1.0, yanchor="top",
                                      thickness=12), row=1, col=1,
                        hovertemplate="%{y}, %{x}: recall %{z:.3f}<extra></extra>")
        fig.add_scatter(x=["."], y=["."], mode="markers", name="selected cell", showlegend=False,
                        marker=dict(symbol="square-open", size=22, color="red", line=dict(width=3)),
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
        for name, color in (("selected", "red"), ("bm25 default", "gray")):
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
        return TuningView(p["policy"], i, j, k, p["budget"], s.recall[:, :, k],
                          float(s.recall[i, j, k]), float(s.tokens[i, j, k]),
                          s.category_recall[:, i, j, k], bm.category_recall[:, bi, bj, k],
                          float(bm.recall[bi, bj, k]))

    def _draw(self, v: TuningView) -> None:
        k = self.sweeps.surfaces[v.policy].knobs
        xs = [str(x) for x in k.values[1]]
        ys = [str(y) for y in k.values[0]]
        heat = self.trace("recall surface")
        heat.z, heat.x, heat.y = heat_grid(v.surface), xs, ys
        cell = self.trace("selected cell")
        cell.x, cell.y = [xs[v.j]], [ys[v.i]]
        self.fig.layout.xaxis.title = k.names[1]
        self.fig.layout.yaxis.title = k.names[0]
        star = self.trace("selected configuration")
        star.x, star.y = [v.tokens], [v.recall]
        self.trace("selected").y = np.nan_to_num(v.categories)
        self.trace("bm25 default").y = np.nan_to_num(v.bm25_categories)

    def summary(self) -> dict[str, Any]:
        v: TuningView = self.result
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
                      "(shown as a bar)"} if sw.separate else {})


def explore_file(conversations: Any, questions: Any, *, progress: bool = False) -> TuningExplorer:
    """The explorer on your own OpenAI-format logs and questions (``.jsonl``/``.json`` paths);
    ``python -m memorykit tune`` runs the same sweeps without a notebook."""
    data = load_chat_logs(conversations, questions)
    return TuningExplorer(precompute(data, f"{data.name}: {len(data)} conversations, "
                                     f"{data.n_questions:,} questions", progress=progress))


def front_rows(sweeps: TuningSweeps) -> list[dict[str, Any]]:
    """The Pareto front as printable rows (rounded; the tokens column names its unit)."""
    return [{"configuration": p["label"], "budget": p["budget"],
             f"{sweeps.units}_tokens": int(round(p["tokens"])), "recall": round(p["recall"], 3),
             "answer_recall": round(p["answer_recall"], 3)} for p in sweeps.front]


def policy_table(sweeps: TuningSweeps, budget: int = EXERCISE_BUDGET) -> list[dict[str, Any]]:
    """Every fixed policy and each tunable one at its defaults, at ``budget`` (over budget: 0)."""
    if budget not in sweeps.budgets:
        raise ValueError(f"budget must be one of {sweeps.budgets}, got {budget!r}")
    k = sweeps.budgets.index(budget)
    points = [p for p in sweeps.points if p["budget"] == budget and p["policy"] not in sweeps.surfaces]
    for name, s in sweeps.surfaces.items():
        i, j = s.knobs.default_index
        points.append({"label": _label(name, dict(zip(s.knobs.names, s.knobs.defaults))),
                       "tokens": s.tokens[i, j, k], "recall": s.recall[i, j, k],
                       "answer_recall": s.answer_recall[i, j, k], "over_budget": s.over_budget[i, j, k]})
    rows = [{"policy": p["label"], f"{sweeps.units}_tokens": int(round(p["tokens"])),
             "over_budget": round(float(p["over_budget"]), 3), "recall": round(float(p["recall"]), 3),
             "answer_recall": round(float(p["answer_recall"]), 3)} for p in points]
    return sorted(rows, key=lambda r: (-r["recall"], r[f"{sweeps.units}_tokens"]))
