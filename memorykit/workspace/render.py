"""Rendering working memory for the LLM, and the undifferentiated baseline.

``render_columns`` writes the three columns the way D2 shows them:
the active tasks with their state, the top notes by effective priority, and
the most salient objects grouped by category. As the seed insists, nothing in
one column points at another (no "see note 3", no ids shared between
columns): the task says "Acme Supplies" and the model connects it to the Acme
Supplies object itself.

``render_flat`` is the comparison the seed makes: an undifferentiated buffer
holding the same items as one chronological list, each item written with
exactly the same line as in the columns, so a token difference comes only
from what is selected and how it is grouped, never from terser wording.
Taught in ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memorykit._validate import require_int, require_real
from memorykit.workspace.notes import Note, _duration
from memorykit.workspace.objects import OBJECT_KINDS, WorkspaceObject
from memorykit.workspace.tasks import Task

_KIND_TITLES = {
    "person": "People",
    "entity": "Entities",
    "belief": "Beliefs",
    "knowledge": "Knowledge",
    "goal": "Goals",
    "temporal": "Temporal",
    "pattern": "Patterns",
}


def task_line(task: Task, now: float) -> str:
    parts = [task.description, f"status: {task.status.replace('_', ' ')}"]
    if task.blocking_reason:
        parts.append(f"blocked because: {task.blocking_reason}")
    if task.current_step:
        parts.append(f"step: {task.current_step}")
    parts.append(f"progress {task.progress:.0%}")
    if task.dependencies:
        parts.append("depends on: " + "; ".join(task.dependencies))
    parts.append(f"priority {task.priority:.2f}")
    return " | ".join(parts)


def note_line(note: Note, effective: float, now: float) -> str:
    return (
        f"{note.content} (priority {effective:.2f}, "
        f"{_duration(note.expires_at - now)} left, from {note.source})"
    )


def object_line(obj: WorkspaceObject) -> str:
    if obj.kind == "person":
        extra = [f"relationship value {obj.relationship_value:.2f}", *obj.relationship_beliefs]
        return f"{obj.name} ({'; '.join(extra)})"
    if obj.kind == "belief":
        return f'"{obj.description}" (strength {obj.strength:.2f})'
    if obj.kind == "temporal":
        return f"{obj.name} (urgency multiplier {obj.urgency_multiplier:g}x)"
    return f"{obj.name}: {obj.description}" if obj.description else obj.name


OBJECTS_HEADER = "OBJECTS"
NONE_LINE = "- (none)"
"""What an empty column shows."""


def tasks_header(active: int, max_slots: int) -> str:
    return f"ACTIVE TASKS ({active}/{max_slots} slots)"


def notes_header(shown: int, live: int) -> str:
    return f"NOTES (top {shown} of {live} by priority)"


def kind_header(kind: str) -> str:
    """The heading of one kind's group in the Objects column ("People:")."""
    return f"{_KIND_TITLES[kind]}:"


def column_lines(
    task_lines: Sequence[str],
    note_lines: Sequence[str],
    live_notes: int,
    objects: Sequence[tuple[str, str]],
    *,
    max_slots: int,
) -> list[str]:
    """The lines of the three columns, from item lines already written.

    ``note_lines`` are the notes shown (best first) out of ``live_notes``; ``objects`` are
    (kind, line) pairs, most salient first, grouped here by kind in ``OBJECT_KINDS`` order.
    """
    lines = [tasks_header(len(task_lines), max_slots)]
    lines += [f"- {x}" for x in task_lines] or [NONE_LINE]
    lines.append(notes_header(len(note_lines), live_notes))
    lines += [f"- {x}" for x in note_lines] or [NONE_LINE]
    lines.append(OBJECTS_HEADER)
    for kind in OBJECT_KINDS:
        group = [line for k, line in objects if k == kind]
        if group:
            lines.append(kind_header(kind))
            lines += [f"- {x}" for x in group]
    return lines


def three_column_lines(
    task_lines: Sequence[str],
    note_lines: Sequence[str],
    objects: Sequence[tuple[str, str]],
    *,
    max_slots: int,
    top_notes: int,
    max_objects: int,
) -> list[str]:
    """The prompt's lines under the column limits: the first ``top_notes`` of ``note_lines``
    (every live note, best first; the header counts the hidden ones) and the first
    ``max_objects`` of ``objects`` ((kind, line), most salient first), grouped by kind.
    The contract it keeps is ``memorykit.classroom.contracts.workspace.COLUMN_CONTRACTS``."""
    require_int("top_notes", top_notes, minimum=0)
    require_int("max_objects", max_objects, minimum=1)
    return column_lines(task_lines, list(note_lines)[:top_notes], len(note_lines),
                        list(objects)[:max_objects], max_slots=max_slots)


def render_columns(
    tasks: Sequence[Task],
    notes: Sequence[tuple[Note, float]],
    objects: Sequence[WorkspaceObject],
    now: float,
    *,
    max_slots: int = 4,
    top_notes: int = 8,
) -> str:
    """The three columns as prompt text. ``notes`` are (note, effective priority), best first."""
    require_real("now", now)
    require_int("max_slots", max_slots, minimum=1)
    shown = list(notes)[:require_int("top_notes", top_notes, minimum=0)]
    return "\n".join(column_lines(
        [task_line(t, now) for t in tasks], [note_line(n, e, now) for n, e in shown], len(notes),
        [(o.kind, object_line(o)) for o in objects], max_slots=max_slots,
    ))


def render_flat(items: Iterable[tuple[float, str]]) -> str:
    """An undifferentiated context buffer: every item's line, oldest first, no structure."""
    ordered = sorted(items, key=lambda item: item[0])
    return "CONTEXT\n" + "\n".join(f"- {line}" for _, line in ordered)
