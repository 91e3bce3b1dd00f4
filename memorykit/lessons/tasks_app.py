"""Lesson 05: task slots over a month of work: admissions, preemptions, demotions.

Pure computation (tested, benchmarked):

* ``default_workflow()``: the committed 30-day workflow scenario
  (``data/workflow/workflow_30d.jsonl``), loaded once per process.
* ``replay_slots(scenario, settings)``: the task side of the scenario replayed
  through a real ``WorkingMemory`` (task arrivals, turns that work on tasks,
  completions, promotions, expiry of task-notes), with every slot decision
  taken from the memory's trace. User notes, entity extraction and surfacing
  never change which task holds a slot, so they are left out: that is what
  makes a replay take a few milliseconds instead of the ~0.2 s of
  ``run_workflow`` (a test checks that both produce the same task events).
* ``SlotTimeline``: which task holds which slot at every turn, the events
  (admitted, preempted, demoted, noted, deferred, promoted, resumed,
  completed) with the turn they happened at, and counts.
* ``slot_timeline(max_slots, activation_threshold, preemption_ratio)``: the
  default scenario's timeline, memoized, for the slider explorer.

Explorer: ``SlotExplorer`` (sliders for max_slots, the activation threshold
and the preemption ratio; a slot x turn heatmap coloured by the occupant's
priority, with event markers whose hover text carries the 1.3x arithmetic).
Taught in ``notebooks/05_task_slots.ipynb``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memorykit.clock import StepClock
from memorykit.lessons._app import LessonExplorer, _go, float_slider, int_slider
from memorykit.lessons._figure import heat_grid, legend_below
from memorykit.scenarios.workflow import WorkflowScenario, _work_on, load_workflow
from memorykit.workspace import (
    FixedExtractor,
    NoteExpiry,
    NoteSettings,
    SlotSettings,
    Task,
    TaskAdmission,
    TaskDemotion,
    TaskPromotion,
    TaskTransition,
    WorkingMemory,
)

WORKFLOW_PATH = Path(__file__).resolve().parent.parent.parent / "data" / "workflow" / "workflow_30d.jsonl"
TURNS_PER_DAY = 20


@lru_cache(maxsize=None)
def default_workflow() -> WorkflowScenario:
    """The committed 30-day scenario (regenerated from seed 2 if the data file is absent)."""
    if WORKFLOW_PATH.is_file():
        return load_workflow(WORKFLOW_PATH)
    from memorykit.scenarios.workflow import generate_workflow_scenario

    return generate_workflow_scenario(seed=2, days=30, name="workflow-30d")


# ------------------------------------------------------------------ events
@dataclass(frozen=True, slots=True)
class SlotEvent:
    """One slot decision, placed on the turn axis."""

    turn: int
    """Index into ``SlotTimeline.times`` (0-based) of the first turn at or after the event."""
    kind: str
    """'admitted' (arrived into a free slot), 'preempted' (took the slot of the task it demoted,
    on arrival or when the user resumed it), 'demoted', 'noted', 'deferred' (arrivals that got no
    slot), 'promoted' (a waiting task given a freed slot), 'resumed' (the user turned to a waiting
    task and it passed admission), 'completed'."""
    task_id: str
    priority: float
    other_id: str | None
    """The demoted task (for 'preempted'), the task that took the slot (for 'demoted')."""
    slot: int | None
    """0-based slot position the event happened in; None for tasks that got no slot."""
    text: str
    """Hover text: what happened and the numbers that decided it."""


@dataclass(frozen=True)
class SlotTimeline:
    """Which task held which slot at each turn of a replay, and why it changed."""

    settings: SlotSettings
    times: np.ndarray
    """Clock time (seconds) of every turn."""
    occupant: np.ndarray
    """(max_slots, T) int: index into ``task_ids`` of the task in each slot after each turn, -1 if free."""
    task_ids: tuple[str, ...]
    priorities: np.ndarray
    descriptions: tuple[str, ...]
    events: tuple[SlotEvent, ...]
    arrivals: dict[str, str]
    """Task id -> what admission did when it arrived: 'activated', 'preempted', 'noted', 'deferred'."""
    task_notes_expired: int
    """Tasks whose note ran out of time before they ever got (back) into a slot."""

    @property
    def n_turns(self) -> int:
        return int(self.times.size)

    @property
    def active_counts(self) -> np.ndarray:
        return (self.occupant >= 0).sum(axis=0)

    def counts(self) -> dict[str, int]:
        c = Counter(e.kind for e in self.events)
        kinds = ("admitted", "preempted", "demoted", "noted", "deferred", "promoted", "resumed", "completed")
        return {k: c.get(k, 0) for k in kinds}

    def preemptions(self) -> list[SlotEvent]:
        return [e for e in self.events if e.kind == "preempted"]

    def summary(self) -> dict[str, Any]:
        c = self.counts()
        a = Counter(self.arrivals.values())
        s = self.settings
        active = self.active_counts
        return {
            "max_slots": s.max_slots,
            "activation_threshold": round(s.activation_threshold, 2),
            "preemption_ratio": round(s.preemption_ratio, 2),
            "tasks_arrived": len(self.arrivals),
            "admitted_on_arrival": a["activated"] + a["preempted"],
            "admitted_by_preempting": a["preempted"],
            "preemptions": c["preempted"],
            "demotions": c["demoted"],
            "noted_on_arrival": a["noted"],
            "deferred_on_arrival": a["deferred"],
            "promoted_to_free_slot": c["promoted"],
            "resumed_by_user": c["resumed"],
            "completed": c["completed"],
            "task_notes_expired": self.task_notes_expired,
            "mean_active_tasks": round(float(active.mean()), 2),
            "mean_occupancy": round(float(active.mean()) / s.max_slots, 3),
            "turns_all_slots_full": int((active == s.max_slots).sum()),
        }


# ------------------------------------------------------------------ replay
def _task_replay(scenario: WorkflowScenario, settings: SlotSettings, notes: NoteSettings):
    """Run the task side of ``scenario``; return (memory, turn times, active ids per turn, arrived)."""
    clock = StepClock(0.0)
    wm = WorkingMemory(scenario.graph(), clock=clock, extractor=FixedExtractor({}), slots=settings, notes=notes)
    plans: dict[str, dict[str, Any]] = {}
    by_matter: dict[str, list[str]] = {}
    times: list[float] = []
    active: list[tuple[str, ...]] = []
    arrived = 0
    for ev in scenario.events:
        clock.set(max(clock.now(), float(ev["at"])))
        if ev["type"] == "task":
            arrived += 1
            task = Task(ev["id"], ev["description"], ev["priority"], dependencies=tuple(ev["dependencies"]),
                        created_at=float(ev["at"]), metadata={"matter": ev["matter"]})
            plans[task.id] = {"steps": ev["steps"], "block": ev["block"], "next": 0, "blocked_left": 0}
            by_matter.setdefault(ev["matter"], []).append(task.id)
            wm.add_task(task)
        elif ev["type"] == "turn":
            # As in run_workflow: the turn expires notes, then works on its matter. Only expiry
            # changes the task side (escalation events do not), so tick only when a note is due.
            if any(n.expires_at <= clock.now() for n in wm.notes):
                wm.tick()
            _work_on(wm, ev["matter"], by_matter, plans)
            times.append(clock.now())
            active.append(tuple(t.id for t in wm.tasks))
    return wm, np.array(times), active, arrived


def task_events(trace) -> list[tuple[str, Any]]:
    """The task decisions in a memory's trace, as comparable tuples (for tests)."""
    out = []
    for e in trace:
        if isinstance(e, (TaskAdmission, TaskDemotion, TaskPromotion, TaskTransition)):
            out.append((e.kind, e.task_id, e.at, e.reason))
    return out


