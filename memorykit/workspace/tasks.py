"""Column 1: active task slots (3-4 items with rich state).

A task has a status (planning, executing, blocked, awaiting_input, complete),
a current step, a blocking reason, a progress estimate, dependencies written in
natural language, and a history of what happened to it and when.

``TaskSlots`` holds at most ``max_slots`` tasks and decides admission the way
document D2 does:

* a free slot and priority > ``activation_threshold`` (0.5): activate;
* all slots full: activate only if priority > ``preemption_ratio`` (1.3) x the
  lowest active priority, demoting that task (the caller turns it into a
  note). Both comparisons are strict, so exactly 1.3x does not preempt; a
  product within 1e-9 (relative) of the bound counts as exactly on it, because
  1.3 x 0.6 is not exactly 0.78 in floating point. The seed's sketch skips the
  0.5 threshold when slots are full; since every active task already cleared
  0.5, 1.3x the lowest is above 0.5 anyway, and the threshold is kept so a task
  whose priority was lowered later cannot let a weak one in. Among equally low
  tasks the most recently activated is demoted (it has the least sunk work).
* otherwise the task is not activated: "noted" (a normal-urgency note), or
  "deferred" (a low-urgency note) when its priority is below ``defer_below``
  (0.3; the seed says "defer if priority is low" without a number).

Temporal context scales urgency: D2 calls a task's priority its "urgency
score" and gives month-end an "urgency multiplier: 1.5x", so in such a period
every rule above reads ``urgent_priority(priority, multiplier)`` = min(1,
priority x multiplier) for the arriving task and the active ones alike (a 0.4
task clears 0.5 at month-end: 0.6). This is the default
(``SlotSettings.temporal_urgency=True``); ``temporal_urgency=False`` is the named option
that compares the stored priorities whatever the period, taught beside it in lesson 05 as
a comparison. The stored priority never changes: the period ends.

Completion frees the slot; blocking keeps it and records why. Status changes
follow ``ALLOWED_TRANSITIONS``; anything else (completing a completed task)
raises ValueError naming the task and both states.
Taught in ``notebooks/05_task_slots.ipynb``.
"""

from __future__ import annotations

import math
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from memorykit._validate import require_bool, require_choice, require_int, require_positive, require_real
from memorykit._validate import require_str, require_unit_interval
from memorykit.trace import Trace
from memorykit.workspace.events import TaskTransition

TASK_STATUSES = ("planning", "executing", "blocked", "awaiting_input", "complete")

ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    "planning": frozenset({"executing", "blocked", "awaiting_input", "complete"}),
    "executing": frozenset({"planning", "blocked", "awaiting_input", "complete"}),
    # A blocked or waiting task must resume before it can finish.
    "blocked": frozenset({"planning", "executing", "awaiting_input"}),
    "awaiting_input": frozenset({"planning", "executing", "blocked"}),
    "complete": frozenset(),
}
"""Which status may follow which. 'complete' is terminal."""


@dataclass(frozen=True)
class SlotSettings:
    """D2's slot management rules."""

    max_slots: int = 4
    """How many tasks can be active at once (3-4: human working memory)."""
    activation_threshold: float = 0.5
    """A task is activated only if its priority is strictly above this."""
    preemption_ratio: float = 1.3
    """With slots full, a task preempts only if priority > ratio x the lowest active priority."""
    defer_below: float = 0.3
    """A task not activated with priority below this is deferred (low-urgency note) rather than noted."""
    noted_urgency: str = "normal"
    """Urgency of the note made for a task that was not activated (unless the caller gives one)."""
    demoted_urgency: str = "normal"
    """Urgency of the note made for a task pushed out of its slot (the seed does not say)."""
    promote_on_free: bool = True
    """When a slot frees, give it to the waiting task-note with the highest effective priority."""
    temporal_urgency: bool = True
    """Scale priorities by the temporal context's urgency multiplier when admitting (D2's
    month-end 1.5x, so on by default); False compares the stored priorities as they are."""
    completed_limit: int = 10_000
    """Completed tasks ``TaskSlots.completed`` keeps, the newest (bounded for long runs;
    ``is_completed`` still knows every completed id)."""

    def __post_init__(self) -> None:
        require_int("max_slots", self.max_slots, minimum=1)
        require_unit_interval("activation_threshold", self.activation_threshold)
        if require_real("preemption_ratio", self.preemption_ratio) < 1:
            raise ValueError(f"preemption_ratio must be >= 1, got {self.preemption_ratio!r}")
        require_unit_interval("defer_below", self.defer_below)
        require_choice("noted_urgency", self.noted_urgency, ("urgent", "normal", "low"))
        require_choice("demoted_urgency", self.demoted_urgency, ("urgent", "normal", "low"))
        require_bool("promote_on_free", self.promote_on_free)
        require_bool("temporal_urgency", self.temporal_urgency)
        require_int("completed_limit", self.completed_limit, minimum=1, maximum=sys.maxsize)


