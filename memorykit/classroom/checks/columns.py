"""Checkers of lessons 06-08: notes with a TTL, object salience, the three columns.

The setting checkers replay the 30-day workflow of ``data/workflow/``; the build-it-yourself
checkers (``check_escalated_priority``, ``check_object_salience``, ``check_three_columns``) run
the library's own contracts (``memorykit.classroom.contracts.workspace``) over the student's function.
Every checker returns a ``Verdict`` (printed only with ``show=True``) and raises ``TypeError`` /
``ValueError`` naming the value on nonsense input. Taught in ``notebooks/06_notes_ttl.ipynb``,
``07_objects_salience.ipynb`` and ``08_three_columns.ipynb``.
"""

from __future__ import annotations

import inspect
from typing import Any

from memorykit._validate import require_between, require_bool, require_int
from memorykit.classroom.checks.verdict import Verdict, report

# -------------------------------------------------------------- lesson 06
# check_escalation, check_min_shared_entities, check_escalated_priority: notebooks/06_notes_ttl.ipynb.

ESCALATION_EXERCISE = {"remind": "U012", "quiet": "U016", "lead_minutes": 45.0, "max_warn_fraction": 0.5}
"""Lesson 06: U012 reaches 1.0 at least 45 min before it expires; U016 never surfaces on
priority; nothing escalates in the first half of its life."""


def check_escalation(warn_fraction: Any, warn_multiplier: Any, critical_fraction: Any,
                     critical_multiplier: Any, *, show: bool = False) -> Verdict:
    """Lesson 06: escalation settings under which the urgent note U012 (priority 0.56, TTL
    2.78 h) reaches effective priority 1.0 at least 45 minutes before it expires, the normal
    note U016 (priority 0.40, TTL 40.28 h) never passes the surfacing threshold 0.9, and no
    note escalates before half of its TTL has passed (warn_fraction <= 0.5)."""
    from memorykit.classroom.scenarios.workflow import default_workflow
    from memorykit.workspace import NoteSettings
    from memorykit.classroom.replays.escalation import band_facts

    name = "06 escalation"
    ex = ESCALATION_EXERCISE
    # Nonsense (a bool, NaN, a multiplier below 1, a critical band wider than the warning band)
    # raises NoteSettings' TypeError / ValueError, which names the setting and the value.
    settings = NoteSettings(warn_fraction=warn_fraction, warn_multiplier=warn_multiplier,
                            critical_fraction=critical_fraction,
                            critical_multiplier=critical_multiplier)
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
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"{label}: {ex['remind']} is at 1.0 for its last {lead:.0f} min "
                           f"and {ex['quiet']} stays quiet", details), show)


SURFACING_EXERCISE = {"min_precision": 0.8, "min_recall": 0.5}
"""Lesson 06: surfacing precision >= 80% with recall >= 50% on the 30-day workflow."""


def check_min_shared_entities(min_shared_entities: Any, *, show: bool = False) -> Verdict:
    """Lesson 06: a ``min_shared_entities`` for which surfacing on the labelled workflow has
    precision >= 0.8 and recall >= 0.5."""
    from memorykit.classroom.lesson06 import surfacing_report

    name = "06 surfacing"
    if isinstance(min_shared_entities, bool) or not isinstance(min_shared_entities, int):
        raise TypeError(f"min_shared_entities must be an integer from 1 to 6, got {min_shared_entities!r}")
    if not 1 <= min_shared_entities <= 6:
        raise ValueError(f"min_shared_entities must be an integer from 1 to 6, got {min_shared_entities!r}")
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
        return report(Verdict(name, False, f"min_shared_entities={min_shared_entities}: "
                               + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"min_shared_entities={min_shared_entities}: precision "
                           f"{r['precision']:.1%} and recall {r['recall']:.1%}", details), show)


# -------------------------------------------------------------- lesson 07
SALIENCE_EXERCISE = {"turn": 551, "target": "b_acme_gl", "keep": "maya", "top": 6}
"""Lesson 07: at turn 551 ("Acme Supplies sent INV-1118; can you check it?") the belief
"Acme Supplies invoices use GL 5100" and the user Maya Chen must both be in the top 6. Neither is
named by a task or note at that turn, so under direct links each stands on its own weight. Two of
the six places are pinned whatever the weights (the month-end close and the active task's
pattern, D2's ``get_relevant_patterns``), so four are won by ranking."""


SALIENCE_KEYS = ("recent_mention", "active_task_link", "note_link", "relationship", "belief_strength",
                 "recency_turns", "max_objects")
"""What lesson 07's exercise may set: the five weights (sliders in [0, 1]) and the two windows."""


