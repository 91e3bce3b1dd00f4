"""Lesson 05: task slots over a month of work: admissions, preemptions, demotions.

* ``replay_slots(scenario, settings)``: the scenario played through a real
  ``WorkingMemory`` (``memorykit.classroom.scenarios.workflow.play``) with a ``SlotLog``
  recording each turn, turned into a ``SlotTimeline``: which task holds which slot
  at every turn, and every slot decision with the numbers behind it
  (``memorykit.classroom.replays.timeline``).
* ``slot_timeline(max_slots, activation_threshold, preemption_ratio)``: the
  default scenario's timeline, memoized, for the slider explorer. It plays the
  month without its user notes and extracts no entities: neither changes which
  task holds a slot (a test checks), and the replay takes a few milliseconds.
* ``print_events``: the preemptions (or any kinds of event), one line each.

Explorer: ``SlotExplorer`` (sliders for max_slots, the activation threshold
and the preemption ratio; a slot x turn heatmap coloured by the occupant's
priority, with event markers whose hover text carries the 1.3x arithmetic).
Taught in ``notebooks/05_task_slots.ipynb``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.classroom.explorer import LessonExplorer, Setting, _go
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.scenarios.workflow import WorkflowScenario, default_workflow, play
from memorykit.workspace import FixedExtractor, NoteSettings, SlotSettings
from memorykit.classroom.replays.timeline import SlotLog, SlotTimeline

TURNS_PER_DAY = 20

__all__ = ["SlotExplorer", "TURNS_PER_DAY", "print_events",
           "replay_slots", "slot_timeline"]


def replay_slots(scenario: WorkflowScenario, settings: SlotSettings = SlotSettings(),
                 notes: NoteSettings = NoteSettings()) -> SlotTimeline:
    """Which task holds which slot at every turn of ``scenario`` under ``settings``."""
    if not isinstance(settings, SlotSettings):
        raise TypeError(f"settings must be SlotSettings, got {settings!r}")
    memory = scenario.memory(extractor=FixedExtractor({}), slots=settings, notes=notes)
    log = SlotLog()
    play(scenario, memory, lambda turn, m: log.record(m))
    return log.timeline(memory)


@lru_cache(maxsize=1)
def _task_side() -> WorkflowScenario:
    return default_workflow().without_user_notes()


def slot_timeline(max_slots: int = 4, activation_threshold: float = 0.5,
                  preemption_ratio: float = 1.3) -> SlotTimeline:
    """The default scenario's timeline under these settings (memoized: sliders revisit values)."""
    # checked before the memo hashes them; the timeline holds a row per slot, and slots past
    # the scenario's task count could never be filled
    require_int("max_slots", max_slots, minimum=1, maximum=len(_task_side().tasks()))
    s = SlotSettings(max_slots=max_slots, activation_threshold=activation_threshold,
                     preemption_ratio=preemption_ratio)
    return _slot_timeline(s.max_slots, s.activation_threshold, s.preemption_ratio)


@lru_cache(maxsize=512)
def _slot_timeline(max_slots: int, activation_threshold: float, preemption_ratio: float) -> SlotTimeline:
    return replay_slots(_task_side(), SlotSettings(max_slots=max_slots, activation_threshold=activation_threshold,
                                                   preemption_ratio=preemption_ratio))


def print_events(timeline: SlotTimeline, kinds: tuple[str, ...] = ("preempted", "demoted")) -> None:
    """One line per event of the given kinds: day, turn, and the arithmetic."""
    for e in timeline.events:
        if e.kind in kinds:
            day = e.turn // TURNS_PER_DAY + 1
            print(f"day {day:>2} turn {e.turn + 1:>3}  {e.kind:<9} {e.text}")


