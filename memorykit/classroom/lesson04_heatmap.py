"""Lesson 04's explorer: every entity's eviction score, turn by turn, under the score's sliders.

``EntityHeatmapExplorer`` replays the CMS session (``lesson04.cms_scenario``) through the
relevance memory and, for the bars, a FIFO memory with the same ``max_size`` and TTL, under
sliders for the weights, the decay, the frequency cap, ``max_size`` and the TTL. The heat map
is each entity's relevance score while the relevance memory holds it; crosses mark its
evictions and circles its TTL expiries, each with the reason recorded at that moment.
``yours=relevance`` (the student's ``relevance(age_minutes, access_count, weights)`` of
Exercise 1) adds a second heat map: the student's score of the very same entities and turns,
with a cross wherever it differs from the library's.

The memory a slider builds, all memoized (``classroom.memo``), so a slider moved back
replays nothing:

* ``policy_replay(scenario, rule, max_size, ttl, weights)``: one replay (FIFO's decisions do
  not depend on the weights, so a weight slider replays the relevance memory only);
* ``your_scores(replayed, relevance, weights)``: the student's score of every cell where the
  replayed memory held an entity.

What crosses to the browser on a move is kept small (BENCHMARKS.md, lesson 04). A heat map is
sent in column form, one (column, row, score) triple per cell an entity occupies (``heat_cells``:
2,740 of the 200 x 250 cells of four-turn columns at the start, 14,476 at max_size 60 without a
TTL) as int16, int16 and float32 numpy arrays, which plotly's widget sends as binary buffers. A
2-D typed-array spec (``figure.typed_spec``) would send every cell, and plotly's widget would
send it back after each redraw once per row (its trace deltas compare what plotly.js decoded
with the spec, and serialize each row with the whole grid's buffer: 200 rows x 400 kB for
500 float32 columns). The ~800 event markers are WebGL points (``scattergl``), which plotly.js
redraws faster than as many SVG markers. The printed summary uses every turn.
Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit.classroom.explorer import Implementation, LessonExplorer, Setting, _go, yours_name
from memorykit.classroom.figure import legend_below
from memorykit.classroom.lesson04 import _column_turns, _columns, cms_scenario
from memorykit.classroom.memo import memo
from memorykit.classroom.replays.entity_replay import ReplayResult, replay, replay_plan
from memorykit.entities import RelevanceMemory, RelevanceWeights, SEED_TTL_MINUTES, SlidingWindowMemory

YOURS = Implementation("a function relevance(age_minutes, access_count, weights) -> float",
                       parameters=("age_minutes", "access_count", "weights"))
"""What ``yours=`` takes: Exercise 1's score function."""

DIFFERS = 1e-6
"""A student's score differs from the library's where the two are further apart than this."""


@memo(maxsize=32)
def policy_replay(scenario: Any, rule: str, max_size: int, ttl: float | None,
                  weights: RelevanceWeights | None = None) -> ReplayResult:
    """``scenario`` replayed through a ``rule`` ("relevance" or "fifo") memory of ``max_size``
    entities (TTL ``ttl`` minutes, None for none; ``weights`` for the relevance rule)."""
    if rule == "relevance":
        return replay(scenario, lambda c: RelevanceMemory(max_size, weights, clock=c,
                                                          ttl_minutes=ttl), policy=rule)
    return replay(scenario, lambda c: SlidingWindowMemory(max_size, clock=c, ttl_minutes=ttl),
                  policy=rule)


