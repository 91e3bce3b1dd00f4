"""Exercise checkers: is the student's answer right, and if not, why not.

Every checker is deterministic (it replays the default scenario, never a live
model) and returns a ``Verdict``, which a notebook displays as the cell's result
(``show=True`` prints it as well, for scripts). A verdict names the numbers that
decided it, so a wrong answer tells the student what to change.

* ``check_budget``: ``notebooks/01_tokens_and_budgets.ipynb``.
* ``check_pruning_choice``: ``notebooks/02_pruning_strategies.ipynb``.
* ``check_summary_settings``: ``notebooks/03_summary_buffer.ipynb``.
* ``check_entity_capacity``, ``check_entity_ttl``: ``notebooks/04_entity_memory.ipynb``.
* ``check_preemption_ratio``: ``notebooks/05_task_slots.ipynb``.
* ``check_escalation``, ``check_min_shared_entities``: ``notebooks/06_notes_ttl.ipynb``.
* ``check_salience_weights``: ``notebooks/07_objects_salience.ipynb``.
* ``check_column_limits``: ``notebooks/08_three_columns.ipynb``.
* ``check_episodic_tau``, ``check_semantic_threshold``: ``notebooks/09_long_term_memory.ipynb``.
* ``check_window_size``, ``check_semantic_best``: ``notebooks/10_architectures.ipynb``.
* ``check_recall_limit``, ``check_loop_settings``: ``notebooks/11_llm_in_the_loop.ipynb``.
* ``check_beats_bm25``: ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memorykit.lessons.data import default_conversation


@dataclass(frozen=True, repr=False)
class Verdict:
    """The outcome of a checker: passed or not, one-line reason, and supporting details."""

    exercise: str
    passed: bool
    reason: str
    details: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = f"[{self.exercise}] {'PASS' if self.passed else 'NOT YET'}: {self.reason}"
        return "\n".join([head, *(f"  - {d}" for d in self.details)])

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # pragma: no cover - IPython
        p.text(str(self))


def _report(verdict: Verdict, show: bool) -> Verdict:
    if show:
        print(verdict)
    return verdict


# -------------------------------------------------------------- lesson 01
BUDGET_EXERCISE = {
    "n_turns": 30,
    "context_window": 8_192,
    "response_reserve": 1_024,
    "system_prompt": 500,
    "tools": 1_000,
    "user_input": 500,
}
"""Lesson 01's scenario: the first 30 turns of the default conversation in an 8K window."""


def budget_bounds(**overrides: int) -> tuple[int, int]:
    """(smallest, largest) memory budget that solves lesson 01's exercise."""
    from memorykit.lessons.tokens_app import turn_tokens

    p = {**BUDGET_EXERCISE, **overrides}
    need = turn_tokens(default_conversation().messages, p["n_turns"])
    room = (p["context_window"] - p["response_reserve"] - p["system_prompt"] - p["tools"]
            - p["user_input"])
    return need, room


def check_budget(budget: Any, *, show: bool = False) -> Verdict:
    """Lesson 01: a memory budget (tokens) that holds the first 30 turns of the default
    conversation and still fits an 8,192-token window beside a 500-token system prompt,
    1,000 tokens of tools, 500 of user input and a 1,024-token response reserve."""
    name = "01 budget"
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        return _report(Verdict(name, False, f"budget must be a number of tokens, got {budget!r}"),
                       show)
    need, room = budget_bounds()
    p = BUDGET_EXERCISE
    others = p["system_prompt"] + p["tools"] + p["user_input"]
    details = (
        f"the first {p['n_turns']} turns bill {need:,} tokens (contents + 4 framing tokens "
        "per message)",
        f"room for memory: {p['context_window']:,} window - {p['response_reserve']:,} reserve - "
        f"{others:,} other prompt parts = {room:,}",
    )
    if budget < need:
        return _report(Verdict(
            name, False,
            f"{budget:,} tokens cannot hold the {p['n_turns']} turns: they bill {need:,} "
            f"({need - budget:,} more); did you count content tokens only, or characters / 4?",
            details), show)
    if budget > room:
        return _report(Verdict(
            name, False,
            f"{budget:,} tokens leave the reply only {p['context_window'] - others - budget:,} "
            f"of the {p['response_reserve']:,} reserved: the request would overflow the window "
            f"by {budget - room:,}", details), show)
    return _report(Verdict(
        name, True, f"{budget:,} tokens hold all {p['n_turns']} turns ({need:,}) and leave "
        f"{room - budget:,} tokens of slack inside the 8K window", details), show)


# -------------------------------------------------------------- lesson 02
PRUNING_EXERCISE = {"budget": 1_500, "recent_from_turn": 401}
"""Lesson 02: at 1,500 tokens, keep every fact planted from turn 401 on."""