def check_salience_weights(weights: Any, *, show: bool = False) -> Verdict:
    """Lesson 07: salience weights (a dict of the five weights, optionally recency_turns and
    max_objects) under which, at turn 551 of the default workflow, the belief "Acme Supplies
    invoices use GL 5100" and the user Maya Chen are both among the first 6 objects shown."""
    from memorykit.classroom.lesson07 import salience_lesson_data
    from memorykit.workspace import SalienceWeights
    from memorykit.workspace.objects import SALIENCE_COMPONENTS
    from memorykit.classroom.replays.salience import format_top_objects, object_rank

    name = "07 salience"
    ex = SALIENCE_EXERCISE
    if not isinstance(weights, dict):
        raise TypeError(f"weights must be a dict such as {{'belief_strength': 0.5}}, got {weights!r}")
    unknown = sorted(set(weights) - set(SALIENCE_KEYS))
    if unknown:
        raise ValueError(f"unknown weight(s) {', '.join(map(repr, unknown))}: this exercise sets only "
                         f"{', '.join(SALIENCE_KEYS)}")
    for k, v in weights.items():
        if k in SALIENCE_COMPONENTS:
            require_between(k, v, 0.0, 1.0)  # slider values; TypeError/ValueError name the value
    w = SalienceWeights(**weights)
    view = salience_lesson_data().view(ex["turn"], w)
    target, keep = object_rank(view, ex["target"]), object_rank(view, ex["keep"])
    label = " ".join(f"{k}={getattr(w, k):g}" for k in ("recent_mention", "active_task_link", "note_link",
                                                         "relationship", "belief_strength"))
    place = {None: "not shown at all"}
    details = (
        f"turn {ex['turn']}: the belief ranks {place.get(target, f'#{target}')}, Maya Chen "
        f"{place.get(keep, f'#{keep}')} (need both <= {ex['top']})",
        f"top {ex['top'] + 1} under these weights:\n    "
        + format_top_objects(view.top[:ex["top"] + 1]).replace("\n", "\n    "),
    )
    problems = []
    if target is None or target > ex["top"]:
        problems.append(f"the GL 5100 belief is not in the top {ex['top']}: no task or note names it at this turn (the "
                        "notes name Acme Supplies, the vendor, not the belief), so under "
                        "D2's direct links it earns only 0.88 x the belief weight, while the vendors "
                        "and people the tasks and notes name start with active_task_link + note_link")
    if keep is None or keep > ex["top"]:
        problems.append(f"Maya Chen fell out of the top {ex['top']}: no task or note names her here either, so "
                        "her score is relationship x 0.95 alone, and every belief (and person) you lift "
                        f"competes with her for the same {ex['top']} places")
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"{label}: the GL 5100 belief is #{target} and Maya Chen #{keep} at "
                           f"turn {ex['turn']}", details), show)


# -------------------------------------------------------------- lesson 08
COLUMNS_EXERCISE = {"min_reduction": 0.40, "min_top_notes": 8}
"""Lesson 08: keep at least D2's 8 notes, use >= 40% fewer tokens than the flat buffer of the
same state, never cut an object linked to an active task, and show as many objects as that allows."""


def most_objects_meeting_target(tables: Any, min_top_notes: int, min_reduction: float) -> int:
    """The largest max_objects for which some top_notes >= ``min_top_notes`` meets
    ``min_reduction`` without cutting a task-linked object at any turn (0 when none does)."""
    from memorykit.classroom.replays.columns import limits_grid

    grid = limits_grid(tables)
    ok = (grid["reduction"][min_top_notes:] >= min_reduction) & (grid["dropping"][min_top_notes:] == 0)
    fits = ok.any(axis=0).nonzero()[0]
    return int(fits[-1]) + 1 if fits.size else 0


def check_column_limits(top_notes: Any, max_objects: Any, *, show: bool = False) -> Verdict:
    """Lesson 08: top-notes and max-objects limits that keep at least D2's 8 notes, whose
    three-column prompt is, on average over the 600 turns of the default workflow, at least 40%
    smaller than the flat buffer of the same state, that never drop an object linked to an active
    task, and that show as many objects as any such limits can (the answer is unique)."""
    import numpy as np

    from memorykit.classroom.lesson08 import default_replay, default_tables
    from memorykit.classroom.replays.columns import line_costs, token_comparison

    name = "08 columns"
    ex = COLUMNS_EXERCISE
    require_int("top_notes", top_notes, minimum=0)
    require_int("max_objects", max_objects, minimum=1)
    tables = default_tables()
    cmp = token_comparison(tables, top_notes, max_objects)
    red = cmp.reduction
    best = most_objects_meeting_target(tables, ex["min_top_notes"], ex["min_reduction"])
    details = [
        f"three columns {cmp.columns.mean():.1f} tokens per turn vs {cmp.flat.mean():.1f} for the flat "
        f"buffer of the same state: {red:.1%} fewer (D2 claims 40%)",
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
        problems.append(f"top_notes={top_notes} hides notes D2's limits show; the exercise keeps at "
                        f"least D2's {ex['min_top_notes']}")
    if red < ex["min_reduction"]:
        costs = line_costs(default_replay())
        problems.append(f"only {red:.1%} fewer tokens than the flat buffer (need {ex['min_reduction']:.0%}): "
                        f"a note line costs {costs['note']:.0f} tokens on average and an object line "
                        f"{costs['object']:.0f}, so every extra note leaves room for fewer objects")
    if cmp.turns_dropping_linked.size:
        problems.append(f"max_objects={max_objects} cuts an object linked to an active task at "
                        f"{cmp.turns_dropping_linked.size} turns: the column must hold up to "
                        f"{int(tables.linked_needed.max())} objects to keep them all")
    if not problems and max_objects < best:
        # Not the number itself: a teaching cell shows this verdict for too few objects, and the
        # answer is that number.
        problems.append("these limits meet both conditions, but the column could show more objects and "
                        "still meet them: objects given away for nothing; raise max_objects until one "
                        "more would break a condition")
    label = f"top_notes={top_notes} max_objects={max_objects}"
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), tuple(details)), show)
    return report(Verdict(name, True, f"{label}: {red:.1%} fewer tokens than the flat buffer, every "
                           f"task-linked object kept at every turn, and {best} is the most objects any "
                           "such limits show", tuple(details)), show)


