"""The explained decisions of a three-column working memory.

Every admission, demotion, task transition, priority escalation, note expiry
and surfacing is recorded as one small frozen event in the memory's
``memorykit.trace.Trace`` (the same append-only trace the buffers use), with a
human ``reason`` carrying the numbers that decided it. ``Trace.records()``
turns them into table rows for a notebook. Taught in
``notebooks/05_task_slots.ipynb`` (task events), ``notebooks/06_notes_ttl.ipynb`` (note
events) and ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TaskAdmission:
    """A task arrived and was placed: activated into a slot, noted, or deferred."""

    task_id: str
    outcome: str
    """'activated', 'preempted' (activated by demoting another task), 'noted' or 'deferred'."""
    priority: float
    demoted_task_id: str | None
    """The task pushed out of its slot to make room, when outcome is 'preempted'."""
    note_id: str | None
    """The note that now holds the task, when it was noted or deferred."""
    reason: str
    at: float

    kind = "task_admission"


@dataclass(frozen=True, slots=True)
class TaskDemotion:
    """An active task lost its slot to a more urgent one and became a note."""

    task_id: str
    by_task_id: str
    note_id: str
    priority: float
    reason: str
    at: float

    kind = "task_demotion"


@dataclass(frozen=True, slots=True)
class TaskPromotion:
    """A task waiting in Notes was given a slot that had become free."""

    task_id: str
    note_id: str
    priority: float
    reason: str
    at: float

    kind = "task_promotion"


@dataclass(frozen=True, slots=True)
class TaskTransition:
    """A task's status changed (planning -> executing -> blocked -> ... -> complete)."""

    task_id: str
    from_status: str
    to_status: str
    reason: str
    at: float

    kind = "task_transition"


@dataclass(frozen=True, slots=True)
class NoteEscalation:
    """A note's effective priority moved to a higher escalation band as its TTL ran down."""

    note_id: str
    multiplier: float
    """The new escalation factor (1.5 or 2.0 by default)."""
    remaining_fraction: float
    effective_priority: float
    reason: str
    at: float

    kind = "note_escalation"


@dataclass(frozen=True, slots=True)
class NoteExpiry:
    """A note's TTL ran out: escalated to the user with a question, or archived silently."""

    note_id: str
    outcome: str
    """'escalated_to_user' or 'archived'."""
    priority: float
    question: str | None
    """What the agent asks the user, when the note was escalated."""
    reason: str
    at: float

    kind = "note_expiry"


@dataclass(frozen=True, slots=True)
class NoteSurfacing:
    """A note was brought up proactively in the current context."""

    note_id: str
    trigger: str
    """'priority' (effective priority above the threshold), 'overlap' (shared entities) or both as 'priority+overlap'."""
    effective_priority: float
    shared_entities: tuple[str, ...]
    turn: int
    message: str
    """The sentence the agent would say."""
    reason: str
    at: float

    kind = "note_surfacing"


WorkspaceEvent = (
    TaskAdmission
    | TaskDemotion
    | TaskPromotion
    | TaskTransition
    | NoteEscalation
    | NoteExpiry
    | NoteSurfacing
)
