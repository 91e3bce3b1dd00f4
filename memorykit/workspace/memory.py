"""``WorkingMemory``: the three columns working together on one clock and one trace.

It owns the cross-column moves D2 describes and records each as an
explained event:

* a task that is not activated becomes a note (noted or deferred); a task
  pushed out of its slot becomes a note (demotion); when a slot frees, the
  waiting task-note with the highest effective priority above the activation
  threshold takes it (promotion);
* ``observe(text)`` is one conversation turn: it notes which entities were
  mentioned, expires and escalates notes, and surfaces the notes that are
  urgent or share entities with the turn;
* ``objects()`` ranks the knowledge graph by salience; ``render()`` writes the
  columns for the prompt and ``render_flat()`` the undifferentiated baseline.

The clock is read once per public operation, and the same instant is used by
every column. Without one the memory runs on a ``StepClock`` at 0, the library's
simulated default (``memorykit.clock``): notes expire and tasks age only as the
caller moves it. ``SalienceHistory`` keeps, turn by turn, what salience needs from a
running memory, so one ``salience_matrix`` scores a whole run under any weights.
Taught in ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memorykit._validate import require_int, require_positive, require_real, require_str, require_unit_interval
from memorykit.clock import Clock, StepClock, time_basis
from memorykit.facts.statement import Statement
from memorykit.facts.timeline import FactTimeline, UpdatePolicy, Version
from memorykit.trace import Trace
from memorykit.workspace.events import (NoteEscalation, NoteExpiry, NoteSurfacing, TaskAdmission, TaskDemotion,
                                        TaskPromotion)
from memorykit.workspace.extract import EntityExtractor, VocabularyExtractor
from memorykit.workspace.graph import KnowledgeGraph
from memorykit.workspace.notes import Note, NoteQueue, NoteSettings
from memorykit.workspace.objects import (
    SalienceInputs,
    SalienceMatrix,
    SalienceWeights,
    WorkspaceObject,
    object_arrays,
    relevant_patterns,
    salience_matrix,
)
from memorykit.workspace.render import note_line, object_line, render_columns, render_flat, task_line
from memorykit.workspace.tasks import AdmissionDecision, SlotSettings, Task, TaskSlots, completion_rate


@dataclass(frozen=True)
class TurnReport:
    """What one ``observe`` call found and did."""

    turn: int
    at: float
    entities: frozenset[str]
    escalations: tuple[NoteEscalation, ...]
    expiries: tuple[NoteExpiry, ...]
    surfacings: tuple[NoteSurfacing, ...]


def salience_inputs(
    graph: KnowledgeGraph,
    mentions: Sequence[Iterable[str]],
    task_entities: Sequence[Iterable[str]],
    note_entities: Sequence[Iterable[str]],
    times: Sequence[float],
    initial_last_mention: Mapping[str, int] | None = None,
    first_turn: int = 1,
) -> SalienceInputs:
    """Salience inputs for T turns from what each turn mentioned and which entities tasks and notes named.

    ``mentions[t]``, ``task_entities[t]`` and ``note_entities[t]`` are the
    entity ids of turn ``first_turn + t``; ids the graph does not know are
    ignored. Independent of the salience weights, so a slider only reruns
    ``salience_matrix``.
    """
    require_int("first_turn", first_turn, minimum=0)  # a memory's turn counter starts at 0
    t_count = len(times)
    if not (len(mentions) == len(task_entities) == len(note_entities) == t_count):
        raise ValueError(
            f"mentions, task_entities, note_entities and times must have one entry per turn, got "
            f"{len(mentions)}, {len(task_entities)}, {len(note_entities)}, {t_count}"
        )
    ids, kinds, rel, strength = object_arrays(graph.objects())
    index = {oid: i for i, oid in enumerate(ids)}
    n = len(ids)
    last = np.full(n, -np.inf)
    for oid, turn in (initial_last_mention or {}).items():
        if oid in index:
            last[index[oid]] = turn
    since = np.empty((n, t_count))
    task_hops = np.empty((n, t_count))
    note_hops = np.empty((n, t_count))
    temporal = np.zeros((n, t_count), dtype=bool)
    temporal_objects = [(index[o.id], o) for o in graph.objects() if o.kind == "temporal"]
    updated_at = np.array([np.nan if o.updated_at is None else o.updated_at for o in graph.objects()])
    # (N, T) age of each belief's last change at each turn; a change not yet made (or none) is inf
    update_age = np.asarray(times, dtype=float)[None, :] - updated_at[:, None]
    update_age = np.where(np.isnan(update_age) | (update_age < 0), np.inf, update_age)
    for t in range(t_count):
        turn = first_turn + t
        for oid in mentions[t]:
            if oid in index:
                last[index[oid]] = turn
        since[:, t] = turn - last
        task_hops[:, t] = graph.hops_from(task_entities[t])
        note_hops[:, t] = graph.hops_from(note_entities[t])
        for i, obj in temporal_objects:
            temporal[i, t] = obj.is_current(times[t])
    return SalienceInputs(ids, kinds, rel, strength, since, task_hops, note_hops, graph.hop_matrix(), temporal,
                          update_age)


class WorkingMemory:
    """Active tasks, notes and objects over one knowledge graph."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        *,
        clock: Clock | None = None,
        extractor: EntityExtractor | None = None,
        slots: SlotSettings = SlotSettings(),
        notes: NoteSettings = NoteSettings(),
        salience: SalienceWeights = SalienceWeights(),
        top_notes: int = 8,
        belief_policy: str | UpdatePolicy = "latest-wins",
    ) -> None:
        if not isinstance(graph, KnowledgeGraph):
            raise TypeError(f"graph must be a KnowledgeGraph, got {graph!r}")
        if clock is None:
            clock = StepClock()  # the library's simulated default (memorykit.clock)
        if not callable(getattr(clock, "now", None)):
            raise TypeError(f"clock must have a now() method, got {clock!r}")
        if extractor is None:
            extractor = VocabularyExtractor.from_graph(graph)
        if not callable(getattr(extractor, "extract", None)):
            raise TypeError(f"extractor must have an extract(text) method, got {extractor!r}")
        if not isinstance(salience, SalienceWeights):
            raise TypeError(f"salience must be SalienceWeights, got {salience!r}")
        self.graph = graph
        self.clock = clock
        self.extractor = extractor
        self.salience_weights = salience
        self.top_notes = require_int("top_notes", top_notes, minimum=0)
        self.trace = Trace()
        self.beliefs = FactTimeline(belief_policy)
        self._revisions = 0
        """Every statement ``revise_belief`` gave each belief, under ``belief_policy``."""
        self.tasks = TaskSlots(slots, self.trace)
        self.notes = NoteQueue(notes, self.trace)
        self.turn = 0
        self.last_mention: dict[str, int] = {}
        self._note_seq = 0
        self._arrived: set[str] = set()  # every task id add_task has seen: the completion rate's denominator

    # ------------------------------------------------------------------- tasks
    def add_task(self, task: Task, urgency: str | None = None) -> AdmissionDecision:
        """Admit a task: activate it, or keep it as a note (noted or deferred), recording why."""
        now = self.clock.now()
        decision = self.tasks.admit(task, now, self.urgency_multiplier(now))
        self._arrived.add(task.id)
        note_id = None
        if decision.demoted is not None:
            self._record_demotion(decision, now)
        if not decision.activated:
            if urgency is None:
                urgency = "low" if decision.outcome == "deferred" else self.tasks.settings.noted_urgency
            note_id = self._task_note(task, now, urgency, "To do").id
        self.trace.append(
            TaskAdmission(
                task.id, decision.outcome, task.priority,
                decision.demoted.id if decision.demoted is not None else None, note_id, decision.reason, now,
            )
        )
        return decision

    def _task_note(self, task: Task, now: float, urgency: str, verb: str) -> Note:
        state = f" (was {task.status.replace('_', ' ')}, {task.progress:.0%} done)" if task.started_at is not None else ""
        content = f"{verb}: {task.description}{state}"
        return self.add_note(content, task.priority, urgency=urgency, source="system", task=task, _now=now)

    def start_task(self, task_id: str, step: str | None = None) -> Task:
        return self.tasks.start(task_id, self.clock.now(), step)

    def set_step(self, task_id: str, step: str, progress: float | None = None) -> Task:
        return self.tasks.set_step(task_id, step, self.clock.now(), progress)

    def block_task(self, task_id: str, reason: str) -> Task:
        return self.tasks.block(task_id, reason, self.clock.now())

    def unblock_task(self, task_id: str, reason: str = "unblocked") -> Task:
        return self.tasks.unblock(task_id, self.clock.now(), reason)

    def await_input(self, task_id: str, question: str) -> Task:
        return self.tasks.await_input(task_id, question, self.clock.now())

    def complete_task(self, task_id: str, outcome: str = "done") -> tuple[Task, list[TaskPromotion]]:
        """Finish a task; its slot goes to the best waiting task-note, if the settings say so."""
        now = self.clock.now()
        task = self.tasks.complete(task_id, now, outcome)
        promotions = self._fill_free_slots(now) if self.tasks.settings.promote_on_free else []
        return task, promotions

    def completion_rate(self) -> float:
        """D2's task-completion rate: of the tasks that arrived (``add_task``), the share
        completed so far. ValueError before the first task arrives."""
        if not self._arrived:
            raise ValueError("completion_rate needs at least one task: none has arrived through add_task")
        return completion_rate(len(self.tasks.completed_ids & self._arrived), len(self._arrived))

    def resume_task(self, note_id: str) -> AdmissionDecision:
        """Bring a task waiting in a note back through admission (the user turned to it).

        If it is activated (a free slot, or it preempts under the usual rule),
        its note leaves the queue; otherwise the note stays as it is.
        """
        now = self.clock.now()
        note = self.notes.get(note_id)
        if note.task is None:
            raise ValueError(f"note {note_id!r} holds no task to resume")
        decision = self.tasks.admit(note.task, now, self.urgency_multiplier(now))
        if decision.activated:
            self.notes.take(note_id)
            if decision.demoted is not None:
                self._record_demotion(decision, now)
            self.trace.append(
                TaskPromotion(note.task.id, note_id, note.priority, f"resumed from note {note_id}: {decision.reason}", now)
            )
        else:
            self.trace.append(
                TaskAdmission(note.task.id, decision.outcome, note.task.priority, None, note_id,
                              f"not resumed, stays in note {note_id}: {decision.reason}", now)
            )
        return decision

    def _record_demotion(self, decision: AdmissionDecision, now: float) -> Note:
        demoted = decision.demoted
        note = self._task_note(demoted, now, self.tasks.settings.demoted_urgency, "Resume")
        self.trace.append(
            TaskDemotion(
                demoted.id, decision.task.id, note.id, demoted.priority,
                f"preempted by {decision.task.id}: {decision.reason}; kept as note {note.id}", now,
            )
        )
        return note

    def _fill_free_slots(self, now: float) -> list[TaskPromotion]:
        out: list[TaskPromotion] = []
        threshold = self.tasks.settings.activation_threshold
        while self.tasks.free > 0:
            waiting = [(n, e) for n, e in self.notes.ranked(now) if n.task is not None and e > threshold]
            if not waiting:
                break
            note, eff = waiting[0]
            self.notes.take(note.id)
            self.tasks.activate(note.task, now, f"promoted from note {note.id}")
            event = TaskPromotion(
                note.task.id, note.id, eff,
                f"a slot was free and its note had the highest effective priority {eff:.2f} > {threshold:.2f} "
                "among waiting tasks",
                now,
            )
            self.trace.append(event)
            out.append(event)
        return out

    # ------------------------------------------------------------------- notes
    def add_note(
        self,
        content: str,
        priority: float,
        *,
        urgency: str = "normal",
        source: str = "user",
        ttl: float | None = None,
        context: Mapping[str, Any] | None = None,
        note_id: str | None = None,
        task: Task | None = None,
        _now: float | None = None,
    ) -> Note:
        """Queue a note. ``ttl`` (seconds) defaults to the urgency's TTL in the settings."""
        now = self.clock.now() if _now is None else _now
        require_str("content", content, non_empty=True)
        if ttl is None:
            ttl = self.notes.settings.ttl_seconds(urgency)
        else:
            ttl = require_positive("ttl", ttl)
        if note_id is None:
            self._note_seq += 1
            note_id = f"N{self._note_seq}"
        note = Note(
            note_id, content, now, ttl, require_unit_interval("priority", priority), urgency, source,
            dict(context or {}), task,
        )
        entities = self.extractor.extract(content)
        if task is not None:
            entities |= self.extractor.extract(task.text())
        return self.notes.add(note, entities)

    def resolve_note(self, note_id: str) -> Note:
        """The note was dealt with; it leaves the queue."""
        return self.notes.resolve(note_id)

    # ------------------------------------------------------------------- turns
    def observe(self, text: str) -> TurnReport:
        """One conversation turn: record mentions, expire and escalate notes, surface relevant ones."""
        now = self.clock.now()
        require_str("text", text)
        self.turn += 1
        entities = self.extractor.extract(text)
        for e in entities:
            self.last_mention[e] = self.turn
        # a Clock gives finite seconds (StepClock checks what it is set to): no second check here
        changes, surfacings = self.notes._observe(entities, now, self.turn)
        if not changes:  # most turns: nothing escalated or expired
            return TurnReport(self.turn, now, entities, (), (), tuple(surfacings))
        return TurnReport(
            self.turn, now, entities,
            tuple(e for e in changes if isinstance(e, NoteEscalation)),
            tuple(e for e in changes if isinstance(e, NoteExpiry)),
            tuple(surfacings),
        )

    def tick(self) -> list[NoteEscalation | NoteExpiry]:
        """Expire and escalate notes at the current time without a conversation turn."""
        return self.notes.tick(self.clock.now())

    # ----------------------------------------------------------------- objects
    def task_entities(self) -> frozenset[str]:
        return frozenset().union(*(self.extractor.extract(t.text()) for t in self.tasks)) if len(self.tasks) else frozenset()

    def _current_inputs(self, now: float | None) -> SalienceInputs:
        now = self.clock.now() if now is None else require_real("now", now)
        return salience_inputs(
            self.graph, [()], [self.task_entities()], [self.notes.all_entities()], [now],
            initial_last_mention=self.last_mention, first_turn=self.turn,
        )

    def salience(self, now: float | None = None) -> SalienceMatrix:
        """The current salience of every graph object, as a one-column matrix."""
        return salience_matrix(self._current_inputs(now), self.salience_weights)

    def relevant_patterns(self, hops: int = 1) -> list[WorkspaceObject]:
        """D2's ``get_relevant_patterns(active_tasks)``: the pattern objects the active
        tasks name or that lie within ``hops`` of an entity they name, in graph order."""
        inputs = self._current_inputs(None)
        return [self.graph.get(inputs.ids[i]) for i in np.flatnonzero(relevant_patterns(inputs, hops)[:, 0])]

    def objects(self, now: float | None = None) -> list[tuple[WorkspaceObject, float]]:
        """The objects the Objects column shows, most salient first (current temporal context leading)."""
        m = self.salience(now)
        shown = np.flatnonzero(m.selected[:, 0])
        shown = shown[np.argsort(m.rank[shown, 0], kind="stable")]
        return [(self.graph.get(m.ids[i]), float(m.total[i, 0])) for i in shown]

    def update_belief(self, belief_id: str, strength: float) -> WorkspaceObject:
        """The agent's confidence in a belief changed: record the new strength and when, so the
        belief counts as recently updated (a candidate for the Objects column) for 7 days."""
        old = self.graph.get(belief_id)
        if old.kind != "belief":
            raise ValueError(f"update_belief needs a belief, but {belief_id!r} is of kind {old.kind!r}")
        return self.graph.replace(replace(old, strength=require_unit_interval("strength", strength),
                                          updated_at=self.clock.now()))

    def revise_belief(self, belief_id: str, statement: str, strength: float | None = None
                      ) -> list[Version]:
        """A later statement of a belief (it moved, it was corrected): the timeline
        ``beliefs`` records it beside the one held and ``belief_policy`` chooses the current
        one. When the belief's statement changes, the graph gets it (with ``strength``, or the
        old strength when None) and ``updated_at``, so the belief counts as recently updated,
        a candidate for the Objects column, for 7 days (D2), as ``beliefs.recently_updated``
        says. Returns the versions the policy removed (the old one under latest-wins, the new
        one when keep-strongest keeps a stronger old one)."""
        old = self.graph.get(belief_id)
        if old.kind != "belief":
            raise ValueError(f"revise_belief needs a belief, but {belief_id!r} is of kind {old.kind!r}")
        require_str("statement", statement, non_empty=True)
        now = self.clock.now()
        strength = old.strength if strength is None else require_unit_interval("strength", strength)
        self._revisions += 1
        # checked (a statement's strength is in (0, 1]) before anything is recorded
        new = Statement(belief_id, statement, f"{belief_id}#{self._revisions}", now, strength)
        if not self.beliefs.versions(belief_id):  # what the graph held is the first version
            since = now if old.updated_at is None else min(old.updated_at, now)
            # a belief may hold strength 0; a statement's is > 0: the smallest one stands for it
            self.beliefs.record(Statement(belief_id, old.description or old.name,
                                          f"{belief_id}#0", since, max(old.strength, 1e-9)))
        removed = self.beliefs.record(new)
        current = self.beliefs.current(belief_id)
        if current is not None and current.statement is new:
            self.graph.replace(replace(old, name=statement, description=statement,
                                       strength=strength, updated_at=now))
        return removed

    def urgency_multiplier(self, now: float | None = None) -> float:
        """The strongest urgency multiplier of the temporal context in force (1.0 if none)."""
        now = self.clock.now() if now is None else now
        return max((o.urgency_multiplier for o in self.graph if o.is_current(now)), default=1.0)

    # --------------------------------------------------------------- rendering
    def render(self) -> str:
        """The three columns for the prompt: active tasks, top notes, top objects."""
        now = self.clock.now()
        return render_columns(
            list(self.tasks), self.notes.ranked(now), [o for o, _ in self.objects(now)], now,
            max_slots=self.tasks.settings.max_slots, top_notes=self.top_notes,
        )

    def render_flat(self, include_history: bool = False) -> str:
        """The same state as an undifferentiated chronological buffer (the seed's baseline).

        Every active task, every live note (waiting tasks included) and every
        object in the graph, one line each, in the order they arrived (objects
        first: they were known before the conversation). With
        ``include_history`` it also keeps completed tasks and expired or
        resolved notes, as a buffer that never forgets would.
        """
        now = self.clock.now()
        eff = self.notes.effective_priorities(now)
        items: list[tuple[float, str]] = [(-np.inf, object_line(o)) for o in self.graph]
        items += [(t.created_at, task_line(t, now)) for t in self.tasks]
        items += [(n.created_at, note_line(n, eff[n.id], now)) for n in self.notes]
        if include_history:
            items += [(t.created_at, task_line(t, now)) for t in self.tasks.completed]
            items += [(n.created_at, note_line(n, n.priority, now)) for n in self.notes.archived]
        return render_flat(items)

    def __repr__(self) -> str:
        return (
            f"WorkingMemory(turn={self.turn}, tasks={len(self.tasks)}/{self.tasks.settings.max_slots}, "
            f"notes={len(self.notes)}, objects={len(self.graph)}, "
            f"time_basis={time_basis(self.clock)!r})"
        )


