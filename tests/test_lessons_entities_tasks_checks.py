"""Lessons 04 and 05's checkers: verdicts displayed once, nonsense refused, the build-it-yourself
checkers' messages."""

from __future__ import annotations

import math
import re

import pytest

from memorykit.classroom.lesson05_checks import check_admission_rule
from memorykit.classroom.lesson04_checks import (
    check_entity_capacity,
    check_entity_ttl,
    check_relevance_score,
)
from memorykit.workspace.tasks import strictly_above
from memorykit.workspace import TaskSlots


@pytest.mark.parametrize(("answer", "passed", "why"), [
    (14, True, "smallest memory that loses no antecedent; max_size 13 loses 1"),
    (13, False, "still evicts 1 antecedents"),
    (20, False, "19 loses nothing either"),
])
def test_check_entity_capacity(answer, passed, why, capsys):
    v = check_entity_capacity(answer)
    assert v.passed is passed and why in v.reason
    assert capsys.readouterr().out == ""  # returned, not printed: a bare call displays it once


@pytest.mark.parametrize(("answer", "passed", "why"), [
    (30, True, "shortest that keeps resolution success >= 93%"),
    (29, False, "forgets too early: 92.3% < 93%"),
    (31, False, "30 min works too"),
])
def test_check_entity_ttl(answer, passed, why, capsys):
    v = check_entity_ttl(answer)
    assert v.passed is passed and why in v.reason
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(("check", "value", "error", "message"), [
    (check_entity_capacity, 14.5, TypeError, "max_size must be an int number of entities, got 14.5 (float)"),
    (check_entity_capacity, True, TypeError, "got True (bool)"),
    (check_entity_capacity, "14", TypeError, "got '14' (str)"),
    (check_entity_capacity, float("nan"), TypeError, "got nan"),
    (check_entity_capacity, 0, ValueError, "max_size must be >= 1, got 0"),
    (check_entity_capacity, -3, ValueError, "got -3"),
    (check_entity_capacity, 10**9, ValueError, "max_size must be <= 1000"),
    (check_entity_ttl, 30.0, TypeError, "ttl_minutes must be an int number of minutes, got 30.0"),
    (check_entity_ttl, None, TypeError, "got None"),
    (check_entity_ttl, -5, ValueError, "ttl_minutes must be >= 1, got -5"),
    (check_entity_ttl, 10**6, ValueError, "ttl_minutes must be <= 1440"),
])
def test_lesson04_checkers_refuse_nonsense(check, value, error, message):
    with pytest.raises(error, match=re.escape(message)):
        check(value)


def test_show_prints_the_verdict_once(capsys):
    check_entity_capacity(14, show=True)
    assert capsys.readouterr().out.count("[04 capacity] PASS") == 1


def _seed_score(age, count, w):
    return w.w_recency * math.exp(-w.decay_per_minute * age) + w.w_frequency * min(
        count / w.frequency_cap, 1.0)


def test_check_relevance_score_passes_the_formula_and_says_what_to_change():
    assert check_relevance_score(_seed_score).passed
    hours = check_relevance_score(
        lambda age, count, w: _seed_score(age / 60, count, w))  # age read in hours
    assert not hours.passed
    assert "expected 0.420728 (0.6 e^-1 + 0.4 x 5/10 = 0.42073)" in hours.details[0]


@pytest.mark.parametrize("bad", [None, 0.6, "relevance", TaskSlots])
def test_check_relevance_score_wants_a_function(bad):
    with pytest.raises(TypeError, match="relevance must be a function"):
        check_relevance_score(bad)


def test_check_admission_rule_wants_a_taskslots_subclass():
    with pytest.raises(TypeError, match="subclasses TaskSlots"):
        check_admission_rule(TaskSlots())
    with pytest.raises(TypeError, match="subclasses TaskSlots"):
        check_admission_rule(lambda p, active: ("noted", None))
    v = check_admission_rule(TaskSlots)
    assert not v.passed and "does not override decide" in v.reason


def test_check_admission_rule_passes_the_rule():
    class Mine(TaskSlots):
        def decide(self, priority, active):
            s = self.settings
            if priority <= s.activation_threshold:
                return ("deferred" if priority < s.defer_below else "noted"), None
            if len(active) < s.max_slots:
                return "activated", None
            victim = max(range(len(active)), key=lambda i: (-active[i], i))
            # A product on the bound counts as on it (1.3 x 0.7 is 0.9099999999999999).
            if strictly_above(priority, s.preemption_ratio * active[victim]):
                return "preempted", victim
            return "noted", None

    v = check_admission_rule(Mine)
    assert v.passed, str(v)