def check_pruning_choice(
    policy: Any,
    *,
    threshold: float = 0.5,
    decay_rate: float = 0.1,
    half_life_minutes: float = 5.0,
    budget: int = PRUNING_EXERCISE["budget"],
    show: bool = False,
) -> Verdict:
    """Lesson 02: a policy (and its parameters) that, at a 1,500-token budget, still holds
    every fact planted in the last 100 turns of the default conversation at its end."""
    from memorykit.lessons.pruning_app import POLICIES, run_policy

    name = "02 pruning"
    if policy not in POLICIES:
        return _report(Verdict(name, False,
                               f"policy must be one of {', '.join(POLICIES)}, got {policy!r}"), show)
    if budget != PRUNING_EXERCISE["budget"]:
        return _report(Verdict(name, False, f"the exercise fixes budget=1500, got {budget!r}"),
                       show)
    conv = default_conversation()
    run = run_policy(conv, policy, budget=budget, threshold=threshold, decay_rate=decay_rate,
                     half_life_minutes=half_life_minutes)
    first = PRUNING_EXERCISE["recent_from_turn"]
    wanted = [f for f in conv.facts if f.turn >= first]
    lost = [f for f in wanted if not run.fact_alive[f.id]]
    old_kept = sum(1 for f in conv.facts if f.turn < first and run.fact_alive[f.id])
    params = {"fifo": "", "importance": "", "hybrid": f" threshold={threshold:g}",
              "recency": f" decay_rate={decay_rate:g} half_life_minutes={half_life_minutes:g}"}
    label = f"{policy}{params[policy]}"
    details = [f"kept {len(wanted) - len(lost)}/{len(wanted)} facts from turn {first} on, "
               f"and {old_kept} older facts"]
    for f in lost[:5]:
        turn, rule = run.evicted_at[f.message_id]
        details.append(f"{f.id} (turn {f.turn}, key {f.key!r}) left at turn {turn} by rule "
                       f"{rule!r}")
    if lost:
        hint = {
            "fifo": "FIFO evicts by age alone, so a fact goes as soon as it is old enough",
            "importance": "pure importance hoards the oldest important messages and has no "
                          "room left for new facts",
            "hybrid": "planted facts have importance 0.8 or more; with a low threshold "
                      "answers are protected too and the FIFO fallback takes facts once "
                      "they fill the window, with one above some facts' importance the "
                      "oldest high-importance facts are protected and hoard the window",
            "recency": "effective importance decays with age; the ratio decay_rate / "
                       "half_life_minutes sets how fast old facts lose to new chatter",
        }[policy]
        return _report(Verdict(name, False, f"{label} loses {len(lost)} of the {len(wanted)} "
                               f"recent facts; {hint}", tuple(details)), show)
    return _report(Verdict(name, True, f"{label} keeps all {len(wanted)} facts planted from "
                           f"turn {first} on", tuple(details)), show)


# -------------------------------------------------------------- lesson 03
SUMMARY_EXERCISE = {"budget": 2_000, "max_summarizations": 60, "fact": "f0026"}
"""Lesson 03: at most 60 summarization rounds, and fact f0026 (a flight number planted at turn
252) still known at the end. (f0025, the first choice, is lost under every setting at
budget 2,000: its key "14D" never out-scores newer sentences, so that exercise was impossible.)"""


def check_summary_settings(
    threshold: Any,
    target: Any,
    min_recent: Any,
    *,
    budget: int = SUMMARY_EXERCISE["budget"],
    show: bool = False,
) -> Verdict:
    """Lesson 03: summary-buffer settings (budget 2,000) with at most 60 summarization rounds
    over the default conversation whose final window still knows fact f0026's key."""
    from memorykit.lessons.summary_app import run_summary_buffer

    name = "03 summary"
    if budget != SUMMARY_EXERCISE["budget"]:
        return _report(Verdict(name, False, f"the exercise fixes budget=2000, got {budget!r}"),
                       show)
    try:
        run = run_summary_buffer(default_conversation(), budget=budget, threshold=threshold,
                                 target=target, min_recent=min_recent)
    except (TypeError, ValueError) as exc:
        return _report(Verdict(name, False, f"these settings are not valid: {exc}"), show)
    cap = SUMMARY_EXERCISE["max_summarizations"]
    fact_id = SUMMARY_EXERCISE["fact"]
    fact = next(f for f in default_conversation().facts if f.id == fact_id)
    alive = run.fact_alive[fact_id]
    n = run.n_summarizations
    details = (
        f"{n} summarization rounds (at most {cap}), deepest summary depth {run.max_depth}",
        f"{fact_id} ({fact.key!r}, planted at turn {fact.turn}) "
        f"{'survives' if alive else 'is lost'}; {run.facts_alive} of "
        f"{len(run.fact_alive)} facts survive overall",
    )
    label = f"threshold={threshold:g} target={target:g} min_recent={min_recent}"
    problems = []
    if n > cap:
        problems.append(f"{n} rounds is more than {cap}: the gap between threshold and target "
                        "sets how much each round frees, so a wider gap means fewer rounds")
    if not alive:
        problems.append(f"fact {fact_id} ({fact.key!r}) was squeezed out of the summaries: "
                        "each round re-summarizes the last summary under a fixed cap, so a "
                        "fact must keep out-scoring newer sentences to survive")
    if problems:
        return _report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return _report(Verdict(name, True, f"{label}: {n} rounds and {fact_id} survives", details),
                   show)


# ------------------------------------------------------- lessons 05 and 06 (workspace)
# check_preemption_ratio: notebooks/05_task_slots.ipynb.
# check_escalation, check_min_shared_entities: notebooks/06_notes_ttl.ipynb.

PREEMPTION_EXERCISE = {"keeps": "T022", "arrives": "T024", "min_completed": 15}
"""Lesson 05: T022 keeps its slot when T024 arrives, and at least 15 tasks still complete."""


