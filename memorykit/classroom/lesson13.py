"""Lesson 13: memory that changes its mind: what each memory does with a changed fact.

* The data: ``changing_facts_dataset`` (``memorykit.classroom.scenarios.changing_facts``)
  writes conversations in which facts are stated, then updated, corrected, cancelled or
  contradicted; each question's evidence is the *current* statement and its ``superseded_ids``
  the statements it replaced. ``gap_datasets`` (in ``lesson13_memories``) makes one small set
  per gap of the explorer (the same seed, the old and the new statement that many messages
  apart).
* The metrics (``memorykit.evaluation.harness``): beside recall, per question with a
  superseded statement, ``stale_only`` (the context holds an old statement and none of the
  current one: the reader answers with the old value), ``both`` (it holds both) and
  ``both_unclear`` (both, and nothing says which is current). ``outcomes`` (in
  ``lesson13_memories``) splits every changed question into exactly one of ``OUTCOMES``.
* The memories and their sweep (``memorykit.classroom.lesson13_memories``): a recency
  buffer, the summary buffer, BM25, the hybrid retrieval, the supersession-aware retrieval
  (the old statement dropped, or kept marked) and the long-term store under each update
  policy, evaluated once at every gap and budget of the sliders.

Explorer: ``ChangingFactsExplorer`` (sliders: the long-term store's update policy, the gap
between the old and the new statement, the budget): the outcome of every changed question per
memory as stacked bars, and ``stale_only`` and ``both`` by gap for every memory.
``yours=MyRule`` (an ``UpdatePolicy`` subclass, exercise 1) adds the long-term store under the
student's rule, drawn as ``yours: MyRule`` beside the library's.
Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit._validate import require_choice, require_int
from memorykit.classroom.explorer import LessonExplorer, Setting, _widgets, yours_name
from memorykit.classroom.figure import legend_below
from memorykit.classroom.lesson13_memories import (MEMORIES, OUTCOMES, UPDATE_POLICIES, YOURS,
                                                   rule_sweep, sweep)

GAP = Setting("gap", "gap (messages)", 40, 0, 120, 40)
BUDGET = Setting("budget", "budget (tokens)", 1000, 500, 2000, 500)
GAPS = tuple(range(int(GAP.low), int(GAP.high) + 1, int(GAP.step)))
BUDGETS = tuple(range(int(BUDGET.low), int(BUDGET.high) + 1, int(BUDGET.step)))

_OUTCOME_COLORS = ("#d62728", "#ff7f0e", "#fdd0a2", "#2ca02c", "#c7c7c7")
"""stale only (red: the wrong answer), both unclear (orange), both marked (pale), current only
(green), neither (gray)."""
_LINE_COLORS = ("#7f7f7f", "#8c564b", "#1f77b4", "#9467bd", "#bcbd22", "#17becf", "#e377c2")
"""One per memory; never the outcomes' red, orange or green, so a line is not read as an outcome."""
STORE = "long-term store"
"""The row whose memory the update policy slider changes."""


@dataclass(frozen=True)
class ChangeView:
    """What the explorer shows at one setting."""

    update_policy: str
    gap: int
    budget: int
    shares: dict[str, np.ndarray]
    """Per memory (the store under the selected policy): the share of changed questions in
    each of ``OUTCOMES`` at this gap and budget."""
    by_gap: dict[str, np.ndarray]
    """Per memory: (stale_only, both) at every gap of ``GAPS``, at this budget, shape (2, gaps)."""
    recall: dict[str, float]
    changed: int
    """Changed questions at this gap (what every share divides by)."""
    yours: dict[str, tuple[np.ndarray, np.ndarray, float]] = field(default_factory=dict)
    """Per student's rule: (shares, by_gap, recall), as the library's memories."""


