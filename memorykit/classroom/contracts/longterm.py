"""Long-term memory contracts: the episodic score and the recall rule, for any implementation.

Two subjects, each with the contract the library's own function keeps:

* an **episodic score**, ``(keywords, query_words, age_hours, alpha, beta, tau_hours) -> S``
  with ``S = alpha * |K & T| / |T| + beta * exp(-age / tau)`` (D3's hybrid relevance, taught in
  ``notebooks/09_long_term_memory.ipynb``): bounded, never rising with age, never falling with
  overlap or a slower decay;
* a **recall rule**, ``(scores, threshold, limit) -> positions`` (architecture C's selection,
  ``memorykit.longterm.semantic.select_recalled``, taught in ``notebooks/10_architectures.ipynb``):
  the budget holds, nothing at or under the threshold comes back, nothing above it is dropped
  silently, best first, deterministic.

The test suite runs both contracts over the library's implementations
(``tests/test_longterm_contract.py``); the lessons' build-it-yourself exercises run them over a
student's function (``check_episodic_score``, ``check_recall_rule``), together with "agrees with
the library's version" on random inputs. Inputs are random but reproducible (Hypothesis with a
fixed seed, no example database).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorykit.classroom.contracts.runner import Contract

ScoreFunction = Callable[..., float]
"""``(keywords, query_words, age_hours, alpha=0.6, beta=0.4, tau_hours=24.0) -> S``."""
RecallRule = Callable[[list[float], float, int], list[int]]
"""``(scores, threshold, limit) -> positions of the recalled scores, best first``."""

_PROPERTY = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                     report_multiple_bugs=False,
                     suppress_health_check=[HealthCheck.too_slow])

# A small vocabulary, so that keywords and query words overlap often.
WORDS = ("locker", "code", "gym", "refund", "pin", "what", "is", "my")
KEYWORDS = st.lists(st.sampled_from(WORDS), max_size=6)
QUERY = st.frozensets(st.sampled_from(WORDS), max_size=6)
AGE = st.floats(min_value=0.0, max_value=240.0, allow_nan=False)
WEIGHT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
TAU = st.floats(min_value=1.0, max_value=200.0, allow_nan=False)


@st.composite
def _sharing_episode(draw: st.DrawFn) -> tuple[list[str], frozenset[str]]:
    """(keywords, query words) whose keywords repeat the query's words: ['code', 'code'] for
    {'code'}. A score counting keyword occurrences instead of shared words goes over alpha +
    beta only there, and KEYWORDS alone almost never draws it (1 in 80 examples, with alpha 0)."""
    query = draw(QUERY.filter(bool))
    shared = draw(st.lists(st.sampled_from(sorted(query)), min_size=1, max_size=4))
    return draw(st.permutations([*shared, *shared, *draw(KEYWORDS)])), query


EPISODE = st.one_of(st.tuples(KEYWORDS, QUERY), _sharing_episode())
"""(keywords, query words): independent draws, or keywords repeating the query's words."""
_TOLERANCE = 1e-9


def library_episodic_score(keywords: Sequence[str], query_words: frozenset[str],
                           age_hours: float, alpha: float = 0.6, beta: float = 0.4,
                           tau_hours: float = 24.0) -> float:
    """The library's score as one function: ``keyword_overlap`` then ``episode_scores``."""
    from memorykit.longterm.episodic import HOUR, episode_scores, keyword_overlap

    overlap = keyword_overlap(keywords, frozenset(query_words))
    return float(episode_scores(overlap, age_hours * HOUR, alpha=alpha, beta=beta,
                                tau_seconds=tau_hours * HOUR))


def _score(f: ScoreFunction, keywords: list[str], query: frozenset[str], age: float,
           alpha: float, beta: float, tau: float) -> float:
    s = f(list(keywords), frozenset(query), age, alpha=alpha, beta=beta, tau_hours=tau)
    assert isinstance(s, (int, float)) and not isinstance(s, bool), (
        f"the score must be a number, your function returned {s!r} ({type(s).__name__})")
    return float(s)


def _bounded(f: ScoreFunction) -> None:
    @_PROPERTY
    @given(episode=EPISODE, age=AGE, alpha=WEIGHT, beta=WEIGHT, tau=TAU)
    def score(episode: tuple[list[str], frozenset[str]], age: float, alpha: float,
              beta: float, tau: float) -> None:
        keywords, query = episode
        s = _score(f, keywords, query, age, alpha, beta, tau)
        assert math.isfinite(s) and -_TOLERANCE <= s <= alpha + beta + _TOLERANCE, (
            f"S = {s!r} is outside [0, alpha + beta] = [0, {alpha + beta:.4f}]: the overlap "
            "share must stay in [0, 1] and the recency term exp(-age / tau) in (0, 1]")

    score()