def check_preemption_ratio(preemption_ratio: Any, *, show: bool = False) -> Verdict:
    """Lesson 05: a preemption ratio (4 slots, threshold 0.5) under which T024 does not
    preempt T022 on the 30-day workflow, while at least 15 tasks are still completed."""
    from memorykit.lessons.tasks_app import slot_timeline

    name = "05 preemption ratio"
    if isinstance(preemption_ratio, bool) or not isinstance(preemption_ratio, (int, float)):
        return _report(Verdict(name, False, f"preemption_ratio must be a number, got {preemption_ratio!r}"),
                       show)
    r = round(float(preemption_ratio), 4)
    if not 1.0 <= r <= 3.0:
        return _report(Verdict(name, False, f"preemption_ratio must be in [1, 3] here, got {r:g}"), show)
    ex = PREEMPTION_EXERCISE
    tl = slot_timeline(4, 0.5, r)
    index = {tid: i for i, tid in enumerate(tl.task_ids)}
    p_keep = float(tl.priorities[index[ex["keeps"]]])
    p_new = float(tl.priorities[index[ex["arrives"]]])
    lost = any(e.kind == "demoted" and e.task_id == ex["keeps"] and e.other_id == ex["arrives"]
               for e in tl.events)
    s = tl.summary()
    base = slot_timeline(4, 0.5, 1.3).summary()
    details = (
        f"{ex['arrives']} ({p_new:.2f}) against {ex['keeps']} ({p_keep:.2f}): {p_new:.2f} "
        f"{'>' if lost else 'is not >'} {r:g} x {p_keep:.2f} = {r * p_keep:.4f}; any ratio above "
        f"{p_new / p_keep:.4f} protects {ex['keeps']}",
        f"{s['preemptions']} preemptions, {s['completed']} tasks completed, "
        f"{s['task_notes_expired']} waiting tasks ran out of time (seed's 1.3: {base['preemptions']}, "
        f"{base['completed']}, {base['task_notes_expired']})",
    )
    if lost:
        return _report(Verdict(
            name, False, f"at {r:g}, {ex['arrives']} still preempts {ex['keeps']}: "
            f"{p_new:.2f} > {r * p_keep:.4f}; raise the ratio above {p_new / p_keep:.4f}", details), show)
    if s["completed"] < ex["min_completed"]:
        blocked = [e for e in tl.events if e.kind == "noted" and "slots full" in e.text]
        return _report(Verdict(
            name, False, f"at {r:g}, {ex['keeps']} is safe but only {s['completed']} tasks complete "
            f"(at least {ex['min_completed']} wanted): {len(blocked)} arrivals found all slots full and "
            "could not preempt, so urgent work waited in notes until it expired; a ratio that "
            "just clears 0.69 / 0.53 keeps more preemptions (T030: 0.79 vs 0.57 needs < 1.386)",
            details), show)
    return _report(Verdict(
        name, True, f"at {r:g}, {ex['keeps']} keeps its slot ({p_new:.2f} is not > {r * p_keep:.4f}) "
        f"and {s['completed']} tasks still complete", details), show)


ESCALATION_EXERCISE = {"remind": "U012", "quiet": "U016", "lead_minutes": 45.0, "max_warn_fraction": 0.5}
"""Lesson 06: U012 reaches 1.0 at least 45 min before it expires; U016 never surfaces on
priority; nothing escalates in the first half of its life."""


def check_escalation(warn_fraction: Any, warn_multiplier: Any, critical_fraction: Any,
                     critical_multiplier: Any, *, show: bool = False) -> Verdict:
    """Lesson 06: escalation settings under which the urgent note U012 (priority 0.56, TTL
    2.78 h) reaches effective priority 1.0 at least 45 minutes before it expires, the normal
    note U016 (priority 0.40, TTL 40.28 h) never passes the surfacing threshold 0.9, and no
    note escalates before half of its TTL has passed (warn_fraction <= 0.5)."""
    from memorykit.lessons.notes_app import band_facts
    from memorykit.lessons.tasks_app import default_workflow
    from memorykit.workspace import NoteSettings

    name = "06 escalation"
    ex = ESCALATION_EXERCISE
    try:
        settings = NoteSettings(warn_fraction=warn_fraction, warn_multiplier=warn_multiplier,
                                critical_fraction=critical_fraction,
                                critical_multiplier=critical_multiplier)
    except (TypeError, ValueError) as exc:
        return _report(Verdict(name, False, f"these settings are not valid: {exc}"), show)
    notes = {e["id"]: e for e in default_workflow().events if e["type"] == "note"}
    a, b = notes[ex["remind"]], notes[ex["quiet"]]
    fa = band_facts(a["priority"], a["ttl_hours"], settings)
    fb = band_facts(b["priority"], b["ttl_hours"], settings)
    lead = None if fa.first_max_at is None else (fa.ttl_hours - fa.first_max_at) * 60
    label = (f"warn x{settings.warn_multiplier:g} below {settings.warn_fraction:g}, critical "
             f"x{settings.critical_multiplier:g} below {settings.critical_fraction:g}")
    details = (
        f"{ex['remind']} (p={a['priority']:.2f}, TTL {a['ttl_hours']:.2f} h): warning step at "
        f"{fa.warn_at:.2f} h -> {fa.warn_value:.3f}, critical step at {fa.critical_at:.2f} h -> "
        f"{fa.critical_value:.3f}" + ("" if lead is None else f"; at 1.0 for the last {lead:.0f} min"),
        f"{ex['quiet']} (p={b['priority']:.2f}): peaks at {max(fb.warn_value, fb.critical_value):.3f} "
        f"(surfacing threshold {settings.surfacing_threshold:g})",
    )
    problems = []
    if settings.warn_fraction > ex["max_warn_fraction"]:
        problems.append(f"warn_fraction {settings.warn_fraction:g} escalates notes with more than half "
                        "their TTL left: every note would nag for most of its life")
    if lead is None:
        need = 1 / a["priority"]
        problems.append(f"{ex['remind']} never reaches 1.0: {a['priority']:.2f} x multiplier must be >= 1, "
                        f"so one band needs a multiplier >= {need:.3f}")
    elif lead < ex["lead_minutes"]:
        need = ex["lead_minutes"] / 60 / a["ttl_hours"]
        problems.append(f"{ex['remind']} reaches 1.0 only {lead:.0f} min before expiry (at least "
                        f"{ex['lead_minutes']:g} wanted: turns are ~24 min apart, so a shorter window can "
                        f"fall between two turns); the band that reaches 1.0 must start with more than "
                        f"{need:.3f} of the TTL left")
    if fb.first_surfacing_at is not None:
        problems.append(f"{ex['quiet']} would surface on priority: {b['priority']:.2f} x "
                        f"{settings.critical_multiplier:g} = {b['priority'] * settings.critical_multiplier:.3f}"
                        f" > {settings.surfacing_threshold:g}; keep the multipliers <= "
                        f"{settings.surfacing_threshold / b['priority']:.3f}")
    if problems:
        return _report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return _report(Verdict(name, True, f"{label}: {ex['remind']} is at 1.0 for its last {lead:.0f} min "
                           f"and {ex['quiet']} stays quiet", details), show)


