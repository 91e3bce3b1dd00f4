"""Lesson 08: the rendered three columns, and what they cost against a flat buffer.

Pure computation (tested, benchmarked):

* ``replay_columns``: replays a workflow scenario exactly as
  ``memorykit.scenarios.workflow.run_workflow`` does and keeps, for every
  turn, the lines the prompt is made of: active-task lines, every live note's
  line ranked by effective priority, every showable object in salience order,
  and the token counts of the undifferentiated buffer of the same state and of
  the buffer that never forgets.
* ``LineCounter``: counts each distinct line once (cl100k_base by default).
  A rendered prompt's tokens are the sum of its lines' tokens, each counted
  with its newline, minus a correction for the last line: tiktoken's
  pre-tokenizer never joins a newline with the "- " or header that starts the
  next line, so the sum is exact (the tests compare it with counting the whole
  text, turn by turn).
* ``ColumnTables``: per-turn token tables for every top-notes limit and every
  max-objects limit, so a slider move is three array lookups, not 600 renders.
* ``render_prompt``: the three-column prompt at one turn for any limits (the
  same text ``WorkingMemory.render()`` writes at the defaults).
* ``token_comparison``: tokens per turn of the columns vs the flat state vs
  the never-forgetting log, the measured reduction, and which turns drop an
  object linked to an active task.

Explorer: ``ColumnsExplorer`` (turn, top notes, max objects): tokens per turn
as lines, the chosen turn marked, and the rendered prompt beside the plot.
Taught in ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.clock import StepClock
from memorykit.lessons._app import LessonExplorer, _go, int_slider
from memorykit.lessons._figure import legend_below
from memorykit.lessons.salience_app import default_workflow
from memorykit.scenarios.workflow import HOUR, WorkflowScenario, _work_on
from memorykit.tokens import Tokenizer
from memorykit.workspace import (
    SalienceInputs,
    SalienceWeights,
    Task,
    WorkingMemory,
    salience_inputs,
    salience_matrix,
)
from memorykit.workspace.objects import OBJECT_KINDS
from memorykit.workspace.render import _KIND_TITLES, note_line, object_line, task_line

SEED_REDUCTION = 0.40
"""Seed 002's claim: 2,500 vs 4,200 tokens per turn, '40% reduction'."""
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
    """``WorkingMemory.render()`` at the replay's settings, when asked for (tests)."""


@dataclass(frozen=True)
class ColumnReplay:
    """A replayed scenario, turn by turn, and the counter its tokens were counted with."""

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


def replay_columns(
    scenario: WorkflowScenario,
    *,
    counter: LineCounter | None = None,
    weights: SalienceWeights = SalienceWeights(),
    keep_renders: bool = False,
) -> ColumnReplay:
    """Replay ``scenario`` as ``run_workflow`` does (same events, same working memory moves) and
    keep each turn's lines. Salience ranks all showable objects (no ``max_objects`` cut), so any
    limit can be applied afterwards."""
    counter = counter or LineCounter()
    graph = scenario.graph()
    clock = StepClock(0.0)
    wm = WorkingMemory(graph, clock=clock, salience=weights)
    objects = graph.objects()
    n_obj = len(objects)
    rank_all = replace(weights, max_objects=n_obj)
    plans: dict[str, dict[str, Any]] = {}
    by_matter: dict[str, list[str]] = {}
    turns: list[TurnLines] = []
    mentions, task_ents, note_ents, times = [], [], [], []
    for ev in scenario.events:
        clock.set(max(clock.now(), float(ev["at"])))
        if ev["type"] == "task":
            task = Task(ev["id"], ev["description"], ev["priority"], dependencies=tuple(ev["dependencies"]),
                        created_at=float(ev["at"]), metadata={"matter": ev["matter"]})
            plans[task.id] = {"steps": ev["steps"], "block": ev["block"], "next": 0, "blocked_left": 0}
            by_matter.setdefault(ev["matter"], []).append(task.id)
            wm.add_task(task)
        elif ev["type"] == "note":
            wm.add_note(ev["content"], ev["priority"], urgency=ev["urgency"], source=ev["source"],
                        ttl=ev["ttl_hours"] * HOUR, note_id=ev["id"])
        else:
            report = wm.observe(ev["text"])
            for nid in ev["resolve_notes"]:
                if nid in wm.notes:
                    wm.resolve_note(nid)
            _work_on(wm, ev["matter"], by_matter, plans)
            now = clock.now()
            t_ents = wm.task_entities()
            n_ents = wm.notes.all_entities()
            one = salience_inputs(graph, [()], [t_ents], [n_ents], [now],
                                  initial_last_mention=wm.last_mention, first_turn=wm.turn)
            m = salience_matrix(one, rank_all)
            shown = np.flatnonzero(m.selected[:, 0])
            shown = shown[np.argsort(m.rank[shown, 0], kind="stable")]
            linked = np.flatnonzero(one.task_hops[:, 0] <= weights.link_hops)
            flat = wm.render_flat().split("\n")
            hist = wm.render_flat(include_history=True).split("\n")
            turns.append(TurnLines(
                report.turn, now,
                tuple(task_line(t, now) for t in wm.tasks),
                tuple(note_line(n, e, now) for n, e in wm.notes.ranked(now)),
                tuple(int(i) for i in shown), tuple(int(i) for i in linked),
                counter.text_tokens(flat), counter.text_tokens(hist),
                wm.render() if keep_renders else None,
            ))
            mentions.append(report.entities)
            task_ents.append(t_ents)
            note_ents.append(n_ents)
            times.append(now)
    inputs = salience_inputs(graph, mentions, task_ents, note_ents, times)
    return ColumnReplay(
        tuple(turns), tuple(o.id for o in objects), tuple(o.kind for o in objects),
        tuple(object_line(o) for o in objects), wm.tasks.settings.max_slots, counter, inputs, weights,
    )