def replay_slots(scenario: WorkflowScenario, settings: SlotSettings = SlotSettings(),
                 notes: NoteSettings = NoteSettings()) -> SlotTimeline:
    """Which task holds which slot at every turn of ``scenario`` under ``settings``."""
    if not isinstance(settings, SlotSettings):
        raise TypeError(f"settings must be SlotSettings, got {settings!r}")
    wm, times, active, _ = _task_replay(scenario, settings, notes)
    tasks = [e for e in scenario.events if e["type"] == "task"]
    index = {t["id"]: i for i, t in enumerate(tasks)}
    prio = np.array([float(t["priority"]) for t in tasks])
    k, n_turns = settings.max_slots, len(times)

    # Slot positions: a task keeps its position while active; newcomers take the lowest free one.
    occupant = np.full((k, n_turns), -1, dtype=int)
    where: dict[str, int] = {}
    for t, ids in enumerate(active):
        now = set(ids)
        for tid in [x for x in where if x not in now]:
            del where[tid]
        used = set(where.values())
        for tid in ids:  # activation order
            if tid not in where:
                pos = next(p for p in range(k) if p not in used)
                where[tid] = pos
                used.add(pos)
        for tid, pos in where.items():
            occupant[pos, t] = index[tid]

    def turn_of(at: float) -> int:
        return int(min(n_turns - 1, np.searchsorted(times, at, side="left")))

    def slot_of(task_id: str, t: int) -> int | None:
        i = index[task_id]
        hit = np.flatnonzero(occupant[:, t] == i)
        return int(hit[0]) if hit.size else None

    def p(task_id: str) -> float:
        return float(prio[index[task_id]])

    ratio = settings.preemption_ratio
    events: list[SlotEvent] = []
    arrivals: dict[str, str] = {}
    note_task: dict[str, str] = {}
    trace = list(wm.trace)
    for e in trace:
        if isinstance(e, TaskAdmission):
            if e.note_id is not None:
                note_task[e.note_id] = e.task_id
            if e.task_id in arrivals:
                continue  # a failed attempt to resume a waiting task: not an arrival
            arrivals[e.task_id] = e.outcome
            t = turn_of(e.at)
            if e.outcome == "activated":
                events.append(SlotEvent(t, "admitted", e.task_id, e.priority, None, slot_of(e.task_id, t),
                                        f"{e.task_id} ({e.priority:.2f}) admitted: {e.reason}"))
            elif e.outcome in ("noted", "deferred"):
                events.append(SlotEvent(t, e.outcome, e.task_id, e.priority, None, None,
                                        f"{e.task_id} {e.outcome}: {e.reason}"))
            # 'preempted' arrivals are drawn from their TaskDemotion (recorded just before).
        elif isinstance(e, TaskDemotion):
            note_task[e.note_id] = e.task_id
            t = turn_of(e.at)
            by, low = e.by_task_id, e.priority
            bound = ratio * low
            slot = slot_of(by, t)
            arith = f"{p(by):.2f} > {ratio:g} x {low:.2f} = {bound:.3f}"
            events.append(SlotEvent(t, "preempted", by, p(by), e.task_id, slot,
                                    f"{by} ({p(by):.2f}) preempted {e.task_id} ({low:.2f}): {arith}"))
            events.append(SlotEvent(t, "demoted", e.task_id, low, by, slot,
                                    f"{e.task_id} ({low:.2f}) demoted to note {e.note_id} by {by}: {arith}"))
        elif isinstance(e, TaskPromotion):
            t = turn_of(e.at)
            kind = "resumed" if e.reason.startswith("resumed") else "promoted"
            events.append(SlotEvent(t, kind, e.task_id, p(e.task_id), None, slot_of(e.task_id, t),
                                    f"{e.task_id} {kind}: {e.reason}"))
        elif isinstance(e, TaskTransition) and e.to_status == "complete":
            t = turn_of(e.at)
            slot = slot_of(e.task_id, t - 1) if t > 0 else None
            events.append(SlotEvent(t, "completed", e.task_id, p(e.task_id), None, slot,
                                    f"{e.task_id} completed, its slot is free"))
    expired = sum(1 for e in trace if isinstance(e, NoteExpiry) and e.note_id in note_task)
    return SlotTimeline(settings, times, occupant, tuple(t["id"] for t in tasks), prio,
                        tuple(t["description"] for t in tasks), tuple(events), arrivals, expired)