SURFACING_EXERCISE = {"min_precision": 0.8, "min_recall": 0.5}
"""Lesson 06: surfacing precision >= 80% with recall >= 50% on the 30-day workflow."""


def check_min_shared_entities(min_shared_entities: Any, *, show: bool = False) -> Verdict:
    """Lesson 06: a ``min_shared_entities`` for which surfacing on the labelled workflow has
    precision >= 0.8 and recall >= 0.5."""
    from memorykit.lessons.notes_app import surfacing_report

    name = "06 surfacing"
    if (isinstance(min_shared_entities, bool) or not isinstance(min_shared_entities, int)
            or not 1 <= min_shared_entities <= 6):
        return _report(Verdict(name, False, "min_shared_entities must be an integer from 1 to 6, got "
                               f"{min_shared_entities!r}"), show)
    ex = SURFACING_EXERCISE
    r = surfacing_report(min_shared_entities)
    details = (
        f"{r['relevant']}/{r['surfacings']} surfacings relevant (precision {r['precision']:.1%}), "
        f"recall {r['recall']:.1%}; by trigger {r['by_trigger']}",
        f"false positives: {r['fp_wanted_note_other_matter']} wanted notes on another matter's turn, "
        f"{r['fp_stale_note_its_own_matter'] + r['fp_stale_note_other_matter']} notes no longer wanted",
    )
    problems = []
    if r["precision"] < ex["min_precision"]:
        stale = r["fp_stale_note_its_own_matter"] + r["fp_stale_note_other_matter"]
        problems.append(f"precision {r['precision']:.1%} < {ex['min_precision']:.0%}: of {r['false_positives']} "
                        f"false positives, {r['fp_wanted_note_other_matter']} surfaced a wanted note on a turn "
                        f"about another matter and {stale} a note the user no longer wanted, each on as "
                        f"few as {min_shared_entities} shared entity")
    if r["recall"] < ex["min_recall"]:
        problems.append(f"recall {r['recall']:.1%} < {ex['min_recall']:.0%}: few turns name that many of "
                        "a note's entities, so most wanted notes are never brought up")
    if problems:
        return _report(Verdict(name, False, f"min_shared_entities={min_shared_entities}: "
                               + "; ".join(problems), details), show)
    return _report(Verdict(name, True, f"min_shared_entities={min_shared_entities}: precision "
                           f"{r['precision']:.1%} and recall {r['recall']:.1%}", details), show)


# -------------------------------------------------------------- lesson 07
SALIENCE_EXERCISE = {"turn": 551, "target": "b_acme_gl", "keep": "maya", "top": 5}
"""Lesson 07: at turn 551 ("Acme Supplies sent INV-1118; can you check it?") the belief
"Acme Supplies invoices use GL 5100" and the user Maya Chen must both be in the top 5."""


def check_salience_weights(weights: Any, *, show: bool = True) -> Verdict:
    """Lesson 07: salience weights (a dict of the five weights, optionally recency_turns and
    max_objects) under which, at turn 551 of the default workflow, the belief "Acme Supplies
    invoices use GL 5100" and the user Maya Chen are both among the first 5 objects shown."""
    from memorykit.lessons.salience_app import (
        format_top_objects,
        object_rank,
        salience_lesson_data,
        salience_view,
        salience_weights,
    )

    name = "07 salience"
    ex = SALIENCE_EXERCISE
    if not isinstance(weights, dict):
        return _report(Verdict(name, False, f"weights must be a dict such as {{'belief_strength': 0.5, "
                               f"...}}, got {weights!r}"), show)
    allowed = {"recent_mention", "active_task_link", "note_link", "relationship", "belief_strength",
               "recency_turns", "max_objects"}
    unknown = sorted(set(weights) - allowed)
    if unknown:
        return _report(Verdict(name, False, f"unknown weight(s) {', '.join(unknown)}; use "
                               f"{', '.join(sorted(allowed))}"), show)
    out_of_range = [k for k, v in weights.items() if k not in ("recency_turns", "max_objects")
                    and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1)]
    if out_of_range:
        return _report(Verdict(name, False, "the five weights are slider values in [0, 1]; out of range: "
                               + ", ".join(f"{k}={weights[k]!r}" for k in out_of_range)), show)
    try:
        w = salience_weights(**weights)
    except (TypeError, ValueError) as exc:
        return _report(Verdict(name, False, f"these weights are not valid: {exc}"), show)
    data = salience_lesson_data()
    view = salience_view(data, ex["turn"], w)
    target, keep = object_rank(view, ex["target"]), object_rank(view, ex["keep"])
    label = " ".join(f"{k}={getattr(w, k):g}" for k in ("recent_mention", "active_task_link", "note_link",
                                                         "relationship", "belief_strength"))
    place = {None: "not shown at all"}
    details = (
        f"turn {ex['turn']}: the belief ranks {place.get(target, f'#{target}')}, Maya Chen "
        f"{place.get(keep, f'#{keep}')} (need both <= {ex['top']})",
        "top 6 under these weights:\n    " + format_top_objects(view.top[:6]).replace("\n", "\n    "),
    )
    problems = []
    if target is None or target > ex["top"]:
        problems.append("the GL 5100 belief is not in the top 5: at this turn the INV-1118 task waits in a "
                        "note (all four slots are busy), so the belief earns only the note link and "
                        "0.88 x the belief weight, while objects linked to an active task start "
                        "active_task_link ahead")
    if keep is None or keep > ex["top"]:
        problems.append("Maya Chen fell out of the top 5: her score is relationship x 0.95 plus her links, "
                        "and every belief (and entity) you lift competes with her for the same 5 places")
    if problems:
        return _report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return _report(Verdict(name, True, f"{label}: the GL 5100 belief is #{target} and Maya Chen #{keep} at "
                           f"turn {ex['turn']}", details), show)