@memo(maxsize=64)
def your_scores(replayed: ReplayResult, relevance: Callable[..., float],
                weights: RelevanceWeights) -> np.ndarray:
    """``relevance(age_minutes, access_count, weights)`` (a student's score) of every cell where
    ``replayed``'s memory held an entity, NaN elsewhere: the library's heat map, scored by it."""
    relevance = YOURS.check("relevance", relevance)
    mask = replayed.in_memory
    ages = replayed.ages_minutes()[mask].tolist()
    counts = replayed.access_count[mask].astype(np.int64).tolist()
    values = [relevance(a, c, weights) for a, c in zip(ages, counts)]
    numbers = all(issubclass(k, (int, float, np.integer, np.floating)) and k is not bool
                  for k in set(map(type, values)))
    scored = np.array(values, dtype=np.float64) if numbers else None
    if scored is None or not np.isfinite(scored).all():
        bad = next(i for i, v in enumerate(values) if not _finite_number(v))
        raise TypeError(f"yours: {getattr(relevance, '__name__', 'relevance')} must return a "
                        f"finite number, returned {values[bad]!r} for age_minutes={ages[bad]!r}, "
                        f"access_count={counts[bad]!r}, weights={weights!r}")
    out = np.full(mask.shape, np.nan)
    out[mask] = scored
    return out


def _finite_number(value: Any) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            and bool(np.isfinite(value)))