@lru_cache(maxsize=512)
def slot_timeline(max_slots: int = 4, activation_threshold: float = 0.5,
                  preemption_ratio: float = 1.3) -> SlotTimeline:
    """The default scenario's timeline under these settings (memoized: sliders revisit values)."""
    settings = SlotSettings(max_slots=max_slots, activation_threshold=activation_threshold,
                            preemption_ratio=preemption_ratio)
    return replay_slots(default_workflow(), settings)


def near_misses(timeline: SlotTimeline, within: float = 0.05) -> list[tuple[SlotEvent, float]]:
    """Preemptions and full-slot refusals decided by less than ``within`` of priority.

    Returns (event, margin) pairs: margin = priority - ratio x lowest (positive: it
    preempted; zero or negative: it was noted).
    """
    out = []
    ratio = timeline.settings.preemption_ratio
    index = {tid: i for i, tid in enumerate(timeline.task_ids)}
    for e in timeline.events:
        low = e.other_id if e.kind == "preempted" else None
        if e.kind == "noted":
            m = _LOWEST.search(e.text)
            low = m.group(1) if m else None
        if low is None or low not in index:
            continue
        margin = e.priority - ratio * float(timeline.priorities[index[low]])
        if abs(margin) < within:
            out.append((e, round(margin, 4)))
    return out