# -------------------------------------------------------------- lesson 08
COLUMNS_EXERCISE = {"min_reduction": 0.40, "min_top_notes": 2}
"""Lesson 08: >= 40% fewer tokens than the flat buffer of the same state, at least 2 notes,
and no turn where max_objects cuts an object linked to an active task."""


def check_column_limits(top_notes: Any, max_objects: Any, *, show: bool = True) -> Verdict:
    """Lesson 08: top-notes and max-objects limits whose three-column prompt is, on average over
    the 600 turns of the default workflow, at least 40% smaller than the flat buffer of the same
    state, shows at least 2 notes, and never drops an object linked to an active task."""
    import numpy as np

    from memorykit.lessons.columns_app import default_replay, default_tables, line_costs, token_comparison

    name = "08 columns"
    ex = COLUMNS_EXERCISE
    for pname, value, lo in (("top_notes", top_notes, 0), ("max_objects", max_objects, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            return _report(Verdict(name, False, f"{pname} must be an integer >= {lo}, got {value!r}"), show)
    tables = default_tables()
    cmp = token_comparison(tables, top_notes, max_objects)
    red = cmp.reduction
    details = [
        f"three columns {cmp.columns.mean():.1f} tokens per turn vs {cmp.flat.mean():.1f} for the flat "
        f"buffer of the same state: {red:.1%} fewer (seed 002 claims 40%)",
        f"task-linked objects need max_objects up to {int(tables.linked_needed.max())} "
        f"(median {int(np.median(tables.linked_needed))}); {cmp.turns_dropping_linked.size} turns drop one "
        f"at max_objects={max_objects}",
    ]
    if cmp.turns_dropping_linked.size:
        replay = default_replay()
        t = int(cmp.turns_dropping_linked[0])
        tl = replay.turns[t - 1]
        kept = set(tl.objects[:max_objects])
        lost = [replay.object_ids[i] for i in tl.task_linked if i not in kept]
        details.append(f"first such turn: {t}, dropping {', '.join(lost[:5])}")
    problems = []
    if top_notes < ex["min_top_notes"]:
        problems.append(f"top_notes={top_notes} hides all but {top_notes} note(s); the exercise keeps at "
                        f"least {ex['min_top_notes']}")
    if red < ex["min_reduction"]:
        costs = line_costs(default_replay())
        problems.append(f"only {red:.1%} fewer tokens than the flat buffer (need {ex['min_reduction']:.0%}): "
                        f"a note line costs {costs['note']:.0f} tokens on average and an object line "
                        f"{costs['object']:.0f}, so cut notes before objects")
    if cmp.turns_dropping_linked.size:
        problems.append(f"max_objects={max_objects} cuts an object linked to an active task at "
                        f"{cmp.turns_dropping_linked.size} turns: the column must hold up to "
                        f"{int(tables.linked_needed.max())} objects to keep them all")
    label = f"top_notes={top_notes} max_objects={max_objects}"
    if problems:
        return _report(Verdict(name, False, f"{label}: " + "; ".join(problems), tuple(details)), show)
    return _report(Verdict(name, True, f"{label}: {red:.1%} fewer tokens than the flat buffer, every "
                           "task-linked object kept at every turn", tuple(details)), show)


# -------------------------------------------------------------- lesson 04
# Entity working memory (notebooks/04_entity_memory.ipynb): replays of data/entities/cms_large.jsonl.
ENTITY_TTL_TARGET = 0.93
"""Lesson 04's TTL exercise: the resolution success a TTL must keep (max_size 20, seed weights)."""


def _entity_summary(max_size: int, ttl_minutes: float | None = None) -> dict[str, Any]:
    from memorykit.entities import RelevanceMemory, replay
    from memorykit.lessons.entities_app import cms_scenario

    return replay(cms_scenario("large"), lambda c: RelevanceMemory(max_size, clock=c,
                                                                   ttl_minutes=ttl_minutes)).summary()


def entity_capacity_answer() -> int:
    """The smallest max_size at which the relevance memory loses no antecedent to eviction."""
    size = 1
    while _entity_summary(size)["failures_antecedent_evicted"] > 0:
        size += 1
    return size


def entity_ttl_answer(target: float = ENTITY_TTL_TARGET) -> int:
    """The smallest whole-minute TTL keeping resolution success >= target (max_size 20)."""
    ttl = 1
    while _entity_summary(20, ttl)["resolution_success"] < target:
        ttl += 1
    return ttl


def check_entity_capacity(max_size: Any, *, show: bool = True) -> Verdict:
    """Lesson 04: the smallest ``max_size`` at which a relevance memory (seed weights, no
    TTL) loses no reference's antecedent to eviction on the 1,000-turn CMS session."""
    name = "04 capacity"
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
        return _report(Verdict(name, False, f"max_size must be a positive integer, got {max_size!r}"),
                       show)
    mine = _entity_summary(max_size)
    lost = mine["failures_antecedent_evicted"]
    details = (f"max_size {max_size}: resolution success {mine['resolution_success']:.1%}, "
               f"{lost} references lost to eviction, eviction rate {mine['eviction_rate']:.1%}",)
    if lost:
        return _report(Verdict(name, False, f"with max_size={max_size} the memory still evicts "
                               f"{lost} antecedents before they are referred to: try larger", details),
                       show)
    smaller = _entity_summary(max_size - 1) if max_size > 1 else None
    if smaller is not None and smaller["failures_antecedent_evicted"] == 0:
        return _report(Verdict(name, False, f"max_size={max_size} loses nothing, but "
                               f"{max_size - 1} loses nothing either: find the smallest", details),
                       show)
    lost_below = "" if smaller is None else (f"; max_size {max_size - 1} loses "
                                             f"{smaller['failures_antecedent_evicted']}")
    return _report(Verdict(name, True, f"max_size={max_size} is the smallest memory that loses no "
                           f"antecedent{lost_below}", details), show)


def check_entity_ttl(ttl_minutes: Any, *, show: bool = True) -> Verdict:
    """Lesson 04: the smallest whole-minute TTL at which a relevance memory of 20 (seed
    weights) keeps resolution success at or above 93% on the 1,000-turn CMS session."""
    name = "04 ttl"
    if isinstance(ttl_minutes, bool) or not isinstance(ttl_minutes, int) or ttl_minutes < 1:
        return _report(Verdict(name, False,
                               f"ttl_minutes must be a positive whole number of minutes, got "
                               f"{ttl_minutes!r}"), show)
    mine = _entity_summary(20, ttl_minutes)
    ok = mine["resolution_success"] >= ENTITY_TTL_TARGET
    details = (f"TTL {ttl_minutes} min: resolution success {mine['resolution_success']:.1%}, "
               f"{mine['expirations']} expiries, {mine['failures_antecedent_evicted']} antecedents "
               f"gone before their reference",)
    if not ok:
        return _report(Verdict(name, False, f"TTL {ttl_minutes} min forgets too early: "
                               f"{mine['resolution_success']:.1%} < {ENTITY_TTL_TARGET:.0%}; "
                               "the user takes breaks longer than that", details), show)
    if ttl_minutes > 1:
        below = _entity_summary(20, ttl_minutes - 1)
        if below["resolution_success"] >= ENTITY_TTL_TARGET:
            return _report(Verdict(name, False, f"TTL {ttl_minutes} min works, but "
                                   f"{ttl_minutes - 1} min works too "
                                   f"({below['resolution_success']:.1%}): find the smallest",
                                   details), show)
    return _report(Verdict(name, True, f"TTL {ttl_minutes} min is the shortest that keeps "
                           f"resolution success >= {ENTITY_TTL_TARGET:.0%}", details), show)


# -------------------------------------------------------------- lesson 09
# (checkers of notebooks/09_long_term_memory.ipynb go here)
TAU_EXERCISE = {"alpha": 0.6, "beta": 0.4, "threshold": 0.7, "age_hours": 48.0}
"""Lesson 09, exercise 1: seed 003's weights and threshold, a full-match episode two days old."""


def _is_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float))


