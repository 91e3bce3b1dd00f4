"""A professional workflow for the three-column memory, with labelled surfacings.

D2's setting, simulated: an accounts-payable lead (Maya Chen) works
through invoices, vendors, variance reports, accruals and budget follow-ups
over simulated days, with month-end close, stakeholders with preferences
(the controller approves anything over $10K, the CFO wants one-page
summaries) and beliefs of varying strength (Acme Supplies invoices use
GL 5100, strength 0.88).

``generate_workflow_scenario(seed)`` writes, for each day: tasks arriving with
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
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from memorykit._validate import require_int
from memorykit.clock import StepClock
from memorykit.tokens import TokenCounter, Tokenizer
from memorykit.classroom.replays.escalation import band_facts
from memorykit.workspace.events import NoteExpiry
from memorykit.workspace.extract import EntityExtractor
from memorykit.workspace.graph import KnowledgeGraph
from memorykit.workspace.memory import SalienceHistory, TurnReport, WorkingMemory
from memorykit.workspace.notes import Note, NoteSettings
from memorykit.workspace.objects import SalienceInputs, SalienceWeights, WorkspaceObject
from memorykit.workspace.objects import belief, entity, goal, knowledge, pattern, person, temporal
from memorykit.workspace.tasks import SlotSettings, Task

SCENARIO_VERSION = 1
DAY = 86400.0
HOUR = 3600.0
IMMINENT_FRACTION = 0.25
"""Ground truth: a wanted note with less than this share of its TTL left is worth a reminder anywhere."""

# ---------------------------------------------------------------------- world
_VENDORS = {
    # id: (name, alias, contact, GL account, lowercase nickname the extractor misses)
    "acme": ("Acme Supplies", "Acme", "priya", "gl5100", "office supplies"),
    "globex": ("Globex", None, "marco", "gl7400", "consulting"),
    "initech": ("Initech", None, "lena", "gl7400", "software"),
    "umbrella": ("Umbrella Logistics", "Umbrella", "lena", "gl6200", "shipping"),
    "stark": ("Stark Industrial", "Stark", "dev", "gl5100", "parts"),
    "wayne": ("Wayne Freight", None, "lena", "gl6200", "trucking"),
}
_PROJECTS = {
    # id: (name, manager, what a user calls it without the name)
    "cheyenne": ("Cheyenne", "sofia", "the Wyoming site"),
    "laramie": ("Laramie", "sofia", "the university site"),
    "boulder": ("Boulder", "raj", "the Colorado office"),
}
_PEOPLE_NAMES = {
    "maya": "Maya Chen", "raj": "Raj Patel", "tom": "Tom Becker", "lena": "Lena Ortiz",
    "priya": "Priya Nair", "marco": "Marco Rossi", "sofia": "Sofia Lindqvist",
    "ken": "Ken Watanabe", "dev": "Dev Kapoor",
}


def build_workflow_graph(days: int = 30) -> KnowledgeGraph:
    """The fixed world of the scenario: 45 objects of all seven kinds, linked."""
    g = KnowledgeGraph()
    for obj in [
        person("maya", "Maya Chen", 0.95, ("the user", "prefers detailed explanations for financial decisions")),
        person("raj", "Raj Patel", 0.85, ("controller", "approves invoices over $10K")),
        person("tom", "Tom Becker", 0.9, ("CFO", "prefers one-page summaries")),
        person("lena", "Lena Ortiz", 0.6, ("AP clerk", "handles vendor master changes")),
        person("priya", "Priya Nair", 0.72, ("Acme Supplies contact", "requires special handling: a PO number on every invoice")),
        person("marco", "Marco Rossi", 0.5, ("Globex contact", "replies only by email")),
        person("sofia", "Sofia Lindqvist", 0.7, ("project manager", "wants early warning of overruns")),
        person("ken", "Ken Watanabe", 0.55, ("external auditor", "asks for supporting documents up front")),
        person("dev", "Dev Kapoor", 0.45, ("Stark Industrial contact",)),
    ]:
        g.add(obj)
    for vid, (name, alias, _, _, _) in _VENDORS.items():
        g.add(entity(vid, name, "vendor", aliases=(alias,) if alias else ()))
    for pid, (name, _, _) in _PROJECTS.items():
        g.add(entity(pid, name, "project"))
    g.add(entity("gl5100", "GL 5100", "office supplies and parts account"))
    g.add(entity("gl6200", "GL 6200", "freight account"))
    g.add(entity("gl7400", "GL 7400", "professional services account"))
    g.add(entity("q3", "Q3 budget", "quarterly budget"))
    g.add(entity("q4", "Q4 budget", "quarterly budget"))
    beliefs = [
        ("b_acme_gl", "Acme Supplies invoices use GL 5100", 0.88, ["acme", "gl5100"]),
        ("b_globex_arrears", "Globex bills quarterly in arrears", 0.7, ["globex"]),
        ("b_umbrella_late", "Umbrella Logistics invoices arrive late", 0.8, ["umbrella"]),
        ("b_cheyenne_freight", "Cheyenne runs over budget on freight", 0.82, ["cheyenne", "gl6200"]),
        ("b_stark_prices", "Stark Industrial prices rose 8% this year", 0.6, ["stark"]),
        ("b_initech_sow", "Initech invoices need a signed SOW", 0.75, ["initech"]),
        ("b_laramie_under", "Laramie is under budget", 0.5, ["laramie"]),
        ("b_wayne_reliable", "Wayne Freight delivers on schedule", 0.65, ["wayne"]),
    ]
    for bid, text, strength, about in beliefs:
        g.add(belief(bid, text, strength))
        for a in about:
            g.link(bid, a, "about")
    for obj, links in [
        (knowledge("k_approval", "Approval policy", "invoices over $10K need controller approval"), ["raj"]),
        (knowledge("k_match", "Three-way match", "PO invoices need the PO, the receipt and the invoice to agree"), ["lena"]),
        (knowledge("k_close", "Close calendar", "month-end close is due on business day 3"), []),
        (knowledge("k_accrual", "Accrual rule", "accrue services received but not yet invoiced"), ["gl7400"]),
        (knowledge("k_w9", "Vendor master rule", "new vendors need a W-9 before the first payment"), ["lena"]),
        (goal("g_close", "Close the books by business day 3"), ["maya", "k_close"]),
        (goal("g_fees", "Cut late-payment fees"), ["maya"]),
        (goal("g_cheyenne", "Keep Cheyenne under budget"), ["cheyenne", "sofia"]),
        (temporal("t_monthend", "Month-end close", 1.5, (days - 5) * DAY, days * DAY), ["k_close"]),
        (temporal("t_planning", "Q3 planning week", 1.2, 7 * DAY, 12 * DAY), ["q3"]),
        (temporal("t_audit", "Audit fieldwork", 1.3, 14 * DAY, 19 * DAY), ["ken"]),
        (pattern("p_umbrella", "Umbrella Logistics invoices spike on Fridays"), ["umbrella"]),
        (pattern("p_variance", "A variance review follows every close"), ["k_close"]),
        (pattern("p_globex_credit", "Globex sends credit notes after disputes"), ["globex"]),
    ]:
        g.add(obj)
        for other in links:
            g.link(obj.id, other, "related")
    for vid, (_, _, contact, gl, _) in _VENDORS.items():
        g.link(contact, vid, "contact_of")
        g.link(vid, gl, "books_to")
    for pid, (_, manager, _) in _PROJECTS.items():
        g.link(manager, pid, "manages")
    for a, b in [("maya", "raj"), ("maya", "tom"), ("maya", "lena"), ("tom", "q3"), ("tom", "q4"),
                 ("raj", "k_approval"), ("cheyenne", "gl6200")]:
        if b not in g.neighbours(a):
            g.link(a, b, "works_with")
    return g


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


def _object_record(o: WorkspaceObject) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": o.id, "kind": o.kind, "name": o.name}
    if o.description:
        rec["description"] = o.description
    if o.aliases:
        rec["aliases"] = list(o.aliases)
    if o.relationship_value:
        rec["relationship_value"] = o.relationship_value
    if o.relationship_beliefs:
        rec["relationship_beliefs"] = list(o.relationship_beliefs)
    if o.strength:
        rec["strength"] = o.strength
    if o.updated_at is not None:
        rec["updated_at"] = o.updated_at
    if o.kind == "temporal":
        rec.update(urgency_multiplier=o.urgency_multiplier, active_from=o.active_from, active_until=o.active_until)
    return rec


@dataclass
class _Matter:
    id: str
    kind: str
    task: str
    note: str
    turns: list[str]
    missed: list[str]
    """Ways of talking about the matter that name none of its entities."""
    steps: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)


def _matter(rng: random.Random, kind: str, serial: int) -> _Matter:
    mid = f"M{serial:03d}"
    vid = rng.choice(sorted(_VENDORS))
    vname, _, contact, gl, nickname = _VENDORS[vid]
    cname = _PEOPLE_NAMES[contact]
    pid = rng.choice(sorted(_PROJECTS))
    pname, manager, site = _PROJECTS[pid]
    mname = _PEOPLE_NAMES[manager]
    if kind == "invoice":
        inv = f"INV-{1000 + serial}"
        amount = rng.choice(["$2,400", "$8,150", "$12,900", "$640", "$23,000"])
        return _Matter(
            mid, kind, f"Process invoice {inv} from {vname} ({amount})",
            f"Check the {vname} credit note against {inv}",
            [f"{vname} sent {inv}; can you check it?", f"Where are we on {inv}?",
             f"{cname} emailed about {inv}", f"Is {inv} coded yet?"],
            [f"Any news on the {nickname} bill?", "What about that invoice from this morning?"],
            ["match PO and receipt", "assign GL code", "route for approval", "schedule payment"],
            ["awaiting GL code assignment", "missing PO number", f"waiting for {cname} to confirm the amount"],
            [f"vendor master lookup for {vname}"],
        )
    if kind == "variance":
        return _Matter(
            mid, kind, f"Prepare the {pname} variance report for {mname}",
            f"Review the {pname} variance report",
            [f"How is {pname} tracking against budget?", f"{mname} asked about {pname} costs",
             f"Pull the {pname} actuals"],
            [f"The numbers for {site} look off", "Is that variance thing done?"],
            ["pull actuals", "compare to budget", "explain variances over $5K", "send summary"],
            [f"waiting for {mname} to explain the overrun"], [f"{pname} actuals"],
        )
    if kind == "budget":
        q = rng.choice(["Q3", "Q4"])
        return _Matter(
            mid, kind, f"Update the {q} budget for Tom Becker",
            f"Follow up on the {q} budget with Tom Becker",
            [f"Did Tom Becker sign off the {q} budget?", f"Send me the {q} budget numbers"],
            ["What's the status of next quarter's plan?"],
            ["collect department inputs", "draft one-page summary", "review with CFO"],
            ["awaiting department inputs"], [],
        )
    if kind == "renewal":
        return _Matter(
            mid, kind, f"Negotiate the {vname} contract renewal",
            f"Review the {vname} contract renewal terms",
            [f"{vname} sent renewal terms", f"Should we renegotiate with {vname}?",
             f"{cname} wants an answer on the renewal"],
            ["Did we decide on that renewal?"],
            ["compare prices", "draft counter-offer", "get approval"], ["waiting for legal review"], [],
        )
    if kind == "onboarding":
        return _Matter(
            mid, kind, f"Set up {vname} in the vendor master with Lena Ortiz",
            f"Make sure {vname} has sent its W-9",
            [f"Has {vname} sent the W-9?", f"Lena Ortiz needs bank details for {vname}"],
            ["Is the new supplier set up?"],
            ["collect W-9", "enter bank details", "verify by call-back"], [f"waiting for the W-9 from {vname}"], [],
        )
    if kind == "accrual":
        return _Matter(
            mid, kind, f"Book the {pname} accrual to GL 7400",
            f"Estimate the {pname} services accrual",
            [f"What should we accrue for {pname}?", f"Is GL 7400 right for the {pname} accrual?"],
            [f"Accruals for {site}?"],
            ["estimate services received", "book journal entry", "attach support"],
            [f"waiting for {mname} to confirm hours"], [],
        )
    assert kind == "audit"
    return _Matter(
        mid, kind, f"Send Ken Watanabe the {vname} supporting documents",
        f"Gather the {vname} documents for the auditors",
        [f"Ken Watanabe asked for the {vname} files", f"Do we have {vname} contracts scanned?"],
        ["The auditors want more paperwork"],
        ["collect contracts", "collect invoices", "send package"], ["waiting for scans"], [],
    )


_TASK_KINDS = (("invoice", 0.55), ("accrual", 0.12), ("onboarding", 0.1), ("variance", 0.13), ("audit", 0.1))
_NOTE_KINDS = (("variance", 0.22), ("budget", 0.2), ("renewal", 0.22), ("onboarding", 0.1),
               ("audit", 0.1), ("invoice", 0.16))
_URGENCY_MIX = (("urgent", 0.3), ("normal", 0.5), ("low", 0.2))
_TTL_RANGE_HOURS = {"urgent": (2.0, 4.0), "normal": (24.0, 48.0), "low": (168.0, 168.0)}
_PRIORITY_RANGE = {"urgent": (0.55, 0.9), "normal": (0.35, 0.75), "low": (0.15, 0.45)}


def _pick(rng: random.Random, table) -> str:
    return rng.choices([k for k, _ in table], weights=[w for _, w in table])[0]


def generate_workflow_scenario(
    seed: int = 2,
    days: int = 30,
    turns_per_day: int = 20,
    tasks_per_day: tuple[int, int] = (1, 3),
    notes_per_day: tuple[int, int] = (2, 3),
    chit_chat: float = 0.1,
    note_talk: float = 0.15,
    missed_wording: float = 0.15,
    still_wanted: float = 0.8,
    name: str = "workflow",
) -> WorkflowScenario:
    """A seeded month of work; see the module docstring for what is labelled and how.

    ``chit_chat``: share of free turns about no matter (they still name
    people and vendors). ``note_talk``: share of free turns about the matter
    of a note that is still wanted (half of them resolve it). ``missed_wording``: chance a turn about a matter
    names none of its entities. ``still_wanted``: chance a note is still
    wanted (user notes; inferred low-urgency notes get half of it).
    """
    require_int("seed", seed)
    require_int("days", days, minimum=1)
    require_int("turns_per_day", turns_per_day, minimum=2)
    rng = random.Random(seed)
    graph = build_workflow_graph(days)
    matters: dict[str, _Matter] = {}
    events: list[dict[str, Any]] = []
    open_tasks: dict[str, int] = {}  # matter -> work turns left (generator's view)
    open_notes: dict[str, dict[str, Any]] = {}  # note id -> note event
    task_priority: dict[str, float] = {}
    serial = 0
    turn_no = 0
    note_no = 0
    task_no = 0
    people = sorted(_PEOPLE_NAMES.values())
    vendors = sorted(v[0] for v in _VENDORS.values())

    by_text: dict[str, _Matter] = {}

    def new_matter(kind: str) -> _Matter:
        # The same kind of work on the same thing (the Q3 budget with Tom
        # Becker, the Cheyenne variance report) is one matter, however often it
        # comes up: only invoices, numbered, are always new.
        nonlocal serial
        serial += 1
        m = _matter(rng, kind, serial)
        m = by_text.setdefault(m.task, m)
        matters[m.id] = m
        return m

    for day in range(days):
        slots = list(range(turns_per_day))
        n_tasks = rng.randint(*tasks_per_day)
        n_notes = rng.randint(*notes_per_day)
        arrivals = rng.sample(slots, min(turns_per_day, n_tasks + n_notes))
        task_slots = set(arrivals[:n_tasks])
        note_slots = set(arrivals[n_tasks:])
        for k in range(turns_per_day):
            at = round(day * DAY + 9 * HOUR + k * (8 * HOUR / turns_per_day) + rng.uniform(0, 600))
            turn_no += 1
            # The latent state this turn is judged against: notes alive now.
            for nid in [n for n, ev in open_notes.items() if ev["at"] + ev["ttl_hours"] * HOUR <= at]:
                del open_notes[nid]
            resolve: list[str] = []
            if k in task_slots:
                m = new_matter(_pick(rng, _TASK_KINDS))
                task_no += 1
                blocked = rng.random() < 0.35
                priority = round(rng.uniform(0.2, 1.0), 2)
                events.append({
                    "type": "task", "id": f"T{task_no:03d}", "at": at - 60, "matter": m.id,
                    "description": m.task, "priority": priority, "steps": m.steps,
                    "dependencies": m.dependencies,
                    "block": {"at_step": rng.randrange(1, len(m.steps)), "reason": rng.choice(m.blockers),
                              "turns": rng.randint(1, 3)} if blocked else None,
                })
                open_tasks[m.id] = len(m.steps) + 2 + (4 if blocked else 0)  # runner needs steps + 1 (+ 1 + blocked turns)
                task_priority[m.id] = priority
                text, matter = f"New for you: {m.task}.", m.id
            elif k in note_slots:
                m = new_matter(_pick(rng, _NOTE_KINDS))
                note_no += 1
                inferred = rng.random() < 0.25
                urgency = "low" if inferred else _pick(rng, _URGENCY_MIX)
                lo, hi = _TTL_RANGE_HOURS[urgency]
                note = {
                    "type": "note", "id": f"U{note_no:03d}", "at": at - 60, "matter": m.id,
                    "content": m.note, "urgency": urgency, "ttl_hours": round(rng.uniform(lo, hi), 2),
                    "priority": round(rng.uniform(*_PRIORITY_RANGE[urgency]), 2),
                    "source": "inferred" if inferred else "user",
                    "still_wanted": rng.random() < (still_wanted / 2 if inferred else still_wanted),
                }
                events.append(note)
                open_notes[note["id"]] = note
                if inferred:
                    text, matter = rng.choice(m.turns), m.id  # the agent infers it from the turn itself
                else:
                    when = {"urgent": "soon", "normal": "later", "low": "some time"}[urgency]
                    text, matter = f"Remind me to {m.note[0].lower() + m.note[1:]} {when}.", m.id
            else:
                wanted_notes = [n for n, ev in open_notes.items() if ev["still_wanted"]]
                roll = rng.random()
                if roll < chit_chat or not (open_tasks or wanted_notes):
                    text = rng.choice([
                        "Thanks, that's all for now.", "What's on my plate today?",
                        f"{rng.choice(people)} says hello.", f"Lunch with {rng.choice(people)} at noon.",
                        f"{rng.choice(vendors)} changed their logo.", f"Copy {rng.choice(people)} on the next email.",
                    ])
                    matter = None
                elif wanted_notes and (roll < chit_chat + note_talk or not open_tasks):
                    nid = rng.choice(sorted(wanted_notes))
                    m = matters[open_notes[nid]["matter"]]
                    text = rng.choice(m.missed if rng.random() < missed_wording else m.turns)
                    matter = m.id
                    if rng.random() < 0.5:  # the user deals with it now
                        resolve.append(nid)
                else:
                    # Urgent work gets talked about more: weight by priority squared.
                    candidates = sorted(open_tasks)
                    mid = rng.choices(candidates, weights=[task_priority[c] ** 2 for c in candidates])[0]
                    m = matters[mid]
                    text = rng.choice(m.missed if rng.random() < missed_wording else m.turns)
                    matter = mid
                    open_tasks[mid] -= 1
                    if open_tasks[mid] <= 0:
                        del open_tasks[mid]
            relevant = sorted(
                nid for nid, ev in open_notes.items()
                if ev["at"] <= at and ev["still_wanted"] and (
                    ev["matter"] == matter
                    or (ev["at"] + ev["ttl_hours"] * HOUR - at) / (ev["ttl_hours"] * HOUR) < IMMINENT_FRACTION
                )
            )
            events.append({"type": "turn", "turn": turn_no, "day": day, "at": at, "text": text,
                           "matter": matter, "relevant_notes": relevant, "resolve_notes": sorted(resolve)})
            for nid in resolve:
                del open_notes[nid]
    events.sort(key=lambda e: (e["at"], e["type"] != "task", e["type"] != "note"))
    return WorkflowScenario(
        name, seed, days, [_object_record(o) for o in graph.objects()], graph.edges(), events
    )


# ------------------------------------------------------------------ replaying
WORKFLOW_PATH = Path(__file__).resolve().parents[3] / "data" / "workflow" / "workflow_30d.jsonl"
"""The committed 30-day scenario (``data/workflow/generate.py`` writes it from seed 2)."""


@lru_cache(maxsize=1)
def default_workflow() -> WorkflowScenario:
    """The committed 30-day scenario, loaded once per process (regenerated from seed 2 when
    the data file is absent, as in an installed package: the same scenario by construction)."""
    if WORKFLOW_PATH.is_file():
        return load_workflow(WORKFLOW_PATH)
    return generate_workflow_scenario(seed=2, days=30, name="workflow-30d")


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
