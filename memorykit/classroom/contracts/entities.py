"""The relevance-score contract: what every implementation of document D0's score must keep.

    score = w_recency * exp(-decay * age_minutes) + w_frequency * min(access_count / cap, 1)

The subject is a ``ScoreFunction``, ``(age_minutes, access_count, weights) -> float``. The test
suite runs these contracts over every implementation of the formula in
``memorykit.entities.scoring`` (``tests/test_entity_score_contract.py``: the scalar
``RelevanceWeights.score``, the vectorized ``relevance_scores``, the plain-float ``components``
and ``candidate_scores`` a memory scores its victims with); lesson 04's build-it-yourself
exercise runs them over the student's score (``memorykit.classroom.lesson04_checks.check_relevance_score``).

Inputs are random but reproducible (Hypothesis with a fixed seed): ages of 0-600 minutes, access
counts of 0-40, D0's weights and random ones (weights in [0, 1], decay in [0, 1] per minute,
caps of 1-20 accesses).

Taught in ``notebooks/04_entity_memory.ipynb``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.classroom.contracts.runner import Contract
from memorykit.entities.scoring import SEED_WEIGHTS, RelevanceWeights

ScoreFunction = Callable[[float, float, RelevanceWeights], float]

_PROPERTY = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False, suppress_health_check=[HealthCheck.too_slow])
_TOLERANCE = 1e-9

def _weights(drawn: tuple[float, float, float, int, bool]) -> RelevanceWeights:
    """Random weights; one of the two weights is at least 0.01, so their sum is positive."""
    a, b, decay, cap, swap = drawn
    w_recency, w_frequency = (b, a) if swap else (a, b)
    return RelevanceWeights(w_recency, w_frequency, decay, cap)


AGES = st.floats(min_value=0.0, max_value=600.0, allow_nan=False)
COUNTS = st.integers(min_value=0, max_value=40)
WEIGHTS = st.one_of(
    st.just(SEED_WEIGHTS),
    st.tuples(st.floats(0.0, 1.0), st.floats(0.01, 1.0), st.floats(0.0, 1.0),
              st.integers(1, 20), st.booleans()).map(_weights),
)
"""D0's weights (0.6, 0.4, 0.1 per minute, cap 10) or random ones."""


def _label(w: RelevanceWeights) -> str:
    return (f"weights (w_recency={w.w_recency:g}, w_frequency={w.w_frequency:g}, "
            f"decay_per_minute={w.decay_per_minute:g}, frequency_cap={w.frequency_cap:g})")


def _number(score: ScoreFunction, age: float, count: float, w: RelevanceWeights) -> float:
    """The subject's score, refused unless it is one finite real number."""
    value: Any = score(age, count, w)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AssertionError(f"relevance({age!r}, {count!r}, weights) returned {value!r}: "
                             "return the score alone, one float")
    value = float(value)
    if not math.isfinite(value):
        raise AssertionError(f"relevance({age!r}, {count!r}, weights) returned {value!r}: "
                             "the score must be a finite number")
    return value


def _in_range(score: ScoreFunction) -> None:
    @_PROPERTY
    @given(age=AGES, count=COUNTS, w=WEIGHTS)
    def scores(age: float, count: int, w: RelevanceWeights) -> None:
        s = _number(score, age, count, w)
        top = w.w_recency + w.w_frequency
        assert -_TOLERANCE <= s <= top + _TOLERANCE, (
            f"relevance({age!r}, {count}) = {s:.6f} with {_label(w)}: a score lies in [0, "
            f"w_recency + w_frequency] = [0, {top:g}]; recency exp(-decay x age) and frequency "
            "min(accesses / cap, 1) each lie in [0, 1]")

    scores()


def _falls_with_age(score: ScoreFunction) -> None:
    @_PROPERTY
    @given(age=AGES, older=AGES, count=COUNTS, w=WEIGHTS)
    def ages(age: float, older: float, count: int, w: RelevanceWeights) -> None:
        young, old = sorted((age, older))
        s_young, s_old = _number(score, young, count, w), _number(score, old, count, w)
        assert s_old <= s_young + _TOLERANCE, (
            f"with {count} accesses, age {young:g} min scores {s_young:.6f} but the older age "
            f"{old:g} min scores {s_old:.6f}: recency must fall with age, exp(-decay x age), "
            f"with {_label(w)}")

    ages()