# ---------------------------------------------------------------- explorer
_MARKERS = {
    # kind: (symbol, colour)
    "admitted": ("triangle-right", "#2ca02c"),
    "preempted": ("star", "#d62728"),
    "demoted": ("x", "#ff7f0e"),
    "promoted": ("triangle-up", "#17becf"),
    "resumed": ("diamond", "#9467bd"),
    "completed": ("circle-open", "#222222"),
    "noted": ("line-ns-open", "#7f7f7f"),
    "deferred": ("line-ns-open", "#c7c7c7"),
}


class SlotExplorer(LessonExplorer):
    """Slot x turn heatmap of the default scenario; sliders for the three admission rules."""

    title = "Who holds which slot, turn by turn"
    settings = (
        Setting("max_slots", "max slots", 4, 1, 6, 1),
        Setting("activation_threshold", "activation threshold", 0.5, 0.3, 0.8, 0.05),
        Setting("preemption_ratio", "preemption ratio", 1.3, 1.0, 2.0, 0.01),
    )

    def __init__(self, **params: Any) -> None:
        self._drawn_shape: tuple[int, int] | None = None
        super().__init__(**params)

    def _make_figure(self) -> Any:
        go = _go()
        fig = go.FigureWidget()
        fig.add_heatmap(
            name="occupant priority", z=[[None]], x=[1], y=[0], zmin=0, zmax=1, colorscale="Viridis",
            colorbar=dict(title="priority", len=0.8), customdata=[[0]], xgap=0, ygap=2,
            hovertemplate="turn %{x}, slot %{y}<br>T%{customdata:03d}, priority %{z:.2f}<extra></extra>",
        )
        for kind, (symbol, color) in _MARKERS.items():
            fig.add_scatter(name=kind, x=[], y=[], mode="markers", hovertext=[], hoverinfo="text",
                            marker=dict(symbol=symbol, color=color, size=10 if kind != "completed" else 7,
                                        line=dict(width=2, color=color)))
        fig.update_layout(
            height=380, margin=dict(l=70, r=20, t=50, b=60), title=self.title,
            xaxis=dict(title=f"turn ({TURNS_PER_DAY} turns = one working day)"),
            yaxis=dict(title="slot", tickmode="array"),
            legend=legend_below(),
        )
        return fig

    def _compute(self, max_slots: int, activation_threshold: float, preemption_ratio: float) -> SlotTimeline:
        return slot_timeline(int(max_slots), round(float(activation_threshold), 4), round(float(preemption_ratio), 4))

    def _draw(self, tl: SlotTimeline) -> None:
        k = tl.settings.max_slots
        z = np.where(tl.occupant >= 0, tl.priorities[np.maximum(tl.occupant, 0)], np.nan)
        number = np.array([int(t[1:]) for t in tl.task_ids])
        custom = np.where(tl.occupant >= 0, number[np.maximum(tl.occupant, 0)], 0)
        heat = self.trace("occupant priority")
        heat.z = heat_grid(z)
        heat.customdata = custom
        if (k, tl.n_turns) != self._drawn_shape:  # the axes change only with the slot count
            heat.x = np.arange(1, tl.n_turns + 1)
            heat.y = np.arange(1, k + 1)
            self.fig.layout.yaxis.tickvals = list(range(1, k + 2))
            self.fig.layout.yaxis.ticktext = [f"slot {i}" for i in range(1, k + 1)] + ["no slot"]
            self.fig.layout.yaxis.range = [0.5, k + 1.5]
            self._drawn_shape = (k, tl.n_turns)
        waiting = k + 1  # the row above the slots: tasks that got no slot
        for kind in _MARKERS:
            evs = [e for e in tl.events if e.kind == kind]
            trace = self.trace(kind)
            # a demoted task was last in its slot the turn before its preemptor arrived
            trace.x = [e.turn + (0 if kind == "demoted" else 1) for e in evs]
            trace.y = [waiting if e.slot is None else e.slot + 1 for e in evs]
            trace.hovertext = [e.text for e in evs]

    def summary(self) -> dict[str, Any]:
        return self.result.summary()
