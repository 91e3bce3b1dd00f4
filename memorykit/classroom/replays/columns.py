"""The three columns at every turn of a run, and what they cost in tokens under any limits.

* ``LineCounter``: counts each distinct line once (cl100k_base by default). A
  rendered prompt's tokens are the sum of its lines' tokens, each counted with its
  newline, minus a correction for the last line: tiktoken's pre-tokenizer never
  joins a newline with the "- " or header that starts the next line, so the sum is
  exact (a test compares it with counting whole texts).
* ``ColumnLog``: called after each turn of a running ``WorkingMemory``
  (``record``), it keeps the lines the prompt can be made of (active-task lines,
  every live note's line ranked by effective priority) and the token counts of the
  flat buffer of the same state and of the buffer that never forgets; ``replay()``
  then ranks every showable object by salience over all turns at once (no
  ``max_objects`` cut, so any limit can be applied afterwards): a ``ColumnReplay``.
* ``prompt_lines`` / ``render_prompt``: the three-column prompt at one turn under
  any limits (the same text ``WorkingMemory.render()`` writes at its own).
* ``ColumnTables`` (``build_tables``): tokens of every part of the prompt at every
  turn for every top-notes and max-objects limit, so a limit is an array lookup;
  ``token_comparison``, ``saving_breakdown`` and ``limits_grid`` read them.

Taught in ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.tokens import Tokenizer
from memorykit.workspace.memory import SalienceHistory, TurnReport, WorkingMemory
from memorykit.workspace.objects import OBJECT_KINDS, SalienceInputs, SalienceWeights, salience_matrix
from memorykit.workspace.render import (
    NONE_LINE,
    OBJECTS_HEADER,
    three_column_lines,
    kind_header,
    note_line,
    notes_header,
    object_line,
    task_line,
    tasks_header,
)

SEED_REDUCTION = 0.40
"""D2's claim: 2,500 vs 4,200 tokens per turn, '40% reduction'."""
SEED_TOKENS = {"three_columns": 2_500, "baseline": 4_200}


# ------------------------------------------------------------- line counts
class LineCounter:
    """Token counts of prompt lines, each distinct line counted once.

    ``with_newline(line)`` counts ``line + "\\n"``, ``alone(line)`` counts the
    line as the last one of a text. ``text_tokens(lines)`` is then the exact
    count of ``"\\n".join(lines)`` whenever every line after the first starts
    with a non-space character (true of every line the renderers write).
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.tokenizer = Tokenizer(encoding)
        self.encoding = encoding
        self._nl: dict[str, int] = {}
        self._alone: dict[str, int] = {}

    def with_newline(self, line: str) -> int:
        n = self._nl.get(line)
        if n is None:
            n = self._nl[line] = self.tokenizer.count(line + "\n")
        return n

    def alone(self, line: str) -> int:
        n = self._alone.get(line)
        if n is None:
            n = self._alone[line] = self.tokenizer.count(line)
        return n

    def text_tokens(self, lines: list[str]) -> int:
        if not lines:
            return 0
        return sum(self.with_newline(x) for x in lines[:-1]) + self.alone(lines[-1])

    def __len__(self) -> int:
        return len(self._nl)


# ------------------------------------------------------------------ replay
@dataclass(frozen=True)
class TurnLines:
    """What the prompt can be made of at one turn (lines without their "- " bullet)."""

    turn: int
    at: float
    tasks: tuple[str, ...]
    """Active-task lines, slot order."""
    notes: tuple[str, ...]
    """Every live note's line, best effective priority first."""
    objects: tuple[int, ...]
    """Indices (into ``ColumnReplay.object_lines``) of every showable object, most salient first."""
    task_linked: tuple[int, ...]
    """Objects linked to an active task at this turn (they carry the task-link salience term)."""
    flat_tokens: int
    history_tokens: int
    rendered: str | None = None
    """``WorkingMemory.render()`` at the run's settings, when the log kept it (tests)."""


@dataclass(frozen=True)
class ColumnReplay:
    """A run, turn by turn, and the counter its tokens were counted with."""

    turns: tuple[TurnLines, ...]
    object_ids: tuple[str, ...]
    object_kinds: tuple[str, ...]
    object_lines: tuple[str, ...]
    max_slots: int
    counter: LineCounter
    inputs: SalienceInputs
    weights: SalienceWeights

    @property
    def n_turns(self) -> int:
        return len(self.turns)