def tau_recall_ok(tau_hours: float) -> tuple[bool, float]:
    """(is a full-match episode of TAU_EXERCISE's age recalled with this tau?, its score)."""
    from memorykit.longterm.episodic import HOUR, episode_scores

    p = TAU_EXERCISE
    s = float(episode_scores(1.0, p["age_hours"] * HOUR, alpha=p["alpha"], beta=p["beta"],
                             tau_seconds=float(tau_hours) * HOUR))
    return s > p["threshold"], s


def check_episodic_tau(tau_hours: Any, *, show: bool = False) -> Verdict:
    """Lesson 09: the smallest whole number of hours tau for which an episode matching every
    query word is still recalled 48 h later (alpha 0.6, beta 0.4, threshold 0.7)."""
    name = "09 tau"
    if not _is_number(tau_hours) or tau_hours != int(tau_hours) or tau_hours < 1:
        return _report(Verdict(name, False, f"tau must be a whole number of hours >= 1, got "
                               f"{tau_hours!r}"), show)
    tau = int(tau_hours)
    ok, s = tau_recall_ok(tau)
    details = (f"S(overlap 1, age 48 h, tau {tau} h) = 0.6 + 0.4 x exp(-48/{tau}) = {s:.4f}",)
    if not ok:
        return _report(Verdict(name, False, f"with tau {tau} h the score {s:.4f} is not above "
                               "the threshold 0.7: the episode is forgotten; decay more slowly",
                               details), show)
    below_ok, below = tau_recall_ok(tau - 1) if tau > 1 else (False, 0.0)
    if below_ok:
        return _report(Verdict(name, False, f"tau {tau} h works, but so does {tau - 1} h "
                               f"(S = {below:.4f}): find the smallest", details), show)
    return _report(Verdict(name, True, f"tau {tau} h is the smallest: S = {s:.4f} > 0.7, while "
                           f"{tau - 1} h gives {below:.4f}", details), show)


def semantic_threshold_answer() -> dict[str, Any]:
    """Lesson 09, exercise 2 solved by scanning thresholds 0.00..1.00 in steps of 0.01."""
    from memorykit.lessons.recall_app import semantic_matrix, semantic_recall

    n = len(semantic_matrix().questions)
    best = None
    for k in range(101):
        r = semantic_recall(k / 100)
        if r["own"] == n:
            best = (k / 100, r["wrong"])
    if best is None:  # pragma: no cover - the bank always allows a threshold of 0
        raise RuntimeError("no threshold recalls every question's fact")
    return {"threshold": best[0], "wrong_recalls": best[1]}


