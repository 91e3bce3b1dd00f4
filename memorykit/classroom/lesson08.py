"""Lesson 08: the rendered three columns, and what they cost against a flat buffer.

* ``replay_columns(scenario)``: the scenario played through a ``WorkingMemory``
  (``memorykit.classroom.scenarios.workflow.play``) with a ``ColumnLog`` recording, at
  every turn, the lines the prompt is made of and the flat buffers' tokens
  (``memorykit.classroom.replays.columns``, with ``ColumnTables``, ``token_comparison``,
  ``render_prompt`` and the other readings of it).
* ``default_replay()`` / ``default_tables()``: the default workflow's, built once.

Explorer: ``ColumnsExplorer`` (turn, top notes, max objects): tokens per turn
as lines, the chosen turn marked, and the rendered prompt beside the plot.
Taught in ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

import html
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit.classroom.explorer import LessonExplorer, Setting, _go
from memorykit.classroom.figure import legend_below
from memorykit.classroom.scenarios.workflow import WorkflowScenario, default_workflow, play
from memorykit.workspace import SalienceWeights
from memorykit.classroom.replays.columns import (
    ColumnLog,
    ColumnReplay,
    ColumnTables,
    LineCounter,
    TokenComparison,
    build_tables,
    render_prompt,
    token_comparison,
)


def replay_columns(
    scenario: WorkflowScenario,
    *,
    counter: LineCounter | None = None,
    weights: SalienceWeights = SalienceWeights(),
    keep_renders: bool = False,
) -> ColumnReplay:
    """Play ``scenario`` (the moves ``run_workflow`` measures) and keep each turn's lines."""
    memory = scenario.memory(salience=weights)
    log = ColumnLog(counter, keep_renders=keep_renders)
    play(scenario, memory, lambda turn, m: log.record(m, turn.report))
    return log.replay()


@lru_cache(maxsize=1)
def default_replay() -> ColumnReplay:
    """The default workflow replayed with the seed's settings."""
    return replay_columns(default_workflow())


@lru_cache(maxsize=1)
def default_tables() -> ColumnTables:
    return build_tables(default_replay())


# ---------------------------------------------------------------- explorer
class ColumnsExplorer(LessonExplorer):
    """Tokens per turn: three columns vs the flat state vs the never-forgetting log."""

    title = "Prompt tokens per turn"
    settings = (
        # the ranges are the default workflow's (600 turns, 16 notes at most, 45 objects);
        # an explorer of another replay takes its own (see __init__)
        Setting("turn", "turn", 510, 1, 600, 1),
        Setting("top_notes", "top notes", 8, 0, 16, 1),
        Setting("max_objects", "max objects", 20, 1, 45, 1),
    )

    def __init__(self, replay: ColumnReplay | None = None, tables: ColumnTables | None = None,
                 **params: Any) -> None:
        self.replay = replay or default_replay()
        self.tables = tables or (default_tables() if replay is None else build_tables(self.replay))
        limits = {"turn": self.replay.n_turns, "top_notes": self.tables.max_notes,
                  "max_objects": self.tables.max_objects}
        self.settings = tuple(replace(s, high=limits[s.name]) for s in type(self).settings)
        self.prompt = _widgets_html()
        self._drawn_limits: tuple[int, int] | None = None
        super().__init__(**params)

    def _make_figure(self) -> Any:
        go = _go()
        tb = self.tables
        x = np.arange(1, self.replay.n_turns + 1)
        fig = go.FigureWidget()
        fig.add_scatter(x=x, y=tb.history, name="flat log that never forgets", mode="lines",
                        line=dict(color="#b0b0b0", width=1))
        fig.add_scatter(x=x, y=tb.flat, name="flat buffer of the same state", mode="lines",
                        line=dict(color="#ef553b", width=1.5))
        fig.add_scatter(x=x, y=tb.flat, name="three columns", mode="lines", line=dict(color="#636efa", width=1.5))
        fig.add_scatter(x=[0, 0], y=[0, float(tb.history.max())], mode="lines", name="chosen turn",
                        line=dict(color="black", dash="dot"), showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=[0, 0, 0], y=[0, 0, 0], mode="markers", name="at the chosen turn",
                        marker=dict(size=9, color=["#b0b0b0", "#ef553b", "#636efa"]), showlegend=False)
        fig.update_layout(height=430, margin=dict(l=60, r=20, t=60, b=50), title=self.title,
                          xaxis_title="turn (20 per simulated day)", yaxis_title="tokens (cl100k_base)",
                          legend=legend_below())
        return fig

    def _compute(self, turn: int, top_notes: int, max_objects: int) -> dict[str, Any]:
        cmp = token_comparison(self.tables, top_notes, max_objects)
        prompt = render_prompt(self.replay, turn, top_notes, max_objects)  # checks the turn
        return {"turn": turn, "comparison": cmp, "t": turn - 1, "prompt": prompt}

    def _draw(self, result: dict[str, Any]) -> None:
        cmp: TokenComparison = result["comparison"]
        t = result["t"]
        limits = (cmp.top_notes, cmp.max_objects)
        if limits != self._drawn_limits:
            self.trace("three columns").y = cmp.columns
            self._drawn_limits = limits
        self.trace("chosen turn").x = [result["turn"], result["turn"]]
        marks = self.trace("at the chosen turn")
        marks.x = [result["turn"]] * 3
        marks.y = [int(cmp.history[t]), int(cmp.flat[t]), int(cmp.columns[t])]
        self.prompt.value = ("<pre style='font-size:11px;line-height:1.25;max-height:420px;overflow:auto;white-space:pre-wrap;word-break:normal;overflow-wrap:break-word'>"
                             + html.escape(result["prompt"]) + "</pre>")

    def extra_widgets(self) -> list[Any]:
        return [self.prompt]

    def summary(self) -> dict[str, Any]:
        r = self.result
        cmp: TokenComparison = r["comparison"]
        t = r["t"]
        tl = self.replay.turns[t]
        return {
            "turn": r["turn"],
            "active_tasks": len(tl.tasks),
            "live_notes": len(tl.notes),
            "showable_objects": len(tl.objects),
            "tokens_at_turn_columns": int(cmp.columns[t]),
            "tokens_at_turn_flat_same_state": int(cmp.flat[t]),
            "tokens_at_turn_never_forgetting": int(cmp.history[t]),
            **cmp.summary(),
        }


def _widgets_html() -> Any:
    import ipywidgets as w

    return w.HTML()