class ColumnLog:
    """The prompt's raw material at each turn of one running memory (see the module docstring)."""

    def __init__(self, counter: LineCounter | None = None, *, keep_renders: bool = False) -> None:
        if counter is not None and not isinstance(counter, LineCounter):
            raise TypeError(f"counter must be a LineCounter, got {counter!r}")
        self.counter = counter or LineCounter()
        self.keep_renders = bool(keep_renders)
        self._memory: WorkingMemory | None = None
        self._history: SalienceHistory | None = None
        self._turns: list[TurnLines] = []

    def record(self, memory: WorkingMemory, report: TurnReport) -> None:
        """Keep the turn that just ended (``report`` is its ``observe``), once its work is done."""
        if self._memory is None:
            self._memory, self._history = memory, SalienceHistory(memory.graph)
        elif memory is not self._memory:
            raise ValueError("a ColumnLog follows one memory; make a new log for another")
        self._history.record(memory, report)
        now = memory.clock.now()
        c = self.counter
        self._turns.append(TurnLines(
            report.turn, now,
            tuple(task_line(t, now) for t in memory.tasks),
            tuple(note_line(n, e, now) for n, e in memory.notes.ranked(now)),
            (), (),
            c.text_tokens(memory.render_flat().split("\n")),
            c.text_tokens(memory.render_flat(include_history=True).split("\n")),
            memory.render() if self.keep_renders else None,
        ))

    def replay(self) -> ColumnReplay:
        """The recorded turns with every showable object ranked by salience (one matrix for all turns)."""
        if self._memory is None:
            raise ValueError("the log holds no turn: call record(memory, report) after each turn first")
        memory, inputs = self._memory, self._history.inputs()
        weights = memory.salience_weights
        objects = memory.graph.objects()
        m = salience_matrix(inputs, replace(weights, max_objects=len(objects)))
        linked = inputs.task_hops <= weights.link_hops
        turns = []
        for t, tl in enumerate(self._turns):
            shown = np.flatnonzero(m.selected[:, t])
            shown = shown[np.argsort(m.rank[shown, t], kind="stable")]
            turns.append(replace(tl, objects=tuple(int(i) for i in shown),
                                 task_linked=tuple(int(i) for i in np.flatnonzero(linked[:, t]))))
        return ColumnReplay(
            tuple(turns), tuple(o.id for o in objects), tuple(o.kind for o in objects),
            tuple(object_line(o) for o in objects), memory.tasks.settings.max_slots, self.counter,
            inputs, weights,
        )


# --------------------------------------------------------------- rendering
def _turn_index(replay: ColumnReplay, turn: int) -> int:
    require_int("turn", turn, minimum=1)
    if turn > replay.n_turns:
        raise ValueError(f"turn must be in 1..{replay.n_turns}, got {turn}")
    return turn - 1


def prompt_lines(replay: ColumnReplay, turn: int, top_notes: int = 8, max_objects: int = 20) -> list[str]:
    """The lines of the three-column prompt at ``turn`` (1-based) under the given limits."""
    tl = replay.turns[_turn_index(replay, turn)]
    require_int("max_objects", max_objects, minimum=1)
    objects = [(replay.object_kinds[i], replay.object_lines[i]) for i in tl.objects[:max_objects]]
    return three_column_lines(tl.tasks, tl.notes, objects, max_slots=replay.max_slots,
                              top_notes=top_notes, max_objects=max_objects)


def render_prompt(replay: ColumnReplay, turn: int, top_notes: int = 8, max_objects: int = 20) -> str:
    """The three-column prompt text at ``turn``; equals ``WorkingMemory.render()`` at 8 / 20."""
    return "\n".join(prompt_lines(replay, turn, top_notes, max_objects))


def line_costs(replay: ColumnReplay) -> dict[str, float]:
    """Mean tokens of one task, note and object line (with bullet and newline) over all turns."""
    c = replay.counter
    out = {}
    for kind, lines in (("task", [x for tl in replay.turns for x in tl.tasks]),
                        ("note", [x for tl in replay.turns for x in tl.notes]),
                        ("object", [replay.object_lines[i] for tl in replay.turns for i in tl.objects])):
        out[kind] = float(np.mean([c.with_newline(f"- {x}") for x in lines])) if lines else 0.0
    return out


