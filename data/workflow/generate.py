"""Regenerate the professional-workflow scenario byte-identically.

    python data/workflow/generate.py          # write the file
    python data/workflow/generate.py --check  # exit 1 if the file differs from what the generator makes

The generator itself (``generate_workflow_scenario``, and ``build_workflow_graph``, the world it
is set in) lives here, beside the file it writes; the scenario, its loader and its replays are
``memorykit/classroom/scenarios/workflow.py``.

File: ``workflow_30d.jsonl`` (seed 2, 30 days x 20 turns). See
``memorykit/classroom/scenarios/workflow.py`` for the format and the labelling rule.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

import random  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

from memorykit._validate import require_int  # noqa: E402
from memorykit.classroom.scenarios.workflow import (DAY, HOUR, IMMINENT_FRACTION,  # noqa: E402
                                                    WorkflowScenario)
from memorykit.workspace.graph import KnowledgeGraph  # noqa: E402
from memorykit.workspace.objects import (WorkspaceObject, belief, entity, goal,  # noqa: E402
                                         knowledge, pattern, person, temporal)

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


SCENARIOS = {"workflow_30d.jsonl": dict(seed=2, days=30, name="workflow-30d")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out", type=Path, default=HERE, help="directory to write to")
    args = parser.parse_args(argv)
    status = 0
    for filename, params in SCENARIOS.items():
        text = generate_workflow_scenario(**params).to_jsonl()
        path = args.out / filename
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{filename}: {'ok' if same else 'DIFFERS'}")
            status |= 0 if same else 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{filename}: wrote {len(text.splitlines())} lines")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
