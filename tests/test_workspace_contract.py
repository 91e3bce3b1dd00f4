"""The working-memory contracts (memorykit.classroom.contracts.workspace) over the library's own rules.

They live in the package so that lessons 06-08's build-it-yourself exercises run exactly these
checks over a student's escalation rule, salience rule and column assembly.
"""

from __future__ import annotations

import math

import pytest

from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.workspace import (
    COLUMN_CONTRACTS,
    COLUMNS_AGREE,
    ESCALATION_AGREES,
    ESCALATION_CONTRACTS,
    SALIENCE_AGREES,
    SALIENCE_CONTRACTS,
    library_escalated_priority,
    library_object_salience,
)
from memorykit.classroom.lesson06_checks import check_escalated_priority
from memorykit.classroom.lesson07_checks import check_object_salience
from memorykit.classroom.lesson08_checks import check_three_columns
from memorykit.workspace.render import three_column_lines


@pytest.mark.parametrize("contract", (*ESCALATION_CONTRACTS, ESCALATION_AGREES), ids=lambda c: c.name[:40])
def test_the_library_escalation_keeps_the_contract(contract):
    contract(library_escalated_priority)


@pytest.mark.parametrize("contract", (*SALIENCE_CONTRACTS, SALIENCE_AGREES), ids=lambda c: c.name[:40])
def test_the_library_salience_keeps_the_contract(contract):
    contract(library_object_salience)


@pytest.mark.parametrize("contract", (*COLUMN_CONTRACTS, COLUMNS_AGREE), ids=lambda c: c.name[:40])
def test_the_library_column_assembly_keeps_the_contract(contract):
    contract(three_column_lines)


def _band(priority, remaining, s, strict=True):
    below = (lambda r, f: r < f) if strict else (lambda r, f: r <= f)
    factor = (s.critical_multiplier if below(remaining, s.critical_fraction)
              else s.warn_multiplier if below(remaining, s.warn_fraction) else 1.0)
    return min(1.0, priority * factor)


def test_escalation_checker_passes_a_right_rule_and_explains_wrong_ones():
    assert check_escalated_priority(_band).passed
    inclusive = check_escalated_priority(lambda p, r, s: _band(p, r, s, strict=False))
    assert not inclusive and any("use <, not <=" in d for d in inclusive.details)
    no_cap = run_contracts(lambda p, r, s: p * 2.0 if r < s.critical_fraction else p,
                           ESCALATION_CONTRACTS, exercise="t")
    assert not no_cap and any("capped at 1" in d for d in no_cap.details)


def test_escalation_checker_refuses_the_librarys_rule():
    # Calling the library's escalation passed every contract: it is the library's own rule.
    from memorykit.workspace import notes
    from memorykit.workspace.notes import escalation_factor

    def direct(priority, remaining, settings):
        return min(1.0, priority * escalation_factor(remaining, settings))

    def through_module(priority, remaining, settings):
        return min(1.0, priority * notes.escalation_factor(remaining, settings))

    for rule in (direct, through_module, library_escalated_priority):
        v = check_escalated_priority(rule)
        assert not v.passed and "that is the library's rule" in v.reason


def test_salience_checker_passes_the_rule_and_catches_an_off_by_one():
    def rule(t, th, nh, rv, st, w, recent=lambda t, w: t < w.recency_turns):
        return (w.recent_mention * recent(t, w) + w.active_task_link * (th <= w.link_hops)
                + w.note_link * (nh <= w.link_hops) + w.relationship * rv + w.belief_strength * st)

    assert check_object_salience(rule).passed
    v = check_object_salience(lambda *a: rule(*a, recent=lambda t, w: t <= w.recency_turns))
    assert not v and any("turns_since_mention < recency_turns" in d for d in v.details)
    assert library_object_salience(math.inf, math.inf, math.inf, 0.0, 0.0,
                                   __import__("memorykit").workspace.SalienceWeights()) == 0.0


def test_column_checker_passes_the_assembly_and_explains_a_lost_count():
    from memorykit.workspace.render import column_lines

    def assembly(task_lines, note_lines, objects, *, max_slots, top_notes, max_objects):
        return column_lines(task_lines, list(note_lines)[:top_notes], len(note_lines),
                            list(objects)[:max_objects], max_slots=max_slots)

    assert check_three_columns(assembly).passed
    # Issue 24: the library's own assembly, or a wrapper around it, passed with no work done.
    for handed_over in (three_column_lines, lambda *a, **k: three_column_lines(*a, **k)):
        v = check_three_columns(handed_over)
        assert not v and len(v.details) == 1 and "not a call to the library's three_column_lines" in v.details[0]

    def forgets_hidden(task_lines, note_lines, objects, *, max_slots, top_notes, max_objects):
        shown = note_lines[:top_notes]
        return column_lines(task_lines, shown, len(shown), objects[:max_objects], max_slots=max_slots)

    v = check_three_columns(forgets_hidden)
    assert not v and any("never lost silently" in d for d in v.details)


@pytest.mark.parametrize("checker", [check_escalated_priority, check_object_salience, check_three_columns])
def test_code_checkers_refuse_what_is_not_a_function(checker):
    with pytest.raises(TypeError, match="must be your function itself"):
        checker(0.5)
    with pytest.raises(TypeError, match="must take the arguments"):
        checker(lambda: 1.0)