# ------------------------------------------------- build it yourself (lessons 06, 07, 08)
def _function(name: str, value: Any, params: tuple[str, ...], keywords: tuple[str, ...] = ()) -> None:
    """``value`` is a function taking ``params`` (positionally) and ``keywords``, or TypeError
    saying what to pass."""
    if isinstance(value, type) or not callable(value):
        raise TypeError(f"{name} must be your function itself (pass it without calling it), got {value!r}")
    try:
        inspect.signature(value).bind(*params, **dict.fromkeys(keywords))
    except TypeError:
        wanted = ", ".join([*params, *(["*"] if keywords else []), *keywords])
        raise TypeError(f"{name} must take the arguments ({wanted}), got "
                        f"{value.__name__}{inspect.signature(value)}") from None
    except ValueError:  # a builtin without a signature: let the contracts call it
        pass


def check_escalated_priority(escalated_priority: Any, *, show: bool = False) -> Verdict:
    """Lesson 06, build it yourself: ``escalated_priority(priority, remaining, settings)``
    returns a note's effective priority when ``remaining`` (a share of its TTL, 0-1) is left:
    min(1, priority x the factor of the band it is in; ``settings.warn_multiplier`` strictly
    below ``settings.warn_fraction``, ``critical_multiplier`` strictly below
    ``critical_fraction``). The library's escalation contracts run over it, and it must agree
    with the library's ``escalation_factor`` on generated notes and settings."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.workspace import ESCALATION_AGREES, ESCALATION_CONTRACTS

    require_bool("show", show)  # before the contracts run: a bad flag fails fast
    _function("escalated_priority", escalated_priority, ("priority", "remaining", "settings"))
    return report(run_contracts(escalated_priority, (*ESCALATION_CONTRACTS, ESCALATION_AGREES),
                                exercise="06 escalation rule"), show)


def check_object_salience(object_salience: Any, *, show: bool = False) -> Verdict:
    """Lesson 07, build it yourself: ``object_salience(turns_since_mention, task_hops, note_hops,
    relationship_value, strength, weights)`` returns one object's salience at one turn: the
    recent-mention weight if it was named fewer than ``weights.recency_turns`` turns ago, the
    task- and note-link weights if it is within ``weights.link_hops`` hops, plus relationship x
    relationship_value and belief_strength x strength. The library's salience contracts run over
    it, and it must agree with ``salience_matrix`` on generated objects and weights."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.workspace import SALIENCE_AGREES, SALIENCE_CONTRACTS

    require_bool("show", show)  # before the contracts run: a bad flag fails fast
    _function("object_salience", object_salience, ("turns_since_mention", "task_hops", "note_hops",
                                                   "relationship_value", "strength", "weights"))
    return report(run_contracts(object_salience, (*SALIENCE_CONTRACTS, SALIENCE_AGREES),
                                exercise="07 salience rule"), show)


def check_three_columns(three_columns: Any, *, show: bool = False) -> Verdict:
    """Lesson 08, build it yourself: ``three_columns(task_lines, note_lines, objects, *,
    max_slots, top_notes, max_objects)`` returns the prompt's lines under the column limits
    (the library's ``three_column_lines``). The workspace contract runs over it (limits held,
    nothing cut silently, the layout), and it must write the library's lines on generated
    columns."""
    from memorykit.classroom.contracts import run_contracts
    from memorykit.classroom.contracts.workspace import COLUMN_CONTRACTS, COLUMNS_AGREE

    require_bool("show", show)  # before the contracts run: a bad flag fails fast
    _function("three_columns", three_columns, ("task_lines", "note_lines", "objects"),
              ("max_slots", "top_notes", "max_objects"))
    return report(run_contracts(three_columns, (*COLUMN_CONTRACTS, COLUMNS_AGREE),
                                exercise="08 column assembly"), show)