def check_semantic_threshold(answer: Any, *, show: bool = False) -> Verdict:
    """Lesson 09: {'threshold': t, 'wrong_recalls': n}: the highest cosine threshold (two
    decimals) at which every fact-bank question still recalls its own fact with the lexical
    embedder, and how many wrong facts are recalled with it."""
    from memorykit.lessons.recall_app import semantic_matrix, semantic_recall

    name = "09 semantic threshold"
    if not isinstance(answer, dict) or set(answer) != {"threshold", "wrong_recalls"}:
        return _report(Verdict(name, False, "answer must be a dict with keys 'threshold' and "
                               f"'wrong_recalls', got {answer!r}"), show)
    t, wrong = answer["threshold"], answer["wrong_recalls"]
    if not _is_number(t) or not _is_number(wrong):
        return _report(Verdict(name, False, f"threshold and wrong_recalls must be numbers, got "
                               f"{t!r} and {wrong!r}"), show)
    n = len(semantic_matrix().questions)
    r = semantic_recall(float(t))
    ref = semantic_threshold_answer()
    details = (f"at threshold {t}: {r['own']}/{n} questions recall their fact, "
               f"{r['wrong']} wrong facts recalled",)
    if r["own"] < n:
        return _report(Verdict(name, False, f"at {t} only {r['own']} of {n} questions recall "
                               "their own fact: the threshold is too high", details), show)
    if round(float(t), 2) < ref["threshold"]:
        return _report(Verdict(name, False, f"{t} recalls every fact, but a higher threshold "
                               "does too (and lets fewer wrong facts in): find the highest",
                               details), show)
    if wrong != r["wrong"]:
        return _report(Verdict(name, False, f"the threshold is right, but it recalls "
                               f"{r['wrong']} wrong facts, not {wrong}", details), show)
    return _report(Verdict(name, True, f"{t} is the highest threshold that keeps all {n} facts; "
                           f"it still lets {r['wrong']} wrong facts in (a lexical embedder "
                           "cannot separate them)", details), show)


# -------------------------------------------------------------- lesson 10
# (checkers of notebooks/10_architectures.ipynb go here)
WINDOW_EXERCISE_DISTRACTORS = 10
"""Lesson 10, exercise 1: distractor turns after the facts."""


def _a_recall(window: int) -> float:
    from memorykit.lessons.architectures_app import DISTRACTORS, curve

    return curve("A", window).recall[DISTRACTORS.index(WINDOW_EXERCISE_DISTRACTORS)]


def check_window_size(window: Any, *, show: bool = False) -> Verdict:
    """Lesson 10: the smallest window W (messages) with which A still recalls all four facts
    after 10 distractor turns."""
    name = "10 window"
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        return _report(Verdict(name, False, f"window must be a whole number of messages >= 1, "
                               f"got {window!r}"), show)
    r = _a_recall(window)
    details = (f"A with W={window} after {WINDOW_EXERCISE_DISTRACTORS} distractor turns: "
               f"recall {r:.0%}",)
    if r < 1:
        return _report(Verdict(name, False, f"with W={window} A recalls only {r:.0%}: the facts "
                               "have already slid out of the window; widen it", details), show)
    if window > 1 and _a_recall(window - 1) == 1:
        return _report(Verdict(name, False, f"W={window} works, but so does W={window - 1}: "
                               "find the smallest", details), show)
    return _report(Verdict(name, True, f"W={window} is the smallest window holding all four facts "
                           f"after {WINDOW_EXERCISE_DISTRACTORS} distractor turns; "
                           f"W={window - 1} recalls {_a_recall(window - 1):.0%}", details), show)


SEMANTIC_EXERCISE = {"distractors": 50, "window": 20,
                     "thresholds": tuple(round(0.05 * k, 2) for k in range(1, 19))}
"""Lesson 10, exercise 2: C after 50 distractor turns, window 20, thresholds 0.05..0.90."""


def semantic_best() -> dict[str, float]:
    """Lesson 10, exercise 2 solved: C's best recall and the highest threshold reaching it."""
    from memorykit.lessons.architectures_app import DISTRACTORS, curve

    i = DISTRACTORS.index(SEMANTIC_EXERCISE["distractors"])
    recall = {t: curve("C", SEMANTIC_EXERCISE["window"], semantic_threshold=t).recall[i]
              for t in SEMANTIC_EXERCISE["thresholds"]}
    best = max(recall.values())
    return {"threshold": max(t for t, r in recall.items() if r == best), "recall": best}


def check_semantic_best(answer: Any, *, show: bool = False) -> Verdict:
    """Lesson 10: {'threshold': t, 'recall': r}: the highest threshold (0.05 steps) at which C
    reaches its best recall after 50 distractor turns (window 20), and that recall (0-1)."""
    from memorykit.lessons.architectures_app import DISTRACTORS, curve

    name = "10 semantic threshold"
    if not isinstance(answer, dict) or set(answer) != {"threshold", "recall"}:
        return _report(Verdict(name, False, "answer must be a dict with keys 'threshold' and "
                               f"'recall', got {answer!r}"), show)
    t, r = answer["threshold"], answer["recall"]
    if not _is_number(t) or not _is_number(r) or not 0 <= r <= 1:
        return _report(Verdict(name, False, f"threshold must be a number and recall a share in "
                               f"[0, 1], got {t!r} and {r!r}"), show)
    ref = semantic_best()
    i = DISTRACTORS.index(SEMANTIC_EXERCISE["distractors"])
    got = curve("C", SEMANTIC_EXERCISE["window"], semantic_threshold=float(t)).recall[i]
    details = (f"C at threshold {t}: recall {got:.0%}; best over 0.05..0.90: {ref['recall']:.0%}",)
    if got < ref["recall"]:
        return _report(Verdict(name, False, f"at {t} C recalls {got:.0%}, below its best "
                               f"{ref['recall']:.0%}: lower the threshold", details), show)
    if float(t) < ref["threshold"] - 1e-9:
        return _report(Verdict(name, False, f"{t} reaches the best recall, but a higher threshold "
                               "does too (with fewer irrelevant recalls): find the highest",
                               details), show)
    if abs(float(r) - got) > 1e-9:
        return _report(Verdict(name, False, f"the threshold is right, but C's recall there is "
                               f"{got:.0%}, not {float(r):.0%}", details), show)
    return _report(Verdict(name, True, f"{t} is the highest threshold at which C reaches its best "
                           f"recall, {got:.0%}: lowering it further never reaches 100%",
                           details), show)