def heat_cells(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the cells of ``grid`` (entities x columns, NaN where absent) that an
    entity occupies: a heat map's column form. A row or column with no such cell gets one
    (NaN: drawn as a gap), so the cells stay evenly spaced and plotly.js paints them as one image."""
    present = ~np.isnan(grid)
    rows, cols = np.nonzero(present)
    empty_rows = np.flatnonzero(~present.any(axis=1))
    empty_cols = np.flatnonzero(~present.any(axis=0))
    return (np.concatenate([rows, empty_rows, np.zeros(empty_cols.size, np.int64)]),
            np.concatenate([cols, np.zeros(empty_rows.size, np.int64), empty_cols]))


@dataclass(frozen=True)
class HeatmapResult:
    relevance: ReplayResult
    fifo: ReplayResult
    score: np.ndarray
    """(entities, turns) relevance-policy scores under the slider weights, NaN where absent."""
    weights: RelevanceWeights
    max_size: int
    ttl_minutes: float | None
    yours: dict[str, np.ndarray] = field(default_factory=dict)
    """The student's scores of the same cells, by name."""


class EntityHeatmapExplorer(LessonExplorer):
    """Eviction-score heatmap of the relevance memory, with FIFO vs relevance beside it."""

    title = "Entity eviction scores"
    settings = (
        Setting("w_recency", "recency weight", 0.6, 0.0, 1.0, 0.05),
        Setting("w_frequency", "frequency weight", 0.4, 0.0, 1.0, 0.05),
        Setting("decay", "decay per minute", 0.1, 0.0, 1.0, 0.01),
        Setting("frequency_cap", "frequency cap", 10, 1, 30, 1),
        Setting("max_size", "max_size", 20, 2, 60, 1),
        Setting("ttl_minutes", "TTL minutes (0 = off)", SEED_TTL_MINUTES, 0, 120, 1),
    )
    implementation = YOURS
    turns_per_column = 4
    """Turns per heat-map column: 250 columns of about 2 pixels each in a notebook-wide plot
    (the markers keep their exact turns). plotly.js paints one image pixel per cell, so
    averaging four turns in the kernel quarters what crosses to the browser and what it paints:
    a redraw took a quarter less time than with two turns per column (BENCHMARKS.md, lesson
    04). The readout and the printed summary use every turn."""

    def __init__(self, scenario: Any = None, yours: Any = None, **params: Any) -> None:
        self.scenario = cms_scenario("large") if scenario is None else scenario
        super().__init__(yours=yours, **params)

    # ---------------------------------------------------------------- figure
    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        go = _go()
        rows = 1 + len(self.yours)
        fig = make_subplots(
            rows=rows, cols=2, column_widths=[0.78, 0.22], horizontal_spacing=0.2,
            vertical_spacing=0.1 if rows > 1 else None, shared_xaxes=rows > 1,
            specs=[[{}, {"rowspan": rows}], *[[{}, None]] * (rows - 1)],
            subplot_titles=("relevance memory: eviction score of each entity, turn by turn",
                            "FIFO vs<br>relevance",
                            *(f"{yours_name(n)}, on the same entities and turns<br>(red "
                              "crosses: where your score differs from the library's)"
                              for n in self.yours)))
        heat = dict(x=[], y=[], z=[], zmin=0.0, zmax=1.0, colorscale="Viridis",
                    hovertemplate="turns up to %{x}, row %{y}<br>mean score %{z:.3f}<extra></extra>")
        fig.add_trace(go.Heatmap(
            name="score", **heat,
            colorbar=dict(title=dict(text="score", side="top"), x=0.635, xanchor="left",
                          thickness=12, len=0.85, y=0.5)), row=1, col=1)
        # TTL expiries in black: white circles (as before) vanished in the legend's white
        for name, symbol, color, width in (("relevance eviction", "x-thin", "red", 1.5),
                                           ("TTL expiry", "circle-open", "black", 1.0)):
            fig.add_trace(go.Scattergl(
                x=[], y=[], mode="markers", name=name,
                marker=dict(symbol=symbol, size=6, color=color, line=dict(width=width, color=color)),
                hovertemplate="%{text}<extra></extra>", text=[]), row=1, col=1)
        for name, color in (("FIFO", "#888"), ("relevance", "#1f77b4")):
            fig.add_trace(go.Bar(x=["resolution<br>success", "eviction<br>rate"], y=[0.0, 0.0],
                                 name=name, marker_color=color, texttemplate="%{y:.0%}",
                                 textposition="outside", cliponaxis=False), row=1, col=2)
        for row, name in enumerate(self.yours, start=2):
            fig.add_trace(go.Heatmap(name=yours_name(name), showscale=False, **heat), row=row, col=1)
            fig.add_trace(go.Scattergl(
                x=[], y=[], mode="markers", name=f"differs from the library ({name})",
                marker=dict(symbol="x-thin", size=6, color="red", line=dict(width=1.5, color="red")),
                hovertemplate=f"turns up to %{{x}}, row %{{y}}: {name} differs from the "
                              "library's score<extra></extra>"), row=row, col=1)
        keys = replay_plan(self.scenario).keys  # the heat maps' rows, by first mention
        step = max(1, len(keys) // 20)
        for row in range(1, rows + 1):
            fig.update_yaxes(title_text="entity (first mentioned at the top)" if row == 1 else "entity",
                             autorange="reversed", tickfont=dict(size=9), zeroline=False,
                             tickvals=list(range(0, len(keys), step)), ticktext=list(keys[::step]),
                             row=row, col=1)
        fig.update_xaxes(title_text="turn", row=rows, col=1)
        fig.update_yaxes(range=[0, 1.18], tickformat=".0%", title_text="share", row=1, col=2)
        # t=80: the two-line title of the right panel stays below plotly's toolbar (the modebar,
        # drawn over the figure's top right, 33 px deep in Chromium), which covered it at t=50
        fig.update_layout(height=590 + 380 * (rows - 1), barmode="group",
                          margin=dict(l=70, r=10, t=80, b=50), legend=legend_below())
        return fig

    # ------------------------------------------------------------ computation
    def _compute(self, *, w_recency: float, w_frequency: float, decay: float,
                 frequency_cap: int, max_size: int, ttl_minutes: float) -> HeatmapResult:
        if w_recency + w_frequency <= 0:
            w_recency = 0.05  # the score needs some weight; the slider pair can reach 0 + 0
        weights = RelevanceWeights(w_recency, w_frequency, decay, frequency_cap)
        ttl = None if ttl_minutes <= 0 else float(ttl_minutes)
        rel = policy_replay(self.scenario, "relevance", int(max_size), ttl, weights)
        # FIFO's decisions do not depend on the weights (they only label its evictions).
        fifo = policy_replay(self.scenario, "fifo", int(max_size), ttl)
        yours = {name: your_scores(rel, fn, weights) for name, fn in self.yours.items()}
        return HeatmapResult(rel, fifo, rel.score(weights), weights, int(max_size), ttl, yours)

    def _draw(self, result: HeatmapResult) -> None:
        keys = result.relevance.keys
        per = self.turns_per_column
        columns = _column_turns(result.score.shape[1], per)
        grid = _columns(result.score, per)
        rows, cols = heat_cells(grid)
        x, y = columns[cols].astype(np.int16), rows.astype(np.int16)
        maps = {"score": grid, **{yours_name(n): _columns(s, per) for n, s in result.yours.items()}}
        for name, scores in maps.items():  # the student's: the same cells, scored by their code
            heat = self.trace(name)
            heat.x, heat.y, heat.z = x, y, scores[rows, cols].astype(np.float32)
        row_of = {k: i for i, k in enumerate(keys)}
        for name, rule in (("relevance eviction", "relevance"), ("TTL expiry", "ttl")):
            events = [e for e in result.relevance.evictions if e.rule == rule]
            trace = self.trace(name)
            trace.x = np.fromiter((e.turn for e in events), np.int32, len(events))
            trace.y = np.fromiter((row_of[e.key] for e in events), np.int32, len(events))
            # A numpy str array: plotly validates it in one step, a list item by item.
            trace.text = np.array([f"turn {e.turn}: {e.key} {e.label!r} {e.rule}<br>{e.reason}"
                                   for e in events], dtype=str)
        if self.moved("max_size", "ttl_minutes"):  # FIFO's replay ignores the weights
            self.trace("FIFO").y = [result.fifo.resolution_success, result.fifo.eviction_rate]
        self.trace("relevance").y = [result.relevance.resolution_success,
                                     result.relevance.eviction_rate]
        for name, score in result.yours.items():
            rows, cols = np.nonzero(_differing_columns(score, result.score, per))
            trace = self.trace(f"differs from the library ({name})")
            trace.x, trace.y = columns[cols], rows.astype(np.int32)

    def summary(self) -> dict[str, Any]:
        r = self.result
        rel, fifo = r.relevance.summary(), r.fifo.summary()
        w = r.weights
        shape = r.score.shape
        out = {
            "weights": f"{w.w_recency:g}*recency + {w.w_frequency:g}*frequency, decay "
                       f"{w.decay_per_minute:g}/min, cap {w.frequency_cap:g}",
            "max_size": r.max_size,
            "ttl_minutes": "off" if r.ttl_minutes is None else f"{r.ttl_minutes:g}",
            "heatmap": f"{shape[0]} entities x {shape[1]} turns",
            "mean entities in memory": round(r.relevance.mean_entities, 2),
            "mean score in memory": round(float(np.nanmean(r.score)), 3),
            "relevance evictions / expiries": f"{rel['evictions']} / {rel['expirations']}",
            "fifo evictions / expiries": f"{fifo['evictions']} / {fifo['expirations']}",
            "relevance resolution success": round(rel["resolution_success"], 3),
            "fifo resolution success": round(fifo["resolution_success"], 3),
            "relevance eviction rate": round(rel["eviction_rate"], 3),
            "fifo eviction rate": round(fifo["eviction_rate"], 3),
            "relevance lost to eviction": rel["failures_antecedent_evicted"],
            "fifo lost to eviction": fifo["failures_antecedent_evicted"],
        }
        cells = int(np.count_nonzero(~np.isnan(r.score)))
        for name, score in r.yours.items():
            gap = np.abs(score - r.score)[~np.isnan(r.score)]
            out[f"{yours_name(name)} mean score in memory"] = round(float(np.nanmean(score)), 3)
            out[f"{yours_name(name)} cells that differ"] = f"{int(np.count_nonzero(gap > DIFFERS))} of {cells}"
            out[f"{yours_name(name)} largest difference"] = round(float(gap.max(initial=0.0)), 3)
        return out


def _differing_columns(yours: np.ndarray, library: np.ndarray, per_column: int) -> np.ndarray:
    """(entities, columns) bool: some turn of the column scores differently (by > ``DIFFERS``)."""
    with np.errstate(invalid="ignore"):
        differs = np.abs(yours - library) > DIFFERS
    pad = (-differs.shape[1]) % per_column
    if pad:
        differs = np.concatenate([differs, np.zeros((differs.shape[0], pad), bool)], axis=1)
    return differs.reshape(differs.shape[0], -1, per_column).any(axis=2)