class SalienceHistory:
    """What salience needs from each turn of a running memory, kept turn by turn.

    Call ``record(memory, report)`` after each turn, once the turn's work is done (the
    tasks and notes are then what the next prompt would show); ``inputs()`` gives the
    ``SalienceInputs`` of every recorded turn at once, so one ``salience_matrix`` call scores
    all of them under any weights (a slider) instead of one call per turn.
    """

    def __init__(self, graph: KnowledgeGraph) -> None:
        if not isinstance(graph, KnowledgeGraph):
            raise TypeError(f"graph must be a KnowledgeGraph, got {graph!r}")
        self.graph = graph
        self.mentions: list[frozenset[str]] = []
        """Entities each turn's text mentioned."""
        self.task_entities: list[frozenset[str]] = []
        """Entities the active tasks named after each turn."""
        self.note_entities: list[frozenset[str]] = []
        """Entities the live notes named after each turn."""
        self.times: list[float] = []
        """Clock time of each turn."""

    def record(self, memory: WorkingMemory, report: TurnReport) -> None:
        """Keep one turn: what ``report`` (the turn's ``observe``) found, and the memory now."""
        if memory.graph is not self.graph:
            raise ValueError("memory must run on the graph this history was made for")
        self.mentions.append(report.entities)
        self.task_entities.append(memory.task_entities())
        self.note_entities.append(memory.notes.all_entities())
        self.times.append(report.at)

    def __len__(self) -> int:
        return len(self.times)

    def inputs(self) -> SalienceInputs:
        """Salience inputs of the recorded turns (turn 1 first)."""
        return salience_inputs(self.graph, self.mentions, self.task_entities, self.note_entities, self.times)