def urgent_priority(priority: float, urgency_multiplier: float) -> float:
    """A priority in a period of heightened urgency: min(1, priority x multiplier).

    Capped at 1 because a priority is a share of full urgency; a multiplier below 1 (a quiet
    period) lowers it.
    """
    priority = require_unit_interval("priority", priority)
    return min(1.0, priority * require_positive("urgency_multiplier", urgency_multiplier))


def strictly_above(value: float, bound: float) -> bool:
    """``value > bound``, with a value within 1e-9 (relative) of ``bound`` counting as on it:
    1.3 x 0.6 is 0.7800000000000001 in floating point, and 0.78 must not clear it."""
    return value > bound and not math.isclose(value, bound, rel_tol=1e-9)


def completion_rate(completed: int, arrived: int) -> float:
    """D2's task-completion rate: the share of the tasks that arrived which were finished
    (it reports 67% for an undifferentiated buffer, 82% for the three columns). A task counts
    once however often it left and re-entered a slot."""
    arrived = require_int("arrived", arrived, minimum=1)
    completed = require_int("completed", completed, minimum=0)
    if completed > arrived:
        raise ValueError(f"completed must be <= arrived ({arrived}), got {completed}")
    return completed / arrived


@dataclass(frozen=True, slots=True)
class TaskHistoryEntry:
    """One thing that happened to a task."""

    at: float
    what: str
    """'created', 'activated', 'demoted', 'step', or 'status'."""
    detail: str
    from_status: str | None = None
    to_status: str | None = None