# -------------------------------------------------------------- lesson 11
# Checkers of notebooks/11_llm_in_the_loop.ipynb. They replay the lesson's scenario with the
# offline components (memorykit.lessons.llm_app), never a live model.
LOOP_TOKEN_TARGET = 650
"""Lesson 11, exercise 2: mean prompt tokens per probe the settings must stay within."""


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _loop_summary(budget: int, threshold: float, recall_limit: int) -> dict[str, Any]:
    from memorykit.lessons.llm_app import DEFAULTS, _offline_loop

    return _offline_loop(budget, float(threshold), recall_limit, DEFAULTS["distractor_turns"],
                         DEFAULTS["seed"]).summary()


def check_recall_limit(recall_limit: Any, *, show: bool = False) -> Verdict:
    """Lesson 11: the smallest recall_limit that puts all four planted facts into the context
    (working-memory budget 600, summary threshold 0.8, the lesson's 30 distractor turns)."""
    name = "11 recall_limit"
    if not _is_whole(recall_limit) or not 0 <= recall_limit <= 20:
        return _report(Verdict(name, False, f"recall_limit must be a whole number in [0, 20], got "
                               f"{recall_limit!r}"), show)
    mine = _loop_summary(600, 0.8, recall_limit)
    details = (f"recall_limit {recall_limit}: {mine['facts_in_context']}/4 facts in the context, "
               f"{mine['mean_tokens_per_call']} tokens per call on average",)
    if mine["facts_in_context"] < 4:
        return _report(Verdict(name, False, f"only {mine['facts_in_context']} of 4 facts reach the "
                               "context: the summaries lost the others, recall more", details), show)
    if recall_limit > 0 and _loop_summary(600, 0.8, recall_limit - 1)["facts_in_context"] == 4:
        return _report(Verdict(name, False, f"{recall_limit - 1} is enough too: every recalled "
                               "entry costs tokens on every call, find the smallest", details), show)
    return _report(Verdict(name, True, f"recall_limit {recall_limit} is the smallest that puts all "
                           "4 facts into the context", details), show)


def check_loop_settings(budget: Any, threshold: Any, recall_limit: Any, *,
                        show: bool = False) -> Verdict:
    """Lesson 11: settings that put all four facts into the context while the mean prompt
    stays at or under LOOP_TOKEN_TARGET tokens per call."""
    name = "11 settings"
    if not _is_whole(budget) or not 300 <= budget <= 2000 or budget % 100:
        return _report(Verdict(name, False, f"budget must be a multiple of 100 in [300, 2000] "
                               f"(the slider's values), got {budget!r}"), show)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not (
            0.5 <= threshold <= 0.95):
        return _report(Verdict(name, False, f"threshold must be a number in [0.5, 0.95], got "
                               f"{threshold!r}"), show)
    if not _is_whole(recall_limit) or not 0 <= recall_limit <= 8:
        return _report(Verdict(name, False, f"recall_limit must be a whole number in [0, 8], got "
                               f"{recall_limit!r}"), show)
    threshold = round(float(threshold), 4)
    mine = _loop_summary(budget, threshold, recall_limit)
    details = (f"budget {budget}, threshold {threshold}, recall_limit {recall_limit}: "
               f"{mine['facts_in_context']}/4 facts in the context, "
               f"{mine['mean_tokens_per_call']} tokens per call, "
               f"{mine['summarizations']} summarizations",)
    if mine["facts_in_context"] < 4:
        return _report(Verdict(name, False, f"{mine['facts_in_context']} of 4 facts reach the "
                               "context: keep more in working memory or recall more", details), show)
    if mine["mean_tokens_per_call"] > LOOP_TOKEN_TARGET:
        return _report(Verdict(name, False, f"all 4 facts are there, but {mine['mean_tokens_per_call']}"
                               f" tokens per call > {LOOP_TOKEN_TARGET}: send less", details), show)
    return _report(Verdict(name, True, f"all 4 facts in the context at "
                           f"{mine['mean_tokens_per_call']} <= {LOOP_TOKEN_TARGET} tokens per call",
                           details), show)


# -------------------------------------------------------------- lesson 12
# (checkers of notebooks/12_parameter_tuning.ipynb go here)
def check_beats_bm25(config: Any, *, show: bool = False) -> Verdict:
    """Lesson 12: a configuration of a tunable policy (``tuning_app.KNOBS``: bm25 or attention)
    whose evidence recall at 1,000 tokens on the bundled LoCoMo-style fixture is above the
    default BM25's, with no context over the budget. The checker evaluates it itself."""
    from memorykit.evaluation import BM25Retrieval, evaluate, load_locomo
    from memorykit.lessons.tuning_app import EXERCISE_BUDGET, FIXTURE, evaluate_configuration

    name = "12 beat BM25"
    data = load_locomo(FIXTURE, verify=False)
    try:
        row = evaluate_configuration(config, data, EXERCISE_BUDGET)
    except ValueError as exc:
        return _report(Verdict(name, False, str(exc)), show)
    base = evaluate(BM25Retrieval(), data, EXERCISE_BUDGET).summary()
    params = ", ".join(f"{k}={row[k]}" for k in row if k not in
                       ("policy", "budget", "recall", "tokens", "max_tokens"))
    details = (f"{row['policy']}({params}): recall {row['recall']:.3f}, "
               f"{row['tokens']:.0f} tokens on average, at most {row['max_tokens']}",
               f"bm25(k1=1.5, b=0.75): recall {base['recall']:.3f}, {base['tokens']:.0f} tokens")
    if row["max_tokens"] > EXERCISE_BUDGET:
        return _report(Verdict(name, False, f"a context of {row['max_tokens']} tokens is over the "
                               f"{EXERCISE_BUDGET:,}-token budget", details), show)
    if row["recall"] <= base["recall"]:
        return _report(Verdict(
            name, False, f"recall {row['recall']:.3f} does not beat BM25's {base['recall']:.3f}: "
            "look at the per-category bars (which category does BM25 miss, and why?)",
            details), show)
    return _report(Verdict(name, True, f"recall {row['recall']:.3f} beats BM25's "
                           f"{base['recall']:.3f} at {EXERCISE_BUDGET:,} tokens", details), show)