@lru_cache(maxsize=1)
def default_replay() -> ColumnReplay:
    """The default workflow (``salience_app.default_workflow``) replayed with the seed's settings."""
    return replay_columns(default_workflow())


# --------------------------------------------------------------- rendering
def _notes_header(shown: int, total: int) -> str:
    return f"NOTES (top {shown} of {total} by priority)"


def prompt_lines(replay: ColumnReplay, turn: int, top_notes: int = 8, max_objects: int = 20) -> list[str]:
    """The lines of the three-column prompt at ``turn`` (1-based) under the given limits."""
    tl = replay.turns[_turn_index(replay, turn)]
    require_int("top_notes", top_notes, minimum=0)
    require_int("max_objects", max_objects, minimum=1)
    lines = [f"ACTIVE TASKS ({len(tl.tasks)}/{replay.max_slots} slots)"]
    lines += [f"- {x}" for x in tl.tasks] or ["- (none)"]
    shown = tl.notes[:top_notes]
    lines.append(_notes_header(len(shown), len(tl.notes)))
    lines += [f"- {x}" for x in shown] or ["- (none)"]
    lines.append("OBJECTS")
    chosen = tl.objects[:max_objects]
    for kind in OBJECT_KINDS:
        group = [i for i in chosen if replay.object_kinds[i] == kind]
        if group:
            lines.append(f"{_KIND_TITLES[kind]}:")
            lines += [f"- {replay.object_lines[i]}" for i in group]
    return lines


def render_prompt(replay: ColumnReplay, turn: int, top_notes: int = 8, max_objects: int = 20) -> str:
    """The three-column prompt text at ``turn``; equals ``WorkingMemory.render()`` at 8 / 20."""
    return "\n".join(prompt_lines(replay, turn, top_notes, max_objects))


def _turn_index(replay: ColumnReplay, turn: int) -> int:
    require_int("turn", turn, minimum=1)
    if turn > replay.n_turns:
        raise ValueError(f"turn must be in 1..{replay.n_turns}, got {turn}")
    return turn - 1


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
    header_nl = [c.with_newline(f"{_KIND_TITLES[k]}:") for k in OBJECT_KINDS]
    objects_header = "OBJECTS"
    for t, tl in enumerate(replay.turns):
        task_lines = [f"- {x}" for x in tl.tasks] or ["- (none)"]
        fixed[t] = c.with_newline(f"ACTIVE TASKS ({len(tl.tasks)}/{replay.max_slots} slots)") + sum(
            c.with_newline(x) for x in task_lines) + c.with_newline(objects_header)
        n_live = len(tl.notes)
        note_cum = np.concatenate([[0], np.cumsum([c.with_newline(f"- {x}") for x in tl.notes])])
        for k in range(k_max + 1):
            shown = min(k, n_live)
            body = note_cum[shown] if shown else c.with_newline("- (none)")
            notes[t, k] = c.with_newline(_notes_header(shown, n_live)) + body
        # Objects: add them in salience order; a kind's header counts once; the last rendered
        # line (last object of the last kind present) carries no newline.
        total = 0
        present = [False] * len(OBJECT_KINDS)
        last_of_kind = [-1] * len(OBJECT_KINDS)
        objects[t, 0] = c.alone(objects_header) - c.with_newline(objects_header)
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