# ------------------------------------------------------------------ tables
@dataclass(frozen=True)
class ColumnTables:
    """Tokens of every part of the prompt at every turn, for every limit (built once)."""

    fixed: np.ndarray
    """(T,) the tasks column and the OBJECTS header, with their newlines."""
    notes: np.ndarray
    """(T, K + 1) the notes column when showing the top k notes (k = 0..K)."""
    objects: np.ndarray
    """(T, N + 1) the object groups when showing the top m objects (m = 0..N), last-line
    correction included."""
    flat: np.ndarray
    """(T,) the flat buffer of the same state."""
    history: np.ndarray
    """(T,) the flat log that never forgets."""
    linked_needed: np.ndarray
    """(T,) the smallest max_objects that keeps every task-linked object (0 if none is linked)."""
    live_notes: np.ndarray
    """(T,) how many notes are live."""

    @property
    def max_notes(self) -> int:
        return self.notes.shape[1] - 1

    @property
    def max_objects(self) -> int:
        return self.objects.shape[1] - 1

    def columns(self, top_notes: int, max_objects: int) -> np.ndarray:
        """(T,) tokens of the three-column prompt under these limits."""
        require_int("top_notes", top_notes, minimum=0)
        require_int("max_objects", max_objects, minimum=1)
        return (self.fixed + self.notes[:, min(top_notes, self.max_notes)]
                + self.objects[:, min(max_objects, self.max_objects)])


def build_tables(replay: ColumnReplay) -> ColumnTables:
    """Count every line once and tabulate the prompt's tokens for all limits."""
    c = replay.counter
    T = replay.n_turns
    n_obj = len(replay.object_ids)
    k_max = max(len(tl.notes) for tl in replay.turns)
    fixed = np.zeros(T, dtype=np.int64)
    notes = np.zeros((T, k_max + 1), dtype=np.int64)
    objects = np.zeros((T, n_obj + 1), dtype=np.int64)
    needed = np.zeros(T, dtype=np.int64)
    obj_nl = np.array([c.with_newline(f"- {x}") for x in replay.object_lines], dtype=np.int64)
    obj_alone = np.array([c.alone(f"- {x}") for x in replay.object_lines], dtype=np.int64)
    kind_index = [OBJECT_KINDS.index(k) for k in replay.object_kinds]
    header_nl = [c.with_newline(kind_header(k)) for k in OBJECT_KINDS]
    for t, tl in enumerate(replay.turns):
        task_lines = [f"- {x}" for x in tl.tasks] or [NONE_LINE]
        fixed[t] = c.with_newline(tasks_header(len(tl.tasks), replay.max_slots)) + sum(
            c.with_newline(x) for x in task_lines) + c.with_newline(OBJECTS_HEADER)
        n_live = len(tl.notes)
        note_cum = np.concatenate([[0], np.cumsum([c.with_newline(f"- {x}") for x in tl.notes])])
        for k in range(k_max + 1):
            shown = min(k, n_live)
            body = note_cum[shown] if shown else c.with_newline(NONE_LINE)
            notes[t, k] = c.with_newline(notes_header(shown, n_live)) + body
        # Objects: add them in salience order; a kind's header counts once; the last rendered
        # line (last object of the last kind present) carries no newline.
        total = 0
        present = [False] * len(OBJECT_KINDS)
        last_of_kind = [-1] * len(OBJECT_KINDS)
        objects[t, 0] = c.alone(OBJECTS_HEADER) - c.with_newline(OBJECTS_HEADER)
        for m, i in enumerate(tl.objects, start=1):
            k = kind_index[i]
            if not present[k]:
                present[k] = True
                total += header_nl[k]
            total += obj_nl[i]
            last_of_kind[k] = i
            last = last_of_kind[max(j for j, p in enumerate(present) if p)]
            objects[t, m] = total - obj_nl[last] + obj_alone[last]
        objects[t, len(tl.objects) + 1:] = objects[t, len(tl.objects)]
        pos = {i: p for p, i in enumerate(tl.objects)}
        needed[t] = max((pos.get(i, n_obj) + 1 for i in tl.task_linked), default=0)
    flat = np.array([tl.flat_tokens for tl in replay.turns], dtype=np.int64)
    hist = np.array([tl.history_tokens for tl in replay.turns], dtype=np.int64)
    live = np.array([len(tl.notes) for tl in replay.turns], dtype=np.int64)
    return ColumnTables(fixed, notes, objects, flat, hist, needed, live)