_LOWEST = re.compile(r"lowest [0-9.]+ \((\w+)\)")
"""TaskSlots' refusal reason names the lowest active task: '... x lowest 0.57 (T017) = 0.74'."""


def print_events(timeline: SlotTimeline, kinds: tuple[str, ...] = ("preempted", "demoted")) -> None:
    """One line per event of the given kinds: day, turn, and the arithmetic."""
    for e in timeline.events:
        if e.kind in kinds:
            day = e.turn // TURNS_PER_DAY + 1
            print(f"day {day:>2} turn {e.turn + 1:>3}  {e.kind:<9} {e.text}")


# ---------------------------------------------------------------- explorer
_MARKERS = {
    # kind: (symbol, colour, row offset: 0 = in the slot, None = the "waiting" row)
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

    def __init__(self, max_slots: int = 4, activation_threshold: float = 0.5,
                 preemption_ratio: float = 1.3) -> None:
        super().__init__(max_slots=max_slots, activation_threshold=activation_threshold,
                         preemption_ratio=preemption_ratio)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "max_slots": int_slider("max slots", params["max_slots"], 1, 6, 1),
            "activation_threshold": float_slider("activation threshold", params["activation_threshold"],
                                                 0.3, 0.8, 0.05),
            "preemption_ratio": float_slider("preemption ratio", params["preemption_ratio"], 1.0, 2.0, 0.01),
        }

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
        heat = self.fig.data[0]
        heat.z = heat_grid(z)
        heat.customdata = custom
        heat.x = np.arange(1, tl.n_turns + 1)
        heat.y = np.arange(1, k + 1)
        waiting = k + 1  # the row above the slots: tasks that got no slot
        for trace, kind in zip(self.fig.data[1:], _MARKERS):
            evs = [e for e in tl.events if e.kind == kind]
            # a demoted task was last in its slot the turn before its preemptor arrived
            trace.x = [e.turn + (0 if kind == "demoted" else 1) for e in evs]
            trace.y = [waiting if e.slot is None else e.slot + 1 for e in evs]
            trace.hovertext = [e.text for e in evs]
        self.fig.layout.yaxis.tickvals = list(range(1, k + 2))
        self.fig.layout.yaxis.ticktext = [f"slot {i}" for i in range(1, k + 1)] + ["no slot"]
        self.fig.layout.yaxis.range = [0.5, k + 1.5]

    def summary(self) -> dict[str, Any]:
        return self.result.summary()
