"""Which task held which slot at every turn of a run, and why it changed.

``SlotLog`` is called after each turn of a running ``WorkingMemory`` (``record``) and keeps
which tasks were active. ``SlotLog.timeline(memory)`` then reads every slot decision from the
memory's trace (arrivals admitted, noted or deferred, preemptions with the demotion they
caused, promotions into freed slots, resumptions, completions) and places it on the turn
axis as a ``SlotEvent`` whose text carries the numbers that decided it (the 1.3x arithmetic).
Slot positions are stable: a task keeps its position while it stays active and a newcomer
takes the lowest free one, so a heatmap of ``SlotTimeline.occupant`` reads like a desk.
Taught in ``notebooks/05_task_slots.ipynb``.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from memorykit._validate import require_real
from memorykit.workspace.events import NoteExpiry, TaskAdmission, TaskDemotion, TaskPromotion, TaskTransition
from memorykit.workspace.memory import WorkingMemory
from memorykit.workspace.tasks import SlotSettings, completion_rate, urgent_priority

EVENT_KINDS = ("admitted", "preempted", "demoted", "noted", "deferred", "promoted", "resumed", "completed")
"""Every kind of ``SlotEvent``, in the order a legend lists them."""


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
    urgency: float = 1.0
    """The urgency multiplier admission applied at the event (1 when ``temporal_urgency`` is
    off or no period was on), so margins are computed on the priorities that were compared."""


@dataclass(frozen=True)
class SlotTimeline:
    """Which task held which slot at each turn of a run, and why it changed."""

    settings: SlotSettings
    times: np.ndarray
    """Clock time (seconds) of every turn."""
    occupant: np.ndarray
    """(max_slots, T) int: index into ``task_ids`` of the task in each slot after each turn, -1 if free."""
    task_ids: tuple[str, ...]
    """Every task that arrived, in arrival order."""
    priorities: np.ndarray
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
        return {k: c.get(k, 0) for k in EVENT_KINDS}

    def completion_rate(self) -> float:
        """D2's task-completion rate over the run: tasks completed / tasks arrived."""
        return completion_rate(self.counts()["completed"], len(self.arrivals))

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


class SlotLog:
    """The active tasks after each turn of a running memory; ``timeline`` explains them."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.active: list[tuple[str, ...]] = []
        """The active task ids after each turn, in activation order."""

    def record(self, memory: WorkingMemory) -> None:
        """Keep the turn that just ended: the memory's clock and its active tasks."""
        self.times.append(memory.clock.now())
        self.active.append(memory.tasks.ids())

    def timeline(self, memory: WorkingMemory) -> SlotTimeline:
        """Every slot decision in ``memory``'s trace on the recorded turns (the memory the log followed)."""
        if not isinstance(memory, WorkingMemory):
            raise TypeError(f"memory must be a WorkingMemory, got {memory!r}")
        if not self.times:
            raise ValueError("the log holds no turn: call record(memory) after each turn first")
        settings = memory.tasks.settings
        trace = list(memory.trace)
        arrived = [e for e in trace if isinstance(e, TaskAdmission)]
        priority = {}
        for e in arrived:
            priority.setdefault(e.task_id, e.priority)  # the first admission is the arrival
        index = {tid: i for i, tid in enumerate(priority)}
        slots = _SlotPositions(settings.max_slots, self.active, index)
        def urgency(at: float) -> float:
            return memory.urgency_multiplier(at) if settings.temporal_urgency else 1.0

        events, arrivals, note_task = _events(trace, settings, self.times, slots, priority, urgency)
        expired = sum(1 for e in trace if isinstance(e, NoteExpiry) and e.note_id in note_task)
        return SlotTimeline(settings, np.array(self.times), slots.occupant, tuple(priority),
                            np.array(list(priority.values()), dtype=float), tuple(events), arrivals, expired)


class _SlotPositions:
    """Stable slot positions: a task keeps its position while active; newcomers take the lowest free one."""

    def __init__(self, k: int, active: list[tuple[str, ...]], index: dict[str, int]) -> None:
        self.occupant = np.full((k, len(active)), -1, dtype=int)
        self.starts: list[int] = []  # turn at which each stretch of unchanged positions starts
        self.where: list[dict[str, int]] = []  # task id -> position, during each stretch
        where: dict[str, int] = {}
        before = None
        for t, ids in enumerate(active):
            if ids == before:
                continue
            before = ids
            where = {tid: pos for tid, pos in where.items() if tid in ids}
            used = set(where.values())
            for tid in ids:  # activation order
                if tid not in where:
                    where[tid] = next(p for p in range(k) if p not in used)
                    used.add(where[tid])
            self.starts.append(t)
            self.where.append(where)
        ends = [*self.starts[1:], len(active)]
        for start, end, placed in zip(self.starts, ends, self.where):
            for tid, pos in placed.items():
                self.occupant[pos, start:end] = index[tid]

    def slot_of(self, task_id: str, t: int) -> int | None:
        """The position of ``task_id`` after turn ``t`` (None if it held no slot then)."""
        stretch = bisect_right(self.starts, t) - 1
        return self.where[stretch].get(task_id) if stretch >= 0 else None