@lru_cache(maxsize=1)
def default_tables() -> ColumnTables:
    return build_tables(default_replay())


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


# ---------------------------------------------------------------- explorer
class ColumnsExplorer(LessonExplorer):
    """Tokens per turn: three columns vs the flat state vs the never-forgetting log."""

    title = "Prompt tokens per turn"

    def __init__(self, replay: ColumnReplay | None = None, tables: ColumnTables | None = None, *,
                 turn: int = 510, top_notes: int = 8, max_objects: int = 20) -> None:
        self.replay = replay or default_replay()
        self.tables = tables or (default_tables() if replay is None else build_tables(self.replay))
        self.prompt = _widgets_html()
        self._drawn_limits: tuple[int, int] | None = None
        super().__init__(turn=turn, top_notes=top_notes, max_objects=max_objects)

    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "turn": int_slider("turn", params["turn"], 1, self.replay.n_turns, 1),
            "top_notes": int_slider("top notes", params["top_notes"], 0, self.tables.max_notes, 1),
            "max_objects": int_slider("max objects", params["max_objects"], 1, self.tables.max_objects, 1),
        }

    def _make_figure(self) -> Any:
        go = _go()
        tb = self.tables
        x = np.arange(1, self.replay.n_turns + 1)
        fig = go.FigureWidget()
        fig.add_scatter(x=x, y=tb.history, name="flat log that never forgets", mode="lines",
                        line=dict(color="#b0b0b0", width=1))
        fig.add_scatter(x=x, y=tb.flat, name="flat buffer of the same state", mode="lines",
                        line=dict(color="#ef553b", width=1.5))
        fig.add_scatter(x=x, y=tb.flat, name="three columns", mode="lines", line=dict(color="#636efa", width=1.5))
        fig.add_scatter(x=[0, 0], y=[0, float(tb.history.max())], mode="lines", name="chosen turn",
                        line=dict(color="black", dash="dot"), showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=[0, 0, 0], y=[0, 0, 0], mode="markers", name="at the chosen turn",
                        marker=dict(size=9, color=["#b0b0b0", "#ef553b", "#636efa"]), showlegend=False)
        fig.update_layout(height=430, margin=dict(l=60, r=20, t=60, b=50), title=self.title,
                          xaxis_title="turn (20 per simulated day)", yaxis_title="tokens (cl100k_base)",
                          legend=legend_below())
        return fig

    def _compute(self, turn: int, top_notes: int, max_objects: int) -> dict[str, Any]:
        cmp = token_comparison(self.tables, top_notes, max_objects)
        t = _turn_index(self.replay, turn)
        return {"turn": turn, "comparison": cmp, "t": t,
                "prompt": render_prompt(self.replay, turn, top_notes, max_objects)}

    def _draw(self, result: dict[str, Any]) -> None:
        fig = self.fig
        cmp: TokenComparison = result["comparison"]
        t = result["t"]
        limits = (cmp.top_notes, cmp.max_objects)
        if limits != self._drawn_limits:
            fig.data[2].y = cmp.columns
            self._drawn_limits = limits
        fig.data[3].x = [result["turn"], result["turn"]]
        fig.data[4].x = [result["turn"]] * 3
        fig.data[4].y = [int(cmp.history[t]), int(cmp.flat[t]), int(cmp.columns[t])]
        self.prompt.value = ("<pre style='font-size:11px;line-height:1.25;max-height:420px;overflow:auto;white-space:pre-wrap;word-break:normal;overflow-wrap:break-word'>"
                             + html.escape(result["prompt"]) + "</pre>")

    def extra_widgets(self) -> list[Any]:
        return [self.prompt]

    def summary(self) -> dict[str, Any]:
        r = self.result
        cmp: TokenComparison = r["comparison"]
        t = r["t"]
        tl = self.replay.turns[t]
        return {
            "turn": r["turn"],
            "active_tasks": len(tl.tasks),
            "live_notes": len(tl.notes),
            "showable_objects": len(tl.objects),
            "tokens_at_turn_columns": int(cmp.columns[t]),
            "tokens_at_turn_flat_same_state": int(cmp.flat[t]),
            "tokens_at_turn_never_forgetting": int(cmp.history[t]),
            **cmp.summary(),
        }


def _widgets_html() -> Any:
    import ipywidgets as w

    return w.HTML()