@dataclass(slots=True)
class Task:
    """A unit of work, with the state D2's TaskState holds."""

    id: str
    description: str
    """Natural language; mentions its entities rather than pointing at them."""
    priority: float
    """Urgency in [0, 1]."""
    status: str = "planning"
    current_step: str | None = None
    blocking_reason: str | None = None
    progress: float = 0.0
    """Completion estimate in [0, 1]."""
    dependencies: tuple[str, ...] = ()
    """What this task waits on, in words ("vendor master lookup for Acme Supplies")."""
    created_at: float = 0.0
    started_at: float | None = None
    """When it first took a slot."""
    history: list[TaskHistoryEntry] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free for callers (the simulation keeps its ground-truth labels here)."""

    def __post_init__(self) -> None:
        require_str("id", self.id, non_empty=True)
        require_str("description", self.description, non_empty=True)
        self.priority = require_unit_interval("priority", self.priority)
        require_choice("status", self.status, TASK_STATUSES)
        self.progress = require_unit_interval("progress", self.progress)
        self.created_at = require_real("created_at", self.created_at)
        if self.started_at is not None:
            self.started_at = require_real("started_at", self.started_at)
        if not isinstance(self.dependencies, tuple):
            self.dependencies = tuple(self.dependencies)
        for dep in self.dependencies:
            require_str("dependency", dep, non_empty=True)

    def text(self) -> str:
        """Everything the task says in words: what the extractor reads for links."""
        parts = [self.description, self.current_step or "", self.blocking_reason or "", *self.dependencies]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class AdmissionDecision:
    """What ``TaskSlots.admit`` did with a task, and why."""

    outcome: str
    """'activated', 'preempted', 'noted' or 'deferred'."""
    task: Task
    demoted: Task | None
    """The task that lost its slot (outcome 'preempted')."""
    reason: str

    @property
    def activated(self) -> bool:
        return self.outcome in ("activated", "preempted")


class TaskSlots:
    """At most ``max_slots`` active tasks; admission, preemption and the status machine."""

    def __init__(self, settings: SlotSettings = SlotSettings(), trace: Trace | None = None) -> None:
        if not isinstance(settings, SlotSettings):
            raise TypeError(f"settings must be SlotSettings, got {settings!r}")
        self.settings = settings
        self.trace = trace if trace is not None else Trace()
        self._active: dict[str, Task] = {}
        self._activated_seq: dict[str, int] = {}
        self._seq = 0
        self.completed: deque[Task] = deque(maxlen=settings.completed_limit)
        """Completed tasks, the newest ``settings.completed_limit``, oldest first."""
        self._completed_ids: set[str] = set()

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._active)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._active

    def __iter__(self):
        return iter(self._active.values())

    def ids(self) -> tuple[str, ...]:
        """The active task ids, in activation order."""
        return tuple(self._active)

    @property
    def completed_ids(self) -> frozenset[str]:
        """Every task completed here, however many ``completed`` still keeps."""
        return frozenset(self._completed_ids)

    def is_completed(self, task_id: str) -> bool:
        """Whether ``task_id`` was completed here (a replay asks this every turn: a set lookup)."""
        return task_id in self._completed_ids

    @property
    def free(self) -> int:
        return self.settings.max_slots - len(self._active)

    def get(self, task_id: str) -> Task:
        try:
            return self._active[task_id]
        except KeyError:
            raise KeyError(f"task_id {task_id!r} is not an active task") from None

    def lowest(self) -> Task | None:
        """The task preemption would demote: lowest priority, most recently activated among equals."""
        if not self._active:
            return None
        return min(self._active.values(), key=lambda t: (t.priority, -self._activated_seq[t.id]))

    # --------------------------------------------------------------- admission
    def admit(self, task: Task, now: float, urgency_multiplier: float = 1.0) -> AdmissionDecision:
        """Activate ``task`` if the rules allow, possibly demoting the lowest active task.

        ``urgency_multiplier`` is the temporal context's (``WorkingMemory.urgency_multiplier``);
        with ``settings.temporal_urgency`` every priority compared is ``urgent_priority`` of it.
        """
        if not isinstance(task, Task):
            raise TypeError(f"task must be a Task, got {task!r}")
        now = require_real("now", now)
        if task.id in self._active:
            raise ValueError(f"task {task.id!r} is already active")
        if task.status == "complete":
            raise ValueError(f"task {task.id!r} is complete and cannot be admitted")
        s = self.settings
        m = require_positive("urgency_multiplier", urgency_multiplier) if s.temporal_urgency else 1.0
        p = urgent_priority(task.priority, m)
        scaled = "" if m == 1.0 else f" ({task.priority:.2f} x urgency {m:g})"
        active = list(self._active.values())
        outcome, victim = self._checked_decision(
            p, tuple(urgent_priority(t.priority, m) for t in active))
        if outcome in ("noted", "deferred") and p <= s.activation_threshold:
            return AdmissionDecision(
                outcome, task, None,
                f"priority {p:.2f}{scaled} <= activation_threshold {s.activation_threshold:.2f}"
                + (f" and < defer_below {s.defer_below:.2f}" if outcome == "deferred" else ""),
            )
        if outcome == "activated":
            self._activate(task, now, f"slot free ({len(self._active)}/{s.max_slots} used)")
            return AdmissionDecision(
                "activated", task, None,
                f"a slot was free ({len(self._active) - 1}/{s.max_slots} used) and priority {p:.2f}{scaled} > "
                f"{s.activation_threshold:.2f}",
            )
        lowest = active[victim] if victim is not None else self.lowest()
        if lowest is None:
            return AdmissionDecision(outcome, task, None, f"priority {p:.2f}{scaled}: {outcome}")
        low = urgent_priority(lowest.priority, m)
        bound = s.preemption_ratio * low
        if outcome == "preempted":
            del self._active[lowest.id]
            del self._activated_seq[lowest.id]
            lowest.history.append(TaskHistoryEntry(now, "demoted", f"preempted by {task.id} ({p:.2f} > {bound:.2f})"))
            self._activate(task, now, f"preempted {lowest.id}")
            return AdmissionDecision(
                "preempted", task, lowest,
                f"all {s.max_slots} slots full; priority {p:.2f}{scaled} > {s.preemption_ratio:g} x lowest "
                f"{low:.2f} ({lowest.id}) = {bound:.2f}",
            )
        return AdmissionDecision(
            outcome, task, None,
            f"all {s.max_slots} slots full and priority {p:.2f}{scaled} is not > {s.preemption_ratio:g} x lowest "
            f"{low:.2f} ({lowest.id}) = {bound:.2f}",
        )

    def decide(self, priority: float, active: tuple[float, ...]) -> tuple[str, int | None]:
        """The admission rule alone: what happens to a task of ``priority`` arriving while the
        active tasks have priorities ``active`` (in activation order, oldest first; both
        already scaled by the period's urgency).

        Returns ``(outcome, victim)``: outcome 'activated', 'preempted', 'noted' or
        'deferred'; victim is the index in ``active`` of the task to demote when 'preempted'
        (the lowest priority, the most recently activated among equals), else None.
        ``admit`` applies the decision; lesson 05's exercise rebuilds this method.
        """
        s = self.settings
        if priority <= s.activation_threshold:
            return ("deferred" if priority < s.defer_below else "noted"), None
        if len(active) < s.max_slots:
            return "activated", None
        victim = min(range(len(active)), key=lambda i: (active[i], -i))
        if strictly_above(priority, s.preemption_ratio * active[victim]):
            return "preempted", victim
        return "noted", None

    def _checked_decision(self, priority: float, active: tuple[float, ...]) -> tuple[str, int | None]:
        """``decide``'s answer, refused when it is not one ``admit`` can apply."""
        answer = self.decide(priority, active)
        if not (isinstance(answer, tuple) and len(answer) == 2):
            raise TypeError(f"decide() must return (outcome, victim), got {answer!r}")
        outcome, victim = answer
        if outcome not in ("activated", "preempted", "noted", "deferred"):
            raise ValueError("decide() returned outcome "
                             f"{outcome!r}: use 'activated', 'preempted', 'noted' or 'deferred'")
        if outcome == "preempted":
            if isinstance(victim, bool) or not isinstance(victim, int) or not 0 <= victim < len(active):
                raise ValueError(f"decide() returned ('preempted', {victim!r}): the victim must be "
                                 f"an index into active (0 to {len(active) - 1})")
        elif victim is not None:
            raise ValueError(f"decide() returned ({outcome!r}, {victim!r}): only 'preempted' "
                             "names a victim, the others return None")
        return outcome, victim

    def _activate(self, task: Task, now: float, detail: str) -> None:
        self._active[task.id] = task
        self._seq += 1
        self._activated_seq[task.id] = self._seq
        if task.started_at is None:
            task.started_at = now
        task.history.append(TaskHistoryEntry(now, "activated", detail))

    def activate(self, task: Task, now: float, detail: str = "promoted") -> None:
        """Put a task into a free slot without the admission rules (promotion from Notes)."""
        if self.free <= 0:
            raise ValueError(f"no free slot for task {task.id!r}: all {self.settings.max_slots} are used")
        if task.id in self._active:
            raise ValueError(f"task {task.id!r} is already active")
        self._activate(task, require_real("now", now), detail)

    # ------------------------------------------------------------ state machine
    def transition(self, task_id: str, to_status: str, now: float, reason: str = "") -> Task:
        """Move a task to ``to_status`` if ``ALLOWED_TRANSITIONS`` permits; record it."""
        task = self._find(task_id)
        require_choice("to_status", to_status, TASK_STATUSES)
        now = require_real("now", now)
        frm = task.status
        if to_status not in ALLOWED_TRANSITIONS[frm]:
            allowed = ", ".join(sorted(ALLOWED_TRANSITIONS[frm])) or "nothing (terminal)"
            raise ValueError(
                f"task {task_id!r} cannot go from {frm!r} to {to_status!r}; from {frm!r} it may go to {allowed}"
            )
        task.status = to_status
        if to_status != "blocked":
            task.blocking_reason = None
        task.history.append(TaskHistoryEntry(now, "status", reason, frm, to_status))
        self.trace.append(TaskTransition(task_id, frm, to_status, reason or f"{frm} -> {to_status}", now))
        return task

    def _find(self, task_id: str) -> Task:
        if task_id in self._active:
            return self._active[task_id]
        for t in self.completed:
            if t.id == task_id:
                return t
        raise KeyError(f"task_id {task_id!r} is not an active or completed task")

    def start(self, task_id: str, now: float, step: str | None = None) -> Task:
        task = self.transition(task_id, "executing", now, f"started{': ' + step if step else ''}")
        if step is not None:
            self.set_step(task_id, step, now)
        return task

    def set_step(self, task_id: str, step: str, now: float, progress: float | None = None) -> Task:
        """Record the current step (and optionally a new progress estimate)."""
        task = self.get(task_id)
        require_str("step", step, non_empty=True)
        if progress is not None:
            task.progress = require_unit_interval("progress", progress)
        task.current_step = step
        task.history.append(TaskHistoryEntry(require_real("now", now), "step", step))
        return task

    def block(self, task_id: str, reason: str, now: float) -> Task:
        """The task keeps its slot, marked blocked with an explicit reason."""
        require_str("reason", reason, non_empty=True)
        task = self.transition(task_id, "blocked", now, f"blocked: {reason}")
        task.blocking_reason = reason
        return task

    def unblock(self, task_id: str, now: float, reason: str = "unblocked") -> Task:
        task = self.get(task_id)
        if task.status != "blocked":
            raise ValueError(f"task {task_id!r} cannot be unblocked: its status is {task.status!r}, not 'blocked'")
        return self.transition(task_id, "executing", now, reason)

    def await_input(self, task_id: str, question: str, now: float) -> Task:
        require_str("question", question, non_empty=True)
        return self.transition(task_id, "awaiting_input", now, f"awaiting input: {question}")

    def complete(self, task_id: str, now: float, outcome: str = "done") -> Task:
        """Finish a task: its slot is freed and it joins ``completed``."""
        task = self.transition(task_id, "complete", now, f"complete: {outcome}")
        task.progress = 1.0
        if task_id in self._active:
            del self._active[task_id]
            del self._activated_seq[task_id]
            self.completed.append(task)
            self._completed_ids.add(task_id)
        return task