def _extremes(f: ScoreFunction) -> None:
    fresh = _score(f, ["locker", "code"], frozenset({"locker", "code"}), 0.0, 0.6, 0.4, 24.0)
    assert abs(fresh - 1.0) < _TOLERANCE, (
        f"a fresh episode (age 0) holding every query word must score alpha + beta = 1.0, got "
        f"{fresh!r}")
    wider = _score(f, ["locker", "code", "gym", "pin"], frozenset({"locker", "code"}), 0.0,
                   0.6, 0.4, 24.0)
    assert abs(wider - 1.0) < _TOLERANCE, (
        f"keywords ['locker', 'code', 'gym', 'pin'] hold both query words {{'locker', 'code'}}: "
        f"the overlap is 2/2 (divide by the number of query words), so S must be 1.0, got "
        f"{wider!r}")
    empty = _score(f, ["locker"], frozenset(), 24.0, 0.6, 0.4, 24.0)
    assert abs(empty - 0.4 * math.exp(-1)) < _TOLERANCE, (
        f"a query without words has overlap 0 (not a division by zero): S = 0.4 x exp(-24/24) "
        f"= {0.4 * math.exp(-1):.4f} one day later, got {empty!r}")


def _older_never_higher(f: ScoreFunction) -> None:
    @_PROPERTY
    @given(keywords=KEYWORDS, query=QUERY, ages=st.tuples(AGE, AGE), alpha=WEIGHT,
           beta=WEIGHT, tau=TAU)
    def score(keywords: list[str], query: frozenset[str], ages: tuple[float, float],
              alpha: float, beta: float, tau: float) -> None:
        young, old = sorted(ages)
        s_young = _score(f, keywords, query, young, alpha, beta, tau)
        s_old = _score(f, keywords, query, old, alpha, beta, tau)
        assert s_old <= s_young + _TOLERANCE, (
            f"the episode scores {s_young:.4f} at {young:g} h but {s_old:.4f} at {old:g} h: an "
            "older episode must never score higher (the recency term is exp(-age / tau))")

    score()


def _more_overlap_never_lower(f: ScoreFunction) -> None:
    @_PROPERTY
    @given(keywords=KEYWORDS, query=QUERY.filter(bool), age=AGE, alpha=WEIGHT, beta=WEIGHT,
           tau=TAU, pick=st.integers(0, 5))
    def score(keywords: list[str], query: frozenset[str], age: float, alpha: float,
              beta: float, tau: float, pick: int) -> None:
        word = sorted(query)[pick % len(query)]
        before = _score(f, keywords, query, age, alpha, beta, tau)
        after = _score(f, [*keywords, word], query, age, alpha, beta, tau)
        assert after >= before - _TOLERANCE, (
            f"adding the query word {word!r} to the keywords {keywords} lowered S from "
            f"{before:.4f} to {after:.4f}: more shared words must never score lower")

    score()


def _slower_decay_never_lower(f: ScoreFunction) -> None:
    @_PROPERTY
    @given(keywords=KEYWORDS, query=QUERY, age=AGE, alpha=WEIGHT, beta=WEIGHT,
           taus=st.tuples(TAU, TAU))
    def score(keywords: list[str], query: frozenset[str], age: float, alpha: float,
              beta: float, taus: tuple[float, float]) -> None:
        fast, slow = sorted(taus)
        s_fast = _score(f, keywords, query, age, alpha, beta, fast)
        s_slow = _score(f, keywords, query, age, alpha, beta, slow)
        assert s_slow >= s_fast - _TOLERANCE, (
            f"tau {slow:g} h scores {s_slow:.4f} but tau {fast:g} h scores {s_fast:.4f}: a "
            "slower decay (larger tau) must never lower S")

    score()


EPISODIC_SCORE_CONTRACTS: tuple[Contract[ScoreFunction], ...] = (
    Contract("S is a finite number between 0 and alpha + beta", _bounded),
    Contract("a fresh full match scores alpha + beta, an empty query scores recency alone",
             _extremes),
    Contract("an older episode never scores higher", _older_never_higher),
    Contract("sharing more of the query's words never scores lower", _more_overlap_never_lower),
    Contract("a larger tau (slower decay) never scores lower", _slower_decay_never_lower),
)


def agrees_with_library_score() -> Contract[ScoreFunction]:
    """The subject's S equals the library's (``keyword_overlap`` + ``episode_scores``)."""

    def check(f: ScoreFunction) -> None:
        @_PROPERTY
        @given(keywords=KEYWORDS, query=QUERY, age=AGE, alpha=WEIGHT, beta=WEIGHT, tau=TAU)
        def score(keywords: list[str], query: frozenset[str], age: float, alpha: float,
                  beta: float, tau: float) -> None:
            theirs = _score(f, keywords, query, age, alpha, beta, tau)
            ours = library_episodic_score(keywords, query, age, alpha, beta, tau)
            assert abs(theirs - ours) < 1e-6, (
                f"your S = {theirs:.6f}, the library's = {ours:.6f} for keywords {keywords}, "
                f"query words {sorted(query)}, age {age:g} h, alpha {alpha:g}, beta {beta:g}, "
                f"tau {tau:g} h")

        score()

    return Contract("it computes the same S as the library's episodic score", check)