def _events(trace: list[Any], settings: SlotSettings, times: list[float], slots: _SlotPositions,
            priority: dict[str, float], urgency: Callable[[float], float],
            ) -> tuple[list[SlotEvent], dict[str, str], dict[str, str]]:
    """Slot events from a memory's trace, the arrival outcomes, and note id -> the task it holds.

    ``urgency(at)`` is the multiplier admission applied at time ``at``: a preemption's
    arithmetic shows the priorities it compared, scaled when a period was on."""
    last = len(times) - 1

    def turn_of(at: float) -> int:
        return min(last, bisect_left(times, at))

    ratio = settings.preemption_ratio
    events: list[SlotEvent] = []
    arrivals: dict[str, str] = {}
    note_task: dict[str, str] = {}
    for e in trace:
        if isinstance(e, TaskAdmission):
            if e.note_id is not None:
                note_task[e.note_id] = e.task_id
            if e.task_id in arrivals:
                continue  # a failed attempt to resume a waiting task: not an arrival
            arrivals[e.task_id] = e.outcome
            t = turn_of(e.at)
            if e.outcome == "activated":
                events.append(SlotEvent(t, "admitted", e.task_id, e.priority, None, slots.slot_of(e.task_id, t),
                                        f"{e.task_id} ({e.priority:.2f}) admitted: {e.reason}"))
            elif e.outcome in ("noted", "deferred"):
                events.append(SlotEvent(t, e.outcome, e.task_id, e.priority, None, None,
                                        f"{e.task_id} {e.outcome}: {e.reason}", urgency(e.at)))
            # 'preempted' arrivals are drawn from their TaskDemotion (recorded just before).
        elif isinstance(e, TaskDemotion):
            note_task[e.note_id] = e.task_id
            t = turn_of(e.at)
            by, low, m = e.by_task_id, e.priority, urgency(e.at)
            slot = slots.slot_of(by, t)
            p_m, low_m = urgent_priority(priority[by], m), urgent_priority(low, m)
            arith = f"{p_m:.2f} > {ratio:g} x {low_m:.2f} = {ratio * low_m:.3f}"
            if m != 1.0:
                arith += f" (priorities x urgency {m:g}, capped at 1)"
            events.append(SlotEvent(t, "preempted", by, priority[by], e.task_id, slot,
                                    f"{by} ({priority[by]:.2f}) preempted {e.task_id} ({low:.2f}): {arith}", m))
            events.append(SlotEvent(t, "demoted", e.task_id, low, by, slot,
                                    f"{e.task_id} ({low:.2f}) demoted to note {e.note_id} by {by}: {arith}", m))
        elif isinstance(e, TaskPromotion):
            t = turn_of(e.at)
            kind = "resumed" if e.reason.startswith("resumed") else "promoted"
            events.append(SlotEvent(t, kind, e.task_id, priority[e.task_id], None, slots.slot_of(e.task_id, t),
                                    f"{e.task_id} {kind}: {e.reason}"))
        elif isinstance(e, TaskTransition) and e.to_status == "complete":
            t = turn_of(e.at)
            slot = slots.slot_of(e.task_id, t - 1) if t > 0 else None
            events.append(SlotEvent(t, "completed", e.task_id, priority[e.task_id], None, slot,
                                    f"{e.task_id} completed, its slot is free"))
    return events, arrivals, note_task


_LOWEST = re.compile(r"lowest [0-9.]+ \((\w+)\)")
"""TaskSlots' refusal reason names the lowest active task: '... x lowest 0.57 (T017) = 0.74'."""


def near_misses(timeline: SlotTimeline, within: float = 0.05) -> list[tuple[SlotEvent, float]]:
    """Preemptions and full-slot refusals decided by less than ``within`` of priority.

    Returns (event, margin) pairs: margin = priority - ratio x lowest, both as admission
    compared them (``urgent_priority`` at the event's urgency; positive: it preempted; zero
    or negative: it was noted).
    """
    within = require_real("within", within)
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
        # on the priorities admission compared: scaled by the period's urgency when it applied
        margin = (urgent_priority(e.priority, e.urgency)
                  - ratio * urgent_priority(float(timeline.priorities[index[low]]), e.urgency))
        if abs(margin) < within:
            out.append((e, round(margin, 4)))
    return out
