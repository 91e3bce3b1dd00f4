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
* ``run_yours(slots_class, ...)``: the same month with a student's ``TaskSlots`` subclass
  (Exercise 1's ``MySlots``, which rebuilds ``decide``) holding the slots, memoized like
  ``slot_timeline``.
* ``print_events``: the preemptions (or any kinds of event), one line each.

Explorer: ``SlotExplorer`` (sliders for max_slots, the activation threshold
and the preemption ratio; a slot x turn heatmap coloured by the occupant's
priority, with event markers whose hover text carries the 1.3x arithmetic);
``yours=MySlots`` adds the student's slots as a heat map of their own under the library's,
with their preemptions and a mark wherever a slot holds another task than the library's.
Taught in ``notebooks/05_task_slots.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.classroom.explorer import Implementation, LessonExplorer, Setting, yours_name
from memorykit.classroom.figure import heat_grid, legend_below
from memorykit.classroom.memo import memo
from memorykit.classroom.scenarios.workflow import WorkflowScenario, default_workflow, play
from memorykit.workspace import FixedExtractor, NoteSettings, SlotSettings, TaskSlots
from memorykit.classroom.replays.timeline import SlotLog, SlotTimeline

TURNS_PER_DAY = 20

__all__ = ["SlotExplorer", "TURNS_PER_DAY", "print_events",
           "replay_slots", "slot_timeline"]


YOURS = Implementation("a TaskSlots subclass (the admission rule in its decide method)", TaskSlots)
"""What ``yours=`` takes: Exercise 1's ``MySlots``."""


def replay_slots(scenario: WorkflowScenario, settings: SlotSettings = SlotSettings(),
                 notes: NoteSettings = NoteSettings(), slots_class: type = TaskSlots) -> SlotTimeline:
    """Which task holds which slot at every turn of ``scenario`` under ``settings``, the slots
    held by ``slots_class`` (a ``TaskSlots`` subclass; the library's own by default)."""
    if not isinstance(settings, SlotSettings):
        raise TypeError(f"settings must be SlotSettings, got {settings!r}")
    slots_class = YOURS.check("slots_class", slots_class)
    memory = scenario.memory(extractor=FixedExtractor({}), slots=settings, notes=notes)
    if slots_class is not TaskSlots:  # a fresh memory: nothing admitted yet, one trace for all
        memory.tasks = slots_class(settings, memory.trace)
    log = SlotLog()
    play(scenario, memory, lambda turn, m: log.record(m))
    return log.timeline(memory)


@memo(maxsize=None)
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


@memo(maxsize=512)
def _slot_timeline(max_slots: int, activation_threshold: float, preemption_ratio: float,
                   slots_class: type = TaskSlots) -> SlotTimeline:
    return replay_slots(_task_side(), SlotSettings(max_slots=max_slots, activation_threshold=activation_threshold,
                                                   preemption_ratio=preemption_ratio), slots_class=slots_class)


def run_yours(slots_class: type, max_slots: int = 4, activation_threshold: float = 0.5,
              preemption_ratio: float = 1.3) -> SlotTimeline:
    """``slot_timeline`` with a student's ``TaskSlots`` subclass holding the slots (memoized)."""
    slots_class = YOURS.check("slots_class", slots_class)
    require_int("max_slots", max_slots, minimum=1, maximum=len(_task_side().tasks()))
    s = SlotSettings(max_slots=max_slots, activation_threshold=activation_threshold,
                     preemption_ratio=preemption_ratio)
    return _slot_timeline(s.max_slots, s.activation_threshold, s.preemption_ratio, slots_class)


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
_ROW_SHIFT = {"preempted": 0.22, "demoted": -0.22, "promoted": -0.22}
"""Within its slot's row: a preemption's star above, the demoted task's cross below; a
promotion below the completion that freed its slot in the same turn."""


@dataclass(frozen=True)
class SlotResult:
    """The library's timeline under the sliders, and the student's slots' under the same."""

    library: SlotTimeline
    yours: dict[str, SlotTimeline] = field(default_factory=dict)


def occupant_ids(tl: SlotTimeline) -> np.ndarray:
    """(max_slots, turns) task id in each slot after each turn, "" where the slot is free."""
    return np.array([*tl.task_ids, ""], dtype=object)[tl.occupant]


def not_held_by(mine: np.ndarray, library: np.ndarray) -> np.ndarray:
    """(slots, turns) bool, for two ``occupant_ids`` of the same slot count: the slot holds what
    no slot of ``library`` holds at that turn (a task the library does not run then, or nothing
    while the library runs more). A different decision, not merely another slot position:
    positions follow from the history, so the same tasks may sit in other slots."""
    return ~(mine[:, None, :] == library[None, :, :]).any(axis=1)


class SlotExplorer(LessonExplorer):
    """Slot x turn heatmap of the default scenario; sliders for the three admission rules."""

    title = "Who holds which slot, turn by turn"
    settings = (
        Setting("max_slots", "max slots", 4, 1, 6, 1),
        Setting("activation_threshold", "activation threshold", 0.5, 0.3, 0.8, 0.05),
        Setting("preemption_ratio", "preemption ratio", 1.3, 1.0, 2.0, 0.01),
    )
    implementation = YOURS

    def _make_figure(self) -> Any:
        from plotly.subplots import make_subplots

        rows = 1 + len(self.yours)
        titles = ["the library's TaskSlots", *(f"{yours_name(n)}, under the same sliders (squares: "
                                               "a task the library's slots do not hold then)"
                                               for n in self.yours)] if self.yours else None
        fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.15,
                            subplot_titles=titles)
        heat = dict(z=[[None]], x=[1], y=[0], zmin=0, zmax=1, colorscale="Viridis", customdata=[[0]],
                    xgap=0, ygap=2, hovertemplate="turn %{x}, slot %{y}<br>T%{customdata:03d}, "
                                                  "priority %{z:.2f}<extra></extra>")
        fig.add_heatmap(name="occupant priority", colorbar=dict(title="priority", len=0.8), **heat)
        for kind, (symbol, color) in _MARKERS.items():
            fig.add_scatter(name=kind, x=[], y=[], mode="markers", hovertext=[], hoverinfo="text",
                            marker=dict(symbol=symbol, color=color, size=10 if kind != "completed" else 7,
                                        line=dict(width=2, color=color)))
        for row, name in enumerate(self.yours, start=2):
            fig.add_heatmap(name=yours_name(name), showscale=False, **heat, row=row, col=1)
            symbol, color = _MARKERS["preempted"]
            fig.add_scatter(name=f"preempted ({name})", x=[], y=[], mode="markers", hovertext=[],
                            hoverinfo="text", marker=dict(symbol=symbol, color=color, size=10),
                            row=row, col=1)
            fig.add_scatter(name=f"differs from the library ({name})", x=[], y=[], mode="markers",
                            hovertext=[], hoverinfo="text", row=row, col=1,
                            marker=dict(symbol="square-open", color="#e377c2", size=5))
        fig.update_layout(
            height=380 + 300 * (rows - 1), margin=dict(l=70, r=20, t=50 + 30 * (rows > 1), b=60),
            title=self.title, legend=legend_below())
        fig.update_xaxes(title_text=f"turn ({TURNS_PER_DAY} turns = one working day)", row=rows, col=1)
        fig.update_yaxes(title_text="slot", tickmode="array")
        return fig

    def _compute(self, max_slots: int, activation_threshold: float, preemption_ratio: float) -> SlotResult:
        args = (int(max_slots), round(float(activation_threshold), 4), round(float(preemption_ratio), 4))
        return SlotResult(slot_timeline(*args), {n: run_yours(c, *args) for n, c in self.yours.items()})

    def _draw(self, result: SlotResult) -> None:
        tl = result.library
        k = tl.settings.max_slots
        reshaped = self.moved("max_slots")  # the axes change only with the slot count
        timelines = {"occupant priority": tl, **{yours_name(n): t for n, t in result.yours.items()}}
        for row, (name, t) in enumerate(timelines.items(), start=1):
            self._draw_heat(self.trace(name), t, row if reshaped else None)
        waiting = k + 1  # the row above the slots: tasks that got no slot
        for kind in _MARKERS:
            self._draw_events(self.trace(kind), tl, kind, waiting)
        library = occupant_ids(tl)
        for name, t in result.yours.items():
            self._draw_events(self.trace(f"preempted ({name})"), t, "preempted", waiting)
            mine = occupant_ids(t)
            slots, turns = np.nonzero(not_held_by(mine, library))
            differs = self.trace(f"differs from the library ({name})")
            differs.x, differs.y = turns + 1, slots + 1
            differs.hovertext = [f"turn {j + 1}, slot {i + 1}: yours holds {mine[i, j] or 'nothing'}, "
                                 "which the library's slots do not hold then" for i, j in zip(slots, turns)]

    def _draw_heat(self, heat: Any, tl: SlotTimeline, row: int | None) -> None:
        """The occupants' priorities (and, when the slot count changed, the axes of ``row``)."""
        k = tl.settings.max_slots
        z = np.where(tl.occupant >= 0, tl.priorities[np.maximum(tl.occupant, 0)], np.nan)
        number = np.array([int(t[1:]) for t in tl.task_ids])
        heat.z = heat_grid(z)
        heat.customdata = np.where(tl.occupant >= 0, number[np.maximum(tl.occupant, 0)], 0)
        if row is not None:
            heat.x = np.arange(1, tl.n_turns + 1)
            heat.y = np.arange(1, k + 1)
            self.fig.update_yaxes(tickvals=list(range(1, k + 2)), range=[0.5, k + 1.5],
                                  ticktext=[f"slot {i}" for i in range(1, k + 1)] + ["no slot"],
                                  row=row, col=1)

    @staticmethod
    def _draw_events(trace: Any, tl: SlotTimeline, kind: str, waiting: int) -> None:
        evs = [e for e in tl.events if e.kind == kind]
        # a demoted task was last in its slot the turn before its preemptor arrived; the star
        # and the cross of one preemption sit a turn apart, so they share the row, one above
        # (as a promotion and the completion that freed its slot, in one turn)
        shift = _ROW_SHIFT.get(kind, 0.0)
        trace.x = [e.turn + (0 if kind == "demoted" else 1) for e in evs]
        trace.y = [waiting if e.slot is None else e.slot + 1 + shift for e in evs]
        trace.hovertext = [e.text for e in evs]

    def summary(self) -> dict[str, Any]:
        out = self.result.library.summary()
        library = occupant_ids(self.result.library)
        for name, tl in self.result.yours.items():
            mine = tl.summary()
            for key in ("admitted_on_arrival", "preemptions", "completed", "task_notes_expired"):
                out[f"{yours_name(name)} {key}"] = mine[key]
            differs = not_held_by(occupant_ids(tl), library).any(axis=0)
            out[f"{yours_name(name)} turns holding other tasks"] = f"{int(differs.sum())} of {tl.n_turns}"
        return out