# ---------------------------------------------------------------- the recall rule
GRID = tuple(round(0.05 * k, 2) for k in range(21))
"""Scores and thresholds on a 0.05 grid, so that a score often equals the threshold."""
SCORES = st.lists(st.sampled_from(GRID), max_size=12)
THRESHOLD = st.sampled_from(GRID)
LIMIT = st.integers(min_value=0, max_value=8)


def _recall(rule: RecallRule, scores: list[float], threshold: float, limit: int) -> list[int]:
    given_scores = list(scores)
    out = rule(given_scores, threshold, limit)
    assert given_scores == scores, (
        f"your rule changed the list of scores it was given (now {given_scores}): sort a copy")
    assert isinstance(out, (list, tuple)), (
        f"the rule must return a list of positions, got {out!r} ({type(out).__name__})")
    for i in out:
        assert isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(scores), (
            f"{i!r} is not a position in scores (0..{len(scores) - 1}): return indices, "
            "not the scores themselves")
    return list(out)


def _on_random_calls(assertion: Callable[[RecallRule, list[float], float, int, list[int]], None]
                     ) -> Callable[[RecallRule], None]:
    """A contract check: ``assertion(rule, scores, threshold, limit, recalled)`` on random calls."""

    def check(rule: RecallRule) -> None:
        @_PROPERTY
        @given(scores=SCORES, threshold=THRESHOLD, limit=LIMIT)
        def recall(scores: list[float], threshold: float, limit: int) -> None:
            assertion(rule, scores, threshold, limit, _recall(rule, scores, threshold, limit))

        recall()

    return check


def _budget_holds(rule: RecallRule, scores: list[float], threshold: float, limit: int,
                  out: list[int]) -> None:
    assert len(out) <= limit, (
        f"{len(out)} positions recalled with limit {limit}: never more than limit")
    assert len(set(out)) == len(out), f"a position was recalled twice: {out}"


def _only_above(rule: RecallRule, scores: list[float], threshold: float, limit: int,
                out: list[int]) -> None:
    bad = [(i, scores[i]) for i in out if not scores[i] > threshold]
    assert not bad, (
        f"recalled (position, score) {bad} at threshold {threshold:g}: only scores strictly "
        "above the threshold are recalled (> , not >=)")


def _nothing_lost(rule: RecallRule, scores: list[float], threshold: float, limit: int,
                  out: list[int]) -> None:
    left = [i for i, s in enumerate(scores) if s > threshold and i not in out]
    if len(out) < limit:
        assert not left, (
            f"positions {left} score above the threshold {threshold:g} and the limit ({limit}) "
            "was not reached, yet they were not recalled")
    if left and out:
        worst = min(scores[i] for i in out)
        beaten = [i for i in left if scores[i] > worst]
        assert not beaten, (
            f"positions {beaten} were left out although they score more than a recalled one "
            f"({worst:g}): when the limit bites, keep the best")


def _best_first(rule: RecallRule, scores: list[float], threshold: float, limit: int,
                out: list[int]) -> None:
    got = [scores[i] for i in out]
    assert got == sorted(got, reverse=True), (
        f"recalled scores in the order {got}: the best must come first")


def _deterministic(rule: RecallRule, scores: list[float], threshold: float, limit: int,
                   out: list[int]) -> None:
    again = _recall(rule, scores, threshold, limit)
    assert out == again, (
        f"the same call gave {out} and then {again}: recall must be deterministic")


RECALL_RULE_CONTRACTS: tuple[Contract[RecallRule], ...] = (
    Contract("at most `limit` positions, none twice (the budget holds)",
             _on_random_calls(_budget_holds)),
    Contract("only scores strictly above the threshold are recalled",
             _on_random_calls(_only_above)),
    Contract("nothing above the threshold is dropped silently", _on_random_calls(_nothing_lost)),
    Contract("the best score comes first", _on_random_calls(_best_first)),
    Contract("the same call recalls the same positions, and the scores are left unchanged",
             _on_random_calls(_deterministic)),
)


def agrees_with_library_rule() -> Contract[RecallRule]:
    """The subject recalls exactly what ``select_recalled`` recalls, ties included."""
    from memorykit.longterm.semantic import select_recalled

    def same(rule: RecallRule, scores: list[float], threshold: float, limit: int,
             out: list[int]) -> None:
        ours = select_recalled(scores, threshold, limit)
        hint = (": the same positions in another order (equal scores keep their order in "
                "scores)" if sorted(out) == sorted(ours) else "")
        assert out == ours, (
            f"scores {scores}, threshold {threshold:g}, limit {limit}: you recall {out}, the "
            f"library recalls {ours}{hint}")

    return Contract("it recalls the same positions as the library's rule", _on_random_calls(same))
