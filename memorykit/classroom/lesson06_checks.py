"""Lesson 06's exercise checkers: notes with a time-to-live (``notebooks/06_notes_ttl.ipynb``).

* ``check_escalation``: escalation settings under which a reminder arrives in time, computed
  with ``band_facts`` on two notes of the 30-day workflow of ``data/workflow/``: the urgent
  note U012 reaches effective priority 1.0 at least 45 minutes before it expires, the normal
  note U016 never passes the surfacing threshold, nothing escalates in the first half of a life,
  and U012 is not at 1.0 for more than its last hour.
* ``check_min_shared_entities``: an overlap rule and a surfacing threshold whose surfacing, on
  the labelled workflow replayed through ``WorkingMemory`` (``lesson06.surfacing_report``), has
  precision >= 80% and recall >= 65%.
* ``check_escalated_priority`` (build it yourself): the student's escalation rule, run through
  the library's escalation contracts (``memorykit.classroom.contracts.workspace``) and compared
  with ``escalation_factor`` on generated notes and settings.

Each returns a ``Verdict`` (printed only with ``show=True``) naming the numbers that decided it,
and refuses an answer of the wrong kind with a ``TypeError`` / ``ValueError`` naming the value.
"""

from __future__ import annotations

from typing import Any

from memorykit._validate import require_bool
from memorykit.classroom.verdict import Verdict, report, require_function


ESCALATION_EXERCISE = {"remind": "U012", "quiet": "U016", "lead_minutes": 45.0,
                       "max_lead_minutes": 60.0, "max_warn_fraction": 0.5}
"""Lesson 06: U012 reaches 1.0 at least 45 min (two turns) but at most 60 min before it
expires; U016 never surfaces on priority; nothing escalates in the first half of its life.
(Without the 60 min, the widest bands allowed, warn below 0.5 and critical below 0.49 at the
seed's multipliers, passed: U012 at 1.0 for its last 82 min, every note for half its life.)"""


def check_escalation(warn_fraction: Any, warn_multiplier: Any, critical_fraction: Any,
                     critical_multiplier: Any, *, show: bool = False) -> Verdict:
    """Lesson 06: escalation settings under which the urgent note U012 (priority 0.56, TTL
    2.78 h) reaches effective priority 1.0 at least 45 minutes before it expires, the normal
    note U016 (priority 0.40, TTL 40.28 h) never passes the surfacing threshold 0.9, no
    note escalates before half of its TTL has passed (warn_fraction <= 0.5), and U012 is at
    1.0 for at most its last 60 minutes (a reminder hours ahead is noise)."""
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
    elif lead > ex["max_lead_minutes"]:
        most = ex["max_lead_minutes"] / 60 / a["ttl_hours"]
        problems.append(f"{ex['remind']} sits at 1.0 for its last {lead:.2f} min (at most "
                        f"{ex['max_lead_minutes']:g} wanted: a note at the top of the queue for hours "
                        f"nags as much as it reminds); the band that reaches 1.0 must start with at "
                        f"most {most:.4f} of the TTL left")
    if fb.first_surfacing_at is not None:
        problems.append(f"{ex['quiet']} would surface on priority: {b['priority']:.2f} x "
                        f"{settings.critical_multiplier:g} = {b['priority'] * settings.critical_multiplier:.3f}"
                        f" > {settings.surfacing_threshold:g}; keep the multipliers <= "
                        f"{settings.surfacing_threshold / b['priority']:.3f}")
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"{label}: {ex['remind']} is at 1.0 for its last {lead:.0f} min "
                           f"and {ex['quiet']} stays quiet", details), show)


SURFACING_EXERCISE = {"min_precision": 0.8, "min_recall": 0.65}
"""Lesson 06: surfacing precision >= 80% with recall >= 65% on the 30-day workflow. (With
recall >= 50% and the threshold fixed at 0.9 the only answer was 2, the one integer between
the 1 and 3 the lesson prints; now the surfacing threshold has to move too.)"""


def check_min_shared_entities(min_shared_entities: Any, surfacing_threshold: Any = 0.9, *,
                              show: bool = False) -> Verdict:
    """Lesson 06: a ``min_shared_entities`` and a ``surfacing_threshold`` for which surfacing
    on the labelled workflow has precision >= 0.8 and recall >= 0.65."""
    from memorykit._validate import require_fraction
    from memorykit.classroom.lesson06 import surfacing_report

    name = "06 surfacing"
    if isinstance(min_shared_entities, bool) or not isinstance(min_shared_entities, int):
        raise TypeError(f"min_shared_entities must be an integer from 1 to 6, got {min_shared_entities!r}")
    if not 1 <= min_shared_entities <= 6:
        raise ValueError(f"min_shared_entities must be an integer from 1 to 6, got {min_shared_entities!r}")
    threshold = round(float(require_fraction("surfacing_threshold", surfacing_threshold)), 4)
    ex = SURFACING_EXERCISE
    r = surfacing_report(min_shared_entities, threshold)
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
                        "a note's entities, and a note whose escalated priority does not pass "
                        f"{threshold:g} at a turn is never brought up on priority either")
    label = f"min_shared_entities={min_shared_entities} surfacing_threshold={threshold:g}"
    if problems:
        return report(Verdict(name, False, f"{label}: " + "; ".join(problems), details), show)
    return report(Verdict(name, True, f"{label}: precision {r['precision']:.1%} and recall "
                           f"{r['recall']:.1%}", details), show)


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
    require_function("escalated_priority", escalated_priority, ("priority", "remaining", "settings"))
    used = _library_rule_names(escalated_priority)
    if used:
        return report(Verdict("06 escalation rule", False, f"escalated_priority calls "
                              f"{', '.join(used)}: that is the library's rule, not yours; choose "
                              "the band's factor with your own comparisons"), show)
    return report(run_contracts(escalated_priority, (*ESCALATION_CONTRACTS, ESCALATION_AGREES),
                                exercise="06 escalation rule"), show)


_LIBRARY_RULES = ("escalation_factor", "effective_priority", "library_escalated_priority")
"""The library's functions that compute the escalation Exercise 3 asks a student to write."""


def _library_rule_names(function: Any) -> list[str]:
    """The names of ``_LIBRARY_RULES`` that ``function``'s code (nested functions included)
    reads as a global, an attribute (``notes.escalation_factor``) or a name of the enclosing
    function; a local variable of the same name is not a call of the library's."""
    names: set[str] = set()
    codes = [getattr(function, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is None:
            continue
        names.update(code.co_names, code.co_freevars)
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return [n for n in _LIBRARY_RULES if n in names]