@dataclass(frozen=True)
class TokenComparison:
    """Tokens per turn of the three columns against the two flat baselines, under some limits."""

    top_notes: int
    max_objects: int
    columns: np.ndarray
    flat: np.ndarray
    history: np.ndarray
    turns_dropping_linked: np.ndarray
    """1-based turns where an object linked to an active task is cut by ``max_objects``."""

    @property
    def reduction(self) -> float:
        """1 - mean(columns) / mean(flat buffer of the same state)."""
        return 1.0 - float(self.columns.mean()) / float(self.flat.mean())

    @property
    def reduction_vs_history(self) -> float:
        return 1.0 - float(self.columns.mean()) / float(self.history.mean())

    def summary(self) -> dict[str, Any]:
        return {
            "top_notes": self.top_notes,
            "max_objects": self.max_objects,
            "columns_mean": round(float(self.columns.mean()), 1),
            "flat_same_state_mean": round(float(self.flat.mean()), 1),
            "never_forgetting_mean": round(float(self.history.mean()), 1),
            "reduction_vs_same_state_pct": round(100 * self.reduction, 1),
            "reduction_vs_never_forgetting_pct": round(100 * self.reduction_vs_history, 1),
            "seed_claim_pct": round(100 * SEED_REDUCTION, 1),
            "turns_dropping_a_task_linked_object": int(self.turns_dropping_linked.size),
        }


def token_comparison(tables: ColumnTables, top_notes: int = 8, max_objects: int = 20) -> TokenComparison:
    cols = tables.columns(top_notes, max_objects)
    dropping = np.flatnonzero(tables.linked_needed > max_objects) + 1
    return TokenComparison(top_notes, max_objects, cols, tables.flat, tables.history, dropping)


def saving_breakdown(tables: ColumnTables, top_notes: int = 8, max_objects: int = 20) -> dict[str, float]:
    """Mean tokens per turn saved against the flat buffer of the same state, by cause.

    ``neighbourhood``: the columns with no limits at all (every live note, every showable
    object) against the flat buffer: objects outside the 2-hop neighbourhood are left out,
    headers added. ``notes_cut`` and ``objects_cut``: what each limit alone removes from that;
    ``both_cuts`` what they remove together (the cuts overlap only through the last-line token).
    """
    none = float(tables.columns(tables.max_notes, tables.max_objects).mean())
    return {
        "flat_same_state": round(float(tables.flat.mean()), 1),
        "neighbourhood": round(float(tables.flat.mean()) - none, 1),
        "notes_cut": round(none - float(tables.columns(top_notes, tables.max_objects).mean()), 1),
        "objects_cut": round(none - float(tables.columns(tables.max_notes, max_objects).mean()), 1),
        "both_cuts": round(none - float(tables.columns(top_notes, max_objects).mean()), 1),
        "columns": round(float(tables.columns(top_notes, max_objects).mean()), 1),
        "live_notes_mean": round(float(tables.live_notes.mean()), 2),
        "turns_with_more_live_notes_than_top_notes_pct": round(100 * float((tables.live_notes > top_notes).mean()), 1),
    }


def limits_grid(tables: ColumnTables, max_top_notes: int | None = None) -> dict[str, np.ndarray]:
    """Reduction (vs the same state) and turns dropping a task-linked object for every
    (top_notes, max_objects) pair: arrays indexed [top_notes, max_objects - 1]."""
    k_max = tables.max_notes if max_top_notes is None else min(max_top_notes, tables.max_notes)
    flat_mean = float(tables.flat.mean())
    base = float(tables.fixed.mean())
    notes = tables.notes.mean(axis=0)[: k_max + 1]
    objs = tables.objects.mean(axis=0)[1:]
    reduction = 1.0 - (base + notes[:, None] + objs[None, :]) / flat_mean
    m = np.arange(1, tables.max_objects + 1)
    dropping = (tables.linked_needed[None, :] > m[:, None]).sum(axis=1)
    return {"reduction": reduction, "dropping": np.broadcast_to(dropping, reduction.shape)}