class ChangingFactsExplorer(LessonExplorer):
    """Stale and doubled answers per memory, by gap and budget; ``yours=`` an update rule adds
    the long-term store under it."""

    title = "What each memory puts in the context when a fact has changed"
    settings = (GAP, BUDGET)
    implementation = YOURS

    def __init__(self, seed: int = 13, conversations: int = 3, yours: Any = None,
                 update_policy: str = "keep-all", **params: Any) -> None:
        self.seed = require_int("seed", seed, minimum=0)
        self.conversations = require_int("conversations", conversations, minimum=1)
        require_choice("update_policy", update_policy, tuple(UPDATE_POLICIES))
        self.sweep = sweep(self.seed, self.conversations, GAPS, BUDGETS)
        super().__init__(yours=yours, update_policy=update_policy, **params)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        params = dict(params)
        policy = params.pop("update_policy", "keep-all")
        w = _widgets()
        dropdown = w.Dropdown(options=list(UPDATE_POLICIES), value=policy,
                              description="store's update policy",
                              style={"description_width": "initial"})
        return {"update_policy": dropdown, **super()._make_sliders(params)}

    def _merge(self, params: dict[str, Any]) -> dict[str, Any]:
        merged = {**self.params, **params}
        require_choice("update_policy", merged["update_policy"], tuple(UPDATE_POLICIES))
        for s, grid in ((GAP, GAPS), (BUDGET, BUDGETS)):
            if merged[s.name] not in grid:
                raise ValueError(f"{s.name} must be one of {grid}, got {merged[s.name]!r}")
        return merged

    def _rows(self) -> list[str]:
        return [*MEMORIES, STORE, *(yours_name(n) for n in self.yours)]

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=2, cols=2, specs=[[{"colspan": 2}, None], [{}, {}]],
                            row_heights=[0.5, 0.5], vertical_spacing=0.2, horizontal_spacing=0.12,
                            subplot_titles=("every changed question: what its context holds",
                                            "stale only (old value, no current one)",
                                            "both (the reader must tell which is current)"))
        rows = self._rows()
        for outcome, color in zip(OUTCOMES, _OUTCOME_COLORS):
            fig.add_bar(name=outcome, y=rows, x=[0.0] * len(rows), orientation="h",
                        marker_color=color, row=1, col=1,
                        hovertemplate="%{y}: %{x:.2f} " + outcome + "<extra></extra>")
        for n, name in enumerate(rows):
            mine = name.startswith("yours: ")
            style = dict(color="black", dash="dot") if mine else dict(color=_LINE_COLORS[n % 7])
            for col, what in ((1, "stale only"), (2, "both")):
                fig.add_scatter(name=name if col == 1 else f"{name} ({what})", x=list(GAPS),
                                y=[0.0] * len(GAPS), mode="lines+markers", line=style,
                                marker=dict(symbol="x-thin-open" if mine else "circle", size=8,
                                            line=dict(width=2, color=style["color"])),
                                legendgroup=name, showlegend=col == 1, row=2, col=col,
                                hovertemplate=f"{name}: %{{y:.2f}} {what} at gap %{{x}}"
                                              "<extra></extra>")
        for col in (1, 2):
            top = 1.0 if col == 2 else self._stale_top()
            fig.add_scatter(name=f"selected gap {col}", x=[GAPS[0]] * 2, y=[0, top], mode="lines",
                            line=dict(color="black", width=1, dash="dash"), showlegend=False,
                            hoverinfo="skip", row=2, col=col)
            fig.update_xaxes(title_text="gap (messages between old and new statement)",
                             tickvals=list(GAPS), row=2, col=col)
            fig.update_yaxes(range=[-0.02 * top, 1.02 * top],
                             title_text="share of changed questions", row=2, col=col)
        fig.update_xaxes(range=[0, 1], title_text="share of changed questions", row=1, col=1)
        fig.update_yaxes(autorange="reversed", row=1, col=1)
        fig.update_layout(barmode="stack", height=820, title=self.title,
                          margin=dict(l=230, r=20, t=80, b=40), legend=legend_below())
        return fig

    def _stale_top(self) -> float:
        """The stale-only panel's height: the highest share any memory reaches at any setting,
        rounded up to a tenth (fixed, so a move never rescales it; stale answers are rare)."""
        mine = [rule_sweep(rule, self.seed, self.conversations, GAPS, BUDGETS).shares
                for rule in self.yours.values()]
        highest = max(float(x[..., 0].max()) for x in [*self.sweep.shares.values(), *mine])
        return min(1.0, max(0.1, np.ceil(highest * 10) / 10))

    def _compute(self, update_policy: str, gap: int, budget: int) -> ChangeView:
        g, b = GAPS.index(gap), BUDGETS.index(budget)
        sw = self.sweep
        names = {**{m: m for m in MEMORIES}, STORE: f"{STORE}: {update_policy}"}
        shares = {row: sw.shares[key][g, b] for row, key in names.items()}
        by_gap = {row: sw.by_gap(key, b) for row, key in names.items()}
        recall = {row: float(sw.recall[key][g, b]) for row, key in names.items()}
        yours = {}
        for name, rule in self.yours.items():
            mine = rule_sweep(rule, self.seed, self.conversations, GAPS, BUDGETS)
            yours[name] = (mine.shares[g, b], mine.by_gap(b), float(mine.recall[g, b]))
        return ChangeView(update_policy, gap, budget, shares, by_gap, recall,
                          int(sw.changed[g]), yours)

    def _draw(self, v: ChangeView) -> None:
        shares = {**v.shares, **{yours_name(n): y[0] for n, y in v.yours.items()}}
        by_gap = {**v.by_gap, **{yours_name(n): y[1] for n, y in v.yours.items()}}
        rows = self._rows()
        labels = [f"{STORE} ({v.update_policy})" if r == STORE else r for r in rows]
        for k, outcome in enumerate(OUTCOMES):
            bars = self.trace(outcome)
            bars.x = [round(float(shares[r][k]), 3) for r in rows]
            if self.moved("update_policy"):  # the store's bar says which policy it shows
                bars.y = labels
        if self.moved("update_policy", "budget"):  # the gap only moves the dashed line
            for name in rows:
                self.trace(name).y = np.round(by_gap[name][0], 3)
                self.trace(f"{name} (both)").y = np.round(by_gap[name][1], 3)
        for col in (1, 2):
            self.trace(f"selected gap {col}").x = [v.gap, v.gap]

    def summary(self) -> dict[str, Any]:
        v: ChangeView = self.result
        out: dict[str, Any] = {"update_policy": v.update_policy, "gap": v.gap,
                               "budget": v.budget, "changed_questions": v.changed}
        rows = {**{r: (v.shares[r], v.recall[r]) for r in v.shares},
                **{yours_name(n): (y[0], y[2]) for n, y in v.yours.items()}}
        for row, (shares, recall) in rows.items():
            stale, unclear, marked = (float(shares[k]) for k in range(3))
            out[row] = (f"stale only {stale:.2f}, both {unclear + marked:.2f} "
                        f"(unclear {unclear:.2f}), recall {recall:.2f}")
        return out
