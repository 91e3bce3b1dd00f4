"""Three-column working memory (D2): active tasks, notes with TTL, salient objects.

* ``tasks``: ``Task``, ``TaskSlots`` and ``SlotSettings`` (admission at 0.5,
  preemption at 1.3x the lowest, the task status machine, ``urgent_priority``:
  the temporal urgency multiplier scaling priority, ``completion_rate``).
* ``notes``: ``Note``, ``NoteQueue``, ``NoteSettings`` and the vectorized
  ``effective_priority`` (TTL escalation x1.5 / x2, expiry, surfacing).
* ``objects`` and ``graph``: ``WorkspaceObject`` (people, entities, beliefs,
  knowledge, goals, temporal context, patterns), ``KnowledgeGraph`` with its
  2-hop query, ``SalienceWeights`` and the vectorized ``salience_matrix``.
* ``extract``: the ``EntityExtractor`` protocol and a deterministic ``VocabularyExtractor``.
* ``render``: the columns as prompt text, and the undifferentiated baseline.
* ``memory``: ``WorkingMemory``, which runs them together and explains every
  decision in its ``trace`` (``events``), and ``SalienceHistory``, which keeps
  what salience needs from each turn of a run.
* Readings of a run, for the lessons' figures: ``timeline`` (which task held
  which slot, turn by turn), ``escalation`` (one note's escalation over its
  life), ``salience`` (the objects shown at a turn and why), ``columns`` (the
  prompt's lines and tokens at every turn under any limits).

Taught in ``notebooks/05_task_slots.ipynb`` (tasks, timeline), ``06_notes_ttl.ipynb`` (notes,
escalation), ``07_objects_salience.ipynb`` (objects, graph, salience) and
``08_three_columns.ipynb`` (render, memory, columns).
"""

from memorykit.workspace.events import (
    NoteEscalation,
    NoteExpiry,
    NoteSurfacing,
    TaskAdmission,
    TaskDemotion,
    TaskPromotion,
    TaskTransition,
)
from memorykit.workspace.extract import EntityExtractor, FixedExtractor, VocabularyExtractor
from memorykit.workspace.graph import KnowledgeGraph
from memorykit.workspace.memory import TurnReport, WorkingMemory, salience_inputs
from memorykit.workspace.notes import (
    Note,
    NoteQueue,
    NoteSettings,
    effective_priority,
    escalation_factor,
    remaining_fraction,
)
from memorykit.workspace.objects import (
    OBJECT_KINDS,
    SalienceInputs,
    SalienceMatrix,
    SalienceWeights,
    WorkspaceObject,
    belief,
    entity,
    goal,
    knowledge,
    pattern,
    person,
    relevant_patterns,
    salience_matrix,
    temporal,
)
from memorykit.workspace.render import render_columns, render_flat
from memorykit.workspace.tasks import (
    ALLOWED_TRANSITIONS,
    TASK_STATUSES,
    AdmissionDecision,
    SlotSettings,
    Task,
    TaskSlots,
    completion_rate,
    urgent_priority,
)

__all__ = [
    "ALLOWED_TRANSITIONS", "OBJECT_KINDS", "TASK_STATUSES", "AdmissionDecision", "EntityExtractor",
    "FixedExtractor", "KnowledgeGraph", "Note", "NoteEscalation", "NoteExpiry", "NoteQueue", "NoteSettings",
    "NoteSurfacing", "SalienceInputs", "SalienceMatrix", "SalienceWeights", "SlotSettings", "Task",
    "TaskAdmission", "TaskDemotion", "TaskPromotion", "TaskSlots", "TaskTransition", "TurnReport",
    "VocabularyExtractor", "WorkingMemory", "WorkspaceObject", "belief", "completion_rate", "effective_priority",
    "entity",
    "escalation_factor", "goal", "knowledge", "pattern", "person", "relevant_patterns", "remaining_fraction",
    "render_columns",
    "render_flat", "salience_inputs", "salience_matrix", "temporal", "urgent_priority",
]
