"""The update-policy contract: what every rule that picks a fact's current statement keeps.

The subject is a ``PolicyMaker``, ``() -> UpdatePolicy`` (the class itself will do): the test
suite runs ``UPDATE_POLICY_CONTRACTS`` over the library's ``LatestWins``, ``KeepBothDated`` and
``KeepStrongest`` (``memorykit.facts.timeline``; ``tests/test_lesson13_checks.py``), and lesson
13's build-it-yourself exercise runs them over the student's ``choose_current``, with
``firm_rule`` (the exercise's own rule) after them
(``memorykit.classroom.lesson13_checks.check_update_rule``).

``choose_current(statements)`` gets the statements of one fact (one key) in the order they were
said and returns the current one. Whatever the rule, it must (``UPDATE_POLICY_CONTRACTS``):

* never lose the current value: return one of the statements given, the object itself;
* never serve a superseded value as current: a later statement at least as strong as the one
  chosen replaces it (a cancellation, value ``""``, included);
* leave the statements it was given as they were, and take any sequence (a tuple too);
* recorded in a ``FactTimeline``, lose nothing: every statement kept or returned as removed.

``REFUSES_BAD_INPUT`` asks a ``choose_current`` called on its own to refuse bad input (no
statements, something that is not a ``Statement``, two keys) with an error naming the value,
losing nothing; ``firm_rule`` is lesson 13's rule (a tentative statement never overrules a
firm one).

The sequences are random but reproducible (Hypothesis with a fixed seed): 1-8 statements of one
key, values with repeats and cancellations, strengths on a grid around 0.5 (equal strengths
are common) and a few anywhere in (0, 1].

Taught in ``notebooks/13_changing_facts.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.classroom.contracts.runner import Contract
from memorykit.facts.statement import Statement
from memorykit.facts.timeline import FactTimeline, UpdatePolicy

PolicyMaker = Callable[[], UpdatePolicy]

# Fixed seeds: a checker gives the same verdict on every run, and no example database is
# written next to a student's notebook.
_PROPERTY = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False, suppress_health_check=[HealthCheck.too_slow])

KEY = "deadline of the apollo report"
"""The fact every generated sequence is about."""
OTHER_KEY = "address of the office"
"""A second fact, for the mixed-keys input that must be refused."""

Step = tuple[str, float]
VALUES = ("friday", "monday", "tuesday", "", "4712", "4721")
"""The values a statement may say; ``""`` is a cancellation (the fact no longer holds)."""
STRENGTH = st.one_of(*[st.sampled_from([1.0, 0.9, 0.6, 0.5, 0.45, 0.3, 0.1])] * 4,
                     st.floats(min_value=0.01, max_value=1.0))
# A value is drawn as an offset from the statement's position, so that the smallest failing
# sequence Hypothesis reports says a different value at each step (repeats stay possible).
STEPS = st.lists(st.tuples(st.integers(0, len(VALUES) - 1), STRENGTH), min_size=1, max_size=8).map(
    lambda drawn: [(VALUES[(k + i) % len(VALUES)], s) for i, (k, s) in enumerate(drawn)])
"""1-8 statements of one fact: (value, strength) each."""


def statements_of(steps: Sequence[Step], key: str = KEY) -> list[Statement]:
    """The statements ``steps`` describe, in order: ids ``m1``, ``m2``, ..., an hour apart."""
    return [Statement(key, value, f"m{i}", at=3600.0 * i, strength=strength)
            for i, (value, strength) in enumerate(steps, start=1)]


def describe(statement: Statement) -> str:
    """``m2 ('monday', strength 0.3)``: how a verdict names a statement."""
    value = "cancelled" if statement.value == "" else repr(statement.value)
    return f"{statement.message_id} ({value}, strength {statement.strength:g})"


def position(chosen: Any, statements: Sequence[Statement]) -> int:
    """Where ``chosen`` is among ``statements`` (by identity), or ``AssertionError`` saying what
    it is instead: the current value is one of the statements given, never None or a new one."""
    for i, statement in enumerate(statements):
        if chosen is statement:
            return i
    given_ids = ", ".join(s.message_id for s in statements)
    if any(chosen == s for s in statements):
        raise AssertionError(f"it returned a copy of {describe(chosen)}, not the statement "
                             "itself: return the object you were given")
    raise AssertionError(f"it returned {chosen!r}, which is none of the statements given "
                         f"({given_ids}): the current value is always one of them (never None, "
                         "never a new or changed Statement)")


def _current_is_one_given(make: PolicyMaker) -> None:
    @_PROPERTY
    @given(steps=STEPS)
    def statements(steps: list[Step]) -> None:
        given_statements = statements_of(steps)
        position(make().choose_current(list(given_statements)), given_statements)

    statements()


def _never_serves_superseded(make: PolicyMaker) -> None:
    @_PROPERTY
    @given(steps=STEPS)
    def statements(steps: list[Step]) -> None:
        given_statements = statements_of(steps)
        chosen = make().choose_current(list(given_statements))
        at = position(chosen, given_statements)
        for later in given_statements[at + 1:]:
            assert later.strength < chosen.strength, (
                f"it served {describe(chosen)} as current, but {describe(later)} came after it, "
                f"at least as strong: {chosen.value!r} is superseded"
                + (" (a cancellation ends the fact: it is a statement like any other)"
                   if later.value == "" else ""))

    statements()


def _input_left_unchanged(make: PolicyMaker) -> None:
    @_PROPERTY
    @given(steps=STEPS)
    def statements(steps: list[Step]) -> None:
        given_statements = statements_of(steps)
        passed = list(given_statements)
        make().choose_current(passed)
        assert len(passed) == len(given_statements) and all(
            a is b for a, b in zip(passed, given_statements)), (
                f"the list it was given changed from {[s.message_id for s in given_statements]} "
                f"to {[getattr(s, 'message_id', s) for s in passed]}: the caller still holds it "
                "(its record of what was said): sort or filter a copy")

    statements()
    # A FactTimeline passes a tuple: any sequence must do, which also rules out sorting in place.
    pair = tuple(statements_of([("friday", 0.9), ("monday", 0.3)]))
    try:
        make().choose_current(pair)
    except Exception as error:  # noqa: BLE001 - the student's code may raise anything
        raise AssertionError(f"given a tuple of statements it raised {type(error).__name__}: "
                             f"{error} (a FactTimeline passes a tuple): read the sequence, "
                             "never change it") from None


def _bad_input_refused(make: PolicyMaker) -> None:
    first = statements_of([("friday", 0.9)])[0]
    elsewhere = Statement(OTHER_KEY, "12 baker street", "m2", at=7200.0)
    for bad, named, what in (([], "[]", "no statements"),
                             ([first, "friday"], "friday", "a str among the statements"),
                             ([first, elsewhere], OTHER_KEY, "statements of two keys")):
        kept = list(bad)
        try:
            chosen = make().choose_current(bad)
        except (TypeError, ValueError) as error:
            assert named in str(error) or (not bad and "empty" in str(error).lower()), (
                f"{what} ({bad!r}) was refused with {type(error).__name__}({str(error)!r}), "
                f"which does not name the value: say what was wrong with it ({named!r})")
        except Exception as error:  # noqa: BLE001 - the student's code may raise anything
            raise AssertionError(
                f"{what} ({bad!r}) crashed it with {type(error).__name__}: {error} (a crash "
                "deep inside, not a refusal): check the input first and raise ValueError or "
                f"TypeError naming it ({named!r})") from None
        else:
            raise AssertionError(f"{what} ({bad!r}) was accepted (it returned {chosen!r}): "
                                 "refuse it with ValueError or TypeError naming the value")
        assert len(bad) == len(kept) and all(a is b for a, b in zip(bad, kept)), (
            f"refusing {what} changed the list it was given to {bad!r}: nothing may be lost")


def _nothing_lost_in_a_timeline(make: PolicyMaker) -> None:
    @_PROPERTY
    @given(steps=STEPS)
    def statements(steps: list[Step]) -> None:
        timeline = FactTimeline(make())
        recorded: list[Statement] = []
        removed: list[Statement] = []
        for statement in statements_of(steps):
            removed += [v.statement for v in timeline.record(statement)]
            recorded.append(statement)
            kept = [v.statement for v in timeline.versions(KEY)]
            lost = [s.message_id for s in recorded if not any(s is k for k in kept + removed)]
            assert not lost, (f"after recording {statement.message_id}, {lost} are neither kept "
                              "nor returned as removed: the timeline lost them")
            current = [v.statement.message_id for v in timeline.versions(KEY) if v.is_current]
            assert len(current) == 1, (f"after recording {statement.message_id} the timeline "
                                       f"holds {len(current)} current versions ({current}), not 1")
        size = len(timeline)
        try:
            timeline.record("friday")  # type: ignore[arg-type]
        except TypeError:
            pass
        assert len(timeline) == size, "a refused record changed the timeline"

    statements()


UPDATE_POLICY_CONTRACTS: tuple[Contract[PolicyMaker], ...] = (
    Contract("it never loses the current value: it returns one of the statements given, the "
             "object itself", _current_is_one_given),
    Contract("it never serves a superseded value as current: a later statement at least as "
             "strong replaces it", _never_serves_superseded),
    Contract("the statements it is given are left as they were (a list), and a tuple works "
             "as well", _input_left_unchanged),
    Contract("recorded in a FactTimeline, nothing is lost: every statement is kept or "
             "returned as removed, and one is current", _nothing_lost_in_a_timeline),
)
"""What every update policy keeps, the library's and a student's."""

REFUSES_BAD_INPUT: Contract[PolicyMaker] = Contract(
    "bad input (no statements, a non-Statement, two keys) is refused with ValueError or "
    "TypeError naming the value, and nothing is lost", _bad_input_refused)
"""For a ``choose_current`` called on its own: the library's policies leave this to
``UpdatePolicy.apply`` (a ``FactTimeline`` never passes them bad input); lesson 13's exercise
asks the student's rule to check its input itself."""