def _grows_with_accesses_up_to_the_cap(score: ScoreFunction) -> None:
    @_PROPERTY
    @given(age=AGES, count=COUNTS, more=COUNTS, w=WEIGHTS)
    def counts(age: float, count: int, more: int, w: RelevanceWeights) -> None:
        few, many = sorted((count, more))
        s_few, s_many = _number(score, age, few, w), _number(score, age, many, w)
        assert s_many >= s_few - _TOLERANCE, (
            f"at age {age:g} min, {few} accesses score {s_few:.6f} but {many} score only "
            f"{s_many:.6f}: more accesses never lower the score, with {_label(w)}")
        if few >= w.frequency_cap:
            assert abs(s_many - s_few) <= _TOLERANCE, (
                f"at age {age:g} min, {few} and {many} accesses score {s_few:.6f} and "
                f"{s_many:.6f}: past the cap of {w.frequency_cap:g} accesses frequency stays "
                "at 1, min(accesses / cap, 1)")

    counts()


def _hand_computed_points(score: ScoreFunction) -> None:
    """D0's formula at points worked by hand (moved from tests/test_entities_memory.py)."""
    points = (
        (0, 0, SEED_WEIGHTS, 0.6, "a new entity, never accessed since it arrived"),
        (10, 5, SEED_WEIGHTS, 0.6 * math.exp(-1) + 0.4 * 0.5, "0.6 e^-1 + 0.4 x 5/10 = 0.42073"),
        (0, 20, SEED_WEIGHTS, 1.0, "frequency capped at 1: 20 accesses count as 10"),
        (5, 10, SEED_WEIGHTS, 0.6 * math.exp(-0.5) + 0.4, "0.6 e^-0.5 + 0.4 = 0.76392"),
        (30, 1, SEED_WEIGHTS, 0.6 * math.exp(-3) + 0.04, "0.6 e^-3 + 0.4 x 1/10 = 0.06987"),
        (2, 1, RelevanceWeights(1.0, 0.0, 0.5, 2), math.exp(-1.0),
         "decay 0.5 per minute: e^-(0.5 x 2)"),
        (0, 1, RelevanceWeights(0.0, 1.0, 0.1, 2), 0.5, "cap 2: one access is half the cap"),
    )
    for age, count, w, expected, why in points:
        got = _number(score, age, count, w)
        assert abs(got - expected) <= 1e-12, (
            f"relevance({age}, {count}) with {_label(w)} = {got:.6f}, expected {expected:.6f} "
            f"({why})")


SCORE_CONTRACTS: tuple[Contract[ScoreFunction], ...] = (
    Contract("the formula at points worked by hand (D0's weights, then a faster decay and a "
             "smaller cap)", _hand_computed_points),
    Contract("the score is one number in [0, w_recency + w_frequency]", _in_range),
    Contract("an older entity never scores higher (same accesses)", _falls_with_age),
    Contract("more accesses never score lower, and accesses past the cap add nothing",
             _grows_with_accesses_up_to_the_cap),
)
"""The contract every implementation of D0's relevance score keeps."""


def library_score(age_minutes: float, access_count: float, weights: RelevanceWeights) -> float:
    """The library's score, ``RelevanceWeights.score``, as a ``ScoreFunction``."""
    return weights.score(age_minutes, access_count)[2]


def agrees_with_library(reference: ScoreFunction = library_score,
                        what: str = "the library's RelevanceWeights.score") -> Contract[ScoreFunction]:
    """The subject scores what ``reference`` scores (to 1e-9) on random ages, counts and
    weights: a build-it-yourself exercise checks the student's score against the library's."""

    def check(score: ScoreFunction) -> None:
        @_PROPERTY
        @given(age=AGES, count=COUNTS, w=WEIGHTS)
        def same(age: float, count: int, w: RelevanceWeights) -> None:
            theirs, ours = _number(score, age, count, w), _number(reference, age, count, w)
            assert abs(theirs - ours) <= _TOLERANCE, (
                f"relevance({age!r}, {count}) with {_label(w)}: yours {theirs:.6f}, {what} "
                f"{ours:.6f}")

        same()

    return Contract(f"it scores what {what} scores", check)
