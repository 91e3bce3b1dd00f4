"""A professional workflow for the three-column memory, with labelled surfacings.

D2's setting, simulated: an accounts-payable lead (Maya Chen) works
through invoices, vendors, variance reports, accruals and budget follow-ups
over simulated days, with month-end close, stakeholders with preferences
(the controller approves anything over $10K, the CFO wants one-page
summaries) and beliefs of varying strength (Acme Supplies invoices use
GL 5100, strength 0.88).

The generator (``generate_workflow_scenario(seed)`` in ``data/workflow/generate.py``, beside
the file it writes; this module holds the scenario, its loader and the replays) writes, for
each day: tasks arriving with
priorities, steps and occasional blockers; notes of every urgency (urgent 2-4
h, normal 24-48 h, low 7 days, sampled inside the seed's ranges); and
conversation turns. Every task, note and turn belongs to a latent *matter*
("invoice INV-1042 from Acme Supplies", "the Cheyenne variance report"), and
every note has a latent ``still_wanted`` flag (the user asked for it and
still cares, or it has gone stale). Those latent labels define ground truth:

    surfacing note n at turn t is relevant  iff  n is still wanted, and
        the turn is about n's matter, or less than 25% of n's TTL is left
        (a reminder of something wanted and nearly due is welcome anywhere).

For notes the agent makes itself (tasks it noted, deferred or demoted) the
same rule applies with ``still_wanted`` true. The labels are written by the
generator from the latent matters, never from the extractor's output, so the
memory can be wrong in both directions: surfacing a note about the same vendor
but a different matter, or an out-of-date note whose effective priority is
high (false positives); missing a turn that says "the Wyoming site" instead
of "Cheyenne" (false negatives). The rates of those situations are set by the
generator's parameters below; the measured precision is a property of this
simulation, not a replication of the seed's 41/47 field figure.

``play(scenario, memory, on_turn)`` is the one replay: it drives a
``WorkingMemory`` through the events (tasks arrive, notes are dictated, each
turn is observed, resolves the notes the user dealt with and advances the work
on its matter) and hands every turn to ``on_turn``, where a measurement records
what it needs. ``run_workflow`` is such a measurement: surfacing precision and
recall against the labels, and the prompt tokens of the three columns against an
undifferentiated buffer of the same state; ``surfacing_anatomy`` reads why its
surfacings were right or wrong. ``default_workflow()`` is the committed 30-day
scenario, loaded once.
Used by ``notebooks/05_task_slots.ipynb`` to ``notebooks/08_three_columns.ipynb``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from memorykit.classroom.memo import memo
from memorykit.clock import StepClock
from memorykit.tokens import TokenCounter, Tokenizer
from memorykit.classroom.replays.escalation import band_facts
from memorykit.workspace.events import NoteExpiry
from memorykit.workspace.extract import EntityExtractor
from memorykit.workspace.graph import KnowledgeGraph
from memorykit.workspace.memory import SalienceHistory, TurnReport, WorkingMemory
from memorykit.workspace.notes import Note, NoteSettings
from memorykit.workspace.objects import SalienceInputs, SalienceWeights, WorkspaceObject
from memorykit.workspace.tasks import SlotSettings, Task

SCENARIO_VERSION = 1
DAY = 86400.0
HOUR = 3600.0
IMMINENT_FRACTION = 0.25
"""Ground truth: a wanted note with less than this share of its TTL left is worth a reminder anywhere."""

# --------------------------------------------------------------- the scenario
@dataclass
class WorkflowScenario:
    """Objects, edges and a time-ordered list of events (tasks, notes, turns)."""

    name: str
    seed: int
    days: int
    objects: list[dict[str, Any]]
    edges: list[tuple[str, str, str]]
    events: list[dict[str, Any]]

    def graph(self) -> KnowledgeGraph:
        g = KnowledgeGraph()
        for o in self.objects:
            o = dict(o)
            for key in ("aliases", "relationship_beliefs"):
                o[key] = tuple(o.get(key, ()))
            g.add(WorkspaceObject(**o))
        for a, b, rel in self.edges:
            g.link(a, b, rel)
        return g

    def turns(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "turn"]

    def tasks(self) -> list[dict[str, Any]]:
        """The task arrivals, in time order."""
        return [e for e in self.events if e["type"] == "task"]

    def without_user_notes(self) -> WorkflowScenario:
        """The same scenario without its user notes: all the task slots need. A user note never
        changes which task holds a slot (only the notes holding tasks are promoted or resumed),
        and a replay without them does less work per turn."""
        return replace(self, name=f"{self.name} without user notes",
                       events=[e for e in self.events if e["type"] != "note"])

    def memory(
        self,
        *,
        extractor: EntityExtractor | None = None,
        slots: SlotSettings = SlotSettings(),
        notes: NoteSettings = NoteSettings(),
        salience: SalienceWeights = SalienceWeights(),
    ) -> WorkingMemory:
        """A fresh ``WorkingMemory`` on this scenario's graph and a clock at 0, ready for ``play``."""
        return WorkingMemory(self.graph(), clock=StepClock(0.0), extractor=extractor, slots=slots,
                             notes=notes, salience=salience)

    def to_jsonl(self) -> str:
        lines = [{"type": "header", "name": self.name, "seed": self.seed, "days": self.days,
                  "version": SCENARIO_VERSION}]
        lines += [{"type": "object", **o} for o in self.objects]
        lines += [{"type": "edge", "a": a, "b": b, "relation": r} for a, b, r in self.edges]
        lines += self.events
        return "".join(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n" for line in lines)

    @classmethod
    def from_jsonl(cls, text: str) -> WorkflowScenario:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        header = rows[0]
        if header.get("type") != "header" or header.get("version") != SCENARIO_VERSION:
            raise ValueError(f"not a workflow scenario of version {SCENARIO_VERSION}: {header!r}")
        objects = [{k: v for k, v in r.items() if k != "type"} for r in rows if r["type"] == "object"]
        edges = [(r["a"], r["b"], r["relation"]) for r in rows if r["type"] == "edge"]
        events = [r for r in rows if r["type"] in ("task", "note", "turn")]
        return cls(header["name"], header["seed"], header["days"], objects, edges, events)


def load_workflow(path: str | Path) -> WorkflowScenario:
    return WorkflowScenario.from_jsonl(Path(path).read_text(encoding="utf-8"))


# ------------------------------------------------------------------ replaying
WORKFLOW_PATH = Path(__file__).resolve().parents[3] / "data" / "workflow" / "workflow_30d.jsonl"
"""The committed 30-day scenario (``data/workflow/generate.py`` writes it from seed 2)."""


@memo(maxsize=1)
def default_workflow() -> WorkflowScenario:
    """The committed 30-day scenario, loaded once per process."""
    if not WORKFLOW_PATH.is_file():
        raise FileNotFoundError(f"{WORKFLOW_PATH} is missing: it is committed with the "
                                "repository; python data/workflow/generate.py writes it again")
    return load_workflow(WORKFLOW_PATH)


@dataclass(slots=True)
class PlayedTurn:
    """One conversation turn of a scenario, as ``play`` hands it to ``on_turn``.

    By then the memory has observed the turn's text, the user has resolved the notes the
    scenario says, and the turn's matter has had its unit of work.
    """

    index: int
    """0-based position among the scenario's turns."""
    event: Mapping[str, Any]
    """The scenario's turn: ``text``, ``matter`` and the ground-truth labels."""
    report: TurnReport
    """What ``WorkingMemory.observe`` found and did (entities, escalations, expiries, surfacings)."""
    observed_notes: tuple[Note, ...]
    """The notes live when the text was observed, before the user resolved any: what the
    turn's surfacings were chosen from, and what ground truth judges at this turn."""


def play(
    scenario: WorkflowScenario,
    memory: WorkingMemory,
    on_turn: Callable[[PlayedTurn, WorkingMemory], None] | None = None,
) -> WorkingMemory:
    """Drive ``memory`` through ``scenario``'s events, calling ``on_turn(turn, memory)`` after each turn.

    The memory's clock follows the events' times. A task event admits a task; a note event
    queues a user note; a turn event is observed, then the notes the user deals with in it
    are resolved and the turn's matter advances its oldest unfinished task one step (see
    ``_Workload``). The lessons' and ``run_workflow``'s measurements are ``on_turn``
    callbacks: the replay itself is written once, here. Returns ``memory``.
    """
    if not isinstance(scenario, WorkflowScenario):
        raise TypeError(f"scenario must be a WorkflowScenario, got {scenario!r}")
    if not isinstance(memory, WorkingMemory):
        raise TypeError(f"memory must be a WorkingMemory, got {memory!r}")
    clock = memory.clock
    if not callable(getattr(clock, "set", None)):
        raise TypeError(f"memory.clock must be settable (a StepClock) to follow the scenario, got {clock!r}")
    if on_turn is not None and not callable(on_turn):
        raise TypeError(f"on_turn must be callable as on_turn(turn, memory), got {on_turn!r}")
    work = _Workload(memory)
    index = 0
    for ev in scenario.events:
        at = float(ev["at"])
        if at > clock.now():
            clock.set(at)
        kind = ev["type"]
        if kind == "task":
            work.arrive(ev)
        elif kind == "note":
            memory.add_note(ev["content"], ev["priority"], urgency=ev["urgency"], source=ev["source"],
                            ttl=ev["ttl_hours"] * HOUR, note_id=ev["id"])
        else:
            report = memory.observe(ev["text"])
            observed = tuple(memory.notes)
            for nid in ev["resolve_notes"]:
                if nid in memory.notes:
                    memory.resolve_note(nid)
            work.advance(ev["matter"])
            if on_turn is not None:
                on_turn(PlayedTurn(index, ev, report, observed), memory)
            index += 1
    return memory


class _Workload:
    """The scenario's tasks as the user works through them: their plans, and a step per turn."""

    def __init__(self, memory: WorkingMemory) -> None:
        self.memory = memory
        self.plans: dict[str, dict[str, Any]] = {}  # task id -> steps, blocker, progress counters
        self.by_matter: dict[str, list[str]] = {}  # matter -> its task ids, oldest first

    def arrive(self, ev: Mapping[str, Any]) -> None:
        task = Task(ev["id"], ev["description"], ev["priority"], dependencies=tuple(ev["dependencies"]),
                    created_at=float(ev["at"]), metadata={"matter": ev["matter"]})
        self.plans[task.id] = {"steps": ev["steps"], "block": ev["block"], "next": 0, "blocked_left": 0}
        self.by_matter.setdefault(ev["matter"], []).append(task.id)
        self.memory.add_task(task)

    def advance(self, matter: str | None) -> None:
        """A turn about a matter advances its oldest unfinished task one step, if that task holds a slot."""
        wm = self.memory
        if not matter or matter not in self.by_matter:
            return
        task_id = next((t for t in self.by_matter[matter] if not wm.tasks.is_completed(t)), None)
        if task_id is None:
            return
        if task_id not in wm.tasks:
            # The user turned to a task that waits in a note: try to bring it back.
            waiting = [n.id for n in wm.notes if n.task is not None and n.task.id == task_id]
            if not waiting or not wm.resume_task(waiting[0]).activated:
                return
        task = wm.tasks.get(task_id)
        plan = self.plans[task_id]
        steps = plan["steps"]
        if task.status == "blocked":
            plan["blocked_left"] -= 1
            if plan["blocked_left"] <= 0:
                wm.unblock_task(task_id, "blocker cleared")
            return
        if task.status == "planning":
            wm.start_task(task_id, steps[0])
            plan["next"] = 1
            return
        block = plan["block"]
        if block and plan["next"] == block["at_step"] and not plan.get("was_blocked"):
            plan["was_blocked"] = True
            plan["blocked_left"] = block["turns"]
            wm.block_task(task_id, block["reason"])
            return
        if plan["next"] < len(steps):
            wm.set_step(task_id, steps[plan["next"]], progress=plan["next"] / len(steps))
            plan["next"] += 1
            return
        wm.complete_task(task_id)


@dataclass
class WorkflowRun:
    """What replaying a scenario through a ``WorkingMemory`` produced, turn by turn."""

    memory: WorkingMemory
    times: np.ndarray
    surfacings: list[dict[str, Any]]
    """One row per surfacing: turn, note, trigger, and the ground-truth label."""
    relevant_pairs: set[tuple[int, str]]
    """(turn, note) pairs labelled relevant while the note was live in the memory."""
    tokens_columns: np.ndarray
    tokens_flat: np.ndarray
    tokens_flat_history: np.ndarray
    active_counts: np.ndarray
    note_counts: np.ndarray
    inputs: SalienceInputs
    note_table: dict[str, np.ndarray]
    """Every note ever held: id, priority, created, ttl (for ``effective_priority`` over all turns)."""
    completed_tasks: int
    arrived_tasks: int

    @property
    def precision(self) -> float:
        return sum(s["relevant"] for s in self.surfacings) / len(self.surfacings) if self.surfacings else float("nan")

    @property
    def recall(self) -> float:
        """Share of notes with any relevant turn that were surfaced at a relevant turn at least once."""
        wanted = {n for _, n in self.relevant_pairs}
        hit = {s["note_id"] for s in self.surfacings if s["relevant"]}
        return len(hit & wanted) / len(wanted) if wanted else float("nan")

    @property
    def token_reduction(self) -> float:
        """1 - mean(three columns) / mean(flat buffer of the same state)."""
        return 1.0 - self.tokens_columns.mean() / self.tokens_flat.mean()

    @property
    def token_reduction_vs_history(self) -> float:
        return 1.0 - self.tokens_columns.mean() / self.tokens_flat_history.mean()

    def summary(self) -> dict[str, Any]:
        s = self.surfacings
        return {
            "turns": len(self.times),
            "surfacings": len(s),
            "relevant_surfacings": sum(x["relevant"] for x in s),
            "precision": self.precision,
            "recall": self.recall,
            "by_trigger": {
                trig: (sum(x["relevant"] for x in s if x["trigger"] == trig), sum(x["trigger"] == trig for x in s))
                for trig in sorted({x["trigger"] for x in s})
            },
            "tokens_columns_mean": float(self.tokens_columns.mean()),
            "tokens_flat_mean": float(self.tokens_flat.mean()),
            "tokens_flat_history_mean": float(self.tokens_flat_history.mean()),
            "token_reduction": self.token_reduction,
            "token_reduction_vs_history": self.token_reduction_vs_history,
            "mean_active_tasks": float(self.active_counts.mean()),
            "mean_live_notes": float(self.note_counts.mean()),
            "objects_in_graph": len(self.memory.graph),
            "tasks_arrived": self.arrived_tasks,
            "tasks_completed": self.completed_tasks,
        }


def _relevant(note: Note, matter: str | None, at: float, labels: Mapping[str, Any]) -> bool:
    """The ground-truth rule of the module docstring, for any note the memory holds."""
    if not labels["still_wanted"]:
        return False
    if matter is not None and labels["matter"] == matter:
        return True
    return (note.created_at + note.ttl - at) / note.ttl < IMMINENT_FRACTION


def run_workflow(
    scenario: WorkflowScenario,
    *,
    slots: SlotSettings = SlotSettings(),
    notes: NoteSettings = NoteSettings(),
    salience: SalienceWeights = SalienceWeights(),
    extractor: EntityExtractor | None = None,
    counter: TokenCounter | None = None,
    count_tokens: bool = True,
) -> WorkflowRun:
    """Replay ``scenario``; measure surfacing against its labels and tokens against the flat buffer."""
    memory = scenario.memory(extractor=extractor, slots=slots, notes=notes, salience=salience)
    if count_tokens:
        counter = counter or Tokenizer("cl100k_base")
    user_labels = {e["id"]: {"matter": e["matter"], "still_wanted": e["still_wanted"]}
                   for e in scenario.events if e["type"] == "note"}
    history = SalienceHistory(memory.graph)
    surf: list[dict[str, Any]] = []
    pairs: set[tuple[int, str]] = set()
    tok_c, tok_f, tok_h, n_active, n_notes = [], [], [], [], []
    note_rows: dict[str, tuple[float, float, float]] = {}

    def labels(note: Note) -> Mapping[str, Any]:
        # The agent's own task notes are always wanted; a user note carries the scenario's label.
        if note.task is not None:
            return {"matter": note.task.metadata["matter"], "still_wanted": True}
        return user_labels[note.id]

    def remember(held) -> None:
        for n in held:
            if n.id not in note_rows:
                note_rows[n.id] = (n.priority, n.created_at, n.ttl)

    def measure(turn: PlayedTurn, wm: WorkingMemory) -> None:
        report, matter = turn.report, turn.event["matter"]
        live = {n.id: n for n in turn.observed_notes}
        for s in report.surfacings:
            surf.append({"turn": report.turn, "note_id": s.note_id, "trigger": s.trigger,
                         "relevant": _relevant(live[s.note_id], matter, report.at, labels(live[s.note_id])),
                         "shared": list(s.shared_entities)})
        for n in turn.observed_notes:
            if _relevant(n, matter, report.at, labels(n)):
                pairs.add((report.turn, n.id))
        remember(turn.observed_notes)
        remember(wm.notes)
        history.record(wm, report)
        n_active.append(len(wm.tasks))
        n_notes.append(len(wm.notes))
        if count_tokens:
            tok_c.append(counter.count(wm.render()))
            tok_f.append(counter.count(wm.render_flat()))
            tok_h.append(counter.count(wm.render_flat(include_history=True)))

    play(scenario, memory, measure)
    remember(memory.notes)
    ids = sorted(note_rows, key=lambda k: (note_rows[k][1], k))
    table = {
        "id": np.array(ids),
        "priority": np.array([note_rows[i][0] for i in ids]),
        "created": np.array([note_rows[i][1] for i in ids]),
        "ttl": np.array([note_rows[i][2] for i in ids]),
    }
    return WorkflowRun(
        memory, np.array(history.times), surf, pairs, np.array(tok_c, dtype=float),
        np.array(tok_f, dtype=float), np.array(tok_h, dtype=float), np.array(n_active), np.array(n_notes),
        history.inputs(), table, len(memory.tasks.completed), len(scenario.tasks()),
    )


def surfacing_anatomy(run: WorkflowRun, scenario: WorkflowScenario) -> dict[str, Any]:
    """Precision, recall and the anatomy of ``run``'s surfacings against ``scenario``'s labels (rounded).

    Why the false positives were false (a note no longer wanted, on a turn about its own
    matter or another's; a wanted note on another matter's turn), how many surfacings came
    in the very turn the note was dictated, which notes' escalation can pass the threshold
    and whether any turn falls inside that window (surfacing is checked only at turns), and
    what expiry did.
    """
    notes = {e["id"]: e for e in scenario.events if e["type"] == "note"}
    turn_matter = {k + 1: t["matter"] for k, t in enumerate(scenario.turns())}
    table = run.note_table
    # note id -> the turn number (1-based) of the first turn at or after its creation
    born = {nid: int(i) + 1 for nid, i in zip(table["id"], np.searchsorted(run.times, table["created"]))}
    s = run.surfacings
    fp = [x for x in s if not x["relevant"]]
    # Task notes (made by the memory) are always wanted; user notes carry the latent label.
    stale = [x for x in fp if x["note_id"] in notes and not notes[x["note_id"]]["still_wanted"]]
    stale_same = sum(1 for x in stale if turn_matter[x["turn"]] == notes[x["note_id"]]["matter"])
    same_turn = [x for x in s if born.get(x["note_id"]) == x["turn"]]
    later = [x for x in s if born.get(x["note_id"]) != x["turn"]]
    expiries = Counter(e.outcome for e in run.memory.trace if isinstance(e, NoteExpiry))
    rel_later = sum(x["relevant"] for x in later)
    settings = run.memory.notes.settings
    windows = [band_facts(p, ttl / HOUR, settings) for p, ttl in zip(table["priority"], table["ttl"])]
    can = [(c, ttl, w) for c, ttl, w in zip(table["created"], table["ttl"], windows)
           if w.first_surfacing_at is not None]
    no_turn = sum(1 for c, ttl, w in can
                  if not np.any((run.times > c + w.first_surfacing_at * HOUR) & (run.times < c + ttl)))
    return {
        "min_shared_entities": settings.min_shared_entities,
        "surfacings": len(s),
        "relevant": sum(x["relevant"] for x in s),
        "precision": round(run.precision, 3),
        "recall": round(run.recall, 3),
        "by_trigger": {t: f"{sum(x['relevant'] for x in s if x['trigger'] == t)}/"
                          f"{sum(x['trigger'] == t for x in s)}" for t in sorted({x["trigger"] for x in s})},
        "false_positives": len(fp),
        "fp_stale_note_its_own_matter": stale_same,
        "fp_stale_note_other_matter": len(stale) - stale_same,
        "fp_wanted_note_other_matter": len(fp) - len(stale),
        "surfaced_in_the_turn_it_was_dictated": len(same_turn),
        "precision_excluding_that_turn": round(rel_later / len(later), 3) if later else None,
        "notes_held": int(table["id"].size),
        "notes_whose_escalation_passes_threshold": len(can),
        "of_which_no_turn_inside_that_window": no_turn,
        "expired_escalated_to_user": expiries.get("escalated_to_user", 0),
        "expired_archived": expiries.get("archived", 0),
    }