def firm_current(statements: Sequence[Statement], firm: float) -> Statement:
    """The exercise's rule, as the contract reads it: a later statement replaces the current
    one when it is firm (strength >= ``firm``) or the current one is not."""
    current = statements[0]
    for later in statements[1:]:
        if later.strength >= firm or current.strength < firm:
            current = later
    return current


def firm_rule(firm: float = 0.5) -> Contract[PolicyMaker]:
    """Lesson 13's rule: the current statement is the latest firm one (strength >= ``firm``); a
    tentative one never overrules a firm one, and when none is firm the latest is current."""

    def check(make: PolicyMaker) -> None:
        @_PROPERTY
        @given(steps=STEPS)
        def statements(steps: list[Step]) -> None:
            given_statements = statements_of(steps)
            chosen = given_statements[position(make().choose_current(list(given_statements)),
                                               given_statements)]
            expected = firm_current(given_statements, firm)
            if chosen is expected:
                return
            if expected.strength < firm:
                raise AssertionError(
                    f"no statement is firm (strength >= {firm:g}), so the latest, "
                    f"{describe(expected)}, is current until a firm one comes; it served "
                    f"{describe(chosen)}")
            if chosen.strength < firm:
                raise AssertionError(
                    f"it served {describe(chosen)}, a tentative statement (strength under "
                    f"{firm:g}), over the firm {describe(expected)}: a tentative statement "
                    "never overrules a firm one")
            raise AssertionError(
                f"it served {describe(chosen)}, but {describe(expected)} is firm and came later: "
                "a firm statement replaces what came before, however strong (strength decides "
                "whether a statement counts, not which one wins)")

        statements()

    return Contract(f"a tentative statement (strength under {firm:g}) never overrules a firm "
                    "one; a firm one replaces what came before; with none firm, the latest is "
                    "current", check)
