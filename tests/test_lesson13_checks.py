"""Lesson 13's exercise: the update-policy contract over the library's policies, the checker over
right and wrong rules, and the rule the contract reads against a brute-force definition."""

from __future__ import annotations

import random

import pytest

from memorykit.classroom.contracts import run_contracts
from memorykit.classroom.contracts.facts import (
    KEY,
    REFUSES_BAD_INPUT,
    UPDATE_POLICY_CONTRACTS,
    firm_current,
    firm_rule,
    statements_of,
)
from memorykit.classroom.lesson13_checks import FIRM, check_update_rule
from memorykit.facts.statement import Statement
from memorykit.facts.timeline import KeepBothDated, KeepStrongest, LatestWins, UpdatePolicy


def _refuse(statements):
    """The checks the exercise asks for, shared by the rules below that are wrong elsewhere."""
    if len(statements) == 0:
        raise ValueError(f"statements must not be empty, got {statements!r}")
    for s in statements:
        if not isinstance(s, Statement):
            raise TypeError(f"statements must be Statement objects, got {s!r}")
    if len({s.key for s in statements}) > 1:
        raise ValueError(f"statements must be of one fact, got {statements!r}")


class FirmLatest(UpdatePolicy):
    """The exercise's rule, written as a student would."""

    def choose_current(self, statements):
        _refuse(statements)
        firm = [s for s in statements if s.strength >= 0.5]
        return firm[-1] if firm else statements[-1]


class Strongest(UpdatePolicy):
    """The strongest, the first among equals (the notebook's wrong answer)."""

    def choose_current(self, statements):
        _refuse(statements)
        return max(statements, key=lambda s: s.strength)


class First(UpdatePolicy):
    def choose_current(self, statements):
        _refuse(statements)
        return statements[0]


class SkipsCancellations(UpdatePolicy):
    def choose_current(self, statements):
        _refuse(statements)
        firm = [s for s in statements if s.strength >= 0.5 and s.value]
        return firm[-1] if firm else statements[-1]


class SortsInPlace(UpdatePolicy):
    def choose_current(self, statements):
        _refuse(statements)
        statements.sort(key=lambda s: s.strength >= 0.5)
        return statements[-1]


class Promotes(UpdatePolicy):
    def choose_current(self, statements):
        _refuse(statements)
        chosen = FirmLatest().choose_current(statements)
        return Statement(chosen.key, chosen.value, chosen.message_id, chosen.at, 1.0)


class Unchecked(UpdatePolicy):
    def choose_current(self, statements):
        firm = [s for s in statements if s.strength >= 0.5]
        return firm[-1] if firm else statements[-1]


class Mute(FirmLatest):
    """Refuses bad input, but says nothing about what was wrong."""

    def choose_current(self, statements):
        try:
            _refuse(statements)
        except (TypeError, ValueError):
            raise ValueError("bad input") from None
        return super().choose_current(statements)


class MixesKeys(FirmLatest):
    def choose_current(self, statements):
        if not statements or not all(isinstance(s, Statement) for s in statements):
            _refuse(statements)
        firm = [s for s in statements if s.strength >= 0.5]
        return firm[-1] if firm else statements[-1]


@pytest.mark.parametrize("policy", [LatestWins, KeepBothDated, KeepStrongest],
                         ids=lambda p: p.__name__)
@pytest.mark.parametrize("contract", UPDATE_POLICY_CONTRACTS, ids=lambda c: c.name[:40])
def test_the_library_policies_keep_the_update_policy_contract(policy, contract):
    contract(policy)


def test_the_rule_the_contract_reads_is_the_latest_firm_else_the_latest():
    # Seeded random sequences against the rule's plain definition, edges (exactly FIRM) included.
    rng = random.Random(13)
    for _ in range(2_000):
        steps = [(rng.choice(["friday", "monday", ""]),
                  rng.choice([1.0, 0.9, FIRM, 0.49, 0.2, rng.uniform(0.01, 1.0)]))
                 for _ in range(rng.randint(1, 9))]
        statements = statements_of(steps)
        firm = [s for s in statements if s.strength >= FIRM]
        assert firm_current(statements, FIRM) is (firm[-1] if firm else statements[-1]), steps


def test_a_right_rule_passes_every_contract():
    verdict = check_update_rule(FirmLatest)
    assert verdict.passed and verdict.reason == "all 6 contracts hold"
    assert check_update_rule(FirmLatest) == verdict  # the same verdict on every run


@pytest.mark.parametrize(("policy", "failed", "says"), [
    (Strongest, 2, "but m2 ('monday', strength 1) came after it, at least as strong"),
    (First, 2, "'friday' is superseded"),
    (SkipsCancellations, 2, "(a cancellation ends the fact: it is a statement like any other)"),
    (SortsInPlace, 2, "the list it was given changed from ['m1', 'm2'] to ['m2', 'm1']"),
    (Promotes, 4, "it returned a copy of m1 ('friday', strength 1), not the statement itself"),
    (Unchecked, 1, "no statements ([]) crashed it with IndexError"),
    (Mute, 1, "refused with ValueError('bad input'), which does not name the value"),
    (MixesKeys, 1, "statements of two keys"),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_each_wrong_rule_fails_saying_which_way_to_move(policy, failed, says):
    verdict = check_update_rule(policy)
    assert not verdict.passed, policy.__name__
    assert verdict.reason.startswith(f"{failed} of 6 contracts failed"), verdict.reason
    assert says in verdict.details[0], verdict.details[0]


def test_the_library_policies_fail_the_exercise_by_their_own_rule():
    latest = run_contracts(LatestWins, (firm_rule(FIRM),), exercise="x")
    assert "a tentative statement never overrules a firm one" in latest.details[0]
    assert "smallest failing input" in latest.details[0]
    strongest = run_contracts(KeepStrongest, (firm_rule(FIRM),), exercise="x")
    assert "is firm and came later" in strongest.details[0]
    # They leave bad input to UpdatePolicy.apply: called on their own they crash on it.
    assert "crashed it with IndexError" in run_contracts(
        LatestWins, (REFUSES_BAD_INPUT,), exercise="x").details[0]


def test_a_library_class_or_its_rule_inherited_gets_no_marks():
    class Inherits(KeepBothDated):
        pass

    assert "takes its rule from the library's LatestWins" in check_update_rule(Inherits).reason
    assert "KeepStrongest is the library's KeepStrongest" in check_update_rule(KeepStrongest).reason
    assert "does not override choose_current" in check_update_rule(UpdatePolicy).reason


@pytest.mark.parametrize("answer", [FirmLatest(), "FirmLatest", Statement, None])
def test_an_answer_of_the_wrong_kind_is_refused_naming_it(answer):
    with pytest.raises(TypeError, match="policy_class must be a class that subclasses UpdatePolicy"):
        check_update_rule(answer)


def test_a_rule_that_raises_on_a_tuple_is_told_the_timeline_passes_one():
    class ListsOnly(FirmLatest):
        def choose_current(self, statements):
            return super().choose_current(statements.copy())

    verdict = check_update_rule(ListsOnly)
    assert not verdict.passed
    assert any("given a tuple of statements it raised AttributeError" in d for d in verdict.details)


def test_statements_of_builds_one_fact_in_order():
    made = statements_of([("friday", 1.0), ("", 0.3)])
    assert [(s.key, s.value, s.message_id, s.at, s.strength) for s in made] == [
        (KEY, "friday", "m1", 3600.0, 1.0), (KEY, "", "m2", 7200.0, 0.3)]
